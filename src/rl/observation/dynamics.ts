// The rollout step's dynamics, computed on the host from values the trainer already has (rewards, verdicts, the
// rollout's per-token entropies, the advantages, the lengths): the group signal (all-fail / mixed / all-pass groups,
// completions with a non-zero advantage), the entropy and advantage histograms, the top-decile entropy and the
// length percentiles, and the rule for when a completion passes. Pure functions; no GPU readback of its own.
// Not the catalog (src/schema/metrics.ts) nor the bin edges (src/schema/histograms.ts).

import { HISTOGRAMS, histogramCounts, type StepHistograms } from '../../schema/histograms';
import type { Metrics } from '../../schema/stream';
import { ZERO_STD_TOL } from '../algorithm/advantages';

/**
 * A completion passes when the task's verifier judges it correct (its accuracy part is 1) and it ended with EOS (a
 * completion cut at L_max is not a finished answer). The held-out evaluation's pass@k counts by the same rule.
 */
export function completionPasses(accuracy: number, finished: boolean): boolean {
  return accuracy === 1 && finished;
}

/** Fractions of a batch's groups by outcome: none, some or all of their G completions pass (they sum to 1). */
export interface GroupOutcomes {
  allFail: number;
  mixed: number;
  allPass: number;
}

/** The group outcome fractions of `passed` (N = B x G flags, each group's G rows contiguous); 0s for no rows. */
export function groupOutcomes(passed: readonly boolean[], groupSize: number): GroupOutcomes {
  if (groupSize < 1 || passed.length % groupSize !== 0)
    throw new Error(`groupOutcomes: ${passed.length} rows do not split into groups of ${groupSize}`);
  const B = passed.length / groupSize;
  if (!B) return { allFail: 0, mixed: 0, allPass: 0 };
  let allFail = 0;
  let allPass = 0;
  for (let g = 0; g < B; g++) {
    let k = 0;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) if (passed[i]) k++;
    if (k === 0) allFail++;
    else if (k === groupSize) allPass++;
  }
  return { allFail: allFail / B, mixed: (B - allFail - allPass) / B, allPass: allPass / B };
}

/**
 * Fraction of the N rows (length S each, row-major) with at least one loss token (mask 1) whose advantage is not 0
 * (|A| > 1e-8, the tolerance that calls a group's rewards tied); 0 for no rows. A row the mask drops entirely
 * counts as zero advantage: it passes no gradient.
 */
export function nonzeroAdvantageFrac(
  advantages: ArrayLike<number>,
  mask: ArrayLike<number>,
  rows: number,
  S: number,
): number {
  if (!rows) return 0;
  let n = 0;
  for (let r = 0; r < rows; r++) {
    for (let t = r * S; t < (r + 1) * S; t++) {
      if (mask[t] && Math.abs(advantages[t]) > ZERO_STD_TOL) {
        n++;
        break;
      }
    }
  }
  return n / rows;
}

/**
 * The q-quantile (q in [0, 1]) of `values` by linear interpolation between the closest ranks (NumPy's default):
 * sorted x, position h = (n - 1) q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). 0 for no values.
 */
export function quantile(values: ArrayLike<number>, q: number): number {
  const x = Float64Array.from(values).sort();
  if (!x.length) return 0;
  const h = (x.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(h);
  const hi = Math.min(x.length - 1, lo + 1);
  return x[lo] + (h - lo) * (x[hi] - x[lo]);
}

/** Mean of the largest ceil(M / 10) of the M values whose mask is nonzero (the top decile, at least one); 0 for none. */
export function topDecileMean(values: ArrayLike<number>, mask: ArrayLike<number>): number {
  const kept: number[] = [];
  for (let i = 0; i < values.length; i++) if (mask[i]) kept.push(values[i]);
  if (!kept.length) return 0;
  kept.sort((a, b) => b - a);
  const k = Math.ceil(kept.length / 10);
  let s = 0;
  for (let i = 0; i < k; i++) s += kept[i];
  return s / k;
}

/** What the dynamics of a rollout step are computed from (the batch as the trainer trains on it). */
export interface StepDynamicsInput {
  /** (N) each completion's accuracy part from the verifier. */
  accuracy: ArrayLike<number>;
  /** (N) ended with EOS. */
  finished: readonly boolean[];
  /** (N) completion lengths, EOS included. */
  lengths: ArrayLike<number>;
  /** (N x S) the sampler's per-token entropy (softmax(logits / tau)). */
  entropies: ArrayLike<number>;
  /** (N x S) per-token advantages. */
  advantages: ArrayLike<number>;
  /** (N x S) the loss mask. */
  mask: ArrayLike<number>;
  groupSize: number;
  /** Padded completion length. */
  S: number;
}

/** The step's group-signal, entropy and length metrics (catalog names) and its histograms. */
export function stepDynamics(d: StepDynamicsInput): { metrics: Metrics; histograms: StepHistograms } {
  const N = d.finished.length;
  const passed = d.finished.map((f, r) => completionPasses(d.accuracy[r], f));
  const g = groupOutcomes(passed, d.groupSize);
  const metrics: Metrics = {
    'groups/all_fail_frac': g.allFail,
    'groups/mixed_frac': g.mixed,
    'groups/all_pass_frac': g.allPass,
    'groups/nonzero_adv_frac': nonzeroAdvantageFrac(d.advantages, d.mask, N, d.S),
    'entropy/top_decile_mean': topDecileMean(d.entropies, d.mask),
    'completions/p10_length': quantile(d.lengths, 0.1),
    'completions/p50_length': quantile(d.lengths, 0.5),
    'completions/p90_length': quantile(d.lengths, 0.9),
  };
  const histograms: StepHistograms = {
    entropy: histogramCounts(HISTOGRAMS.entropy.edges, d.entropies, d.mask),
    advantage: histogramCounts(HISTOGRAMS.advantage.edges, d.advantages, d.mask),
  };
  return { metrics, histograms };
}

/** How many prompts are solved by exactly c of their n samples, c = 0..n (index c), from per-prompt pass counts. */
export function solveRateHistogram(passCounts: readonly number[], n: number): number[] {
  const out = new Array<number>(n + 1).fill(0);
  for (const c of passCounts) {
    if (!Number.isInteger(c) || c < 0 || c > n)
      throw new Error(`solveRateHistogram: a prompt passed ${c} of ${n} samples`);
    out[c]++;
  }
  return out;
}
