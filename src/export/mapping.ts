// How each knob of an RL config is written for TRL, verl and OpenRLHF: one row per config field, with the
// settings it becomes in that trainer or a comment saying there is none and what the lab does. The names come from
// the schema's foreign names (src/schema/fields.ts OtherNames on RL_FIELDS, and valueNames for an enum value's
// spelling there); this file only converts values whose meaning or unit differs (a count that is a ratio there, a
// pair that is two fields here).
// Not the rendering of scripts (render.ts) and not the trainers' field lists (fixtures/, read by the tests).

import {
  FIELD_NAMES,
  FIELD_SPECS,
  RL_FIELDS,
  derive,
  type DerivedConfig,
  type RLConfig,
  type RLField,
} from '../schema/config';
import type { ValueNames } from '../schema/fields';
import { rolloutCorrectionOf, type RolloutCorrection } from '../schema/objective';
import { parseLoraTargets, type LoraTarget } from '../core/lora-layout';
import trlFields from './fixtures/trl.json';
import { ExportValueError } from '../core/quote';
import { OPENRLHF_FLAGS, withDeclaredBooleans } from './declarations';
import { dppoCap, isStraightThroughKl, lossFormula, type LossType } from '../schema/objective';

/** A loss_type's per-token loss as the schema writes it: its formula, and its symbols' meaning. */
function lossText(type: LossType): string {
  const { formula, where } = lossFormula(type);
  return where ? `${formula}, ${where}` : formula;
}

/** The trainers an experiment exports to. */
export const EXPORT_TARGETS = ['trl', 'verl', 'openrlhf'] as const;
export type ExportTarget = (typeof EXPORT_TARGETS)[number];

/** Display names of the trainers. */
export const TARGET_LABELS: Readonly<Record<ExportTarget, string>> = { trl: 'TRL', verl: 'verl', openrlhf: 'OpenRLHF' };

export type SettingValue = string | number | boolean | readonly number[] | readonly string[];

/** One key the export writes: a TRL config field, a verl override path, an OpenRLHF flag. */
export interface Setting {
  key: string;
  /** The value; `true` for an OpenRLHF switch given without a value. */
  value: SettingValue;
  /** verl: the key is absent from the trainer's YAML and is added with a leading `+`. */
  added?: boolean;
}

/** What one lab field becomes in one trainer. */
export interface MappingRow {
  field: RLField;
  /** The lab's value as text. */
  lab: string;
  settings: Setting[];
  /** Why there is no setting, or how the value was converted; null when the value carries over as it is. */
  comment: string | null;
}

/** The TRL config class an experiment becomes: PPOConfig for a critic, RLOOConfig for leave-one-out, else GRPOConfig. */
export type TrlClass = 'GRPOConfig' | 'RLOOConfig' | 'PPOConfig';

export function trlClassOf(c: RLConfig): TrlClass {
  if (c.adv_estimator === 'gae') return 'PPOConfig';
  if (c.adv_estimator === 'rloo') return 'RLOOConfig';
  return 'GRPOConfig';
}

/** True when the TRL config class has the field (its own, or TrainingArguments' that every TRL config inherits). */
export function trlClassHas(cls: TrlClass, field: string): boolean {
  return (trlFields.classes[cls] as readonly string[]).includes(field) || trlFields.inherited.fields.includes(field);
}

/** An enum value's name in a trainer, as the schema's valueNames give it (null: none there). */
function valueName(
  target: ExportTarget,
  field: 'adv_estimator' | 'kl_estimator' | 'loss_agg_mode' | 'rollout_is_mode',
  value: string,
): string | null {
  const names: Readonly<Record<string, ValueNames>> = RL_FIELDS[field].valueNames;
  return names[value]?.[target] ?? null;
}

/** A field's value as the mapping table shows it. */
export function labValueText(v: unknown): string {
  if (v === null) return 'null';
  // Names (teachers: id -> checkpoint) as the CLI flag takes them, id=checkpoint.
  if (typeof v === 'object' && Object.values(v).some((x) => typeof x === 'string'))
    return Object.entries(v as Record<string, string>)
      .map(([k, x]) => `${k}=${x}`)
      .join(', ');
  if (typeof v === 'object')
    return Object.entries(v as Record<string, number>)
      .map(([k, w]) => `${k}:${w}`)
      .join(',');
  return String(v);
}

/** The config's LoRA projections (null: all); ExportValueError naming lora_targets when the list names no projection. */
export function loraTargetsOf(c: RLConfig): LoraTarget[] {
  try {
    return parseLoraTargets(c.lora_targets);
  } catch (e) {
    throw new ExportValueError(`lora_targets: ${(e as Error).message}`);
  }
}

interface Ctx {
  c: RLConfig;
  d: DerivedConfig;
  trlClass: TrlClass;
}

type Conversion = (ctx: Ctx) => Pick<MappingRow, 'settings' | 'comment'>;

const set = (
  key: string,
  value: SettingValue,
  comment: string | null = null,
  added = false,
): Pick<MappingRow, 'settings' | 'comment'> => ({ settings: [{ key, value, ...(added ? { added } : {}) }], comment });
const none = (comment: string): Pick<MappingRow, 'settings' | 'comment'> => ({ settings: [], comment });
const written = (where: string): Pick<MappingRow, 'settings' | 'comment'> => none(`written with ${where}`);

/**
 * lora_targets: the lab's comma list becomes a list (render.ts writes it in the trainer's syntax: a Hydra list for
 * verl, words for OpenRLHF's nargs flag); null (every projection) is left to their default, all-linear, which
 * adapts the same seven.
 */
function loraTargetsRow(c: RLConfig, key: string): Pick<MappingRow, 'settings' | 'comment'> {
  if (c.lora_rank === 0) return none('LoRA is off in the lab (lora_rank 0)');
  if (c.lora_targets === null)
    return none(`null in the lab: every projection, which ${key}'s default all-linear adapts on these models`);
  return set(key, loraTargetsOf(c));
}

// ---------------------------------------------------------------------------------------------------------
// Rollout correction (rollout_is_mode, its bounds, and tis_cap, its token_truncate case): the rollout_is_mode row
// writes every setting; the tis_cap and bound rows point to it. docs/algorithms.md#rollout-correction.

/** exp(20): the lab's cap on an importance weight (LOG_WEIGHT_CAP), which is verl's own bound too. */
const WEIGHT_CAP = Math.exp(20);
const CORRECTION_ROWS = ['tis_cap', 'rollout_is_clip_min', 'rollout_is_clip_max'] as const;

