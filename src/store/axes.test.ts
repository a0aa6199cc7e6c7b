// The charts' axes: round 1-2-5 ticks for awkward ranges, log axes on decades that never crowd, a value axis held
// inside the catalog's range when only a band leaves it, flat series drawn flat, room for the last x label, and a
// heatmap's step columns labelled at round steps.
import { describe, expect, it } from 'vitest';
import {
  columnTicks,
  linearAxis,
  logAxis,
  multiplesIn,
  niceStep,
  stepAxis,
  tickLabelOverhang,
  valueAxis,
  valueAxisWidth,
  type Axis,
} from './axes';

/** Every tick is a round value: 1, 2 or 5 times a power of ten times a whole number, equally spaced. */
function expectRoundSteps(a: Axis) {
  expect(a.ticks.length).toBeGreaterThanOrEqual(2);
  const step = Number((a.ticks[1] - a.ticks[0]).toPrecision(10));
  const mantissa = Number((step / 10 ** Math.floor(Math.log10(step))).toPrecision(10));
  expect([1, 2, 5]).toContain(mantissa);
  for (let i = 1; i < a.ticks.length; i++) expect(a.ticks[i] - a.ticks[i - 1]).toBeCloseTo(step, 9);
  for (const t of a.ticks) expect(Math.abs(t / step - Math.round(t / step))).toBeLessThan(1e-9);
}

function expectInside(a: Axis) {
  for (const t of a.ticks) {
    expect(t).toBeGreaterThanOrEqual(a.domain[0]);
    expect(t).toBeLessThanOrEqual(a.domain[1]);
  }
}

describe('round steps', () => {
  it('are 1, 2 or 5 times a power of ten, the smallest that fits the tick budget', () => {
    expect(niceStep(1, 141, 7, 'inside', 1)).toBe(20);
    expect(niceStep(1, 150, 5, 'inside', 1)).toBe(50);
    expect(niceStep(-0.137, 0.912, 6, 'enclose')).toBe(0.5);
    expect(niceStep(0.2, 0.75, 6, 'enclose')).toBe(0.2);
    expect(niceStep(1, 3, 7, 'inside', 1)).toBe(1);
    expect(niceStep(0.003, 0.0071, 6, 'enclose')).toBe(0.001);
  });

  it('are written without float noise', () => {
    expect(multiplesIn(0.1, 0.7, 0.1)).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    expect(multiplesIn(-0.35, 0.35, 0.1)).toEqual([-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3]);
  });
});

describe('the rollout-step axis', () => {
  it('labels round steps (20, 40, ... 140), not 1, 36, 71, 106, 141, all inside the steps drawn', () => {
    const a = stepAxis(1, 141, 7);
    expect(a.domain).toEqual([1, 141]);
    expect(a.ticks).toEqual([20, 40, 60, 80, 100, 120, 140]);
    expectRoundSteps(a);
    expectInside(a);
  });

  it('labels whole steps only, and shows one step between its neighbours', () => {
    expect(stepAxis(1, 3, 7).ticks).toEqual([1, 2, 3]);
    expect(stepAxis(1, 2.5, 7).ticks).toEqual([1, 2]);
    expect(stepAxis(4, 4, 7)).toEqual({ domain: [3, 5], ticks: [3, 4, 5] });
  });

  it('keeps awkward long runs to the tick budget', () => {
    for (const [lo, hi] of [
      [1, 9999],
      [1, 10_000],
      [7, 733],
      [0, 37],
      [1, 1_000_001],
    ] as const) {
      const a = stepAxis(lo, hi, 7);
      expect(a.ticks.length, `${lo}..${hi}`).toBeLessThanOrEqual(7);
      expect(a.ticks.length, `${lo}..${hi}`).toBeGreaterThanOrEqual(2);
      expectRoundSteps(a);
      expectInside(a);
    }
  });

  it('leaves room at the right edge for half of the last label', () => {
    expect(tickLabelOverhang(140)).toBeGreaterThanOrEqual(10);
    expect(tickLabelOverhang(1500)).toBeGreaterThan(tickLabelOverhang(140));
    expect(tickLabelOverhang(undefined)).toBe(0);
  });
});

