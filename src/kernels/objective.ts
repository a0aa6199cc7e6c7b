// Typed wrapper of shaders/objective.wgsl: the unified RL objective (loss, d loss / d logp, d loss / d entropy,
// per-token records, metrics) for N sequences padded to L tokens, in one recorder phase of 3 dispatches after
// a few buffer copies. Same name and argument order as src/reference/objective.ts, which defines every formula.
// Not the log-prob backward (logprobBackward takes dLogp and dEntropy from here) and not the advantages.

import raw from '../../shaders/objective.wgsl?raw';
import { Tensor, declareShader, grid, uniforms, type GpuContext, type Recorder } from '../gpu';
import {
  OBJECTIVE_METRICS,
  OBJECTIVE_RECORDS,
  SELECT_WG,
  checkAggregationTotals,
  objectivePlan,
  type AggregationTotals,
  type ObjectiveInputs,
} from '../reference/objective';
import {
  DEFAULT_OBJECTIVE_CONFIG,
  KL_STRAIGHT_THROUGH,
  dppoCap,
  epsilonHigh,
  isStraightThroughKl,
  type ObjectiveConfig,
  type RolloutIsMode,
} from '../schema/objective';

export {
  OBJECTIVE_METRICS,
  OBJECTIVE_RECORDS,
  objectiveMetricRecord,
  type AggregationTotals,
  type ObjectiveMetricName,
} from '../reference/objective';

/** The per-token inputs as GPU tensors, each (N, L) f32. */
export type ObjectiveTensors = ObjectiveInputs<Tensor>;

/** Planes of the packed input buffer (the shader's P_*): 8 inputs, the covariance keys and the selection flags. */
const P = { LOGP: 0, OLD: 1, ADV: 2, MASK: 3, ENT: 4, REF: 5, SAMPLER: 6, KLX: 7, COVKEY: 8, FLAGS: 9 } as const;
const PLANES = 10;
const PLANE: Record<keyof ObjectiveTensors, number> = {
  logp: P.LOGP,
  oldLogp: P.OLD,
  advantages: P.ADV,
  mask: P.MASK,
  entropy: P.ENT,
  refLogp: P.REF,
  samplerLogp: P.SAMPLER,
  klExact: P.KLX,
};
/** Stats buffer: 16 batch words, then 24 words of partial sums per row (the shader's S_ROWS and RP). */
const STATS_BATCH = 16;
const STATS_ROW = 24;

/**
 * Codes of Params.lossType, aggMode and klMode (the shader's LOSS_*, AGG_*, KL_*), and the bits of the FLAGS
 * override (F_*): the features a run has on are pipeline constants, so code for one that is off is not compiled.
 */
const LOSS = {
  ppo_clip: 0,
  cispo: 1,
  gmpo: 2,
  sapo: 3,
  pg: 4,
  dppo_tv: 5,
  dppo_kl: 6,
  dro: 7,
  vespo: 8,
  prime_dppo: 9,
} as const;
const AGG = {
  'token-mean': 0,
  'seq-mean-token-mean': 1,
  'seq-mean-token-sum': 2,
  'seq-mean-token-sum-norm': 3,
} as const;
const KL = { k1: 1, k2: 2, k3: 3, low_var_kl: 4, exact: 5 } as const;
/**
 * F.KL: a KL estimate is computed (its input is present). F.KL_ST: straight-through (klMode is the base estimator,
 * the gradient is u). F.KL_BC: use_bias_correction_kl (the estimate times the ratio).
 */
const F = {
  DUAL: 1,
  DELTA: 2,
  SAMPLER: 8,
  KLX: 16,
  KL: 32,
  SEL_ENT: 64,
  CLIP_COV: 128,
  KL_COV: 256,
  KL_ST: 4096,
  KL_BC: 8192,
  AGG: 16384,
} as const;
/** Rollout correction: its mode codes (the RS_MODE override) and flag bits (bounds present, off-policy mask on). */
const RS = {
  off: 0,
  token_truncate: 1,
  token_mask: 2,
  sequence_truncate: 3,
  sequence_mask: 4,
  sequence_geo_mask: 5,
} as const satisfies Record<RolloutIsMode, number>;
const F_RS = { RS_MIN: 512, RS_MAX: 1024, OFF: 2048 } as const;

