// The RL training config: every knob of ALGORITHMS.md under its TRL/verl name (snake_case), each documented once
// in RL_FIELDS with a default and a range; validation at the boundary (JSON file, URL, UI, CLI) with messages
// that name the field and the rule; the named algorithms as partial-config PRESETS; derive() for everything
// computed from a config. Not the model's architecture (src/model/config.ts) and not the trainer.

import { MODEL_PRESETS } from '../model/config';
import { getTask, taskFactories, taskNames, type Task } from '../tasks';
import { resolveObjectiveConfig, type ObjectiveConfig } from './objective-config';
import { ADV_ESTIMATORS, GROUP_ESTIMATORS, SCALE_REWARDS, TOKEN_REWARD_ESTIMATORS, type AdvEstimator } from './advantages';

// ---------------------------------------------------------------------------------------------------------
// Field kinds. The config's TypeScript type is derived from RL_FIELDS, so a field exists in exactly one place.

interface NumberField<Nullable extends boolean> {
  kind: 'number';
  doc: string;
  default: Nullable extends true ? number | null : number;
  min: number;
  max: number;
  integer: boolean;
  minExclusive: boolean;
  maxExclusive: boolean;
  nullable: Nullable;
  /** What null means, for nullable fields. */
  nullMeans?: string;
}
interface EnumField<V extends string> {
  kind: 'enum';
  doc: string;
  default: V;
  values: readonly V[];
}
interface BooleanField {
  kind: 'boolean';
  doc: string;
  default: boolean;
}
interface StringField {
  kind: 'string';
  doc: string;
  default: string | null;
  nullMeans: string;
}
interface WeightsField {
  kind: 'weights';
  doc: string;
  default: Record<string, number> | null;
  nullMeans: string;
}

/** One field's specification: documentation, default, and the allowed values. */
export type FieldSpec = NumberField<boolean> | EnumField<string> | BooleanField | StringField | WeightsField;

type ValueOf<F> =
  F extends EnumField<infer V> ? V
  : F extends NumberField<infer Nl> ? (Nl extends true ? number | null : number)
  : F extends BooleanField ? boolean
  : F extends StringField ? string | null
  : F extends WeightsField ? Record<string, number> | null
  : never;

interface NumOpts {
  minExclusive?: boolean;
  maxExclusive?: boolean;
}
const int = (doc: string, def: number, min: number, max: number): NumberField<false> => ({
  kind: 'number', doc, default: def, min, max, integer: true, minExclusive: false, maxExclusive: false, nullable: false,
});
const optInt = (doc: string, nullMeans: string, def: number | null, min: number, max: number): NumberField<true> => ({
  kind: 'number', doc, default: def, min, max, integer: true, minExclusive: false, maxExclusive: false, nullable: true, nullMeans,
});
const real = (doc: string, def: number, min: number, max: number, o: NumOpts = {}): NumberField<false> => ({
  kind: 'number', doc, default: def, min, max, integer: false, minExclusive: !!o.minExclusive, maxExclusive: !!o.maxExclusive, nullable: false,
});
const optReal = (doc: string, nullMeans: string, def: number | null, min: number, max: number, o: NumOpts = {}): NumberField<true> => ({
  kind: 'number', doc, default: def, min, max, integer: false, minExclusive: !!o.minExclusive, maxExclusive: !!o.maxExclusive, nullable: true, nullMeans,
});
const oneOf = <const V extends string>(doc: string, values: readonly V[], def: NoInfer<V>): EnumField<V> => ({ kind: 'enum', doc, default: def, values });
const flag = (doc: string, def: boolean): BooleanField => ({ kind: 'boolean', doc, default: def });
const optString = (doc: string, nullMeans: string): StringField => ({ kind: 'string', doc, default: null, nullMeans });

