// The rollout step's dynamics as pure functions: group outcome fractions, the non-zero-advantage fraction, quantiles,
// the top-decile mean, the per-step histograms and the held-out solve-rate histogram, on awkward inputs (empty, all
// tied, masked out, NaN) as well as ordinary ones. The trainer's use of them is trainer-dynamics.test.ts.

import { describe, expect, it } from 'vitest';
import { HISTOGRAMS } from '../../schema/histograms';
import {
  completionPasses,
  groupOutcomes,
  nonzeroAdvantageFrac,
  quantile,
  solveRateHistogram,
  stepDynamics,
  topDecileMean,
} from './dynamics';

describe('completionPasses', () => {
  it('needs a correct verdict and an EOS', () => {
    expect(completionPasses(1, true)).toBe(true);
    expect(completionPasses(1, false)).toBe(false);
    expect(completionPasses(0.9, true)).toBe(false);
    expect(completionPasses(0, true)).toBe(false);
  });
});

describe('groupOutcomes', () => {
  it('splits groups into all fail, mixed and all pass', () => {
    const passed = [false, false, false, true, false, true, true, true, true];
    expect(groupOutcomes(passed, 3)).toEqual({ allFail: 1 / 3, mixed: 1 / 3, allPass: 1 / 3 });
  });
  it('reads every group as all fail or all pass when every completion ties', () => {
    expect(groupOutcomes(new Array(8).fill(false), 4)).toEqual({ allFail: 1, mixed: 0, allPass: 0 });
    expect(groupOutcomes(new Array(8).fill(true), 4)).toEqual({ allFail: 0, mixed: 0, allPass: 1 });
  });
  it('gives 0s, not NaN, for an empty batch', () => {
    expect(groupOutcomes([], 4)).toEqual({ allFail: 0, mixed: 0, allPass: 0 });
  });
  it('a group of one is never mixed', () => {
    expect(groupOutcomes([true, false, true], 1)).toEqual({ allFail: 1 / 3, mixed: 0, allPass: 2 / 3 });
  });
  it('refuses rows that do not split into groups', () => {
    expect(() => groupOutcomes([true, false, true], 2)).toThrow(/groups of 2/);
  });
});

describe('nonzeroAdvantageFrac', () => {
  // 3 rows of S = 3: a signal, a zero-advantage row, a row whose only non-zero advantage is masked out.
  const adv = [0.5, 0.5, 0, 0, 0, 0, 0, 0, 2];
  const mask = [1, 1, 0, 1, 1, 0, 1, 1, 0];
  it('counts rows with a non-zero advantage on a loss token', () => {
    expect(nonzeroAdvantageFrac(adv, mask, 3, 3)).toBeCloseTo(1 / 3, 12);
  });
  it('treats float noise below 1e-8 as zero', () => {
    expect(nonzeroAdvantageFrac([1e-12, -1e-10, 0], [1, 1, 1], 1, 3)).toBe(0);
    expect(nonzeroAdvantageFrac([0, -1e-6, 0], [1, 1, 1], 1, 3)).toBe(1);
  });
  it('a row the mask drops entirely carries no signal', () => {
    expect(nonzeroAdvantageFrac([1, 1], [0, 0], 1, 2)).toBe(0);
  });
  it('gives 0 for no rows', () => {
    expect(nonzeroAdvantageFrac([], [], 0, 4)).toBe(0);
  });
});

describe('quantile', () => {
  it('interpolates between ranks as NumPy does', () => {
    // numpy.quantile([1, 2, 3, 4], [0.1, 0.5, 0.9]) = [1.3, 2.5, 3.7]
    expect(quantile([4, 1, 3, 2], 0.1)).toBeCloseTo(1.3, 12);
    expect(quantile([4, 1, 3, 2], 0.5)).toBeCloseTo(2.5, 12);
    expect(quantile([4, 1, 3, 2], 0.9)).toBeCloseTo(3.7, 12);
    expect(quantile([4, 1, 3, 2], 0)).toBe(1);
    expect(quantile([4, 1, 3, 2], 1)).toBe(4);
  });
  it('returns the value for one value or all tied', () => {
    expect(quantile([7], 0.9)).toBe(7);
    expect(quantile([5, 5, 5, 5, 5], 0.1)).toBe(5);
  });
  it('gives 0, not NaN, for no values', () => {
    expect(quantile([], 0.5)).toBe(0);
  });
  it('sorts numerically, not as text', () => {
    expect(quantile([10, 9, 100], 0.5)).toBe(10);
  });
});

