// Lesson kl-estimators: k1, k2 and k3 estimate KL(pi_theta || pi_ref) from the sampled tokens alone; against the
// exact full-vocabulary KL on the same samples, k1 and k3 are unbiased, k2 is not, and only k3 is never negative.
// Three runs that differ only in the estimator plotted (the KL sits in the reward as k1 in all three), so they train
// identically and every estimator sees the same tokens.

import type { Lesson, LessonRunResult } from '../lesson';
import { meanOf, runOf, series } from '../narration';

// REINFORCE++ puts -beta k1 in the token reward whatever kl_estimator says, so kl_estimator only picks what the kl
// metric reports: the three runs share seed, samples and updates. The high learning rate makes the policy drift
// from its reference (the warm start) within a step or two.
const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  temperature: 1,
  learning_rate: 3e-3,
  beta: 0.01,
  kl_placement: 'in_reward',
  eval_every: 0,
} as const;

/** Smallest per-token KL estimate over the inspected completions of a run. */
function smallestTokenKl(run: LessonRunResult): number {
  let min = Infinity;
  for (const step of run.groups)
    for (const g of step) for (const c of g.completions) for (const k of c.tokens.kl) min = Math.min(min, k);
  return min;
}

/** A run's mean kl over the steps after the first (at step 1 the policy is still its reference), and kl/exact's. */
function meansAfterFirst(run: LessonRunResult): { estimate: number; exact: number } {
  return { estimate: meanOf(series(run, 'kl').slice(1)), exact: meanOf(series(run, 'kl/exact').slice(1)) };
}

export const klEstimators: Lesson = {
  id: 'kl-estimators',
  title: 'k1, k2, k3: which KL estimate can you trust?',
  source:
    'John Schulman\'s note "Approximating KL divergence" (2020), which introduced k1, k2 and k3; GRPO (DeepSeekMath) uses k3 in its loss, REINFORCE++ and PPO put k1 in the reward; the survey of RL for reasoning models reviews both placements.',
  question: {
    prompt:
      'From the sampled tokens alone, with u = log pi_theta - log pi_ref: k1 = u, k2 = u^2 / 2, k3 = e^-u - 1 + u. Against the exact KL summed over the whole vocabulary, which one is off on average?',
    choices: [
      'k1: it is negative on many tokens',
      'k2',
      'k3: it is only an approximation',
      'None: all three average to the exact KL',
    ],
    answer: 1,
    why: 'Over tokens sampled from pi_theta, E[u] is exactly the KL, and E[e^-u] = E[pi_ref / pi_theta] = 1, so k3 averages to the KL too while every term stays >= 0. k2 = u^2 / 2 matches the KL only to second order: once the policy has moved, its average is off (here, above). k1 is unbiased but noisy and negative on many tokens.',
  },
  runs: [
    { key: 'k1', label: 'kl plots k1 = u', preset: 'reinforce_pp', overrides: { ...COMMON, kl_estimator: 'k1' } },
    { key: 'k2', label: 'kl plots k2 = u^2 / 2', preset: 'reinforce_pp', overrides: { ...COMMON, kl_estimator: 'k2' } },
    {
      key: 'k3',
      label: 'kl plots k3 = e^-u - 1 + u',
      preset: 'reinforce_pp',
      overrides: { ...COMMON, kl_estimator: 'k3' },
    },
  ],
  steps: 8,
  look: 'Watch the KL chart: kl/exact is the same line in all three runs (same samples, same policy); kl is each run\'s estimator. Colour the inspector\'s tokens by "kl".',
  narration: [
    'The exact KL over the whole vocabulary is {k1:kl/exact} nats this step (the same in every run: {k2:kl/exact}, {k3:kl/exact}).',
    'On the same tokens: k1 reads {k1:kl}, k2 reads {k2:kl}, k3 reads {k3:kl}.',
  ],
  highlight: { charts: ['kl'], planes: ['kl'] },
  check: {
    claim:
      'the three runs see the same samples (identical kl/exact at every step); averaged over the steps after the first, k1 and k3 are within 20% of kl/exact and k2 is off by more than 20%; no inspected token has a negative k3, and some have a negative k1',
    evaluate(runs) {
      const [r1, r2, r3] = ['k1', 'k2', 'k3'].map((k) => runOf(runs, k));
      const exact1 = series(r1, 'kl/exact');
      const sameSamples = [r2, r3].every((r) => {
        const e = series(r, 'kl/exact');
        return e.length === exact1.length && e.every((v, i) => v === exact1[i]);
      });
      const [m1, m2, m3] = [r1, r2, r3].map(meansAfterFirst);
      const exact = m1.exact;
      const ratio = (m: { estimate: number }) => m.estimate / exact;
      const min1 = smallestTokenKl(r1);
      const min3 = smallestTokenKl(r3);
      const observed =
        sameSamples &&
        exact > 0 &&
        Math.abs(ratio(m1) - 1) < 0.2 &&
        Math.abs(ratio(m3) - 1) < 0.2 &&
        Math.abs(ratio(m2) - 1) > 0.2 &&
        min3 >= 0 &&
        min1 < 0;
      return {
        observed,
        values: {
          'same samples (1 = yes)': sameSamples ? 1 : 0,
          'mean kl/exact': exact,
          'mean k1': m1.estimate,
          'mean k2': m2.estimate,
          'mean k3': m3.estimate,
          'k1 / exact': ratio(m1),
          'k2 / exact': ratio(m2),
          'k3 / exact': ratio(m3),
          'smallest token k1': min1,
          'smallest token k3': min3,
        },
        summary: `Averaged over steps 2-${exact1.length}, the exact KL was ${exact.toFixed(3)} nats; k1 read ${m1.estimate.toFixed(3)} (${ratio(m1).toFixed(2)}x), k2 ${m2.estimate.toFixed(3)} (${ratio(m2).toFixed(2)}x), k3 ${m3.estimate.toFixed(3)} (${ratio(m3).toFixed(2)}x); the smallest token value was ${min1.toFixed(3)} for k1 and ${min3.toFixed(3)} for k3${sameSamples ? '' : ' (the runs did not see the same samples)'}.`,
      };
    },
    whyNot:
      "k1 and k3 are unbiased only on average: with a few hundred tokens a step and seven steps, a batch can sit 20% off, k3 mostly when a rare token has become much less likely under pi_theta than under pi_ref (e^-u is then large). k2's bias grows with the drift: a policy that barely moved leaves k2 close to the exact KL.",
  },
  explain:
    "The three runs trained identically (the KL sits in the reward as k1 in all of them), so the only difference is which estimator the kl metric averages over the same tokens, and kl/exact gives the truth by summing over the vocabulary at each position. k1 = log pi_theta - log pi_ref averages to the KL because the tokens were sampled from pi_theta, but single tokens are often negative. k3 adds the zero-mean term e^-u - 1, which cancels most of k1's noise and makes every term nonnegative: that is why GRPO and verl's low_var_kl use it. k2 = u^2 / 2 has low variance but is a different divergence: it agrees with the KL only while the policy stays close to the reference.",
  next: 'Lower learning_rate to 3e-4: the policy drifts less, and k2 comes close to the exact KL, since their difference is third order in the drift.',
};