/** Policy losses (`loss_type`): the per-token loss l_{i,t} of ALGORITHMS.md. `pg` is REINFORCE's -A log pi (no ratio). */
export const LOSS_TYPES = ['ppo_clip', 'cispo', 'gmpo', 'sapo', 'pg'] as const;
export type LossType = (typeof LOSS_TYPES)[number];
/** Loss aggregations (`loss_agg_mode`, verl's names). */
export const LOSS_AGG_MODES = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const;
export type LossAggMode = (typeof LOSS_AGG_MODES)[number];
/** KL estimators (`kl_estimator`): k1 = u, k2 = u^2/2, k3 = e^-u - 1 + u, low_var_kl = k3 clamped to [-10, 10], exact = full-vocabulary KL. */
export const KL_ESTIMATORS = ['k1', 'k2', 'k3', 'low_var_kl', 'exact'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

// Sections, in the order a config panel shows them.
const TASK_FIELDS = {
  task: oneOf('the verifiable environment to train on', taskNames, 'addition'),
  difficulty: optInt("the task's difficulty knob (its meaning and range are the task's)", "the task's default difficulty", null, 0, 1000),
  model: oneOf('model preset to start from when no checkpoint is given (src/model/config.ts)', Object.keys(MODEL_PRESETS) as (keyof typeof MODEL_PRESETS)[], 'nano'),
  checkpoint: optString('warm-start checkpoint to start from (a shipped name, a URL or a directory); overrides model', 'a fresh model of the `model` preset'),
  reward_weights: {
    kind: 'weights',
    doc: 'w_k of r_i = sum_k w_k R_k, by reward function name (accuracy, format, ...); TRL reward_weights',
    default: null,
    nullMeans: "the task's own weights",
  } satisfies WeightsField as WeightsField,
};

const SAMPLING_FIELDS = {
  num_generations: int('G: completions sampled per prompt (the group)', 8, 1, 1024),
  train_batch_size: int('B: prompts per step (verl data.train_batch_size); a step samples N = B*G completions', 8, 1, 4096),
  max_completion_length: optInt('L_max: longest completion in tokens, EOS included; longer ones are cut', "the task's longest accepted completion + 1 (EOS)", null, 1, 8192),
  temperature: real('tau: sampling temperature; log-probs and entropies are computed on logits / tau', 1, 0, 100, { minExclusive: true }),
  top_k: int('sample among the k most likely tokens (0: off)', 0, 0, 262_144),
  top_p: real('nucleus sampling: the smallest set of tokens with total probability >= top_p (1: off)', 1, 0, 1, { minExclusive: true }),
  min_p: real('drop tokens less likely than min_p times the most likely one (0: off)', 0, 0, 1, { maxExclusive: true }),
  dynamic_sampling: flag('DAPO: drop groups whose rewards are all equal and sample more prompts to refill the batch', false),
  max_resample: int('dynamic sampling: extra batches of prompts drawn per step at most before training on what there is', 4, 0, 100),
  overlong_buffer_enable: flag('DAPO overlong shaping: add ((L_max - L_c) - |y|) / L_c to r when |y| > L_max - L_c', false),
  overlong_buffer_len: optInt('L_c: the overlong buffer, in tokens', 'a quarter of max_completion_length (at least 1)', null, 1, 8192),
  mask_truncated_completions: flag('drop completions cut at L_max without EOS from the loss (DAPO overlong filtering)', false),
};

const ADVANTAGE_FIELDS = {
  adv_estimator: oneOf('the advantage estimator (ALGORITHMS.md table; src/rl/advantages.ts)', ADV_ESTIMATORS, 'grpo'),
  scale_rewards: oneOf("grpo's divisor: the group's std, the batch's std (Lite PPO), or none (= Dr. GRPO)", SCALE_REWARDS, 'group'),
  reinforce_baseline_momentum: optReal('reinforce: momentum m of the running-mean baseline b <- m b + (1 - m) mean(r)', 'no baseline (A = r)', null, 0, 1, { maxExclusive: true }),
  gamma: real('gae: discount', 1, 0, 1),
  lam: real('gae: lambda of generalized advantage estimation', 0.95, 0, 1),
};

const LOSS_FIELDS = {
  loss_type: oneOf('per-token policy loss: ppo_clip, cispo, gmpo, sapo, or pg (-A log pi, no ratio)', LOSS_TYPES, 'ppo_clip'),
  importance_sampling_level: oneOf('the ratio rho: per token, or per sequence (GSPO: the geometric mean over the sequence)', ['token', 'sequence'] as const, 'token'),
  epsilon: real('eps_low: lower clip, rho >= 1 - epsilon', 0.2, 0, 1, { maxExclusive: true }),
  epsilon_high: optReal('eps_high: upper clip, rho <= 1 + epsilon_high (DAPO 0.28)', 'epsilon', null, 0, 100),
  clip_ratio_c: optReal('dual clip c (> 1): where A < 0, l = min(l_ppo, -c A)', 'no dual clip', null, 1, 100, { minExclusive: true }),
  delta: optReal('two-sided cap: rho is clamped to at most delta in the unclipped term (> 1 + epsilon_high)', 'no cap', null, 1, 100, { minExclusive: true }),
  eps_max: real('cispo: the cap of the stop-gradient weight, sg(min(rho, eps_max)) (MiniMax-M1: 5)', 5.0, 0, 100, { minExclusive: true }),
  gmpo_clip: real('gmpo: each token log-ratio is clipped (sign-aware) to [-gmpo_clip, gmpo_clip]', 0.4, 0, 10, { minExclusive: true }),
  tau_pos: real('sapo: gate temperature where A > 0', 1.0, 0, 100, { minExclusive: true }),
  tau_neg: real('sapo: gate temperature where A < 0', 1.05, 0, 100, { minExclusive: true }),
  loss_agg_mode: oneOf('how per-token losses are averaged over an optimizer step (verl names)', LOSS_AGG_MODES, 'token-mean'),
  top_entropy_quantile: real('train only on tokens whose entropy is in the top q of the batch (1: all tokens)', 1, 0, 1, { minExclusive: true }),
  clip_cov_ratio: real('Clip-Cov: fraction of tokens with the largest cov(log pi, A) detached from the loss (0: off)', 0, 0, 1),
  clip_cov_lb: real('Clip-Cov: lower bound of the covariance band of candidate tokens', 1.0, -1e6, 1e6),
  clip_cov_ub: real('Clip-Cov: upper bound of the covariance band of candidate tokens', 5.0, -1e6, 1e6),
  kl_cov_ratio: real('KL-Cov: fraction of tokens with the largest cov(log pi, A) given a KL penalty (0: off)', 0, 0, 1),
  kl_cov_coef: real('KL-Cov: coefficient of the penalty kl_cov_coef * |log pi - log pi_old| on those tokens', 1.0, 0, 100),
  tis_cap: optReal('truncated IS: multiply l by min(pi_old_train / pi_sampler, tis_cap) (train/sampler mismatch)', 'no correction (the gap is still reported)', null, 0, 100, { minExclusive: true }),
};

const REGULARIZER_FIELDS = {
  beta: real('KL coefficient to the reference policy (0: no reference model)', 0, 0, 10),
  kl_estimator: oneOf('KL estimator: k1, k2, k3, low_var_kl (k3 clamped to [-10, 10]) or exact (full vocabulary)', KL_ESTIMATORS, 'k3'),
  kl_placement: oneOf('in_loss: + beta k per token (GRPO); in_reward: token reward -beta k1 (PPO, REINFORCE++)', ['in_loss', 'in_reward'] as const, 'in_loss'),
  ref_model_sync_steps: int('reset the reference policy to the current one every this many steps (0: never)', 0, 0, 1_000_000),
  entropy_coef: real('alpha: entropy bonus, l += -alpha H_t (the start value when adaptive; negative penalizes entropy)', 0, -1, 1),
  entropy_target: optReal('adaptive entropy: move alpha by +-entropy_coef_step toward this mean entropy (nats)', 'alpha stays fixed', null, 0, 20),
  entropy_coef_step: real('adaptive entropy: change of alpha per step', 1e-4, 0, 1),
};

const OPTIMIZER_FIELDS = {
  num_iterations: int('mu: passes (PPO epochs) over each batch; 1 with one minibatch makes rho = 1 exactly', 1, 1, 100),
  num_minibatches: int('optimizer steps per pass; divides N = B*G', 1, 1, 65_536),
  learning_rate: real('AdamW peak learning rate of the policy', 3e-4, 0, 1, { minExclusive: true }),
  adam_beta1: real('AdamW beta1', 0.9, 0, 1, { maxExclusive: true }),
  adam_beta2: real('AdamW beta2', 0.999, 0, 1, { maxExclusive: true }),
  adam_epsilon: real('AdamW epsilon', 1e-8, 0, 1, { minExclusive: true }),
  weight_decay: real('AdamW decoupled weight decay', 0, 0, 10),
  max_grad_norm: real('clip the global gradient norm to this (0: no clipping)', 1, 0, 1e6),
  warmup_steps: int('optimizer steps of linear warmup from 0 to learning_rate', 0, 0, 1_000_000),
  lr_schedule: oneOf('learning rate after warmup: constant, cosine or linear decay to 0 at the last optimizer step', ['constant', 'cosine', 'linear'] as const, 'constant'),
  seed: int('seed of sampling, data and initialization', 0, 0, 4_294_967_295),
};

const CRITIC_FIELDS = {
  vf_coef: real('gae: weight of the value loss', 0.1, 0, 100),
  cliprange_value: optReal('gae: eps_v, the clip of V around V_old in the value loss', 'no value clipping', 0.2, 0, 100, { minExclusive: true }),
  critic_learning_rate: optReal('gae: AdamW learning rate of the critic', 'learning_rate', null, 0, 1, { minExclusive: true }),
};

const SCHEDULE_FIELDS = {
  curriculum: oneOf('fixed: always `difficulty`; easy_to_hard: ramp from the easiest to `difficulty` over the run; adaptive: sample difficulties up to `difficulty` with weight 1 - success rate', ['fixed', 'easy_to_hard', 'adaptive'] as const, 'fixed'),
  steps: int('training steps: rollout batches, each giving num_iterations * num_minibatches optimizer steps', 200, 1, 1_000_000),
  eval_every: int('evaluate on held-out items every this many steps (0: never)', 25, 0, 1_000_000),
  eval_items: int('held-out prompts per evaluation', 100, 0, 100_000),
  eval_num_generations: int('samples per held-out prompt at evaluation, for pass@k (k = 1, 2, 4, ... up to this)', 8, 1, 1024),
};

/** Every field of the RL config: one-line doc, default, and range or allowed values. The single source. */
export const RL_FIELDS = {
  ...TASK_FIELDS,
  ...SAMPLING_FIELDS,
  ...ADVANTAGE_FIELDS,
  ...LOSS_FIELDS,
  ...REGULARIZER_FIELDS,
  ...OPTIMIZER_FIELDS,
  ...CRITIC_FIELDS,
  ...SCHEDULE_FIELDS,
};

/** A complete RL training config. Field docs: RL_FIELDS[field].doc. */
export type RLConfig = { [K in keyof typeof RL_FIELDS]: ValueOf<(typeof RL_FIELDS)[K]> };
export type RLField = keyof RLConfig;

/** Field names by section, in panel order. */
export const FIELD_SECTIONS: Readonly<Record<string, readonly RLField[]>> = {
  task: Object.keys(TASK_FIELDS) as RLField[],
  sampling: Object.keys(SAMPLING_FIELDS) as RLField[],
  advantage: Object.keys(ADVANTAGE_FIELDS) as RLField[],
  loss: Object.keys(LOSS_FIELDS) as RLField[],
  regularizers: Object.keys(REGULARIZER_FIELDS) as RLField[],
  optimizer: Object.keys(OPTIMIZER_FIELDS) as RLField[],
  critic: Object.keys(CRITIC_FIELDS) as RLField[],
  schedule: Object.keys(SCHEDULE_FIELDS) as RLField[],
};

const FIELD_NAMES = Object.keys(RL_FIELDS) as RLField[];
const FIELDS: Record<RLField, FieldSpec> = RL_FIELDS;

/** The defaults of every field (the base every preset starts from). */
export const DEFAULT_CONFIG: Readonly<RLConfig> = Object.freeze(
  Object.fromEntries(FIELD_NAMES.map((k) => [k, FIELDS[k].default])) as RLConfig,
);

// ---------------------------------------------------------------------------------------------------------
// Presets: ALGORITHMS.md's table, as partial configs over DEFAULT_CONFIG.

/** Preset names, in ALGORITHMS.md's order. */
export const PRESET_NAMES = ['reinforce', 'rloo', 'grpo', 'dr_grpo', 'dapo', 'gspo', 'cispo', 'reinforce_pp', 'remax', 'ppo'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** Display name and a one-line description of each preset. */
export const PRESET_INFO: Readonly<Record<PresetName, { label: string; description: string }>> = {
  reinforce: { label: 'REINFORCE', description: 'the plain policy gradient -A log pi with A = r' },
  rloo: { label: 'RLOO', description: 'leave-one-out baseline over the group, PPO clip' },
  grpo: { label: 'GRPO (DeepSeekMath)', description: 'group-normalized advantages, per-sequence mean, k3 KL in the loss' },
  dr_grpo: { label: 'Dr. GRPO', description: 'GRPO without the std and length biases' },
  dapo: { label: 'DAPO', description: 'clip-higher, token-mean, dynamic sampling and overlong shaping' },
  gspo: { label: 'GSPO', description: 'sequence-level ratio with tiny clip ranges' },
  cispo: { label: 'CISPO', description: 'clipped stop-gradient importance weights; no token is dropped' },
  reinforce_pp: { label: 'REINFORCE++', description: 'token returns with the k1 KL in the reward, whitened over the batch' },
  remax: { label: 'ReMax', description: 'a greedy rollout per prompt as the baseline' },
  ppo: { label: 'PPO', description: 'a critic, GAE and the value loss' },
};

/**
 * Every preset as exactly the knobs ALGORITHMS.md's table sets; everything else keeps its default. Where the
 * table says only "k1 in reward", beta is the source's: OpenRLHF's init_kl_coef 0.01 for REINFORCE++,
 * TRL's PPOConfig kl_coef 0.05 for PPO. "optional" KL means the preset leaves beta at its default 0.
 */
export const PRESETS = {
  reinforce: { adv_estimator: 'reinforce', loss_type: 'pg', loss_agg_mode: 'seq-mean-token-sum', beta: 0 },
  rloo: { adv_estimator: 'rloo', importance_sampling_level: 'token', loss_type: 'ppo_clip', loss_agg_mode: 'seq-mean-token-mean' },
  grpo: {
    adv_estimator: 'grpo', scale_rewards: 'group', importance_sampling_level: 'token', loss_type: 'ppo_clip',
    loss_agg_mode: 'seq-mean-token-mean', beta: 0.04, kl_estimator: 'k3', kl_placement: 'in_loss',
  },
  dr_grpo: { adv_estimator: 'dr_grpo', importance_sampling_level: 'token', loss_type: 'ppo_clip', loss_agg_mode: 'seq-mean-token-sum-norm', beta: 0 },
  dapo: {
    adv_estimator: 'grpo', scale_rewards: 'group', importance_sampling_level: 'token', loss_type: 'ppo_clip', epsilon: 0.2,
    epsilon_high: 0.28, loss_agg_mode: 'token-mean', beta: 0, dynamic_sampling: true, overlong_buffer_enable: true,
  },
  gspo: {
    adv_estimator: 'grpo', scale_rewards: 'group', importance_sampling_level: 'sequence', loss_type: 'ppo_clip', epsilon: 3e-4,
    epsilon_high: 4e-4, loss_agg_mode: 'seq-mean-token-mean', beta: 0,
  },
  cispo: { adv_estimator: 'grpo', scale_rewards: 'group', importance_sampling_level: 'token', loss_type: 'cispo', loss_agg_mode: 'token-mean', beta: 0 },
  reinforce_pp: {
    adv_estimator: 'reinforce_pp', importance_sampling_level: 'token', loss_type: 'ppo_clip', loss_agg_mode: 'token-mean',
    beta: 0.01, kl_estimator: 'k1', kl_placement: 'in_reward',
  },
  remax: { adv_estimator: 'remax', importance_sampling_level: 'token', loss_type: 'ppo_clip', loss_agg_mode: 'seq-mean-token-mean' },
  ppo: {
    adv_estimator: 'gae', importance_sampling_level: 'token', loss_type: 'ppo_clip', loss_agg_mode: 'token-mean', beta: 0.05,
    kl_estimator: 'k1', kl_placement: 'in_reward', gamma: 1, lam: 0.95, vf_coef: 0.1,
  },
} as const satisfies Record<PresetName, Partial<RLConfig>>;

/** True if `name` is one of PRESET_NAMES. */
export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}

// ---------------------------------------------------------------------------------------------------------
// Validation.

/** A config that cannot be used, with every problem found (each message starts with the field it is about). */
export class RLConfigError extends Error {
  override name = 'RLConfigError';
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? `invalid RL config: ${problems[0]}` : `invalid RL config:\n  ${problems.join('\n  ')}`);
  }
}

