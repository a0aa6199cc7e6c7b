// CPU twin of shaders/objective.wgsl: the unified RL objective (docs/algorithms.md#policy-losses) over N sequences
// padded to L tokens: the scalar loss, its gradients with respect to the per-token log-probabilities and entropies,
// the per-token records the inspector shows, and the objective's metrics. It is also the precise definition the GPU
// follows. Not the advantage estimators, the KL-in-reward shaping, the value loss or the log-prob backward.
//
// Definitions, per token (i, t) with m = mask (0/1), n_i = sum_t m, M = sum_i n_i, d = logp - oldLogp:
//   ratio r:  token: rho = exp(d);  sequence (GSPO): s_i = exp(sum_t m d / n_i);  gmpo: g_i (below).
//   ppo_clip: l = -min(min(r, delta) A, clip(r, 1 - eps_low, 1 + eps_high) A); dual clip (A < 0): l = min(l, -c A).
//             clip side -1: r < 1 - eps_low and A < 0; +1: r > 1 + eps_high and A > 0 (the clipped branch is active).
//   cispo:    l = -sg(min(r, eps_max)) A logp, gradient -min(r, eps_max) A; side +1 where r > eps_max.
//   pg:       l = -A logp (REINFORCE; no ratio, so num_iterations > 1 is uncorrected), gradient -A; side 0.
//   sapo:     l = -A * 4 sigmoid(tau (r - 1)) / tau, tau = tau_pos where A > 0 else tau_neg; side 0.
//   dppo_tv, dppo_kl (DPPO, verl): l = -A sg(min(rho_c, C)) logp v, gradient -A min(rho_c, C) v, with rho_c =
//             exp(clamp(d, -20, 20)), C = clip_ratio_c (null: 20) and v = dppoValid (the divergence mask); side +1
//             (A > 0) or -1 where v = 0.
//   vespo:    (TRL) l = -sg(phi) A logp, gradient -phi A, phi = vespoWeight of the row's summed log-ratio; the ratio
//             record is w; side 0. A token rollout correction (token_truncate, token_mask, tis_cap) adds each token's
//             clamp(log c, log 1e-8, 20) to that sum (vespoLogCorrection) and does not multiply the loss (TRL's form).
//   dro:      (verl) l = -(A logp - dro_beta d^2 / 2), gradient -A + dro_beta d; side 0.
//   prime_dppo: (prime-rl's default loss) e = logp - b, b = samplerLogp (oldLogp without it), rho_b = exp(e);
//             l = -adv_tau A min(rho_b, delta) v + kl_tau e^2, gradient -adv_tau A rho_b [rho_b < delta] v +
//             2 kl_tau e, v = primeDppoValid (DPPO's total-variation mask against b); side +1 (A > 0) or -1 where v = 0.
//   gmpo:     (verl's geo_mean) dc = clamp(d, -20, 20); e = clamp(dc, -gmpo_clip, gmpo_clip); dmin = min(dc, e)
//             where A > 0, max(dc, e) where A < 0, 0 where A = 0; g_i = exp(sum_t m dmin / n_i); l = -A g_i.
//             Side +1 (A > 0, dc > gmpo_clip) or -1 (A < 0, dc < -gmpo_clip): those tokens pass no gradient.
//   selection (policy loss only; the KL and entropy terms and the aggregation weights keep every masked token):
//     top_entropy_quantile q: keep the k = n - ceil((1 - q)(n - 1)) highest entropies of the batch (n = M; TRL's
//       torch.quantile threshold at 1 - q); ties at the threshold are all kept.
//     clip_cov: candidates are masked, unclipped tokens with clip_cov_lb < cov < clip_cov_ub, where
//       cov = (A - mean A)(logp - mean logp) over the masked tokens; the k = max(floor(ratio * M), 1) largest are
//       detached (their policy loss and its gradient become 0). verl draws k of its candidates at random; this
//       lab takes the largest, so the GPU and the twin agree. Ties at the threshold are all taken.
//     kl_cov: the k largest cov among masked tokens get + kl_cov_coef * |d| added to their policy loss (on top
//       of ppo_clip; verl's kl_cov mode has no clip).
//   rollout correction (rolloutCorrectionOf: tis_cap C is token_truncate with C_max = C, no C_min): a constant
//     weight c per token multiplies the policy loss. x_t = oldLogp - samplerLogp; X_i = sum_t m x_t; every log
//     weight is capped at 20 above before exp (verl's bound; no f32 overflow). token_*: w = exp(x_t);
//     sequence_*: w = exp(X_i) on every token of row i; *_truncate: c = clamp(w, C_min, C_max) (truncated when w
//     lies outside); *_mask: c = w inside [C_min, C_max], else 0 (masked); sequence_geo_mask (OpenRLHF seq-mask-tis):
//     c = exp(x_t) when exp(X_i / n_i) lies inside, else 0. A missing bound does not bound.
//   off-policy mask (off_policy_mask_threshold delta; TRL / DeepSeek-V3.2): D_i = (1/n_i) sum_t m (b_t - logp_t)
//     with b = samplerLogp (oldLogp without it); a token's policy loss is dropped where A < 0 and D_i > delta.
//     Neither factor passes a gradient (both are constants of the step).
//   KL (u = logp - refLogp): k1 = u; k2 = u^2/2; k3 = exp(-u) - 1 + u; low_var_kl = clamp(k3, -10, 10); exact =
//     the klExact input; k1+, k3+, low_var_kl+ (straight-through): the value of k1, k3, low_var_kl, the gradient
//     d k / d logp = u (k2's). use_bias_correction_kl (DeepSeek-V3.2): k <- q k with q = rho (token level) or s_i
//     (importance_sampling_level 'sequence'), differentiated through q as well: d(q k) = k dq + q dk.
//     With kl_placement 'in_loss' the loss gets + beta k per token. The exact KL's gradient is
//     NOT in dLogp: the caller backpropagates d loss / d klExact = beta * weight (records plane 4) through its
//     full-vocabulary KL kernel.
//   entropy bonus: + (-entropy_coef) H per token; dEntropy = -entropy_coef * weight.
//   aggregation weight w_{i,t} (times m): token-mean 1/M; seq-mean-token-mean 1/(N n_i); seq-mean-token-sum 1/N;
//     seq-mean-token-sum-norm 1/(N L), with L_max = L, the padded length of the batch as given.
//   loss = sum_{i,t} w m (policy + beta k - alpha H); gradients flow through r (and logp itself for CISPO):
//     d r / d logp_t = rho_t (token);  d s_i / d logp_t = s_i m_t / n_i (sequence);  d g_i / d logp_t =
//     g_i m_t [dmin_t unclipped] / n_i (gmpo).
// Per-token selection uses f32 arithmetic in the GPU's summation order, so the twin and the GPU select the same
// tokens; everything else is computed in double precision.

