// Lesson entropy-collapse: under plain GRPO the policy's entropy falls as it sharpens on what gets rewarded. In a
// lesson's budget the fall is a modest fraction, not the collapse toward 0 of long runs. An entropy bonus runs beside
// it and is reported without a claim: at this size and budget it does not reliably keep the entropy higher.

import type { Lesson } from '../lesson';
import { firstLast, runOf, series } from '../narration';

// Two updates per batch and a high learning rate make the policy sharpen within a dozen steps.
const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  temperature: 1,
  learning_rate: 2e-3,
  num_iterations: 2,
  beta: 0,
  eval_every: 0,
} as const;

export const entropyCollapse: Lesson = {
  id: 'entropy-collapse',
  title: 'Where does the entropy go?',
  source:
    'Cui et al., "The entropy mechanism of reinforcement learning for reasoning language models" (2025), which shows entropy falling as the policy exploits and proposes Clip-Cov and KL-Cov; DAPO (Yu et al., 2025), whose clip-higher (epsilon_high 0.28) targets the same fall; the survey of RL for reasoning models lists the entropy bonus among the remedies.',
  question: {
    prompt:
      "Plain GRPO, two updates per batch. Over a dozen steps, what does the mean entropy of the policy's next-token distribution do?",
    choices: [
      'It falls: the policy sharpens on what was rewarded',
      'It stays where it started',
      'It rises: negative advantages spread probability out',
    ],
    answer: 0,
    why: 'A positive advantage raises the probability of the sampled token, which was usually already likely, and sharpening a likely token lowers the entropy. Cui et al. show the change in entropy follows the covariance between log-probability and advantage, which is positive while the policy exploits, so entropy drains unless something pays to keep it.',
  },
  runs: [
    { key: 'a', label: 'plain GRPO', preset: 'grpo', overrides: { ...COMMON } },
    {
      key: 'b',
      label: 'GRPO with an entropy bonus (entropy_coef 0.05)',
      preset: 'grpo',
      overrides: { ...COMMON, entropy_coef: 0.05 },
    },
  ],
  steps: 12,
  look: 'Watch the Entropy chart of both runs; in the inspector colour tokens by "entropy" and find the positions where the policy has become sure.',
  narration: [
    'Plain GRPO: entropy is {a:entropy} nats, reward {a:reward}.',
    'With the entropy bonus: entropy is {b:entropy} nats, reward {b:reward}.',
  ],
  highlight: { charts: ['entropy', 'reward'], planes: ['entropy'] },
  check: {
    claim:
      "run a's entropy over its last 3 steps is at least 5% below its first 3 steps (run b, with the bonus, is reported beside it)",
    evaluate(runs) {
      const a = firstLast(series(runOf(runs, 'a'), 'entropy'), 3);
      const b = firstLast(series(runOf(runs, 'b'), 'entropy'), 3);
      const fall = 1 - a.last / a.first;
      const gap = b.last - a.last;
      const observed = fall >= 0.05;
      return {
        observed,
        values: {
          'a: entropy, first 3 steps': a.first,
          'a: entropy, last 3 steps': a.last,
          'a: fall': fall,
          'b: entropy, first 3 steps': b.first,
          'b: entropy, last 3 steps': b.last,
          'b - a, last 3 steps': gap,
        },
        summary: `Plain GRPO went from ${a.first.toFixed(3)} to ${a.last.toFixed(3)} nats (${(100 * fall).toFixed(0)}% lower); with the bonus, ${b.first.toFixed(3)} to ${b.last.toFixed(3)}, ${gap.toFixed(3)} nats from plain GRPO at the end.`,
      };
    },
    whyNot:
      'Twelve steps are a short run: when the sampled batches carry little signal (many tied groups, as on hard prompts) the policy hardly moves and its entropy with it; a run whose updates overshoot can also raise the entropy for a few steps before it falls.',
  },
  explain:
    "Each GRPO update moves probability toward the sampled tokens with positive advantage. Those were mostly likely tokens already, so the distribution sharpens and entropy falls; once it is low, the policy stops sampling alternatives and the groups tie more often (see dead-groups). On this lab's small models a dozen steps show the start of that fall, not the collapse toward 0 of long runs. The entropy bonus adds -alpha H to every token's loss, paying directly for spread, but at entropy_coef 0.05 over a dozen steps it did not reliably hold the entropy up: in the lab's five-seed check it ended 0.10 to 0.39 nats above plain GRPO on four seeds and 0.04 below on the fifth (the values show this run). Its price, where it works, is a policy that is less sure of its right answers. Clip-higher and Clip-Cov act on the same cause more selectively: the first lets unlikely tokens with positive advantage grow further before clipping, the second stops the gradient on the tokens with the largest covariance between log-probability and advantage.",
  next: "Replace the entropy bonus with epsilon_high 0.28 (DAPO's clip-higher) or clip_cov_ratio 0.02 (Clip-Cov) and compare how much entropy each keeps.",
};
