// The RL training config's registry: every knob once, with its doc, default, range, panel section, the date it
// joined saved trainer states, its enum values' formulas and its names in TRL, verl and OpenRLHF
// (src/schema/fields.ts), and the rules between knobs (RL_RULES). The objective's knobs and rules are declared in
// src/schema/objective.ts and spread in here; the rest (task, sampling, advantages, optimizer, critic, schedule)
// are declared below. The config type, the defaults, the panel sections, validation, codecs, both CLIs' flags and
// --help, the inspector's and the A/B's formulas, trainer-state compatibility and the exports all derive from
// RL_FIELDS. The settings that are not knobs (SETTINGS: the hub's address) are declared here too.

import { MODEL_PRESETS } from '../model-config';
import { ANSWER_FORMATS, taskChoices } from '../../tasks';
import {
  SECTIONS,
  defaultsOf,
  flag,
  int,
  oneOf,
  optInt,
  optReal,
  optString,
  optText,
  real,
  sameValue,
  section,
  weights,
  type ConfigOf,
  type FieldRule,
  type FieldSpec,
  type Section,
  type SettingSpec,
} from '../fields';
import { DISTILLATION_FIELDS, DISTILLATION_RULES } from '../distillation';
import { OBJECTIVE_REGULARIZER_FIELDS, OBJECTIVE_RULES, POLICY_LOSS_FIELDS, rolloutCorrectionOf } from '../objective';
import { parseLoraTargets } from '../../core/lora-layout';
import { DEFAULT_HUB_ENDPOINT } from '../hub-id';
import { HUB_TIMEOUT_VAR } from '../hub-origins';
import {
  ADV_ESTIMATORS,
  GROUP_ESTIMATORS,
  MULTI_OBJECTIVE_AGGREGATIONS,
  SCALE_REWARDS,
  TOKEN_REWARD_ESTIMATORS,
} from '../algorithm-names';
import { WEIGHT_DTYPES } from '../../core/half';

/** The weight_dtype knob's values: auto, then the storage dtypes (src/core/half.ts). */
const WEIGHT_DTYPE_CHOICES = ['auto', ...WEIGHT_DTYPES] as const;

const TASK_FIELDS = section('task', {
  task: oneOf(
    'the verifiable environment to train on (prompts: your own prompt list, the prompts field)',
    taskChoices,
    'addition',
  ),
  answer_format: oneOf(
    "plain: the task's own answers; think: <think>...</think><answer>...</answer>, the tags scored as the reward function format and the answer by the task's verifier as accuracy (R1-style)",
    ANSWER_FORMATS,
    'plain',
  ),
  prompts: optText(
    'your own prompts for task prompts: JSONL lines {"prompt": ..., "answer": ...} or CSV with a header naming prompt and answer; answers match exactly or as numbers; one in ten held out by a hash of the prompt',
    'none',
  ),
  difficulty: optInt(
    "the task's difficulty knob (its meaning and range are the task's)",
    "the task's default difficulty",
    null,
    0,
    1000,
  ),
  model: oneOf(
    'model preset to start from when no checkpoint is given (src/schema/model-config.ts)',
    Object.keys(MODEL_PRESETS) as (keyof typeof MODEL_PRESETS)[],
    'nano',
  ),
  checkpoint: optString(
    'warm-start checkpoint to start from (a shipped name, a URL or a directory); overrides model',
    'a fresh model of the `model` preset',
    {
      verl: 'actor_rollout_ref.model.path',
      openrlhf: '--actor.model_name_or_path',
      also: ['pretrain', 'model_name_or_path'],
      note: 'their path of the starting weights',
    },
  ),
  chat_template: flag(
    "give the model each prompt as one user message through its tokenizer's chat template (tokenizer_config.json chat_template, with the generation prompt), as chat models expect; needs a checkpoint whose tokenizer has one",
    false,
    {
      openrlhf: '--data.apply_chat_template',
      note: 'TRL and verl apply the chat template whenever the prompts are conversations',
    },
  ),
  reward_weights: weights(
    'w_k of r_i = sum_k w_k R_k, by reward function name (accuracy, format, ..., user for reward_fn)',
    "the task's own weights (and user: 1 with a reward_fn)",
    { trl: 'reward_weights' },
  ),
  reward_fn: optText(
    'a reward function of your own in JavaScript, (prompt, completion, item) => number | { reward, parts }, scored as the reward function `user`; it runs in a sandbox without network or storage, once per batch, stopped after 5 s',
    "none (only the task's rewards)",
  ),
  reward_model: optString(
    'a learned reward, scored as the reward function `reward_model` once per batch: the folder of a text-classification model in ONNX run by transformers.js (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx; the shipped one is models/sentiment-char/), or of a reward model trained in the lab by `npm run reward-model` (config.json, model.safetensors)',
    "none (only the task's rewards)",
  ),
  reward_model_label: optString(
    "a text classifier's label whose probability is the reward (one of its config.json id2label)",
    "the classifier's last label (POSITIVE for a NEGATIVE/POSITIVE model)",
  ),
});

