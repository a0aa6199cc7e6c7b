// Everything computed from a valid RL config, in one place: batch and minibatch sizes, optimizer steps, which
// models a run keeps (reference, critic), lengths, the clip bound and KL placement in effect, the reward weights
// and the pass@k values of evaluation. Pure; derive() trusts its input (validate first).

import { taskOf } from './task-of';
import { epsilonHigh } from '../objective';
import { GROUP_ESTIMATORS, type AdvEstimator } from '../algorithm-names';
import { LEARNED_REWARD_NAME } from '../algorithm-names';
import { USER_REWARD_NAME } from '../algorithm-names';
import type { RLConfig } from './schema';

/** Everything computed from a config, in one place. */
export interface DerivedConfig {
  /** N = B*G sequences sampled per step (before dynamic sampling refills). */
  sequencesPerStep: number;
  /** Sequences per optimizer step: N / num_minibatches. */
  minibatchSize: number;
  /** Sequences per forward and backward of the update: minibatchSize / gradient_accumulation_steps. */
  microBatchSize: number;
  /** Optimizer steps per batch: num_iterations * num_minibatches. */
  optimizerStepsPerBatch: number;
  /** Optimizer steps of the whole run: steps * optimizerStepsPerBatch. */
  totalOptimizerSteps: number;
  /** True when beta > 0: a frozen reference policy is kept and run. */
  needsReference: boolean;
  /**
   * The reference reads the policy's frozen base, with no weights of its own: under LoRA the base never moves, so
   * without reference resets (ref_model_sync_steps 0) it is the reference (TRL's PEFT path runs the policy with its
   * adapters disabled; verl's ref_in_actor).
   */
  referenceIsBase: boolean;
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
  /** The reward weights in effect (reward_weights, or the task's own plus user: 1 with a reward_fn and reward_model: 1 with a reward_model). */
  rewardWeights: Record<string, number>;
  /** k values reported as pass@k at evaluation: powers of 2 up to eval_num_generations, and it. */
  passAtKs: number[];
}

/** The derived quantities of a valid config (validate first: derive trusts its input). */
export function derive(c: RLConfig): DerivedConfig {
  const task = taskOf(c);
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
    microBatchSize: N / c.num_minibatches / c.gradient_accumulation_steps,
    optimizerStepsPerBatch,
    totalOptimizerSteps: c.steps * optimizerStepsPerBatch,
    needsReference: c.beta > 0,
    referenceIsBase: c.beta > 0 && c.lora_rank > 0 && c.ref_model_sync_steps === 0,
    needsCritic: c.adv_estimator === 'gae',
    ratioIsOne: c.num_iterations === 1 && c.num_minibatches === 1,
    usesRatio: c.loss_type !== 'pg',
    greedyRolloutsPerStep: greedy,
    maxRolloutsPerStep:
      N * (1 + (c.dynamic_sampling ? c.max_resample : 0)) + greedy * (1 + (c.dynamic_sampling ? c.max_resample : 0)),
    difficulty: task.difficulty,
    maxCompletionLength: L,
    maxPromptTokens: task.maxPromptLength + 1,
    sequenceLength: task.maxPromptLength + 1 + L,
    epsilonHigh: epsilonHigh(c),
    overlongBufferLen: c.overlong_buffer_enable ? (c.overlong_buffer_len ?? Math.max(1, Math.floor(L / 4))) : 0,
    klInLoss: c.beta > 0 && c.kl_placement === 'in_loss',
    klInReward: c.beta > 0 && c.kl_placement === 'in_reward',
    criticLearningRate: c.critic_learning_rate ?? c.learning_rate,
    adaptiveEntropy: c.entropy_target !== null,
    rewardWeights: c.reward_weights
      ? { ...c.reward_weights }
      : {
          accuracy: task.weights.accuracy,
          format: task.weights.format,
          ...(c.reward_fn !== null ? { [USER_REWARD_NAME]: 1 } : {}),
          ...(c.reward_model !== null ? { [LEARNED_REWARD_NAME]: 1 } : {}),
        },
    passAtKs,
  };
}

/** For the UI's estimator picker: which estimators compare within a group (need G >= 2). */
export function isGroupEstimator(e: AdvEstimator): boolean {
  return GROUP_ESTIMATORS.includes(e);
}
