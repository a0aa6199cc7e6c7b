// Lesson sampler-mismatch: a sampler that reads the policy's weights in bf16 (rollout_dtype, as an inference engine
// holding bf16 weights does) while the learner trains f32 masters: log pi_sampler and the learner's log pi_old
// disagree even with one update per batch, the clip ratio does not see it (it compares pi_theta with pi_old, both
// the learner's), and truncated importance sampling reweights each token by pi_old / pi_sampler.

import type { Lesson, LessonRunResult } from '../lesson';
import { meanOf, runOf, series } from '../narration';
import { maxOf, minOf } from '../../schema/extremes';

const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  temperature: 1,
  learning_rate: 1e-3,
  train_batch_size: 4,
  num_generations: 4,
  num_iterations: 1,
  eval_every: 0,
} as const;

/** The sampler's precision in the two half-precision runs (verl's rollout default). */
const HALF = { rollout_dtype: 'bf16' } as const;

/**
 * The rollout correction of the corrected run: truncated importance sampling, each token's loss times
 * min(pi_old / pi_sampler, 2) (2 is verl's rollout_is_threshold default): rollout correction's token_truncate mode
 * (TRL's vllm_importance_sampling_mode token_truncate, OpenRLHF's tis).
 */
const CORRECTION = { rollout_is_mode: 'token_truncate', rollout_is_clip_max: 2 } as const;

/** Every inspected token's importance weight pi_old / pi_sampler = exp(log pi_old - log pi_sampler). */
function importanceWeights(run: LessonRunResult): number[] {
  const out: number[] = [];
  for (const step of run.groups)
    for (const g of step)
      for (const c of g.completions) {
        const { logpOld, logpSampler } = c.tokens;
        for (let t = 0; t < logpOld.length; t++) out.push(Math.exp(logpOld[t] - logpSampler[t]));
      }
  return out;
}

