// The unified objective's knobs (docs/algorithms.md#policy-losses through #loss-aggregation): the policy loss, its
// ratio and clipping, token selection, the KL term in the loss and the entropy bonus, each declared once as a field
// of the RL config. The objective's CPU twin (src/reference/objective.ts) and its GPU wrapper
// (src/kernels/objective.ts) take an ObjectiveConfig: any RL config is one, since these fields are RL_FIELDS'.
// The rules between these fields (OBJECTIVE_RULES) live here too. Not the advantage estimators, the sampler or the
// optimizer.

import {
  defaultsOf,
  fieldProblems,
  flag,
  oneOf,
  optReal,
  real,
  ruleProblems,
  section,
  type ConfigOf,
  type FieldRule,
  type ValueDoc,
} from './fields';

/**
 * verl's later token losses (docs/algorithms.md#loss-dppo_tv-dppo_kl-and-dro): DPPO's divergence masks, Binary-TV
 * and Binary-KL, and DRO's quadratic log-ratio penalty. Per token only (no sequence-level ratio).
 */
export const DIVERGENCE_LOSS_TYPES = ['dppo_tv', 'dppo_kl', 'dro'] as const;
/** DPPO's truncation of its stop-gradient ratio when clip_ratio_c is null (verl's default clip_ratio_c there). */
export const DPPO_DEFAULT_CAP = 20;

/** Policy losses (`loss_type`): the per-token loss l_{i,t}. `pg` is REINFORCE's -A log pi (no ratio). */
export const LOSS_TYPES = [
  'ppo_clip',
  'cispo',
  'gmpo',
  'sapo',
  'pg',
  ...DIVERGENCE_LOSS_TYPES,
  'vespo',
  'prime_dppo',
] as const;
export type LossType = (typeof LOSS_TYPES)[number];
/** Where the ratio lives: per token, or one length-normalized ratio per sequence (GSPO). */
export const IMPORTANCE_SAMPLING_LEVELS = ['token', 'sequence'] as const;
export type ImportanceSamplingLevel = (typeof IMPORTANCE_SAMPLING_LEVELS)[number];
/** Loss aggregations (`loss_agg_mode`, verl's names). */
export const LOSS_AGG_MODES = [
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
] as const;
export type LossAggMode = (typeof LOSS_AGG_MODES)[number];
/**
 * KL estimators (`kl_estimator`): k1 = u, k2 = u^2/2, k3 = e^-u - 1 + u, low_var_kl = k3 clamped to [-10, 10], exact =
 * full-vocabulary KL; a name ending in `+` (verl's straight-through estimators) keeps that value but takes k2's
 * gradient u (KL_STRAIGHT_THROUGH).
 */