/** The bound rows (and tis_cap) of a config: written with rollout_is_mode, or off. */
function correctionPart(c: RLConfig): Pick<MappingRow, 'settings' | 'comment'> {
  return rolloutCorrectionOf(c) ? written('rollout_is_mode') : none('no rollout correction in the lab');
}

/** The bound as a number, with null (no bound) as the value that does not bound under the weight cap. */
const upperOf = (rc: RolloutCorrection) => rc.max ?? WEIGHT_CAP;
const lowerOf = (rc: RolloutCorrection) => rc.min ?? 0;

// ---------------------------------------------------------------------------------------------------------
// TRL. Names are GRPOConfig's unless prefixed `PPOConfig.`; a name the chosen class lacks becomes a comment.

/** TRL's vLLM importance sampling settings for the lab's rollout correction (GRPOConfig only). */
const trlRolloutCorrection = ({ c, trlClass }: Ctx): Pick<MappingRow, 'settings' | 'comment'> => {
  const rc = rolloutCorrectionOf(c);
  if (trlClass !== 'GRPOConfig')
    return none(`${trlClass} has no rollout correction${rc ? `; the lab: ${rc.mode} in [${rc.min}, ${rc.max}]` : ''}`);
  const off = { key: 'vllm_importance_sampling_correction', value: false };
  if (!rc)
    return {
      settings: [off],
      comment: "the lab applies no rollout correction; TRL's (on by default, sequence_mask) would act under use_vllm",
    };
  if (rc.mode === 'sequence_geo_mask')
    return {
      settings: [off],
      comment:
        "TRL has no geometric-mean sequence mask (OpenRLHF's seq-mask-tis); the lab drops sequences whose exp(mean log w) leaves the bounds",
    };
  const settings: Setting[] = [
    { key: 'vllm_importance_sampling_correction', value: true },
    { key: 'vllm_importance_sampling_mode', value: rc.mode },
  ];
  if (rc.min !== null) settings.push({ key: 'vllm_importance_sampling_clip_min', value: rc.min });
  if (rc.max !== null) settings.push({ key: 'vllm_importance_sampling_clip_max', value: rc.max });
  return {
    settings,
    comment: `TRL corrects only vLLM's samples (use_vllm=True)${rc.max === null ? '; no upper bound in the lab: set vllm_importance_sampling_clip_max=None' : ''}`,
  };
};

/** TRL's LoRA is a PEFT LoraConfig given to the trainer (peft_config), written by render.ts; none when the lab's is off. */
const trlLora = ({ c, trlClass }: Ctx): Pick<MappingRow, 'settings' | 'comment'> => {
  if (c.lora_rank === 0) return none('LoRA is off in the lab (lora_rank 0); the trainer gets no peft_config');
  if (trlClass === 'PPOConfig')
    return none(
      `the PPO script stops before its trainer (see it); the lab trains LoRA adapters of rank ${c.lora_rank}`,
    );
  return written("the trainer's peft_config=LoraConfig(...)");
};

/**
 * MaxRL and F-GRPO in a trainer that has neither (TRL 1.19, verl 1dda039): null for any other estimator. MaxRL is
 * prime-rl's max_rl algorithm (TRL's scale_rewards 'mean' is a proposal); verl's F-GRPO (f_grpo_gamma) is newer than
 * the verl the export targets.
 */
function passRateEstimatorRow(c: RLConfig, trainer: 'TRL' | 'verl'): Pick<MappingRow, 'settings' | 'comment'> | null {
  if (c.adv_estimator === 'max_rl')
    return none(
      `no MaxRL in ${trainer} (prime-rl's algorithm max_rl); the lab: a = (r - mean_g r) / mean_g r per group, 0 where the mean is 0`,
    );
  if (c.adv_estimator === 'f_grpo')
    return none(
      `no F-GRPO in ${trainer}${trainer === 'verl' ? ' 1dda039 (later verl: f_grpo_gamma, f_grpo_reward_correct, f_grpo_reward_wrong)' : ''}; the lab: GRPO's advantage times (1 - mu_pos)^${c.f_grpo_gamma}, mu_pos the group's pass rate`,
    );
  return null;
}