/** The outcome of checking a raw config: errors make it unusable; warnings name knobs that have no effect. */
export interface ConfigCheck {
  errors: string[];
  warnings: string[];
}

/**
 * Every problem of a raw (complete) config. Unknown fields and bad values first; the cross-field rules only
 * run once every field is individually valid.
 */
export function checkConfig(raw: Readonly<Record<string, unknown>>): ConfigCheck {
  const errors: string[] = [];
  for (const key of Object.keys(raw)) if (!(key in RL_FIELDS)) errors.push(unknownFieldMessage(key));
  for (const key of FIELD_NAMES) {
    if (!(key in raw)) errors.push(`${key}: missing (${FIELDS[key].doc})`);
    else {
      const problem = valueProblem(key, raw[key]);
      if (problem) errors.push(problem);
    }
  }
  if (errors.length) return { errors, warnings: [] };
  const c = raw as RLConfig;
  return { errors: crossFieldErrors(c), warnings: configWarnings(c) };
}

/** Returns the config when valid; throws RLConfigError listing every problem otherwise. */
export function validateConfig(raw: Readonly<Record<string, unknown>>): RLConfig {
  const { errors } = checkConfig(raw);
  if (errors.length) throw new RLConfigError(errors);
  return { ...(raw as RLConfig) };
}