const SAMPLING_FIELDS = section('sampling', {
  num_generations: int('G: completions sampled per prompt (the group)', 8, 1, 1024, {
    trl: 'num_generations',
    verl: 'actor_rollout_ref.rollout.n',
    openrlhf: '--rollout.n_samples_per_prompt',
    also: ['n_samples_per_prompt'],
  }),
  train_batch_size: int('B: prompts per step; a step samples N = B*G completions', 8, 1, 4096, {
    verl: 'data.train_batch_size',
    openrlhf: '--rollout.batch_size',
    also: ['rollout_batch_size', 'batch_size', 'generation_batch_size'],
    note: 'TRL generation_batch_size counts completions (B * G)',
  }),
  max_completion_length: optInt(
    'L_max: longest completion in tokens, EOS included; longer ones are cut',
    "the task's longest accepted completion + 1 (EOS)",
    null,
    1,
    8192,
    {
      trl: 'max_completion_length',
      verl: 'data.max_response_length',
      openrlhf: '--rollout.max_new_tokens',
      also: ['max_new_tokens'],
    },
  ),
  temperature: real('tau: sampling temperature; log-probs and entropies are computed on logits / tau', 1, 0, 100, {
    minExclusive: true,
    trl: 'temperature',
    verl: 'actor_rollout_ref.rollout.temperature',
    openrlhf: '--rollout.temperature',
    also: ['temperature'],
  }),
  top_k: int('sample among the k most likely tokens (0: off)', 0, 0, 262_144, {
    trl: 'top_k',
    verl: 'actor_rollout_ref.rollout.top_k',
  }),
  top_p: real('nucleus sampling: the smallest set of tokens with total probability >= top_p (1: off)', 1, 0, 1, {
    minExclusive: true,
    trl: 'top_p',
    verl: 'actor_rollout_ref.rollout.top_p',
    openrlhf: '--rollout.top_p',
    also: ['top_p'],
  }),
  sampling_defaults: oneOf(
    "where temperature, top_p and top_k come from when you leave them at the lab's defaults (1, 1, 0): lab (those defaults, as TRL sets its own), or model (the checkpoint's generation_config.json values, as vLLM's generation_config 'auto'; a value you changed keeps yours, do_sample false is not followed since GRPO needs samples, and the run records the values used)",
    ['lab', 'model'] as const,
    'lab',
    {
      since: '2026-11-28',
      note: "vLLM: generation_config='auto' (the model's defaults; request values win); TRL: its own temperature/top_p/top_k, do_sample always on",
    },
  ),
  min_p: real('drop tokens less likely than min_p times the most likely one (0: off)', 0, 0, 1, {
    maxExclusive: true,
    trl: 'min_p',
  }),
  dynamic_sampling: flag(
    'DAPO: drop groups whose rewards are all equal and sample more prompts to refill the batch',
    false,
    {
      verl: 'algorithm.filter_groups.enable',
      openrlhf: '--algo.dynamic_filtering_enable',
      also: ['dynamic_filtering'],
      note: 'OpenRLHF drops prompts whose mean score is outside a range',
    },
  ),
  max_resample: int(
    'dynamic sampling: extra batches of prompts drawn per step at most before training on what there is',
    4,
    0,
    100,
    { verl: 'algorithm.filter_groups.max_num_gen_batches' },
  ),
  overlong_buffer_enable: flag(
    'DAPO overlong shaping: add ((L_max - L_c) - |y|) / L_c to r when |y| > L_max - L_c',
    false,
    {
      verl: 'reward_model.reward_kwargs.overlong_buffer_cfg.enable',
      also: ['overlong_buffer'],
      note: 'OpenRLHF: on when --reward.overlong_buffer_len is set',
    },
  ),
  overlong_buffer_len: optInt(
    'L_c: the overlong buffer, in tokens',
    'a quarter of max_completion_length (at least 1)',
    null,
    1,
    8192,
    {
      verl: 'reward_model.reward_kwargs.overlong_buffer_cfg.len',
      openrlhf: '--reward.overlong_buffer_len',
      also: ['overlong_buffer_len'],
    },
  ),
  mask_truncated_completions: flag(
    'drop completions cut at L_max without EOS from the loss (DAPO overlong filtering)',
    false,
    { trl: 'mask_truncated_completions' },
  ),
  rollout_dtype: oneOf(
    "the precision the sampler reads the policy's weights in: f32 (the learner's own weights), or bf16/f16 (a half copy refreshed before each rollout, as an inference engine holding bf16 weights samples while the learner trains f32 masters); log pi_sampler then differs from the learner's log pi_old (sampling/sampling_logp_difference), which tis_cap corrects. Not with LoRA",
    WEIGHT_DTYPES,
    'f32',
    {
      since: '2026-11-27',
      verl: 'actor_rollout_ref.rollout.dtype',
      also: ['vllm_dtype'],
      note: "verl's rollout defaults to bfloat16 (vLLM/SGLang); TRL's vLLM and OpenRLHF's engines take the model's dtype (bf16 in their examples), with no field of their own",
    },
  ),
  rollout_merge_lora: flag(
    "LoRA: the sampler reads each adapted matrix merged with its adapter, W + (alpha / r) B A, from a copy in rollout_dtype refreshed before each rollout (as TRL merges the adapter into the weights it syncs to vLLM), instead of adding two adapter products to each projection at every decode step: fewer, larger products per token, for the adapted matrices' copy in memory; the sampler then differs from the learner by float rounding (f32) or by the half rounding (bf16/f16)",
    false,
    {
      since: '2026-12-07',
      also: ['merge_lora', 'merge_adapter'],
      note: "TRL's GRPOTrainer merges the PEFT adapter (merge_adapter) before each weight sync to vLLM, in the model's dtype, with no field to turn it off; verl and OpenRLHF hand vLLM the adapter itself",
    },
  ),
  rollout_logprobs: oneOf(
    "which log-prob the sampler records for each token it draws, the behaviour policy mu of the rollout correction: full (log softmax(z / tau) over the whole vocabulary, what the learner computes) or filtered (the distribution after top_k / top_p / min_p, renormalised over the kept tokens, as vLLM's processed_logprobs which TRL's AsyncGRPOTrainer asks for); filtered makes pi_old / mu the kept mass, below 1 on every filtered token (TRL issue 6789, docs/algorithms.md#which-log-probs-the-sampler-records)",
    ['full', 'filtered'],
    'full',
    {
      since: '2026-12-06',
      also: ['logprobs_mode', 'logprobs-mode'],
      note: "vLLM's --logprobs-mode: processed_logprobs is filtered here (after temperature, top-k and top-p); raw_logprobs is before the temperature, which no value here matches; verl and OpenRLHF recompute log pi_old with the trainer and take vLLM's log-probs for the rollout correction only",
    },
  ),
  // Stale rollouts (src/rl/algorithm/staleness.ts, docs/algorithms.md#stale-rollouts).
  max_staleness: int(
    "stale rollouts: each batch is sampled by the weights of max_staleness weight syncs before the learner's current version (an asynchronous trainer's queue kept full: TRL's default max_inflight_tasks holds max_staleness batches); the sampler's log-probs are the behaviour policy mu that rollout_is_mode corrects for. 0: on-policy",
    0,
    0,
    64,
    {
      since: '2026-12-06',
      trl: 'max_staleness',
      also: ['max_off_policy_steps', 'max_trajectory_age_steps', 'max_async_level', 'staleness_threshold'],
      note: "TRL's AsyncGRPOTrainer discards samples more than max_staleness weight syncs old and otherwise takes them as they come; here every batch is exactly that old. prime-rl: orchestrator.max_off_policy_steps (1 step off-policy by default); NeMo-RL: grpo.async_grpo.max_trajectory_age_steps; verl's fully async recipe: async_training.staleness_threshold (a fraction of a batch, not steps)",
    },
  ),
  weight_sync_steps: int(
    "stale rollouts: optimizer steps between two copies of the learner's weights to the sampler (one weight sync, one version); with max_staleness the sampler lags max_staleness x weight_sync_steps optimizer steps or more",
    1,
    1,
    1000,
    {
      since: '2026-12-06',
      trl: 'weight_sync_steps',
      note: "TRL's AsyncGRPOTrainer pushes the weights to its vLLM server every weight_sync_steps training steps and counts a model version per push; verl's fully async recipe: async_training.trigger_parameter_sync_step",
    },
  ),
});