const TRL: Partial<Record<RLField, Conversion>> = {
  adv_estimator: (ctx) =>
    passRateEstimatorRow(ctx.c, 'TRL') ??
    (ctx.c.adv_estimator === 'optimal_token_baseline'
      ? none(
          "no optimal token baseline in TRL (its advantage is one number per completion); verl's optimal_token_baseline: a baseline per group and token position weighted by the cumulative sum of 1 - 2 pi_t + sum pi^2",
        )
      : defaultRow('trl', 'adv_estimator', ctx)),
  rollout_is_mode: trlRolloutCorrection,
  ...Object.fromEntries(CORRECTION_ROWS.map((f) => [f, ({ c }: Ctx) => correctionPart(c)])),
  entropy_bonus_gate: ({ c, trlClass }) =>
    trlClass !== 'GRPOConfig'
      ? none(`${trlClass} has no adaptive entropy`)
      : c.entropy_target === null
        ? none('adaptive entropy is off in the lab')
        : c.entropy_bonus_gate
          ? none("TRL's use_adaptive_entropy always applies alpha only at or below entropy_target, as here")
          : none(
              "TRL's use_adaptive_entropy applies alpha only while the last step's entropy is at or below entropy_target; the lab applies it always (entropy_bonus_gate false)",
            ),
  lora_rank: trlLora,
  lora_alpha: trlLora,
  lora_targets: trlLora,
  loss_type: ({ c }) => {
    if (c.loss_type === 'ppo_clip')
      return none(
        'the clipped PPO objective is every TRL loss_type but cispo/sapo; loss_type is written from loss_agg_mode',
      );
    if (c.loss_type === 'cispo' || c.loss_type === 'sapo' || c.loss_type === 'vespo')
      return written('loss_type (it picks both the objective and the aggregation in TRL)');
    if (c.loss_type === 'gmpo')
      return none(
        'no GMPO in GRPOConfig (TRL has it in trl.experimental.gmpo); the lab clips token log-ratios to gmpo_clip and takes their geometric mean',
      );
    if (c.loss_type === 'dppo_tv' || c.loss_type === 'dppo_kl' || c.loss_type === 'dro')
      return none(`no ${c.loss_type} in TRL (verl's loss_mode ${c.loss_type}); the lab: ${lossText(c.loss_type)}`);
    if (c.loss_type === 'prime_dppo') return none(`no prime-rl loss in TRL; the lab: ${lossText('prime_dppo')}`);
    return none(
      'no REINFORCE loss (-A log pi without a ratio) in TRL; with num_iterations 1 and one minibatch the clipped loss has the same gradient',
    );
  },
  loss_agg_mode: ({ c, trlClass }) => {
    if (trlClass !== 'GRPOConfig')
      return none(
        `${trlClass} has no loss_type; its aggregation is fixed by the trainer; the lab uses ${c.loss_agg_mode}`,
      );
    if (c.loss_type === 'cispo' || c.loss_type === 'sapo' || c.loss_type === 'vespo')
      return set(
        'loss_type',
        c.loss_type,
        `TRL's '${c.loss_type}' aggregates by token-mean over the global batch; the lab uses ${c.loss_agg_mode}`,
      );
    if (
      c.loss_type === 'ppo_clip' &&
      c.importance_sampling_level === 'sequence' &&
      c.loss_agg_mode === 'seq-mean-token-sum'
    )
      return set(
        'loss_type',
        'luspo',
        "LUSPO: GSPO's sequence loss times its length, averaged over sequences (= seq-mean-token-sum at sequence level); with beta > 0 TRL averages its KL over every position, the lab under the same weights",
      );
    const t = valueName('trl', 'loss_agg_mode', c.loss_agg_mode);
    return t
      ? set('loss_type', t, FIELD_SPECS.loss_agg_mode.note ?? null)
      : none(
          "no TRL loss_type sums tokens per sequence without normalizing (seq-mean-token-sum); the lab sums each sequence's token losses and averages over sequences",
        );
  },
  epsilon: ({ c, trlClass }) =>
    trlClass === 'PPOConfig'
      ? set('cliprange', c.epsilon, 'PPOConfig has one symmetric clip range')
      : set('epsilon', c.epsilon),
  epsilon_high: ({ c, d, trlClass }) => {
    if (trlClass === 'PPOConfig')
      return none(
        `PPOConfig has no upper clip of its own (cliprange is symmetric); the lab's upper clip is ${d.epsilonHigh}`,
      );
    if (c.loss_type === 'cispo') return written('eps_max (TRL reads epsilon_high as the CISPO cap)');
    return set('epsilon_high', d.epsilonHigh, c.epsilon_high === null ? 'null in the lab: follows epsilon' : null);
  },
  eps_max: ({ c }) =>
    c.loss_type === 'cispo'
      ? set('epsilon_high', c.eps_max, FIELD_SPECS.eps_max.note ?? null)
      : none('used only by loss_type cispo'),
  beta: ({ c, trlClass }) => {
    if (trlClass === 'PPOConfig') return set('kl_coef', c.beta, 'PPOConfig puts the KL in the reward as kl_coef');
    if (c.kl_placement === 'in_reward')
      return set('beta', c.beta, 'TRL GRPO/RLOO put the KL in the loss; the lab puts -beta k1 in the token reward');
    return set('beta', c.beta);
  },
  kl_estimator: ({ c, trlClass }) =>
    trlClass === 'PPOConfig' && (c.kl_estimator === 'k1' || c.kl_estimator === 'k3')
      ? set('kl_estimator', c.kl_estimator)
      : none(
          `${trlClass === 'PPOConfig' ? 'PPOConfig takes k1 or k3' : `${trlClass} always uses k3`}; the lab uses ${c.kl_estimator}`,
        ),
  kl_placement: ({ c, trlClass }) =>
    none(
      `no setting: ${trlClass === 'PPOConfig' ? 'PPOConfig puts the KL in the reward' : `${trlClass} puts the KL in the loss`}; the lab: ${c.kl_placement}`,
    ),
  num_iterations: ({ c, trlClass }) =>
    trlClass === 'PPOConfig' ? set('num_ppo_epochs', c.num_iterations) : set('num_iterations', c.num_iterations),
  num_minibatches: ({ c, d, trlClass }) => {
    if (trlClass === 'PPOConfig') return set('num_mini_batches', c.num_minibatches);
    return set(
      'per_device_train_batch_size',
      d.microBatchSize,
      `one optimizer step per ${d.minibatchSize} completions = per_device_train_batch_size x gradient_accumulation_steps on one process (with P processes divide per_device_train_batch_size by P)`,
    );
  },
  gradient_accumulation_steps: ({ c, d }) =>
    set(
      'gradient_accumulation_steps',
      c.gradient_accumulation_steps,
      `micro-batches per optimizer step, as in the lab: ${c.gradient_accumulation_steps} of ${d.microBatchSize} completions`,
    ),
  train_batch_size: ({ c, d, trlClass }) =>
    trlClass === 'PPOConfig'
      ? none(
          `PPOConfig samples per_device_train_batch_size prompts; the lab samples ${c.train_batch_size} prompts per step`,
        )
      : set('generation_batch_size', d.sequencesPerStep, FIELD_SPECS.train_batch_size.note ?? null),
  max_completion_length: ({ d, trlClass }) =>
    trlClass === 'PPOConfig'
      ? set(
          'response_length',
          d.maxCompletionLength,
          "tokens of the model's tokenizer; the lab counts characters (its char tokenizer)",
        )
      : set(
          'max_completion_length',
          d.maxCompletionLength,
          "tokens of the model's tokenizer; the lab counts characters (its char tokenizer)",
        ),
  steps: ({ d }) =>
    set(
      'max_steps',
      d.totalOptimizerSteps,
      `TRL max_steps counts optimizer steps: steps * num_iterations * num_minibatches`,
    ),
  eval_every: ({ c, d }) =>
    c.eval_every === 0
      ? set('eval_strategy', 'no', 'the lab never evaluates (eval_every 0)')
      : {
          settings: [
            { key: 'eval_strategy', value: 'steps' },
            { key: 'eval_steps', value: c.eval_every * d.optimizerStepsPerBatch },
          ],
          comment: 'eval_steps counts optimizer steps',
        },
  ref_model_sync_steps: ({ c, trlClass }) =>
    trlClass === 'PPOConfig'
      ? none(`PPOConfig keeps its reference fixed; the lab resets it every ${c.ref_model_sync_steps} steps (0: never)`)
      : c.ref_model_sync_steps === 0
        ? none('the lab never resets the reference (0); TRL sync_ref_model stays off')
        : {
            settings: [
              { key: 'sync_ref_model', value: true },
              { key: 'ref_model_mixup_alpha', value: 1 },
              { key: 'ref_model_sync_steps', value: c.ref_model_sync_steps },
            ],
            comment: 'mixup alpha 1: the reference becomes the current policy, as in the lab',
          },
  entropy_target: ({ c, trlClass }) =>
    trlClass !== 'GRPOConfig'
      ? none(
          `${trlClass} has no adaptive entropy; the lab: ${c.entropy_target === null ? 'alpha stays fixed' : `moves alpha toward a mean entropy of ${c.entropy_target}`}`,
        )
      : c.entropy_target === null
        ? none('null in the lab: alpha stays fixed (TRL use_adaptive_entropy stays off)')
        : {
            settings: [
              { key: 'use_adaptive_entropy', value: true },
              { key: 'entropy_target', value: c.entropy_target },
            ],
            comment: null,
          },
  warmup_steps: ({ c }) => set('warmup_steps', c.warmup_steps, 'optimizer steps, as in the lab'),
  lr_schedule: ({ c }) =>
    c.lr_schedule === 'constant' && c.warmup_steps > 0
      ? set(
          'lr_scheduler_type',
          'constant_with_warmup',
          "transformers' constant schedule ignores warmup; the lab warms up, then holds",
        )
      : set('lr_scheduler_type', c.lr_schedule),
  scale_rewards: ({ c, trlClass }) =>
    trlClass === 'PPOConfig'
      ? none(
          `PPOConfig whitens GAE advantages itself; the lab's scale_rewards (${c.scale_rewards}) applies to group estimators`,
        )
      : trlClass === 'RLOOConfig'
        ? set(
            'normalize_advantages',
            c.scale_rewards !== 'none',
            'RLOOConfig only normalizes over the batch (on) or not (off)',
          )
        : set('scale_rewards', c.scale_rewards),
};

