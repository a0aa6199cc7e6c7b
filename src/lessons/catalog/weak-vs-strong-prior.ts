// Lesson weak-vs-strong-prior: RL amplifies what the start can already do. The same warm start on copy at the
// length it was trained on (it solves some) and at a longer length (it solves almost none): the first run learns,
// the second sees groups that all fail and gets no gradient.

import type { Lesson } from '../lesson';
import { firstLast, meanOf, runOf, series } from '../narration';

const COMMON = { task: 'copy', checkpoint: 'copy', temperature: 0.7, learning_rate: 1e-3, eval_every: 0 } as const;

export const weakVsStrongPrior: Lesson = {
  id: 'weak-vs-strong-prior',
  title: 'Why does RL need a start that already succeeds sometimes?',
  source:
    "The survey of RL for reasoning models (the base model's prior bounds what verifiable rewards can teach) and DAPO (groups whose rewards are all equal carry no gradient under group-relative advantages).",
  question: {
    prompt:
      'One warm start, trained to copy 3 letters. Run A trains GRPO on copying 3 letters, run B on copying 5 letters, where the start almost never succeeds. Same steps, same learning rate. What happens to B?',
    choices: [
      'B learns faster: it has more to learn',
      'B learns about as fast as A',
      'B barely moves: nearly every group fails entirely, so there is nothing to push toward',
    ],
    answer: 2,
    why: "GRPO's advantage is a completion's reward minus its group's mean. When all G completions of a prompt fail, every advantage is 0 and the prompt teaches nothing. RL can only reinforce successes the policy already samples.",
  },
  runs: [
    // The weak run's completions are cut at 6 tokens (5 letters and EOS, all a right answer needs) so that its
    // failures, which run long, cost no more than the strong run's.
    {
      key: 'strong',
      label: 'copy 3 letters: the start solves some',
      preset: 'grpo',
      overrides: { ...COMMON, difficulty: 3 },
    },
    {
      key: 'weak',
      label: 'copy 5 letters: the start solves none or almost none',
      preset: 'grpo',
      overrides: { ...COMMON, difficulty: 5, max_completion_length: 6 },
    },
  ],
  steps: 10,
  look: 'Compare the two runs on the Reward chart (accuracy) and the Fractions chart (frac_reward_zero_std: the share of groups whose rewards are all equal).',
  narration: [
    'Strong start: accuracy {strong:accuracy}, and only {strong:frac_reward_zero_std} of the groups are all-equal, so most prompts give a gradient.',
    'Weak start: accuracy {weak:accuracy}; {weak:frac_reward_zero_std} of the groups are all-equal (all wrong), so their advantages are 0 and grad_norm is {weak:grad_norm}.',
  ],
  highlight: { charts: ['reward', 'fractions', 'grad'], planes: ['advantage'] },
  check: {
    claim:
      "over the run, the weak start has all-equal groups on at least 80% of its prompts (mean frac_reward_zero_std >= 0.8) while the strong start has them on at most half; and the strong start's accuracy gains more (mean of the last 3 steps minus the first 3) than the weak start's",
    evaluate(runs) {
      const strong = runOf(runs, 'strong');
      const weak = runOf(runs, 'weak');
      const zeroStd = (r: typeof strong) => meanOf(series(r, 'frac_reward_zero_std'));
      const gain = (r: typeof strong) => {
        const { first, last } = firstLast(series(r, 'accuracy'), 3);
        return last - first;
      };
      const values = {
        'strong: mean frac_reward_zero_std': zeroStd(strong),
        'weak: mean frac_reward_zero_std': zeroStd(weak),
        'strong: accuracy gain': gain(strong),
        'weak: accuracy gain': gain(weak),
        'weak: mean accuracy': meanOf(series(weak, 'accuracy')),
      };
      const observed =
        values['weak: mean frac_reward_zero_std'] >= 0.8 &&
        values['strong: mean frac_reward_zero_std'] <= 0.5 &&
        values['strong: accuracy gain'] > values['weak: accuracy gain'];
      const pct = (v: number) => `${Math.round(v * 100)}%`;
      return {
        observed,
        values,
        summary: `All-equal groups: ${pct(values['weak: mean frac_reward_zero_std'])} of the weak start's, ${pct(values['strong: mean frac_reward_zero_std'])} of the strong start's. Accuracy gain (last 3 steps minus first 3): strong ${values['strong: accuracy gain'].toFixed(3)}, weak ${values['weak: accuracy gain'].toFixed(3)}.`,
      };
    },
    whyNot:
      "Ten steps of 8 prompts are few: the strong start's sampled accuracy moves by several points from step to step, so a run can end on an unlucky batch and show no gain; and on some seeds the weak start stumbles on a few correct copies, which gives it a little signal.",
  },
  explain:
    'Both runs use the same weights, optimizer and budget; only the prompts differ. On 3 letters the start already copies some strings, groups mix successes and failures, and every step pushes probability toward the successes. On 5 letters it copies almost none: a group of 8 failures has mean reward 0 and every advantage is 0, so the policy gradient is 0 whatever the learning rate. RL with verifiable rewards sharpens what the prior can sample; it does not find a solution the policy never produces. That is why RL starts from a supervised warm start, and why curricula and dynamic sampling exist.',
  next: 'Set curriculum to easy_to_hard on the weak run: it starts at the easiest length, where groups mix, and ramps up to 5 letters.',
};