const PARAMS = uniforms('Params', {
  N: 'u32',
  L: 'u32',
  lossType: 'u32', // LOSS_*
  seqLevel: 'u32', // 1: sequence-level ratio (GSPO)
  aggMode: 'u32', // AGG_*
  klMode: 'u32', // KL_*
  epsLow: 'f32',
  epsHigh: 'f32',
  clipC: 'f32',
  delta: 'f32',
  epsMax: 'f32',
  tauPos: 'f32',
  tauNeg: 'f32',
  gmpoClip: 'f32',
  beta: 'f32', // KL coefficient in the loss (0 with kl_placement in_reward)
  entropyCoef: 'f32',
  oneMinusQ: 'f32', // 1 - top_entropy_quantile
  covFrac: 'f32', // clip_cov_ratio or kl_cov_ratio
  covLb: 'f32',
  covUb: 'f32',
  klCovCoef: 'f32',
  rsMin: 'f32', // C_min (flag F_RS_MIN)
  rsMax: 'f32', // C_max (flag F_RS_MAX)
  offThreshold: 'f32', // off_policy_mask_threshold (flag F_OFF)
  dppoCap: 'f32', // dppo_*: the cap of the stop-gradient ratio
  droBeta: 'f32', // dro: the log-ratio penalty
  vespoKPos: 'f32', // vespo: (k, lambda) where A >= 0 and where A < 0
  vespoLamPos: 'f32',
  vespoKNeg: 'f32',
  vespoLamNeg: 'f32',
  advTau: 'f32', // prime_dppo: the advantage term's coefficient
  klTau: 'f32', // prime_dppo: the squared log-ratio's coefficient
  aggRows: 'u32', // flag F_AGG: the minibatch's rows N (gradient accumulation)
  aggTokens: 'f32', // flag F_AGG: the minibatch's masked tokens M
});
export const OBJECTIVE_SHADER = declareShader('objective.wgsl', raw, {
  uniforms: [PARAMS],
  consts: {
    SELECT_WG,
    FINAL_WG: OBJECTIVE_METRICS.length + 1, // objective_finalize: a thread per metric, plus the loss
    P,
    S_ROWS: STATS_BATCH,
    RP: STATS_ROW,
    F: { ...F, ...F_RS },
    RS,
    LOSS,
    AGG,
    KL,
  },
});

/** Threads per workgroup of objective_rows (ROWS * LANES). */
const THREADS = 64;
/** Rows * lanes above which a thread per row already fills a GPU. */
const FILL = 4096;
/** The fewest tokens a lane should loop over. */
const MIN_ITEMS = 8;

/**
 * LANES threads per sequence row and ROWS rows per workgroup for objective_rows: a thread per row for many
 * rows (no barrier costs beyond a few merges), up to 64 lanes for a few long rows. LANES is 1, 4, 16 or 64.
 */
export function objectiveLayout(rows: number, length: number): { LANES: number; ROWS: number } {
  let lanes = 1;
  while (lanes < THREADS && rows * lanes < FILL && length >= 4 * lanes * MIN_ITEMS) lanes *= 4;
  return { LANES: lanes, ROWS: THREADS / lanes };
}

/**
 * Per context, the scratch tensors the wrapper owns (packed inputs, stats). Each grows to a power of two and is
 * replaced, never destroyed (an open recorder may still use the old one); reuse across calls is safe because
 * the copies and dispatches of a command buffer run in recording order.
 */
const owned = new WeakMap<GpuContext, Map<string, Tensor>>();

function ownedTensor(ctx: GpuContext, name: string, size: number): Tensor {
  let m = owned.get(ctx);
  if (!m) owned.set(ctx, (m = new Map()));
  const t = m.get(name);
  if (t && t.size >= size) return t;
  const n = Math.max(64, 2 ** Math.ceil(Math.log2(size)));
  const fresh = ctx.tensor([n], { label: `objective:${name}` });
  m.set(name, fresh);
  return fresh;
}

function requireSize(kernel: string, t: Tensor, name: string, size: number, N: number, L: number): void {
  if (t.dtype !== 'f32') throw new Error(`${kernel}: ${name} must be f32, got ${t.describe()}`);
  if (t.size !== size)
    throw new Error(`${kernel}: ${name} ${t.describe()} must have ${size} elements (N=${N}, L=${L})`);
}

/**
 * The unified objective on the GPU (formulas: src/reference/objective.ts). Every token selection
 * (top_entropy_quantile, clip_cov, kl_cov) and every loss type, ratio level, aggregation and KL estimator is
 * supported; the batch-level selection thresholds are found on the GPU (bitwise search), no readback.
 * @param loss     (1) overwritten with the scalar loss.
 * @param dLogp    (N, L) overwritten: d loss / d logp (not the exact KL's part: see the twin's header).
 * @param dEntropy (N, L) overwritten: d loss / d entropy.
 * @param records  (5, N, L) overwritten: OBJECTIVE_RECORDS planes.
 * @param metrics  (K) overwritten: OBJECTIVE_METRICS values.
 * @param inputs   (N, L) f32 tensors; mask must be 0/1 (not checked on the GPU).
 * @param config   objective knobs, complete and valid (an RL config, or resolveObjectiveConfig's result).
 * @param totals   the minibatch's rows and masked tokens when these inputs are one micro-batch of it (the twin's).
 */
