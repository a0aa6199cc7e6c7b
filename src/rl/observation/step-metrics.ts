// The trainer's metrics of a rollout step as StepRecord carries them: the batch's reward, length and sampling
// metrics, an optimizer step's scalars under their names, the phase timings and throughput, and the critic's
// explained variance. Pure functions over finished results, every name one of the catalog's (docs/metrics.md).
// Not the objective's own metrics (reference/objective.ts computes those) and not the catalog (src/schema/metrics.ts).

import { VALUE_METRICS } from '../../reference/value';
import { groupRewardStats, mean, unbiasedStd } from '../algorithm/advantages';
import type { UpdateResult } from '../learners/learner';
import type { StepRollouts } from '../algorithm/rollouts';
import type { Metrics } from '../../schema/stream';
import { maxOf, minOf } from '../../schema/extremes';

/** The batch's reward, length and sampling metrics. */
export function rolloutMetrics(ro: StepRollouts, mask: Float32Array, difficulty: number, groupSize: number): Metrics {
  const N = ro.rollout.rows;
  const stats = groupRewardStats(ro.rewards, groupSize);
  const m: Metrics = {
    reward: stats.reward,
    reward_std: stats.reward_std,
    frac_reward_zero_std: stats.frac_reward_zero_std,
    frac_reward_zero_mean: stats.frac_reward_zero_mean,
    accuracy: mean(ro.parts.accuracy ?? new Float32Array(N)),
    // The RLHF book's names, from the verdicts (whatever reward_weights weighs): graded correctness where the task
    // scores one, else its accuracy; and the format part.
    avg_correctness: mean(ro.verdicts.map((v) => v.parts.correctness ?? v.parts.accuracy ?? 0)),
    avg_format: mean(ro.verdicts.map((v) => v.parts.format ?? 0)),
    difficulty,
    'dynamic_sampling/filtered_frac': ro.groupsSampled ? ro.groupsDropped / ro.groupsSampled : 0,
  };
  for (const [name, v] of Object.entries(ro.parts)) {
    m[`rewards/${name}/mean`] = mean(v);
    m[`rewards/${name}/std`] = unbiasedStd(v);
  }
  const lengths = Array.from(ro.rollout.lengths);
  const terminated = lengths.filter((_, r) => ro.rollout.finished[r]);
  m['completions/mean_length'] = mean(lengths);
  m['completions/min_length'] = minOf(lengths);
  m['completions/max_length'] = maxOf(lengths);
  m['completions/clipped_ratio'] = 1 - terminated.length / N;
  // Over the completions that ended with EOS; 0 when none did (as TRL logs them).
  m['completions/mean_terminated_length'] = terminated.length ? mean(terminated) : 0;
  m['completions/min_terminated_length'] = terminated.length ? minOf(terminated) : 0;
  m['completions/max_terminated_length'] = terminated.length ? maxOf(terminated) : 0;
  m['completions/loss_tokens'] = maskedTokens(mask);
  return m;
}

/** An optimizer step's scalars under their metric names (the critic's only when there is one). */
export function updateMetrics(res: UpdateResult, critic: boolean): Metrics {
  const criticOnly = new Set<string>([...VALUE_METRICS, 'critic/grad_norm']);
  return Object.fromEntries(Object.entries(res.scalars).filter(([k]) => critic || !criticOnly.has(k)));
}

/** Wall time of each phase of a rollout step, in seconds; a phase timed twice adds up. */
export class PhaseTimes {
  readonly seconds: Record<string, number> = {};

  async time<T>(phase: string, f: () => Promise<T> | T): Promise<T> {
    const t0 = performance.now();
    const out = await f();
    this.seconds[phase] = (this.seconds[phase] ?? 0) + (performance.now() - t0) / 1000;
    return out;
  }
}

/**
 * The step's time and throughput metrics: timing_s/<phase> per phase, step_time (TRL's name for the whole step's
 * wall time, in seconds), rollout tokens per second of generation and trained tokens (masked tokens x epochs) per
 * second of updates.
 */
export function timingMetrics(
  phases: Readonly<Record<string, number>>,
  stepSeconds: number,
  rolloutTokens: number,
  trainedTokens: number,
): Metrics {
  const m: Metrics = {
    'perf/rollout_tokens_per_s': rolloutTokens / Math.max(1e-9, phases.gen),
    'perf/train_tokens_per_s': trainedTokens / Math.max(1e-9, phases.update_actor),
    step_time: stepSeconds,
  };
  for (const [k, v] of Object.entries(phases)) m[`timing_s/${k}`] = v;
  return m;
}

/** 1 - Var(R - V) / Var(R) over the masked tokens (verl's vf_explained_var); 0 when Var(R) is 0. */
export function explainedVariance(
  values: ArrayLike<number>,
  returns: ArrayLike<number>,
  mask: ArrayLike<number>,
): number {
  const r: number[] = [];
  const e: number[] = [];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    r.push(returns[i]);
    e.push(returns[i] - values[i]);
  }
  const vr = variance(r);
  return vr > 0 ? 1 - variance(e) / vr : 0;
}

/** Tokens the loss counts: the sum of a 0/1 mask. */
export function maskedTokens(mask: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i];
  return n;
}

function variance(x: number[]): number {
  const m = mean(x);
  return mean(x.map((v) => (v - m) ** 2));
}