const ADVANTAGE_FIELDS = section('advantage', {
  adv_estimator: oneOf(
    'the advantage estimator (docs/algorithms.md#advantage-estimators; src/rl/algorithm/advantages.ts)',
    ADV_ESTIMATORS,
    'grpo',
    {
      verl: 'algorithm.adv_estimator',
      openrlhf: '--algo.advantage.estimator',
      also: ['advantage_estimator'],
      // verl's AdvantageEstimator and OpenRLHF's --algo.advantage.estimator values (TRL: the config class, trlClassOf).
      valueNames: {
        grpo: { verl: 'grpo', openrlhf: 'group_norm' },
        dr_grpo: { verl: 'grpo', openrlhf: 'dr_grpo' },
        rloo: { verl: 'rloo', openrlhf: 'rloo' },
        reinforce: { verl: null, openrlhf: null },
        reinforce_pp: { verl: 'reinforce_plus_plus', openrlhf: 'reinforce' },
        reinforce_pp_baseline: { verl: 'reinforce_plus_plus_baseline', openrlhf: 'reinforce_baseline' },
        remax: { verl: 'remax', openrlhf: null },
        opo: { verl: 'opo', openrlhf: null },
        gae: { verl: 'gae', openrlhf: 'gae' },
        grpo_passk: { verl: 'grpo_passk', openrlhf: null },
        optimal_token_baseline: { verl: 'optimal_token_baseline', openrlhf: null },
        max_rl: { verl: null, openrlhf: null },
        f_grpo: { verl: null, openrlhf: null },
      },
    },
  ),
  scale_rewards: oneOf(
    "grpo's divisor: the group's std, the batch's std (Lite PPO), or none (= Dr. GRPO)",
    SCALE_REWARDS,
    'group',
    {
      trl: 'scale_rewards',
      verl: 'algorithm.norm_adv_by_std_in_grpo',
      note: "verl's is a boolean (group or none); OpenRLHF picks group std by estimator (group_norm vs dr_grpo)",
    },
  ),
  multi_objective_aggregation: oneOf(
    'grpo with several reward functions: sum_then_normalize (r = sum_k w_k R_k, then the group baseline and std) or normalize_then_sum (GDPO: each R_k normalized in its group, the weighted sum normalized over the batch; scale_rewards is then unused)',
    MULTI_OBJECTIVE_AGGREGATIONS,
    'sum_then_normalize',
    {
      since: '2026-11-27',
      trl: 'multi_objective_aggregation',
      note: "verl: adv_estimator 'gdpo' reads each reward from compute_score's dict (algorithm.gdpo_reward_keys); OpenRLHF sums the rewards first",
    },
  ),
  reinforce_baseline_momentum: optReal(
    'reinforce: momentum m of the running-mean baseline b <- m b + (1 - m) mean(r)',
    'no baseline (A = r)',
    null,
    0,
    1,
    { maxExclusive: true },
  ),
  gamma: real('gae: discount', 1, 0, 1, {
    trl: 'PPOConfig.gamma',
    verl: 'algorithm.gamma',
    openrlhf: '--algo.advantage.gamma',
    also: ['gamma'],
  }),
  lam: real('gae: lambda of generalized advantage estimation', 0.95, 0, 1, {
    trl: 'PPOConfig.lam',
    verl: 'algorithm.lam',
    openrlhf: '--algo.advantage.lambd',
    also: ['lambd', 'lambda', 'gae_lambda'],
  }),
  f_grpo_gamma: real("f_grpo: gamma of the focal factor (1 - mu_pos)^gamma on GRPO's advantage (0: GRPO)", 1, 0, 100, {
    since: '2026-12-06',
    note: "verl's f_grpo_gamma (F-GRPO; newer than the verl the exports target)",
  }),
  f_grpo_reward_correct: real('f_grpo: R_correct, the reward of a correct completion in mu_pos', 1, -1e6, 1e6, {
    since: '2026-12-06',
    note: "verl's f_grpo_reward_correct (newer than the verl the exports target)",
  }),
  f_grpo_reward_wrong: real('f_grpo: R_wrong, the reward of a wrong completion in mu_pos', 0, -1e6, 1e6, {
    since: '2026-12-06',
    note: "verl's f_grpo_reward_wrong (newer than the verl the exports target)",
  }),
});

