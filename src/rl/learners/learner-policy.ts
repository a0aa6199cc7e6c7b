// The policy a run of a config trains, as its learner builds it: its rows, its LoRA adapters (fresh ones from their
// own stream of the seed), the weight and rollout precisions and, on WebGPU, the memory-plan refusal; then the GPU
// policy (learner.ts) or its CPU twin (cpu-learner.ts) built from them. One construction for the RL trainer's
// learners and the supervised run (src/engine/supervised-trainer.ts), so both train the same policy.

import type { GpuContext } from '../../gpu';
import type { ParamArrays } from '../../io/checkpoint';
import { initLoraAdapters, parseLoraTargets } from '../../core/lora-layout';
import { kvCacheDtype, resolveWeightDtype } from '../../core/half';
import { Rng } from '../../core/random';
import { assertPlanFits } from '../../model/memory-plan';
import { CpuPolicy, GpuPolicy } from '../../model/policy';
import { roundModelWeights } from '../../reference/half-weights';
import { derive, type RLConfig } from '../../schema/config';
import type { ModelConfig } from '../../schema/model-config';
import { rlResolvedMemoryPlan } from '../observation/memory';
import type { LearnerInit } from './learner';

/** The policy's part of a learner's init, read from the run's config. */
export type LearnerPolicyInit = Pick<
  LearnerInit,
  'maxRows' | 'lora' | 'weightDtype' | 'rolloutDtype' | 'rolloutMergeLora' | 'recompute' | 'frozen'
>;

/** The device a policy is built on: WebGPU with its context, or the CPU twins. */
export type PolicyBackend = { kind: 'webgpu'; ctx: GpuContext } | { kind: 'cpu' };

/**
 * The policy's part of a learner's init for a run of `config` on `model`: the most rows one forward takes (a
 * minibatch, a step's sequences, an evaluation; `rows` replaces it), under LoRA the adapters (`adapters`: a saved
 * state's; else fresh ones from their own stream of the seed, so turning LoRA on leaves the data and sampling RNGs
 * alone), and the storage dtype of the frozen weights. weight_dtype 'auto': f32 where the plan with f32 weights fits
 * (every toy preset: seeded runs unchanged), else bf16; without a device (the CPU twins) there is no budget to exceed:
 * f32. On WebGPU the run is then checked against the plan at the resolved width (frozen weights and the rollouts' KV
 * cache, src/rl/observation/memory.ts) and refused before anything is allocated, with the knobs to change.
 */
export function learnerPolicyInit(
  config: RLConfig,
  model: ModelConfig,
  backend: PolicyBackend,
  opts: {
    memoryBudgetBytes?: number | null;
    adapters?: ParamArrays;
    rows?: number;
    teachers?: readonly ModelConfig[];
  } = {},
): LearnerPolicyInit {
  const spec =
    config.lora_rank > 0
      ? { rank: config.lora_rank, alpha: config.lora_alpha, targets: parseLoraTargets(config.lora_targets) }
      : null;
  const lora = spec && {
    spec,
    adapters: opts.adapters ?? initLoraAdapters(model, spec, new Rng(Math.imul(config.seed + 7, 0x9e3779b1))),
  };
  const maxRows =
    opts.rows ??
    Math.max(derive(config).minibatchSize, config.train_batch_size * config.num_generations, config.eval_items);
  let weightDtype = resolveWeightDtype(config.weight_dtype, () => true);
  if (backend.kind === 'webgpu') {
    const { maxBufferSize, maxStorageBufferBindingSize } = backend.ctx.device.limits;
    const device = { maxBufferSize, maxStorageBufferBindingSize, budgetBytes: opts.memoryBudgetBytes ?? null };
    const resolved = rlResolvedMemoryPlan(config, model, device, opts.teachers);
    weightDtype = resolved.weightDtype;
    assertPlanFits(resolved.plan);
  }
  return {
    maxRows,
    lora,
    weightDtype,
    rolloutDtype: config.rollout_dtype,
    rolloutMergeLora: lora !== null && config.rollout_merge_lora,
    recompute: config.gradient_checkpointing,
  };
}

/** The weights a policy starts from and what its learner init says of it. */
export type PolicyStart = { config: ModelConfig; params: ParamArrays } & LearnerPolicyInit;

/**
 * The learner's policy on WebGPU: LoRA adapters on a base stored at the weight dtype (a policy trained in full keeps
 * f32), and the rollouts' KV cache following the frozen weights' dtype (kvCacheDtype): half wherever weight_dtype is.
 */
export function gpuLearnerPolicy(ctx: GpuContext, init: PolicyStart): GpuPolicy {
  const weightDtype = init.weightDtype ?? 'f32';
  return GpuPolicy.create(ctx, init.config, init.params, init.maxRows, init.lora ?? undefined, {
    weightDtype,
    recompute: init.recompute ?? false,
    rolloutDtype: init.rolloutDtype,
    rolloutMergeLora: init.rolloutMergeLora ?? false,
    kvDtype: kvCacheDtype(weightDtype),
    ...(init.frozen ? { frozen: true } : {}),
  });
}

/**
 * The learner's policy on the CPU twins: the twin of the GPU's half storage, a frozen base (LoRA) holding its weights
 * rounded as the GPU would store them (weight_dtype) and computing in f32; its rollouts round keys and values as the
 * GPU's KV cache stores them (kvCacheDtype).
 */
export function cpuLearnerPolicy(init: PolicyStart): CpuPolicy {
  const weightDtype = init.weightDtype ?? 'f32';
  const params = init.lora || init.frozen ? roundModelWeights(init.config, init.params, weightDtype) : init.params;
  return new CpuPolicy(init.config, params, init.lora ?? undefined, {
    rolloutDtype: init.rolloutDtype,
    rolloutMergeLora: init.rolloutMergeLora ?? false,
    kvDtype: kvCacheDtype(weightDtype),
  });
}
