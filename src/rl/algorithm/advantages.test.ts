// Advantage estimators, group statistics and pass@k: hand-checked small inputs (the arithmetic is in the
// comments), degenerate groups, whitening safety, GAE against a brute-force sum, pass@k against enumeration, and
// grpo_passk / GDPO by hand (their trainers' own formulas: src/reference/trainer-formulas.test.ts).
import { describe, expect, it } from 'vitest';
import { ADV_ESTIMATORS } from '../../schema/algorithm-names';
import {
  computeAdvantages,
  drGrpoAdvantages,
  gaeAdvantages,
  gdpoAdvantages,
  grpoPasskAdvantages,
  rewardPartsOf,
  groupRewardStats,
  grpoAdvantages,
  meanPassAtK,
  opoAdvantages,
  optimalTokenBaselineAdvantages,
  passAtK,
  reinforceAdvantages,
  reinforcePpAdvantages,
  reinforcePpBaselineAdvantages,
  remaxAdvantages,
  rlooAdvantages,
  whiten,
  type AdvantageInput,
} from './advantages';
import { Rng } from '../../core/random';

/** A full mask: N rows of L valid tokens. */
const ones = (N: number, L: number) => new Array<number>(N * L).fill(1);

/** Row i of an (N,L) array. */
const row = (x: ArrayLike<number>, i: number, L: number) => Array.from(x).slice(i * L, (i + 1) * L);

function expectClose(actual: ArrayLike<number>, expected: readonly number[], digits = 5): void {
  expect(actual.length).toBe(expected.length);
  for (let k = 0; k < expected.length; k++) expect(actual[k], `index ${k}`).toBeCloseTo(expected[k], digits);
}