const REGULARIZER_FIELDS = {
  ...OBJECTIVE_REGULARIZER_FIELDS,
  ...section('regularizers', {
    ref_model_sync_steps: int(
      'reset the reference policy to the current one every this many steps (0: never)',
      0,
      0,
      1_000_000,
      { trl: 'ref_model_sync_steps' },
    ),
    entropy_target: optReal(
      'adaptive entropy: move alpha by +-entropy_coef_step toward this mean entropy (nats)',
      'alpha stays fixed',
      null,
      0,
      20,
      { trl: 'entropy_target' },
    ),
    entropy_coef_step: real('adaptive entropy: change of alpha per step', 1e-4, 0, 1, { trl: 'entropy_coef_delta' }),
    // Adaptive entropy, TRL's controller (Skywork-OR1; docs/algorithms.md#adaptive-entropy-coefficient): alpha's
    // bounds, and whether alpha acts only while the entropy is at or below entropy_target.
    entropy_coef_min: real('adaptive entropy: lower bound of alpha', -1, -1, 1, {
      since: '2026-11-27',
      trl: 'entropy_coef_min',
      note: 'TRL default 0.0 (the bonus never turns into a penalty); the lab -1',
    }),
    entropy_coef_max: real('adaptive entropy: upper bound of alpha', 1, -1, 1, {
      since: '2026-11-27',
      trl: 'entropy_coef_max',
    }),
    entropy_bonus_gate: flag(
      "adaptive entropy: apply alpha only while the last step's mean entropy is at or below entropy_target (none before the first measurement)",
      false,
      { since: '2026-11-27', trl: 'use_adaptive_entropy', note: 'TRL: always so under use_adaptive_entropy' },
    ),
  }),
};