describe('topDecileMean', () => {
  it('averages the largest ceil(M / 10) masked values', () => {
    const v = Array.from({ length: 20 }, (_, i) => i); // 0..19
    expect(topDecileMean(v, new Array(20).fill(1))).toBe((19 + 18) / 2);
    // 11 kept values: ceil(1.1) = 2 of them.
    expect(
      topDecileMean(
        v,
        v.map((x) => (x <= 10 ? 1 : 0)),
      ),
    ).toBe((10 + 9) / 2);
  });
  it('takes at least one value and ignores masked ones', () => {
    expect(topDecileMean([3, 99, 1], [1, 0, 1])).toBe(3);
  });
  it('equals the value when all tie, and 0 for nothing kept', () => {
    expect(topDecileMean([0.4, 0.4, 0.4], [1, 1, 1])).toBeCloseTo(0.4, 12);
    expect(topDecileMean([1, 2], [0, 0])).toBe(0);
    expect(topDecileMean([], [])).toBe(0);
  });
});

describe('stepDynamics', () => {
  it('is NaN-free for a batch whose every token is masked out', () => {
    const d = stepDynamics({
      accuracy: [0, 0],
      finished: [false, false],
      lengths: [2, 2],
      entropies: [1, 1, 1, 1],
      advantages: [0, 0, 0, 0],
      mask: [0, 0, 0, 0],
      groupSize: 2,
      S: 2,
    });
    for (const [k, v] of Object.entries(d.metrics)) expect(Number.isFinite(v), k).toBe(true);
    expect(d.metrics['groups/all_fail_frac']).toBe(1);
    expect(d.metrics['entropy/top_decile_mean']).toBe(0);
    expect(d.histograms.entropy!.reduce((a, b) => a + b, 0)).toBe(0);
  });
  it('counts every loss token once in each histogram and reads the percentiles from the lengths', () => {
    // Two groups of 2, S = 3.
    const mask = [1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0];
    const d = stepDynamics({
      accuracy: [1, 0, 1, 1],
      finished: [true, true, true, false],
      lengths: [2, 1, 3, 2],
      entropies: [0, 0.15, 9, 4.9, 0, 0, 0.5, 0.5, 0.02, 6, 1.2, 0],
      advantages: [1, 1, 0, -1, 0, 0, 0.7, 0.7, 0.7, -0.7, -0.7, 0],
      mask,
      groupSize: 2,
      S: 3,
    });
    const M = mask.filter(Boolean).length;
    expect(d.histograms.entropy!.reduce((a, b) => a + b, 0)).toBe(M);
    expect(d.histograms.advantage!.reduce((a, b) => a + b, 0)).toBe(M);
    expect(d.histograms.entropy).toHaveLength(HISTOGRAMS.entropy.edges.length - 1);
    // The masked entropy 9 is not counted; 6 falls in the open top bin with 4.9.
    expect(d.histograms.entropy![HISTOGRAMS.entropy.edges.length - 2]).toBe(2);
    // Group 0: pass, fail -> mixed. Group 1: pass, cut at L_max (not a pass) -> mixed.
    expect(d.metrics['groups/mixed_frac']).toBe(1);
    expect(d.metrics['groups/nonzero_adv_frac']).toBe(1);
    expect(d.metrics['completions/p50_length']).toBe(2);
    // 8 entropies kept: ceil(0.8) = 1, the largest kept (6).
    expect(d.metrics['entropy/top_decile_mean']).toBe(6);
  });
});

describe('solveRateHistogram', () => {
  it('counts prompts by how many of their n samples pass', () => {
    expect(solveRateHistogram([0, 4, 2, 2, 0], 4)).toEqual([2, 0, 2, 0, 1]);
  });
  it('has n + 1 zero bins for no prompts', () => {
    expect(solveRateHistogram([], 3)).toEqual([0, 0, 0, 0]);
  });
  it('refuses a count outside 0..n', () => {
    expect(() => solveRateHistogram([5], 4)).toThrow(/5 of 4/);
  });
});