export const samplerMismatch: Lesson = {
  id: 'sampler-mismatch',
  title: 'Why the sampler and the learner disagree',
  source:
    'Yao et al., "Your efficient RL framework secretly brings you off-policy RL training" (2025): vLLM samples with bf16 weights and its own kernels while FSDP trains f32 masters, so log pi_sampler != log pi_old; their truncated importance sampling (TIS) is verl\'s rollout_is and TRL\'s vllm_importance_sampling_correction (docs/algorithms.md#truncated-importance-sampling).',
  question: {
    prompt:
      'GRPO with one update per batch (num_iterations 1), the sampler reading the weights in bf16 while the learner trains them in f32. What do the clip ratio and sampling/sampling_logp_difference show?',
    choices: [
      'Both stay 0: with one update per batch the ratio is exactly 1',
      'The clip ratio stays 0, but sampling_logp_difference is well above 0',
      'Both rise: the clip catches the sampler being off',
      'sampling_logp_difference stays 0, since both sides run the same model',
    ],
    answer: 1,
    why: "The clip compares pi_theta with pi_old, and both are the learner's f32 forward: with one update per batch their ratio is exactly 1, so the clip never fires. The sampler is a different computation, the same model with every weight rounded to bf16 (8 bits of mantissa), so the log-probability it recorded for each token differs from the learner's by about 1e-3 nats. Only sampling_logp_difference, and the importance weight pi_old / pi_sampler, see the gap.",
  },
  runs: [
    { key: 'f32', label: "sampler in f32 (the learner's weights)", preset: 'grpo', overrides: { ...COMMON } },
    { key: 'bf16', label: 'sampler in bf16, no correction', preset: 'grpo', overrides: { ...COMMON, ...HALF } },
    {
      key: 'tis',
      label: 'sampler in bf16, truncated importance sampling',
      preset: 'grpo',
      overrides: { ...COMMON, ...HALF, ...CORRECTION },
    },
  ],
  steps: 4,
  look: "Watch the Sampler vs trainer chart (sampling/sampling_logp_difference) and the Clip ratio chart side by side; in the inspector, compare a token's log pi_old with its sampler log-prob.",
  narration: [
    'Sampler in f32: sampling_logp_difference is {f32:sampling/sampling_logp_difference/mean} nats (float rounding only); clip_ratio/region_mean {f32:clip_ratio/region_mean}.',
    'Sampler in bf16: sampling_logp_difference is {bf16:sampling/sampling_logp_difference/mean} nats on average and {bf16:sampling/sampling_logp_difference/max} at worst, yet clip_ratio/region_mean is {bf16:clip_ratio/region_mean}.',
    'With truncated importance sampling the gap is the same ({tis:sampling/sampling_logp_difference/mean}); each token is reweighted by pi_old / pi_sampler. Reward: {f32:reward} (f32), {bf16:reward} (bf16), {tis:reward} (bf16 + TIS).',
  ],
  highlight: { charts: ['sampling', 'clip', 'reward'], planes: ['probability', 'ratio'] },
  check: {
    claim:
      "run f32's sampling_logp_difference/mean stays below 1e-5 at every step; both bf16 runs' is above 1e-4 and at least 100 times f32's at every step; clip_ratio/region_mean is exactly 0 at every step of all three runs; the corrected run's inspected tokens carry importance weights pi_old / pi_sampler that differ from 1 (largest |w - 1| above 1e-3)",
    evaluate(runs) {
      const gap = (key: string) => series(runOf(runs, key), 'sampling/sampling_logp_difference/mean');
      const [g32, g16, gTis] = ['f32', 'bf16', 'tis'].map(gap);
      const f32Largest = maxOf(g32, 0);
      const halfSmallest = minOf([...g16, ...gTis], 0);
      const clipLargest = maxOf(
        ['f32', 'bf16', 'tis'].flatMap((k) => series(runOf(runs, k), 'clip_ratio/region_mean')),
        0,
      );
      const weights = importanceWeights(runOf(runs, 'tis'));
      const weightOff = maxOf(
        weights.map((w) => Math.abs(w - 1)),
        0,
      );
      const [wMin, wMax] = [minOf(weights, 1), maxOf(weights, 1)];
      const rewards = Object.fromEntries(
        ['f32', 'bf16', 'tis'].map((k) => [k, meanOf(series(runOf(runs, k), 'reward'))]),
      );
      const observed =
        g32.length > 0 &&
        g16.length === g32.length &&
        gTis.length === g32.length &&
        f32Largest < 1e-5 &&
        halfSmallest > 1e-4 &&
        halfSmallest > 100 * f32Largest &&
        clipLargest === 0 &&
        weightOff > 1e-3;
      return {
        observed,
        values: {
          'f32: largest logp difference': f32Largest,
          'bf16: smallest logp difference': minOf(g16, 0),
          'bf16 + TIS: smallest logp difference': minOf(gTis, 0),
          'bf16: largest token logp difference': maxOf(
            series(runOf(runs, 'bf16'), 'sampling/sampling_logp_difference/max'),
            0,
          ),
          'largest clip ratio, any run': clipLargest,
          'bf16 + TIS: inspected tokens': weights.length,
          'bf16 + TIS: smallest weight': wMin,
          'bf16 + TIS: largest weight': wMax,
          'f32: mean reward': rewards.f32,
          'bf16: mean reward': rewards.bf16,
          'bf16 + TIS: mean reward': rewards.tis,
        },
        summary: `Over ${g32.length} steps the f32 sampler's log-probs were at most ${f32Largest.toExponential(1)} nats from the learner's; the bf16 sampler's at least ${halfSmallest.toExponential(1)} on average per step, while the clip ratio stayed at ${clipLargest}. The importance weights of the corrected run's inspected tokens ran from ${wMin.toFixed(3)} to ${wMax.toFixed(3)} (${weights.length} tokens). Mean reward: ${rewards.f32.toFixed(3)} (f32), ${rewards.bf16.toFixed(3)} (bf16), ${rewards.tis.toFixed(3)} (bf16 + TIS).`,
      };
    },
    whyNot:
      'The gap is rounding, so it is always there with a bf16 sampler; what can fail is the f32 baseline (a device whose decode and training kernels round differently by more than 1e-5) or a step whose every completion is one or two tokens long, whose gap can fall below 1e-4. The clip ratio can only leave 0 if an update reuses a batch (num_iterations or num_minibatches above 1).',
  },
  explain:
    "pi_old is the learner's f32 forward over the sampled tokens, and the ratio pi_theta / pi_old is 1 at the one update, so PPO's clip is blind to how the samples were made. The sampler, like vLLM holding bf16 weights, computed each token's probability with every weight rounded to 8 bits of mantissa, so the tokens were drawn from a slightly different policy: the batch is off-policy before any update. sampling_logp_difference measures the gap; truncated importance sampling multiplies each token's loss by min(pi_old / pi_sampler, C), the correction for having sampled from pi_sampler, capped so one token cannot dominate. On a model this small and sequences this short, bf16 moves each weight by at most 0.4% and each token's probability by about 1%: the importance weights stay within a few percent of 1, the runs draw the same tokens on most steps (the same seed's random draws, probabilities a fraction of a percent apart), and their rewards mostly agree to three decimals. The correction matters when the gap grows: fp8 samplers, long sequences, mixture-of-experts routing that flips between the two.",
  next: 'Set rollout_dtype to f16: 3 more bits of mantissa than bf16 (8 times finer), and sampling_logp_difference drops 5 to 10 times.',
};