const OPTIMIZER_FIELDS = section('optimizer', {
  num_iterations: int(
    'mu: passes (PPO epochs) over each batch; 1 with one minibatch makes rho = 1 exactly',
    1,
    1,
    100,
    {
      trl: 'num_iterations',
      verl: 'actor_rollout_ref.actor.ppo_epochs',
      openrlhf: '--train.max_epochs',
      also: ['max_epochs'],
    },
  ),
  num_minibatches: int('optimizer steps per pass; divides N = B*G', 1, 1, 65_536, {
    also: ['ppo_mini_batch_size', 'num_mini_batches'],
    note: "verl ppo_mini_batch_size and OpenRLHF --train.batch_size give a minibatch's size instead: num_minibatches = batch / their size",
  }),
  gradient_accumulation_steps: int(
    "micro-batches per minibatch: each runs its forward and backward in turn, their gradients add up, and the minibatch still takes ONE optimizer step (the same step up to f32 summation order) while only a micro-batch's activations are held at once; divides the minibatch's N / num_minibatches rows",
    1,
    1,
    65_536,
    {
      since: '2026-11-28',
      trl: 'gradient_accumulation_steps',
      note: "verl ppo_micro_batch_size_per_gpu and OpenRLHF --train.micro_batch_size give a micro-batch's size instead: minibatch rows / gradient_accumulation_steps",
    },
  ),
  learning_rate: real('AdamW peak learning rate of the policy', 3e-4, 0, 1, {
    minExclusive: true,
    trl: 'learning_rate',
    verl: 'actor_rollout_ref.actor.optim.lr',
    openrlhf: '--actor.adam.lr',
    also: ['actor_learning_rate'],
  }),
  adam_beta1: real('AdamW beta1', 0.9, 0, 1, {
    maxExclusive: true,
    trl: 'adam_beta1',
    note: 'verl optim.betas and OpenRLHF --actor.adam.betas take the pair (beta1, beta2)',
  }),
  adam_beta2: real('AdamW beta2', 0.999, 0, 1, {
    maxExclusive: true,
    trl: 'adam_beta2',
    note: 'verl optim.betas and OpenRLHF --actor.adam.betas take the pair (beta1, beta2)',
  }),
  adam_epsilon: real('AdamW epsilon', 1e-8, 0, 1, {
    minExclusive: true,
    trl: 'adam_epsilon',
    openrlhf: '--actor.adam.eps',
  }),
  weight_decay: real('AdamW decoupled weight decay', 0, 0, 10, {
    trl: 'weight_decay',
    verl: 'actor_rollout_ref.actor.optim.weight_decay',
    openrlhf: '--actor.adam.weight_decay',
    also: ['l2'],
  }),
  max_grad_norm: real('clip the global gradient norm to this (0: no clipping)', 1, 0, 1e6, {
    trl: 'max_grad_norm',
    verl: 'actor_rollout_ref.actor.optim.clip_grad',
    openrlhf: '--actor.max_norm',
    also: ['grad_clip', 'max_norm'],
  }),
  warmup_steps: int('optimizer steps of linear warmup from 0 to learning_rate', 0, 0, 1_000_000, {
    trl: 'warmup_steps',
    verl: 'actor_rollout_ref.actor.optim.lr_warmup_steps',
    also: ['lr_warmup_ratio', 'warmup_ratio'],
    note: 'OpenRLHF --actor.lr_warmup_ratio is a fraction of the steps',
  }),
  lr_schedule: oneOf(
    'learning rate after warmup: constant, cosine or linear decay to 0 at the last optimizer step',
    ['constant', 'cosine', 'linear'] as const,
    'constant',
    {
      trl: 'lr_scheduler_type',
      verl: 'actor_rollout_ref.actor.optim.lr_scheduler_type',
      openrlhf: '--actor.lr_scheduler',
      also: ['lr_scheduler'],
    },
  ),
  seed: int('seed of sampling, data and initialization', 0, 0, 4_294_967_295, {
    trl: 'seed',
    verl: 'data.seed',
    openrlhf: '--train.seed',
    also: ['seed'],
  }),
  lora_rank: int(
    'LoRA: rank r of the adapters y = x W^T + (alpha / r) (x A^T) B^T on the lora_targets projections; the base weights are frozen and AdamW trains A and B only (0: off, every weight is trained)',
    0,
    0,
    1024,
    {
      verl: 'actor_rollout_ref.model.lora_rank',
      openrlhf: '--ds.lora.rank',
      also: ['r', 'lora_r'],
      note: "PEFT's LoraConfig r; TRL takes a peft_config",
    },
  ),
  lora_alpha: real("LoRA: alpha; the adapters' output is scaled by alpha / lora_rank", 16, 0, 100_000, {
    minExclusive: true,
    verl: 'actor_rollout_ref.model.lora_alpha',
    openrlhf: '--ds.lora.alpha',
    also: ['lora_alpha'],
    note: "PEFT's LoraConfig lora_alpha",
  }),
  lora_targets: optString(
    'LoRA: the projections that get adapters, comma-separated among q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj',
    'all seven projections (all-linear without the LM head)',
    {
      verl: 'actor_rollout_ref.model.target_modules',
      openrlhf: '--ds.lora.target_modules',
      also: ['target_modules', 'lora_target_modules'],
      note: "PEFT's LoraConfig target_modules",
    },
  ),
  weight_dtype: oneOf(
    'how frozen weights are stored on the GPU (the base under LoRA and the reference model; arithmetic stays f32, and weights trained in full stay f32 for AdamW): auto (f32 where the run fits in memory with f32 weights, else bf16), f32, bf16, or f16 (native where the adapter has shader-f16, else unpacked from 32-bit words)',
    WEIGHT_DTYPE_CHOICES,
    'auto',
    {
      trl: 'model_init_kwargs.torch_dtype',
      verl: 'actor_rollout_ref.actor.fsdp_config.model_dtype',
      also: ['torch_dtype', 'dtype', 'model_dtype'],
      note: 'theirs casts every weight (TRL: the policy and its reference; verl: fp32 for the actor, bf16 for the reference by default); here trained weights stay f32',
    },
  ),
  gradient_checkpointing: flag(
    "recompute each layer's activations in the backward instead of keeping them from the forward: the training forward keeps only each layer's input (about L times less activation memory), for one more forward's compute (the memory plan counts it)",
    false,
    {
      trl: 'gradient_checkpointing',
      verl: 'actor_rollout_ref.model.enable_gradient_checkpointing',
      openrlhf: '--actor.gradient_checkpointing_enable',
    },
  ),
});