/**
 * The full validated config of `preset` (null: the defaults alone) with `overrides` applied. Throws
 * RLConfigError for an unknown preset, an unknown override field (with a suggestion) or any invalid value.
 */
export function resolveConfig(preset: PresetName | null, overrides: Readonly<Record<string, unknown>> = {}): RLConfig {
  if (preset !== null && !isPresetName(preset)) {
    throw new RLConfigError([`preset: must be one of ${PRESET_NAMES.join(', ')}; got ${JSON.stringify(preset)}${suggestion(String(preset), PRESET_NAMES)}`]);
  }
  const merged: Record<string, unknown> = { ...DEFAULT_CONFIG, ...(preset === null ? {} : PRESETS[preset]), ...overrides };
  // A copy, so the config never aliases the caller's object (arrays stay arrays, and are refused by validation).
  if (merged.reward_weights && typeof merged.reward_weights === 'object' && !Array.isArray(merged.reward_weights)) merged.reward_weights = { ...(merged.reward_weights as object) };
  return validateConfig(merged);
}

/** Rendering of a number field's range: [0, 1), (0, 100], ... */
export function rangeText(spec: NumberField<boolean>): string {
  return `${spec.minExclusive ? '(' : '['}${spec.min}, ${spec.max}${spec.maxExclusive ? ')' : ']'}`;
}

function valueProblem(key: RLField, v: unknown): string | null {
  const spec = FIELDS[key];
  const got = describe(v);
  switch (spec.kind) {
    case 'number': {
      if (v === null) return spec.nullable ? null : `${key}: must be a number in ${rangeText(spec)}, got null`;
      if (typeof v !== 'number' || !Number.isFinite(v)) return `${key}: must be a ${spec.integer ? 'whole ' : ''}number in ${rangeText(spec)}${spec.nullable ? ` or null (${spec.nullMeans})` : ''}, got ${got}`;
      if (spec.integer && !Number.isInteger(v)) return `${key}: must be a whole number, got ${v}`;
      const low = spec.minExclusive ? v <= spec.min : v < spec.min;
      const high = spec.maxExclusive ? v >= spec.max : v > spec.max;
      if (low || high) return `${key}: must be in ${rangeText(spec)}, got ${v}`;
      return null;
    }
    case 'enum':
      if (typeof v === 'string' && spec.values.includes(v)) return null;
      return `${key}: must be one of ${spec.values.join(', ')}; got ${got}${typeof v === 'string' ? suggestion(v, spec.values) : ''}`;
    case 'boolean':
      return typeof v === 'boolean' ? null : `${key}: must be true or false, got ${got}`;
    case 'string':
      if (v === null || (typeof v === 'string' && v.trim() !== '')) return null;
      return `${key}: must be a non-empty string or null (${spec.nullMeans}), got ${got}`;
    case 'weights': {
      if (v === null) return null;
      if (typeof v !== 'object' || Array.isArray(v)) return `${key}: must be an object of reward function name -> weight, or null (${spec.nullMeans}), got ${got}`;
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) return `${key}: needs at least one reward function (or null: ${spec.nullMeans})`;
      for (const [name, w] of entries) {
        if (!/^[A-Za-z_][\w.-]*$/.test(name)) return `${key}: reward function name ${JSON.stringify(name)} must start with a letter or _ and use letters, digits, _ . -`;
        if (typeof w !== 'number' || !Number.isFinite(w)) return `${key}: the weight of ${name} must be a finite number, got ${describe(w)}`;
        if (w < -100 || w > 100) return `${key}: the weight of ${name} must be in [-100, 100], got ${w}`;
      }
      return null;
    }
  }
}

