// A supervised run (SFT on the task's demonstrations, src/rl/learners/sft.ts) as a trainer the run session steps like any
// other, with no RL trainer behind it: each step is one optimizer step of train_batch_size x num_generations
// demonstrations on the policy an RL run of the config would train, recorded as a step record (its loss and learning
// rate), with the RL runs' held-out evaluation on their schedule (before the first step and every eval_every steps
// and after the last, when eval_every > 0).
// So the page, the lesson runner and the CLI drive SFT through the one run loop (run-session.ts). Not resumable:
// it keeps no trainer state (the session saves no resume point for it).

import { initLoraAdapters, parseLoraTargets } from '../core/lora-layout';
import { kvCacheDtype, resolveWeightDtype } from '../core/half';
import { Rng } from '../core/random';
import { assertPlanFits } from '../model/memory-plan';
import { CpuPolicy, GpuPolicy, type Policy } from '../model/policy';
import { roundModelWeights } from '../reference/half-weights';
import { derive, taskOf, validateConfig, type RLConfig } from '../schema/config';
import { evaluateHeldOut } from '../rl/algorithm/evaluate';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { trainSft, type SftOptions } from '../rl/learners/sft';
import type { EvalRecord, StepRecord } from '../schema/stream';
import type { TrainerFactory, TrainerRequest, TrainerSetting } from './run-session';

export type { RunMode } from '../schema/run-types';

/**
 * The supervised options of a config: `steps` steps of train_batch_size x num_generations demonstrations (as many
 * sequences as an RL step samples), peak learning_rate without warmup (sft.ts decays it to a tenth over the run),
 * the config's weight decay, gradient clip and seed; the loss read back every step.
 */
export function supervisedOptions(config: RLConfig): SftOptions {
  return {
    steps: config.steps,
    batchSize: config.train_batch_size * config.num_generations,
    lr: config.learning_rate,
    warmup: 0,
    weightDecay: config.weight_decay,
    maxGradNorm: config.max_grad_norm > 0 ? config.max_grad_norm : undefined,
    seed: config.seed,
    noise: 0,
    logEvery: 1,
  };
}

/**
 * The policy an RL run of the request's config trains, built as its learner builds it (rl/learners/learner.ts, rl/learners/cpu-learner.ts):
 * the same rows, LoRA adapters from their own stream of the seed, weight and rollout precisions, and on WebGPU the
 * same memory-plan refusal. Only the policy: a supervised run has no reference, critic or rollouts.
 */
function supervisedPolicy(o: TrainerRequest, config: RLConfig): Policy {
  const derived = derive(config);
  const model = o.init.config;
  const spec =
    config.lora_rank > 0
      ? { rank: config.lora_rank, alpha: config.lora_alpha, targets: parseLoraTargets(config.lora_targets) }
      : null;
  const lora = spec && {
    spec,
    adapters: initLoraAdapters(model, spec, new Rng(Math.imul(config.seed + 7, 0x9e3779b1))),
  };
  const maxRows = Math.max(derived.minibatchSize, config.train_batch_size * config.num_generations, config.eval_items);
  if (o.backend.kind === 'webgpu') {
    const { maxBufferSize, maxStorageBufferBindingSize } = o.backend.ctx.device.limits;
    const device = { maxBufferSize, maxStorageBufferBindingSize, budgetBytes: o.memoryBudgetBytes ?? null };
    const resolved = rlResolvedMemoryPlan(config, model, device);
    assertPlanFits(resolved.plan);
    const weightDtype = resolved.weightDtype;
    return GpuPolicy.create(o.backend.ctx, model, o.init.params, maxRows, lora ?? undefined, {
      weightDtype,
      recompute: config.gradient_checkpointing,
      rolloutDtype: config.rollout_dtype,
      kvDtype: kvCacheDtype(weightDtype),
    });
  }
  const weightDtype = resolveWeightDtype(config.weight_dtype, () => true);
  const params = lora ? roundModelWeights(model, o.init.params, weightDtype) : o.init.params;
  return new CpuPolicy(model, params, lora ?? undefined, {
    rolloutDtype: config.rollout_dtype,
    kvDtype: kvCacheDtype(weightDtype),
  });
}

/**
 * A supervised run's trainer, without an RL trainer: the policy (supervisedPolicy) trained by sft.ts's steps, and the
 * held-out evaluation (rl/algorithm/evaluate.ts) of the run's task at its difficulty, scored by every reward source of the
 * config, sampled as a run that has taken no rollout step. The request's `supervised` options replace the config's
 * (supervisedOptions).
 */
export const createSupervisedTrainer: TrainerFactory = async (o) => {
  if (o.resume) throw new Error('a supervised (sft) run cannot resume from a saved state');
  const config = validateConfig(o.config);
  if (config.reward_fn !== null && !o.rewardSandbox)
    throw new Error('reward_fn: this trainer was given no sandbox to run the reward function in');
  if (config.reward_model !== null && !o.learnedReward)
    throw new Error(`reward_model: ${config.reward_model} was not loaded for this trainer`);
  const derived = derive(config);
  const policy = supervisedPolicy(o, config);
  const userReward = config.reward_fn !== null && o.rewardSandbox ? o.rewardSandbox(config.reward_fn) : null;
  const setting: TrainerSetting = {
    config,
    derived,
    tokenizer: o.tokenizer,
    userReward,
    learnedReward: config.reward_model !== null ? (o.learnedReward ?? null) : null,
    lora:
      config.lora_rank > 0
        ? { rank: config.lora_rank, alpha: config.lora_alpha, targets: parseLoraTargets(config.lora_targets) }
        : null,
    policy,
  };
  const task = taskOf(config);
  const heldOut = taskOf(config, derived.difficulty);
  const sft = trainSft(policy, task, o.tokenizer, o.supervised ?? supervisedOptions(config));
  let step = 0;
  const evaluateAt = async (at: number): Promise<EvalRecord> => ({
    ...(await evaluateHeldOut(setting, policy, heldOut, 0)),
    step: at,
  });
  return {
    get step() {
      return step;
    },
    setting,
    async runStep(): Promise<StepRecord[]> {
      const initialEval = config.eval_every > 0 && step === 0 ? await evaluateAt(0) : undefined;
      const next = await sft.next();
      if (next.done) throw new Error(`the supervised run has done all its ${config.steps} steps`);
      step = next.value.step;
      const record: StepRecord = {
        kind: 'step',
        step,
        optimizerStep: step,
        update: 0,
        updates: 1,
        epoch: 0,
        minibatch: 0,
        metrics: { loss: next.value.loss, learning_rate: next.value.lr },
      };
      if (initialEval) record.initialEval = initialEval;
      if (config.eval_every > 0 && (step % config.eval_every === 0 || step === config.steps))
        record.eval = await evaluateAt(step);
      return [record];
    },
    evaluate: () => evaluateAt(step),
    saveStateBytes: async () => {
      throw new Error('a supervised (sft) run keeps no resume point: start it again to train it again');
    },
    exportCheckpoint: async () => ({
      config: policy.config,
      params: await policy.download(),
      metadata: { made_by: 'rl-lab trainer', task: config.task, steps: String(step), seed: String(config.seed) },
      special: {
        bosId: o.tokenizer.bosId,
        eosId: o.tokenizer.eosId,
        padId: o.tokenizer.padId,
        ...(o.tokenizer.eosIds ? { eosIds: [...o.tokenizer.eosIds] } : {}),
      },
    }),
    destroy: () => {
      void sft.return(undefined);
      userReward?.destroy();
      o.learnedReward?.destroy();
      policy.destroy();
    },
  };
};