const CRITIC_FIELDS = section('critic', {
  vf_coef: real('gae: weight of the value loss', 0.1, 0, 100, { trl: 'PPOConfig.vf_coef' }),
  cliprange_value: optReal(
    'gae: eps_v, the clip of V around V_old in the value loss',
    'no value clipping',
    0.2,
    0,
    100,
    {
      minExclusive: true,
      trl: 'PPOConfig.cliprange_value',
      verl: 'critic.cliprange_value',
      openrlhf: '--critic.value_clip',
      also: ['value_clip'],
    },
  ),
  critic_learning_rate: optReal('gae: AdamW learning rate of the critic', 'learning_rate', null, 0, 1, {
    minExclusive: true,
    verl: 'critic.optim.lr',
    openrlhf: '--critic.adam.lr',
    also: ['critic_learning_rate'],
  }),
});

const SCHEDULE_FIELDS = section('schedule', {
  curriculum: oneOf(
    'fixed: always `difficulty`; easy_to_hard: ramp from the easiest to `difficulty` over the run; adaptive: sample difficulties up to `difficulty` with weight 1 - success rate',
    ['fixed', 'easy_to_hard', 'adaptive'] as const,
    'fixed',
  ),
  steps: int(
    'training steps: rollout batches, each giving num_iterations * num_minibatches optimizer steps',
    200,
    1,
    1_000_000,
    { trl: 'max_steps', verl: 'trainer.total_training_steps', note: 'TRL max_steps counts optimizer steps' },
  ),
  eval_every: int('evaluate on held-out items every this many steps (0: never)', 25, 0, 1_000_000, {
    trl: 'eval_steps',
    verl: 'trainer.test_freq',
    openrlhf: '--eval.steps',
    also: ['eval_steps'],
  }),
  eval_items: int('held-out prompts per evaluation', 100, 0, 100_000, { verl: 'data.val_max_samples' }),
  save_every: int(
    'save the checkpoint and trainer state every this many steps (0: only at the end, on pause and on interrupt; the lab also saves at least every 30 s)',
    10,
    0,
    1_000_000,
    { since: '2026-11-24', trl: 'save_steps', verl: 'trainer.save_freq' },
  ),
  eval_num_generations: int(
    'samples per held-out prompt at evaluation, for pass@k (k = 1, 2, 4, ... up to this)',
    8,
    1,
    1024,
    {
      trl: 'num_generations_eval',
      verl: 'actor_rollout_ref.rollout.val_kwargs.n',
      openrlhf: '--eval.n_samples_per_prompt',
      also: ['eval_n_samples_per_prompt'],
    },
  ),
  weight_stats_every: int(
    'measure which weights RL moves every this many steps: per matrix ||W - W_0||_F / ||W_0||_F and the share of the update in its top singular direction; keeps a copy of the starting weights beside the policy (0: never)',
    10,
    0,
    1_000_000,
  ),
  rank1_eval: flag(
    "at each held-out evaluation after step 0, evaluate again with every weight matrix's update W - W_0 replaced by its best rank-1 approximation (keeps a copy of the starting weights; the evaluation takes twice as long)",
    true,
  ),
  alert_action: oneOf(
    'what an alert (entropy collapse, ratio explosion, zero-signal groups, lengths at the cap, reward stuck; docs/metrics.md) does: warn, or warn and pause the run',
    ['warn', 'pause'] as const,
    'warn',
  ),
  speedrun_target: optReal(
    "the speedrun's finish line: the reward the 100-step rolling mean must reach; the run's summary gives the step and the training seconds at which it first did (the RLHF book's --speedrun-target-reward)",
    'no finish line (the summary gives the best 100-step rolling mean)',
    null,
    -1e6,
    1e6,
    { since: '2026-12-06' },
  ),
});

