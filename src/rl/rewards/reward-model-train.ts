// Training a reward model in the lab, headless: sample groups of the policy's own completions with the run's sampler,
// judge them with the task's verifier (a completion is preferred when its accuracy part is 1 and the other's is
// not), train a LabRewardModel on those pairs with the Bradley-Terry loss, and measure how often it ranks held-out
// pairs right. Used by `npm run reward-model` and the tests; the RL run that then optimizes it is an ordinary run with
// reward_model pointing at the saved folder. Not the page's flow.

import type { GpuContext } from '../../gpu';
import { encodeCheckpoint, type Checkpoint, type ParamArrays, type SpecialIds } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import type { Policy } from '../../model/policy';
import { Rng } from '../../core/random';
import { getTask } from '../../tasks';
import type { RolloutSetting } from '../algorithm/rollouts';
import { completionTokens, sampleStepRollouts } from '../algorithm/rollouts';
import {
  LabRewardModel,
  preferencePairs,
  REWARD_MODEL_KIND,
  type JudgedGroup,
  type PreferencePair,
  type RewardModelStepMetrics,
} from './reward-model';

export interface RewardModelTrainingOptions {
  /** Preference pairs to train on. */
  pairs: number;
  /** Preference pairs held out to measure ranking accuracy. */
  heldOutPairs: number;
  /** Optimizer steps. */
  steps: number;
  /** Pairs per optimizer step (drawn from the training pairs in order, wrapping around). */
  batchPairs: number;
  learningRate: number;
  /** lambda of the centering term. */
  centerCoef: number;
  /** Most pairs taken from one group (so a few groups do not dominate). */
  pairsPerGroup: number;
  /** Rollout batches sampled at most while collecting pairs. */
  maxBatches: number;
}

export const REWARD_MODEL_TRAINING_DEFAULTS: RewardModelTrainingOptions = {
  pairs: 192,
  heldOutPairs: 64,
  steps: 60,
  batchPairs: 16,
  learningRate: 3e-3,
  centerCoef: 0.01,
  pairsPerGroup: 4,
  maxBatches: 40,
};

/** Counts of what collecting saw. */
export interface CollectedPairs {
  pairs: PreferencePair[];
  batches: number;
  groups: number;
  /** Groups with both correct and wrong completions (the only ones that give pairs). */
  mixedGroups: number;
}

/** Samples rollout batches from `policy` until `want` pairs are collected or `maxBatches` batches are spent. */
export async function collectPreferencePairs(
  s: RolloutSetting,
  policy: Policy,
  want: number,
  opts: { pairsPerGroup: number; maxBatches: number; seed: number },
): Promise<CollectedPairs> {
  const task = getTask(s.config.task, s.derived.difficulty);
  const rng = new Rng(opts.seed);
  const G = s.config.num_generations;
  const out: CollectedPairs = { pairs: [], batches: 0, groups: 0, mixedGroups: 0 };
  while (out.pairs.length < want && out.batches < opts.maxBatches) {
    const ro = await sampleStepRollouts(s, policy, task, rng, out.batches);
    out.batches += 1;
    const groups: JudgedGroup[] = ro.items.map((_, g) => {
      const rows = Array.from({ length: G }, (_, i) => g * G + i);
      return {
        prompt: ro.prompts[g * G],
        completions: rows.map((r) => completionTokens(ro.rollout, r, s.tokenizer)),
        correct: rows.map((r) => ro.verdicts[r].parts.accuracy === 1),
      };
    });
    out.groups += groups.length;
    out.mixedGroups += groups.filter((g) => g.correct.some(Boolean) && !g.correct.every(Boolean)).length;
    out.pairs.push(...preferencePairs(groups, opts.pairsPerGroup));
  }
  out.pairs = out.pairs.slice(0, want);
  return out;
}