// ---------------------------------------------------------------------------------------------------------
// verl: dotted override paths of verl.trainer.main_ppo.

function verlLossMode(c: RLConfig, d: DerivedConfig): string | null {
  if (c.clip_cov_ratio > 0) return 'clip_cov';
  if (c.kl_cov_ratio > 0) return 'kl_cov';
  if (c.loss_type === 'ppo_clip') return c.importance_sampling_level === 'sequence' ? 'gspo' : 'vanilla';
  if (c.loss_type === 'gmpo') return 'geo_mean';
  if (c.loss_type === 'pg') return d.ratioIsOne ? 'vanilla' : null;
  if (c.loss_type === 'vespo' || c.loss_type === 'prime_dppo') return null;
  return c.loss_type;
}

const A = 'actor_rollout_ref.actor.';

/**
 * verl's algorithm.rollout_correction for the lab's: rollout_is (token / sequence) truncates from above at
 * rollout_is_threshold; rollout_rs token_k1 / seq_sum_k1 / seq_mean_k1 rejects by bounds 'lo_up' on -log w, which keep
 * 1/up <= w <= 1/lo. A missing bound is written as exp(20), verl's own clamp of log w, so it bounds nothing.
 */
export function verlRolloutCorrection(c: RLConfig): Pick<MappingRow, 'settings' | 'comment'> {
  const rc = rolloutCorrectionOf(c);
  if (!rc) return none('off in the lab: verl rollout_is and rollout_rs stay null');
  const R = 'algorithm.rollout_correction.';
  const is = (level: 'token' | 'sequence', threshold: number): Setting[] => [
    { key: `${R}rollout_is`, value: level },
    { key: `${R}rollout_is_threshold`, value: threshold },
  ];
  const rsBounds = `${1 / upperOf(rc)}_${rc.min ? 1 / rc.min : WEIGHT_CAP}`;
  const rs = (option: string): Setting[] => [
    { key: `${R}rollout_rs`, value: option },
    { key: `${R}rollout_rs_threshold`, value: rsBounds },
  ];
  const dropped =
    "verl's rejection also removes the tokens from the response mask (token-mean divides by the kept tokens); the lab weighs them 0";
  switch (rc.mode) {
    case 'token_truncate':
    case 'sequence_truncate':
      return {
        settings: is(rc.mode === 'token_truncate' ? 'token' : 'sequence', upperOf(rc)),
        comment:
          rc.min !== null
            ? `verl truncates from above only; the lab also raises weights below ${rc.min} to it`
            : rc.max === null
              ? 'no upper bound in the lab: the threshold is exp(20), the cap both apply to log w'
              : null,
      };
    case 'token_mask':
      return { settings: [...is('token', upperOf(rc)), ...rs('token_k1')], comment: dropped };
    case 'sequence_mask':
      return { settings: [...is('sequence', upperOf(rc)), ...rs('seq_sum_k1')], comment: dropped };
    case 'sequence_geo_mask':
      return {
        settings: [...is('token', WEIGHT_CAP), ...rs('seq_mean_k1')],
        comment: `the kept tokens weighted by their own untruncated w (threshold exp(20)); ${dropped}`,
      };
  }
}