import {
  DEFAULT_OBJECTIVE_CONFIG,
  KL_STRAIGHT_THROUGH,
  dppoCap,
  epsilonHigh,
  isStraightThroughKl,
  lossKlCoef,
  rolloutCorrectionOf,
  rolloutCorrectionWeight,
  type ObjectiveConfig,
  type RolloutCorrection,
} from '../schema/objective';

export { LOG_WEIGHT_CAP, rolloutCorrectionWeight } from '../schema/objective';
import { floatKey } from './sampler';
import { host, numel, type HostTensor } from '../core/host-tensor';

/** Index -> name of the metrics output (K = OBJECTIVE_METRICS.length). Means are over masked tokens (M). */
export const OBJECTIVE_METRICS = [
  'policy_loss', //                              0: the aggregated policy part of the loss (no KL, no entropy bonus)
  'clip_ratio/low_mean', //                      1: fraction with clip side -1
  'clip_ratio/high_mean', //                     2: fraction with clip side +1
  'clip_ratio/region_mean', //                   3: low + high
  'cispo_clip_ratio', //                         4: cispo only: fraction with r > eps_max
  'kl', //                                       5: mean KL estimate by kl_estimator (0 without refLogp / klExact)
  'kl/exact', //                                 6: mean klExact (0 without it)
  'entropy', //                                  7: mean H
  'approx_kl', //                                8: mean (rho - 1) - log rho: k3 estimate of KL(pi_old || pi_theta)
  'sampling/sampling_logp_difference/mean', //   9: mean |oldLogp - samplerLogp| (0 without samplerLogp)
  'sampling/sampling_logp_difference/max', //   10: max |oldLogp - samplerLogp| (0 without samplerLogp)
  'token_selection/entropy_kept_frac', //       11: fraction kept by top_entropy_quantile (1 when off)
  'token_selection/cov_selected_frac', //       12: fraction picked by clip_cov / kl_cov (0 when off)
  'clip_ratio/low_min', //                      13: min over sequences with n_i > 0 of their clip side -1 fraction (0 when none)
  'clip_ratio/high_max', //                     14: max over sequences with n_i > 0 of their clip side +1 fraction (0 when none)
  // Rollout correction and the off-policy mask (the weight's mean is 1 when off, the fractions 0).
  'sampling/importance_sampling_ratio/mean', // 15: mean rollout correction weight c (after truncation or masking)
  'rollout_correction/truncated_frac', //       16: fraction whose w was outside [C_min, C_max] and truncated
  'rollout_correction/masked_frac', //          17: fraction whose correction weight was masked to 0
  'off_policy_mask/masked_frac', //             18: fraction dropped by the off-policy sequence mask
] as const;

export type ObjectiveMetricName = (typeof OBJECTIVE_METRICS)[number];

/** Planes of the (R, N, L) records output. Zero at masked-out tokens. */
export const OBJECTIVE_RECORDS = [
  'ratio', //        0: the ratio that enters the token's loss: rho (token), s_i (sequence), g_i (gmpo)
  'clip_side', //    1: -1 low, +1 high, 0 none (see the header per loss type)
  'kl', //           2: the KL estimate k (0 without a KL input)
  'contribution', // 3: w m (policy + beta k - alpha H): the records sum to the loss
  'weight', //       4: the aggregation weight w m
] as const;

/**
 * The minibatch's totals when a call covers one micro-batch of it (gradient accumulation): the aggregation weights
 * use the minibatch's masked tokens M and rows N instead of the call's own, so the micro-batches' losses and
 * gradients add up to the minibatch's; the token-mean metrics are divided by `tokens` too (each call gives its
 * share, and the shares add up to the minibatch's mean); the max / min metrics stay the call's own. The batch-level
 * token selections (top_entropy_quantile, clip_cov, kl_cov) are refused with totals: their threshold is over the
 * whole minibatch, which one call does not see.
 */
export interface AggregationTotals {
  /** Rows (sequences) of the whole minibatch: N of the seq-mean aggregations. */
  rows: number;
  /** Masked tokens of the whole minibatch: M of token-mean and of the metrics' means. */
  tokens: number;
}

