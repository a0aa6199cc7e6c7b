// The OpenRLHF export writes an advantage estimator only where OpenRLHF's computes the lab's: each lab estimator
// the export maps is compared with a transcription of OpenRLHF's own advantage code (OpenRLHF/OpenRLHF v0.11.0,
// 3c3be62: openrlhf/trainer/ppo_utils/experience_maker.py, the reward shaping, get_cumulative_returns and the batch
// normalization; openrlhf/models/utils.py compute_reward), and an estimator none of OpenRLHF's computes (reinforce,
// remax, ...) is refused with its reason instead of being left to OpenRLHF's default, gae.

import { describe, expect, it } from 'vitest';
import { computeAdvantages, type AdvantageInput } from '../rl/algorithm/advantages';
import { ADV_ESTIMATORS } from '../schema/algorithm-names';
import { resolveConfig } from '../schema/config';
import { OPENRLHF_FLAGS } from './declarations';
import { exportExperiment, mappingRows } from '.';

type OpenrlhfEstimator = 'reinforce' | 'rloo' | 'reinforce_baseline' | 'group_norm' | 'dr_grpo';

/**
 * OpenRLHF's advantages for its critic-free estimators, as experience_maker.py computes them (gamma 1): the group
 * shaping of the sequence rewards, compute_reward (r at the last action token, -kl_coef * kl on every token),
 * get_cumulative_returns (a suffix sum of the masked token rewards), then for reinforce and reinforce_baseline the
 * batch normalization over action tokens: (x - mean) * rsqrt(clamp(var, 1e-8)), var the population variance.
 */
function openrlhfAdvantages(
  estimator: OpenrlhfEstimator,
  rewards: readonly number[],
  mask: readonly number[],
  n: number,
  L: number,
  kl: readonly number[] = mask.map(() => 0),
  klCoef = 0,
): number[] {
  const N = rewards.length;
  const shaped = rewards.map((r, i) => {
    const g = Math.floor(i / n);
    const group = rewards.slice(g * n, g * n + n);
    const sum = group.reduce((a, b) => a + b, 0);
    const mean = sum / n;
    const std = Math.sqrt(group.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)); // torch.std: unbiased
    if (estimator === 'rloo') return r - (sum - r) / (n - 1);
    if (estimator === 'reinforce_baseline' || estimator === 'dr_grpo') return r - mean;
    if (estimator === 'group_norm') return (r - mean) / (std + 1e-9);
    return r;
  });
  const adv = new Array<number>(N * L).fill(0);
  for (let i = 0; i < N; i++) {
    let last = -1;
    for (let t = 0; t < L; t++) if (mask[i * L + t] > 0.5) last = t;
    let ret = 0;
    for (let t = L - 1; t >= 0; t--) {
      const tokenReward = (t === last ? shaped[i] : 0) - Math.max(klCoef, 0) * kl[i * L + t];
      ret = mask[i * L + t] * tokenReward + ret;
      adv[i * L + t] = ret;
    }
  }
  if (estimator !== 'reinforce' && estimator !== 'reinforce_baseline') return adv;
  const count = mask.reduce((a, b) => a + b, 0);
  const mean = adv.reduce((a, x, k) => a + x * mask[k], 0) / count;
  const variance = adv.reduce((a, x, k) => a + (x - mean) ** 2 * mask[k], 0) / count;
  return adv.map((x) => (x - mean) / Math.sqrt(Math.max(variance, 1e-8)));
}

/** Two prompts, four completions each, of uneven lengths (L = 5), with unequal rewards in every group. */
const N = 8;
const G = 4;
const L = 5;
const LENGTHS = [5, 3, 1, 4, 2, 5, 3, 4];
const MASK: number[] = Array.from({ length: N * L }, (_, k) => (k % L < LENGTHS[Math.floor(k / L)] ? 1 : 0));
const REWARDS = [1, 0, 0.5, 0, 0.25, 1, 1, 0];
const K1 = Array.from({ length: N * L }, (_, k) => ((k * 37) % 11) / 20 - 0.2);
const COUNTED = MASK.reduce((a, b) => a + b, 0);

function labAdvantages(estimator: 'grpo' | 'dr_grpo' | 'rloo' | 'reinforce_pp' | 'reinforce_pp_baseline', beta = 0) {
  const input: AdvantageInput = { rewards: REWARDS, mask: MASK, groupSize: G, k1: K1 };
  return Array.from(computeAdvantages(estimator, input, { beta, scaleRewards: 'group' }).advantages);
}

