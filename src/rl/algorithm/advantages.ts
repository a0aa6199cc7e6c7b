// Advantage estimators of docs/algorithms.md#advantage-estimators (`adv_estimator`), the group reward statistics the metrics report
// (`reward`, `reward_std`, `frac_reward_zero_std`) and the unbiased pass@k estimator. Pure CPU arithmetic on
// typed arrays, float64 inside: the batch is at most a few thousand tokens. Not the loss (the unified objective
// consumes these advantages) and not the rewards themselves (src/tasks and the reward functions make those).
//
// Layout, shared by every function here. N = B*G sequences, grouped contiguously: group g is rows
// g*G .. g*G+G-1. Per-token arrays are (N,L) row-major, L = the padded completion length. mask m (N,L) is 1 for
// tokens that count and 0 elsewhere; every per-token output is exactly 0 where m = 0. A row whose mask is all
// 0 (a completion dropped by mask_truncated_completions) gets all-zero outputs and takes no part in whitening.

import {
  ADV_ESTIMATORS,
  type AdvEstimator,
  type MultiObjectiveAggregation,
  type ScaleRewards,
} from '../../schema/algorithm-names';
import {
  focalGroupFactors,
  maxRlSequenceAdvantages,
  scaleRowsByGroup,
  type FocalOptions,
} from './pass-rate-advantages';
/** The optimal token baseline's guard on its denominator: B_t = sum G W / (sum W + OTB_EPS) (verl's epsilon). */
export const OTB_EPS = 1e-8;

/** GRPO's std guard: A = (r - mean) / (std + GRPO_STD_EPS). */
export const GRPO_STD_EPS = 1e-4;

/** Whitening guard on the variance: (x - mean) / sqrt(var + WHITEN_VAR_EPS) (verl's masked_whiten). */
export const WHITEN_VAR_EPS = 1e-8;

/** A group whose rewards span at most this much counts as "all equal" (frac_reward_zero_std, dynamic sampling). */
export const ZERO_STD_TOL = 1e-8;

/** What the estimators read. Arrays may be any numeric array-like (Float32Array from the GPU, plain arrays in tests). */
export interface AdvantageInput {
  /** (N) sequence rewards r_i, groups contiguous. */
  rewards: ArrayLike<number>;
  /** (N,L) 1 where a completion token counts, 0 for padding and masked tokens. */
  mask: ArrayLike<number>;
  /** G: completions per prompt; divides N. */
  groupSize: number;
  /** (N,L) k1 = log pi_old - log pi_ref at the sampled tokens. Needed by token-reward estimators when beta > 0. */
  k1?: ArrayLike<number>;
  /** (N,L) the critic's V_old at each completion token. Needed by `gae`. */
  values?: ArrayLike<number>;
  /** (B) r(x_b, y_greedy): the reward of one greedy rollout per prompt. Needed by `remax`. */
  greedyRewards?: ArrayLike<number>;
  /** (N,L) log pi_old of each sampled token. Needed by `optimal_token_baseline`. */
  oldLogp?: ArrayLike<number>;
  /** (N,L) sum_v pi_old(v)^2 of each token's full distribution. Needed by `optimal_token_baseline`. */
  sumPiSquared?: ArrayLike<number>;
  /** (N,L) rollout importance weights rho (truncated); `optimal_token_baseline` scales W by rho^2 when given. */
  rolloutIsWeights?: ArrayLike<number>;
}

/** The running-mean baseline of `reinforce`, passed in and returned so the caller owns the state. */
export interface RunningBaseline {
  /** The baseline b subtracted from the next batch's rewards. */
  value: number;
  /** Batches folded into `value` so far. */
  batches: number;
}

/** Knobs the estimators read; each ignores what it does not use. */
export interface AdvantageOptions {
  /** `grpo` only: the divisor (default 'group'). */
  scaleRewards?: ScaleRewards;
  /** Token-reward estimators: coefficient of the per-token KL reward -beta * k1 (default 0: no KL in the reward). */
  beta?: number;
  /** `gae`: discount (default 1). */
  gamma?: number;
  /** `gae`: GAE lambda (default 0.95). */
  lam?: number;
  /**
   * `reinforce`: momentum m of the running-mean baseline, in [0, 1); null or absent: no baseline (A = r).
   * After each batch b <- m * b + (1 - m) * mean(r); a first batch (no state) uses its own mean.
   */
  baselineMomentum?: number | null;
  /** `reinforce`: the state returned by the previous call (null or absent on the first batch). */
  baseline?: RunningBaseline | null;
  /** `grpo`: 'normalize_then_sum' makes it GDPO over `rewardParts` (default 'sum_then_normalize': over `rewards`). */
  multiObjectiveAggregation?: MultiObjectiveAggregation;
  /** GDPO: each reward function's (N) values R_k and its weight w_k (rewards = sum_k w_k R_k). */
  rewardParts?: readonly RewardPart[];
  /** `f_grpo`: the focal exponent and the correct / wrong rewards (default gamma 1, R_correct 1, R_wrong 0). */
  focal?: FocalOptions;
}