/** Checks totals against the call's own rows and masked tokens (shared with the GPU wrapper). */
export function checkAggregationTotals(kernel: string, plan: ObjectivePlan, totals: AggregationTotals): void {
  const { rows, tokens } = totals;
  if (!(Number.isInteger(rows) && rows >= plan.N))
    throw new Error(`${kernel}: totals.rows must be an integer >= the call's N = ${plan.N}, got ${rows}`);
  if (!(Number.isInteger(tokens) && tokens >= 0 && tokens < 2 ** 24))
    throw new Error(`${kernel}: totals.tokens must be an integer in [0, 2^24), got ${tokens}`);
  if (plan.selectEntropy || plan.clipCov || plan.klCov)
    throw new Error(
      `${kernel}: totals (a micro-batch of a minibatch) cannot be combined with a batch-level token selection (top_entropy_quantile, clip_cov, kl_cov)`,
    );
}

/** Per-token inputs, each (N, L). */
export interface ObjectiveInputs<T = HostTensor> {
  /** log pi_theta of the sampled token (the trainer's forward). */
  logp: T;
  /** log pi_old (the policy that sampled, recomputed by the trainer). */
  oldLogp: T;
  /** A_{i,t} (broadcast over t by the advantage code where it is per sequence). */
  advantages: T;
  /** m_{i,t}: 1 for completion tokens that count, 0 for padding and masked tokens. */
  mask: T;
  /** Full-vocabulary entropy H_t of pi_theta. */
  entropy: T;
  /** log pi_ref; needed for the KL estimators k1..low_var_kl (in the loss, or for the kl metric). */
  refLogp?: T;
  /** The sampler's log-prob of the token: for the TIS correction and the sampling/sampling_logp_difference metrics. */
  samplerLogp?: T;
  /** Per-token exact KL(pi_theta || pi_ref), computed elsewhere; needed for kl_estimator 'exact'. */
  klExact?: T;
}

/** What the inputs make available, as both implementations see it. */
export interface ObjectivePlan {
  cfg: ObjectiveConfig;
  N: number;
  L: number;
  /** beta applied in the loss (0 with kl_placement 'in_reward'). */
  beta: number;
  /** A KL estimate is computed (its input is present). */
  hasKl: boolean;
  hasSampler: boolean;
  hasKlExact: boolean;
  selectEntropy: boolean;
  clipCov: boolean;
  klCov: boolean;
  /** The rollout correction in effect (tis_cap or rollout_is_mode), or null. */
  correction: RolloutCorrection | null;
  /** off_policy_mask_threshold is set. */
  offPolicyMask: boolean;
}

/**
 * Checks the inputs' shapes against logp (N, L) and that the inputs the config needs are present; returns
 * the plan both implementations follow. `shapeOf` reads a shape from either a host or a GPU tensor.
 */
export function objectivePlan<T>(
  kernel: string,
  inputs: ObjectiveInputs<T>,
  cfg: ObjectiveConfig,
  shapeOf: (t: T) => readonly number[],
): ObjectivePlan {
  const shape = shapeOf(inputs.logp);
  if (shape.length !== 2) throw new Error(`${kernel}: logp must be (N, L), got (${shape.join(', ')})`);
  const [N, L] = shape;
  if (!(N >= 1 && L >= 1)) throw new Error(`${kernel}: empty batch (N=${N}, L=${L})`);
  for (const [name, t] of Object.entries(inputs) as [string, T | undefined][]) {
    if (t === undefined) continue;
    const s = shapeOf(t);
    if (s.length !== 2 || s[0] !== N || s[1] !== L)
      throw new Error(`${kernel}: ${name} must be (N, L) = (${N}, ${L}) like logp, got (${s.join(', ')})`);
  }
  const beta = lossKlCoef(cfg);
  const exact = cfg.kl_estimator === 'exact';
  const hasKl = exact ? inputs.klExact !== undefined : inputs.refLogp !== undefined;
  if (beta > 0 && !hasKl) {
    throw new Error(
      `${kernel}: beta = ${beta} with kl_estimator '${cfg.kl_estimator}' in the loss needs ${exact ? 'klExact' : 'refLogp'}`,
    );
  }
  const correction = rolloutCorrectionOf(cfg);
  if (correction && inputs.samplerLogp === undefined) {
    const knob = cfg.tis_cap !== null ? 'tis_cap' : `rollout_is_mode '${correction.mode}'`;
    throw new Error(`${kernel}: ${knob} needs samplerLogp`);
  }
  return {
    cfg,
    N,
    L,
    beta,
    hasKl,
    hasSampler: inputs.samplerLogp !== undefined,
    hasKlExact: inputs.klExact !== undefined,
    selectEntropy: cfg.top_entropy_quantile < 1,
    clipCov: cfg.clip_cov_ratio > 0,
    klCov: cfg.kl_cov_ratio > 0,
    correction,
    offPolicyMask: cfg.off_policy_mask_threshold !== null,
  };
}

const f = Math.fround;

/** Workgroup size of the GPU's selection pass; the twin sums in its order. */
export const SELECT_WG = 256;

