// The trainer's schedules (schedule.ts): the learning rate's warmup and decays, the minibatch split, and the
// curriculum's difficulty per step (fixed, the easy-to-hard ramp, and the adaptive draw's weights and RNG use).

import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/random';
import { curriculumDifficulty, learningRateAt, microBatchRows, minibatchRows } from './schedule';

describe('schedule', () => {
  it('learning rate: linear warmup then cosine / linear decay to 0', () => {
    const c = { learning_rate: 1e-3, warmup_steps: 10, lr_schedule: 'cosine' as const };
    expect(learningRateAt(c, 5, 110)).toBeCloseTo(5e-4, 12);
    expect(learningRateAt(c, 10, 110)).toBeCloseTo(1e-3, 12);
    expect(learningRateAt(c, 60, 110)).toBeCloseTo(5e-4, 12);
    expect(learningRateAt(c, 110, 110)).toBeCloseTo(0, 12);
    expect(learningRateAt({ ...c, lr_schedule: 'linear' }, 60, 110)).toBeCloseTo(5e-4, 12);
    expect(learningRateAt({ ...c, lr_schedule: 'constant' }, 100, 110)).toBe(1e-3);
  });

  it('minibatches: contiguous, as even as possible', () => {
    expect(minibatchRows(8, 2)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    expect(minibatchRows(5, 2)).toEqual([
      [0, 1],
      [2, 3, 4],
    ]);
  });

  it('micro-batches: equal and within the planned size; a short minibatch takes more, smaller ones', () => {
    const rows = [8, 9, 10, 11, 12, 13, 14, 15];
    // gradient_accumulation_steps 4 of a full minibatch of 8: micro-batches of 2.
    expect(microBatchRows(rows, 2)).toEqual([
      [8, 9],
      [10, 11],
      [12, 13],
      [14, 15],
    ]);
    expect(microBatchRows(rows, 8)).toEqual([rows]);
    // 6 rows (dynamic sampling kept fewer groups) under a plan of 4: two of 3; 7 rows under 2: seven of 1.
    expect(microBatchRows(rows.slice(0, 6), 4)).toEqual([rows.slice(0, 3), rows.slice(3, 6)]);
    expect(microBatchRows(rows.slice(0, 7), 2)).toEqual(rows.slice(0, 7).map((r) => [r]));
  });
});

describe('curriculum', () => {
  const range = { min: 1, target: 5 };

  it('fixed and easy_to_hard never draw; the ramp goes from the easiest to the target over the run', () => {
    const rng = new Rng(3);
    const before = rng.getState();
    expect([0, 4, 9].map((s) => curriculumDifficulty({ curriculum: 'fixed', steps: 10 }, range, s, {}, rng))).toEqual([
      5, 5, 5,
    ]);
    // min + round(4 * step / 9): 1, 1 + round(1.78) = 3, 5.
    expect(
      [0, 4, 9].map((s) => curriculumDifficulty({ curriculum: 'easy_to_hard', steps: 10 }, range, s, {}, rng)),
    ).toEqual([1, 3, 5]);
    expect(rng.getState()).toBe(before);
  });

  it('adaptive draws once per step (none when the target is the easiest), weighting 1 - success rate', () => {
    const rng = new Rng(3);
    const before = rng.getState();
    expect(curriculumDifficulty({ curriculum: 'adaptive', steps: 10 }, { min: 2, target: 2 }, 0, {}, rng)).toBe(2);
    expect(rng.getState()).toBe(before);
    // Difficulties 1..4 mastered (weight floor 0.05 each), 5 unseen (weight 1): 5 with probability 1 / 1.2.
    const solved = { 1: 1, 2: 1, 3: 1, 4: 1 };
    const draws = Array.from({ length: 600 }, () =>
      curriculumDifficulty({ curriculum: 'adaptive', steps: 10 }, range, 0, solved, rng),
    );
    const twin = new Rng(3);
    const want = Array.from({ length: 600 }, () => {
      let u = twin.next() * 1.2;
      for (const [d, w] of [
        [1, 0.05],
        [2, 0.05],
        [3, 0.05],
        [4, 0.05],
        [5, 1],
      ])
        if ((u -= w) < 0) return d;
      return 5;
    });
    expect(draws).toEqual(want);
    expect(new Set(draws)).toEqual(new Set([1, 2, 3, 4, 5]));
  });
});