export const KL_ESTIMATORS = ['k1', 'k2', 'k3', 'low_var_kl', 'exact', 'k1+', 'k3+', 'low_var_kl+'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

// ---- straight-through KL estimators and the unbiased KL correction (docs/algorithms.md#kl-estimators) ----

/** The straight-through estimators: value of the named estimator, gradient of k2 (verl's `k3+`, PR 2953). */
export const KL_STRAIGHT_THROUGH = { 'k1+': 'k1', 'k3+': 'k3', 'low_var_kl+': 'low_var_kl' } as const;
export type KlStraightThrough = keyof typeof KL_STRAIGHT_THROUGH;

/** True for an estimator whose gradient is k2's (u) whatever its value. */
export function isStraightThroughKl(est: KlEstimator): est is KlStraightThrough {
  return est in KL_STRAIGHT_THROUGH;
}
/** Where the KL penalty goes: the objective adds 'in_loss'; 'in_reward' is the advantage code's token reward. */
export const KL_PLACEMENTS = ['in_loss', 'in_reward'] as const;
export type KlPlacement = (typeof KL_PLACEMENTS)[number];

/**
 * Rollout correction modes (`rollout_is_mode`; TRL's vllm_importance_sampling_mode plus OpenRLHF's seq-mask-tis):
 * how the sampler/trainer importance weight w = pi_old / pi_sampler enters the policy loss. token_*: one w per token;
 * sequence_*: one w_i = prod_t w_t per sequence; *_truncate clamps w to [C_min, C_max]; *_mask zeroes w outside it;
 * sequence_geo_mask drops a sequence whose geometric-mean w lies outside and weights its tokens by their own w_t.
 */
export const ROLLOUT_IS_MODES = [
  'off',
  'token_truncate',
  'token_mask',
  'sequence_truncate',
  'sequence_mask',
  'sequence_geo_mask',
] as const;
export type RolloutIsMode = (typeof ROLLOUT_IS_MODES)[number];

/** The policy loss section of the config panel. */
export const POLICY_LOSS_FIELDS = section('loss', {
  loss_type: oneOf(
    'per-token policy loss: ppo_clip, cispo, gmpo, sapo, pg (-A log pi, no ratio), dppo_tv / dppo_kl (DPPO: -A sg(min(rho, c)) log pi on tokens whose probability moved less than epsilon / epsilon_high in total variation / binary KL), dro (-(A log pi - dro_beta (log rho)^2 / 2)), vespo (-sg(phi(w)) A log pi, phi a Gamma weight of the sequence ratio w) or prime_dppo (the prime-rl default: -adv_tau A pi/mu on tokens inside the DPPO total-variation region + kl_tau (log pi/mu)^2, mu the sampler)',
    LOSS_TYPES,
    'ppo_clip',
    {
      verl: 'actor_rollout_ref.actor.policy_loss.loss_mode',
      openrlhf: '--actor.policy_loss_type',
      also: ['loss_mode', 'policy_loss_type'],
      note: "verl's 'geo_mean' is gmpo; dppo_tv, dppo_kl and dro are verl's loss_mode names; TRL's loss_type mostly picks the aggregation (see loss_agg_mode), except 'cispo', 'sapo' and 'vespo'",
      valueDocs: {
        ppo_clip: { formula: '-min(rho A, clip(rho, 1 - epsilon, 1 + epsilon_high) A)' },
        cispo: { formula: '-sg(min(rho, eps_max)) A log pi' },
        gmpo: {
          formula: '-A g_i',
          where: "g_i the geometric mean of the sequence's token ratios, each clipped to gmpo_clip in log space",
        },
        sapo: { formula: '-A 4 sigma(tau (rho - 1)) / tau', where: 'tau = tau_pos where A > 0, else tau_neg' },
        pg: { formula: '-A log pi', where: 'no ratio' },
        dppo_tv: {
          formula: '-A sg(min(rho, c)) log pi',
          where:
            "inside DPPO's divergence region (total variation of the token's probability below epsilon / epsilon_high)",
        },
        dppo_kl: {
          formula: '-A sg(min(rho, c)) log pi',
          where: "inside DPPO's divergence region (binary KL of the token's probability below epsilon / epsilon_high)",
        },
        dro: { formula: '-(A log pi - dro_beta (log rho)^2 / 2)' },
        vespo: { formula: '-sg(phi(w)) A log pi', where: 'phi a Gamma weight of the sequence ratio w' },
        prime_dppo: {
          formula: '-adv_tau A min(pi/mu, delta) v + kl_tau (log pi/mu)^2',
          where:
            "mu the sampler's probability; v = 0 where pi - mu moved past epsilon_high (A > 0) or below -epsilon (else): prime-rl's default loss",
        },
      },
    },
  ),
  importance_sampling_level: oneOf(
    'the ratio rho: per token, or per sequence (GSPO: the geometric mean over the sequence)',
    IMPORTANCE_SAMPLING_LEVELS,
    'token',
    { trl: 'importance_sampling_level', note: "verl and OpenRLHF: loss_mode / --actor.policy_loss_type 'gspo'" },
  ),
  epsilon: real('eps_low: lower clip, rho >= 1 - epsilon', 0.2, 0, 1, {
    maxExclusive: true,
    trl: 'epsilon',
    verl: 'actor_rollout_ref.actor.clip_ratio_low',
    openrlhf: '--actor.eps_clip_low_high',
    also: ['cliprange', 'clip_range', 'clip_ratio', 'eps_clip'],
    note: 'OpenRLHF: the first of the pair',
  }),
  epsilon_high: optReal('eps_high: upper clip, rho <= 1 + epsilon_high (DAPO 0.28)', 'epsilon', null, 0, 100, {
    trl: 'epsilon_high',
    verl: 'actor_rollout_ref.actor.clip_ratio_high',
    openrlhf: '--actor.eps_clip_low_high',
    note: 'OpenRLHF: the second of the pair',
  }),
  clip_ratio_c: optReal('dual clip c (> 1): where A < 0, l = min(l_ppo, -c A)', 'no dual clip', null, 1, 100, {
    minExclusive: true,
    verl: 'actor_rollout_ref.actor.clip_ratio_c',
    openrlhf: '--actor.dual_clip',
    also: ['dual_clip'],
  }),
  delta: optReal(
    'two-sided cap: rho is clamped to at most delta in the unclipped term (> 1 + epsilon_high)',
    'no cap',
    null,
    1,
    100,
    { minExclusive: true, trl: 'delta' },
  ),
  eps_max: real('cispo: the cap of the stop-gradient weight, sg(min(rho, eps_max)) (MiniMax-M1: 5)', 5.0, 0, 100, {
    minExclusive: true,
    note: "TRL: epsilon_high under loss_type 'cispo' (an absolute cap); verl: 1 + clip_ratio_high under loss_mode 'cispo'",
  }),
  gmpo_clip: real('gmpo: each token log-ratio is clipped (sign-aware) to [-gmpo_clip, gmpo_clip]', 0.4, 0, 10, {
    minExclusive: true,
    note: "TRL GMPOConfig.epsilon / epsilon_high; verl clip_ratio_low / clip_ratio_high under loss_mode 'geo_mean' (log space)",
  }),
  tau_pos: real('sapo: gate temperature where A > 0', 1.0, 0, 100, {
    minExclusive: true,
    trl: 'sapo_temperature_pos',
    verl: 'actor_rollout_ref.actor.tau_pos',
  }),
  tau_neg: real('sapo: gate temperature where A < 0', 1.05, 0, 100, {
    minExclusive: true,
    trl: 'sapo_temperature_neg',
    verl: 'actor_rollout_ref.actor.tau_neg',
  }),
  loss_agg_mode: oneOf(
    'how per-token losses are averaged over an optimizer step (verl names)',
    LOSS_AGG_MODES,
    'token-mean',
    {
      trl: 'loss_type',
      verl: 'actor_rollout_ref.actor.loss_agg_mode',
      note: "TRL loss_type: grpo ~ seq-mean-token-mean, dapo/bnpo ~ token-mean, dr_grpo ~ seq-mean-token-sum-norm, luspo ~ seq-mean-token-sum with importance_sampling_level 'sequence'",
      also: ['luspo'],
      // Each value's token weight w (docs/algorithms.md#loss-aggregation): the inspector's and the A/B's words.
      valueDocs: {
        'token-mean': { formula: '1/M', where: 'M the loss tokens of the optimizer step: every token weighs the same' },
        'seq-mean-token-mean': {
          formula: '1/(N·|y_i|)',
          where: "N the step's sequences, |y_i| this completion's loss tokens: each sequence weighs the same",
        },
        'seq-mean-token-sum': { formula: '1/N', where: "N the step's sequences: a long completion weighs more" },
        'seq-mean-token-sum-norm': { formula: '1/(N·L_max)', where: "N the step's sequences: a constant" },
      },
      // TRL's loss_type that aggregates so (its ppo-clip losses); none sums tokens per sequence unnormalized.
      valueNames: {
        'token-mean': { trl: 'dapo' },
        'seq-mean-token-mean': { trl: 'grpo' },
        'seq-mean-token-sum': { trl: null },
        'seq-mean-token-sum-norm': { trl: 'dr_grpo' },
      },
    },
  ),
  top_entropy_quantile: real(
    'train only on tokens whose entropy is in the top q of the batch (1: all tokens; 0: the highest one)',
    1,
    0,
    1,
    { trl: 'top_entropy_quantile' },
  ),
  clip_cov_ratio: real(
    'Clip-Cov: fraction of tokens with the largest cov(log pi, A) detached from the loss (0: off)',
    0,
    0,
    1,
    { verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ratio' },
  ),
  clip_cov_lb: real('Clip-Cov: lower bound of the covariance band of candidate tokens', 1.0, -1e6, 1e6, {
    verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_lb',
  }),
  clip_cov_ub: real('Clip-Cov: upper bound of the covariance band of candidate tokens', 5.0, -1e6, 1e6, {
    verl: 'actor_rollout_ref.actor.policy_loss.clip_cov_ub',
  }),
  kl_cov_ratio: real(
    'KL-Cov: fraction of tokens with the largest cov(log pi, A) given a KL penalty (0: off)',
    0,
    0,
    1,
    { verl: 'actor_rollout_ref.actor.policy_loss.kl_cov_ratio' },
  ),
  kl_cov_coef: real(
    'KL-Cov: coefficient of the penalty kl_cov_coef * |log pi - log pi_old| on those tokens',
    1.0,
    0,
    100,
    { verl: 'actor_rollout_ref.actor.policy_loss.ppo_kl_coef' },
  ),
  dro_beta: optReal(
    'dro: beta of the quadratic penalty on the log-ratio, l = -(A log pi - beta (log pi - log pi_old)^2 / 2)',
    'none (loss_type dro needs a value > 0)',
    null,
    0,
    1000,
    { since: '2026-11-27', minExclusive: true, verl: 'actor_rollout_ref.actor.policy_loss.dro_beta' },
  ),
  vespo_k_pos: real('vespo: k, the power of w in phi(w) = e^lambda w^k e^(-lambda w), where A >= 0', 2, 0, 100, {
    since: '2026-11-28',
    trl: 'vespo_k_pos',
  }),
  vespo_lambda_pos: real('vespo: lambda, the decay of phi(w) for large w, where A >= 0', 3, 0, 100, {
    since: '2026-11-28',
    trl: 'vespo_lambda_pos',
  }),
  vespo_k_neg: real('vespo: k where A < 0', 3, 0, 100, { since: '2026-11-28', trl: 'vespo_k_neg' }),
  vespo_lambda_neg: real('vespo: lambda where A < 0', 2, 0, 100, { since: '2026-11-28', trl: 'vespo_lambda_neg' }),
  adv_tau: real("prime_dppo: the advantage term's coefficient, -adv_tau A pi/mu", 1, 0, 100, {
    since: '2026-12-06',
    note: "prime-rl's trainer.loss.adv_tau (default 1); its DPPO masks dppo_mask_low / dppo_mask_high are epsilon / epsilon_high here",
  }),
  kl_tau: real(
    'prime_dppo: the coefficient of the squared log-ratio to the sampler, + kl_tau (log pi/mu)^2',
    1e-3,
    0,
    100,
    {
      since: '2026-12-06',
      note: "prime-rl's trainer.loss.kl_tau (default 1e-3; Kimi K2.5's KL term)",
    },
  ),
  tis_cap: optReal(
    'truncated IS: multiply l by min(pi_old_train / pi_sampler, tis_cap) (train/sampler mismatch)',
    'no correction (the gap is still reported)',
    null,
    0,
    100,
    {
      minExclusive: true,
      trl: 'vllm_importance_sampling_clip_max',
      verl: 'algorithm.rollout_correction.rollout_is_threshold',
      note: 'OpenRLHF: the upper end of --algo.advantage.is_correction_threshold',
    },
  ),
  // Rollout correction (docs/algorithms.md#rollout-correction): tis_cap C is the case rollout_is_mode
  // 'token_truncate' with rollout_is_clip_max C and no lower bound (rolloutCorrectionOf).
  rollout_is_mode: oneOf(
    'rollout correction: w = pi_old_train / pi_sampler per token or per sequence, truncated to or masked outside [rollout_is_clip_min, rollout_is_clip_max]',
    ROLLOUT_IS_MODES,
    'off',
    {
      since: '2026-11-27',
      trl: 'vllm_importance_sampling_mode',
      verl: 'algorithm.rollout_correction.rollout_is',
      openrlhf: '--algo.advantage.is_correction_type',
      also: ['vllm_importance_sampling_correction', 'rollout_rs', 'is_correction_type', 'is_correction_enable'],
      note: 'TRL: needs vllm_importance_sampling_correction (on by default, mode sequence_mask); verl: rollout_is token / sequence truncates, rollout_rs token_k1 / seq_sum_k1 / seq_mean_k1 masks; OpenRLHF: tis = token_truncate, icepop = token_mask, seq-mask-tis = sequence_geo_mask, with --algo.advantage.is_correction_enable',
      // OpenRLHF's --algo.advantage.is_correction_type values (no sequence-product weight there).
      valueNames: {
        off: { openrlhf: null },
        token_truncate: { openrlhf: 'tis' },
        token_mask: { openrlhf: 'icepop' },
        sequence_truncate: { openrlhf: null },
        sequence_mask: { openrlhf: null },
        sequence_geo_mask: { openrlhf: 'seq-mask-tis' },
      },
    },
  ),
  rollout_is_clip_min: optReal(
    'rollout correction: lower bound C_min of w (truncate: w >= C_min; mask: w < C_min drops the token or sequence)',
    'no lower bound',
    null,
    0,
    100,
    {
      since: '2026-11-27',
      trl: 'vllm_importance_sampling_clip_min',
      openrlhf: '--algo.advantage.is_correction_threshold',
      note: "OpenRLHF: the first of the pair; verl rollout_rs token_k1: the bounds as '1/C_max_1/C_min' (it bounds -log w)",
    },
  ),
  rollout_is_clip_max: optReal(
    'rollout correction: upper bound C_max of w (truncate: w <= C_max; mask: w > C_max drops the token or sequence)',
    'no upper bound',
    3.0,
    0,
    1e6,
    {
      since: '2026-11-27',
      minExclusive: true,
      trl: 'vllm_importance_sampling_clip_max',
      verl: 'algorithm.rollout_correction.rollout_is_threshold',
      openrlhf: '--algo.advantage.is_correction_threshold',
      also: ['vllm_importance_sampling_cap', 'rollout_rs_threshold'],
      note: 'TRL default 3.0, verl 2.0, OpenRLHF the second of the pair [0.5, 5.0]',
    },
  ),
  off_policy_mask_threshold: optReal(
    'off-policy sequence mask (DeepSeek-V3.2): drop tokens with A < 0 of a sequence whose mean log(pi_sampler / pi_theta) exceeds this',
    'no off-policy mask',
    null,
    0,
    100,
    { since: '2026-11-27', minExclusive: true, trl: 'off_policy_mask_threshold' },
  ),
});

/** The objective's part of the regularizers section: the KL term and the entropy bonus. */
export const OBJECTIVE_REGULARIZER_FIELDS = section('regularizers', {
  beta: real('KL coefficient to the reference policy (0: no reference model)', 0, 0, 10, {
    trl: 'beta',
    verl: 'actor_rollout_ref.actor.kl_loss_coef',
    openrlhf: '--algo.kl.init_coef',
    also: ['init_kl_coef', 'kl_coef', 'kl_loss_coef'],
    note: 'verl in reward: algorithm.kl_ctrl.kl_coef; TRL PPO: kl_coef',
  }),
  kl_estimator: oneOf(
    "KL estimator: k1, k2, k3, low_var_kl (k3 clamped to [-10, 10]), exact (full vocabulary), or k1+, k3+, low_var_kl+ (that value, k2's gradient u: straight-through)",
    KL_ESTIMATORS,
    'k3',
    {
      trl: 'PPOConfig.kl_estimator',
      verl: 'actor_rollout_ref.actor.kl_loss_type',
      openrlhf: '--algo.kl.estimator',
      note: "TRL GRPO always uses k3; verl's k1+ / k3+ / low_var_kl+ are the straight-through ones (its k3 is low_var_kl)",
      // verl's names (core_algos.kl_penalty): the lab's k3 is unclamped, verl's k3 is low_var_kl (clamped).
      valueNames: {
        k1: { verl: 'k1' },
        k2: { verl: 'k2' },
        k3: { verl: 'low_var_kl' },
        low_var_kl: { verl: 'low_var_kl' },
        exact: { verl: null },
        'k1+': { verl: 'k1+' },
        'k3+': { verl: 'k3+' },
        'low_var_kl+': { verl: 'low_var_kl+' },
      },
    },
  ),
  use_bias_correction_kl: flag(
    "DeepSeek-V3.2's unbiased KL: the in-loss KL estimate k is multiplied by the ratio r = pi_theta / pi_old (token, or the sequence's under importance_sampling_level 'sequence'), gradient through r too, since the tokens were sampled from pi_old",
    false,
    { since: '2026-11-27', trl: 'use_bias_correction_kl', note: 'verl and OpenRLHF have no such correction' },
  ),
  kl_placement: oneOf(
    'in_loss: + beta k per token (GRPO); in_reward: token reward -beta k1 (PPO, REINFORCE++)',
    KL_PLACEMENTS,
    'in_loss',
    {
      verl: 'algorithm.use_kl_in_reward',
      openrlhf: '--algo.kl.use_loss',
      also: ['use_kl_loss', 'use_kl_in_reward'],
      note: 'verl: actor.use_kl_loss and algorithm.use_kl_in_reward are two booleans; OpenRLHF: on = in loss',
    },
  ),
  entropy_coef: real(
    'alpha: entropy bonus, l += -alpha H_t (the start value when adaptive; negative penalizes entropy)',
    0,
    -1,
    1,
    {
      trl: 'entropy_coef',
      verl: 'actor_rollout_ref.actor.entropy_coeff',
      openrlhf: '--actor.entropy_coef',
      also: ['entropy_loss_coef'],
    },
  ),
});

/** Every knob the objective reads. */
export const OBJECTIVE_FIELDS = { ...POLICY_LOSS_FIELDS, ...OBJECTIVE_REGULARIZER_FIELDS };
export type ObjectiveField = keyof typeof OBJECTIVE_FIELDS;

/** The unified objective's knobs: a part of the RL config (null: the option is off, or epsilon_high follows epsilon). */
export type ObjectiveConfig = ConfigOf<typeof OBJECTIVE_FIELDS>;

/** The defaults: ppo_clip at the token level, token-mean, no KL, no entropy bonus. */
export const DEFAULT_OBJECTIVE_CONFIG: Readonly<ObjectiveConfig> = Object.freeze(defaultsOf(OBJECTIVE_FIELDS));

/** A loss_agg_mode's token weight w as a formula (`1/M`), from the field's value docs. */
export function aggregationWeight(mode: LossAggMode): ValueDoc {
  return OBJECTIVE_FIELDS.loss_agg_mode.valueDocs[mode];
}

/** A loss_type's per-token loss l as a formula, from the field's value docs. */
export function lossFormula(type: LossType): ValueDoc {
  return OBJECTIVE_FIELDS.loss_type.valueDocs[type];
}

/** The upper clip epsilon in effect: epsilon_high, or epsilon when it is null. */
export function epsilonHigh(c: Pick<ObjectiveConfig, 'epsilon' | 'epsilon_high'>): number {
  return c.epsilon_high ?? c.epsilon;
}

/** DPPO's cap on its stop-gradient ratio: clip_ratio_c, or verl's 20 when it is null. */
export function dppoCap(c: Pick<ObjectiveConfig, 'clip_ratio_c'>): number {
  return c.clip_ratio_c ?? DPPO_DEFAULT_CAP;
}

/** The KL coefficient the objective itself applies: beta with kl_placement 'in_loss', else 0. */
export function lossKlCoef(c: Pick<ObjectiveConfig, 'beta' | 'kl_placement'>): number {
  return c.kl_placement === 'in_loss' ? c.beta : 0;
}

/** The rollout correction in effect: its mode and bounds (null: none). tis_cap C is token_truncate with C_max C. */
export interface RolloutCorrection {
  mode: Exclude<RolloutIsMode, 'off'>;
  /** C_min (null: no lower bound). */
  min: number | null;
  /** C_max (null: no upper bound). */
  max: number | null;
}

/** The rollout correction a config asks for: tis_cap's token truncation, rollout_is_mode's, or none. */
export function rolloutCorrectionOf(
  c: Pick<ObjectiveConfig, 'tis_cap' | 'rollout_is_mode' | 'rollout_is_clip_min' | 'rollout_is_clip_max'>,
): RolloutCorrection | null {
  if (c.tis_cap !== null) return { mode: 'token_truncate', min: null, max: c.tis_cap };
  if (c.rollout_is_mode === 'off') return null;
  return { mode: c.rollout_is_mode, min: c.rollout_is_clip_min, max: c.rollout_is_clip_max };
}

/** The cap on a log importance weight before exp (verl's SAFETY_BOUND): exp(20) ~ 4.9e8, far from f32 overflow. */
export const LOG_WEIGHT_CAP = 20;

/** Outside [min, max] (a null bound does not bound). */
function outsideBounds(v: number, rc: RolloutCorrection): boolean {
  return (rc.min !== null && v < rc.min) || (rc.max !== null && v > rc.max);
}

/**
 * A token's rollout correction weight c and whether it was truncated or masked, from its log weight x_t, its row's
 * sum X_i and masked-token count n_i (src/reference/objective.ts's header defines them). The twin, the GPU's rs_weight and the inspector's
 * explanation follow it.
 */
export function rolloutCorrectionWeight(
  rc: RolloutCorrection,
  x: number,
  rowSum: number,
  n: number,
): { c: number; truncated: boolean; masked: boolean } {
  const cap = (v: number) => Math.exp(Math.min(v, LOG_WEIGHT_CAP));
  switch (rc.mode) {
    case 'token_truncate':
    case 'sequence_truncate': {
      const w = cap(rc.mode === 'token_truncate' ? x : rowSum);
      let c = w;
      if (rc.min !== null) c = Math.max(c, rc.min);
      if (rc.max !== null) c = Math.min(c, rc.max);
      return { c, truncated: outsideBounds(w, rc), masked: false };
    }
    case 'token_mask':
    case 'sequence_mask': {
      const w = cap(rc.mode === 'token_mask' ? x : rowSum);
      const out = outsideBounds(w, rc);
      return { c: out ? 0 : w, truncated: false, masked: out };
    }
    case 'sequence_geo_mask': {
      const out = outsideBounds(cap(n > 0 ? rowSum / n : 0), rc);
      return { c: out ? 0 : cap(x), truncated: false, masked: out };
    }
  }
}

/**
 * The rules between the objective's fields, declared once beside them; each message starts with the field to
 * change. 'kernel': what the objective needs to be defined at all (the twin and the GPU refuse nothing else).
 * 'training': the rules a training config follows besides (CISPO's weight is per token, clip-higher only widens,
 * the cap lies above the clip); the RL config's validation applies both.
 */
export const OBJECTIVE_RULES: readonly FieldRule<ObjectiveConfig>[] = [
  {
    scope: 'training',
    problem: (c) =>
      c.importance_sampling_level === 'sequence' && c.loss_type === 'cispo'
        ? "importance_sampling_level: 'sequence' is not defined for loss_type 'cispo' (CISPO weights each token's log-prob by that token's own stop-gradient ratio); use 'token'"
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.importance_sampling_level === 'sequence' && c.loss_type === 'gmpo'
        ? "importance_sampling_level: loss_type 'gmpo' forms its own sequence ratio (the geometric mean of clipped token ratios); use 'token'"
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.epsilon_high !== null && c.epsilon_high < c.epsilon
        ? `epsilon_high: must be >= epsilon (clip-higher only widens the upper bound), got ${c.epsilon_high} < ${c.epsilon}`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.delta !== null && c.loss_type === 'ppo_clip' && c.delta <= 1 + epsilonHigh(c)
        ? `delta: the cap on rho must exceed the upper clip bound 1 + epsilon_high = ${1 + epsilonHigh(c)}, got ${c.delta}`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      (DIVERGENCE_LOSS_TYPES as readonly string[]).includes(c.loss_type) && c.importance_sampling_level !== 'token'
        ? `importance_sampling_level: loss_type '${c.loss_type}' weighs each token by its own ratio (verl's per-token loss); use 'token'`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.loss_type === 'prime_dppo' && c.importance_sampling_level !== 'token'
        ? "importance_sampling_level: loss_type 'prime_dppo' weighs each token by its own ratio to the sampler (prime-rl's per-token loss); use 'token'"
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.loss_type === 'prime_dppo' && (c.tis_cap !== null || c.rollout_is_mode !== 'off')
        ? `${c.tis_cap !== null ? 'tis_cap' : 'rollout_is_mode'}: loss_type 'prime_dppo' already takes its ratio against the sampler (pi / mu), so a rollout correction would weigh the mismatch twice; set ${c.tis_cap !== null ? 'tis_cap null' : "rollout_is_mode 'off'"}`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.loss_type === 'vespo' && c.importance_sampling_level !== 'token'
        ? "importance_sampling_level: loss_type 'vespo' forms its own sequence weight from the summed log-ratio (TRL requires 'token'); use 'token'"
        : null,
  },
  // TRL's vespo adds each token's log correction weight to the sequence's summed log-ratio inside phi (and multiplies
  // no token's loss by it), for its token modes only; TRL refuses the sequence modes with vespo, as here.
  {
    scope: 'kernel',
    problem: (c) =>
      c.loss_type === 'vespo' && c.rollout_is_mode.startsWith('sequence')
        ? `rollout_is_mode: loss_type 'vespo' takes the sampler's ratio into its sequence weight token by token (TRL allows only token_truncate and token_mask with vespo); '${c.rollout_is_mode}' is not supported with vespo`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.loss_type === 'dro' && c.dro_beta === null
        ? "dro_beta: loss_type 'dro' needs its penalty coefficient dro_beta > 0 (verl refuses it unset too)"
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.use_bias_correction_kl && c.kl_estimator === 'exact'
        ? "use_bias_correction_kl: the ratio correction multiplies a per-token estimate; kl_estimator 'exact' is the full-vocabulary KL, whose gradient is taken elsewhere; use k1, k2, k3 or low_var_kl (or their + forms)"
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.clip_cov_lb >= c.clip_cov_ub
        ? `clip_cov_lb: must be below clip_cov_ub (${c.clip_cov_ub}), got ${c.clip_cov_lb}`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.clip_cov_ratio > 0 && c.kl_cov_ratio > 0
        ? 'clip_cov_ratio: Clip-Cov and KL-Cov (kl_cov_ratio) cannot both be on; choose one'
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      (c.clip_cov_ratio > 0 || c.kl_cov_ratio > 0) &&
      (c.loss_type !== 'ppo_clip' || c.importance_sampling_level !== 'token')
        ? `${c.clip_cov_ratio > 0 ? 'clip_cov_ratio' : 'kl_cov_ratio'}: covariance token selection needs loss_type 'ppo_clip' with importance_sampling_level 'token'`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.tis_cap !== null && c.rollout_is_mode !== 'off'
        ? `tis_cap: is rollout_is_mode 'token_truncate' with rollout_is_clip_max = tis_cap; set tis_cap or rollout_is_mode '${c.rollout_is_mode}', not both`
        : null,
  },
  {
    scope: 'kernel',
    problem: (c) =>
      c.rollout_is_clip_min !== null && c.rollout_is_clip_max !== null && c.rollout_is_clip_min >= c.rollout_is_clip_max
        ? `rollout_is_clip_min: must be below rollout_is_clip_max (${c.rollout_is_clip_max}), got ${c.rollout_is_clip_min}`
        : null,
  },
];

/** The messages of every objective rule `c` breaks ('kernel': the kernel rules only). */
export function objectiveRuleErrors(c: ObjectiveConfig, scope: 'kernel' | 'training' = 'training'): string[] {
  return ruleProblems(OBJECTIVE_RULES, c, scope);
}

/**
 * A complete objective config from a partial one (the defaults fill the rest), checked by every field's rule and
 * the 'kernel' rules, for callers that use the objective alone: the kernel cases and the twin's tests. Throws one message listing every problem. The trainer
 * never calls it: its RL config was validated once at its boundary and is an ObjectiveConfig already.
 */
export function resolveObjectiveConfig(input: Partial<ObjectiveConfig> = {}): ObjectiveConfig {
  const raw = { ...DEFAULT_OBJECTIVE_CONFIG, ...input };
  const problems = fieldProblems(OBJECTIVE_FIELDS, raw);
  if (!problems.length) problems.push(...objectiveRuleErrors(raw, 'kernel'));
  if (problems.length) throw new Error(`objective config: ${problems.join('; ')}`);
  return raw;
}
