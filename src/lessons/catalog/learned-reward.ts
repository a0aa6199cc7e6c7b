// Lesson learned-reward: optimize a reward model instead of the verifier and the policy finds what the reward model
// likes, not the task. GRPO on copy from the warm start, twice: once rewarded by the verifier, once only by the
// shipped reward model trained in the lab on the warm start's own completions (models/copy-reward-model/, held-out
// pairs ranked right 61%), with the verifier's accuracy still logged at weight 0.

import type { Lesson } from '../lesson';
import { firstLast, runOf, series } from '../narration';

const COMMON = {
  task: 'copy',
  checkpoint: 'copy',
  difficulty: 3,
  temperature: 0.7,
  learning_rate: 1e-3,
  train_batch_size: 4,
  num_generations: 8,
  eval_every: 0,
} as const;

export const learnedReward: Lesson = {
  id: 'learned-reward',
  title: 'What happens when the reward is a learned model?',
  source:
    'Gao, Schulman and Hilton, "Scaling laws for reward model overoptimization" (2022): optimizing a learned reward model raises its score while the true objective first rises, then falls; the RLHF literature calls it reward over-optimization.',
  question: {
    prompt:
      "A reward model was trained in the lab on pairs of the copy warm start's own answers, a right copy preferred to a wrong one of the same prompt; it ranks 61% of held-out pairs right. GRPO now trains on its score alone (the verifier is still measured, at weight 0). Beside it, the same GRPO on the verifier. After 20 steps:",
    choices: [
      'Both runs copy better: the reward model learned what a right copy looks like',
      "The reward model's score climbs while its run's copying accuracy falls, below the verifier run's",
      'The reward model run does not move: a 61% ranker gives no signal',
    ],
    answer: 1,
    why: 'A reward model is right on the completions it was trained on, and wrong in ways nobody checked elsewhere. GRPO moves the policy wherever the score is higher; it soon finds completions the reward model overrates (here the same letters whatever the prompt), so the score climbs as the copies get worse.',
  },
  runs: [
    { key: 'verifier', label: 'reward: the verifier', preset: 'grpo', overrides: { ...COMMON } },
    {
      key: 'proxy',
      label: 'reward: the learned reward model',
      preset: 'grpo',
      overrides: {
        ...COMMON,
        reward_model: 'models/copy-reward-model/',
        reward_weights: { reward_model: 1, accuracy: 0 },
      },
    },
  ],
  steps: 20,
  look: 'Watch the Rewards chart of the second run: rewards/reward_model/mean (what is paid) against rewards/accuracy/mean (what we wanted); then compare accuracy with the first run.',
  narration: [
    'The verifier run: accuracy is {verifier:accuracy}.',
    'The reward-model run: its score rewards/reward_model/mean is {proxy:rewards/reward_model/mean} while its accuracy is {proxy:rewards/accuracy/mean}.',
  ],
  highlight: { charts: ['rewards', 'reward'], planes: ['advantage'] },
  check: {
    claim:
      "in the reward-model run, the reward model's score (mean of the last 5 steps) is at least 0.2 above its first 5 steps while accuracy over the last 5 steps is below its first 5 and below the verifier run's last 5",
    evaluate(runs) {
      const proxyRun = runOf(runs, 'proxy');
      const score = firstLast(series(proxyRun, 'rewards/reward_model/mean'), 5);
      const accuracy = firstLast(series(proxyRun, 'rewards/accuracy/mean'), 5);
      const verifier = firstLast(series(runOf(runs, 'verifier'), 'accuracy'), 5);
      const values = {
        'reward model score, first 5 steps': score.first,
        'reward model score, last 5 steps': score.last,
        'accuracy under the reward model, first 5 steps': accuracy.first,
        'accuracy under the reward model, last 5 steps': accuracy.last,
        'accuracy under the verifier, last 5 steps': verifier.last,
      };
      const observed =
        score.last - score.first >= 0.2 && accuracy.last < accuracy.first && accuracy.last < verifier.last;
      return {
        observed,
        values,
        summary: `The reward model's score went from ${score.first.toFixed(2)} to ${score.last.toFixed(2)} while accuracy under it went from ${accuracy.first.toFixed(2)} to ${accuracy.last.toFixed(2)}; under the verifier accuracy ended at ${verifier.last.toFixed(2)} (means of the first and last 5 steps).`,
      };
    },
    whyNot:
      'In 20 noisy steps of 32 samples the policy may not yet have found what the reward model overrates, so its score rises little; or the verifier run may itself dip on this seed.',
  },
  explain:
    "The reward model only saw the warm start's answers. Off that distribution its scores are guesses, and the policy is an optimizer that goes where the guesses are high: within a few steps it emits the same letters for every prompt, which the reward model scores above any right copy. The verifier run, paid for right copies only, improves. Real RLHF runs meet the same wall later and more slowly (bigger reward models, a KL leash to the reference policy, reward model ensembles, retraining on new samples), which is why they chart a held-out judge beside the proxy and stop, or retrain, when the two part.",
  next: 'Give the verifier part of the weight (reward_weights reward_model:0.5,accuracy:0.5) and run the second run again: does the proxy still win?',
};
