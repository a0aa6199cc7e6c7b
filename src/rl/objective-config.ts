// The knob set of the unified RL objective (ALGORITHMS.md, "Per-token policy loss" through "Loss aggregation"):
// the typed config, its defaults and ranges, validation with clear messages, and the named presets as partial
// configs. Field names are TRL/verl's in snake_case where those exist. Not the advantage estimators, the sampler or
// the optimizer (their knobs live with their code). A leaf module with no imports, so the objective's CPU twin
// (src/reference/objective.ts) and GPU wrapper (src/kernels/objective.ts) can share it without a dependency cycle.

/** Per-token policy loss family. */
export type LossType = 'ppo_clip' | 'cispo' | 'gmpo' | 'sapo' | 'pg';
/** Where the importance ratio lives: per token, or one length-normalized ratio per sequence (GSPO). */
export type ImportanceSamplingLevel = 'token' | 'sequence';
/** KL(pi_theta || pi_ref) estimator, with u = log pi_theta - log pi_ref per token. */
export type KlEstimator = 'k1' | 'k2' | 'k3' | 'low_var_kl' | 'exact';
/** Where the KL penalty goes: the objective handles 'in_loss'; 'in_reward' is the advantage code's business. */
export type KlPlacement = 'in_loss' | 'in_reward';
/** How per-token losses are averaged into the scalar loss of one optimizer step. */
export type LossAggMode = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';

export const LOSS_TYPES: readonly LossType[] = ['ppo_clip', 'cispo', 'gmpo', 'sapo', 'pg'];
export const IMPORTANCE_SAMPLING_LEVELS: readonly ImportanceSamplingLevel[] = ['token', 'sequence'];
export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'k2', 'k3', 'low_var_kl', 'exact'];
export const KL_PLACEMENTS: readonly KlPlacement[] = ['in_loss', 'in_reward'];
export const LOSS_AGG_MODES: readonly LossAggMode[] = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'];

/** The unified objective's knobs. Optional fields are off when absent. */
export interface ObjectiveConfig {
  /** Policy loss: 'ppo_clip' (default), 'cispo', 'gmpo' (geometric mean, token level only), 'sapo' (soft gate), 'pg' (REINFORCE's -A logp). */
  loss_type: LossType;
  /** 'token' (default): rho_{i,t} = exp(logp - oldLogp); 'sequence' (GSPO): s_i = exp(mean_t m (logp - oldLogp)). */
  importance_sampling_level: ImportanceSamplingLevel;
  /** eps_low of ppo_clip: the ratio is clipped below at 1 - epsilon; default 0.2, range [0, 1). */
  epsilon: number;
  /** eps_high of ppo_clip: clipped above at 1 + epsilon_high; defaults to epsilon (DAPO's clip-higher: 0.28), >= 0. */
  epsilon_high: number;
  /** Dual clip c > 1 (ppo_clip, only where A < 0): l = min(l, -c A). Off when absent. */
  clip_ratio_c?: number;
  /** Two-sided cap delta > 1 (ppo_clip): the unclipped term uses min(rho, delta). Off when absent. */
  delta?: number;
  /** CISPO's truncation of the stop-gradient IS weight: min(rho, eps_max); default 5.0, > 0. */
  eps_max: number;
  /** SAPO gate temperature where A > 0: gate = sigmoid(tau (rho - 1)) * 4 / tau; default 1.0, > 0. */
  tau_pos: number;
  /** SAPO gate temperature where A <= 0; default 1.05, > 0. */
  tau_neg: number;
  /** GMPO's sign-aware clip of each token log-ratio to [-gmpo_clip, gmpo_clip] (ratio in [e^-0.4, e^0.4]); default 0.4, > 0. */
  gmpo_clip: number;
  /** KL coefficient; 0 (default) disables the reference model. >= 0. */
  beta: number;
  /** KL estimator used in the loss and for the `kl` metric; default 'k3' (GRPO). */
  kl_estimator: KlEstimator;
  /** 'in_loss' (default, GRPO: + beta * k per token) or 'in_reward' (PPO/REINFORCE++: the objective adds nothing). */
  kl_placement: KlPlacement;
  /** Entropy bonus alpha: l += -alpha * H_t per token; default 0, finite (negative penalizes entropy). */
  entropy_coef: number;
  /** Loss aggregation over the step's sequences; default 'token-mean'. */
  loss_agg_mode: LossAggMode;
  /** Keep in the policy loss only tokens whose entropy is in the top q of the batch; 1 (default) keeps all, 0 the highest one. */
  top_entropy_quantile: number;
  /** Clip-Cov: fraction of tokens (>= 1 token when > 0) with the largest cov(log pi, A) detached from the policy loss; 0 (default) off, [0, 1]. */
  clip_cov_ratio: number;
  /** Clip-Cov: only tokens with clip_cov_lb < cov < clip_cov_ub are candidates; default 1.0. */
  clip_cov_lb: number;
  /** Clip-Cov: upper bound of the candidate covariance band; default 5.0, > clip_cov_lb. */
  clip_cov_ub: number;
  /** KL-Cov: fraction of tokens (>= 1 when > 0) with the largest cov(log pi, A) given + kl_cov_coef * |logp - oldLogp|; 0 (default) off, [0, 1]. */
  kl_cov_ratio: number;
  /** KL-Cov penalty coefficient (verl's ppo_kl_coef); default 1.0, >= 0. */
  kl_cov_coef: number;
  /** Truncated IS correction C: the policy loss is multiplied by min(exp(oldLogp - samplerLogp), C); off when absent, > 0. */
  tis_cap?: number;
}

