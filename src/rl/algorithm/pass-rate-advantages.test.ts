// MaxRL and F-GRPO by hand (the arithmetic is in the comments), their refusals, the frac_reward_zero_mean group
// statistic, and the estimators reached through computeAdvantages. Their trainers' own code on random inputs:
// src/reference/estimator-peers.test.ts.
import { describe, expect, it } from 'vitest';
import { computeAdvantages, groupRewardStats, grpoAdvantages } from './advantages';
import { checkBinaryRewards, focalGroupFactors, maxRlSequenceAdvantages } from './pass-rate-advantages';

const ones = (n: number) => new Array<number>(n).fill(1);

describe('max_rl', () => {
  it('divides the centred reward by the group mean, and gives an all-failed group 0', () => {
    // Group 0: [1, 0, 0, 0], mean 1/4: (1 - 1/4) / (1/4) = 3, (0 - 1/4) / (1/4) = -1.
    // Group 1: all 0: no signal. Group 2: [1, 1, 0, 1], mean 3/4: 1/3 and -1.
    const a = maxRlSequenceAdvantages([1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1], 4);
    expect(Array.from(a)).toEqual([3, -1, -1, -1, 0, 0, 0, 0, 1 / 3, 1 / 3, -1, 1 / 3]);
  });

  it('sums to 0 in each group and weights a rarely solved prompt more (1/p)', () => {
    const rare = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]; // p = 0.1
    const common = [1, 1, 1, 0, 1, 1, 1, 1, 0, 1]; // p = 0.8
    const a = maxRlSequenceAdvantages([...rare, ...common], 10);
    for (let g = 0; g < 2; g++) expect(a.slice(g * 10, g * 10 + 10).reduce((s, x) => s + x, 0)).toBeCloseTo(0, 12);
    expect(a[0]).toBeCloseTo(9, 12); // p = 0.1: (1 - 0.1) / 0.1
    expect(a[10]).toBeCloseTo(0.25, 12); // p = 0.8: (1 - 0.8) / 0.8
  });

  it('refuses a reward that is not 0 or 1, naming the completion', () => {
    expect(() => maxRlSequenceAdvantages([1, 0, 0.1, 0], 4)).toThrow(
      /adv_estimator 'max_rl' needs binary rewards \(each 0 or 1\): completion 2 has reward 0\.1/,
    );
    expect(() => checkBinaryRewards([0, 1, 1, 0], 'max_rl')).not.toThrow();
  });

  it('broadcasts over the valid tokens through computeAdvantages', () => {
    const mask = [1, 1, 0, 1, 0, 0];
    const r = computeAdvantages('max_rl', { rewards: [1, 0], mask, groupSize: 2 });
    // mean 1/2: a = [1, -1].
    expect(Array.from(r.advantages)).toEqual([1, 1, 0, -1, 0, 0]);
  });
});

describe('f_grpo', () => {
  it("multiplies GRPO's advantage by (1 - mu_pos)^gamma, mu_pos the group's pass rate", () => {
    const rewards = [1, 0, 0, 0, 1, 1, 1, 0];
    const base = grpoAdvantages({ rewards, mask: ones(8), groupSize: 4 });
    // mu_pos = 1/4 and 3/4; gamma 2: factors 9/16 and 1/16.
    const f = computeAdvantages(
      'f_grpo',
      { rewards, mask: ones(8), groupSize: 4 },
      { focal: { gamma: 2, rewardCorrect: 1, rewardWrong: 0 } },
    );
    for (let i = 0; i < 8; i++) expect(f.advantages[i]).toBeCloseTo(base[i] * (i < 4 ? 9 / 16 : 1 / 16), 6);
  });

  it('is GRPO at gamma 0, and clamps mu_pos to [0, 1] with other reward levels', () => {
    const rewards = [1, 0.2, 0.2, 1, -3, 5, 0.5, 0.5];
    const base = grpoAdvantages({ rewards, mask: ones(8), groupSize: 2 }, 'none');
    const f = computeAdvantages(
      'f_grpo',
      { rewards, mask: ones(8), groupSize: 2 },
      { scaleRewards: 'none', focal: { gamma: 0, rewardCorrect: 1, rewardWrong: 0.2 } },
    );
    expect(Array.from(f.advantages)).toEqual(Array.from(base));
    // Means 0.6, 0.6, 1, 0.5 with R_wrong 0.2, R_correct 1: mu_pos = 0.5, 0.5, 1, 0.375.
    const factors = focalGroupFactors(rewards, 2, { gamma: 1, rewardCorrect: 1, rewardWrong: 0.2 });
    [0.5, 0.5, 0, 0.625].forEach((x, g) => expect(factors[g]).toBeCloseTo(x, 12));
    // Means above R_correct or below R_wrong clamp: mu_pos 1 (factor 0) and 0 (factor 1).
    expect(Array.from(focalGroupFactors([2, 2, -1, -1], 2, { gamma: 3, rewardCorrect: 1, rewardWrong: 0 }))).toEqual([
      0, 1,
    ]);
  });

  it('refuses R_correct <= R_wrong', () => {
    expect(() => focalGroupFactors([1, 0], 2, { gamma: 1, rewardCorrect: 0, rewardWrong: 0 })).toThrow(
      /f_grpo_reward_correct > f_grpo_reward_wrong/,
    );
  });
});

describe('frac_reward_zero_mean', () => {
  it('counts the groups whose mean reward is 0, beside frac_reward_zero_std', () => {
    // Groups: all 0 (zero mean, zero std), all 1 (zero std only), mixed, [0.5, -0.5] (zero mean only).
    const s = groupRewardStats([0, 0, 1, 1, 1, 0, 0.5, -0.5], 2);
    expect(s.frac_reward_zero_mean).toBe(0.5);
    expect(s.frac_reward_zero_std).toBe(0.5);
  });
});
