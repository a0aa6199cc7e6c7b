// Lesson clip-zero: why GRPO's clip ratio is exactly 0 with one update per batch, and what makes it fire.

import type { Lesson } from '../lesson';
import { runOf, series } from '../narration';
import { maxOf } from '../../schema/extremes';

const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  temperature: 0.7,
  learning_rate: 1e-3,
  eval_every: 0,
} as const;

export const clipZero: Lesson = {
  id: 'clip-zero',
  title: 'Why is the clip ratio always 0?',
  source:
    "A frequent question in the big trainers' trackers (TRL issues #3120 and #3144, verl #791). The ratio is pi_theta / pi_old, and pi_old is the policy that sampled the batch (docs/algorithms.md#importance-ratio).",
  question: {
    prompt: 'GRPO takes one optimizer step per batch of samples (num_iterations 1). How often will the PPO clip fire?',
    choices: ['Never: the clip ratio is exactly 0', 'On a few tokens per step', 'On most tokens once the policy moves'],
    answer: 0,
    why: 'The one update is computed at the parameters that sampled the batch, so every ratio pi_theta / pi_old is exactly 1 and no token is ever outside [1 - epsilon, 1 + epsilon]. The clip only matters once the same batch is reused for a second update.',
  },
  runs: [
    {
      key: 'a',
      label: 'one update per batch (num_iterations 1)',
      preset: 'grpo',
      overrides: { ...COMMON, num_iterations: 1 },
    },
    {
      key: 'b',
      label: 'two updates per batch (num_iterations 2)',
      preset: 'grpo',
      overrides: { ...COMMON, num_iterations: 2 },
    },
  ],
  steps: 8,
  look: 'Watch the Clip ratio chart and colour the inspector\'s tokens by "ratio" and by "clipped side".',
  narration: [
    'One update per batch: clip_ratio/region_mean is {a:clip_ratio/region_mean} and approx_kl is {a:approx_kl}. Every ratio is 1.',
    'Two updates per batch: the second update sees ratios that moved; clip_ratio/region_mean is {b:clip_ratio/region_mean}, approx_kl {b:approx_kl}.',
  ],
  highlight: { charts: ['clip', 'kl'], planes: ['ratio', 'clip'] },
  check: {
    claim: "run a's clip_ratio/region_mean is exactly 0 at every step; run b's is above 0 on most steps",
    evaluate(runs) {
      const a = series(runOf(runs, 'a'), 'clip_ratio/region_mean');
      const b = series(runOf(runs, 'b'), 'clip_ratio/region_mean');
      const aMax = maxOf(a, 0);
      const bFired = b.filter((v) => v > 0).length;
      const observed = a.length > 0 && aMax === 0 && bFired > b.length / 2;
      return {
        observed,
        values: { 'a: largest clip ratio': aMax, 'b: steps with clipping': bFired, 'b: steps': b.length },
        summary: `One update per batch: the largest clip ratio over ${a.length} steps was ${aMax}. Two updates: the clip fired on ${bFired} of ${b.length} steps.`,
      };
    },
    whyNot:
      "With two updates the clip fires only if the first update moved some token's probability by more than epsilon (0.2); a very small learning rate or a batch with no signal (every group all-equal) can leave every ratio inside the range.",
  },
  explain:
    'pi_old is not an older policy: it is the one that sampled this batch. With one update per batch the gradient is taken at pi_old itself, so the ratio is 1 and the clipped objective reduces to the plain policy gradient with the group baseline. The clip is a guard for reusing samples (num_iterations > 1, or several minibatches), which is where PPO came from.',
  next: 'Set num_minibatches to 4 with num_iterations 1: the later minibatches see a moved policy, so the clip fires without reusing any sample.',
};