/** One reward function's values over the batch and its weight. */
export interface RewardPart {
  name: string;
  /** (N) R_k per completion, groups contiguous. */
  values: ArrayLike<number>;
  /** w_k. */
  weight: number;
}

/** Per-token advantages, and what some estimators return beside them. */
export interface AdvantageResult {
  /** (N,L) A_{i,t}; 0 where the mask is 0. */
  advantages: Float32Array;
  /** (N,L) `gae` only: value targets R_t = A_t + V_t (before whitening A); 0 where the mask is 0. */
  returns?: Float32Array;
  /** `reinforce` with a baseline: the state to pass to the next call. */
  baseline?: RunningBaseline;
}

/**
 * The one entry point: dispatches to the estimator `adv_estimator` names (see each function for its formula).
 * Throws RangeError on inconsistent shapes, non-finite inputs, or a missing input the estimator needs.
 */
export function computeAdvantages(
  estimator: AdvEstimator,
  input: AdvantageInput,
  opts: AdvantageOptions = {},
): AdvantageResult {
  switch (estimator) {
    case 'grpo':
      if (opts.multiObjectiveAggregation === 'normalize_then_sum') {
        if (!opts.rewardParts?.length) throw new RangeError('normalize_then_sum (GDPO) needs rewardParts');
        return { advantages: gdpoAdvantages(input, opts.rewardParts) };
      }
      return { advantages: grpoAdvantages(input, opts.scaleRewards ?? 'group') };
    case 'dr_grpo':
      return { advantages: drGrpoAdvantages(input) };
    case 'rloo':
      return { advantages: rlooAdvantages(input) };
    case 'reinforce':
      return reinforceAdvantages(input, opts.baselineMomentum ?? null, opts.baseline ?? null);
    case 'reinforce_pp':
      return { advantages: reinforcePpAdvantages(input, opts.beta ?? 0) };
    case 'reinforce_pp_baseline':
      return { advantages: reinforcePpBaselineAdvantages(input, opts.beta ?? 0) };
    case 'remax':
      return { advantages: remaxAdvantages(input) };
    case 'opo':
      return { advantages: opoAdvantages(input) };
    case 'gae':
      return gaeAdvantages(input, opts.beta ?? 0, opts.gamma ?? 1, opts.lam ?? 0.95);
    case 'grpo_passk':
      return { advantages: grpoPasskAdvantages(input, opts.scaleRewards ?? 'group') };
    case 'optimal_token_baseline':
      return { advantages: optimalTokenBaselineAdvantages(input, opts.beta ?? 0) };
    case 'max_rl': {
      const s = shapeOf(input);
      return { advantages: broadcast(maxRlSequenceAdvantages(s.rewards, s.G), s) };
    }
    case 'f_grpo': {
      const focal = opts.focal ?? { gamma: 1, rewardCorrect: 1, rewardWrong: 0 };
      const factors = focalGroupFactors(shapeOf(input).rewards, input.groupSize, focal);
      return {
        advantages: scaleRowsByGroup(grpoAdvantages(input, opts.scaleRewards ?? 'group'), input.groupSize, factors),
      };
    }
    default: {
      const never: never = estimator;
      throw new RangeError(`unknown adv_estimator ${JSON.stringify(never)}; known: ${ADV_ESTIMATORS.join(', ')}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Sequence-level estimators: one scalar a_i per sequence, broadcast to its valid tokens (A_{i,t} = a_i m_{i,t}).

/**
 * `grpo`: a_i = (r_i - mean_g r) / (s + 1e-4), with s by `scale`:
 * 'group': the unbiased std of the group's rewards (DeepSeekMath); 'batch': the unbiased std of all N rewards
 * ("Lite PPO"; the mean stays the group's); 'none': s + 1e-4 replaced by 1 (= Dr. GRPO).
 * A group whose rewards are all equal gets a = 0 exactly (numerator 0, denominator >= 1e-4).
 */
export function grpoAdvantages(input: AdvantageInput, scale: ScaleRewards = 'group'): Float32Array {
  const s = shapeOf(input);
  const r = s.rewards;
  const { mean, std } = groupMoments(r, s.G);
  const need = scale === 'group' ? s.G : s.N;
  if (scale !== 'none' && need < 2)
    throw new RangeError(`grpo with scale_rewards '${scale}' needs at least 2 rewards per std, got ${need}`);
  const batchStd = scale === 'batch' ? unbiasedStd(r, 0, s.N) : 0;
  const a = new Float64Array(s.N);
  for (let i = 0; i < s.N; i++) {
    const g = Math.floor(i / s.G);
    const centered = r[i] - mean[g];
    a[i] = scale === 'none' ? centered : centered / ((scale === 'group' ? std[g] : batchStd) + GRPO_STD_EPS);
  }
  return broadcast(a, s);
}

/**
 * GDPO (`multi_objective_aggregation` normalize_then_sum; arXiv:2601.05242, TRL's formula): each reward function k
 * is normalized within its group, z_ik = (R_ik - mean_g R_k) / (std_g R_k + 1e-4), the z are summed with their
 * weights, s_i = sum_k w_k z_ik, and the sum is normalized over the batch: a_i = (s_i - mean s) / (std s + 1e-4)
 * (stds unbiased). So a reward that varies little inside its groups still counts in full, instead of being drowned
 * by one with a larger spread as in sum-then-normalize. `input.rewards` only fixes the shape here.
 */
export function gdpoAdvantages(input: AdvantageInput, parts: readonly RewardPart[]): Float32Array {
  const s = shapeOf(input);
  if (s.N < 2) throw new RangeError(`normalize_then_sum (GDPO) normalizes over the batch and needs N >= 2, got ${s.N}`);
  const sum = new Float64Array(s.N);
  for (const part of parts) {
    if (part.values.length !== s.N)
      throw new RangeError(`reward part ${part.name} has ${part.values.length} values, want N = ${s.N}`);
    const r = finite(part.values, `reward part ${part.name}`);
    const { mean: m, std } = groupMoments(r, s.G);
    for (let i = 0; i < s.N; i++) {
      const g = Math.floor(i / s.G);
      sum[i] += (part.weight * (r[i] - m[g])) / (std[g] + GRPO_STD_EPS);
    }
  }
  const mu = mean(sum);
  const sd = unbiasedStd(sum);
  return broadcast(
    sum.map((x) => (x - mu) / (sd + GRPO_STD_EPS)),
    s,
  );
}

/** grpo_passk's std guard (verl's epsilon): a = (r_max - r_second) / (std + PASSK_STD_EPS). */
export const PASSK_STD_EPS = 1e-6;

/**
 * `grpo_passk` (verl's compute_grpo_passk_outcome_advantage; Pass@k training, arXiv:2503.19595): in each group
 * only the best completion gets an advantage, a = r_max - r_second_max (the top two of the group's rewards), divided
 * by the group's unbiased std + 1e-6 unless scale is 'none'; every other completion gets 0. Among tied best
 * rewards the first row is the best (verl's torch.topk leaves the pick among ties unspecified; then a = 0 anyway).
 * Needs G >= 2. scale 'batch' is not defined (verl divides by the group's std or not at all).
 */
export function grpoPasskAdvantages(input: AdvantageInput, scale: ScaleRewards = 'group'): Float32Array {
  const s = shapeOf(input);
  if (s.G < 2) throw new RangeError(`grpo_passk needs groupSize >= 2 (the top two rewards of a group), got ${s.G}`);
  if (scale === 'batch')
    throw new RangeError("grpo_passk divides by the group's std or not at all; scale 'batch' is not defined");
  const r = s.rewards;
  const { std } = groupMoments(r, s.G);
  const a = new Float64Array(s.N);
  for (let g = 0; g < s.B; g++) {
    let best = g * s.G;
    for (let i = best + 1; i < (g + 1) * s.G; i++) if (r[i] > r[best]) best = i;
    let second = -Infinity;
    for (let i = g * s.G; i < (g + 1) * s.G; i++) if (i !== best) second = Math.max(second, r[i]);
    const gap = r[best] - second;
    a[best] = scale === 'none' ? gap : gap / (std[g] + PASSK_STD_EPS);
  }
  return broadcast(a, s);
}

/**
 * The reward parts GDPO normalizes, from a step's per-function rewards: each weighted function with its weight, and
 * DAPO's overlong penalty (the part `overlong`, present when overlong shaping is on) as one more with weight 1.
 */
export function rewardPartsOf(
  parts: Readonly<Record<string, ArrayLike<number>>>,
  weights: Readonly<Record<string, number>>,
): RewardPart[] {
  const out: RewardPart[] = [];
  for (const [name, weight] of Object.entries(weights))
    if (parts[name]) out.push({ name, values: parts[name], weight });
  if (parts.overlong && !('overlong' in weights)) out.push({ name: 'overlong', values: parts.overlong, weight: 1 });
  return out;
}

/** `dr_grpo`: a_i = r_i - mean_g r (no std division; Dr. GRPO removes the difficulty bias of 1/std). */
export function drGrpoAdvantages(input: AdvantageInput): Float32Array {
  const s = shapeOf(input);
  const { mean } = groupMoments(s.rewards, s.G);
  return broadcast(
    s.rewards.map((ri, i) => ri - mean[Math.floor(i / s.G)]),
    s,
  );
}

/**
 * `rloo`: a_i = r_i - (1/(G-1)) sum_{j != i} r_j (the leave-one-out mean; = G/(G-1) (r_i - mean_g r)).
 * Needs G >= 2.
 */
export function rlooAdvantages(input: AdvantageInput): Float32Array {
  const s = shapeOf(input);
  if (s.G < 2) throw new RangeError(`rloo needs groupSize >= 2 (the leave-one-out mean divides by G-1), got ${s.G}`);
  // r_i - (sum_g - r_i)/(G-1) = G/(G-1) (r_i - mean_g): the second form is exactly 0 for an all-equal group.
  const { mean: m } = groupMoments(s.rewards, s.G);
  return broadcast(
    s.rewards.map((ri, i) => (s.G / (s.G - 1)) * (ri - m[Math.floor(i / s.G)])),
    s,
  );
}

/**
 * `reinforce`: a_i = r_i - b. Without a baseline (momentum null) b = 0. With momentum m, b is the running
 * mean carried in `state` (a first batch uses its own mean), and the returned state holds
 * b' = m b + (1 - m) mean(r) for the next batch.
 */
export function reinforceAdvantages(
  input: AdvantageInput,
  momentum: number | null = null,
  state: RunningBaseline | null = null,
): AdvantageResult {
  const s = shapeOf(input);
  if (momentum === null) return { advantages: broadcast(s.rewards, s) };
  if (!(momentum >= 0 && momentum < 1))
    throw new RangeError(`reinforce baseline momentum must be in [0, 1), got ${momentum}`);
  const batchMean = mean(s.rewards);
  const fresh = state === null || state.batches === 0;
  const b = fresh ? batchMean : state.value;
  const next: RunningBaseline = fresh
    ? { value: batchMean, batches: 1 }
    : { value: momentum * b + (1 - momentum) * batchMean, batches: state.batches + 1 };
  return {
    advantages: broadcast(
      s.rewards.map((ri) => ri - b),
      s,
    ),
    baseline: next,
  };
}

/** `remax`: a_i = r_i - r(x_g, y_greedy): each prompt's greedy-rollout reward is its baseline. */
export function remaxAdvantages(input: AdvantageInput): Float32Array {
  const s = shapeOf(input);
  const greedy = input.greedyRewards;
  if (!greedy) throw new RangeError('remax needs greedyRewards: one greedy rollout reward per prompt');
  if (greedy.length !== s.B)
    throw new RangeError(`remax: greedyRewards has ${greedy.length} entries, expected one per prompt (B = ${s.B})`);
  const gr = finite(greedy, 'greedyRewards');
  return broadcast(
    s.rewards.map((ri, i) => ri - gr[Math.floor(i / s.G)]),
    s,
  );
}

/**
 * `opo`: a_i = r_i - sum_j |y_j| r_j / sum_j |y_j| over the group (the length-weighted baseline of OPO),
 * |y_j| = sum_t m_{j,t}. A group of all-empty completions falls back to the plain mean (its tokens are masked
 * anyway).
 */
export function opoAdvantages(input: AdvantageInput): Float32Array {
  const s = shapeOf(input);
  const len = rowLengths(s);
  const { mean: m } = groupMoments(s.rewards, s.G);
  const a = new Float64Array(s.N);
  for (let g = 0; g < s.B; g++) {
    // b = mean_g + sum_j |y_j| (r_j - mean_g) / sum_j |y_j|: the same number, but exactly mean_g when the
    // rewards are all equal (the deviations are 0), so such a group gets exactly 0.
    let wdev = 0;
    let lsum = 0;
    for (let i = g * s.G; i < (g + 1) * s.G; i++) {
      wdev += len[i] * (s.rewards[i] - m[g]);
      lsum += len[i];
    }
    const b = lsum > 0 ? m[g] + wdev / lsum : m[g];
    for (let i = g * s.G; i < (g + 1) * s.G; i++) a[i] = s.rewards[i] - b;
  }
  return broadcast(a, s);
}

// ---------------------------------------------------------------------------------------------------------
// Token-level estimators: per-token rewards rho_{i,t} = -beta k1_{i,t} m_{i,t}, plus a sequence reward at the
// last valid token T_i (the last t with m_{i,t} = 1).

/**
 * `reinforce_pp` (REINFORCE++): rho_t = -beta k1_t, plus r_i at the last token; R_t = sum_{s >= t} rho_s
 * over the valid tokens; A = whiten(R) over all valid tokens of the batch.
 */
export function reinforcePpAdvantages(input: AdvantageInput, beta = 0): Float32Array {
  const s = shapeOf(input);
  const returns = suffixReturns(tokenRewards(s, input.k1, beta, s.rewards), s);
  return toF32(whitenInPlace(returns, s.mask));
}

/**
 * `reinforce_pp_baseline`: the sequence reward is first centred on its group, r_i - mean_g r; then the token
 * returns of `reinforce_pp` (rho_t = -beta k1_t, plus r_i - mean_g r at the last token; R_t = sum_{s>=t}
 * rho_s), whitened over all valid tokens of the batch.
 */
export function reinforcePpBaselineAdvantages(input: AdvantageInput, beta = 0): Float32Array {
  const s = shapeOf(input);
  const { mean: m } = groupMoments(s.rewards, s.G);
  const centred = s.rewards.map((ri, i) => ri - m[Math.floor(i / s.G)]);
  const returns = suffixReturns(tokenRewards(s, input.k1, beta, centred), s);
  return toF32(whitenInPlace(returns, s.mask));
}

/**
 * `gae` (PPO): rho_t = -beta k1_t, plus r_i at the last token; delta_t = rho_t + gamma V_{t+1} - V_t, where
 * V_{t+1} is the value at the next valid token and 0 after the last; A_t = sum_l (gamma lam)^l delta_{t+l};
 * value targets R_t = A_t + V_t; then A is whitened over all valid tokens of the batch (R is not).
 */
export function gaeAdvantages(input: AdvantageInput, beta = 0, gamma = 1, lam = 0.95): AdvantageResult {
  const s = shapeOf(input);
  if (!input.values) throw new RangeError('gae needs values: the critic V_old at every completion token');
  if (input.values.length !== s.N * s.L)
    throw new RangeError(`gae: values has ${input.values.length} entries, expected N*L = ${s.N * s.L}`);
  for (const [name, v] of [
    ['gamma', gamma],
    ['lam', lam],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new RangeError(`gae: ${name} must be in [0, 1], got ${v}`);
  }
  const V = finite(input.values, 'values');
  const rho = tokenRewards(s, input.k1, beta, s.rewards);
  const adv = new Float64Array(s.N * s.L);
  const ret = new Float64Array(s.N * s.L);
  for (let i = 0; i < s.N; i++) {
    let nextV = 0; // V after the last token
    let nextA = 0;
    for (let t = s.L - 1; t >= 0; t--) {
      const k = i * s.L + t;
      if (s.mask[k] === 0) continue; // masked tokens are skipped: the recursion links valid tokens only
      const delta = rho[k] + gamma * nextV - V[k];
      const a = delta + gamma * lam * nextA;
      adv[k] = a;
      ret[k] = a + V[k];
      nextV = V[k];
      nextA = a;
    }
  }
  return { advantages: toF32(whitenInPlace(adv, s.mask)), returns: toF32(ret) };
}

/**
 * `optimal_token_baseline` (verl's compute_optimal_token_baseline_advantage): a baseline per prompt group and
 * per token position. rho_t as in `reinforce_pp` (r_i at the last token, -beta k1_t when the KL is in the reward);
 * G_t = sum_{s >= t} rho_s; w_t = 1 - 2 pi_t + sum_v pi(v)^2 (||score||^2 of the token's log-prob in the logits,
 * pi_t = exp(log pi_old)), times rho_t^2 with rollout importance weights; W_t = sum_{j <= t} w_j m_j;
 * B_t = sum_{i in g} G_{i,t} W_{i,t} m_{i,t} / (sum_{i in g} W_{i,t} m_{i,t} + 1e-8) over the group's rows at
 * position t; A_{i,t} = (G_{i,t} - B_t) m_{i,t}. A group of one row keeps A = G (no baseline). verl's
 * handle_zero_tail (True by default at the commit of docs/algorithms.md, and not settable from its config): when
 * exactly one row of a group has the most valid tokens, its baseline is 0 from position (the second-most valid
 * tokens) on, where only its own W would enter B_t and A would be ~0. Not whitened.
 */
export function optimalTokenBaselineAdvantages(input: AdvantageInput, beta = 0): Float32Array {
  const s = shapeOf(input);
  const NL = s.N * s.L;
  const need = (x: ArrayLike<number> | undefined, name: string, what: string): Float64Array => {
    if (!x) throw new RangeError(`optimal_token_baseline needs ${name}: ${what}`);
    if (x.length !== NL)
      throw new RangeError(`optimal_token_baseline: ${name} has ${x.length} entries, expected N*L = ${NL}`);
    return finite(x, name);
  };
  const logp = need(input.oldLogp, 'oldLogp', 'log pi_old of every sampled token');
  const sumSq = need(input.sumPiSquared, 'sumPiSquared', 'sum_v pi_old(v)^2 at every token');
  const isw = input.rolloutIsWeights ? need(input.rolloutIsWeights, 'rolloutIsWeights', '') : null;
  const G = suffixReturns(tokenRewards(s, input.k1, beta, s.rewards), s);
  const W = new Float64Array(NL); // cumulative path variance, valid tokens only
  for (let i = 0; i < s.N; i++) {
    let run = 0;
    for (let t = 0; t < s.L; t++) {
      const k = i * s.L + t;
      if (s.mask[k]) {
        const w = 1 - 2 * Math.exp(logp[k]) + sumSq[k];
        run += isw ? w * isw[k] * isw[k] : w;
      }
      W[k] = run;
    }
  }
  const adv = new Float64Array(NL);
  for (let g = 0; g < s.B; g++) {
    const tail = zeroTail(g);
    for (let t = 0; t < s.L; t++) {
      let num = 0;
      let den = 0;
      for (let i = g * s.G; i < (g + 1) * s.G; i++) {
        const k = i * s.L + t;
        if (!s.mask[k]) continue;
        num += G[k] * W[k];
        den += W[k];
      }
      const baseline = s.G === 1 ? 0 : num / (den + OTB_EPS);
      for (let i = g * s.G; i < (g + 1) * s.G; i++) {
        const k = i * s.L + t;
        if (s.mask[k]) adv[k] = G[k] - (i === tail.row && t >= tail.from ? 0 : baseline);
      }
    }
  }
  return toF32(adv);

  /** handle_zero_tail of group g: the one longest row and where its unshared tail starts; row -1 when none. */
  function zeroTail(g: number): { row: number; from: number } {
    if (s.G < 2) return { row: -1, from: 0 };
    const lengths: number[] = [];
    for (let i = g * s.G; i < (g + 1) * s.G; i++) {
      let n = 0;
      for (let t = 0; t < s.L; t++) n += s.mask[i * s.L + t];
      lengths.push(n);
    }
    const sorted = [...lengths].sort((a, b) => a - b);
    const [max, second] = [sorted[s.G - 1], sorted[s.G - 2]];
    const longest = lengths.filter((n) => n === max).length;
    return longest === 1 && max > second ? { row: g * s.G + lengths.indexOf(max), from: second } : { row: -1, from: 0 };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Shared pieces.

/**
 * Whitens `x` over the positions where `mask` is 1: (x - mean) / sqrt(var + 1e-8), var unbiased; masked
 * positions become 0. Zero variance (or fewer than 2 valid positions) gives exactly 0, never NaN.
 */
export function whiten(x: ArrayLike<number>, mask: ArrayLike<number>): Float32Array {
  if (x.length !== mask.length) throw new RangeError(`whiten: ${x.length} values but ${mask.length} mask entries`);
  return toF32(whitenInPlace(Float64Array.from(x), binaryMask(mask)));
}

/** Group statistics of one batch's rewards, as the metrics and dynamic sampling need them. */
export interface GroupRewardStats {
  /** `reward`: mean of all N rewards. */
  reward: number;
  /** `reward_std`: mean over groups of the unbiased within-group std (TRL's reward_std; 0 for G = 1). */
  reward_std: number;
  /** `frac_reward_zero_std`: fraction of groups whose rewards are all equal (span <= ZERO_STD_TOL). */
  frac_reward_zero_std: number;
  /** `frac_reward_zero_mean`: fraction of groups whose mean reward is 0 (|mean| <= ZERO_STD_TOL): MaxRL's silent groups. */
  frac_reward_zero_mean: number;
  /** (B) per-group mean. */
  groupMean: Float64Array;
  /** (B) per-group unbiased std (0 for G = 1). */
  groupStd: Float64Array;
  /** (B) true where the group's rewards are all equal: no GRPO signal (dynamic sampling drops these). */
  zeroStd: boolean[];
}

/** `reward`, `reward_std`, `frac_reward_zero_std`, `frac_reward_zero_mean` and the per-group numbers behind them. */
export function groupRewardStats(rewards: ArrayLike<number>, groupSize: number): GroupRewardStats {
  const r = finite(rewards, 'rewards');
  checkGroups(r.length, groupSize);
  const B = r.length / groupSize;
  const { mean: gm, std } = groupMoments(r, groupSize);
  const zeroStd: boolean[] = [];
  for (let g = 0; g < B; g++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) {
      lo = Math.min(lo, r[i]);
      hi = Math.max(hi, r[i]);
    }
    zeroStd.push(hi - lo <= ZERO_STD_TOL);
  }
  return {
    reward: mean(r),
    reward_std: mean(std),
    frac_reward_zero_std: zeroStd.filter(Boolean).length / B,
    frac_reward_zero_mean: Array.from(gm).filter((m) => Math.abs(m) <= ZERO_STD_TOL).length / B,
    groupMean: gm,
    groupStd: std,
    zeroStd,
  };
}

/**
 * Unbiased pass@k for one prompt with n samples of which c are correct: 1 - C(n-c, k) / C(n, k), computed as
 * 1 - prod_{i=n-c+1}^{n} (1 - k/i) (no binomials, so no overflow at any n). Integers with 0 <= c <= n, 1 <= k <= n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new RangeError(`passAtK: n, c, k must be integers, got ${n}, ${c}, ${k}`);
  if (n < 1 || c < 0 || c > n) throw new RangeError(`passAtK: need n >= 1 and 0 <= c <= n, got n = ${n}, c = ${c}`);
  if (k < 1 || k > n) throw new RangeError(`passAtK: need 1 <= k <= n, got k = ${k}, n = ${n}`);
  if (n - c < k) return 1; // every k-subset holds a correct sample
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

/** Mean pass@k over prompts, each with n samples; `correct[p]` is prompt p's number of correct samples. */
export function meanPassAtK(correct: ArrayLike<number>, n: number, k: number): number {
  if (correct.length === 0) throw new RangeError('meanPassAtK: no prompts');
  let s = 0;
  for (let p = 0; p < correct.length; p++) s += passAtK(n, correct[p], k);
  return s / correct.length;
}

interface Shape {
  N: number;
  L: number;
  G: number;
  B: number;
  rewards: Float64Array;
  /** (N,L) 0/1 */
  mask: Uint8Array;
}

function checkGroups(N: number, G: number): void {
  if (!Number.isInteger(G) || G < 1) throw new RangeError(`groupSize must be a positive integer, got ${G}`);
  if (N === 0) throw new RangeError('no rewards: the batch is empty');
  if (N % G !== 0) throw new RangeError(`groupSize ${G} does not divide the ${N} rewards (N = B*G)`);
}

function shapeOf(input: AdvantageInput): Shape {
  const N = input.rewards.length;
  checkGroups(N, input.groupSize);
  if (input.mask.length % N !== 0)
    throw new RangeError(`mask has ${input.mask.length} entries, not a multiple of N = ${N} rows`);
  const L = input.mask.length / N;
  return {
    N,
    L,
    G: input.groupSize,
    B: N / input.groupSize,
    rewards: finite(input.rewards, 'rewards'),
    mask: binaryMask(input.mask),
  };
}

function binaryMask(mask: ArrayLike<number>): Uint8Array {
  const m = new Uint8Array(mask.length);
  for (let k = 0; k < mask.length; k++) {
    if (mask[k] !== 0 && mask[k] !== 1) throw new RangeError(`mask[${k}] = ${mask[k]}: the mask is 0/1`);
    m[k] = mask[k];
  }
  return m;
}

/** A float64 copy, refusing NaN and infinities with the index (one bad reward would poison every advantage). */
function finite(x: ArrayLike<number>, name: string): Float64Array {
  const out = Float64Array.from(x);
  for (let k = 0; k < out.length; k++)
    if (!Number.isFinite(out[k])) throw new RangeError(`${name}[${k}] is ${out[k]}, not a finite number`);
  return out;
}

/** The mean (0 for no values). */
export function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < x.length; k++) s += x[k];
  return x.length ? s / x.length : 0;
}

/** Unbiased std of x[from..to) (all of x by default); 0 for fewer than 2 entries. Two-pass, so equal values give exactly 0. */
export function unbiasedStd(x: ArrayLike<number>, from = 0, to = x.length): number {
  const n = to - from;
  if (n < 2) return 0;
  let s = 0;
  for (let k = from; k < to; k++) s += x[k];
  const m = s / n;
  let v = 0;
  for (let k = from; k < to; k++) v += (x[k] - m) ** 2;
  return Math.sqrt(v / (n - 1));
}

function groupMoments(r: Float64Array, G: number): { sum: Float64Array; mean: Float64Array; std: Float64Array } {
  const B = r.length / G;
  const sum = new Float64Array(B);
  const m = new Float64Array(B);
  const std = new Float64Array(B);
  for (let g = 0; g < B; g++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = g * G; i < (g + 1) * G; i++) {
      sum[g] += r[i];
      lo = Math.min(lo, r[i]);
      hi = Math.max(hi, r[i]);
    }
    // An all-equal group gets its mean exactly (a float sum / G can miss by an ulp), so r - mean is exactly 0.
    m[g] = lo === hi ? lo : sum[g] / G;
    std[g] = lo === hi ? 0 : unbiasedStd(r, g * G, (g + 1) * G);
  }
  return { sum, mean: m, std };
}

/** A_{i,t} = a_i m_{i,t}. */
function broadcast(a: ArrayLike<number>, s: Shape): Float32Array {
  const out = new Float32Array(s.N * s.L);
  for (let i = 0; i < s.N; i++) for (let t = 0; t < s.L; t++) out[i * s.L + t] = s.mask[i * s.L + t] ? a[i] : 0;
  return out;
}

function rowLengths(s: Shape): Float64Array {
  const len = new Float64Array(s.N);
  for (let i = 0; i < s.N; i++) for (let t = 0; t < s.L; t++) len[i] += s.mask[i * s.L + t];
  return len;
}

/** rho_{i,t} = -beta k1_{i,t} on valid tokens, plus seqReward[i] at row i's last valid token; 0 elsewhere. */
function tokenRewards(
  s: Shape,
  k1: ArrayLike<number> | undefined,
  beta: number,
  seqReward: ArrayLike<number>,
): Float64Array {
  if (!Number.isFinite(beta) || beta < 0) throw new RangeError(`beta must be a finite number >= 0, got ${beta}`);
  if (beta > 0) {
    if (!k1)
      throw new RangeError(
        'beta > 0 puts -beta * k1 in the token rewards: pass k1 (log pi_old - log pi_ref per token)',
      );
    if (k1.length !== s.N * s.L) throw new RangeError(`k1 has ${k1.length} entries, expected N*L = ${s.N * s.L}`);
  }
  const kl = beta > 0 && k1 ? finite(k1, 'k1') : null;
  const rho = new Float64Array(s.N * s.L);
  for (let i = 0; i < s.N; i++) {
    let last = -1;
    for (let t = 0; t < s.L; t++) {
      const k = i * s.L + t;
      if (!s.mask[k]) continue;
      if (kl) rho[k] = -beta * kl[k];
      last = k;
    }
    if (last >= 0) rho[last] += seqReward[i];
  }
  return rho;
}

/** R_{i,t} = sum_{s >= t, m_{i,s} = 1} rho_{i,s} on valid tokens; 0 elsewhere. */
function suffixReturns(rho: Float64Array, s: Shape): Float64Array {
  const R = new Float64Array(s.N * s.L);
  for (let i = 0; i < s.N; i++) {
    let run = 0;
    for (let t = s.L - 1; t >= 0; t--) {
      const k = i * s.L + t;
      if (!s.mask[k]) continue;
      run += rho[k];
      R[k] = run;
    }
  }
  return R;
}

function whitenInPlace(x: Float64Array, mask: Uint8Array): Float64Array {
  let n = 0;
  let sum = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = 0; k < x.length; k++) {
    if (mask[k]) {
      n++;
      sum += x[k];
      lo = Math.min(lo, x[k]);
      hi = Math.max(hi, x[k]);
    }
  }
  // All valid values equal (or none): the whitened values are exactly 0, not an ulp of rounding times 1e4.
  const m = n === 0 ? 0 : lo === hi ? lo : sum / n;
  let v = 0;
  for (let k = 0; k < x.length; k++) if (mask[k]) v += (x[k] - m) ** 2;
  const variance = n > 1 ? v / (n - 1) : 0;
  const inv = 1 / Math.sqrt(variance + WHITEN_VAR_EPS);
  for (let k = 0; k < x.length; k++) x[k] = mask[k] ? (x[k] - m) * inv : 0;
  return x;
}

function toF32(x: Float64Array): Float32Array {
  return Float32Array.from(x);
}