const VERL: Partial<Record<RLField, Conversion>> = {
  lora_targets: ({ c }) => loraTargetsRow(c, FIELD_SPECS.lora_targets.verl!),
  loss_type: ({ c, d }) => {
    const mode = verlLossMode(c, d);
    if (!mode && c.loss_type === 'vespo')
      return none(`no VESPO in verl (TRL's loss_type vespo); the lab: ${lossText('vespo')}`);
    if (!mode && c.loss_type === 'prime_dppo')
      return none(
        `no prime-rl default loss in verl (its nearest is loss_mode dppo_tv, a stop-gradient ratio to pi_old with no squared log-ratio); the lab: ${lossText('prime_dppo')}`,
      );
    if (!mode)
      return none(
        'no REINFORCE loss (-A log pi without a ratio) in verl; the lab runs more than one optimizer step per batch, so the clipped loss differs',
      );
    return set(
      `${A}policy_loss.loss_mode`,
      mode,
      c.loss_type === 'pg'
        ? "pg has no ratio; with one optimizer step per batch the ratio is 1 and 'vanilla' has the same gradient"
        : (FIELD_SPECS.loss_type.note ?? null),
    );
  },
  importance_sampling_level: ({ c }) =>
    written(`policy_loss.loss_mode (${c.importance_sampling_level === 'sequence' ? 'gspo' : 'token-level modes'})`),
  epsilon: ({ c }) =>
    c.loss_type === 'gmpo'
      ? written('gmpo_clip (verl clips geo_mean in log space with the clip ratios)')
      : set(`${A}clip_ratio_low`, c.epsilon),
  epsilon_high: ({ c, d }) => {
    if (c.loss_type === 'gmpo') return written('gmpo_clip');
    if (c.loss_type === 'cispo') return written('eps_max (verl caps CISPO at 1 + clip_ratio_high)');
    return set(
      `${A}clip_ratio_high`,
      d.epsilonHigh,
      c.epsilon_high === null ? 'null in the lab: follows epsilon' : null,
    );
  },
  eps_max: ({ c }) =>
    c.loss_type === 'cispo'
      ? set(
          `${A}clip_ratio_high`,
          c.eps_max - 1,
          'verl caps the CISPO weight at 1 + clip_ratio_high (and also clamps it from below at 1 - clip_ratio_low)',
        )
      : none('used only by loss_type cispo'),
  gmpo_clip: ({ c }) =>
    c.loss_type === 'gmpo'
      ? {
          settings: [
            { key: `${A}clip_ratio_low`, value: c.gmpo_clip },
            { key: `${A}clip_ratio_high`, value: c.gmpo_clip },
          ],
          comment: FIELD_SPECS.gmpo_clip.note ?? null,
        }
      : none('used only by loss_type gmpo'),
  clip_ratio_c: ({ c }) => {
    if (c.loss_type === 'dppo_tv' || c.loss_type === 'dppo_kl')
      return set(
        `${A}clip_ratio_c`,
        dppoCap(c),
        "DPPO's cap of its stop-gradient ratio (the lab's null is 20, the default in verl's DPPO code; the YAML's 3.0 would apply otherwise)",
      );
    return c.clip_ratio_c === null
      ? none('null in the lab: no dual clip; verl applies its dual clip (default clip_ratio_c 3.0) where A < 0')
      : set(`${A}clip_ratio_c`, c.clip_ratio_c);
  },
  beta: ({ c, d }) => {
    if (d.klInReward)
      return {
        settings: [
          { key: 'algorithm.use_kl_in_reward', value: true },
          { key: 'algorithm.kl_ctrl.kl_coef', value: c.beta },
        ],
        comment: 'KL in the token reward',
      };
    return {
      settings: [
        { key: `${A}use_kl_loss`, value: d.klInLoss },
        { key: `${A}kl_loss_coef`, value: c.beta },
      ],
      comment: d.klInLoss ? 'KL in the loss' : 'beta 0: no KL term',
    };
  },
  kl_estimator: ({ c, d }) => {
    const name = valueName('verl', 'kl_estimator', c.kl_estimator);
    if (!name) return none("no full-vocabulary KL estimator to match the lab's exact KL in verl");
    const clamped = c.kl_estimator === 'k3' || c.kl_estimator === 'k3+';
    const plus = isStraightThroughKl(c.kl_estimator)
      ? "straight-through (its value, k2's gradient) needs a verl that strips the '+' in kl_penalty (verl-project/verl 1dda039; older ones raise NotImplementedError)"
      : null;
    const note =
      [clamped ? "verl's k3 is low_var_kl: k3 clamped to [-10, 10]" : null, plus].filter(Boolean).join('; ') || null;
    return set(d.klInReward ? 'algorithm.kl_penalty' : `${A}kl_loss_type`, name, note);
  },
  kl_placement: () => written('beta (use_kl_loss / use_kl_in_reward)'),
  adv_estimator: ({ c }) => {
    const passRate = passRateEstimatorRow(c, 'verl');
    if (passRate) return passRate;
    const name = valueName('verl', 'adv_estimator', c.adv_estimator);
    if (!name)
      return none(
        'no plain REINFORCE estimator (A = r) in verl; the lab uses the reward itself (or a running-mean baseline) as the advantage',
      );
    if (c.adv_estimator === 'optimal_token_baseline')
      return {
        settings: [
          { key: 'algorithm.adv_estimator', value: name },
          { key: `${A}calculate_sum_pi_squared`, value: true },
          { key: 'actor_rollout_ref.model.use_fused_kernels', value: false },
        ],
        comment:
          "the actor must return sum pi^2 per token (fused kernels give no logits); the lab zeroes the baseline of a group's one longest tail (handle_zero_tail), verl-project/verl 1dda039's default (volcengine/verl b178a3cd's was off)",
      };
    return set(
      'algorithm.adv_estimator',
      name,
      c.adv_estimator === 'dr_grpo' ? 'Dr. GRPO is grpo without the std divisor (norm_adv_by_std_in_grpo False)' : null,
    );
  },
  scale_rewards: ({ c }) => {
    if (c.adv_estimator === 'dr_grpo')
      return set('algorithm.norm_adv_by_std_in_grpo', false, 'Dr. GRPO never divides by the std');
    if (c.scale_rewards === 'batch')
      return none("verl's grpo divides by the group's std or not at all; the lab divides by the batch's std");
    return set('algorithm.norm_adv_by_std_in_grpo', c.scale_rewards === 'group');
  },
  train_batch_size: ({ c }) => set('data.train_batch_size', c.train_batch_size, 'prompts, as in the lab'),
  num_minibatches: ({ c }) =>
    c.train_batch_size % c.num_minibatches === 0
      ? set(
          `${A}ppo_mini_batch_size`,
          c.train_batch_size / c.num_minibatches,
          'verl counts a minibatch in prompts: train_batch_size / num_minibatches',
        )
      : none(
          `verl's minibatch is a whole number of prompts; ${c.train_batch_size} prompts do not split into ${c.num_minibatches}`,
        ),
  gradient_accumulation_steps: ({ c, d }) => ({
    settings: [
      { key: `${A}ppo_micro_batch_size_per_gpu`, value: d.microBatchSize },
      ...(d.needsCritic ? [{ key: 'critic.ppo_micro_batch_size_per_gpu', value: d.microBatchSize }] : []),
    ],
    comment: `verl counts a micro-batch in samples per GPU: B * G / num_minibatches / gradient_accumulation_steps = ${d.minibatchSize} / ${c.gradient_accumulation_steps} on one GPU (with P GPUs divide by P)`,
  }),
  max_completion_length: ({ d }) =>
    set(
      'data.max_response_length',
      d.maxCompletionLength,
      "tokens of the model's tokenizer; the lab counts characters",
    ),
  top_k: ({ c }) =>
    set(
      'actor_rollout_ref.rollout.top_k',
      c.top_k === 0 ? -1 : c.top_k,
      c.top_k === 0 ? 'verl turns top-k off with -1' : null,
    ),
  dynamic_sampling: ({ c }) =>
    c.dynamic_sampling
      ? {
          settings: [
            { key: 'algorithm.filter_groups.enable', value: true, added: true },
            { key: 'algorithm.filter_groups.metric', value: 'acc', added: true },
          ],
          comment: "verl's main_ppo declares filter_groups but the refill loop is the DAPO recipe's trainer",
        }
      : set('algorithm.filter_groups.enable', false, null, true),
  max_resample: ({ c }) =>
    set(
      'algorithm.filter_groups.max_num_gen_batches',
      c.max_resample + 1,
      'verl counts generation batches per step including the first',
      true,
    ),
  overlong_buffer_enable: ({ c, d }) =>
    c.overlong_buffer_enable
      ? {
          settings: [
            { key: 'reward_model.reward_manager', value: 'dapo' },
            { key: 'reward_model.reward_kwargs.overlong_buffer_cfg.enable', value: true, added: true },
            { key: 'reward_model.reward_kwargs.overlong_buffer_cfg.penalty_factor', value: 1, added: true },
          ],
          comment: `the DAPO reward manager applies the overlong shaping (buffer ${d.overlongBufferLen} tokens)`,
        }
      : none('off in the lab'),
  overlong_buffer_len: ({ c, d }) =>
    c.overlong_buffer_enable
      ? set(
          'reward_model.reward_kwargs.overlong_buffer_cfg.len',
          d.overlongBufferLen,
          c.overlong_buffer_len === null ? 'null in the lab: a quarter of max_completion_length' : null,
          true,
        )
      : none('overlong shaping is off'),
  rollout_dtype: ({ c }) =>
    set(
      'actor_rollout_ref.rollout.dtype',
      { f32: 'float32', bf16: 'bfloat16', f16: 'float16' }[c.rollout_dtype],
      c.rollout_dtype === 'f32' ? "verl's default is bfloat16; the lab samples from the f32 weights by default" : null,
    ),
  rollout_is_mode: ({ c }) => verlRolloutCorrection(c),
  ...Object.fromEntries(CORRECTION_ROWS.map((f) => [f, ({ c }: Ctx) => correctionPart(c)])),
  clip_cov_ratio: ({ c }) =>
    c.clip_cov_ratio > 0
      ? set(`${A}policy_loss.clip_cov_ratio`, c.clip_cov_ratio)
      : none("0 in the lab: Clip-Cov off (verl's loss_mode is not clip_cov)"),
  kl_cov_ratio: ({ c }) =>
    c.kl_cov_ratio > 0
      ? set(`${A}policy_loss.kl_cov_ratio`, c.kl_cov_ratio)
      : none("0 in the lab: KL-Cov off (verl's loss_mode is not kl_cov)"),
  adam_beta1: ({ c }) => set(`${A}optim.betas`, [c.adam_beta1, c.adam_beta2], 'verl takes the pair (beta1, beta2)'),
  adam_beta2: () => written('adam_beta1 (optim.betas is the pair)'),
  max_grad_norm: ({ c }) =>
    c.max_grad_norm === 0
      ? none('0 in the lab: no gradient clipping; verl always clips (clip_grad)')
      : set(`${A}optim.clip_grad`, c.max_grad_norm),
  lr_schedule: ({ c }) =>
    c.lr_schedule === 'linear'
      ? none('verl schedules constant or cosine; the lab decays linearly to 0')
      : set(`${A}optim.lr_scheduler_type`, c.lr_schedule),
  eval_num_generations: ({ c }) => ({
    settings: [
      { key: 'actor_rollout_ref.rollout.val_kwargs.n', value: c.eval_num_generations },
      { key: 'actor_rollout_ref.rollout.val_kwargs.do_sample', value: true },
      { key: 'actor_rollout_ref.rollout.val_kwargs.temperature', value: c.temperature },
    ],
    comment:
      "verl's validation is greedy unless do_sample; the lab samples its held-out completions at the training temperature",
  }),
  eval_every: ({ c }) =>
    set(
      'trainer.test_freq',
      c.eval_every === 0 ? -1 : c.eval_every,
      c.eval_every === 0 ? 'verl never tests with -1' : null,
    ),
  critic_learning_rate: ({ d }) =>
    set('critic.optim.lr', d.criticLearningRate, "null in the lab means the policy's learning_rate"),
  cliprange_value: ({ c }) =>
    c.cliprange_value === null
      ? none('null in the lab: no value clipping; verl always clips the value loss (cliprange_value)')
      : set('critic.cliprange_value', c.cliprange_value),
};

