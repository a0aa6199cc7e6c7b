// The rollout correction and the off-policy sequence mask of the objective twin (src/reference/objective.ts):
// a hand-worked batch per mode, tis_cap as the token_truncate case (outputs identical), the metrics as counts of
// the per-token weights, and the weights checked against verl's own formula (verl/trainer/ppo/rollout_corr_helper.py
// at the commit of src/export/fixtures/verl.json, transcribed below) fed with the settings the verl export writes.

import { describe, expect, it } from 'vitest';
import { randomObjectiveInputs } from '../kernels/objective.cases';
import { resolveConfig, type RLConfig } from '../schema/config';
import { verlRolloutCorrection } from '../export/mapping';
import { OBJECTIVE_FIELDS, ROLLOUT_IS_MODES, resolveObjectiveConfig, type ObjectiveConfig } from '../schema/objective';
import { OBJECTIVE_METRICS, objectiveOutputs, type ObjectiveInputs } from './objective';
import { Rng } from '../core/random';
import { host, hostRows } from '../core/host-tensor';

type Metric = (typeof OBJECTIVE_METRICS)[number];

function run(inputs: ObjectiveInputs, config: Partial<ObjectiveConfig>) {
  const out = objectiveOutputs(inputs, resolveObjectiveConfig(config));
  const metrics = Object.fromEntries(OBJECTIVE_METRICS.map((m, j) => [m, out.metrics[j]])) as Record<Metric, number>;
  return { loss: out.loss, dLogp: out.dLogp, records: out.records, metrics };
}

const t64 = hostRows;

/**
 * The per-token factor c the correction applies, read off the objective itself: with logp == oldLogp (ratio 1),
 * ppo_clip, A = -1, no KL and no entropy bonus, a token contributes w * c, so c = contribution / weight.
 */
function appliedWeights(inputs: ObjectiveInputs, config: Partial<ObjectiveConfig>): Float64Array {
  const NL = inputs.logp.data.length;
  const advantages = host(new Float64Array(NL).fill(-1), inputs.logp.shape);
  const r = run({ ...inputs, advantages }, { ...config, loss_type: 'ppo_clip', beta: 0, entropy_coef: 0 });
  const c = new Float64Array(NL);
  for (let i = 0; i < NL; i++) c[i] = inputs.mask.data[i] ? r.records[3 * NL + i] / r.records[4 * NL + i] : 0;
  return c;
}

/** Two sequences of lengths 3 and 2 (padding last), logp = oldLogp, A = -1, and chosen log weights x = old - sampler. */
function handBatch(x: number[][], lp = -1): ObjectiveInputs {
  const mask = [
    [1, 1, 1],
    [1, 1, 0],
  ];
  const logp = t64(mask.map((r) => r.map(() => lp)));
  return {
    logp,
    oldLogp: t64(mask.map((r) => r.map(() => lp))),
    advantages: t64(mask.map((r) => r.map(() => -1))),
    mask: t64(mask),
    entropy: t64(mask.map((r) => r.map(() => 1))),
    samplerLogp: t64(x.map((r) => r.map((v) => lp - v))),
  };
}

