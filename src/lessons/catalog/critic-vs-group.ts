// Lesson critic-vs-group: PPO's learned critic against GRPO's group baseline. A fresh critic explains none of the
// returns in a lesson's budget (vf_explained_var stays near 0 and does not yet rise); a leave-one-out group mean on
// PPO's own samples and both runs' rewards are reported beside it, without a claim (neither is robust in ten steps).

import type { Lesson, LessonRunResult } from '../lesson';
import { meanOf, runOf, series } from '../narration';

// Addition over its warm start; a moderate learning rate keeps the policy from collapsing within the run.
const COMMON = {
  task: 'addition',
  difficulty: 2,
  checkpoint: 'addition',
  temperature: 1,
  learning_rate: 5e-4,
  eval_every: 0,
} as const;

/**
 * Explained variance of a leave-one-out group baseline over a run's inspected groups: 1 - sum (r_i - mean of the
 * other G - 1 rewards)^2 / sum (r_i - mean of all)^2. Leaving r_i out keeps the baseline from predicting r_i with
 * itself (RLOO's baseline; GRPO's mean includes r_i, which would flatter it by about 1 / G).
 */
function groupBaselineExplainedVariance(run: LessonRunResult): number {
  const rewards: number[][] = run.groups.flatMap((step) => step.map((g) => g.completions.map((c) => c.reward)));
  const all = rewards.flat();
  const grand = meanOf(all);
  let residual = 0;
  let total = 0;
  for (const group of rewards) {
    const sum = group.reduce((a, b) => a + b, 0);
    for (const r of group) {
      residual += (r - (sum - r) / (group.length - 1)) ** 2;
      total += (r - grand) ** 2;
    }
  }
  return total > 0 ? 1 - residual / total : 0;
}

export const criticVsGroup: Lesson = {
  id: 'critic-vs-group',
  title: 'A critic or a group: where does the baseline come from?',
  source:
    "PPO (Schulman et al., 2017) with GAE learns a value network as the baseline; GRPO (DeepSeekMath) drops it and uses the mean reward of the other completions of the same prompt; the survey of RL for reasoning models discusses the trade. vf_explained_var is verl's critic/vf_explained_var.",
  question: {
    prompt:
      "PPO starts with a fresh critic (its value head outputs 0). After ten steps of training on the same kind of batch GRPO sees, how much of the return's variance does the critic explain (vf_explained_var)?",
    choices: ['Almost none: near 0', 'About half', 'Most of it: above 0.8'],
    answer: 0,
    why: 'The critic learns from the same few hundred tokens per step as the policy, with the policy changing under it; predicting how a particular prompt will go takes it far longer than ten steps. GRPO needs no such learning: the other completions of the same prompt are a baseline from the first step.',
  },
  runs: [
    { key: 'ppo', label: 'PPO: critic and GAE', preset: 'ppo', overrides: { ...COMMON } },
    { key: 'grpo', label: 'GRPO: group baseline', preset: 'grpo', overrides: { ...COMMON, beta: 0 } },
  ],
  steps: 10,
  look: 'Watch the Critic chart (vf_explained_var, vpred_mean against return_mean) and the Reward chart of both runs; in the inspector colour PPO\'s tokens by "advantage".',
  narration: [
    "PPO: the critic explains {ppo:vf_explained_var} of the returns' variance; it predicts {ppo:vpred_mean} on average against returns of {ppo:return_mean}.",
    'Reward this step: PPO {ppo:reward}, GRPO {grpo:reward}.',
  ],
  highlight: { charts: ['critic', 'reward'], planes: ['advantage'] },
  check: {
    claim:
      "PPO's vf_explained_var averages between -0.1 and 0.1 over steps 2 on and never reaches 0.1: in ten steps the fresh critic explains none of the returns",
    evaluate(runs) {
      const ppo = runOf(runs, 'ppo');
      const grpo = runOf(runs, 'grpo');
      const ev = series(ppo, 'vf_explained_var');
      const critic = meanOf(ev.slice(1));
      const group = groupBaselineExplainedVariance(ppo);
      const ppoReward = meanOf(series(ppo, 'reward'));
      const grpoReward = meanOf(series(grpo, 'reward'));
      const observed = ev.length > 1 && Math.abs(critic) < 0.1 && Math.max(...ev) < 0.1;
      return {
        observed,
        values: {
          'ppo: mean vf_explained_var (steps 2 on)': critic,
          'ppo: largest vf_explained_var': Math.max(...ev),
          'ppo: smallest vf_explained_var': Math.min(...ev),
          'group baseline explained variance on ppo samples': group,
          'ppo: mean reward': ppoReward,
          'grpo: mean reward': grpoReward,
        },
        summary: `Over steps 2-${ev.length} the critic explained ${critic.toFixed(3)} of the returns' variance on average (between ${Math.min(...ev).toFixed(3)} and ${Math.max(...ev).toFixed(3)}); on the same samples a leave-one-out group mean explained ${group.toFixed(3)} of the rewards'. Mean reward: PPO ${ppoReward.toFixed(3)}, GRPO ${grpoReward.toFixed(3)}.`,
      };
    },
    whyNot:
      "A critic with a faster learning rate (critic_learning_rate) can swing vf_explained_var far from 0 within a few steps, mostly negative at first (worse than predicting the mean); a lucky run can also pick up the task's average reward early, which shows as a brief rise.",
  },
  explain:
    "A baseline is a guess of how well a completion will do before its reward is known, and the advantage is the reward minus that guess. PPO learns the guess with a critic: from a zero head it explains none of the returns for the first steps (the docs' healthy range, 0.3-0.8, takes far longer), so its early advantages are the returns minus a meaningless guess, whitened. GRPO gets its guess without training, from the other completions of the same prompt, so it is a valid baseline from the first step. Measured on PPO's own samples, though, a leave-one-out group mean explains no more (the values; pure noise reads -1 / (G - 1) = -0.14): on these short tasks most of the spread of rewards is luck within a prompt, not difficulty between prompts. Neither baseline removes much variance here, and ten steps are too few to rank the two runs by reward (the values give this run's means). The group baseline costs G samples per prompt and cannot credit single tokens; a trained critic can.",
  next: 'Set critic_learning_rate to 1e-2 on the PPO run: the critic moves faster, and vf_explained_var can swing negative (worse than predicting the mean) before it rises.',
};
