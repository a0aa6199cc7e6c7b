// Lesson stale-rollouts: what asynchronous training costs, and what the rollout correction buys. The sampler of an
// async trainer (TRL's AsyncGRPOTrainer, prime-rl, verl's fully async recipe, NeMo-RL) samples with weights some
// optimizer steps old; max_staleness 4 makes every batch exactly 4 steps stale (src/rl/algorithm/staleness.ts).
// Three runs on one seed: on-policy, 4 steps stale without a correction, 4 steps stale with token truncated
// importance sampling. The clip does not see the staleness (pi_old is the learner's own forward); mismatch_kl does.

import type { Lesson } from '../lesson';
import { meanOf, runOf, series } from '../narration';
import { maxOf, minOf } from '../../schema/extremes';

const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  temperature: 1,
  learning_rate: 2e-3,
  train_batch_size: 4,
  num_generations: 4,
  num_iterations: 1,
  eval_every: 0,
} as const;

/** The staleness of the two stale runs: each batch sampled by the weights of 4 optimizer steps before. */
const STALE = { max_staleness: 4, weight_sync_steps: 1 } as const;

/** The correction: each token's loss times min(pi_old / mu, 2) (verl's rollout_is_threshold default). */
const CORRECTION = { rollout_is_mode: 'token_truncate', rollout_is_clip_max: 2 } as const;

/** The steps from which the stale runs sample 4 steps behind (steps 1 to 4 sample 0 to 3 behind). */
const FULLY_STALE_FROM = STALE.max_staleness + 1;