describe('rollout correction: hand-worked weights per mode', () => {
  // Log weights: row 0 sums to ln 2 - ln 2 + 0.5 = 0.5, row 1 to 0.2 - 0.1 = 0.1 (padding's value is never read).
  const x = [
    [Math.log(2), -Math.log(2), 0.5],
    [0.2, -0.1, 9],
  ];
  const e = Math.exp;
  const cases: [ObjectiveConfig['rollout_is_mode'], number | null, number | null, number[], number, number][] = [
    // mode, C_min, C_max, c per masked token (row 0 then row 1), truncated fraction, masked fraction
    ['token_truncate', 0.9, 1.5, [1.5, 0.9, 1.5, e(0.2), e(-0.1)], 3 / 5, 0],
    ['token_truncate', null, 1.5, [1.5, 0.5, 1.5, e(0.2), e(-0.1)], 2 / 5, 0],
    ['token_mask', 0.9, 1.5, [0, 0, 0, e(0.2), e(-0.1) < 0.9 ? 0 : e(-0.1)], 3 / 5 + (e(-0.1) < 0.9 ? 1 / 5 : 0), 0],
    ['sequence_truncate', null, 1.5, [1.5, 1.5, 1.5, e(0.1), e(0.1)], 3 / 5, 0],
    ['sequence_truncate', 1.2, null, [e(0.5), e(0.5), e(0.5), 1.2, 1.2], 2 / 5, 0],
    ['sequence_mask', 0.5, 1.5, [0, 0, 0, e(0.1), e(0.1)], 3 / 5, 0],
    // Geometric means: exp(0.5 / 3) = 1.18 and exp(0.1 / 2) = 1.05; kept tokens get their own exp(x_t).
    ['sequence_geo_mask', null, 1.1, [0, 0, 0, e(0.2), e(-0.1)], 3 / 5, 0],
  ];
  for (const [mode, min, max, want, outFrac] of cases) {
    it(`${mode} [${min}, ${max}]`, () => {
      const cfg = { rollout_is_mode: mode, rollout_is_clip_min: min, rollout_is_clip_max: max };
      const c = appliedWeights(handBatch(x), cfg);
      expect(Array.from(c).filter((_, i) => i !== 5)).toEqual(want.map((v) => expect.closeTo(v, 12)));
      const m = run(handBatch(x), cfg).metrics;
      const truncate = mode.endsWith('truncate');
      expect(m['rollout_correction/truncated_frac']).toBeCloseTo(truncate ? outFrac : 0, 12);
      expect(m['rollout_correction/masked_frac']).toBeCloseTo(truncate ? 0 : outFrac, 12);
      expect(m['sampling/importance_sampling_ratio/mean']).toBeCloseTo(want.reduce((a, b) => a + b) / 5, 12);
    });
  }

  it('the gradient is scaled by the same constant weight (ratio 1, token-mean: dLogp = -A c / M)', () => {
    const inputs = handBatch(x);
    const cfg = { rollout_is_mode: 'token_truncate', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.5 } as const;
    const c = appliedWeights(inputs, cfg);
    const r = run(inputs, cfg);
    for (let i = 0; i < 6; i++) expect(r.dLogp[i]).toBeCloseTo(inputs.mask.data[i] ? c[i] / 5 : 0, 12);
  });

  it('caps a log weight at 20 before exp, so a wide gap stays finite', () => {
    const r = run(
      handBatch([
        [300, 0, 0],
        [0, 0, 0],
      ]),
      { rollout_is_mode: 'sequence_truncate', rollout_is_clip_max: null },
    );
    expect(r.loss).toBeCloseTo((3 * Math.exp(20) + 2) / 5, 3);
  });
});

describe('off-policy sequence mask (off_policy_mask_threshold)', () => {
  it('drops the negative-advantage tokens of a sequence whose mean log(pi_sampler / pi_theta) exceeds delta', () => {
    // Row 0: sampler above theta by 0.3 on average (D = 0.3 > 0.2): its A < 0 tokens drop, its A >= 0 token stays.
    // Row 1: D = 0.1 <= 0.2: kept.
    const logp = t64([
      [-1, -1, -1],
      [-1, -1, -1],
    ]);
    const inputs: ObjectiveInputs = {
      logp,
      oldLogp: logp,
      advantages: t64([
        [-1, 2, -0.5],
        [-1, -1, 0],
      ]),
      mask: t64([
        [1, 1, 1],
        [1, 1, 0],
      ]),
      entropy: t64([
        [1, 1, 1],
        [1, 1, 1],
      ]),
      samplerLogp: t64([
        [-0.7, -0.8, -0.6],
        [-0.9, -0.9, 5],
      ]),
    };
    const r = run(inputs, { off_policy_mask_threshold: 0.2 });
    // token-mean over M = 5, ratio 1: the kept tokens contribute -A / 5.
    expect(r.loss).toBeCloseTo((-2 + 1 + 1) / 5, 12);
    expect(r.metrics['off_policy_mask/masked_frac']).toBeCloseTo(2 / 5, 12);
    expect(Array.from(r.dLogp)).toEqual([0, -2 / 5, 0, 1 / 5, 1 / 5, 0].map((v) => expect.closeTo(v, 12)));
    // Without a sampler the mask measures against pi_old, which equals pi_theta here: nothing drops.
    const { samplerLogp: _, ...noSampler } = inputs;
    expect(run(noSampler, { off_policy_mask_threshold: 0.2 }).metrics['off_policy_mask/masked_frac']).toBe(0);
  });
});

