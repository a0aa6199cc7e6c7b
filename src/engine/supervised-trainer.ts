// A supervised run (SFT on the task's demonstrations, src/rl/learners/sft.ts) as a trainer the run session steps like
// any other, with no RL trainer behind it: each step runs sft.ts's optimizer steps up to the next one whose loss is
// read back (every step unless `logEvery` says otherwise) and is recorded as a step record (its loss and learning
// rate, and with `validation` the greedy held-out accuracy after it), on the policy an RL run of the config would
// train, with the RL runs' held-out evaluation on their schedule (before the first step and every eval_every steps
// and after the last, when eval_every > 0). With `stopAtAccuracy` the run ends early once validation reaches it.
// So the page, the lesson runner and `npm run train -- --sft` drive SFT through the one run loop (run-session.ts).
// Not resumable: it keeps no trainer state (the session saves no resume point for it).

import { distills } from '../schema/distillation';
import type { LoraSpec } from '../core/lora-layout';
import type { Policy } from '../model/policy';
import { derive, taskOf, validateConfig, type RLConfig } from '../schema/config';
import { evaluateHeldOut } from '../rl/algorithm/evaluate';
import { cpuLearnerPolicy, gpuLearnerPolicy, learnerPolicyInit } from '../rl/learners/learner-policy';
import { evaluateGreedy, trainSft, type SftOptions } from '../rl/learners/sft';
import type { EvalRecord, StepRecord } from '../schema/stream';
import type { TrainerFactory, TrainerRequest, TrainerSetting } from './run-session';

export type { RunMode } from '../schema/run-types';

/** What a supervised run does: sft.ts's options, and what the run adds around its steps. */
export interface SupervisedOptions extends SftOptions {
  /** Rows of the policy's forward (default: the RL run's of the config, learnerPolicyInit). */
  rows?: number;
  /**
   * Greedy accuracy on `n` held-out items drawn with `seed` (evaluateGreedy) after every step the run records (every
   * `logEvery` optimizer steps, and the last), as eval/validation_accuracy. Its own seed keeps a final evaluation on another seed unbiased.
   */
  validation?: { n: number; seed: number };
  /** Ends the run once validation accuracy reaches this (warm starts that leave RL room); needs `validation`. */
  stopAtAccuracy?: number;
}

/**
 * The supervised options of a config: `steps` steps of train_batch_size x num_generations demonstrations (as many
 * sequences as an RL step samples), peak learning_rate without warmup (sft.ts decays it to a tenth over the run),
 * the config's weight decay, gradient clip and seed; the loss read back every step.
 */
export function supervisedOptions(config: RLConfig): SupervisedOptions {
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
 * The policy an RL run of the request's config trains, built as its learner builds it (learnerPolicyInit, then
 * gpuLearnerPolicy or cpuLearnerPolicy, src/rl/learners/learner-policy.ts): the same rows (unless `rows` says), LoRA adapters
 * from their own stream of the seed, weight and rollout precisions, and on WebGPU the same memory-plan refusal. Only
 * the policy: a supervised run has no reference, critic or rollouts.
 */
function supervisedPolicy(
  o: TrainerRequest,
  config: RLConfig,
  rows: number | undefined,
): { policy: Policy; lora: LoraSpec | null } {
  const init = {
    ...o.init,
    ...learnerPolicyInit(config, o.init.config, o.backend, { memoryBudgetBytes: o.memoryBudgetBytes, rows }),
  };
  const policy = o.backend.kind === 'webgpu' ? gpuLearnerPolicy(o.backend.ctx, init) : cpuLearnerPolicy(init);
  return { policy, lora: init.lora?.spec ?? null };
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
  if (distills(config))
    throw new Error(
      `${config.self_distill ? 'self_distill' : 'teacher'}: a supervised (sft) run trains on the task's demonstrations; on-policy distillation scores the policy's own samples, so run it in RL mode`,
    );
  if (config.reward_fn !== null && !o.rewardSandbox)
    throw new Error('reward_fn: this trainer was given no sandbox to run the reward function in');
  if (config.reward_model !== null && !o.learnedReward)
    throw new Error(`reward_model: ${config.reward_model} was not loaded for this trainer`);
  const derived = derive(config);
  const options = o.supervised ?? supervisedOptions(config);
  if (options.stopAtAccuracy !== undefined && !options.validation)
    throw new Error('a supervised run stops at a validation accuracy only when it validates (validation)');
  const { policy, lora } = supervisedPolicy(o, config, options.rows);
  const userReward = config.reward_fn !== null && o.rewardSandbox ? o.rewardSandbox(config.reward_fn) : null;
  const setting: TrainerSetting = {
    config,
    derived,
    tokenizer: o.tokenizer,
    userReward,
    learnedReward: config.reward_model !== null ? (o.learnedReward ?? null) : null,
    lora,
    policy,
  };
  const task = taskOf(config);
  const heldOut = taskOf(config, derived.difficulty);
  const sft = trainSft(policy, task, o.tokenizer, options);
  let step = 0;
  let finished = false;
  const evaluateAt = async (at: number): Promise<EvalRecord> => ({
    ...(await evaluateHeldOut(setting, policy, heldOut, 0)),
    step: at,
  });
  return {
    get step() {
      return step;
    },
    get finished() {
      return finished;
    },
    setting,
    async runStep(): Promise<StepRecord[]> {
      const initialEval = config.eval_every > 0 && step === 0 ? await evaluateAt(0) : undefined;
      const next = finished ? null : await sft.next();
      if (!next || next.done) throw new Error(`the supervised run has done all its ${step} steps`);
      step = next.value.step;
      if (step >= options.steps) finished = true;
      const metrics: Record<string, number> = { loss: next.value.loss, learning_rate: next.value.lr };
      if (options.validation) {
        const { n, seed } = options.validation;
        const accuracy = (await evaluateGreedy(policy, task, o.tokenizer, { n, seed, split: 'heldout' })).accuracy;
        metrics['eval/validation_accuracy'] = accuracy;
        if (options.stopAtAccuracy !== undefined && accuracy >= options.stopAtAccuracy) finished = true;
      }
      const record: StepRecord = {
        kind: 'step',
        step,
        optimizerStep: step,
        update: 0,
        updates: 1,
        epoch: 0,
        minibatch: 0,
        metrics,
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