describe('sequence-level estimators', () => {
  it('grpo, scale_rewards group: (r - mean_g) / (unbiased std_g + 1e-4), broadcast over valid tokens', () => {
    // group 0: r = [1, 0, 0]: mean 1/3; var = ((2/3)^2 + 2 (1/3)^2) / (3-1) = (6/9)/2 = 1/3; std = 0.577350
    //   a = (2/3) / 0.577450 = 1.154501, (-1/3) / 0.577450 = -0.577250
    // group 1: r = [1, 1, 1]: all equal -> 0 exactly
    const input: AdvantageInput = {
      rewards: [1, 0, 0, 1, 1, 1],
      mask: [1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1],
      groupSize: 3,
    };
    const A = grpoAdvantages(input, 'group');
    const d = Math.sqrt(1 / 3) + 1e-4;
    expectClose(row(A, 0, 2), [2 / 3 / d, 2 / 3 / d]);
    expectClose(row(A, 1, 2), [-(1 / 3) / d, 0]); // second token masked -> 0
    expectClose(row(A, 2, 2), [-(1 / 3) / d, -(1 / 3) / d]);
    expect(Array.from(A).slice(6)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(A[0]).toBeCloseTo(1.154501, 5);
  });

  it('grpo, scale_rewards batch: group mean, std over the whole batch (Lite PPO)', () => {
    // batch r = [1,0,0,1,1,1]: mean 2/3; var = (4 (1/3)^2 + 2 (2/3)^2) / 5 = (4/9 + 8/9) / 5 = 4/15; std = 0.516398
    // group means 1/3 and 1: a = [2/3, -1/3, -1/3, 0, 0, 0] / (0.516398 + 1e-4)
    const A = grpoAdvantages({ rewards: [1, 0, 0, 1, 1, 1], mask: ones(6, 1), groupSize: 3 }, 'batch');
    const d = Math.sqrt(4 / 15) + 1e-4;
    expectClose(A, [2 / 3 / d, -1 / 3 / d, -1 / 3 / d, 0, 0, 0]);
    expect(A[0]).toBeCloseTo(1.290742, 5);
  });

  it('grpo, scale_rewards none equals dr_grpo: r - mean_g', () => {
    const input: AdvantageInput = { rewards: [1, 0, 0, 2, 4, 6], mask: ones(6, 2), groupSize: 3 };
    // group means 1/3 and 4
    const expected = [2 / 3, -1 / 3, -1 / 3, -2, 0, 2].flatMap((a) => [a, a]);
    expectClose(grpoAdvantages(input, 'none'), expected);
    expectClose(drGrpoAdvantages(input), expected);
  });

  it('rloo: r_i - mean of the other G-1 rewards', () => {
    // [1,0,0]: 1 - (0+0)/2 = 1; 0 - (1+0)/2 = -0.5 (twice)
    // [2,4,6]: 2 - (4+6)/2 = -3; 4 - (2+6)/2 = 0; 6 - (2+4)/2 = 3
    expectClose(
      rlooAdvantages({ rewards: [1, 0, 0, 2, 4, 6], mask: ones(6, 1), groupSize: 3 }),
      [1, -0.5, -0.5, -3, 0, 3],
    );
  });

  it('reinforce: r without a baseline; with one, the running mean is passed in and returned', () => {
    const mask = ones(4, 1);
    expectClose(reinforceAdvantages({ rewards: [1, 0, 1, 1], mask, groupSize: 2 }).advantages, [1, 0, 1, 1]);
    // batch 1: no state, so b = its own mean 0.75: a = [0.25, -0.75, 0.25, 0.25]; state b = 0.75
    const first = reinforceAdvantages({ rewards: [1, 0, 1, 1], mask, groupSize: 2 }, 0.9, null);
    expectClose(first.advantages, [0.25, -0.75, 0.25, 0.25]);
    expect(first.baseline).toEqual({ value: 0.75, batches: 1 });
    // batch 2 (mean 0.5): a = r - 0.75; then b' = 0.9 * 0.75 + 0.1 * 0.5 = 0.725
    const second = computeAdvantages(
      'reinforce',
      { rewards: [0, 0, 1, 1], mask, groupSize: 2 },
      { baselineMomentum: 0.9, baseline: first.baseline },
    );
    expectClose(second.advantages, [-0.75, -0.75, 0.25, 0.25]);
    expect(second.baseline!.value).toBeCloseTo(0.725, 12);
    expect(second.baseline!.batches).toBe(2);
  });

  it('remax: r_i - the greedy reward of its prompt', () => {
    // prompt 0: greedy 1 -> [1-1, 0-1] = [0, -1]; prompt 1: greedy 0.25 -> [0-0.25, 0.5-0.25]
    const input: AdvantageInput = { rewards: [1, 0, 0, 0.5], mask: ones(4, 1), groupSize: 2, greedyRewards: [1, 0.25] };
    expectClose(remaxAdvantages(input), [0, -1, -0.25, 0.25]);
    expect(() => remaxAdvantages({ ...input, greedyRewards: undefined })).toThrow(/greedyRewards/);
    expect(() => remaxAdvantages({ ...input, greedyRewards: [1] })).toThrow(/one per prompt \(B = 2\)/);
  });

  it('opo: length-weighted group baseline', () => {
    // |y| = [1, 3], r = [1, 0]: b = (1*1 + 3*0) / 4 = 0.25 -> a = [0.75, -0.25]
    const A = opoAdvantages({ rewards: [1, 0], mask: [1, 0, 0, 1, 1, 1], groupSize: 2 });
    expectClose(A, [0.75, 0, 0, -0.25, -0.25, -0.25]);
    // equal lengths: the plain mean, like dr_grpo
    const eq: AdvantageInput = { rewards: [3, 1, 2, 2], mask: ones(4, 2), groupSize: 2 };
    expectClose(opoAdvantages(eq), Array.from(drGrpoAdvantages(eq)));
  });
});

describe('token-level estimators', () => {
  // Two rows, L = 3: row 0 has 3 valid tokens, row 1 has 2 (its third is padding with junk k1).
  const mask = [1, 1, 1, 1, 1, 0];
  const k1 = [0.5, -1, 2, 1, 0, 9];

  it('reinforce_pp: token rewards -beta k1 plus r at the last token, suffix returns, whitened over the batch', () => {
    // beta 0.1, r = [1, 0]
    // row 0: rho = [-0.05, 0.1, -0.2 + 1] = [-0.05, 0.1, 0.8]; R = [0.85, 0.9, 0.8]
    // row 1: rho = [-0.1, 0 + 0]; R = [-0.1, 0]
    // valid R = [0.85, 0.9, 0.8, -0.1, 0]: mean 2.45/5 = 0.49; squared deviations sum
    //   0.1296 + 0.1681 + 0.0961 + 0.3481 + 0.2401 = 0.982; unbiased var 0.982/4 = 0.2455
    const A = reinforcePpAdvantages({ rewards: [1, 0], mask, groupSize: 1, k1 }, 0.1);
    const s = Math.sqrt(0.2455 + 1e-8);
    expectClose(A, [0.36 / s, 0.41 / s, 0.31 / s, -0.59 / s, -0.49 / s, 0]);
  });

  it('reinforce_pp_baseline: r - mean_g r at the last token, then returns and whitening', () => {
    // one group of 2, r = [1, 0]: centred [0.5, -0.5]; beta 0 so R = 0.5 on row 0's 3 tokens, -0.5 on row 1's 2
    // mean (1.5 - 1) / 5 = 0.1; deviations [0.4 x3, -0.6 x2]; sum of squares 0.48 + 0.72 = 1.2; var 0.3
    const A = reinforcePpBaselineAdvantages({ rewards: [1, 0], mask, groupSize: 2, k1 }, 0);
    const s = Math.sqrt(0.3 + 1e-8);
    expectClose(A, [0.4 / s, 0.4 / s, 0.4 / s, -0.6 / s, -0.6 / s, 0]);
  });

  it('gae by hand: delta, the (gamma lambda) recursion, returns = A + V, whitened advantages', () => {
    // one row, r = 1, beta 0, gamma 1, lam 0.5, V = [0.5, 0.2, 0.4]
    // delta_2 = 1 + 0 - 0.4 = 0.6; delta_1 = 0 + 0.4 - 0.2 = 0.2; delta_0 = 0 + 0.2 - 0.5 = -0.3
    // A_2 = 0.6; A_1 = 0.2 + 0.5 * 0.6 = 0.5; A_0 = -0.3 + 0.5 * 0.5 = -0.05
    // returns = A + V = [0.45, 0.7, 1.0]
    // whiten A: mean 0.35, deviations [-0.4, 0.15, 0.25], var (0.16 + 0.0225 + 0.0625) / 2 = 0.1225, std 0.35
    const out = gaeAdvantages({ rewards: [1], mask: [1, 1, 1], groupSize: 1, values: [0.5, 0.2, 0.4] }, 0, 1, 0.5);
    expectClose(out.returns!, [0.45, 0.7, 1.0]);
    expectClose(out.advantages, [-0.4 / 0.35, 0.15 / 0.35, 0.25 / 0.35]);
  });

  it('gae with gamma = lambda = 1 and no KL: the returns are the Monte Carlo reward at every token', () => {
    const rng = new Rng(3);
    const N = 4;
    const L = 5;
    const values = Array.from({ length: N * L }, () => rng.uniform() * 2 - 1);
    const out = gaeAdvantages({ rewards: [0.3, -1, 2, 0], mask: ones(N, L), groupSize: 2, values }, 0, 1, 1);
    for (let i = 0; i < N; i++) for (const R of row(out.returns!, i, L)) expect(R).toBeCloseTo([0.3, -1, 2, 0][i], 6);
  });

  it('gae matches a brute-force sum of discounted deltas, with interior masked tokens and padding', () => {
    const rng = new Rng(11);
    const N = 6;
    const L = 7;
    const mask = Array.from({ length: N * L }, (_, k) =>
      k % L < 2 + (Math.floor(k / L) % 5) && rng.uniform() > 0.15 ? 1 : 0,
    );
    mask.fill(0, 5 * L, 6 * L); // an all-masked row (a dropped truncated completion)
    const rewards = Array.from({ length: N }, () => rng.uniform());
    const values = Array.from({ length: N * L }, () => rng.uniform() - 0.5);
    const k1v = Array.from({ length: N * L }, () => rng.uniform() - 0.5);
    const beta = 0.05;
    const gamma = 0.9;
    const lam = 0.8;
    const out = gaeAdvantages({ rewards, mask, groupSize: 3, values, k1: k1v }, beta, gamma, lam);
    const rawA: number[] = [];
    const rawIdx: number[] = [];
    for (let i = 0; i < N; i++) {
      const idx = [...Array(L).keys()].map((t) => i * L + t).filter((k) => mask[k] === 1);
      const rho = idx.map((k, j) => -beta * k1v[k] + (j === idx.length - 1 ? rewards[i] : 0));
      const V = idx.map((k) => values[k]);
      const delta = idx.map((_, j) => rho[j] + gamma * (j + 1 < idx.length ? V[j + 1] : 0) - V[j]);
      idx.forEach((k, j) => {
        let a = 0;
        for (let l = 0; j + l < idx.length; l++) a += (gamma * lam) ** l * delta[j + l];
        rawA.push(a);
        rawIdx.push(k);
        expect(out.returns![k]).toBeCloseTo(a + V[j], 5);
      });
    }
    const m = rawA.reduce((s, a) => s + a, 0) / rawA.length;
    const v = rawA.reduce((s, a) => s + (a - m) ** 2, 0) / (rawA.length - 1);
    rawIdx.forEach((k, j) => expect(out.advantages[k]).toBeCloseTo((rawA[j] - m) / Math.sqrt(v + 1e-8), 4));
    for (let k = 0; k < N * L; k++) {
      if (mask[k] === 0) {
        expect(out.advantages[k]).toBe(0);
        expect(out.returns![k]).toBe(0);
      }
    }
  });

  it('token estimators need k1 when beta > 0, and gae needs values', () => {
    expect(() => reinforcePpAdvantages({ rewards: [1, 0], mask, groupSize: 1 }, 0.1)).toThrow(/pass k1/);
    expect(() => gaeAdvantages({ rewards: [1, 0], mask, groupSize: 1 })).toThrow(/gae needs values/);
    expect(() => gaeAdvantages({ rewards: [1, 0], mask, groupSize: 1, values: [0, 0] })).toThrow(/expected N\*L = 6/);
    // beta 0 needs no k1
    expect(() => reinforcePpAdvantages({ rewards: [1, 0], mask, groupSize: 1 }, 0)).not.toThrow();
  });
});

describe('degenerate groups and whitening', () => {
  it('groups whose rewards are all equal: grpo/dr_grpo/rloo/opo give exactly 0, no NaN, and count as zero-std', () => {
    const input: AdvantageInput = { rewards: [0.1, 0.1, 0.1, 0.7, 0.7, 0.7], mask: ones(6, 2), groupSize: 3 };
    for (const e of ['grpo', 'dr_grpo', 'rloo', 'opo'] as const) {
      const A = computeAdvantages(e, input).advantages;
      expect(Array.from(A), e).toEqual(new Array(12).fill(0));
    }
    const stats = groupRewardStats(input.rewards, 3);
    expect(stats.frac_reward_zero_std).toBe(1);
    expect(stats.reward_std).toBe(0);
    expect(stats.zeroStd).toEqual([true, true]);
  });

  it('G = 2: grpo gives +-1/sqrt(2) (up to the 1e-4 guard), rloo +-(r1 - r2), equal pairs 0', () => {
    // [1, 0]: mean 0.5, unbiased std sqrt(0.5) = 0.707107; a = 0.5 / 0.707207 = 0.707007
    const input: AdvantageInput = { rewards: [1, 0, 3, 3], mask: ones(4, 1), groupSize: 2 };
    expectClose(grpoAdvantages(input), [0.5 / (Math.SQRT1_2 + 1e-4), -0.5 / (Math.SQRT1_2 + 1e-4), 0, 0]);
    expectClose(rlooAdvantages(input), [1, -1, 0, 0]);
    expect(groupRewardStats(input.rewards, 2).frac_reward_zero_std).toBe(0.5);
  });

  it('G = 1: the group estimators that divide by a group std or G-1 refuse; the rest work', () => {
    const input: AdvantageInput = { rewards: [1, 0], mask: ones(2, 1), groupSize: 1 };
    expect(() => grpoAdvantages(input, 'group')).toThrow(/needs at least 2 rewards per std, got 1/);
    expect(() => rlooAdvantages(input)).toThrow(/groupSize >= 2/);
    expectClose(grpoAdvantages(input, 'batch'), [0, 0]); // each group's mean is its only reward
    expectClose(reinforceAdvantages(input).advantages, [1, 0]);
  });

  it('whitening: zero variance, one valid token and no valid token all give zeros, never NaN', () => {
    expect(Array.from(whiten([0.1, 0.1, 0.1, 5], [1, 1, 1, 0]))).toEqual([0, 0, 0, 0]);
    expect(Array.from(whiten([3, 7], [0, 1]))).toEqual([0, 0]);
    expect(Array.from(whiten([3, 7], [0, 0]))).toEqual([0, 0]);
    // every token of the batch with the same return: reinforce_pp yields zeros
    const A = reinforcePpAdvantages({ rewards: [1, 1], mask: [1, 0, 1, 0], groupSize: 1 });
    expect(Array.from(A)).toEqual([0, 0, 0, 0]);
    // a generic case: mean 0, unit unbiased std
    const w = whiten([1, 2, 3, 4, 100], [1, 1, 1, 1, 0]);
    const valid = Array.from(w).slice(0, 4);
    expect(valid.reduce((s, x) => s + x, 0)).toBeCloseTo(0, 6);
    expect(valid.reduce((s, x) => s + x * x, 0) / 3).toBeCloseTo(1, 5);
    expect(w[4]).toBe(0);
  });

  it('every estimator writes 0 at masked tokens and nothing non-finite', () => {
    const rng = new Rng(5);
    const N = 8;
    const L = 6;
    const mask = Array.from({ length: N * L }, () => (rng.uniform() > 0.3 ? 1 : 0));
    const input: AdvantageInput = {
      rewards: Array.from({ length: N }, () => (rng.uniform() > 0.5 ? 1 : 0)), // 0/1: max_rl takes no other
      mask,
      groupSize: 4,
      k1: Array.from({ length: N * L }, () => rng.uniform() - 0.5),
      values: Array.from({ length: N * L }, () => rng.uniform()),
      greedyRewards: [0.5, 1],
      oldLogp: Array.from({ length: N * L }, () => Math.log(rng.uniform(0.01, 1))),
      sumPiSquared: Array.from({ length: N * L }, () => rng.uniform(0.01, 1)),
    };
    for (const e of ADV_ESTIMATORS) {
      const { advantages } = computeAdvantages(e, input, { beta: 0.1, baselineMomentum: 0.5 });
      expect(advantages.length).toBe(N * L);
      for (let k = 0; k < N * L; k++) {
        expect(Number.isFinite(advantages[k]), `${e}[${k}]`).toBe(true);
        if (mask[k] === 0) expect(advantages[k], `${e}[${k}]`).toBe(0);
      }
    }
  });

  it('refuses bad inputs with the reason', () => {
    expect(() => grpoAdvantages({ rewards: [1, NaN], mask: [1, 1], groupSize: 2 })).toThrow(/rewards\[1\] is NaN/);
    expect(() => grpoAdvantages({ rewards: [1, 0, 1], mask: [1, 1, 1], groupSize: 2 })).toThrow(
      /groupSize 2 does not divide the 3 rewards/,
    );
    expect(() => grpoAdvantages({ rewards: [1, 0], mask: [1, 1, 1], groupSize: 2 })).toThrow(/not a multiple of N = 2/);
    expect(() => grpoAdvantages({ rewards: [1, 0], mask: [1, 0.5], groupSize: 2 })).toThrow(/mask\[1\] = 0.5/);
    expect(() => grpoAdvantages({ rewards: [], mask: [], groupSize: 1 })).toThrow(/empty/);
    expect(() => reinforceAdvantages({ rewards: [1], mask: [1], groupSize: 1 }, 1)).toThrow(
      /momentum must be in \[0, 1\)/,
    );
  });
});

describe('optimal_token_baseline (verl)', () => {
  // One group of two rows, L = 3. Row 0: reward 1, all 3 tokens valid; row 1: reward 0, its last token masked.
  // pi_t = exp(oldLogp); w_t = 1 - 2 pi_t + sum pi^2:
  //   row 0: pi = .5, 1, .25; sum pi^2 = .5, 1, .25 -> w = .5, 0, .75 -> W = .5, .5, 1.25
  //   row 1: pi = .5, .25;    sum pi^2 = .5, .5     -> w = .5, 1       -> W = .5, 1.5
  // G_t = r (no KL in the reward): row 0 = 1, 1, 1; row 1 = 0, 0.
  // B_0 = (1 * .5 + 0 * .5) / (.5 + .5) = .5;  B_1 = (1 * .5 + 0) / (.5 + 1.5) = .25;  B_2 would be 1.25 / 1.25
  // = 1, but row 0 alone is longest (3 valid tokens against 2): handle_zero_tail makes its baseline 0 from
  // position 2 on. A: row 0 = .5, .75, 1;  row 1 = -.5, -.25, 0 (masked).
  const input: AdvantageInput = {
    rewards: [1, 0],
    mask: [1, 1, 1, 1, 1, 0],
    groupSize: 2,
    oldLogp: [0.5, 1, 0.25, 0.5, 0.25, 0.9].map(Math.log),
    sumPiSquared: [0.5, 1, 0.25, 0.5, 0.5, 0.9],
  };

  it('gives the per-position baseline of the hand-worked group', () => {
    const a = Array.from(optimalTokenBaselineAdvantages(input));
    const want = [0.5, 0.75, 1, -0.5, -0.25, 0];
    for (let k = 0; k < 6; k++) expect(a[k], `A[${k}]`).toBeCloseTo(want[k], 6);
    expect(a[5]).toBe(0);
    expect(Array.from(computeAdvantages('optimal_token_baseline', input).advantages)).toEqual(a);
  });

  it('scales w by the squared rollout importance weight, and keeps A = G in a group of one', () => {
    // rho = 2 at row 1, token 1: w = 4 there -> W(row 1) = .5, 4.5; B_1 = .5 / (.5 + 4.5) = .1
    const rho = [1, 1, 1, 1, 2, 1];
    const a = optimalTokenBaselineAdvantages({ ...input, rolloutIsWeights: rho });
    expect(a[1]).toBeCloseTo(0.9, 6);
    expect(a[4]).toBeCloseTo(-0.1, 6);
    expect(a[0]).toBeCloseTo(0.5, 6); // position 0 untouched
    const single = optimalTokenBaselineAdvantages({ ...input, groupSize: 1 });
    expect(Array.from(single)).toEqual([1, 1, 1, 0, 0, 0]);
  });

  it('keeps the baseline of a tail two rows share (handle_zero_tail only frees a single longest row)', () => {
    // both rows valid at every position: position 2's baseline is the group's, (1 * 1.25 + 0 * W) / (1.25 + W)
    const full = { ...input, mask: [1, 1, 1, 1, 1, 1], sumPiSquared: [0.5, 1, 0.25, 0.5, 0.5, 0.5] };
    // row 1: pi = .5, .25, .9 -> w = .5, 1, 1 - 1.8 + .5 = -.3 -> W = .5, 1.5, 1.2
    const a = optimalTokenBaselineAdvantages(full);
    const b2 = 1.25 / (1.25 + 1.2);
    expect(a[2]).toBeCloseTo(1 - b2, 6);
    expect(a[5]).toBeCloseTo(-b2, 6);
  });

  it('adds -beta k1 to the token rewards when the KL is in the reward', () => {
    // k1 = .1 on every token, beta 1: row 0's G = 1 - .3, 1 - .2, 1 - .1; row 1's G = -.2, -.1
    const k1 = new Array(6).fill(0.1);
    const a = optimalTokenBaselineAdvantages({ ...input, k1 }, 1);
    // B_0 = (.7 * .5 - .2 * .5) / 1 = .25 -> A = .45, -.45
    expect(a[0]).toBeCloseTo(0.45, 6);
    expect(a[3]).toBeCloseTo(-0.45, 6);
  });

  it('names the missing or misshapen input', () => {
    expect(() => optimalTokenBaselineAdvantages({ ...input, sumPiSquared: undefined })).toThrow(/needs sumPiSquared/);
    expect(() => optimalTokenBaselineAdvantages({ ...input, oldLogp: undefined })).toThrow(/needs oldLogp/);
    expect(() => optimalTokenBaselineAdvantages({ ...input, sumPiSquared: [1, 2] })).toThrow(
      /sumPiSquared has 2 entries, expected N\*L = 6/,
    );
  });
});

describe('group reward statistics', () => {
  it('reward, reward_std (mean of group stds) and frac_reward_zero_std', () => {
    // groups [1,0,0] (std sqrt(1/3)), [1,1,1] (0), [0,0.5,1] (std 0.5), [0,0,0] (0)
    const s = groupRewardStats([1, 0, 0, 1, 1, 1, 0, 0.5, 1, 0, 0, 0], 3);
    expect(s.reward).toBeCloseTo(5.5 / 12, 12); // 1 + 3 + 1.5 + 0 = 5.5
    expect(s.reward_std).toBeCloseTo((Math.sqrt(1 / 3) + 0.5) / 4, 12);
    expect(s.frac_reward_zero_std).toBe(0.5);
    expect(s.zeroStd).toEqual([false, true, false, true]);
    expect(Array.from(s.groupMean)).toEqual([1 / 3, 1, 0.5, 0]);
  });
});

describe('pass@k', () => {
  /** Fraction of k-subsets of n samples (c of them correct) that contain a correct one, by enumeration. */
  function bruteForce(n: number, c: number, k: number): number {
    let hit = 0;
    let total = 0;
    for (let bits = 0; bits < 1 << n; bits++) {
      let size = 0;
      let correct = false;
      for (let j = 0; j < n; j++) {
        if (bits & (1 << j)) {
          size++;
          if (j < c) correct = true; // samples 0..c-1 are the correct ones
        }
      }
      if (size !== k) continue;
      total++;
      if (correct) hit++;
    }
    return hit / total;
  }

  it('equals enumeration of every k-subset for n <= 10', () => {
    for (let n = 1; n <= 10; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++)
          expect(passAtK(n, c, k), `n=${n} c=${c} k=${k}`).toBeCloseTo(bruteForce(n, c, k), 12);
  });

  it('is stable where the binomials overflow, and has the obvious values', () => {
    expect(passAtK(1000, 1, 1)).toBeCloseTo(0.001, 15);
    expect(passAtK(1000, 0, 500)).toBe(0);
    expect(passAtK(1000, 501, 500)).toBe(1);
    // n = 2000, c = 100, k = 100: 1 - C(1900,100)/C(2000,100), via log-gamma-free sums of logs
    let logRatio = 0;
    for (let i = 0; i < 100; i++) logRatio += Math.log(1900 - i) - Math.log(2000 - i);
    const p = passAtK(2000, 100, 100);
    expect(Number.isFinite(p)).toBe(true);
    expect(p).toBeCloseTo(1 - Math.exp(logRatio), 10);
    expect(passAtK(8, 2, 1)).toBeCloseTo(0.25, 15); // pass@1 = c/n
    expect(meanPassAtK([0, 2, 8], 8, 1)).toBeCloseTo((0 + 0.25 + 1) / 3, 15);
  });

  it('refuses impossible arguments', () => {
    expect(() => passAtK(4, 5, 1)).toThrow(/0 <= c <= n/);
    expect(() => passAtK(4, 1, 5)).toThrow(/1 <= k <= n/);
    expect(() => passAtK(4, 1, 0)).toThrow(/1 <= k <= n/);
    expect(() => passAtK(4.5, 1, 1)).toThrow(/integers/);
  });
});

describe('grpo_passk (verl) and GDPO (normalize_then_sum)', () => {
  it('grpo_passk: only the best of each group gets (r_max - r_second) / (std + 1e-6)', () => {
    // Group 0: rewards [0, 1, 0.25, 0.5]: best row 1, runner-up 0.5, gap 0.5; mean 0.4375, unbiased variance
    // (0.19140625 + 0.31640625 + 0.03515625 + 0.00390625) / 3 = 0.18229..., std 0.42696...
    // Group 1: [1, 1, 0, 0]: tied best, the first (row 4) gets the gap 0.
    const rewards = [0, 1, 0.25, 0.5, 1, 1, 0, 0];
    const mask = new Array(8).fill(1);
    const a = grpoPasskAdvantages({ rewards, mask, groupSize: 4 });
    const std = Math.sqrt((0.19140625 + 0.31640625 + 0.03515625 + 0.00390625) / 3);
    expect(Array.from(a)).toEqual([0, Math.fround(0.5 / (std + 1e-6)), 0, 0, 0, 0, 0, 0]);
    const raw = grpoPasskAdvantages({ rewards, mask, groupSize: 4 }, 'none');
    expect(Array.from(raw)).toEqual([0, 0.5, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(computeAdvantages('grpo_passk', { rewards, mask, groupSize: 4 }).advantages)).toEqual(
      Array.from(a),
    );
    expect(() => grpoPasskAdvantages({ rewards: [1, 0], mask: [1, 1], groupSize: 1 })).toThrow(/groupSize >= 2/);
    expect(() => grpoPasskAdvantages({ rewards, mask, groupSize: 4 }, 'batch')).toThrow(/batch/);
  });

  it('GDPO: each reward normalized in its group, the weighted sum normalized over the batch', () => {
    // Two groups of 2, two reward functions. accuracy [1, 0 | 1, 1], format [0.1, 0 | 0, 0.1], weights 1 and 0.5.
    // In-group z: accuracy [+c, -c | 0, 0], format [+c, -c | -c, +c] with c = 0.5 d / (std + 1e-4) where d is the
    // gap and std = d / sqrt(2): c = (d / 2) / (d / sqrt 2 + 1e-4).
    const acc = [1, 0, 1, 1];
    const fmt = [0.1, 0, 0, 0.1];
    const c = (d: number) => d / 2 / (d / Math.SQRT2 + 1e-4);
    const s = [c(1) + 0.5 * c(0.1), -c(1) - 0.5 * c(0.1), -0.5 * c(0.1), 0.5 * c(0.1)];
    const mu = (s[0] + s[1] + s[2] + s[3]) / 4;
    const sd = Math.sqrt(s.reduce((a, x) => a + (x - mu) ** 2, 0) / 3);
    const want = s.map((x) => Math.fround((x - mu) / (sd + 1e-4)));
    const input = { rewards: [0, 0, 0, 0], mask: [1, 1, 1, 1], groupSize: 2 };
    const parts = rewardPartsOf({ accuracy: acc, format: fmt }, { accuracy: 1, format: 0.5 });
    const a = gdpoAdvantages(input, parts);
    a.forEach((x, i) => expect(x).toBeCloseTo(want[i], 6));
    // Group 1 differs only in the small-spread format reward, which still moves its advantages in full.
    expect(Math.abs(a[2])).toBeGreaterThan(0.1);
    const viaEntry = computeAdvantages('grpo', input, {
      multiObjectiveAggregation: 'normalize_then_sum',
      rewardParts: parts,
    });
    expect(Array.from(viaEntry.advantages)).toEqual(Array.from(a));
    expect(() => computeAdvantages('grpo', input, { multiObjectiveAggregation: 'normalize_then_sum' })).toThrow(
      /rewardParts/,
    );
  });

  it('rewardPartsOf adds the overlong penalty as one more part of weight 1', () => {
    const parts = rewardPartsOf({ accuracy: [1, 0], overlong: [0, -0.5] }, { accuracy: 2 });
    expect(parts.map((p) => [p.name, p.weight])).toEqual([
      ['accuracy', 2],
      ['overlong', 1],
    ]);
  });
});