describe('a linear value axis', () => {
  it('encloses awkward ranges with round ticks at both ends', () => {
    for (const [lo, hi] of [
      [-0.137, 0.912],
      [0.2, 0.75],
      [3.3e-4, 7.1e-4],
      [-1234, 98765],
      [0.999, 1.003],
      [17, 19],
    ] as const) {
      const a = linearAxis(lo, hi, 6);
      expect(a.domain[0], `${lo}..${hi}`).toBeLessThanOrEqual(lo);
      expect(a.domain[1], `${lo}..${hi}`).toBeGreaterThanOrEqual(hi);
      expect(a.ticks[0]).toBe(a.domain[0]);
      expect(a.ticks.at(-1)).toBe(a.domain[1]);
      expect(a.ticks.length).toBeLessThanOrEqual(6);
      expectRoundSteps(a);
    }
  });

  it('draws a flat series flat: +-10% around it (+-1 around 0), not float noise over the whole height', () => {
    const a = linearAxis(2.9999999999999996, 3, 6);
    expect(a.domain[0]).toBeLessThanOrEqual(2.7);
    expect(a.domain[1]).toBeGreaterThanOrEqual(3.3);
    expect(a.domain[1] - a.domain[0]).toBeLessThan(1);
    expect(linearAxis(0, 0, 6).domain).toEqual([-1, 1]);
  });
});

describe("the value axis and the catalog's range", () => {
  it('keeps a reward in [0, 1] on a [0, 1]-bounded axis when only its ± std band leaves it', () => {
    const a = valueAxis({
      lines: { lo: 0.2, hi: 0.8 },
      bands: { lo: -0.55, hi: 1.3 },
      range: [0, 1],
      log: false,
      maxTicks: 6,
    });
    expect(a.domain).toEqual([0, 1]);
    expect(a.ticks[0]).toBe(0);
    expect(a.ticks.at(-1)).toBe(1);
    expect(a.clamped).toBe(true);
    expectRoundSteps(a);
  });

  it('fits the data inside the range rather than always showing all of it', () => {
    const a = valueAxis({ lines: { lo: 0.42, hi: 0.61 }, range: [0, 1], log: false, maxTicks: 6 });
    expect(a.domain[0]).toBeGreaterThanOrEqual(0.3);
    expect(a.domain[1]).toBeLessThanOrEqual(0.7);
    expect(a.clamped).toBe(false);
  });

  it('follows a value that really leaves the range (overlong shaping gives a negative reward)', () => {
    const a = valueAxis({
      lines: { lo: -0.4, hi: 0.9 },
      bands: { lo: -0.9, hi: 1.4 },
      range: [0, 1],
      log: false,
      maxTicks: 6,
    });
    expect(a.domain[0]).toBeLessThanOrEqual(-0.9);
    // The top is still held at 1: the lines stay below it.
    expect(a.domain[1]).toBe(1);
  });

  it('cuts a flat 0 fraction at 0 instead of showing negative fractions', () => {
    const a = valueAxis({ lines: { lo: 0, hi: 0 }, range: [0, 1], log: false, maxTicks: 6 });
    expect(a.domain).toEqual([0, 1]);
    expect(a.ticks[0]).toBe(0);
    const b = valueAxis({ lines: { lo: 1, hi: 1 }, range: [0, 1], log: false, maxTicks: 6 });
    expect(b.domain[1]).toBe(1);
    expect(b.domain[0]).toBeLessThan(1);
  });

  it('is [0, 1] for parts of one whole, and [0, 1] when nothing is drawn yet', () => {
    expect(valueAxis({ lines: { lo: 0.3, hi: 0.4 }, log: false, stacked: true, maxTicks: 6 }).domain).toEqual([0, 1]);
    expect(valueAxis({ lines: null, log: false, maxTicks: 6 }).domain).toEqual([0, 1]);
  });

  it('leaves an unbounded side alone (a loss has no range)', () => {
    const a = valueAxis({ lines: { lo: -0.03, hi: 0.02 }, log: false, maxTicks: 6 });
    expect(a.domain[0]).toBeLessThanOrEqual(-0.03);
    expect(a.domain[1]).toBeGreaterThanOrEqual(0.02);
  });

  it('fits the widest tick label in the y axis width', () => {
    expect(valueAxisWidth([0, 0.5, 1])).toBeLessThan(valueAxisWidth([-12000, 0, 12000]));
  });
});

