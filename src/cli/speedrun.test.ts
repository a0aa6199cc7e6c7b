// The speedrun readout: the 100-step rolling reward, the first step at or above the target and the training seconds
// to it, the best rolling mean, rewritten and missing steps, and the line the CLI prints and the page shows.
import { describe, expect, it } from 'vitest';
import { speedrunOf, speedrunText, type SpeedrunPoint } from '../schema/speedrun';
import { speedrunPointsOfJsonl } from './speedrun-line';

/** Steps 1..n with reward r(step) and 0.5 s each. */
const run = (n: number, r: (step: number) => number): SpeedrunPoint[] =>
  Array.from({ length: n }, (_, i) => ({ step: i + 1, reward: r(i + 1), seconds: 0.5 }));

describe('speedrunOf', () => {
  it('has no rolling mean before the window is full', () => {
    const s = speedrunOf(
      run(99, () => 1),
      0.5,
    );
    expect([s.best, s.reachedStep]).toEqual([null, null]);
    expect(speedrunText(s)).toBe('speedrun: no 100-step rolling reward yet (99 of 100 steps)');
  });

  it('finds the first step whose 100-step mean reaches the target, with the seconds summed to it', () => {
    // reward = step / 200: the mean of steps k-99..k is (k - 49.5) / 200, >= 0.5 first at k = 150.
    const s = speedrunOf(
      run(300, (k) => k / 200),
      0.5,
    );
    expect(s.reachedStep).toBe(150);
    expect(s.reachedSeconds).toBe(75);
    expect(s.best?.step).toBe(300);
    expect(s.best?.mean).toBeCloseTo(250.5 / 200, 12);
    expect(speedrunText(s)).toBe(
      'speedrun: the 100-step rolling reward reached 0.5 at step 150, after 75.0 s of training (best 1.252 at step 300)',
    );
  });

  it('reports the best mean without a target, and a target not reached', () => {
    const s = speedrunOf(
      run(120, (k) => (k % 2 ? 0 : 1)),
      null,
    );
    expect(s.best?.mean).toBeCloseTo(0.5, 12);
    expect(speedrunText(s)).toMatch(
      /^speedrun: best 0\.500 at step 100 \(100-step rolling reward; set speedrun_target/,
    );
    expect(
      speedrunText(
        speedrunOf(
          run(120, () => 0.2),
          0.9,
        ),
      ),
    ).toBe('speedrun: the 100-step rolling reward has not reached 0.9 (best 0.200 at step 100)');
  });

  it("keeps a rewritten step's last point, and leaves a non-finite reward out of the window", () => {
    const points = run(100, () => 0.2);
    points.push({ step: 100, reward: 1, seconds: 0.5 }); // step 100 again, after a rewind
    points[10] = { step: 11, reward: Number.NaN, seconds: 0.5 };
    const s = speedrunOf(points, null);
    expect(s.steps).toBe(100);
    expect(s.best?.mean).toBeCloseTo((98 * 0.2 + 1) / 99, 12);
  });
});

describe("the CLI's metrics.jsonl points", () => {
  it('takes the rows that carry a reward, with their step_time', () => {
    const text = [
      '{"step":1,"optimizer_step":1,"reward":0.5,"step_time":2}',
      '{"step":1,"optimizer_step":2,"loss":0.1}',
      '{"step":2,"optimizer_step":3,"reward":0.75}',
      '',
    ].join('\n');
    const p = speedrunPointsOfJsonl(text);
    expect(p.slice(0, 1)).toEqual([{ step: 1, reward: 0.5, seconds: 2 }]);
    expect(p[1].step).toBe(2);
    expect(Number.isNaN(p[1].seconds)).toBe(true);
  });
});