// ---------------------------------------------------------------------------------------------------------
// OpenRLHF: train_ppo_ray flags.

const OPENRLHF: Partial<Record<RLField, Conversion>> = {
  lora_targets: ({ c }) => loraTargetsRow(c, FIELD_SPECS.lora_targets.openrlhf!),
  loss_type: ({ c }) => {
    if (c.loss_type === 'ppo_clip')
      return set('--actor.policy_loss_type', c.importance_sampling_level === 'sequence' ? 'gspo' : 'ppo');
    return none(`OpenRLHF has only ppo and gspo losses; the lab uses ${c.loss_type}`);
  },
  importance_sampling_level: () => written('--actor.policy_loss_type (gspo is the sequence level)'),
  epsilon: ({ c, d }) =>
    set('--actor.eps_clip_low_high', [c.epsilon, d.epsilonHigh], 'OpenRLHF takes the pair (low, high)'),
  epsilon_high: () => written('epsilon (--actor.eps_clip_low_high is the pair)'),
  clip_ratio_c: ({ c }) =>
    c.clip_ratio_c === null
      ? none('null in the lab: no dual clip (OpenRLHF --actor.dual_clip not given)')
      : set('--actor.dual_clip', c.clip_ratio_c),
  beta: ({ c }) => set('--algo.kl.init_coef', c.beta),
  kl_estimator: ({ c }) =>
    c.kl_estimator === 'k1' || c.kl_estimator === 'k2' || c.kl_estimator === 'k3'
      ? set('--algo.kl.estimator', c.kl_estimator)
      : none(`OpenRLHF estimates the KL with k1, k2 or k3; the lab uses ${c.kl_estimator}`),
  kl_placement: ({ c }) =>
    c.kl_placement === 'in_loss'
      ? set('--algo.kl.use_loss', true, 'on: the KL is in the loss')
      : none('in_reward: --algo.kl.use_loss not given, so OpenRLHF puts the KL in the reward'),
  adv_estimator: ({ c }) => {
    const name = valueName('openrlhf', 'adv_estimator', c.adv_estimator);
    return name
      ? set('--algo.advantage.estimator', name)
      : none(`no ${c.adv_estimator} estimator in OpenRLHF: ${estimatorRefusal('openrlhf', c)}`);
  },
  scale_rewards: ({ c }) => {
    if (c.adv_estimator === 'grpo' && c.scale_rewards === 'none')
      return none(
        "OpenRLHF's group_norm always divides by the group's std (dr_grpo is the estimator without it); the lab divides by nothing",
      );
    if (c.adv_estimator === 'grpo' && c.scale_rewards === 'batch')
      return none("OpenRLHF's group_norm divides by the group's std; the lab divides by the batch's std");
    if (c.adv_estimator === 'grpo') return none("group_norm divides by the group's std, as the lab does");
    return c.scale_rewards === 'none'
      ? set('--algo.advantage.no_std_norm', true, FIELD_SPECS.scale_rewards.note ?? null)
      : none(`${c.scale_rewards}: OpenRLHF whitens over the batch for ${c.adv_estimator} by default`);
  },
  num_minibatches: ({ d }) =>
    set('--train.batch_size', d.minibatchSize, 'OpenRLHF counts a minibatch in samples: B * G / num_minibatches'),
  gradient_accumulation_steps: ({ c, d }) =>
    set(
      '--train.micro_batch_size',
      d.microBatchSize,
      `OpenRLHF counts a micro-batch in samples per GPU: --train.batch_size / gradient_accumulation_steps = ${d.minibatchSize} / ${c.gradient_accumulation_steps} on one GPU (with P GPUs divide by P)`,
    ),
  dynamic_sampling: ({ c }) =>
    c.dynamic_sampling
      ? {
          settings: [
            { key: '--algo.dynamic_filtering_enable', value: true },
            { key: '--algo.dynamic_filtering_range', value: [0, 1] },
          ],
          comment:
            'OpenRLHF drops a prompt whose mean score is not strictly inside (0, 1): the lab drops groups with equal rewards (the same for 0/1 rewards)',
        }
      : none('off in the lab'),
  max_resample: () =>
    none('OpenRLHF refills dropped prompts without a per-step limit; the lab draws at most max_resample extra batches'),
  overlong_buffer_enable: ({ c }) =>
    c.overlong_buffer_enable
      ? written('overlong_buffer_len (--reward.overlong_buffer_len turns it on)')
      : none('off in the lab: --reward.overlong_buffer_len not given'),
  overlong_buffer_len: ({ c, d }) =>
    c.overlong_buffer_enable
      ? set('--reward.overlong_buffer_len', d.overlongBufferLen)
      : none('overlong shaping is off'),
  max_completion_length: ({ d }) =>
    set(
      '--rollout.max_new_tokens',
      d.maxCompletionLength,
      "tokens of the model's tokenizer; the lab counts characters",
    ),
  adam_beta1: ({ c }) =>
    set('--actor.adam.betas', [c.adam_beta1, c.adam_beta2], 'OpenRLHF takes the pair (beta1, beta2)'),
  adam_beta2: () => written('adam_beta1 (--actor.adam.betas is the pair)'),
  warmup_steps: ({ c, d }) =>
    set(
      '--actor.lr_warmup_ratio',
      c.warmup_steps / d.totalOptimizerSteps,
      `a ratio of the run's ${d.totalOptimizerSteps} optimizer steps`,
    ),
  lr_schedule: ({ c }) =>
    ({
      constant: set('--actor.lr_scheduler', 'constant_with_warmup'),
      cosine: {
        settings: [
          { key: '--actor.lr_scheduler', value: 'cosine_with_min_lr' },
          { key: '--actor.min_lr_ratio', value: 0 },
        ],
        comment: 'cosine to 0, as in the lab',
      },
      linear: set('--actor.lr_scheduler', 'linear'),
    })[c.lr_schedule],
  rollout_is_mode: ({ c }) => {
    const rc = rolloutCorrectionOf(c);
    if (!rc) return none('off in the lab: --algo.advantage.is_correction_enable not given');
    const type = valueName('openrlhf', 'rollout_is_mode', rc.mode);
    if (type === null)
      return none(
        `OpenRLHF has no sequence-product weight (seq-mask-tis bounds the geometric mean); the lab: ${rc.mode} in [${rc.min}, ${rc.max}]`,
      );
    return {
      settings: [
        { key: '--algo.advantage.is_correction_enable', value: true },
        { key: '--algo.advantage.is_correction_type', value: type },
        { key: '--algo.advantage.is_correction_threshold', value: [lowerOf(rc), upperOf(rc)] },
      ],
      comment: `OpenRLHF corrects only under --actor.policy_loss_type ppo${rc.min === null ? '; no lower bound in the lab, so the lower end is 0' : ''}${rc.max === null ? '; no upper bound in the lab: exp(20), its weight cap' : ''}`,
    };
  },
  ...Object.fromEntries(CORRECTION_ROWS.map((f) => [f, ({ c }: Ctx) => correctionPart(c)])),
  critic_learning_rate: ({ d }) =>
    set('--critic.adam.lr', d.criticLearningRate, "null in the lab means the policy's learning_rate"),
  cliprange_value: ({ c }) =>
    c.cliprange_value === null
      ? none('null in the lab: no value clipping (--critic.value_clip not given)')
      : set('--critic.value_clip', c.cliprange_value),
  eval_every: ({ c }) =>
    c.eval_every === 0
      ? none('the lab never evaluates (eval_every 0); no --eval.dataset is given')
      : set('--eval.steps', c.eval_every),
  steps: ({ c }) =>
    none(
      `OpenRLHF runs whole passes over the prompts (--train.num_episodes); the export writes ${c.steps * c.train_batch_size} prompts, so one episode is the lab's ${c.steps} steps`,
    ),
};

