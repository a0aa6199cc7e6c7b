// The rules of the late-2026 estimators and loss, each message naming the field to change: max_rl only on binary
// (0/1) rewards, f_grpo's correct reward above its wrong one, prime_dppo per token and without a second rollout
// correction; and the knobs resolve, with their defaults, from the prime_rl preset.
import { describe, expect, it } from 'vitest';
import { problemsOf, resolveConfig } from './validate';

describe('max_rl needs binary rewards', () => {
  it("refuses a task's own weights (they mix in a format part), naming reward_weights", () => {
    expect(problemsOf(() => resolveConfig('grpo', { adv_estimator: 'max_rl', task: 'addition' }))).toEqual([
      "reward_weights: adv_estimator 'max_rl' needs binary (0/1) rewards, so accuracy:1 and no other part; addition's own weights are accuracy:0.9, format:0.1 (set reward_weights accuracy:1)",
    ]);
    expect(
      problemsOf(() =>
        resolveConfig('grpo', {
          adv_estimator: 'max_rl',
          task: 'addition',
          reward_weights: { accuracy: 1, format: 0.5 },
        }),
      ),
    ).toEqual([
      "reward_weights: adv_estimator 'max_rl' needs binary (0/1) rewards, so accuracy:1 and no other part; they are accuracy:1, format:0.5 (set reward_weights accuracy:1)",
    ]);
  });

  it('accepts accuracy:1 alone, and refuses a reward function of your own', () => {
    const c = resolveConfig('grpo', { adv_estimator: 'max_rl', task: 'addition', reward_weights: { accuracy: 1 } });
    expect(c.adv_estimator).toBe('max_rl');
    expect(
      problemsOf(() =>
        resolveConfig('grpo', {
          adv_estimator: 'max_rl',
          reward_weights: { accuracy: 1 },
          reward_fn: '(p, c) => c.length',
        }),
      ),
    ).toContain(
      "reward_fn: adv_estimator 'max_rl' needs binary (0/1) rewards, and a reward function of your own is not; drop it or choose another estimator",
    );
  });
});

describe('f_grpo', () => {
  it('has gamma 1, R_correct 1 and R_wrong 0 by default, and needs R_correct > R_wrong', () => {
    const c = resolveConfig('grpo', { adv_estimator: 'f_grpo' });
    expect([c.f_grpo_gamma, c.f_grpo_reward_correct, c.f_grpo_reward_wrong]).toEqual([1, 1, 0]);
    expect(problemsOf(() => resolveConfig('grpo', { adv_estimator: 'f_grpo', f_grpo_reward_wrong: 1 }))).toEqual([
      'f_grpo_reward_correct: must be greater than f_grpo_reward_wrong (1), got 1',
    ]);
  });
});

describe('prime_dppo', () => {
  it("is the prime_rl preset's loss, with prime-rl's defaults", () => {
    const c = resolveConfig('prime_rl');
    expect([c.adv_estimator, c.loss_type, c.loss_agg_mode]).toEqual(['dr_grpo', 'prime_dppo', 'token-mean']);
    expect([c.epsilon, c.epsilon_high ?? c.epsilon, c.adv_tau, c.kl_tau]).toEqual([0.2, 0.2, 1, 1e-3]);
  });

  it('refuses a sequence-level ratio and a second rollout correction, naming the field', () => {
    expect(problemsOf(() => resolveConfig('prime_rl', { importance_sampling_level: 'sequence' }))).toEqual([
      "importance_sampling_level: loss_type 'prime_dppo' weighs each token by its own ratio to the sampler (prime-rl's per-token loss); use 'token'",
    ]);
    expect(problemsOf(() => resolveConfig('prime_rl', { tis_cap: 2 }))).toEqual([
      "tis_cap: loss_type 'prime_dppo' already takes its ratio against the sampler (pi / mu), so a rollout correction would weigh the mismatch twice; set tis_cap null",
    ]);
    expect(problemsOf(() => resolveConfig('prime_rl', { rollout_is_mode: 'token_mask' }))).toEqual([
      "rollout_is_mode: loss_type 'prime_dppo' already takes its ratio against the sampler (pi / mu), so a rollout correction would weigh the mismatch twice; set rollout_is_mode 'off'",
    ]);
  });
});