/** The fraction of `pairs` the model ranks right (chosen scored strictly higher). */
export async function rankingAccuracy(rm: LabRewardModel, pairs: readonly PreferencePair[]): Promise<number> {
  if (pairs.length === 0) return NaN;
  const chosen = await rm.score(pairs.map((p) => ({ prompt: p.prompt, completion: p.chosen })));
  const rejected = await rm.score(pairs.map((p) => ({ prompt: p.prompt, completion: p.rejected })));
  let right = 0;
  for (let i = 0; i < pairs.length; i++) if (chosen[i] > rejected[i]) right++;
  return right / pairs.length;
}

export interface RewardModelTrainingResult {
  rm: LabRewardModel;
  collected: CollectedPairs;
  trainPairs: number;
  heldOutPairs: number;
  history: RewardModelStepMetrics[];
  heldOutAccuracyBefore: number;
  heldOutAccuracyAfter: number;
}

/**
 * Collects pairs from the policy, splits off the held-out ones (the last `heldOutPairs`, from batches the training
 * pairs never saw), and trains a reward model started from the policy's trunk.
 */
export async function trainLabRewardModel(
  s: RolloutSetting,
  policy: Policy,
  start: { ctx: GpuContext; config: ModelConfig; params: ParamArrays },
  opts: RewardModelTrainingOptions,
  onStep?: (step: number, m: RewardModelStepMetrics) => void,
): Promise<RewardModelTrainingResult> {
  const collected = await collectPreferencePairs(s, policy, opts.pairs + opts.heldOutPairs, {
    pairsPerGroup: opts.pairsPerGroup,
    maxBatches: opts.maxBatches,
    seed: s.config.seed ^ 0x5eed,
  });
  const all = collected.pairs;
  if (all.length < 2) {
    throw new Error(
      `reward model: only ${all.length} preference pair(s) in ${collected.batches} batches (${collected.mixedGroups} of ${collected.groups} groups had both a correct and a wrong completion); ` +
        'a policy that is always right or always wrong gives no preferences: start from another checkpoint or raise temperature',
    );
  }
  const held = Math.min(opts.heldOutPairs, Math.floor(all.length / 4));
  const train = all.slice(0, all.length - held);
  const heldOut = all.slice(all.length - held);
  const rm = LabRewardModel.create(start.ctx, start.config, start.params, {
    padId: s.tokenizer.padId,
    maxRows: Math.max(64, 2 * opts.batchPairs),
  });
  const heldOutAccuracyBefore = await rankingAccuracy(rm, heldOut);
  const history: RewardModelStepMetrics[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const batch = Array.from(
      { length: Math.min(opts.batchPairs, train.length) },
      (_, i) => train[(step * opts.batchPairs + i) % train.length],
    );
    const m = await rm.trainStep(batch, {
      lr: opts.learningRate,
      weightDecay: 0,
      maxGradNorm: 1,
      centerCoef: opts.centerCoef,
    });
    history.push(m);
    onStep?.(step + 1, m);
  }
  const heldOutAccuracyAfter = await rankingAccuracy(rm, heldOut);
  return {
    rm,
    collected,
    trainPairs: train.length,
    heldOutPairs: heldOut.length,
    history,
    heldOutAccuracyBefore,
    heldOutAccuracyAfter,
  };
}

/** The saved folder's files: model.safetensors and config.json with "rl_lab" saying what it is and how it was made. */
export async function rewardModelFiles(
  r: RewardModelTrainingResult,
  special: SpecialIds,
  made: Record<string, unknown>,
): Promise<{ safetensors: Uint8Array; configJson: string }> {
  const ck: Checkpoint = {
    config: r.rm.config,
    params: await r.rm.download(),
    special,
    metadata: { rl_lab: REWARD_MODEL_KIND },
  };
  const { safetensors, configJson } = encodeCheckpoint(ck);
  const json = JSON.parse(configJson) as Record<string, unknown>;
  json.rl_lab = {
    kind: REWARD_MODEL_KIND,
    score: "the head's first output at the sequence's last token (prompt + completion, left-padded)",
    train_pairs: r.trainPairs,
    held_out_pairs: r.heldOutPairs,
    held_out_accuracy: r.heldOutAccuracyAfter,
    ...made,
  };
  return { safetensors, configJson: `${JSON.stringify(json, null, 2)}\n` };
}