/** Sum over masked tokens in f32, in the GPU selection pass's order: thread-strided partials, then a tree. */
function selectionSum(n: number, masked: (i: number) => boolean, get: (i: number) => number): number {
  const part = new Float32Array(SELECT_WG);
  for (let lid = 0; lid < SELECT_WG; lid++) {
    let s = 0;
    for (let i = lid; i < n; i += SELECT_WG) if (masked(i)) s = f(s + get(i));
    part[lid] = s;
  }
  for (let stride = SELECT_WG / 2; stride > 0; stride >>= 1) {
    for (let lid = 0; lid < stride; lid++) part[lid] = part[lid] + part[lid + stride];
  }
  return part[0];
}

/** The key of the k-th largest of `keys` (k >= 1): the largest K with #{key >= K} >= k, as the GPU's bitwise search finds. */
function kthLargestKey(keys: Uint32Array, k: number): number {
  const sorted = Uint32Array.from(keys).sort();
  return sorted[sorted.length - k];
}

/** ppo_clip's clip side of a ratio (shared by the selection and the loss). */
function ppoSide(r: number, A: number, cfg: ObjectiveConfig): number {
  if (r < 1 - cfg.epsilon && A < 0) return -1;
  if (r > 1 + epsilonHigh(cfg) && A > 0) return 1;
  return 0;
}

/** Token selection flags per token: bit 0 kept by top_entropy_quantile, bit 1 picked by clip_cov / kl_cov. */
export interface ObjectiveSelection {
  /** Masked tokens in the batch (M). */
  count: number;
  /** Bit 0: kept (always set for masked tokens when top_entropy_quantile is off); bit 1: cov-selected. */
  flags: Uint8Array;
}

/** The batch-level token selection, computed exactly as the GPU's objective_select pass does (f32). */
export function objectiveSelection(inputs: ObjectiveInputs, plan: ObjectivePlan): ObjectiveSelection {
  const { cfg, N, L } = plan;
  const NL = N * L;
  const m = inputs.mask.data;
  const masked = (i: number) => m[i] > 0;
  let n = 0;
  for (let i = 0; i < NL; i++) if (masked(i)) n++;
  const flags = new Uint8Array(NL);
  if (!plan.selectEntropy) for (let i = 0; i < NL; i++) if (masked(i)) flags[i] = 1;
  if (n === 0) return { count: 0, flags };
  if (plan.selectEntropy) {
    const H = inputs.entropy.data;
    const keys = new Uint32Array(NL);
    for (let i = 0; i < NL; i++) keys[i] = masked(i) ? floatKey(H[i]) : 0;
    const k = n - Math.ceil(f(f(1 - cfg.top_entropy_quantile) * (n - 1)));
    const K = kthLargestKey(keys, k);
    for (let i = 0; i < NL; i++) if (masked(i) && keys[i] >= K) flags[i] |= 1;
  }
  if (plan.clipCov || plan.klCov) {
    const A = inputs.advantages.data;
    const lp = inputs.logp.data;
    const old = inputs.oldLogp.data;
    const meanA = f(selectionSum(NL, masked, (i) => f(A[i])) / n);
    const meanLp = f(selectionSum(NL, masked, (i) => f(lp[i])) / n);
    const keys = new Uint32Array(NL);
    for (let i = 0; i < NL; i++) {
      if (!masked(i)) continue;
      const cov = f(f(f(A[i]) - meanA) * f(f(lp[i]) - meanLp));
      if (plan.clipCov) {
        const r = Math.exp(f(lp[i]) - f(old[i]));
        if (ppoSide(r, A[i], cfg) !== 0) continue; // already clipped: not a candidate
        if (!(cov > f(cfg.clip_cov_lb) && cov < f(cfg.clip_cov_ub))) continue;
      }
      keys[i] = floatKey(cov);
    }
    const frac = plan.clipCov ? cfg.clip_cov_ratio : cfg.kl_cov_ratio;
    const k = Math.max(Math.floor(f(f(frac) * n)), 1);
    const K = kthLargestKey(keys, k);
    for (let i = 0; i < NL; i++) if (keys[i] !== 0 && keys[i] >= K) flags[i] |= 2;
  }
  return { count: n, flags };
}

/** e^x - 1 - x without cancellation. */
export function expm1MinusX(x: number): number {
  return Math.expm1(x) - x;
}

/** KL estimate k and dk/du at u = logp - refLogp; a straight-through estimator (k3+, ...) returns its value with k2's gradient u. */
export function klEstimate(est: ObjectiveConfig['kl_estimator'], u: number): [number, number] {
  if (isStraightThroughKl(est)) return [klEstimate(KL_STRAIGHT_THROUGH[est], u)[0], u];
  switch (est) {
    case 'k1':
      return [u, 1];
    case 'k2':
      return [(u * u) / 2, u];
    case 'k3':
      return [expm1MinusX(-u), -Math.expm1(-u)];
    case 'low_var_kl': {
      const k3 = expm1MinusX(-u);
      return [Math.min(Math.max(k3, -10), 10), k3 < 10 && k3 > -10 ? -Math.expm1(-u) : 0];
    }
    case 'exact':
      return [0, 0]; // the input is used instead
  }
}

function checkOutputs(kernel: string, N: number, L: number, outs: [HostTensor, string, number][]): void {
  for (const [t, name, size] of outs) {
    if (t.data.length !== size)
      throw new Error(`${kernel}: ${name} has ${t.data.length} elements, want ${size} (N=${N}, L=${L})`);
  }
}

