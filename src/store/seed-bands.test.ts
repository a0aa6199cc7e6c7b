// The statistics across a seed group's seeds: median and IQM on awkward inputs (one seed, two, ties, outliers, order),
// the bootstrap band (it is what resampling the seeds with the fixed-seed RNG gives, holds the statistic, lies
// within the seeds' range, narrows as more seeds agree, is the same every time), runs of different lengths (each
// step counts its seeds), and a chart of a seed group: one line and one band per metric instead of a line per seed.
import { describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import { Rng } from '../core/random';
import { chartData, chartsFor, seriesKey, type ChartRun } from './charts';
import { MetricTable } from './metric-table';
import {
  BAND_LEVEL,
  BOOTSTRAP_RESAMPLES,
  BOOTSTRAP_SEED,
  bootstrapBand,
  orderWeights,
  seedBands,
  seedStatistic,
  type SeedStatistic,
} from './seed-bands';

const STATS: SeedStatistic[] = ['median', 'iqm'];

describe('median and IQM across seeds', () => {
  it('is the value itself for one seed and the mean for two', () => {
    for (const stat of STATS) {
      expect(seedStatistic([0.7], stat)).toBe(0.7);
      expect(seedStatistic([1, 5], stat)).toBe(3);
      expect(Number.isNaN(seedStatistic([], stat))).toBe(true);
    }
  });
  it('takes the middle of the sorted seeds whatever their order, ties included', () => {
    expect(seedStatistic([10, 1, 2], 'median')).toBe(2);
    expect(seedStatistic([4, 1, 3, 2], 'median')).toBe(2.5);
    expect(seedStatistic([2, 9, 2, 2], 'median')).toBe(2);
    expect(seedStatistic([2, 9, 2, 2], 'iqm')).toBe(2);
    expect(seedStatistic([5, 5, 5], 'iqm')).toBe(5);
  });
  it('IQM is the mean of the middle half, with fractional weights where a seed straddles a quartile', () => {
    expect(seedStatistic([8, 1, 7, 2, 6, 3, 5, 4], 'iqm')).toBe(4.5); // mean of 3, 4, 5, 6
    expect(seedStatistic([1, 2, 10], 'iqm')).toBeCloseTo(1 / 6 + (2 * 2) / 3 + 10 / 6, 12);
    for (let n = 1; n <= 10; n++) {
      for (const stat of STATS) expect(orderWeights(n, stat).reduce((a, w) => a + w, 0)).toBeCloseTo(1, 12);
    }
    // One runaway seed of five moves the mean by 20 but the IQM only by its sliver of the middle half.
    const calm = [0.5, 0.5, 0.5, 0.5, 0.5];
    const runaway = [0.5, 0.5, 0.5, 0.5, 100.5];
    expect(seedStatistic(runaway, 'iqm') - seedStatistic(calm, 'iqm')).toBe(0);
    expect(seedStatistic(runaway, 'median')).toBe(0.5);
  });
});

/** The definition: resample the seeds with replacement (the plan's RNG and draws), take the statistic, the percentiles. */
function naiveBand(values: number[], stat: SeedStatistic): [number, number] {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  const rng = new Rng(BOOTSTRAP_SEED + n);
  const t: number[] = [];
  for (let b = 0; b < BOOTSTRAP_RESAMPLES; b++)
    t.push(
      seedStatistic(
        Array.from({ length: n }, () => sorted[rng.int(n)]),
        stat,
      ),
    );
  t.sort((a, b) => a - b);
  const k = Math.ceil(((1 - BAND_LEVEL) / 2) * BOOTSTRAP_RESAMPLES);
  return [t[k - 1], t[BOOTSTRAP_RESAMPLES - k]];
}

describe('bootstrap band across seeds', () => {
  it('is what resampling the seeds gives (the 2.5th and 97.5th percentiles of 500 resamples)', () => {
    const rng = new Rng(3);
    for (let n = 2; n <= 10; n++) {
      for (const stat of STATS) {
        const values = Array.from({ length: n }, () => rng.normal());
        const band = bootstrapBand(values, stat);
        const [lo, hi] = naiveBand(values, stat);
        expect(band.lo).toBeCloseTo(Math.min(lo, band.stat), 12);
        expect(band.hi).toBeCloseTo(Math.max(hi, band.stat), 12);
      }
    }
  });
  it('holds the statistic and lies within the seeds, on many random groups', () => {
    const rng = new Rng(11);
    for (let trial = 0; trial < 200; trial++) {
      const n = 2 + rng.int(9);
      const skew = rng.next() < 0.5;
      const values = Array.from({ length: n }, () => (skew ? Math.exp(3 * rng.normal()) : rng.normal()));
      for (const stat of STATS) {
        const b = bootstrapBand(values, stat);
        expect(b.seeds).toBe(n);
        expect(b.lo).toBeLessThanOrEqual(b.stat);
        expect(b.hi).toBeGreaterThanOrEqual(b.stat);
        expect(b.lo).toBeGreaterThanOrEqual(Math.min(...values));
        expect(b.hi).toBeLessThanOrEqual(Math.max(...values));
      }
    }
  });
  it('has no band for one seed, spans both for two, and none when the seeds agree exactly', () => {
    const one = bootstrapBand([0.4], 'median');
    expect(one.stat).toBe(0.4);
    expect([one.lo, one.hi].every(Number.isNaN)).toBe(true);
    for (const stat of STATS) {
      expect(bootstrapBand([0.2, 0.6], stat)).toMatchObject({ seeds: 2, lo: 0.2, hi: 0.6 }); // a resample of the same seed twice has 1/4 chance
      expect(bootstrapBand([0.3, 0.3, 0.3, 0.3], stat)).toEqual({ seeds: 4, stat: 0.3, lo: 0.3, hi: 0.3 });
    }
  });
  it('narrows as more seeds agree', () => {
    for (const stat of STATS) {
      const width = (v: number[]) => {
        const b = bootstrapBand(v, stat);
        return b.hi - b.lo;
      };
      // Seeds spread evenly over the same range, more of them: the statistic is pinned down better. (With 3 seeds
      // the median's band is the whole range: a resample takes the lowest seed as its median 7 times in 27.)
      const spread = (n: number) => Array.from({ length: n }, (_, i) => i / (n - 1));
      expect(width(spread(3))).toBeGreaterThan(0.9);
      expect(width(spread(10))).toBeLessThan(0.65 * width(spread(3)));
      // Two disagreeing seeds, then more seeds that agree with each other.
      expect(width([0, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])).toBeLessThan(width([0, 1, 0.5]));
    }
  });
  it('is the same every time, whatever was computed before', () => {
    const values = [0.1, 0.9, 0.35, 0.5, 0.42];
    const first = bootstrapBand(values, 'iqm');
    bootstrapBand([1, 2, 3, 4, 5], 'iqm');
    seedBands(
      [
        [1, 2],
        [3, 4],
        [5, 6],
        [7, 8],
        [9, 10],
      ],
      'iqm',
    );
    expect(bootstrapBand([...values].reverse(), 'iqm')).toEqual(first);
  });
});

describe('bands along steps', () => {
  it('uses at each step the seeds that have it, and says how many; missing and NaN values do not count', () => {
    const b = seedBands(
      [
        [1, 2, 3, NaN],
        [3, 4],
        [5, NaN, NaN, NaN],
      ],
      'median',
    );
    expect(Array.from(b.seeds)).toEqual([3, 2, 1, 0]);
    expect(Array.from(b.stat)).toEqual([3, 3, 3, NaN]);
    expect(b.lo[0]).toBeLessThanOrEqual(3);
    expect(b.hi[0]).toBeGreaterThanOrEqual(3);
    expect([b.lo[0], b.hi[1]].every(Number.isFinite)).toBe(true);
    expect([b.lo[2], b.hi[2], b.lo[3], b.hi[3]].every(Number.isNaN)).toBe(true); // one seed: no band
  });
});

function seedTable(steps: number, reward: (step: number) => number): MetricTable {
  const t = new MetricTable();
  t.append(
    packRows(
      Array.from({ length: steps }, (_, i) => ({
        step: i + 1,
        optimizerStep: i + 1,
        update: 0,
        updates: 1,
        epoch: 0,
        minibatch: 0,
        metrics: { reward: reward(i + 1), reward_std: 0.1, entropy: 1 },
      })),
    ),
  );
  return t;
}

describe('a seed group on a chart', () => {
  it('draws one line per metric (the statistic across seeds) in one bootstrap band, not a line per seed', () => {
    const seeds = [
      seedTable(4, (s) => 0.1 * s),
      seedTable(4, (s) => 0.1 * s + 0.2),
      seedTable(3, (s) => 0.1 * s + 0.1),
    ];
    const group: ChartRun = { id: 'a', label: 'grpo · seeds 0-2', table: seeds[0], seeds };
    const [rewardChart] = chartsFor(seeds[0].names).filter((c) => c.metrics.includes('reward'));
    const d = chartData(rewardChart, [group], { smoothing: 0, maxPoints: 300, log: false, statistic: 'median' });
    expect(d.series.map((s) => s.metric)).toEqual(['reward']);
    expect(d.bands).toEqual([
      { key: seriesKey(0, 'reward~seeds'), runId: 'a', runIndex: 0, runLabel: 'grpo · seeds 0-2', metric: 'reward' },
    ]);
    expect(d.seedGroups).toEqual([{ runIndex: 0, statistic: 'median', seeds: 3, minSeeds: 2, maxSeeds: 3 }]);
    const line = d.rows.map((r) => r[seriesKey(0, 'reward')] as number);
    expect(line[0]).toBeCloseTo(0.2, 12); // median of 0.1, 0.3, 0.2
    expect(line[3]).toBeCloseTo(0.5, 12); // step 4: two seeds, 0.4 and 0.6
    const band = d.rows.map((r) => r[seriesKey(0, 'reward~seeds')] as [number, number]);
    expect(band[0][0]).toBeLessThanOrEqual(line[0]);
    expect(band[0][1]).toBeGreaterThanOrEqual(line[0]);
    // A run drawn beside the group keeps its own line and its mean ± std band.
    const alone: ChartRun = { id: 'b', label: 'other', table: seedTable(4, () => 0.5) };
    const both = chartData(rewardChart, [group, alone], { smoothing: 0, maxPoints: 300, log: false });
    expect(both.series.map((s) => [s.runId, s.metric])).toEqual([
      ['a', 'reward'],
      ['b', 'reward'],
    ]);
    expect(both.bands.map((b) => [b.runId, b.metric ?? 'std'])).toEqual([
      ['a', 'reward'],
      ['b', 'std'],
    ]);
  });
});