/** Every field of the RL config: one-line doc, default, range or allowed values, section, other trainers' names. The single source. */
export const RL_FIELDS = {
  ...TASK_FIELDS,
  ...SAMPLING_FIELDS,
  ...ADVANTAGE_FIELDS,
  ...DISTILLATION_FIELDS,
  ...POLICY_LOSS_FIELDS,
  ...REGULARIZER_FIELDS,
  ...OPTIMIZER_FIELDS,
  ...CRITIC_FIELDS,
  ...SCHEDULE_FIELDS,
};

/** A complete RL training config. Field docs: RL_FIELDS[field].doc. */
export type RLConfig = ConfigOf<typeof RL_FIELDS>;
export type RLField = keyof RLConfig;

/** Field names in declaration order. */
export const FIELD_NAMES = Object.keys(RL_FIELDS) as RLField[];

/** Two complete configs are the same experiment: every field equal. */
export function sameConfig(a: RLConfig, b: RLConfig): boolean {
  return FIELD_NAMES.every((k) => sameValue(a[k], b[k]));
}

/** Every field's spec under one type, for code that walks the schema. */
export const FIELD_SPECS: Readonly<Record<RLField, FieldSpec>> = RL_FIELDS;

/** Field names by section, in panel order (SECTIONS' order, then declaration order). */
export const FIELD_SECTIONS: Readonly<Record<Section, readonly RLField[]>> = Object.fromEntries(
  (Object.keys(SECTIONS) as Section[]).map((s) => [s, FIELD_NAMES.filter((k) => FIELD_SPECS[k].section === s)]),
) as Record<Section, RLField[]>;

/** The defaults of every field (the base every preset starts from). */
export const DEFAULT_CONFIG: Readonly<RLConfig> = Object.freeze(defaultsOf(RL_FIELDS));

/**
 * The rules between the config's fields that the config alone decides, declared once: the objective's
 * (OBJECTIVE_RULES) and the rest below, each message starting with the field to change. The rules that need the
 * task built (its difficulty range, reward names, prompt lengths) are validate.ts's.
 */