/** Fields whose every trainer row is about the experiment's identity, written by the renderers (model, data, reward). */
const CONTEXT: Partial<Record<RLField, Readonly<Record<ExportTarget, string>>>> = {
  task: {
    trl: 'the dataset files and the reward function',
    verl: 'data.train_files and the custom reward function',
    openrlhf: '--data.prompt_dataset and the reward function',
  },
  difficulty: {
    trl: 'the dataset (its prompts are drawn at this difficulty)',
    verl: 'the dataset (its prompts are drawn at this difficulty)',
    openrlhf: 'the dataset (its prompts are drawn at this difficulty)',
  },
  model: {
    trl: 'the model parameter (a Hugging Face checkpoint path or hub name)',
    verl: 'actor_rollout_ref.model.path',
    openrlhf: '--actor.model_name_or_path',
  },
  checkpoint: {
    trl: 'the model parameter (a Hugging Face checkpoint path or hub name)',
    verl: 'actor_rollout_ref.model.path',
    openrlhf: '--actor.model_name_or_path',
  },
  reward_weights: {
    trl: 'the reward function (it weighs accuracy and format)',
    verl: 'the reward function (it weighs accuracy and format)',
    openrlhf: 'the reward function (it weighs accuracy and format)',
  },
};

const CONVERSIONS: Readonly<Record<ExportTarget, Partial<Record<RLField, Conversion>>>> = {
  trl: TRL,
  verl: VERL,
  openrlhf: OPENRLHF,
};