/** The rules between fields. Each message starts with the field to change and states the rule. */
function crossFieldErrors(c: RLConfig): string[] {
  const e: string[] = [];
  const N = c.train_batch_size * c.num_generations;
  const factory = taskFactories[c.task];
  const range = factory.difficultyRange;
  if (c.difficulty !== null && (c.difficulty < range.min || c.difficulty > range.max)) {
    e.push(`difficulty: ${c.task}'s difficulty (${range.meaning}) is a whole number in [${range.min}, ${range.max}], got ${c.difficulty}`);
  }
  if (GROUP_ESTIMATORS.includes(c.adv_estimator) && c.num_generations < 2) {
    e.push(
      c.adv_estimator === 'rloo'
        ? `num_generations: rloo's leave-one-out baseline divides by G - 1 and needs num_generations >= 2, got ${c.num_generations}`
        : `num_generations: adv_estimator '${c.adv_estimator}' compares the completions of a group and needs num_generations >= 2, got ${c.num_generations}`,
    );
  }
  if (c.adv_estimator === 'gae' && c.vf_coef <= 0) e.push(`vf_coef: adv_estimator 'gae' learns a critic and needs vf_coef > 0, got ${c.vf_coef}`);
  if (c.dynamic_sampling && c.num_generations < 2) {
    e.push(`dynamic_sampling: drops groups whose rewards are all equal, and with num_generations ${c.num_generations} every group is; use num_generations >= 2`);
  }
  if (N % c.num_minibatches !== 0) e.push(`num_minibatches: must divide the N = train_batch_size * num_generations = ${N} sequences of a step, got ${c.num_minibatches}`);
  if (c.importance_sampling_level === 'sequence' && c.loss_type === 'cispo') {
    e.push("importance_sampling_level: 'sequence' is not defined for loss_type 'cispo' (CISPO weights each token's log-prob by that token's own stop-gradient ratio); use 'token'");
  }
  if (c.importance_sampling_level === 'sequence' && c.loss_type === 'gmpo') {
    e.push("importance_sampling_level: loss_type 'gmpo' forms its own sequence ratio (the geometric mean of clipped token ratios); use 'token'");
  }
  if (c.epsilon_high !== null && c.epsilon_high < c.epsilon) {
    e.push(`epsilon_high: must be >= epsilon (clip-higher only widens the upper bound), got ${c.epsilon_high} < ${c.epsilon}`);
  }
  const epsHigh = c.epsilon_high ?? c.epsilon;
  if (c.delta !== null && c.loss_type === 'ppo_clip' && c.delta <= 1 + epsHigh) {
    e.push(`delta: the cap on rho must exceed the upper clip bound 1 + epsilon_high = ${1 + epsHigh}, got ${c.delta}`);
  }
  if (c.clip_cov_lb >= c.clip_cov_ub) e.push(`clip_cov_lb: must be below clip_cov_ub (${c.clip_cov_ub}), got ${c.clip_cov_lb}`);
  if (c.clip_cov_ratio > 0 && c.kl_cov_ratio > 0) e.push('clip_cov_ratio: Clip-Cov and KL-Cov (kl_cov_ratio) cannot both be on; choose one');
  if ((c.clip_cov_ratio > 0 || c.kl_cov_ratio > 0) && (c.loss_type !== 'ppo_clip' || c.importance_sampling_level !== 'token')) {
    e.push(`${c.clip_cov_ratio > 0 ? 'clip_cov_ratio' : 'kl_cov_ratio'}: covariance token selection needs loss_type 'ppo_clip' with importance_sampling_level 'token'`);
  }
  if (c.kl_placement === 'in_reward' && c.beta > 0 && !TOKEN_REWARD_ESTIMATORS.includes(c.adv_estimator)) {
    e.push(
      `kl_placement: 'in_reward' puts -beta * k1 in per-token rewards, which only ${TOKEN_REWARD_ESTIMATORS.join(', ')} use; ` +
        `adv_estimator '${c.adv_estimator}' needs kl_placement 'in_loss' (or beta 0)`,
    );
  }
  const task = taskOf(c);
  if (task) {
    const L = c.max_completion_length ?? task.maxCompletionLength + 1;
    if (c.overlong_buffer_enable && c.overlong_buffer_len !== null && c.overlong_buffer_len >= L) {
      e.push(`overlong_buffer_len: L_c must be less than max_completion_length (${L}) so that L_max - L_c > 0, got ${c.overlong_buffer_len}`);
    }
    if (c.checkpoint === null) {
      const ctx = MODEL_PRESETS[c.model].contextLength;
      const need = 1 + task.maxPromptLength + L;
      if (need > ctx) {
        e.push(
          `max_completion_length: BOS + the longest ${c.task} prompt (${task.maxPromptLength}) + max_completion_length (${L}) = ${need} tokens, ` +
            `more than the ${c.model} model's context of ${ctx}; shorten completions, lower the difficulty or pick a larger model`,
        );
      }
    }
  }
  return e;
}

