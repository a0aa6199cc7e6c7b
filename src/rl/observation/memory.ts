// The memory plan of an RL run: maps the config's knobs (batch, generations, minibatches and their micro-batches,
// lengths, KL, critic) onto the model's memory plan (src/model/memory-plan.ts), naming those knobs in its refusals.
// Pure: the device's limits and the budget come from the caller. Not the plan's arithmetic, which lives with the model's buffers.

import type { ModelConfig } from '../../schema/model-config';
import {
  planMemory,
  type MemoryDevice,
  type MemoryKnobs,
  type MemoryPlan,
  type MemoryShape,
} from '../../model/memory-plan';
import { parseLoraTargets } from '../../core/lora-layout';
import { derive, type RLConfig } from '../../schema/config';
import { resolveWeightDtype, WEIGHT_DTYPE_BYTES, type WeightDtype } from '../../core/half';
import { snapshotSlots } from '../algorithm/staleness';

/** The knobs of the RL config that scale each part of the plan, as the refusals name them. */
export const RL_MEMORY_KNOBS: MemoryKnobs = {
  rolloutRows: 'train_batch_size x num_generations (sequences sampled at once)',
  trainRows:
    'the micro-batch (raise gradient_accumulation_steps, or num_minibatches, or lower train_batch_size x num_generations)',
  completionTokens: 'max_completion_length',
  model: 'the model (a smaller preset or checkpoint)',
  weightTracking: 'weight_stats_every 0 and rank1_eval false (no copy of the starting weights)',
  samplerCopies: 'max_staleness (max_staleness + 2 copies of the weights; 0 with weight_sync_steps 1 keeps none)',
};

/** A run's distillation teachers' models: one (the teacher knob's), or every teacher of multi-teacher distillation. */
export type TeacherModels = ModelConfig | readonly ModelConfig[];

/**
 * The shapes a run of `config` allocates for. Rollouts sample N = B*G sequences at once; an evaluation samples at
 * most max(64, N) (src/rl/algorithm/evaluate.ts: chunks of eval_num_generations samples per prompt). Scoring and updates
 * run micro-batches of N / num_minibatches / gradient_accumulation_steps sequences, each prompt + completion long
 * (gradient accumulation holds one micro-batch's activations at a time; the gradients are the model's own buffers).
 */
export function rlMemoryShape(config: RLConfig, teachers: TeacherModels = []): MemoryShape {
  const teacherList = Array.isArray(teachers) ? teachers : [teachers as ModelConfig];
  const d = derive(config);
  const lora =
    config.lora_rank > 0
      ? { rank: config.lora_rank, alpha: config.lora_alpha, targets: parseLoraTargets(config.lora_targets) }
      : null;
  // As the trainer decides: under LoRA no weight is tracked (the base does not move).
  const tracking = lora === null;
  const N = d.sequencesPerStep;
  const evalRows =
    config.eval_items > 0 ? Math.min(Math.max(64, N), config.eval_items * config.eval_num_generations) : 0;
  return {
    rolloutRows: Math.max(N, evalRows),
    promptTokens: d.maxPromptTokens,
    completionTokens: d.maxCompletionLength,
    trainRows: d.microBatchSize,
    reference: d.needsReference,
    // As the trainer decides: under LoRA without reference resets the reference is the policy's frozen base.
    ...(d.referenceIsBase ? { referenceIsBase: true } : {}),
    critic: d.needsCritic,
    // As the trainer decides (src/rl/algorithm/trainer.ts): W_0 is kept when weights are measured or rank-1 evaluated.
    startWeights: tracking && (config.weight_stats_every > 0 || (config.rank1_eval && config.eval_every > 0)),
    // As the trainer's evaluate() decides: the rank-1 copy is made whenever it evaluates after step 0, items or not.
    rank1Backup: tracking && config.rank1_eval && config.eval_every > 0,
    ...(lora ? { lora } : {}),
    ...(config.gradient_checkpointing ? { recompute: true } : {}),
    // As the learner builds its policy (learner-policy.ts): a half copy, or under LoRA the merged copy.
    ...(config.rollout_dtype !== 'f32' || (lora && config.rollout_merge_lora)
      ? { rolloutCopy: { bytes: WEIGHT_DTYPE_BYTES[config.rollout_dtype] as 2 | 4 } }
      : {}),
    // As the trainer decides (src/rl/algorithm/staleness.ts): the snapshots and one backup of the live weights.
    ...(snapshotSlots(config) > 0 ? { samplerCopies: snapshotSlots(config) + 1 } : {}),
    // On-policy distillation's teachers (src/rl/learners/teacher.ts): frozen, scoring the training shape only.
    ...(teacherList.length ? { teachers: teacherList } : {}),
  };
}

/**
 * The memory plan of a run of `config` on `model` against the device's limits and budget, with the frozen weights
 * (the LoRA base, the reference) stored at `frozenWeightBytes` a value (4: f32; 2: the weight_dtype knob's bf16/f16)
 * and the rollouts' KV cache at the same width, as the learner stores it (kvCacheDtype in src/core/half.ts).
 */
export function rlMemoryPlan(
  config: RLConfig,
  model: ModelConfig,
  device: MemoryDevice,
  frozenWeightBytes: 2 | 4 = 4,
  teachers: TeacherModels = [],
): MemoryPlan {
  const shape = {
    ...rlMemoryShape(config, teachers),
    storageBytes: frozenWeightBytes,
    kvCacheBytes: frozenWeightBytes,
  };
  return planMemory(model, shape, RL_MEMORY_KNOBS, device);
}

/**
 * The weight_dtype knob resolved against the device (resolveWeightDtype: 'auto' is f32 where the plan with f32
 * storage fits, else bf16) and the plan at that width: what the trainer checks before allocating, and what the CLI
 * prints.
 */
export function rlResolvedMemoryPlan(
  config: RLConfig,
  model: ModelConfig,
  device: MemoryDevice,
  teachers: TeacherModels = [],
): { weightDtype: WeightDtype; plan: MemoryPlan } {
  const f32Plan = rlMemoryPlan(config, model, device, 4, teachers);
  const weightDtype = resolveWeightDtype(config.weight_dtype, () => f32Plan.problems.length === 0);
  const plan = WEIGHT_DTYPE_BYTES[weightDtype] === 4 ? f32Plan : rlMemoryPlan(config, model, device, 2, teachers);
  return { weightDtype, plan };
}