/** The foreign name of a field in a trainer, as the schema gives it, made a key of that trainer (or null). */
function foreignKey(target: ExportTarget, field: RLField, trlClass: TrlClass): string | null {
  const name = FIELD_SPECS[field][target];
  if (!name) return null;
  if (target !== 'trl') return name;
  const [cls, bare] = name.includes('.') ? name.split('.', 2) : [null, name];
  if (cls && cls !== trlClass) return null;
  return trlClassHas(trlClass, bare) ? bare : null;
}

function defaultRow(target: ExportTarget, field: RLField, ctx: Ctx): Pick<MappingRow, 'settings' | 'comment'> {
  const spec = FIELD_SPECS[field];
  const v = ctx.c[field];
  const key = foreignKey(target, field, ctx.trlClass);
  const what = `the lab: ${spec.doc}`;
  if (!key) {
    const where = target === 'trl' ? ctx.trlClass : TARGET_LABELS[target];
    return none(`no equivalent in ${where}${spec.note ? ` (${spec.note})` : ''}; ${what}`);
  }
  if (v === null)
    return none(
      `null in the lab (${'nullMeans' in spec ? spec.nullMeans : 'off'}); ${TARGET_LABELS[target]}'s ${key} keeps its default`,
    );
  if (typeof v === 'object') return none(`${key} takes another form; ${what}`);
  return set(key, v as SettingValue, spec.note ?? null);
}

/** OpenRLHF's --algo.advantage.estimator values, as its parser declares them (fixtures/openrlhf-args.json). */
const OPENRLHF_ESTIMATORS = OPENRLHF_FLAGS['--algo.advantage.estimator'].choices ?? [];

/** The lab's estimators TRL computes, by config class (trlClassOf): GRPOConfig grpo and dr_grpo, RLOOConfig, PPOConfig. */
const TRL_ESTIMATORS: readonly RLConfig['adv_estimator'][] = ['grpo', 'dr_grpo', 'rloo', 'gae'];

/**
 * Why a trainer cannot run the config's advantage estimator (null: it can). verl and OpenRLHF default to gae (a
 * critic and GAE), and TRL's GRPOConfig computes GRPO's group-normalized advantage whatever the lab's estimator, so
 * an export that left the estimator out would train something else: exportExperiment refuses it instead. OpenRLHF
 * (v0.11.0 experience_maker.py) centres every `reinforce` advantage on the batch's token mean (and divides by the
 * batch's std unless --algo.advantage.no_std_norm), so the lab's reinforce (a = r - b, b = 0 or a running mean of
 * earlier batches) is none of its estimators; nor is ReMax's greedy-rollout baseline.
 */
export function estimatorRefusal(target: ExportTarget, c: RLConfig): string | null {
  const est = c.adv_estimator;
  if (target === 'trl' ? TRL_ESTIMATORS.includes(est) : valueName(target, 'adv_estimator', est) !== null) return null;
  const label = TARGET_LABELS[target];
  const own =
    target === 'openrlhf'
      ? `OpenRLHF's estimators are ${OPENRLHF_ESTIMATORS.join(', ')}`
      : target === 'verl'
        ? `verl's AdvantageEstimator has no ${est}`
        : "TRL's GRPOConfig computes grpo and dr_grpo, RLOOConfig rloo, PPOConfig gae";
  const lab: Partial<Record<RLConfig['adv_estimator'], string>> = {
    reinforce:
      target === 'openrlhf'
        ? "the lab's reinforce is a = r - b (b = 0, or a running mean of earlier batches); OpenRLHF's reinforce is REINFORCE++, which centres every advantage on this batch's mean (and divides by its std)"
        : target === 'verl'
          ? "the lab's reinforce is a = r - b (b = 0, or a running mean of earlier batches); verl's reinforce_plus_plus whitens the returns over the batch"
          : "the lab's reinforce is a = r - b (b = 0, or a running mean of earlier batches)",
    remax: `the lab's remax subtracts each prompt's greedy-rollout reward, a baseline ${label} does not compute`,
  };
  const what = lab[est] ?? `the lab's ${est} (docs/algorithms.md#advantage-estimators)`;
  const instead = target === 'trl' ? "GRPOConfig's group-normalized advantage" : 'its default, gae with a critic';
  return `${label} has no estimator that computes ${est} (${own}; ${what}); without one ${label} would run ${instead}, so the export is refused`;
}

/** Every field of the config as rows for one trainer, in the schema's order: nothing is left out. */
export function mappingRows(target: ExportTarget, c: RLConfig): MappingRow[] {
  const ctx: Ctx = { c, d: derive(c), trlClass: trlClassOf(c) };
  return FIELD_NAMES.map((field) => {
    const context = CONTEXT[field]?.[target];
    const conv = CONVERSIONS[target][field];
    const row = context ? written(context) : conv ? conv(ctx) : defaultRow(target, field, ctx);
    // Booleans in the trainer's declared form (an OpenRLHF switch that is false is not given).
    return withDeclaredBooleans(target, { field, lab: labValueText(c[field]), ...row });
  });
}
