// Validation of the RL config at its boundaries (URL, file, UI, CLI, resume): every field against its rule in the
// schema, then the rules between fields, each message naming the field to change and the rule; warnings name knobs
// that are set but have no effect. Runs once per boundary, never per optimizer step.

import { MODEL_PRESETS } from '../model-config';
import { PROMPT_LIST_TASK, parsePromptList, type Task, type TaskFactory } from '../../tasks';
import { clipText, describe, fieldProblems, quote, ruleProblems, sameValue, suggestion } from '../fields';
import { GROUP_ESTIMATORS } from '../algorithm-names';
import { LEARNED_REWARD_NAME } from '../algorithm-names';
import { USER_REWARD_NAME } from '../algorithm-names';
import { PRESETS, PRESET_NAMES, isPresetName, type PresetName } from './presets';
import { distills, teacherIdFor } from '../distillation';
import { DEFAULT_CONFIG, RL_FIELDS, RL_RULES, type RLConfig, type RLField } from './schema';
import { taskFactoryOf, taskOf } from './task-of';

/** A config that cannot be used, with every problem found (each message starts with the field it is about). */
export class RLConfigError extends Error {
  override name = 'RLConfigError';
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1 ? `invalid RL config: ${problems[0]}` : `invalid RL config:\n  ${problems.join('\n  ')}`,
    );
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
  // Files (run exports, trainer states) hand over whatever their JSON held.
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { errors: [`config: must be an object of fields, got ${describe(raw)}`], warnings: [] };
  const errors = fieldProblems(RL_FIELDS, raw);
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
    throw new RLConfigError([
      `preset: must be one of ${PRESET_NAMES.join(', ')}; got ${quote(String(preset))}${suggestion(String(preset), PRESET_NAMES)}`,
    ]);
  }
  const merged: Record<string, unknown> = {
    ...DEFAULT_CONFIG,
    ...(preset === null ? {} : PRESETS[preset]),
    ...overrides,
  };
  // A copy, so the config never aliases the caller's object (arrays stay arrays, and are refused by validation).
  if (merged.reward_weights && typeof merged.reward_weights === 'object' && !Array.isArray(merged.reward_weights))
    merged.reward_weights = { ...(merged.reward_weights as object) };
  return validateConfig(merged);
}

/**
 * The rules between fields: the registry's (RL_RULES, which the config alone decides), then those against the task
 * the config builds. Each message starts with the field to change and states the rule.
 */