/** What objectiveForwardBackward writes, as f64 arrays: the loss, d loss / d logp and d entropy, records, metrics. */
export interface ObjectiveOutputs {
  loss: number;
  dLogp: Float64Array;
  dEntropy: Float64Array;
  /** (5, N, L) OBJECTIVE_RECORDS planes. */
  records: Float64Array;
  /** OBJECTIVE_METRICS values, in that order. */
  metrics: Float64Array;
}

/** objectiveForwardBackward over f64 outputs it allocates: one call for a check that wants the numbers. */
export function objectiveOutputs(
  inputs: ObjectiveInputs,
  config: ObjectiveConfig = DEFAULT_OBJECTIVE_CONFIG,
): ObjectiveOutputs {
  const [N, L] = inputs.logp.shape;
  const out = (shape: number[]) => host(new Float64Array(numel(shape)), shape);
  const [loss, dLogp, dEntropy, records, metrics] = [
    out([1]),
    out([N, L]),
    out([N, L]),
    out([OBJECTIVE_RECORDS.length, N, L]),
    out([OBJECTIVE_METRICS.length]),
  ];
  objectiveForwardBackward(loss, dLogp, dEntropy, records, metrics, inputs, config);
  return {
    loss: loss.data[0],
    dLogp: dLogp.data,
    dEntropy: dEntropy.data,
    records: records.data,
    metrics: metrics.data,
  };
}

/**
 * The unified objective: loss, gradients, per-token records and metrics (see the file header for every formula).
 * @param loss     (1) overwritten with the aggregated scalar loss.
 * @param dLogp    (N, L) overwritten: d loss / d logp (policy and KL terms; not the exact KL's, see header).
 * @param dEntropy (N, L) overwritten: d loss / d entropy (the entropy bonus).
 * @param records  (5, N, L) overwritten: OBJECTIVE_RECORDS planes (ratio, clip side, kl, contribution, weight).
 * @param metrics  (K) overwritten: OBJECTIVE_METRICS values.
 * @param inputs   per-token (N, L) inputs; mask must be 0/1.
 * @param config   objective knobs, complete and valid (an RL config, or resolveObjectiveConfig's result).
 * @param totals   the minibatch's rows and masked tokens when these inputs are one micro-batch of it.
 */