/** Knobs that are set but have no effect, and combinations that work but are probably not what was meant. */
export function configWarnings(c: RLConfig): string[] {
  const w: string[] = [];
  const set = (k: RLField) => !sameValue(c[k], DEFAULT_CONFIG[k]);
  const ignored = (k: RLField, why: string) => {
    if (set(k)) w.push(`${k}: ignored ${why}`);
  };
  if (c.kl_placement === 'in_reward' && c.beta === 0) w.push("kl_placement: 'in_reward' has no effect with beta 0 (no KL term at all)");
  if (c.kl_placement === 'in_reward' && c.beta > 0 && c.kl_estimator !== 'k1') {
    w.push(`kl_estimator: '${c.kl_estimator}' is not used with kl_placement 'in_reward', where the token reward is -beta * k1 (it is still plotted)`);
  }
  if (c.adv_estimator !== 'grpo') ignored('scale_rewards', `by adv_estimator '${c.adv_estimator}' (only grpo divides by a std)`);
  if (c.adv_estimator !== 'reinforce') ignored('reinforce_baseline_momentum', `by adv_estimator '${c.adv_estimator}' (only reinforce keeps a running baseline)`);
  if (c.adv_estimator !== 'gae') {
    for (const k of ['gamma', 'lam', 'vf_coef', 'cliprange_value', 'critic_learning_rate'] as const) ignored(k, `without a critic (adv_estimator '${c.adv_estimator}', not gae)`);
  }
  if (c.loss_type !== 'ppo_clip') {
    for (const k of ['epsilon', 'epsilon_high', 'clip_ratio_c', 'delta'] as const) ignored(k, `by loss_type '${c.loss_type}' (the clip range, dual clip and cap belong to ppo_clip)`);
  }
  if (c.loss_type !== 'sapo') for (const k of ['tau_pos', 'tau_neg'] as const) ignored(k, `by loss_type '${c.loss_type}' (only sapo gates)`);
  if (c.loss_type !== 'cispo') ignored('eps_max', `by loss_type '${c.loss_type}' (only cispo caps its weight)`);
  if (c.loss_type === 'cispo' && c.eps_max < 1) w.push(`eps_max: ${c.eps_max} < 1 caps every ratio below 1, shrinking even on-policy updates`);
  if (c.loss_type !== 'gmpo') ignored('gmpo_clip', `by loss_type '${c.loss_type}' (only gmpo clips log-ratios)`);
  if (c.clip_cov_ratio === 0) for (const k of ['clip_cov_lb', 'clip_cov_ub'] as const) ignored(k, 'while clip_cov_ratio is 0');
  if (c.kl_cov_ratio === 0) ignored('kl_cov_coef', 'while kl_cov_ratio is 0');
  if (c.loss_type === 'pg') {
    ignored('importance_sampling_level', "by loss_type 'pg' (-A log pi has no ratio)");
    if (c.num_iterations > 1 || c.num_minibatches > 1) {
      w.push("loss_type: 'pg' has no importance ratio, so every optimizer step after the first on a batch is off-policy without correction; use ppo_clip or cispo with several updates per batch");
    }
  }
  if (!c.dynamic_sampling) ignored('max_resample', 'without dynamic_sampling');
  if (c.dynamic_sampling && c.num_generations >= 2 && !GROUP_ESTIMATORS.includes(c.adv_estimator)) {
    w.push(`dynamic_sampling: drops groups whose rewards are all equal, which still carry signal for adv_estimator '${c.adv_estimator}'`);
  }
  if (!c.overlong_buffer_enable) ignored('overlong_buffer_len', 'while overlong_buffer_enable is false');
  if (c.entropy_target !== null && c.entropy_coef_step === 0) w.push('entropy_coef_step: 0 keeps alpha fixed, so entropy_target has no effect');
  if (c.entropy_target === null) ignored('entropy_coef_step', 'without entropy_target (alpha is fixed)');
  if (c.beta === 0) {
    ignored('ref_model_sync_steps', 'with beta 0 (no reference model)');
    ignored('kl_estimator', 'with beta 0 (no KL term)');
  }
  const optimizerSteps = c.steps * c.num_iterations * c.num_minibatches;
  if (c.warmup_steps >= optimizerSteps) w.push(`warmup_steps: ${c.warmup_steps} is not less than the run's ${optimizerSteps} optimizer steps, so the learning rate never reaches its peak`);
  if (c.eval_every > c.steps) w.push(`eval_every: ${c.eval_every} is more than steps (${c.steps}), so the run never evaluates before the end`);
  if (c.curriculum !== 'fixed') {
    const r = taskFactories[c.task].difficultyRange;
    if ((c.difficulty ?? r.default) === r.min) w.push(`curriculum: '${c.curriculum}' has nothing to vary: difficulty is ${c.task}'s easiest (${r.min})`);
  }
  return w;
}

// ---------------------------------------------------------------------------------------------------------
// Derived quantities.

/** Everything computed from a config, in one place. */
export interface DerivedConfig {
  /** N = B*G sequences sampled per step (before dynamic sampling refills). */
  sequencesPerStep: number;
  /** Sequences per optimizer step: N / num_minibatches. */
  minibatchSize: number;
  /** Optimizer steps per batch: num_iterations * num_minibatches. */
  optimizerStepsPerBatch: number;
  /** Optimizer steps of the whole run: steps * optimizerStepsPerBatch. */
  totalOptimizerSteps: number;
  /** True when beta > 0: a frozen reference policy is kept and run. */
  needsReference: boolean;
  /** True for adv_estimator gae: a critic is trained beside the policy. */
  needsCritic: boolean;
  /**
   * True when each batch gets exactly one optimizer step (num_iterations 1, one minibatch): pi_theta = pi_old
   * at that step, so rho = 1 exactly and clipping never fires. The UI says so rather than hiding it.
   */
  ratioIsOne: boolean;
  /** False for loss_type pg, which has no importance ratio. */
  usesRatio: boolean;
  /** Extra greedy rollouts per step: B for remax (its baseline), else 0. */
  greedyRolloutsPerStep: number;
  /** Rollouts per step at most: N * (1 + max_resample with dynamic sampling) + greedy ones. */
  maxRolloutsPerStep: number;
  /** The difficulty in effect (the task's default when the config says null). */
  difficulty: number;
  /** L_max in tokens, EOS included. */
  maxCompletionLength: number;
  /** Longest prompt in tokens, BOS included. */
  maxPromptTokens: number;
  /** Longest sequence a step needs: maxPromptTokens + maxCompletionLength (must fit the model's context). */
  sequenceLength: number;
  /** The upper clip epsilon in effect (epsilon_high, or epsilon). */
  epsilonHigh: number;
  /** L_c in tokens when overlong shaping is on, else 0. */
  overlongBufferLen: number;
  /** beta > 0 and kl_placement in_loss. */
  klInLoss: boolean;
  /** beta > 0 and kl_placement in_reward. */
  klInReward: boolean;
  /** The critic's learning rate (critic_learning_rate, or learning_rate). */
  criticLearningRate: number;
  /** True when entropy_coef adapts toward entropy_target. */
  adaptiveEntropy: boolean;
  /** The reward weights in effect (reward_weights, or the task's own). */
  rewardWeights: Record<string, number>;
  /** k values reported as pass@k at evaluation: powers of 2 up to eval_num_generations, and it. */
  passAtKs: number[];
}