describe('a log axis', () => {
  it('uses 1-2-5 values when the data span less than a decade or so', () => {
    expect(logAxis(800, 1200, 6)).toEqual({ domain: [500, 2000], ticks: [500, 1000, 2000] });
    expect(logAxis(0.03, 0.4, 6)).toEqual({ domain: [0.02, 0.5], ticks: [0.02, 0.05, 0.1, 0.2, 0.5] });
  });

  it('uses whole decades for wide spans, every second or third when there are too many', () => {
    const a = logAxis(2e-5, 0.4, 6);
    expect(a.ticks).toEqual([1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1]);
    expect(a.domain).toEqual([1e-5, 1]);
    const b = logAxis(3e-9, 2e3, 6);
    expect(b.ticks.length).toBeLessThanOrEqual(6);
    const exps = b.ticks.map((t) => Math.round(Math.log10(t)));
    const gap = exps[1] - exps[0];
    expect(gap).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < exps.length; i++) expect(exps[i] - exps[i - 1]).toBe(gap);
    expect(b.domain[0]).toBeLessThanOrEqual(3e-9);
    expect(b.domain[1]).toBeGreaterThanOrEqual(2e3);
  });

  it('keeps neighbouring ticks at least log10(2) of the span apart (labels of 11 px never touch)', () => {
    for (const [lo, hi] of [
      [1.1, 1.9],
      [0.7, 80],
      [1e-7, 1e-6],
      [123, 456789],
      [5, 5],
    ] as const) {
      const a = logAxis(lo, hi, 6);
      expect(a.domain[0], `${lo}..${hi}`).toBeLessThanOrEqual(lo);
      expect(a.domain[1], `${lo}..${hi}`).toBeGreaterThanOrEqual(hi);
      expect(a.ticks.length).toBeGreaterThanOrEqual(2);
      expect(a.ticks.length).toBeLessThanOrEqual(6);
      expectInside(a);
      const span = Math.log10(a.domain[1] / a.domain[0]);
      for (let i = 1; i < a.ticks.length; i++)
        expect(Math.log10(a.ticks[i] / a.ticks[i - 1]) / span).toBeGreaterThanOrEqual(Math.log10(2) / span - 1e-12);
    }
  });

  it('holds a fraction under 1 on a log axis too', () => {
    const a = valueAxis({
      lines: { lo: 0.02, hi: 0.3 },
      bands: { lo: 0.01, hi: 2 },
      range: [0, 1],
      log: true,
      maxTicks: 6,
    });
    expect(a.domain[1]).toBeLessThanOrEqual(1);
    expect(a.domain[0]).toBeGreaterThan(0);
  });
});

describe("a heatmap's step columns", () => {
  it('label the columns holding round steps, with those steps', () => {
    const every = Array.from({ length: 150 }, (_, i) => i + 1);
    expect(columnTicks(every, 5)).toEqual([
      { index: 49, label: 50 },
      { index: 99, label: 100 },
      { index: 149, label: 150 },
    ]);
    // Weight stats every 10 steps: columns 10, 20, ... 140.
    const tens = Array.from({ length: 14 }, (_, i) => 10 * (i + 1));
    expect(columnTicks(tens, 5)).toEqual([
      { index: 4, label: 50 },
      { index: 9, label: 100 },
    ]);
    // Buckets (each column the last step of several): the tick goes to the bucket holding its step.
    expect(columnTicks([4, 8, 12, 16, 20], 5)).toEqual([
      { index: 1, label: 5 },
      { index: 2, label: 10 },
      { index: 3, label: 15 },
      { index: 4, label: 20 },
    ]);
    expect(columnTicks([7], 5)).toEqual([{ index: 0, label: 7 }]);
    expect(columnTicks([], 5)).toEqual([]);
  });
});