export function objectiveForwardBackward(
  rec: Recorder,
  loss: Tensor,
  dLogp: Tensor,
  dEntropy: Tensor,
  records: Tensor,
  metrics: Tensor,
  inputs: ObjectiveTensors,
  config: ObjectiveConfig = DEFAULT_OBJECTIVE_CONFIG,
  totals?: AggregationTotals,
): void {
  const kernel = 'objectiveForwardBackward';
  const plan = objectivePlan(kernel, inputs, config, (t) => t.shape);
  if (totals) checkAggregationTotals(kernel, plan, totals);
  const { cfg, N, L } = plan;
  const NL = N * L;
  for (const [name, t] of Object.entries(inputs) as [string, Tensor | undefined][]) {
    if (t && t.dtype !== 'f32') throw new Error(`${kernel}: ${name} must be f32, got ${t.describe()}`);
  }
  requireSize(kernel, loss, 'loss', 1, N, L);
  requireSize(kernel, dLogp, 'dLogp', NL, N, L);
  requireSize(kernel, dEntropy, 'dEntropy', NL, N, L);
  requireSize(kernel, records, 'records', OBJECTIVE_RECORDS.length * NL, N, L);
  requireSize(kernel, metrics, 'metrics', OBJECTIVE_METRICS.length, N, L);

  const ctx = rec.ctx;
  const packed = ownedTensor(ctx, 'packed', PLANES * NL);
  const stats = ownedTensor(ctx, 'stats', STATS_BATCH + STATS_ROW * N);
  for (const [name, t] of Object.entries(inputs) as [keyof ObjectiveTensors, Tensor | undefined][]) {
    if (!t) continue;
    const plane = new Tensor(
      packed.buffer,
      [NL],
      'f32',
      `objective:packed.${name}`,
      packed.byteOffset + PLANE[name] * NL * 4,
      false,
    );
    rec.copy(plane, t);
  }

  let flags = 0;
  if (cfg.clip_ratio_c !== null) flags |= F.DUAL;
  if (cfg.delta !== null) flags |= F.DELTA;
  const rc = plan.correction;
  if (rc?.min != null) flags |= F_RS.RS_MIN;
  if (rc?.max != null) flags |= F_RS.RS_MAX;
  if (plan.offPolicyMask) flags |= F_RS.OFF;
  if (plan.hasSampler) flags |= F.SAMPLER;
  if (plan.hasKlExact) flags |= F.KLX;
  if (plan.hasKl) flags |= F.KL;
  if (plan.selectEntropy) flags |= F.SEL_ENT;
  if (plan.clipCov) flags |= F.CLIP_COV;
  if (plan.klCov) flags |= F.KL_COV;
  if (isStraightThroughKl(cfg.kl_estimator)) flags |= F.KL_ST;
  if (cfg.use_bias_correction_kl) flags |= F.KL_BC;
  if (totals) flags |= F.AGG;
  const klBase = isStraightThroughKl(cfg.kl_estimator) ? KL_STRAIGHT_THROUGH[cfg.kl_estimator] : cfg.kl_estimator;
  const params = PARAMS.pack({
    N,
    L,
    lossType: LOSS[cfg.loss_type],
    seqLevel: cfg.importance_sampling_level === 'sequence' ? 1 : 0,
    aggMode: AGG[cfg.loss_agg_mode],
    klMode: KL[klBase],
    epsLow: cfg.epsilon,
    epsHigh: epsilonHigh(cfg),
    clipC: cfg.clip_ratio_c ?? 0,
    delta: cfg.delta ?? 0,
    epsMax: cfg.eps_max,
    tauPos: cfg.tau_pos,
    tauNeg: cfg.tau_neg,
    gmpoClip: cfg.gmpo_clip,
    beta: plan.beta,
    entropyCoef: cfg.entropy_coef,
    oneMinusQ: 1 - cfg.top_entropy_quantile,
    covFrac: plan.clipCov ? cfg.clip_cov_ratio : cfg.kl_cov_ratio,
    covLb: cfg.clip_cov_lb,
    covUb: cfg.clip_cov_ub,
    klCovCoef: cfg.kl_cov_coef,
    rsMin: rc?.min ?? 0,
    rsMax: rc?.max ?? 0,
    offThreshold: cfg.off_policy_mask_threshold ?? 0,
    dppoCap: dppoCap(cfg),
    droBeta: cfg.dro_beta ?? 0,
    vespoKPos: cfg.vespo_k_pos,
    vespoLamPos: cfg.vespo_lambda_pos,
    vespoKNeg: cfg.vespo_k_neg,
    vespoLamNeg: cfg.vespo_lambda_neg,
    advTau: cfg.adv_tau,
    klTau: cfg.kl_tau,
    aggRows: totals?.rows ?? 0,
    aggTokens: totals?.tokens ?? 0,
  });

  const family = ctx.family('objective', OBJECTIVE_SHADER.source);
  const layout = objectiveLayout(N, L);
  rec.dispatch({
    family,
    entry: 'objective_select',
    constants: { FLAGS: flags & (F.SEL_ENT | F.CLIP_COV | F.KL_COV | F.AGG) }, // the bits it reads: fewer pipelines
    params,
    bindings: [packed, stats],
    workgroups: [1],
  });
  rec.dispatch({
    family,
    entry: 'objective_rows',
    constants: { ...layout, FLAGS: flags, RS_MODE: RS[rc?.mode ?? 'off'] }, // RS_MODE token_truncate: tis_cap
    params,
    bindings: [dLogp, dEntropy, records, stats, packed],
    workgroups: grid(Math.ceil(N / layout.ROWS), ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
  rec.dispatch({ family, entry: 'objective_finalize', params, bindings: [loss, metrics, stats], workgroups: [1] });
}