/** The derived quantities of a valid config (validate first: derive trusts its input). */
export function derive(c: RLConfig): DerivedConfig {
  const task = getTask(c.task, c.difficulty ?? undefined);
  const N = c.train_batch_size * c.num_generations;
  const L = c.max_completion_length ?? task.maxCompletionLength + 1;
  const greedy = c.adv_estimator === 'remax' ? c.train_batch_size : 0;
  const optimizerStepsPerBatch = c.num_iterations * c.num_minibatches;
  const passAtKs: number[] = [];
  for (let k = 1; k <= c.eval_num_generations; k *= 2) passAtKs.push(k);
  if (passAtKs[passAtKs.length - 1] !== c.eval_num_generations) passAtKs.push(c.eval_num_generations);
  return {
    sequencesPerStep: N,
    minibatchSize: N / c.num_minibatches,
    optimizerStepsPerBatch,
    totalOptimizerSteps: c.steps * optimizerStepsPerBatch,
    needsReference: c.beta > 0,
    needsCritic: c.adv_estimator === 'gae',
    ratioIsOne: c.num_iterations === 1 && c.num_minibatches === 1,
    usesRatio: c.loss_type !== 'pg',
    greedyRolloutsPerStep: greedy,
    maxRolloutsPerStep: N * (1 + (c.dynamic_sampling ? c.max_resample : 0)) + greedy * (1 + (c.dynamic_sampling ? c.max_resample : 0)),
    difficulty: task.difficulty,
    maxCompletionLength: L,
    maxPromptTokens: task.maxPromptLength + 1,
    sequenceLength: task.maxPromptLength + 1 + L,
    epsilonHigh: c.epsilon_high ?? c.epsilon,
    overlongBufferLen: c.overlong_buffer_enable ? (c.overlong_buffer_len ?? Math.max(1, Math.floor(L / 4))) : 0,
    klInLoss: c.beta > 0 && c.kl_placement === 'in_loss',
    klInReward: c.beta > 0 && c.kl_placement === 'in_reward',
    criticLearningRate: c.critic_learning_rate ?? c.learning_rate,
    adaptiveEntropy: c.entropy_target !== null,
    rewardWeights: c.reward_weights ? { ...c.reward_weights } : { accuracy: task.weights.accuracy, format: task.weights.format },
    passAtKs,
  };
}

/**
 * The unified objective's knobs (objective-config.ts) for a valid RL config. `entropyCoef` overrides entropy_coef
 * (the adaptive entropy controller moves it during a run).
 */
