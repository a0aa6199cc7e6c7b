// Lesson reward-hacking: train on a proxy reward and the policy maximizes the proxy, not the task. GRPO on copy
// rewarded only for the format (letters a-f of the right length, reward_weights {accuracy 0, format 1}): the
// format reward climbs toward 1 while the verifier's accuracy, which no longer pays, does not rise.

import type { Lesson } from '../lesson';
import { firstLast, runOf, series } from '../narration';

export const rewardHacking: Lesson = {
  id: 'reward-hacking',
  title: 'What does the policy learn when the reward is a proxy?',
  source:
    'The reward hacking literature (a policy optimizes the reward it is given, not the intent behind it: "specification gaming") and the survey of RL for reasoning models on reward design, which is why verifiable-reward recipes pay for the verified answer and keep format rewards small.',
  question: {
    prompt:
      "GRPO on copying 3 letters, sampled at temperature 1, where the warm start's answers are often the wrong length. The reward pays only for the format: letters a-f, exactly as many as the input. Nothing checks that they are the right letters. After a dozen steps:",
    choices: [
      'Accuracy rises too: a well-formed answer is half way to a right one',
      'The format reward nears its maximum while accuracy stays flat or falls',
      'Nothing moves: the format reward is too easy to teach anything',
    ],
    answer: 1,
    why: 'The gradient pushes toward whatever raised the reward. Any string of 3 letters earns the full reward, so the policy learns to emit 3 letters, right or wrong; the right letters are no more rewarded than wrong ones, so accuracy is left to drift.',
  },
  runs: [
    {
      key: 'proxy',
      label: 'reward: format only',
      preset: 'grpo',
      overrides: {
        task: 'copy',
        checkpoint: 'copy',
        difficulty: 3,
        reward_weights: { accuracy: 0, format: 1 },
        temperature: 1,
        learning_rate: 1e-3,
        eval_every: 0,
      },
    },
  ],
  steps: 12,
  look: 'Watch the Rewards chart: rewards/format/mean (what is paid) against rewards/accuracy/mean (what we wanted), and accuracy on the Reward chart.',
  narration: [
    'The proxy: rewards/format/mean is {proxy:rewards/format/mean}, and the reward the policy sees is {proxy:reward}.',
    'The task: accuracy is {proxy:accuracy}. No part of the reward depends on it.',
  ],
  highlight: { charts: ['rewards', 'reward'], planes: ['advantage'] },
  check: {
    claim:
      'the format reward (mean of the last 3 steps) is at least 0.9 and at least 0.05 above its first 3 steps, while accuracy over the last 3 steps is no more than 0.03 above its first 3',
    evaluate(runs) {
      const r = runOf(runs, 'proxy');
      const format = firstLast(series(r, 'rewards/format/mean'), 3);
      const accuracy = firstLast(series(r, 'accuracy'), 3);
      const values = {
        'format reward, first 3 steps': format.first,
        'format reward, last 3 steps': format.last,
        'accuracy, first 3 steps': accuracy.first,
        'accuracy, last 3 steps': accuracy.last,
      };
      const observed =
        format.last >= 0.9 && format.last - format.first >= 0.05 && accuracy.last - accuracy.first <= 0.03;
      return {
        observed,
        values,
        summary: `The format reward went from ${format.first.toFixed(2)} to ${format.last.toFixed(2)} while accuracy went from ${accuracy.first.toFixed(2)} to ${accuracy.last.toFixed(2)} (means of the first and last 3 steps).`,
      };
    },
    whyNot:
      'The warm start already gives well-formed answers most of the time, so on some seeds the format reward starts so high that it has little room to rise; and right answers are well formed too, so pushing toward 3-letter answers can carry a few right copies along and accuracy can rise by chance over a dozen noisy steps of 64 samples.',
  },
  explain:
    "The reward was a proxy for the task: every correct copy is well formed, but most well-formed strings are wrong. GRPO rewards completions above their group's mean, so once the policy emits 3 letters every time, every group is all-equal at reward 1 and learning stops: the proxy is maximized and the task is not learned. This is reward hacking in its simplest form. Real cases are subtler (answers that fool a grader, tests edited to pass, padding that a length bonus pays for), and the remedy is the same: reward the verified outcome, and watch the parts of the reward, not only their sum.",
  next: "Set reward_weights to accuracy 0.9, format 0.1 (the task's own) and run again: the same format is learned, and accuracy rises with it.",
};