describe('tis_cap is the token_truncate case of the rollout correction', () => {
  it('gives identical outputs to rollout_is_mode token_truncate with rollout_is_clip_max = tis_cap', () => {
    const [logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp] = randomObjectiveInputs(new Rng(5), 6, 11);
    const inputs = { logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp };
    for (const loss_type of ['ppo_clip', 'cispo', 'sapo'] as const) {
      const a = run(inputs, { loss_type, tis_cap: 1.05, beta: 0.02 });
      const b = run(inputs, { loss_type, rollout_is_mode: 'token_truncate', rollout_is_clip_max: 1.05, beta: 0.02 });
      expect(b).toEqual(a);
    }
  });

  it('refuses both at once, and a min above the max, naming the field', () => {
    expect(() => resolveObjectiveConfig({ tis_cap: 2, rollout_is_mode: 'token_mask' })).toThrow(
      /tis_cap: is rollout_is_mode 'token_truncate'.*not both/,
    );
    expect(() =>
      resolveObjectiveConfig({ rollout_is_mode: 'token_mask', rollout_is_clip_min: 2, rollout_is_clip_max: 1 }),
    ).toThrow(/rollout_is_clip_min: must be below rollout_is_clip_max \(1\), got 2/);
    expect(() =>
      run(
        handBatch([
          [0, 0, 0],
          [0, 0, 0],
        ]),
        {},
      ),
    ).not.toThrow();
    const { samplerLogp: _, ...noSampler } = handBatch([
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(() => run(noSampler, { rollout_is_mode: 'sequence_mask' })).toThrow(
      /rollout_is_mode 'sequence_mask' needs samplerLogp/,
    );
  });
});

// ------------------------------------------------------------------------------------------------------------
// verl's formula, transcribed from verl/trainer/ppo/rollout_corr_helper.py (commit b178a3cd, the verl fixture's):
// compute_rollout_correction_weights (rollout_is token / sequence, truncated from above at rollout_is_threshold,
// log ratios clamped to [-20, 20]) times compute_rollout_rejection_mask (token_k1 / seq_sum_k1 / seq_mean_k1 keep
// log(lower) <= -log r <= log(upper), thresholds 'lower_upper'), with log r = old_log_prob - rollout_log_prob.

const SAFETY_BOUND = 20;
const clampLog = (v: number) => Math.min(Math.max(v, -SAFETY_BOUND), SAFETY_BOUND);

function verlWeights(
  old: Float32Array,
  rollout: Float32Array,
  mask: Float32Array,
  N: number,
  L: number,
  settings: Record<string, unknown>,
): Float64Array {
  const R = 'algorithm.rollout_correction.';
  const out = new Float64Array(N * L);
  const level = settings[`${R}rollout_is`] as 'token' | 'sequence';
  const threshold = settings[`${R}rollout_is_threshold`] as number;
  const rs = settings[`${R}rollout_rs`] as string | undefined;
  const [lower, upper] = rs ? (settings[`${R}rollout_rs_threshold`] as string).split('_').map(Number) : [0, 0];
  for (let i = 0; i < N; i++) {
    let sum = 0; // masked_sum of the unclamped log ratios (rollout_is 'sequence')
    for (let t = 0; t < L; t++) if (mask[i * L + t]) sum += old[i * L + t] - rollout[i * L + t];
    // masked_mean divides by mask.sum() + 1e-8
    const seqStat = rs === 'seq_sum_k1' ? -clampLogSum(old, rollout, mask, i, L) : -meanSafe(old, rollout, mask, i, L);
    for (let t = 0; t < L; t++) {
      const j = i * L + t;
      if (!mask[j]) continue;
      const logRatio = old[j] - rollout[j];
      const w = Math.min(Math.exp(clampLog(level === 'token' ? logRatio : sum)), threshold);
      let keep = true;
      if (rs === 'token_k1') {
        const k1 = -clampLog(logRatio);
        keep = k1 >= Math.log(lower) && k1 <= Math.log(upper);
      } else if (rs) keep = seqStat >= Math.log(lower) && seqStat <= Math.log(upper);
      out[j] = keep ? w : 0;
    }
  }
  return out;
}

/** _sequence_sum(token_k1) negated back: the masked sum of the clamped log ratios of row i. */
function clampLogSum(old: Float32Array, rollout: Float32Array, mask: Float32Array, i: number, L: number): number {
  let s = 0;
  for (let t = 0; t < L; t++) if (mask[i * L + t]) s += clampLog(old[i * L + t] - rollout[i * L + t]);
  return s;
}

/** _sequence_mean(token_k1) negated back: masked_mean of the clamped log ratios (divides by n + 1e-8). */
function meanSafe(old: Float32Array, rollout: Float32Array, mask: Float32Array, i: number, L: number): number {
  let n = 0;
  for (let t = 0; t < L; t++) n += mask[i * L + t];
  return clampLogSum(old, rollout, mask, i, L) / (n + 1e-8);
}

describe("rollout correction against verl's formula, with the settings the verl export writes", () => {
  const configs: [string, Partial<RLConfig>][] = [
    [
      'token_truncate C_max 1.1',
      { rollout_is_mode: 'token_truncate', rollout_is_clip_min: null, rollout_is_clip_max: 1.1 },
    ],
    ['tis_cap 1.05', { tis_cap: 1.05 }],
    ['sequence_truncate C_max 1.5', { rollout_is_mode: 'sequence_truncate', rollout_is_clip_max: 1.5 }],
    ['token_mask [0.9, 1.1]', { rollout_is_mode: 'token_mask', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 }],
    ['token_mask C_max 1.1', { rollout_is_mode: 'token_mask', rollout_is_clip_max: 1.1 }],
    [
      'sequence_mask [0.6, 1.7]',
      { rollout_is_mode: 'sequence_mask', rollout_is_clip_min: 0.6, rollout_is_clip_max: 1.7 },
    ],
    [
      'sequence_mask C_min 0.8',
      { rollout_is_mode: 'sequence_mask', rollout_is_clip_min: 0.8, rollout_is_clip_max: null },
    ],
    [
      'sequence_geo_mask [0.97, 1.03]',
      { rollout_is_mode: 'sequence_geo_mask', rollout_is_clip_min: 0.97, rollout_is_clip_max: 1.03 },
    ],
  ];
  for (const [name, overrides] of configs) {
    it(name, () => {
      const rl = resolveConfig('grpo', overrides);
      const c = Object.fromEntries(Object.keys(OBJECTIVE_FIELDS).map((k) => [k, rl[k as keyof RLConfig]]));
      const settings = Object.fromEntries(verlRolloutCorrection(rl).settings.map((s) => [s.key, s.value]));
      const N = 9;
      const L = 23;
      const [, oldLogp, advantages, mask, entropy, , samplerLogp] = randomObjectiveInputs(new Rng(11), N, L);
      // Ratio 1 (logp = oldLogp) so that the objective's contributions expose the weights.
      const inputs = { logp: oldLogp, oldLogp, advantages, mask, entropy, samplerLogp };
      const lab = appliedWeights(inputs, c);
      const verl = verlWeights(oldLogp.data, samplerLogp.data, mask.data, N, L, settings);
      expect(Array.from(lab)).toEqual(Array.from(verl).map((v) => expect.closeTo(v, 10)));
      // The bounds cut somewhere, so the comparison is not between two all-ones batches.
      const m = run(inputs, { ...c, beta: 0 }).metrics;
      expect(m['rollout_correction/truncated_frac'] + m['rollout_correction/masked_frac']).toBeGreaterThan(0);
      expect(m['rollout_correction/truncated_frac'] + m['rollout_correction/masked_frac']).toBeLessThan(1);
    });
  }

  it('covers every mode but none', () => {
    const modes = new Set(
      configs.map(([, o]) => resolveConfig('grpo', o)).map((c) => (c.tis_cap ? 'token_truncate' : c.rollout_is_mode)),
    );
    expect([...modes].sort()).toEqual(ROLLOUT_IS_MODES.filter((m) => m !== 'off').sort());
  });
});