export const staleRollouts: Lesson = {
  id: 'stale-rollouts',
  title: 'Stale rollouts: what async training costs, and what the correction buys',
  source:
    "Asynchronous RL trainers sample with weights a few steps old while the learner trains: TRL's AsyncGRPOTrainer (max_staleness, weight_sync_steps), prime-rl (one step off-policy by default, max_off_policy_steps), verl's fully async recipe, NeMo-RL (max_trajectory_age_steps); prime-rl logs mismatch_kl as the early warning of off-policy collapse. The correction is truncated importance sampling (Yao et al. 2025; docs/algorithms.md#stale-rollouts).",
  question: {
    prompt:
      'GRPO with one update per batch, each batch sampled by the weights of 4 optimizer steps before (max_staleness 4). Compared with sampling on-policy, what do the clip ratio and mismatch_kl show?',
    choices: [
      'The clip ratio rises: it catches the stale samples, so mismatch_kl stays near 0',
      'The clip ratio stays 0, while mismatch_kl climbs far above the on-policy run',
      'Both stay 0: one update per batch makes every ratio exactly 1',
      'Both rise together, and the rollout correction brings them back to 0',
    ],
    answer: 1,
    why: "The clip compares pi_theta with pi_old, and pi_old is the learner's own forward over the sampled tokens before the update (as verl recomputes old_log_prob): with one update per batch their ratio is exactly 1, however old the sampler's weights were. The staleness is between the sampler mu and pi_old, and only the measures of that gap see it: mismatch_kl, the chi-squared divergences, the importance weights. (TRL's AsyncGRPOTrainer takes the sampler's log-probs as pi_old, so there the clip would fire instead.)",
  },
  runs: [
    { key: 'fresh', label: 'on-policy (max_staleness 0)', preset: 'grpo', overrides: { ...COMMON } },
    { key: 'stale', label: '4 steps stale, no correction', preset: 'grpo', overrides: { ...COMMON, ...STALE } },
    {
      key: 'corrected',
      label: '4 steps stale, truncated importance sampling',
      preset: 'grpo',
      overrides: { ...COMMON, ...STALE, ...CORRECTION },
    },
  ],
  steps: 10,
  look: 'Watch the Sampler vs trainer chart (mismatch_kl/mean, rollout_corr/chi2_token, off_policy/steps_behind) beside the Clip ratio chart and the reward; the Rollout correction chart shows how much the correction truncates.',
  narration: [
    'On-policy: the sampler is the learner (sampling_logp_difference {fresh:sampling/sampling_logp_difference/mean}); clip_ratio/region_mean {fresh:clip_ratio/region_mean}.',
    '4 steps stale: mismatch_kl/mean {stale:mismatch_kl/mean}, chi2_token {stale:rollout_corr/chi2_token}, yet clip_ratio/region_mean {stale:clip_ratio/region_mean}.',
    'With the correction the gap is as large ({corrected:mismatch_kl/mean}); each token is reweighted by min(pi_old / mu, 2), {corrected:rollout_correction/truncated_frac} of them truncated. Reward: {fresh:reward} (on-policy), {stale:reward} (stale), {corrected:reward} (stale + correction).',
  ],
  highlight: { charts: ['sampling', 'clip', 'reward', 'rollout_correction'], planes: ['probability', 'ratio'] },
  check: {
    claim: `the on-policy run's sampler and learner agree (sampling_logp_difference/mean below 1e-5 at every step; the sampler is the learner, so nothing else is measured); from step ${FULLY_STALE_FROM} on, both stale runs sample 4 steps behind and their mismatch_kl/mean is above 1e-3 at every step; clip_ratio/region_mean is exactly 0 at every step of all three runs; the corrected run's mean importance weight differs from 1 (by more than 1e-3 at some step)`,
    evaluate(runs) {
      const kl = (key: string) => series(runOf(runs, key), 'mismatch_kl/mean');
      // On-policy the sampler is the learner: nothing to score, so its gap is the log-prob difference the update sees.
      const fresh = series(runOf(runs, 'fresh'), 'sampling/sampling_logp_difference/mean');
      const late = (xs: number[]) => xs.slice(FULLY_STALE_FROM - 1);
      const [stale, corrected] = [late(kl('stale')), late(kl('corrected'))];
      const behind = ['stale', 'corrected'].flatMap((k) => late(series(runOf(runs, k), 'off_policy/steps_behind')));
      const freshLargest = maxOf(fresh, 0);
      const staleSmallest = minOf([...stale, ...corrected], 0);
      const clipLargest = maxOf(
        ['fresh', 'stale', 'corrected'].flatMap((k) => series(runOf(runs, k), 'clip_ratio/region_mean')),
        0,
      );
      const weights = series(runOf(runs, 'corrected'), 'sampling/importance_sampling_ratio/mean');
      const weightOff = maxOf(
        weights.map((w) => Math.abs(w - 1)),
        0,
      );
      const reward = Object.fromEntries(
        ['fresh', 'stale', 'corrected'].map((k) => [k, meanOf(series(runOf(runs, k), 'reward'))]),
      );
      const chi2 = meanOf(late(series(runOf(runs, 'stale'), 'rollout_corr/chi2_token')));
      const observed =
        fresh.length === FULLY_STALE_FROM - 1 + stale.length &&
        stale.length > 0 &&
        corrected.length === stale.length &&
        behind.every((b) => b === STALE.max_staleness) &&
        freshLargest < 1e-5 &&
        staleSmallest > 1e-3 &&
        clipLargest === 0 &&
        weightOff > 1e-3;
      return {
        observed,
        values: {
          'on-policy: largest sampler/learner log-prob gap': freshLargest,
          'stale: mean mismatch_kl (fully stale steps)': meanOf(stale),
          'stale + correction: mean mismatch_kl (fully stale steps)': meanOf(corrected),
          'stale runs: smallest mismatch_kl (fully stale steps)': staleSmallest,
          'stale: mean chi2_token (fully stale steps)': chi2,
          'largest clip ratio, any run': clipLargest,
          'stale + correction: largest |mean weight - 1|': weightOff,
          'on-policy: mean reward': reward.fresh,
          'stale: mean reward': reward.stale,
          'stale + correction: mean reward': reward.corrected,
        },
        summary: `From step ${FULLY_STALE_FROM} on the stale runs' mismatch_kl was at least ${staleSmallest.toExponential(1)} nats (mean ${meanOf(stale).toExponential(1)} uncorrected), while the on-policy run's sampler and learner log-probs differed by at most ${freshLargest.toExponential(1)}; the clip ratio stayed at ${clipLargest} in all three. The correction moved the mean importance weight up to ${weightOff.toFixed(3)} from 1. Mean reward: ${reward.fresh.toFixed(3)} on-policy, ${reward.stale.toFixed(3)} stale, ${reward.corrected.toFixed(3)} stale + correction.`,
      };
    },
    whyNot:
      "The gap comes from the learner's own updates, so it is there whenever the learning rate moves the weights; what can fail is a seed whose batches are all-equal groups for several steps (zero advantages: no update, so the weights 4 steps back are the current ones and mismatch_kl falls to rounding), or a step whose completions are one or two tokens long. The clip ratio can only leave 0 if an update reuses a batch (num_iterations or num_minibatches above 1).",
  },
  explain:
    "An asynchronous trainer keeps its GPUs busy by sampling the next batches while the learner trains on the last ones; the price is that the samples come from an older policy mu. Here every batch is sampled by the weights of exactly 4 optimizer steps before (the steady state of TRL's queue with max_staleness 4). The learner recomputes pi_old on those tokens, so the PPO ratio pi_theta / pi_old starts at 1 and the clip is blind to the age of the samples, but the gradient is a policy gradient for pi_old estimated with samples of mu: biased by how far the two are apart. mismatch_kl = E[rho - log rho - 1] with rho = pi_old / mu measures that distance, and it grows with the learning rate and the staleness. Truncated importance sampling multiplies each token's loss by min(pi_old / mu, 2): tokens the learner now likes more than the sampler did count more, capped so a few tokens cannot dominate. On a model this small and a run this short, the three runs' rewards are close and differ from seed to seed more than between the runs: what is exact is where the staleness shows and where it does not.",
  next: 'Set weight_sync_steps to 4 with max_staleness 0: the sampler now lags 0 to 3 steps, a sawtooth in off_policy/steps_behind, and mismatch_kl follows it.',
};
