// The trainer's schedules: the learning rate at an optimizer step (warmup, then constant / cosine / linear decay),
// the split of a rollout batch into minibatches, and the curriculum's difficulty for the next rollout step.
// Pure functions of the config and the trainer's counters; the adaptive curriculum draws from the RNG it is given.
// Not the trainer's loop (trainer.ts).

import type { Rng } from '../../core/random';
import type { RLConfig } from '../../schema/config';

/** The learning rate at optimizer step `t` (1-based) of `total`: linear warmup, then constant / cosine / linear decay. */
export function learningRateAt(
  c: Pick<RLConfig, 'learning_rate' | 'warmup_steps' | 'lr_schedule'>,
  t: number,
  total: number,
): number {
  if (c.warmup_steps > 0 && t <= c.warmup_steps) return (c.learning_rate * t) / c.warmup_steps;
  if (c.lr_schedule === 'constant') return c.learning_rate;
  const span = Math.max(1, total - c.warmup_steps);
  const progress = Math.min(1, Math.max(0, (t - c.warmup_steps) / span));
  return c.lr_schedule === 'cosine'
    ? 0.5 * c.learning_rate * (1 + Math.cos(Math.PI * progress))
    : c.learning_rate * (1 - progress);
}

/** Splits rows 0..N-1 into `parts` contiguous minibatches as even as possible. */
export function minibatchRows(N: number, parts: number): number[][] {
  const out: number[][] = [];
  const k = Math.min(parts, N);
  for (let p = 0; p < k; p++) {
    const a = Math.floor((p * N) / k);
    const b = Math.floor(((p + 1) * N) / k);
    out.push(Array.from({ length: b - a }, (_, i) => a + i));
  }
  return out;
}

/**
 * A minibatch's rows as contiguous micro-batches (gradient accumulation) of one size, at most `maxRows` rows each
 * (derive()'s microBatchSize, what the memory plan sized), in the fewest such parts: gradient_accumulation_steps
 * parts of a full minibatch; a minibatch that dynamic sampling left short splits into the fewest equal parts that
 * fit (a row each at worst), so the micro-batches of an update share one shape and stay within the plan.
 */
export function microBatchRows(rows: readonly number[], maxRows: number): number[][] {
  const n = rows.length;
  let parts = Math.max(1, Math.ceil(n / Math.max(1, maxRows)));
  while (n % parts !== 0) parts++;
  const size = n / parts;
  return Array.from({ length: parts }, (_, p) => rows.slice(p * size, (p + 1) * size));
}

/**
 * The difficulty of the rollout step after `stepsDone` steps, between the task's easiest (`min`) and the configured
 * `target`. fixed: always the target. easy_to_hard: a linear ramp from min to target over the run. adaptive: a
 * draw with weight 1 - success rate per difficulty (unseen difficulties count as 0 success, no weight below 0.05);
 * only the adaptive curriculum draws from `rng`, one number per step, and none when min = target.
 */
export function curriculumDifficulty(
  c: Pick<RLConfig, 'curriculum' | 'steps'>,
  range: { min: number; target: number },
  stepsDone: number,
  successRate: Readonly<Record<string, number>>,
  rng: Rng,
): number {
  const { min, target } = range;
  if (c.curriculum === 'fixed' || target === min) return target;
  if (c.curriculum === 'easy_to_hard') return min + Math.round(((target - min) * stepsDone) / Math.max(1, c.steps - 1));
  const ds = Array.from({ length: target - min + 1 }, (_, i) => min + i);
  const w = ds.map((d) => Math.max(0.05, 1 - (successRate[d] ?? 0)));
  let u = rng.next() * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < ds.length; i++) if ((u -= w[i]) < 0) return ds[i];
  return target;
}
