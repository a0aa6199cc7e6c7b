// A learned reward as the trainer sees it: one batched, awaited call per batch of completions that returns one number
// each, scored as the reward function `reward_model` (reward_weights.reward_model, rewards/reward_model/mean). Two
// kinds behind it: a text classifier run by transformers.js (src/model/reward-classifier.ts) and a reward model
// trained in the lab (reward-model.ts). Loading either from a folder is the engine's (src/engine/learned-reward.ts).

import type { RewardClassifier } from '../../model/reward-classifier';
import type { LabRewardModel } from './reward-model';

/** One completion to score, as tokens (the lab's reward model reads these) and as text (a classifier reads this). */
export interface LearnedRewardInput {
  promptIds: readonly number[];
  completionIds: readonly number[];
  completion: string;
}

export interface LearnedReward {
  /** What it is, in words ("text classifier models/sentiment-char/, label POSITIVE"). */
  readonly source: string;
  /** One reward per input, in order; one batched call. */
  score(batch: readonly LearnedRewardInput[]): Promise<Float64Array>;
  destroy(): void;
}

/** A text classifier's chosen label as the reward of each completion's text. */
export function classifierReward(classifier: RewardClassifier, source: string): LearnedReward {
  return {
    source: `${source}, ${classifier.output} of ${classifier.label}`,
    score: (batch) => classifier.score(batch.map((b) => b.completion)),
    destroy: () => void classifier.dispose(),
  };
}

/** A lab reward model's score of each prompt + completion. */
export function labReward(rm: LabRewardModel, source: string): LearnedReward {
  return {
    source,
    score: async (batch) =>
      Float64Array.from(await rm.score(batch.map((b) => ({ prompt: b.promptIds, completion: b.completionIds })))),
    destroy: () => rm.destroy(),
  };
}