export function objectiveForwardBackward(
  loss: HostTensor,
  dLogp: HostTensor,
  dEntropy: HostTensor,
  records: HostTensor,
  metrics: HostTensor,
  inputs: ObjectiveInputs,
  config: ObjectiveConfig = DEFAULT_OBJECTIVE_CONFIG,
  totals?: AggregationTotals,
): void {
  const kernel = 'objectiveForwardBackward';
  const plan = objectivePlan(kernel, inputs, config, (t) => t.shape);
  if (totals) checkAggregationTotals(kernel, plan, totals);
  const { cfg, N: rows, L, beta } = plan;
  // N and M of the aggregation: the minibatch's under gradient accumulation, else this call's.
  const N = totals ? totals.rows : rows;
  const NL = rows * L;
  checkOutputs(kernel, rows, L, [
    [loss, 'loss', 1],
    [dLogp, 'dLogp', NL],
    [dEntropy, 'dEntropy', NL],
    [records, 'records', OBJECTIVE_RECORDS.length * NL],
    [metrics, 'metrics', OBJECTIVE_METRICS.length],
  ]);
  const lp = inputs.logp.data;
  const old = inputs.oldLogp.data;
  const adv = inputs.advantages.data;
  const mask = inputs.mask.data;
  const H = inputs.entropy.data;
  const ref = inputs.refLogp?.data;
  const smp = inputs.samplerLogp?.data;
  const klx = inputs.klExact?.data;
  for (let i = 0; i < NL; i++) {
    if (mask[i] !== 0 && mask[i] !== 1) throw new Error(`${kernel}: mask must be 0 or 1, got ${mask[i]} at ${i}`);
  }
  const sel = objectiveSelection(inputs, plan);
  const M = totals ? totals.tokens : sel.count;
  const alpha = cfg.entropy_coef;
  const gmpo = cfg.loss_type === 'gmpo';
  const vespo = cfg.loss_type === 'vespo';
  const seqLevel = cfg.importance_sampling_level === 'sequence';
  // Gradient through a per-sequence ratio (s_i or g_i), summed over the row before it reaches the tokens.
  const seqGrad = gmpo || (seqLevel && cfg.loss_type !== 'cispo' && cfg.loss_type !== 'pg');

  const acc = {
    loss: 0,
    policy: 0,
    low: 0,
    high: 0,
    cispo: 0,
    kl: 0,
    klx: 0,
    ent: 0,
    approx: 0,
    diff: 0,
    diffMax: 0,
    kept: 0,
    cov: 0,
    isWeight: 0,
    truncated: 0,
    isMasked: 0,
    offMasked: 0,
  };
  // Per-sequence clip fractions (TRL's low_min / high_max are over processes; here over the batch's sequences).
  let lowMin = Infinity;
  let highMax = 0;
  const rec = records.data;
  const R = (plane: number, idx: number) => plane * NL + idx;
  rec.fill(0);
  dLogp.data.fill(0);
  dEntropy.data.fill(0);
  const gRow = new Float64Array(L);

  for (let i = 0; i < rows; i++) {
    const o = i * L;
    let n = 0;
    let sumD = 0;
    let sumIs = 0; // X_i: the row's summed log rollout weight
    let sumOff = 0; // n_i D_i: the off-policy mask's summed log(pi_sampler / pi_theta)
    let sumVespo = 0; // vespo: the row's summed, clamped log-ratio
    for (let t = 0; t < L; t++) {
      const idx = o + t;
      if (!mask[idx]) continue;
      n++;
      const d = lp[idx] - old[idx];
      sumD += gmpo ? gmpoToken(d, adv[idx], cfg).dmin : d;
      if (smp) sumIs += old[idx] - smp[idx];
      sumOff += (smp ? smp[idx] : old[idx]) - lp[idx];
      if (vespo) sumVespo += Math.min(Math.max(d, -20), 20);
      // TRL's vespo takes the token rollout correction's weight into its sequence weight (log space), not the loss.
      if (vespo && plan.correction) sumVespo += vespoLogCorrection(plan.correction, old[idx] - smp![idx]);
    }
    const offDrop = plan.offPolicyMask && n > 0 && sumOff / n > cfg.off_policy_mask_threshold!;
    const rSeq = n > 0 ? Math.exp(sumD / n) : 1;
    const logWVespo = vespo ? Math.min(Math.max(sumVespo, Math.log(1e-8)), 20) : 0;
    let w: number;
    switch (cfg.loss_agg_mode) {
      case 'token-mean':
        w = M > 0 ? 1 / M : 0;
        break;
      case 'seq-mean-token-mean':
        w = n > 0 ? 1 / (N * n) : 0;
        break;
      case 'seq-mean-token-sum':
        w = 1 / N;
        break;
      case 'seq-mean-token-sum-norm':
        w = 1 / (N * L);
        break;
    }
    let S = 0;
    let sKl = 0; // the row's d loss / d s_i through the corrected KL (use_bias_correction_kl at sequence level)
    let rowLow = 0;
    let rowHigh = 0;
    gRow.fill(0);
    for (let t = 0; t < L; t++) {
      const idx = o + t;
      if (!mask[idx]) continue;
      const A = adv[idx];
      const d = lp[idx] - old[idx];
      const rho = Math.exp(d);
      const r = gmpo || seqLevel ? rSeq : rho;
      let l = 0;
      let gr = 0; // d l / d r
      let gdir = 0; // d l / d logp through logp itself (CISPO)
      let side = 0;
      switch (cfg.loss_type) {
        case 'ppo_clip': {
          const lo = 1 - cfg.epsilon;
          const hi = 1 + epsilonHigh(cfg);
          const rc = cfg.delta !== null ? Math.min(r, cfg.delta) : r;
          const u1 = rc * A;
          const u2 = Math.min(Math.max(r, lo), hi) * A;
          if (u1 <= u2) {
            l = -u1;
            gr = cfg.delta === null || r < cfg.delta ? -A : 0;
          } else {
            l = -u2;
            gr = r > lo && r < hi ? -A : 0;
          }
          if (cfg.clip_ratio_c !== null && A < 0 && l > -cfg.clip_ratio_c * A) {
            l = -cfg.clip_ratio_c * A;
            gr = 0;
          }
          side = ppoSide(r, A, cfg);
          break;
        }
        case 'cispo': {
          const wgt = Math.min(r, cfg.eps_max);
          l = -wgt * A * lp[idx];
          gdir = -wgt * A;
          if (r > cfg.eps_max) {
            side = 1;
            acc.cispo++;
          }
          break;
        }
        case 'sapo': {
          const tau = A > 0 ? cfg.tau_pos : cfg.tau_neg;
          const s = 1 / (1 + Math.exp(-tau * (r - 1)));
          l = (-A * 4 * s) / tau;
          gr = -A * 4 * s * (1 - s);
          break;
        }
        case 'pg':
          l = -A * lp[idx];
          gdir = -A;
          break;
        case 'gmpo':
          l = -A * r;
          side = gmpoToken(d, A, cfg).side;
          break;
        case 'dppo_tv':
        case 'dppo_kl': {
          const valid = dppoValid(cfg, lp[idx], old[idx], A);
          const wgt = Math.min(Math.exp(Math.min(Math.max(d, -20), 20)), dppoCap(cfg));
          l = -A * wgt * lp[idx] * valid;
          gdir = -A * wgt * valid;
          if (!valid) side = A > 0 ? 1 : -1;
          break;
        }
        case 'vespo': {
          const phi = vespoWeight(cfg, logWVespo, A);
          l = -phi * A * lp[idx];
          gdir = -phi * A;
          break;
        }
        case 'prime_dppo': {
          const tok = primeDppoToken(cfg, lp[idx], smp ? smp[idx] : old[idx], A);
          l = tok.l;
          gdir = tok.gdir;
          side = tok.side;
          break;
        }
        case 'dro': {
          const beta = cfg.dro_beta!;
          l = -(lp[idx] * A - 0.5 * beta * d * d);
          gdir = -A + beta * d;
          break;
        }
      }
      const flags = sel.flags[idx];
      const keep = flags & 1;
      const picked = (flags >> 1) & 1;
      const det = plan.clipCov ? picked : 0;
      const klSel = plan.klCov ? picked : 0;
      const corr = plan.correction
        ? rolloutCorrectionWeight(plan.correction, old[idx] - smp![idx], sumIs, n)
        : { c: 1, truncated: false, masked: false };
      const offKeep = offDrop && A < 0 ? 0 : 1;
      const c = (vespo ? 1 : corr.c) * offKeep; // vespo: the weight is inside phi (sumVespo)
      const factor = c * keep * (1 - det);
      const lpg = factor * l + c * klSel * cfg.kl_cov_coef * Math.abs(d);
      let g = 0;
      if (gmpo) S += w * factor * -A;
      else if (seqGrad) S += w * factor * gr;
      else g = w * factor * (gr * r + gdir);
      g += w * c * klSel * cfg.kl_cov_coef * Math.sign(d);
      let k = 0;
      if (plan.hasKl) {
        if (cfg.kl_estimator === 'exact') {
          k = klx![idx];
        } else {
          const [kk, dk] = klEstimate(cfg.kl_estimator, lp[idx] - ref![idx]);
          if (cfg.use_bias_correction_kl) {
            // Unbiased KL: q k with q the ratio; q's gradient goes to the token (rho) or, summed, to the row (s_i).
            const q = seqLevel ? rSeq : rho;
            k = q * kk;
            g += w * beta * q * dk;
            if (seqLevel) sKl += w * beta * kk;
            else g += w * beta * kk * rho;
          } else {
            k = kk;
            g += w * beta * dk;
          }
        }
      }
      const contrib = w * (lpg + beta * k - alpha * H[idx]);
      gRow[t] = g;
      dEntropy.data[idx] = -alpha * w;
      rec[R(0, idx)] = vespo ? Math.exp(logWVespo) : r;
      rec[R(1, idx)] = side;
      rec[R(2, idx)] = k;
      rec[R(3, idx)] = contrib;
      rec[R(4, idx)] = w;
      acc.loss += contrib;
      acc.policy += w * lpg;
      if (side < 0 && cfg.loss_type !== 'cispo') rowLow++;
      if (side > 0 && cfg.loss_type !== 'cispo') rowHigh++;
      acc.kl += k;
      if (klx) acc.klx += klx[idx];
      acc.ent += H[idx];
      acc.approx += expm1MinusX(d);
      if (smp) {
        const diff = Math.abs(old[idx] - smp[idx]);
        acc.diff += diff;
        acc.diffMax = Math.max(acc.diffMax, diff);
      }
      acc.kept += keep;
      acc.cov += picked;
      acc.isWeight += corr.c;
      acc.truncated += corr.truncated ? 1 : 0;
      acc.isMasked += corr.masked ? 1 : 0;
      acc.offMasked += 1 - offKeep;
    }
    if (seqGrad && n > 0) {
      for (let t = 0; t < L; t++) {
        const idx = o + t;
        if (!mask[idx]) continue;
        const deriv = gmpo ? gmpoToken(lp[idx] - old[idx], adv[idx], cfg).deriv : 1;
        gRow[t] += (S * rSeq * deriv) / n;
      }
    }
    if (sKl !== 0 && n > 0) for (let t = 0; t < L; t++) if (mask[o + t]) gRow[t] += (sKl * rSeq) / n;
    for (let t = 0; t < L; t++) dLogp.data[o + t] = gRow[t];
    acc.low += rowLow;
    acc.high += rowHigh;
    if (n > 0) {
      lowMin = Math.min(lowMin, rowLow / n);
      highMax = Math.max(highMax, rowHigh / n);
    }
  }
  loss.data[0] = acc.loss;
  const mean = (x: number) => (M > 0 ? x / M : 0);
  const values: Record<ObjectiveMetricName, number> = {
    policy_loss: acc.policy,
    'clip_ratio/low_mean': mean(acc.low),
    'clip_ratio/high_mean': mean(acc.high),
    'clip_ratio/region_mean': mean(acc.low + acc.high),
    cispo_clip_ratio: mean(acc.cispo),
    kl: mean(acc.kl),
    'kl/exact': mean(acc.klx),
    entropy: mean(acc.ent),
    approx_kl: mean(acc.approx),
    'sampling/sampling_logp_difference/mean': mean(acc.diff),
    'sampling/sampling_logp_difference/max': acc.diffMax,
    'token_selection/entropy_kept_frac': mean(acc.kept),
    'token_selection/cov_selected_frac': mean(acc.cov),
    'clip_ratio/low_min': lowMin === Infinity ? 0 : lowMin,
    'clip_ratio/high_max': highMax,
    'sampling/importance_sampling_ratio/mean': mean(acc.isWeight),
    'rollout_correction/truncated_frac': mean(acc.truncated),
    'rollout_correction/masked_frac': mean(acc.isMasked),
    'off_policy_mask/masked_frac': mean(acc.offMasked),
  };
  OBJECTIVE_METRICS.forEach((name, j) => (metrics.data[j] = values[name]));
}

