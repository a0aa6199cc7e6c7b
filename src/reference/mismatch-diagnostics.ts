// The sampler/learner mismatch diagnostics of one batch, on the host from arrays already read back (the learner's
// log pi_old, the sampler's log-probs recorded at sampling time, the loss mask and the advantages): prime-rl's
// mismatch_kl statistics and DPPO-masked advantage shares (src/prime_rl/trainer/rl/loss.py, train.py, utils.py
// Tensors.compute_stats) and verl's rollout correction diagnostics (verl/trainer/ppo/rollout_corr_helper.py
// compute_offpolicy_metrics and compute_is_metrics at rollout_is 'token'), under those trainers' names. The formulas
// are in docs/algorithms.md#mismatch-diagnostics; src/reference/fixtures/trainer-formulas.json holds their values from
// the peers' own functions. Not the objective's rollout correction (objective.ts), which reweighs the loss.

import { LOG_WEIGHT_CAP } from '../schema/objective';

/** prime-rl's DPPO trust-region thresholds on pi_train - pi_sampler (dppo_mask_low / dppo_mask_high defaults). */
export const PRIME_RL_DPPO_MASK = { low: 0.2, high: 0.2 } as const;

/** verl's rollout_is_threshold default, the C of the diagnostics when the config sets no rollout_is_clip_max. */
export const VERL_ROLLOUT_IS_THRESHOLD = 2.0;

/** The diagnostics' names (the metric catalog's) in the order mismatchDiagnostics returns them. */
export const MISMATCH_METRICS = [
  'mismatch_kl/mean',
  'mismatch_kl/std',
  'mismatch_kl/max',
  'rollout_corr/rollout_is_eff_sample_size',
  'rollout_corr/rollout_is_ratio_fraction_high',
  'rollout_corr/rollout_is_ratio_fraction_low',
  'rollout_corr/ppl_ratio',
  'rollout_corr/chi2_token',
  'rollout_corr/chi2_seq',
  'masked_advantage_positive/mean',
  'masked_advantage_negative/mean',
] as const;
export type MismatchMetric = (typeof MISMATCH_METRICS)[number];

/** verl's masked_mean: sum(x m) / (sum m + 1e-8). */
const EPS = 1e-8;

const capped = (x: number) => Math.min(LOG_WEIGHT_CAP, Math.max(-LOG_WEIGHT_CAP, x));

/**
 * The diagnostics of a batch of rows of S tokens: `learnerLogp` is log pi_old (the learner's forward before the
 * updates, verl's old_log_prob, prime-rl's trainer_logprobs at the first micro-step), `samplerLogp` the sampler's
 * (mu), `mask` the loss mask, `advantages` per token, `threshold` verl's rollout_is_threshold C (fractions above C
 * and below 1/C; the effective sample size of the weights clamped to [1/C, C]). Empty when no token is in the mask.
 */
export function mismatchDiagnostics(
  learnerLogp: ArrayLike<number>,
  samplerLogp: ArrayLike<number>,
  mask: ArrayLike<number>,
  advantages: ArrayLike<number>,
  S: number,
  threshold: number,
): Partial<Record<MismatchMetric, number>> {
  const rows = Math.floor(mask.length / S);
  let n = 0;
  let klSum = 0;
  let klMax = -Infinity;
  const kls: number[] = [];
  let rho2Sum = 0;
  let high = 0;
  let low = 0;
  const lowBound = 1 / threshold;
  let pplRatioSum = 0;
  let chi2SeqSum = 0;
  let posSum = 0;
  let negSum = 0;
  // The weights clamped to [1/C, C], for the effective sample size (two passes: their mean first).
  const clamped: number[] = [];
  for (let r = 0; r < rows; r++) {
    let m = 0;
    let sumLearner = 0;
    let sumSampler = 0;
    let sumLog = 0;
    let dropped = 0;
    let droppedPos = 0;
    let droppedNeg = 0;
    for (let t = 0; t < S; t++) {
      const i = r * S + t;
      if (!mask[i]) continue;
      const d = learnerLogp[i] - samplerLogp[i];
      const kl = Math.exp(d) - d - 1;
      kls.push(kl);
      klSum += kl;
      if (kl > klMax) klMax = kl;
      const w = Math.exp(capped(d));
      rho2Sum += w * w;
      if (w > threshold) high++;
      if (w < lowBound) low++;
      clamped.push(Math.min(threshold, Math.max(lowBound, w)));
      m++;
      sumLearner += learnerLogp[i];
      sumSampler += samplerLogp[i];
      sumLog += d;
      // prime-rl's DPPO mask: a token whose probability moved past the trust region in its advantage's direction.
      const a = advantages[i];
      const probsDiff = Math.exp(learnerLogp[i]) - Math.exp(samplerLogp[i]);
      const masked = a > 0 ? probsDiff > PRIME_RL_DPPO_MASK.high : probsDiff < -PRIME_RL_DPPO_MASK.low;
      if (masked) {
        dropped++;
        if (a > 0) droppedPos++;
        if (a < 0) droppedNeg++;
      }
    }
    n += m;
    // verl: per-sequence masked means of the log-probs, log_ppl_diff = mean log mu - mean log pi_old.
    pplRatioSum += Math.exp(sumSampler / (m + EPS) - sumLearner / (m + EPS));
    chi2SeqSum += Math.exp(2 * capped(sumLog));
    posSum += droppedPos / Math.max(dropped, 1);
    negSum += droppedNeg / Math.max(dropped, 1);
  }
  if (n === 0) return {};
  const klMean = klSum / n;
  let sq = 0;
  for (const k of kls) sq += (k - klMean) ** 2;
  const wMean = clamped.reduce((a, b) => a + b, 0) / (n + EPS);
  let normSq = 0;
  for (const w of clamped) normSq += (w / (wMean + EPS)) ** 2;
  return {
    'mismatch_kl/mean': klMean,
    // torch's std: the unbiased estimate (undefined for one token: NaN there, absent here).
    ...(n > 1 ? { 'mismatch_kl/std': Math.sqrt(sq / (n - 1)) } : {}),
    'mismatch_kl/max': klMax,
    'rollout_corr/rollout_is_eff_sample_size': 1 / (normSq / (n + EPS)),
    'rollout_corr/rollout_is_ratio_fraction_high': high / (n + EPS),
    'rollout_corr/rollout_is_ratio_fraction_low': low / (n + EPS),
    'rollout_corr/ppl_ratio': pplRatioSum / rows,
    'rollout_corr/chi2_token': rho2Sum / (n + EPS) - 1,
    'rollout_corr/chi2_seq': chi2SeqSum / rows - 1,
    'masked_advantage_positive/mean': posSum / rows,
    'masked_advantage_negative/mean': negSum / rows,
  };
}

/** The C of the diagnostics for a config: its correction's upper bound (tis_cap, rollout_is_clip_max), else verl's 2. */
export function diagnosticThreshold(c: { tis_cap: number | null; rollout_is_clip_max: number | null }): number {
  return c.tis_cap ?? c.rollout_is_clip_max ?? VERL_ROLLOUT_IS_THRESHOLD;
}