function expectClose(lab: readonly number[], peer: readonly number[], tol: number) {
  for (let k = 0; k < lab.length; k++) if (MASK[k]) expect(lab[k], `token ${k}`).toBeCloseTo(peer[k], tol);
}

const exportedEstimator = (adv_estimator: string) =>
  mappingRows('openrlhf', resolveConfig('grpo', { adv_estimator })).find((r) => r.field === 'adv_estimator')!
    .settings[0]?.value;

describe('OpenRLHF advantage estimators', () => {
  it("each estimator the export writes computes the lab's, by OpenRLHF's own arithmetic", () => {
    expect(exportedEstimator('grpo')).toBe('group_norm');
    expect(exportedEstimator('dr_grpo')).toBe('dr_grpo');
    expect(exportedEstimator('rloo')).toBe('rloo');
    expect(exportedEstimator('reinforce_pp')).toBe('reinforce');
    expect(exportedEstimator('reinforce_pp_baseline')).toBe('reinforce_baseline');
    // GRPO's std guard: the lab's 1e-4, OpenRLHF's 1e-9 (a group's std here is at least 0.25).
    expectClose(labAdvantages('grpo'), openrlhfAdvantages('group_norm', REWARDS, MASK, G, L), 3);
    expectClose(labAdvantages('dr_grpo'), openrlhfAdvantages('dr_grpo', REWARDS, MASK, G, L), 6);
    expectClose(labAdvantages('rloo'), openrlhfAdvantages('rloo', REWARDS, MASK, G, L), 6);
    // The whitened two: the lab divides by verl's unbiased std (n - 1), OpenRLHF by the population's (n), so they
    // differ by the factor sqrt((n - 1) / n) over the n counted tokens; the KL reward is included.
    const toPopulation = Math.sqrt((COUNTED - 1) / COUNTED);
    for (const [lab, peer] of [
      ['reinforce_pp', 'reinforce'],
      ['reinforce_pp_baseline', 'reinforce_baseline'],
    ] as const) {
      const ours = labAdvantages(lab, 0.1).map((a) => a / toPopulation);
      expectClose(ours, openrlhfAdvantages(peer, REWARDS, MASK, G, L, K1, 0.1), 5);
    }
  });

  it("no OpenRLHF estimator computes the lab's reinforce (A = r, or r minus a running mean)", () => {
    const plain = Array.from(
      computeAdvantages('reinforce', { rewards: REWARDS, mask: MASK, groupSize: G }, {}).advantages,
    );
    const choices = OPENRLHF_FLAGS['--algo.advantage.estimator'].choices!;
    for (const name of choices.filter((c) => c !== 'gae') as OpenrlhfEstimator[]) {
      const peer = openrlhfAdvantages(name, REWARDS, MASK, G, L);
      expect(
        plain.some((a, k) => MASK[k] && Math.abs(a - peer[k]) > 0.01),
        name,
      ).toBe(true);
    }
  });

  it('refuses, naming why, every lab estimator OpenRLHF does not compute, instead of leaving it to gae', () => {
    const choices = new Set(OPENRLHF_FLAGS['--algo.advantage.estimator'].choices);
    const options = { preset: 'grpo' as const, model: 'm', maxRows: 1 };
    let refused = 0;
    for (const adv_estimator of ADV_ESTIMATORS) {
      const c = resolveConfig(adv_estimator === 'gae' ? 'ppo' : 'grpo', {
        adv_estimator,
        reward_weights: { accuracy: 1 },
      });
      let script: string;
      try {
        script = exportExperiment('openrlhf', c, options).files[0].text;
      } catch (e) {
        expect((e as Error).message).toMatch(
          new RegExp(`^adv_estimator: OpenRLHF has no estimator that computes ${adv_estimator} .*gae with a critic`),
        );
        refused++;
        continue;
      }
      const written = /--algo\.advantage\.estimator' '([a-z_]+)'|--algo\.advantage\.estimator ([a-z_]+)/.exec(script);
      expect(written, `${adv_estimator}: the script names its estimator`).not.toBeNull();
      expect(choices.has(written![1] ?? written![2]), adv_estimator).toBe(true);
    }
    expect(refused).toBeGreaterThan(0);
    for (const preset of ['reinforce', 'remax'] as const)
      expect(() => exportExperiment('openrlhf', resolveConfig(preset, {}), { ...options, preset })).toThrow(
        preset === 'remax' ? /greedy-rollout reward/ : /OpenRLHF's reinforce is REINFORCE\+\+/,
      );
  });
});