/**
 * DPPO's trust-region mask (verl's compute_policy_loss_dppo_tv / _kl), 1 where the token may move, 0 where its
 * probability already moved past the threshold in the direction A pushes it. p = e^logp, q = e^oldLogp:
 * dppo_tv: A > 0: p - q <= epsilon_high; else p - q >= -epsilon.
 * dppo_kl: b = q (log q - log p) + (1 - q) log((1 - q + 1e-8) / (1 - p + 1e-8)) (the binary KL);
 *          A > 0: b <= epsilon_high or p <= q; else b <= epsilon or p >= q.
 */
export function dppoValid(cfg: ObjectiveConfig, logp: number, oldLogp: number, A: number): 0 | 1 {
  const p = Math.exp(logp);
  const q = Math.exp(oldLogp);
  if (cfg.loss_type === 'dppo_tv') return (A > 0 ? p - q <= epsilonHigh(cfg) : p - q >= -cfg.epsilon) ? 1 : 0;
  const b = q * (oldLogp - logp) + (1 - q) * Math.log((1 - q + 1e-8) / (1 - p + 1e-8));
  return (A > 0 ? b <= epsilonHigh(cfg) || p <= q : b <= cfg.epsilon || p >= q) ? 1 : 0;
}

/**
 * TRL's token rollout correction inside VESPO's sequence weight (get_gamma_weights with importance_sampling_ratio):
 * the token's weight c (truncated or masked as rollout_is_mode says; 0 when masked) enters the row's summed log-ratio
 * as clamp(log c, log 1e-8, 20), instead of multiplying the token's loss.
 */