/** A partial config as users, URLs and presets give it; missing fields take the defaults. */
export type ObjectiveConfigInput = Partial<ObjectiveConfig>;

/** The defaults (GRPO-style ppo_clip, token-mean, no KL); epsilon_high follows epsilon unless given. */
export const DEFAULT_OBJECTIVE_CONFIG: Readonly<ObjectiveConfig> = {
  loss_type: 'ppo_clip',
  importance_sampling_level: 'token',
  epsilon: 0.2,
  epsilon_high: 0.2,
  eps_max: 5.0,
  tau_pos: 1.0,
  tau_neg: 1.05,
  gmpo_clip: 0.4,
  beta: 0,
  kl_estimator: 'k3',
  kl_placement: 'in_loss',
  entropy_coef: 0,
  loss_agg_mode: 'token-mean',
  top_entropy_quantile: 1,
  clip_cov_ratio: 0,
  clip_cov_lb: 1.0,
  clip_cov_ub: 5.0,
  kl_cov_ratio: 0,
  kl_cov_coef: 1.0,
};

/** Named algorithms as objective knobs (ALGORITHMS.md "Presets"; advantage estimators and sampling are set elsewhere). */
export const OBJECTIVE_PRESETS = {
  /** REINFORCE: -A logp (no ratio), summed over tokens and averaged over sequences, no KL. */
  reinforce: { loss_type: 'pg', loss_agg_mode: 'seq-mean-token-sum', beta: 0 },
  /** DeepSeekMath GRPO: ppo_clip, seq-mean-token-mean, k3 KL in the loss with beta 0.04. */
  grpo: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'seq-mean-token-mean', beta: 0.04, kl_estimator: 'k3', kl_placement: 'in_loss' },
  /** Dr. GRPO: ppo_clip, sum over tokens normalized by N * L_max, no KL. */
  dr_grpo: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'seq-mean-token-sum-norm', beta: 0 },
  /** DAPO: clip-higher 0.2 / 0.28, token-mean, no KL. */
  dapo: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, epsilon_high: 0.28, loss_agg_mode: 'token-mean', beta: 0 },
  /** GSPO: sequence-level ratio, epsilons 3e-4 / 4e-4, seq-mean-token-mean, no KL. */
  gspo: { loss_type: 'ppo_clip', importance_sampling_level: 'sequence', epsilon: 3e-4, epsilon_high: 4e-4, loss_agg_mode: 'seq-mean-token-mean', beta: 0 },
  /** CISPO: clipped stop-gradient IS weight (eps_max 5), token-mean, no KL. */
  cispo: { loss_type: 'cispo', importance_sampling_level: 'token', eps_max: 5.0, loss_agg_mode: 'token-mean', beta: 0 },
  /** REINFORCE++: ppo_clip, token-mean; its k1 KL is in the reward (the advantage code), so the objective adds none. */
  reinforce_pp: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'token-mean', kl_estimator: 'k1', kl_placement: 'in_reward' },
  /** RLOO: ppo_clip, seq-mean-token-mean, KL optional (off here). */
  rloo: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'seq-mean-token-mean', beta: 0 },
  /** ReMax: as RLOO (the greedy baseline is the advantage code's). */
  remax: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'seq-mean-token-mean', beta: 0 },
  /** PPO, policy part: ppo_clip, token-mean, k1 KL in the reward (the value loss is the critic's). */
  ppo: { loss_type: 'ppo_clip', importance_sampling_level: 'token', epsilon: 0.2, loss_agg_mode: 'token-mean', kl_estimator: 'k1', kl_placement: 'in_reward' },
} as const satisfies Record<string, ObjectiveConfigInput>;

export type ObjectivePresetName = keyof typeof OBJECTIVE_PRESETS;

const KNOWN_FIELDS = new Set<string>([...Object.keys(DEFAULT_OBJECTIVE_CONFIG), 'clip_ratio_c', 'delta', 'tis_cap']);

function fail(field: string, message: string): never {
  throw new Error(`objective config: ${field} ${message}`);
}

function finite(field: string, v: number): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(field, `must be a finite number, got ${String(v)}`);
}