export const RL_RULES: readonly FieldRule<RLConfig>[] = [
  {
    scope: 'training',
    problem: (c) =>
      c.entropy_coef_min > c.entropy_coef_max
        ? `entropy_coef_min: must not exceed entropy_coef_max (${c.entropy_coef_max}), got ${c.entropy_coef_min}`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      !GROUP_ESTIMATORS.includes(c.adv_estimator) || c.num_generations >= 2
        ? null
        : c.adv_estimator === 'rloo'
          ? `num_generations: rloo's leave-one-out baseline divides by G - 1 and needs num_generations >= 2, got ${c.num_generations}`
          : `num_generations: adv_estimator '${c.adv_estimator}' compares the completions of a group and needs num_generations >= 2, got ${c.num_generations}`,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.multi_objective_aggregation === 'normalize_then_sum' && c.adv_estimator !== 'grpo'
        ? `multi_objective_aggregation: normalize_then_sum (GDPO) replaces grpo's normalization and needs adv_estimator 'grpo', got '${c.adv_estimator}'`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.adv_estimator === 'f_grpo' && !(c.f_grpo_reward_correct > c.f_grpo_reward_wrong)
        ? `f_grpo_reward_correct: must be greater than f_grpo_reward_wrong (${c.f_grpo_reward_wrong}), got ${c.f_grpo_reward_correct}`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.adv_estimator === 'max_rl' && (c.reward_fn !== null || c.reward_model !== null)
        ? `${c.reward_fn !== null ? 'reward_fn' : 'reward_model'}: adv_estimator 'max_rl' needs binary (0/1) rewards, and a ${c.reward_fn !== null ? 'reward function of your own' : 'learned reward'} is not; drop it or choose another estimator`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.adv_estimator === 'grpo_passk' && c.scale_rewards === 'batch'
        ? "scale_rewards: adv_estimator 'grpo_passk' divides by the group's std or not at all (verl's norm_adv_by_std_in_grpo); use 'group' or 'none'"
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.adv_estimator === 'optimal_token_baseline' && rolloutCorrectionOf(c)
        ? `${c.tis_cap !== null ? 'tis_cap' : 'rollout_is_mode'}: adv_estimator 'optimal_token_baseline' with a rollout correction would scale each token's variance weight by the squared importance weight (verl's rollout_is_weights), which the lab's scoring pass does not compute; turn the correction off or choose another estimator`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.adv_estimator === 'gae' && c.vf_coef <= 0
        ? `vf_coef: adv_estimator 'gae' learns a critic and needs vf_coef > 0, got ${c.vf_coef}`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.dynamic_sampling && c.num_generations < 2
        ? `dynamic_sampling: drops groups whose rewards are all equal, and with num_generations ${c.num_generations} every group is; use num_generations >= 2`
        : null,
  },
  {
    scope: 'training',
    problem: (c) => {
      const N = c.train_batch_size * c.num_generations;
      if (N % c.num_minibatches !== 0)
        return `num_minibatches: must divide the N = train_batch_size * num_generations = ${N} sequences of a step, got ${c.num_minibatches}`;
      if ((N / c.num_minibatches) % c.gradient_accumulation_steps !== 0)
        return `gradient_accumulation_steps: must divide the minibatch's N / num_minibatches = ${N} / ${c.num_minibatches} = ${N / c.num_minibatches} rows into equal micro-batches, got ${c.gradient_accumulation_steps}`;
      return null;
    },
  },
  // The batch-level token selections (top_entropy_quantile, clip_cov, kl_cov) pick tokens by a threshold over the
  // whole minibatch's entropies or covariances; a micro-batch sees only its own rows, so with
  // gradient_accumulation_steps > 1 they are refused rather than computed over the wrong set.
  ...(
    [
      ['top_entropy_quantile', (c: RLConfig) => c.top_entropy_quantile < 1],
      ['clip_cov_ratio', (c: RLConfig) => c.clip_cov_ratio > 0],
      ['kl_cov_ratio', (c: RLConfig) => c.kl_cov_ratio > 0],
    ] as const
  ).map(
    ([field, on]): FieldRule<RLConfig> => ({
      scope: 'training',
      problem: (c) =>
        c.gradient_accumulation_steps > 1 && on(c)
          ? `gradient_accumulation_steps: ${c.gradient_accumulation_steps} micro-batches cannot run with ${field} ${c[field]}, whose token selection takes a threshold over the whole minibatch; set gradient_accumulation_steps to 1 (raise num_minibatches for memory instead) or turn the selection off`
          : null,
    }),
  ),
  ...OBJECTIVE_RULES,
  ...DISTILLATION_RULES,
  {
    scope: 'training',
    problem: (c) => {
      try {
        parseLoraTargets(c.lora_targets);
        return null;
      } catch (err) {
        return `lora_targets: ${(err as Error).message}`;
      }
    },
  },
  {
    scope: 'training',
    problem: (c) =>
      c.rollout_dtype !== 'f32' && c.lora_rank > 0 && !c.rollout_merge_lora
        ? `rollout_dtype: with LoRA (lora_rank ${c.lora_rank}) a half-precision sampler copy holds the merged matrices: turn rollout_merge_lora on, set weight_dtype to store the base in ${c.rollout_dtype}, or set rollout_dtype to f32`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.rollout_merge_lora && c.lora_rank === 0
        ? "rollout_merge_lora: it merges LoRA adapters into the sampler's copy; with lora_rank 0 there are none (set lora_rank, or turn it off)"
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      (c.max_staleness > 0 || c.weight_sync_steps > 1) && c.lora_rank > 0
        ? `max_staleness: the sampler's weight snapshots are of a policy trained in full; with LoRA (lora_rank ${c.lora_rank}) set max_staleness to 0 and weight_sync_steps to 1`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.kl_placement === 'in_reward' && c.beta > 0 && !TOKEN_REWARD_ESTIMATORS.includes(c.adv_estimator)
        ? `kl_placement: 'in_reward' puts -beta * k1 in per-token rewards, which only ${TOKEN_REWARD_ESTIMATORS.join(', ')} use; ` +
          `adv_estimator '${c.adv_estimator}' needs kl_placement 'in_loss' (or beta 0)`
        : null,
  },
];

/**
 * The settings of the page and the CLIs that are not knobs: where things come from, never what a run computes, so
 * no part of a config, a link or a saved run. Each CLI that takes one reads its flag (--<name>) from here.
 */
export const SETTINGS = {
  hf_endpoint: {
    doc: `the hub a checkpoint or reward_model of the form org/name[@revision] is downloaded from (default: HF_ENDPOINT, else ${DEFAULT_HUB_ENDPOINT}); files are kept in RL_LAB_CACHE_DIR (default ~/.cache/rl-lab) and read from there on later runs with no request; HF_TOKEN is sent to this origin only, for gated or private models`,
    value: 'URL',
    env: 'HF_ENDPOINT',
    storageKey: 'rl-lab.hf_endpoint',
    default: DEFAULT_HUB_ENDPOINT,
  },
  hub_timeout: {
    doc: "seconds a hub download waits for an answer's headers, and for each next byte of a file, before it cuts the transfer (naming the host and the file) and resumes it with Range, up to 3 times; the CLIs read RL_LAB_HUB_TIMEOUT, the page takes it from the same variable when it is built",
    value: 'SECONDS',
    env: HUB_TIMEOUT_VAR,
    default: '30',
  },
} as const satisfies Record<string, SettingSpec>;
export type SettingName = keyof typeof SETTINGS;
