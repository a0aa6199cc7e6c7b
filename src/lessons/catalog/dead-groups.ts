// Lesson dead-groups: a group whose G completions all score the same gets exactly zero advantage, so it teaches
// nothing; GRPO's loss sits near 0 whether or not it learns; dynamic sampling (DAPO) refills the batch with groups
// that carry signal. Over the addition warm start, where most groups fail together.

import type { Lesson, LessonRunResult } from '../lesson';
import { meanOf, runOf, series } from '../narration';

const COMMON = {
  task: 'addition',
  difficulty: 2,
  checkpoint: 'addition',
  temperature: 1,
  learning_rate: 5e-4,
  beta: 0,
  eval_every: 0,
} as const;

/** Largest |advantage| over the tokens of the inspected groups, split by whether the group's rewards all tie. */
function advantageByGroupKind(run: LessonRunResult): {
  tiedGroups: number;
  tiedMaxAbs: number;
  mixedGroups: number;
  mixedWithSignal: number;
} {
  let tiedGroups = 0;
  let tiedMaxAbs = 0;
  let mixedGroups = 0;
  let mixedWithSignal = 0;
  for (const step of run.groups) {
    for (const g of step) {
      const rewards = g.completions.map((c) => c.reward);
      const maxAbs = Math.max(0, ...g.completions.flatMap((c) => Array.from(c.tokens.advantage, Math.abs)));
      if (Math.max(...rewards) - Math.min(...rewards) <= 1e-8) {
        tiedGroups++;
        tiedMaxAbs = Math.max(tiedMaxAbs, maxAbs);
      } else {
        mixedGroups++;
        if (maxAbs > 0) mixedWithSignal++;
      }
    }
  }
  return { tiedGroups, tiedMaxAbs, mixedGroups, mixedWithSignal };
}

export const deadGroups: Lesson = {
  id: 'dead-groups',
  title: '8 completions, all wrong: what does that group teach?',
  source:
    'The group baseline of GRPO (DeepSeekMath); DAPO\'s dynamic sampling (Yu et al., 2025), which drops groups whose rewards all tie and samples more; Shuffle-R1 (2025), which calls the shrinking share of useful groups advantage collapsing and rollout silencing. "Why is my GRPO loss 0?" is a frequent question in the trainers\' trackers (TRL issues #2703 and #3452, unsloth #2291).',
  question: {
    prompt:
      "A prompt's 8 completions are all wrong, so all 8 rewards are equal. With GRPO's advantage A_i = (r_i - mean(r)) / std(r), how much does that group push the policy?",
    choices: [
      'Not at all: every token of the group gets advantage exactly 0',
      'It pushes all 8 completions down, since they are wrong',
      'A little: the small std makes the advantages large and noisy',
    ],
    answer: 0,
    why: 'The advantage is relative to the group: every r_i equals the mean, so r_i - mean(r) is 0 and the policy gradient of the group is 0 (the lab, like TRL, guards the 0 / 0 with a small epsilon). Wrong answers are only pushed down when some other completion of the same prompt did better.',
  },
  runs: [
    {
      key: 'a',
      label: 'GRPO, dynamic sampling off',
      preset: 'grpo',
      overrides: { ...COMMON, dynamic_sampling: false },
    },
    {
      key: 'b',
      label: 'GRPO, dynamic sampling on (DAPO)',
      preset: 'grpo',
      overrides: { ...COMMON, dynamic_sampling: true },
    },
  ],
  steps: 10,
  look: 'Watch "Clipped and zero-signal fractions" and the Loss chart; in the inspector colour tokens by "advantage" and find a group whose rewards all tie.',
  narration: [
    'Dynamic sampling off: frac_reward_zero_std is {a:frac_reward_zero_std}, the share of groups this step that teach nothing; accuracy {a:accuracy}.',
    "GRPO's loss is {a:loss} while grad_norm is {a:grad_norm}: the loss is a mean of advantages that sum to 0 in every group, not a measure of progress.",
    'Dynamic sampling on: it dropped {b:dynamic_sampling/filtered_frac} of the groups it sampled this step, so frac_reward_zero_std of the batch it trained on is {b:frac_reward_zero_std}.',
  ],
  highlight: { charts: ['fractions', 'loss', 'reward'], planes: ['advantage'] },
  check: {
    claim:
      "in run a, groups whose rewards all tie carry advantage exactly 0 on every token while mixed groups carry some, at least a quarter of a's groups tie on average, and a's loss stays within 1e-6 of 0 while grad_norm is above 0; in run b no group of any step ties",
    evaluate(runs) {
      const a = runOf(runs, 'a');
      const b = runOf(runs, 'b');
      const adv = advantageByGroupKind(a);
      const aZeroStd = meanOf(series(a, 'frac_reward_zero_std'));
      const aLossMax = Math.max(...series(a, 'loss').map(Math.abs));
      const aGradMin = Math.min(...series(a, 'grad_norm'));
      const bZeroStdMax = Math.max(...series(b, 'frac_reward_zero_std'));
      const bFiltered = meanOf(series(b, 'dynamic_sampling/filtered_frac'));
      const observed =
        adv.tiedGroups > 0 &&
        adv.tiedMaxAbs === 0 &&
        adv.mixedWithSignal === adv.mixedGroups &&
        aZeroStd >= 0.25 &&
        aLossMax < 1e-6 &&
        aGradMin > 0 &&
        bZeroStdMax === 0;
      return {
        observed,
        values: {
          'a: tied groups inspected': adv.tiedGroups,
          'a: largest |advantage| in a tied group': adv.tiedMaxAbs,
          'a: mixed groups with nonzero advantage': adv.mixedWithSignal,
          'a: mixed groups inspected': adv.mixedGroups,
          'a: mean frac_reward_zero_std': aZeroStd,
          'a: largest |loss|': aLossMax,
          'a: smallest grad_norm': aGradMin,
          'b: largest frac_reward_zero_std': bZeroStdMax,
          'b: mean share of sampled groups dropped': bFiltered,
        },
        summary: `Without dynamic sampling ${(100 * aZeroStd).toFixed(0)}% of the groups tied on average; the ${adv.tiedGroups} tied groups inspected had largest |advantage| ${adv.tiedMaxAbs}, and the loss never exceeded ${aLossMax.toExponential(1)} in size while grad_norm stayed at or above ${aGradMin.toFixed(2)}. With dynamic sampling ${(100 * bFiltered).toFixed(0)}% of sampled groups were dropped and the largest tied share trained on was ${bZeroStdMax}.`,
      };
    },
    whyNot:
      'The share of tied groups depends on the prompts drawn: a lucky run can draw mostly prompts the model half-solves. Dynamic sampling gives up after max_resample extra batches and trains on the last batch as is when no group survives, which leaves tied groups in run b; and a group can carry no signal in the inspector simply because none of the two inspected groups tied this step.',
  },
  explain:
    'GRPO ranks completions only against their own group. When all G rewards are equal (all wrong on a hard prompt, all right on an easy one) the advantage is exactly 0 on every token and the group contributes nothing but compute. The loss is near 0 for a different reason: with one update per batch the ratio is 1, so the loss is the advantage-weighted mean of 1s, and the advantages of each group sum to 0. Its gradient is not 0 (grad_norm shows it), so a loss near 0 says nothing about learning. Dynamic sampling spends extra sampling to keep only groups with a spread of rewards, so every group in the update teaches; the price is more generation per step as the task gets easier or harder.',
  next: 'Raise num_generations from 8 to 16: a bigger group is more likely to contain one success, so fewer groups tie and less sampling is wasted.',
};