function oneOf<T extends string>(field: string, v: T, allowed: readonly T[]): void {
  if (!allowed.includes(v)) fail(field, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${JSON.stringify(v)}`);
}

/**
 * Fills defaults into a partial config and validates every field, throwing one clear message per problem
 * (e.g. "objective config: epsilon must be in [0, 1), got 1.5"). epsilon_high defaults to epsilon.
 */
export function resolveObjectiveConfig(input: ObjectiveConfigInput = {}): ObjectiveConfig {
  for (const k of Object.keys(input)) if (!KNOWN_FIELDS.has(k)) fail(k, 'is not a field of the objective config');
  const c: ObjectiveConfig = { ...DEFAULT_OBJECTIVE_CONFIG, ...input };
  if (input.epsilon_high === undefined) c.epsilon_high = c.epsilon;
  // Explicit undefined means "off", the same as absent.
  for (const k of ['clip_ratio_c', 'delta', 'tis_cap'] as const) if (c[k] === undefined) delete c[k];

  oneOf('loss_type', c.loss_type, LOSS_TYPES);
  oneOf('importance_sampling_level', c.importance_sampling_level, IMPORTANCE_SAMPLING_LEVELS);
  oneOf('kl_estimator', c.kl_estimator, KL_ESTIMATORS);
  oneOf('kl_placement', c.kl_placement, KL_PLACEMENTS);
  oneOf('loss_agg_mode', c.loss_agg_mode, LOSS_AGG_MODES);
  const nums = ['epsilon', 'epsilon_high', 'eps_max', 'tau_pos', 'tau_neg', 'gmpo_clip', 'beta', 'entropy_coef', 'top_entropy_quantile',
    'clip_cov_ratio', 'clip_cov_lb', 'clip_cov_ub', 'kl_cov_ratio', 'kl_cov_coef'] as const;
  for (const k of nums) finite(k, c[k]);
  if (!(c.epsilon >= 0 && c.epsilon < 1)) fail('epsilon', `must be in [0, 1), got ${c.epsilon}`);
  if (!(c.epsilon_high >= 0)) fail('epsilon_high', `must be >= 0, got ${c.epsilon_high}`);
  if (c.clip_ratio_c !== undefined) {
    finite('clip_ratio_c', c.clip_ratio_c);
    if (!(c.clip_ratio_c > 1)) fail('clip_ratio_c', `(dual clip) must be > 1, got ${c.clip_ratio_c}`);
  }
  if (c.delta !== undefined) {
    finite('delta', c.delta);
    if (!(c.delta > 1)) fail('delta', `(two-sided cap) must be > 1, got ${c.delta}`);
  }
  if (c.tis_cap !== undefined) {
    finite('tis_cap', c.tis_cap);
    if (!(c.tis_cap > 0)) fail('tis_cap', `(truncated IS cap) must be > 0, got ${c.tis_cap}`);
  }
  for (const k of ['eps_max', 'tau_pos', 'tau_neg', 'gmpo_clip'] as const) if (!(c[k] > 0)) fail(k, `must be > 0, got ${c[k]}`);
  for (const k of ['beta', 'kl_cov_coef'] as const) if (!(c[k] >= 0)) fail(k, `must be >= 0, got ${c[k]}`);
  for (const k of ['top_entropy_quantile', 'clip_cov_ratio', 'kl_cov_ratio'] as const) {
    if (!(c[k] >= 0 && c[k] <= 1)) fail(k, `must be in [0, 1], got ${c[k]}`);
  }
  if (!(c.clip_cov_lb < c.clip_cov_ub)) fail('clip_cov_lb', `must be below clip_cov_ub (${c.clip_cov_ub}), got ${c.clip_cov_lb}`);
  if (c.loss_type === 'gmpo' && c.importance_sampling_level !== 'token') {
    fail('importance_sampling_level', `must be 'token' with loss_type 'gmpo' (GMPO clips token log-ratios before its geometric mean), got '${c.importance_sampling_level}'`);
  }
  if (c.clip_cov_ratio > 0 && c.kl_cov_ratio > 0) fail('clip_cov_ratio', 'and kl_cov_ratio cannot both be on (choose Clip-Cov or KL-Cov)');
  if ((c.clip_cov_ratio > 0 || c.kl_cov_ratio > 0) && (c.loss_type !== 'ppo_clip' || c.importance_sampling_level !== 'token')) {
    fail(c.clip_cov_ratio > 0 ? 'clip_cov_ratio' : 'kl_cov_ratio', "needs loss_type 'ppo_clip' with importance_sampling_level 'token' (token covariance selection)");
  }
  return c;
}

/** The KL coefficient the objective itself applies: beta with kl_placement 'in_loss', else 0. */
export function lossKlCoef(c: ObjectiveConfig): number {
  return c.kl_placement === 'in_loss' ? c.beta : 0;
}