function crossFieldErrors(c: RLConfig): string[] {
  const e: string[] = [];
  const factory = factoryOrNull(c);
  if (!factory) {
    // The task cannot be built (a prompt list that is missing or malformed): the rules about it cannot be checked.
    try {
      taskFactoryOf(c);
    } catch (err) {
      e.push(`prompts: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  e.push(...ruleProblems(RL_RULES, c));
  const range = factory?.difficultyRange;
  if (range && c.difficulty !== null && (c.difficulty < range.min || c.difficulty > range.max)) {
    e.push(
      `difficulty: ${c.task}'s difficulty (${range.meaning}) is a whole number in [${range.min}, ${range.max}], got ${c.difficulty}`,
    );
  }
  if (factory) e.push(...rewardWeightErrors(c, factory));
  if (factory) e.push(...teacherRouteErrors(c));
  const task = factory ? taskOrNull(c) : null;
  if (task) e.push(...binaryRewardErrors(c, task.weights));
  if (task) {
    const L = c.max_completion_length ?? task.maxCompletionLength + 1;
    if (c.overlong_buffer_enable && c.overlong_buffer_len !== null && c.overlong_buffer_len >= L) {
      e.push(
        `overlong_buffer_len: L_c must be less than max_completion_length (${L}) so that L_max - L_c > 0, got ${c.overlong_buffer_len}`,
      );
    }
    if (c.checkpoint === null && c.chat_template) {
      e.push(
        'chat_template: a fresh model uses the character vocabulary, which has no chat template; set checkpoint to a model whose tokenizer_config.json has one',
      );
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

/**
 * adv_estimator max_rl is defined for pass/fail rewards: the weights in effect must give the accuracy part 1 and
 * every other part 0 (the task's own weights mix in a format part, so a wrong but well-formed answer scores 0.1).
 * Rewards still not 0 or 1 (a task whose accuracy has partial credit) are refused when the batch is scored.
 */
function binaryRewardErrors(c: RLConfig, taskWeights: { accuracy: number; format: number }): string[] {
  if (c.adv_estimator !== 'max_rl') return [];
  const w: Record<string, number> = c.reward_weights ?? { ...taskWeights };
  const others = Object.entries(w).filter(([k, v]) => k !== 'accuracy' && v !== 0);
  if ((w.accuracy ?? 0) === 1 && others.length === 0) return [];
  const shown = Object.entries(w)
    .map(([k, v]) => `${k}:${v}`)
    .join(', ');
  return [
    `reward_weights: adv_estimator 'max_rl' needs binary (0/1) rewards, so accuracy:1 and no other part; ${c.reward_weights ? 'they are' : `${c.task}'s own weights are`} ${shown} (set reward_weights accuracy:1)`,
  ];
}

/**
 * reward_weights against the task: every name must be one of the task's reward functions or `user` when there is
 * a reward_fn (a misspelled one would weigh a part that is always 0), and some weight must be nonzero (all zero
 * makes every reward 0: nothing learns).
 */
function rewardWeightErrors(c: RLConfig, factory: TaskFactory): string[] {
  if (c.reward_weights === null) return [];
  const names = [
    ...factory.rewardNames,
    ...(c.reward_fn !== null ? [USER_REWARD_NAME] : []),
    ...(c.reward_model !== null ? [LEARNED_REWARD_NAME] : []),
  ];
  const e: string[] = [];
  for (const name of Object.keys(c.reward_weights)) {
    if (name === LEARNED_REWARD_NAME && c.reward_model === null)
      e.push(
        `reward_weights: ${LEARNED_REWARD_NAME} weighs the score of reward_model, which is not set; name a reward model folder or drop ${LEARNED_REWARD_NAME}`,
      );
    else if (name === USER_REWARD_NAME && c.reward_fn === null)
      e.push(
        `reward_weights: ${USER_REWARD_NAME} weighs the reward of reward_fn, which is empty; write a reward_fn or drop ${USER_REWARD_NAME}`,
      );
    else if (!names.includes(name))
      e.push(
        `reward_weights: ${c.task} has no reward function ${clipText(name)}${suggestion(name, names)}; its rewards are ${names.join(', ')}`,
      );
  }
  // Distillation alone: every reward weighed 0, the teacher's per-token signal the only advantage.
  if (Object.values(c.reward_weights).every((w) => w === 0) && !distills(c)) {
    e.push(
      `reward_weights: every weight is 0, so every reward is 0 and nothing is learned; give one of ${c.task}'s rewards (${names.join(', ')}) a nonzero weight`,
    );
  }
  return e;
}

/** The prompt list's items when the config trains on one that parses, else null (its errors are reported on their own). */
function promptListItems(c: RLConfig): ReturnType<typeof parsePromptList> | null {
  if (c.task !== PROMPT_LIST_TASK || c.prompts === null) return null;
  try {
    return parsePromptList(c.prompts);
  } catch {
    return null;
  }
}

/**
 * Multi-teacher distillation against the prompts (docs/algorithms.md#several-teachers-by-prompt-source): teachers
 * routes by the prompt list's teacher_id column, so it needs task prompts; with a teacher checkpoint, every row's
 * teacher must be configured (its teacher_id an id of teachers, or, with none, the default teacher). The first
 * unrouted row is named by its line.
 */
function teacherRouteErrors(c: RLConfig): string[] {
  if (c.teachers !== null && c.task !== PROMPT_LIST_TASK)
    return [
      `teachers: task '${c.task}' has one prompt source, so one teacher scores it (set teacher instead); teachers routes the prompts of your prompt list (task ${PROMPT_LIST_TASK}) by their teacher_id`,
    ];
  if (c.teacher === null && c.teachers === null) return [];
  const ids = Object.keys(c.teachers ?? {});
  for (const it of promptListItems(c) ?? []) {
    if (teacherIdFor(it.teacherId, c) !== null) continue;
    if (it.teacherId === null)
      return [
        `teacher: line ${it.line} of the prompt list has no teacher_id, and no default teacher scores such a prompt; give it one of ${ids.join(', ')} or set teacher`,
      ];
    return [
      `teachers: line ${it.line} of the prompt list names teacher_id ${quote(it.teacherId)}, which ${ids.length ? `is not one of teachers (${ids.join(', ')})` : 'no teacher has: teachers is not set'}`,
    ];
  }
  return [];
}

/**
 * Below these, sampling is greedy in effect: logits / tau turn a logit gap of 0.5 into a probability ratio of
 * e^(0.5 / tau) = e^10 at tau 0.05, and a nucleus of top_p 0.05 holds only the most likely token unless that
 * token's probability is under 5%. Then a group's completions come out identical.
 */
export const NEAR_GREEDY_TEMPERATURE = 0.05;
export const NEAR_GREEDY_TOP_P = 0.05;

/** Sampling knobs set so that every completion is the most likely one, each message naming the knob. */
function greedySamplingWarnings(c: RLConfig): string[] {
  const causes: [RLField, string][] = [];
  if (c.temperature < NEAR_GREEDY_TEMPERATURE)
    causes.push([
      'temperature',
      `${c.temperature} is below ${NEAR_GREEDY_TEMPERATURE}: logits / tau make the most likely token all but certain`,
    ]);
  if (c.top_p < NEAR_GREEDY_TOP_P)
    causes.push(['top_p', `${c.top_p} is below ${NEAR_GREEDY_TOP_P}: the nucleus holds only the most likely token`]);
  if (c.top_k === 1) causes.push(['top_k', '1 keeps only the most likely token']);
  const effect = GROUP_ESTIMATORS.includes(c.adv_estimator)
    ? `sampling is greedy in effect, so the ${c.num_generations} completions of a group come out identical, their advantages are 0 and the loss and gradient are 0: nothing is learned`
    : 'sampling is greedy in effect, so the policy never tries anything but its most likely completion';
  return causes.map(([k, why]) => `${k}: ${why}; ${effect}`);
}

/** Knobs that are set but have no effect, and combinations that work but are probably not what was meant. */
export function configWarnings(c: RLConfig): string[] {
  const w: string[] = [];
  const set = (k: RLField) => !sameValue(c[k], DEFAULT_CONFIG[k]);
  const ignored = (k: RLField, why: string) => {
    if (set(k)) w.push(`${k}: ignored ${why}`);
  };
  w.push(...greedySamplingWarnings(c));
  if (c.lora_rank === 0)
    for (const k of ['lora_alpha', 'lora_targets'] as const) ignored(k, 'while lora_rank is 0 (LoRA is off)');
  if (c.lora_rank > 0 && (c.weight_stats_every > 0 || c.rank1_eval)) {
    w.push(
      "weight_stats_every, rank1_eval: not measured with LoRA (lora_rank > 0): the base weights do not move and the update is the adapters' s B A",
    );
  }
  if (c.kl_placement === 'in_reward' && c.beta === 0)
    w.push("kl_placement: 'in_reward' has no effect with beta 0 (no KL term at all)");
  if (c.kl_placement === 'in_reward' && c.beta > 0 && c.kl_estimator !== 'k1') {
    w.push(
      `kl_estimator: '${c.kl_estimator}' is not used with kl_placement 'in_reward', where the token reward is -beta * k1 (it is still plotted)`,
    );
  }
  if (c.adv_estimator !== 'grpo' && c.adv_estimator !== 'grpo_passk' && c.adv_estimator !== 'f_grpo')
    ignored('scale_rewards', `by adv_estimator '${c.adv_estimator}' (only grpo divides by a std)`);
  else if (c.multi_objective_aggregation === 'normalize_then_sum')
    ignored(
      'scale_rewards',
      'by multi_objective_aggregation normalize_then_sum (GDPO normalizes by the group, then the batch)',
    );
  if (c.adv_estimator !== 'reinforce')
    ignored(
      'reinforce_baseline_momentum',
      `by adv_estimator '${c.adv_estimator}' (only reinforce keeps a running baseline)`,
    );
  if (c.adv_estimator !== 'gae') {
    for (const k of ['gamma', 'lam', 'vf_coef', 'cliprange_value', 'critic_learning_rate'] as const)
      ignored(k, `without a critic (adv_estimator '${c.adv_estimator}', not gae)`);
  }
  if (c.loss_type !== 'ppo_clip') {
    for (const k of ['epsilon', 'epsilon_high', 'clip_ratio_c', 'delta'] as const)
      ignored(k, `by loss_type '${c.loss_type}' (the clip range, dual clip and cap belong to ppo_clip)`);
  }
  if (c.loss_type !== 'sapo')
    for (const k of ['tau_pos', 'tau_neg'] as const) ignored(k, `by loss_type '${c.loss_type}' (only sapo gates)`);
  if (c.loss_type !== 'cispo') ignored('eps_max', `by loss_type '${c.loss_type}' (only cispo caps its weight)`);
  if (c.loss_type === 'cispo' && c.eps_max < 1)
    w.push(`eps_max: ${c.eps_max} < 1 caps every ratio below 1, shrinking even on-policy updates`);
  if (c.loss_type !== 'gmpo') ignored('gmpo_clip', `by loss_type '${c.loss_type}' (only gmpo clips log-ratios)`);
  if (c.clip_cov_ratio === 0)
    for (const k of ['clip_cov_lb', 'clip_cov_ub'] as const) ignored(k, 'while clip_cov_ratio is 0');
  if (c.kl_cov_ratio === 0) ignored('kl_cov_coef', 'while kl_cov_ratio is 0');
  if (c.loss_type === 'pg') {
    ignored('importance_sampling_level', "by loss_type 'pg' (-A log pi has no ratio)");
    if (c.num_iterations > 1 || c.num_minibatches > 1) {
      w.push(
        "loss_type: 'pg' has no importance ratio, so every optimizer step after the first on a batch is off-policy without correction; use ppo_clip or cispo with several updates per batch",
      );
    }
  }
  if (!c.dynamic_sampling) ignored('max_resample', 'without dynamic_sampling');
  if (c.dynamic_sampling && c.num_generations >= 2 && !GROUP_ESTIMATORS.includes(c.adv_estimator)) {
    w.push(
      `dynamic_sampling: drops groups whose rewards are all equal, which still carry signal for adv_estimator '${c.adv_estimator}'`,
    );
  }
  if (!c.overlong_buffer_enable) ignored('overlong_buffer_len', 'while overlong_buffer_enable is false');
  if (c.reward_fn !== null && c.reward_weights !== null && !(USER_REWARD_NAME in c.reward_weights)) {
    w.push(
      `reward_fn: runs but counts for nothing, since reward_weights gives ${USER_REWARD_NAME} no weight; add ${USER_REWARD_NAME}:1 to reward_weights`,
    );
  }
  if (c.reward_model !== null && c.reward_weights !== null && !(LEARNED_REWARD_NAME in c.reward_weights)) {
    w.push(
      `reward_model: is loaded but counts for nothing, since reward_weights gives ${LEARNED_REWARD_NAME} no weight; add ${LEARNED_REWARD_NAME}:1 to reward_weights`,
    );
  }
  if (c.reward_model === null) ignored('reward_model_label', 'without a reward_model');
  if (c.entropy_target !== null && c.entropy_coef_step === 0)
    w.push('entropy_coef_step: 0 keeps alpha fixed, so entropy_target has no effect');
  if (c.entropy_target === null) {
    for (const k of ['entropy_coef_step', 'entropy_coef_min', 'entropy_coef_max', 'entropy_bonus_gate'] as const)
      ignored(k, 'without entropy_target (alpha is fixed)');
  }
  if (c.rollout_is_mode === 'off') {
    for (const k of ['rollout_is_clip_min', 'rollout_is_clip_max'] as const)
      ignored(k, `while rollout_is_mode is 'off'${c.tis_cap !== null ? ' (tis_cap sets its own bound)' : ''}`);
  } else if (c.rollout_is_clip_min === null && c.rollout_is_clip_max === null) {
    w.push(
      `rollout_is_mode: '${c.rollout_is_mode}' without rollout_is_clip_min or rollout_is_clip_max ${c.rollout_is_mode.endsWith('truncate') ? 'truncates nothing' : 'masks nothing'}`,
    );
  }
  if (c.beta === 0) {
    ignored('ref_model_sync_steps', 'with beta 0 (no reference model)');
    ignored('kl_estimator', 'with beta 0 (no KL term)');
  }
  const optimizerSteps = c.steps * c.num_iterations * c.num_minibatches;
  if (c.warmup_steps >= optimizerSteps)
    w.push(
      `warmup_steps: ${c.warmup_steps} is not less than the run's ${optimizerSteps} optimizer steps, so the learning rate never reaches its peak`,
    );
  if (c.eval_every > c.steps)
    w.push(`eval_every: ${c.eval_every} is more than steps (${c.steps}), so the run never evaluates before the end`);
  if (c.prompts !== null && c.task !== PROMPT_LIST_TASK)
    ignored('prompts', `by task '${c.task}' (only task ${PROMPT_LIST_TASK} trains on the list)`);
  const listed = promptListItems(c);
  const routed = listed?.filter((it) => it.teacherId !== null) ?? [];
  if (routed.length && c.teacher === null && c.teachers === null)
    w.push(
      `prompts: the teacher_id of line ${routed[0].line} and ${routed.length - 1} more is ignored without teachers (only a teacher checkpoint per id reads it)`,
    );
  for (const id of Object.keys(c.teachers ?? {}))
    if (listed && !routed.some((it) => it.teacherId === id))
      w.push(`teachers: ${id} scores no prompt (no line of the prompt list has teacher_id ${id})`);
  const r = factoryOrNull(c)?.difficultyRange;
  if (c.curriculum !== 'fixed' && r) {
    if ((c.difficulty ?? r.default) === r.min)
      w.push(`curriculum: '${c.curriculum}' has nothing to vary: difficulty is ${c.task}'s easiest (${r.min})`);
  }
  return w;
}

function factoryOrNull(c: RLConfig): TaskFactory | null {
  try {
    return taskFactoryOf(c);
  } catch {
    return null; // reported by crossFieldErrors
  }
}

function taskOrNull(c: RLConfig): Task | null {
  try {
    return taskOf(c);
  } catch {
    return null; // the difficulty error is reported on its own
  }
}

/** The problems an RLConfigError lists when `f` throws one, [] when `f` returns (other errors rethrown). */
export function problemsOf(f: () => unknown): string[] {
  try {
    f();
    return [];
  } catch (e) {
    if (e instanceof RLConfigError) return e.problems;
    throw e;
  }
}