export function objectiveConfig(c: RLConfig, entropyCoef: number = c.entropy_coef): ObjectiveConfig {
  return resolveObjectiveConfig({
    loss_type: c.loss_type,
    importance_sampling_level: c.importance_sampling_level,
    epsilon: c.epsilon,
    epsilon_high: c.epsilon_high ?? c.epsilon,
    ...(c.clip_ratio_c !== null ? { clip_ratio_c: c.clip_ratio_c } : {}),
    ...(c.delta !== null ? { delta: c.delta } : {}),
    ...(c.tis_cap !== null ? { tis_cap: c.tis_cap } : {}),
    eps_max: c.eps_max,
    tau_pos: c.tau_pos,
    tau_neg: c.tau_neg,
    gmpo_clip: c.gmpo_clip,
    beta: c.beta,
    kl_estimator: c.kl_estimator,
    kl_placement: c.kl_placement,
    entropy_coef: entropyCoef,
    loss_agg_mode: c.loss_agg_mode,
    top_entropy_quantile: c.top_entropy_quantile,
    clip_cov_ratio: c.clip_cov_ratio,
    clip_cov_lb: c.clip_cov_lb,
    clip_cov_ub: c.clip_cov_ub,
    kl_cov_ratio: c.kl_cov_ratio,
    kl_cov_coef: c.kl_cov_coef,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Boundaries: JSON text and URL parameters.

/**
 * A config from JSON text: an object of fields, optionally with "preset" naming the preset the other fields
 * override (absent: the defaults). Bad JSON is reported with line, column and what was expected.
 */
export function parseConfigJson(text: string): RLConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RLConfigError([jsonErrorMessage(text, err)]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RLConfigError([`config JSON: the top level must be an object of fields, got ${describe(value)}`]);
  }
  const { preset, ...fields } = value as Record<string, unknown>;
  if (preset !== undefined && preset !== null && typeof preset !== 'string') throw new RLConfigError([`preset: must be a preset name or null, got ${describe(preset)}`]);
  return resolveConfig((preset ?? null) as PresetName | null, fields);
}

/** The JSON form of a config (with its preset, if given, and only the fields that differ from it). */
export function configToJson(c: RLConfig, preset: PresetName | null = null): string {
  const base = resolveConfig(preset);
  const out: Record<string, unknown> = preset === null ? {} : { preset };
  for (const k of FIELD_NAMES) if (preset === null || !sameValue(c[k], base[k])) out[k] = c[k];
  return JSON.stringify(out, null, 2);
}

/**
 * URL parameters for a shareable link: `preset` (when given) and only the fields whose values differ from
 * that preset's. configFromUrlParams(configToUrlParams(c, p)) equals c.
 */
export function configToUrlParams(c: RLConfig, preset: PresetName | null): URLSearchParams {
  const base = resolveConfig(preset);
  const p = new URLSearchParams();
  if (preset !== null) p.set('preset', preset);
  for (const k of FIELD_NAMES) if (!sameValue(c[k], base[k])) p.set(k, encodeValue(c[k]));
  return p;
}

/**
 * The config a shareable URL describes: `preset` (absent: the defaults) and field overrides. Unknown parameters
 * are errors with a suggestion, except those named in `ignore` (the page's own parameters).
 */
export function configFromUrlParams(params: URLSearchParams, opts: { ignore?: readonly string[] } = {}): RLConfig {
  const errors: string[] = [];
  const overrides: Record<string, unknown> = {};
  const seen = new Set<string>();
  let preset: PresetName | null = null;
  for (const [key, text] of params) {
    if (opts.ignore?.includes(key)) continue;
    if (seen.has(key)) {
      errors.push(`${key}: given twice in the URL`);
      continue;
    }
    seen.add(key);
    if (key === 'preset') {
      if (isPresetName(text)) preset = text;
      else errors.push(`preset: must be one of ${PRESET_NAMES.join(', ')}; got ${JSON.stringify(text)}${suggestion(text, PRESET_NAMES)}`);
    } else if (!(key in RL_FIELDS)) {
      errors.push(unknownFieldMessage(key));
    } else {
      const parsed = decodeValue(key as RLField, text);
      if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) errors.push(parsed.error as string);
      else overrides[key] = parsed;
    }
  }
  if (errors.length) throw new RLConfigError(errors);
  return resolveConfig(preset, overrides);
}

/** One field's value as URL text: numbers as JS prints them, null as '', weights as name:w,name:w. */
function encodeValue(v: RLConfig[RLField]): string {
  if (v === null) return '';
  if (typeof v === 'object') return Object.entries(v).map(([k, w]) => `${k}:${w}`).join(',');
  return String(v);
}

/** Parses one field's text (URL parameter or CLI flag) to its type; `{ error }` names the field and what was expected. */
export function decodeValue(key: RLField, text: string): unknown {
  const spec = FIELDS[key];
  const s = text.trim();
  const isNull = s === '' || s === 'null';
  switch (spec.kind) {
    case 'number': {
      if (isNull) return spec.nullable ? null : { error: `${key}: must be a number in ${rangeText(spec)}, got an empty value` };
      const v = Number(s);
      if (!Number.isFinite(v)) return { error: `${key}: must be a number in ${rangeText(spec)}${spec.nullable ? ' or empty (null)' : ''}, got ${JSON.stringify(text)}` };
      return v;
    }
    case 'boolean':
      if (s === 'true' || s === '1') return true;
      if (s === 'false' || s === '0') return false;
      return { error: `${key}: must be true or false, got ${JSON.stringify(text)}` };
    case 'enum':
      return s;
    case 'string':
      return isNull ? null : s;
    case 'weights': {
      if (isNull) return null;
      if (s.startsWith('{')) {
        try {
          return JSON.parse(s) as unknown;
        } catch {
          return { error: `${key}: not valid JSON: ${JSON.stringify(text)}` };
        }
      }
      const out: Record<string, number> = {};
      for (const part of s.split(',')) {
        const m = /^\s*([^:\s]+)\s*:\s*(\S+)\s*$/.exec(part);
        const w = m ? Number(m[2]) : NaN;
        if (!m || !Number.isFinite(w)) return { error: `${key}: expected name:weight pairs separated by commas (accuracy:0.8,format:0.2), got ${JSON.stringify(text)}` };
        out[m[1]] = w;
      }
      return out;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Messages: suggestions for misspelled names, and where JSON went wrong.

/** Names other trainers use for these knobs (TRL, verl, OpenRLHF, HF TrainingArguments). */
const ALIASES: Readonly<Record<string, RLField>> = {
  kl_coef: 'beta',
  init_kl_coef: 'beta',
  kl_loss_coef: 'beta',
  kl_loss_type: 'kl_estimator',
  use_kl_in_reward: 'kl_placement',
  use_kl_loss: 'kl_placement',
  lr: 'learning_rate',
  cliprange: 'epsilon',
  clip_range: 'epsilon',
  clip_ratio: 'epsilon',
  clip_ratio_low: 'epsilon',
  clip_ratio_high: 'epsilon_high',
  ppo_epochs: 'num_iterations',
  num_ppo_epochs: 'num_iterations',
  ppo_mini_batch_size: 'num_minibatches',
  lambda: 'lam',
  gae_lambda: 'lam',
  entropy_coeff: 'entropy_coef',
  ent_coef: 'entropy_coef',
  n: 'num_generations',
  rollout_n: 'num_generations',
  n_samples_per_prompt: 'num_generations',
  max_new_tokens: 'max_completion_length',
  response_length: 'max_completion_length',
  lr_scheduler_type: 'lr_schedule',
  warmup_ratio: 'warmup_steps',
  max_steps: 'steps',
  total_training_steps: 'steps',
  eval_steps: 'eval_every',
  critic_lr: 'critic_learning_rate',
  vf_clip: 'cliprange_value',
  batch_size: 'train_batch_size',
  per_device_train_batch_size: 'train_batch_size',
  loss_mode: 'loss_type',
  overlong_buffer: 'overlong_buffer_enable',
};

function unknownFieldMessage(key: string): string {
  const alias = ALIASES[key] ?? ALIASES[key.toLowerCase()];
  const hint = alias ? `; did you mean ${alias}? (${key} is another trainer's name for it)` : suggestion(key, FIELD_NAMES);
  return `unknown field ${key}${hint}`;
}

/** "; did you mean X?" when some candidate is a small edit away (or the same name in another case/spelling), else "". */
export function suggestion(name: string, candidates: readonly string[]): string {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s.]/g, '');
  const same = candidates.find((c) => norm(c) === norm(name));
  if (same !== undefined) return `; did you mean ${same}?`;
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  const limit = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  return best !== null && bestD <= limit ? `; did you mean ${best}?` : '';
}

/** Levenshtein distance (insertions, deletions, substitutions), with adjacent transpositions counted as one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** "config JSON: line L, column C: <what was expected>" plus the line and a caret. */
function jsonErrorMessage(text: string, err: unknown): string {
  const located = locateJsonError(text);
  if (!located) return `config JSON: ${err instanceof Error ? err.message : String(err)}`;
  const before = text.slice(0, located.pos);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = located.pos - lineStart + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  const lineText = text.slice(lineStart, lineEnd < 0 ? text.length : lineEnd);
  const found = located.pos >= text.length ? 'the end of the text' : JSON.stringify(text[located.pos]);
  return `config JSON: line ${line}, column ${column} (position ${located.pos}): expected ${located.expected}, found ${found}\n    ${lineText}\n    ${' '.repeat(column - 1)}^`;
}

/** Where a JSON text first goes wrong and what the grammar expected there (null if it parses). */
export function locateJsonError(text: string): { pos: number; expected: string } | null {
  let i = 0;
  class Fail {
    constructor(readonly pos: number, readonly expected: string) {}
  }
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) throw new Fail(i + k, `${JSON.stringify(word)}`);
    i += word.length;
  };
  const string = () => {
    if (text[i] !== '"') throw new Fail(i, 'a string in double quotes');
    i++;
    while (i < text.length && text[i] !== '"') {
      const ch = text.charCodeAt(i);
      if (ch < 0x20) throw new Fail(i, 'no raw control character inside a string (write \\n, \\t)');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) throw new Fail(i + k, 'four hex digits after \\u');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '') || i >= text.length) throw new Fail(i, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      }
      i++;
    }
    if (i >= text.length) throw new Fail(i, 'a closing " of the string');
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) throw new Fail(i, 'a value (object, array, string, number, true, false or null)');
    i += m[0].length;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fail(i, 'a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') throw new Fail(i, "':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        throw new Fail(i, "',' or '}' after a property value");
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        throw new Fail(i, "',' or ']' after an array element");
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    number();
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Fail(i, 'the end of the text after the top-level value');
    return null;
  } catch (e) {
    if (e instanceof Fail) return { pos: e.pos, expected: e.expected };
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------

function taskOf(c: RLConfig): Task | null {
  try {
    return getTask(c.task, c.difficulty ?? undefined);
  } catch {
    return null; // the difficulty error is reported on its own
  }
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object' && v !== null) return 'an object';
  return String(v);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
  }
  return false;
}

/** For the UI's estimator picker: which estimators compare within a group (need G >= 2). */
export function isGroupEstimator(e: AdvEstimator): boolean {
  return GROUP_ESTIMATORS.includes(e);
}