export function vespoLogCorrection(rc: RolloutCorrection, x: number): number {
  const c = rolloutCorrectionWeight(rc, x, 0, 0).c;
  return Math.min(Math.max(Math.log(Math.max(c, 1e-30)), Math.log(1e-8)), 20);
}

/**
 * prime-rl's default loss at one token (default_loss_fn: DPPO-Binary TV's mask and Kimi K2.5's squared log-ratio),
 * against the sampler's log-prob b: e = logp - b, rho_b = exp(e), p - q = exp(logp) - exp(b); the token is kept
 * unless p - q > epsilon_high where A > 0, or p - q < -epsilon elsewhere (prime-rl's dppo_mask_high / _low).
 * l = -adv_tau A min(rho_b, delta) [kept] + kl_tau e^2; gdir = d l / d logp; side +1 / -1 for a masked token.
 */
export function primeDppoToken(
  cfg: ObjectiveConfig,
  logp: number,
  samplerLogp: number,
  A: number,
): { l: number; gdir: number; side: number } {
  const e = logp - samplerLogp;
  const rho = Math.exp(e);
  const diff = Math.exp(logp) - Math.exp(samplerLogp);
  const masked = A > 0 ? diff > epsilonHigh(cfg) : diff < -cfg.epsilon;
  const keep = masked ? 0 : 1;
  const capped = cfg.delta !== null && rho >= cfg.delta;
  const w = cfg.delta !== null ? Math.min(rho, cfg.delta) : rho;
  return {
    l: -cfg.adv_tau * A * w * keep + cfg.kl_tau * e * e,
    gdir: -cfg.adv_tau * A * (capped ? 0 : rho) * keep + 2 * cfg.kl_tau * e,
    side: masked ? (A > 0 ? 1 : -1) : 0,
  };
}

/**
 * VESPO's Gamma weight (TRL's get_gamma_weights), a constant of the gradient: phi = exp(lambda + k log w - lambda w)
 * with log w = clamp(sum_t m clamp(d, -20, 20), log 1e-8, 20), and (k, lambda) = vespo_k_pos, vespo_lambda_pos
 * where A >= 0, else the _neg pair (lambda at least 1e-4); phi(1) = 1. Non-finite values become 0.
 */
export function vespoWeight(cfg: ObjectiveConfig, logW: number, A: number): number {
  const k = A >= 0 ? cfg.vespo_k_pos : cfg.vespo_k_neg;
  const lam = Math.max(A >= 0 ? cfg.vespo_lambda_pos : cfg.vespo_lambda_neg, 1e-4);
  const phi = Math.exp(lam + k * logW - lam * Math.exp(logW));
  return Number.isFinite(phi) ? phi : 0;
}

/** GMPO's per-token pieces: the clipped log-ratio dmin, d dmin / d d (0 or 1), and the clip side. */
export function gmpoToken(d: number, A: number, cfg: ObjectiveConfig): { dmin: number; deriv: number; side: number } {
  const dc = Math.min(Math.max(d, -20), 20);
  const e = Math.min(Math.max(dc, -cfg.gmpo_clip), cfg.gmpo_clip);
  if (A > 0) {
    const clipped = dc > cfg.gmpo_clip;
    return { dmin: Math.min(dc, e), deriv: !clipped && d > -20 && d < 20 ? 1 : 0, side: clipped ? 1 : 0 };
  }
  if (A < 0) {
    const clipped = dc < -cfg.gmpo_clip;
    return { dmin: Math.max(dc, e), deriv: !clipped && d > -20 && d < 20 ? 1 : 0, side: clipped ? -1 : 0 };
  }
  return { dmin: 0, deriv: 0, side: 0 };
}

/**
 * The metrics output as a name -> value record, leaving out those whose input was absent or whose feature is
 * off (cispo_clip_ratio without CISPO, kl without a KL input, sampling/* without samplerLogp, ...).
 */
export function objectiveMetricRecord(
  values: ArrayLike<number>,
  plan: ObjectivePlan,
): Partial<Record<ObjectiveMetricName, number>> {
  const out: Partial<Record<ObjectiveMetricName, number>> = {};
  OBJECTIVE_METRICS.forEach((name, j) => {
    if (name === 'cispo_clip_ratio' && plan.cfg.loss_type !== 'cispo') return;
    if (name === 'kl' && !plan.hasKl) return;
    if (name === 'kl/exact' && !plan.hasKlExact) return;
    if (name.startsWith('sampling/') && !plan.hasSampler) return;
    if (name === 'token_selection/entropy_kept_frac' && !plan.selectEntropy) return;
    if (name === 'token_selection/cov_selected_frac' && !plan.clipCov && !plan.klCov) return;
    if ((name.startsWith('rollout_correction/') || name.startsWith('sampling/importance_')) && !plan.correction) return;
    if (name === 'off_policy_mask/masked_frac' && !plan.offPolicyMask) return;
    out[name] = values[j];
  });
  return out;
}
