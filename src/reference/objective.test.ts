// The objective twin (src/reference/objective.ts): its gradients against central finite differences of its loss
// (f64) for every differentiable loss type x ratio level x aggregation x KL estimator, plus dual clip, delta,
// TIS and the token selections; a hand-worked case per named preset of docs/algorithms.md#presets with the
// arithmetic in comments; the per-sequence clip fractions (low_min / high_max) by hand and against the records'
// clip sides; logp == oldLogp (ratio exactly 1: nothing clips, dLogp = -A * weight); and config validation.

import { describe, expect, it } from 'vitest';
import { randomObjectiveInputs } from '../kernels/objective.cases';
import { PRESET_NAMES, resolveConfig, type PresetName } from '../schema/config';
import {
  DEFAULT_OBJECTIVE_CONFIG,
  KL_ESTIMATORS,
  LOSS_AGG_MODES,
  OBJECTIVE_FIELDS,
  KL_STRAIGHT_THROUGH,
  ROLLOUT_IS_MODES,
  epsilonHigh,
  isStraightThroughKl,
  resolveObjectiveConfig,
  type ObjectiveConfig,
} from '../schema/objective';
import { compareArrays } from './compare';
import {
  OBJECTIVE_METRICS,
  OBJECTIVE_RECORDS,
  objectiveForwardBackward,
  objectiveMetricRecord,
  objectivePlan,
  objectiveSelection,
  type ObjectiveInputs,
  type ObjectiveMetricName,
} from './objective';
import { Rng } from '../core/random';
import { host, type HostTensor } from '../core/host-tensor';

type T64 = HostTensor<Float64Array>;
const K = OBJECTIVE_METRICS.length;
const R = OBJECTIVE_RECORDS.length;

interface Run {
  loss: number;
  dLogp: Float64Array;
  dEntropy: Float64Array;
  records: Float64Array;
  metrics: Record<ObjectiveMetricName, number>;
}

function run(inputs: ObjectiveInputs, config: Partial<ObjectiveConfig>): Run {
  const [N, L] = inputs.logp.shape;
  const z = (shape: number[]) => host(new Float64Array(shape.reduce((a, b) => a * b, 1)), shape);
  const [loss, dLogp, dEntropy, records, metrics] = [z([1]), z([N, L]), z([N, L]), z([R, N, L]), z([K])];
  objectiveForwardBackward(loss, dLogp, dEntropy, records, metrics, inputs, resolveObjectiveConfig(config));
  const m = {} as Record<ObjectiveMetricName, number>;
  OBJECTIVE_METRICS.forEach((name, j) => (m[name] = metrics.data[j]));
  return { loss: loss.data[0], dLogp: dLogp.data, dEntropy: dEntropy.data, records: records.data, metrics: m };
}

/** A named preset's objective knobs (the RL presets of src/schema/config/presets.ts, not a copy). */
const preset = (name: PresetName): ObjectiveConfig => {
  const c = resolveConfig(name);
  return Object.fromEntries(
    Object.keys(OBJECTIVE_FIELDS).map((k) => [k, c[k as keyof ObjectiveConfig]]),
  ) as ObjectiveConfig;
};

const t64 = (rows: number[][]): T64 => host(Float64Array.from(rows.flat()), [rows.length, rows[0].length]);

/** Random f64 inputs (ragged masks, garbage in padding) with every optional input present. */
function randomInputs(
  seed: number,
  N: number,
  L: number,
  spread = 0.6,
  perSequenceAdvantages = false,
): Required<ObjectiveInputs<T64>> {
  const [logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp, klExact] = randomObjectiveInputs(
    new Rng(seed),
    N,
    L,
    {
      spread,
      perSequenceAdvantages,
    },
  ).map((h) => host(Float64Array.from(h.data), h.shape));
  return { logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp, klExact };
}

/**
 * Central differences of the twin's loss with respect to each token of `x`, moving the `linked` arrays by the
 * same step (CISPO: oldLogp and samplerLogp move with logp, so the stop-gradient IS weight and the TIS weight
 * stay fixed and the difference sees only the surrogate's explicit logp).
 */
function fdGrad(loss: () => number, x: Float64Array, linked: Float64Array[] = [], h = 1e-6): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const all = [x, ...linked];
    const saved = all.map((a) => a[i]);
    all.forEach((a, j) => (a[i] = saved[j] + h));
    const fp = loss();
    all.forEach((a, j) => (a[i] = saved[j] - h));
    const fm = loss();
    all.forEach((a, j) => (a[i] = saved[j]));
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}

const FD_TOL = { atol: 2e-7, rtol: 2e-6 };

function expectFd(
  label: string,
  inputs: Required<ObjectiveInputs<T64>>,
  config: Partial<ObjectiveConfig>,
  use: { ref?: boolean; sampler?: boolean; klExact?: boolean },
): void {
  const ins: ObjectiveInputs<T64> = {
    logp: inputs.logp,
    oldLogp: inputs.oldLogp,
    advantages: inputs.advantages,
    mask: inputs.mask,
    entropy: inputs.entropy,
    ...(use.ref ? { refLogp: inputs.refLogp } : {}),
    ...(use.sampler ? { samplerLogp: inputs.samplerLogp } : {}),
    ...(use.klExact ? { klExact: inputs.klExact } : {}),
  };
  const r = run(ins, config);
  const lossOf = () => run(ins, config).loss;
  const cispo = resolveObjectiveConfig(config).loss_type === 'cispo';
  const linked = cispo ? [inputs.oldLogp.data, inputs.samplerLogp.data] : [];
  const gl = fdGrad(lossOf, inputs.logp.data, linked);
  const cl = compareArrays(r.dLogp, gl, FD_TOL);
  expect(cl.pass, `${label} dLogp: ${cl.summary}`).toBe(true);
  const ge = fdGrad(lossOf, inputs.entropy.data);
  const ce = compareArrays(r.dEntropy, ge, FD_TOL);
  expect(ce.pass, `${label} dEntropy: ${ce.summary}`).toBe(true);
  // The records' contributions add up to the loss; masked tokens carry nothing.
  const NL = inputs.logp.data.length;
  let sum = 0;
  for (let i = 0; i < NL; i++) sum += r.records[3 * NL + i];
  expect(sum).toBeCloseTo(r.loss, 12);
  for (let i = 0; i < NL; i++) {
    if (inputs.mask.data[i] === 0)
      expect([r.dLogp[i], r.dEntropy[i], r.records[i], r.records[3 * NL + i]]).toEqual([0, 0, 0, 0]);
  }
}

const LEVELS = [
  { loss_type: 'ppo_clip', importance_sampling_level: 'token' },
  { loss_type: 'ppo_clip', importance_sampling_level: 'sequence' },
  { loss_type: 'cispo', importance_sampling_level: 'token' },
  { loss_type: 'cispo', importance_sampling_level: 'sequence' },
  { loss_type: 'sapo', importance_sampling_level: 'token' },
  { loss_type: 'sapo', importance_sampling_level: 'sequence' },
  { loss_type: 'gmpo', importance_sampling_level: 'token' },
  { loss_type: 'pg', importance_sampling_level: 'token' },
] as const;

describe('objective twin: gradients match central finite differences', () => {
  let seed = 100;
  for (const lv of LEVELS) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      for (const kl of ['none', ...KL_ESTIMATORS.filter((e) => !isStraightThroughKl(e))] as const) {
        const s = seed++;
        const tis = s % 3 === 0;
        it(`${lv.loss_type} ${lv.importance_sampling_level} ${loss_agg_mode} kl=${kl}${tis ? ' tis' : ''}`, () => {
          // Small epsilons at sequence level so that some sequence ratios clip.
          const eps = lv.importance_sampling_level === 'sequence' ? { epsilon: 0.05, epsilon_high: 0.08 } : {};
          const config: Partial<ObjectiveConfig> = {
            ...lv,
            ...eps,
            loss_agg_mode,
            entropy_coef: 0.013,
            eps_max: 1.2,
            ...(kl === 'none' ? {} : { beta: 0.07, kl_estimator: kl }),
            ...(tis ? { tis_cap: 1.1 } : {}),
          };
          expectFd('', randomInputs(s, 3, 5), config, { ref: true, sampler: true, klExact: true });
        });
      }
    }
  }
  const features: [string, Partial<ObjectiveConfig>, number?][] = [
    ['dual clip c=1.3 + delta=1.5, clip-higher', { clip_ratio_c: 1.3, delta: 1.5, epsilon_high: 0.28 }, 0.9],
    ['dual clip c=1.3', { clip_ratio_c: 1.3, loss_agg_mode: 'seq-mean-token-sum' }, 0.9],
    ['delta=1.1 below 1 + epsilon_high = 1.3', { delta: 1.1, epsilon_high: 0.3 }, 0.9],
    ['gmpo_clip=0.2', { loss_type: 'gmpo', gmpo_clip: 0.2 }],
    ['sapo tau 2 / 3', { loss_type: 'sapo', tau_pos: 2, tau_neg: 3 }, 0.9],
    ['low_var_kl clamped at 10', { beta: 0.1, kl_estimator: 'low_var_kl' }],
    ['top_entropy_quantile=0.5', { top_entropy_quantile: 0.5, beta: 0.05, kl_estimator: 'k2' }],
    [
      'top_entropy_quantile=0.3 sequence',
      { top_entropy_quantile: 0.3, importance_sampling_level: 'sequence', epsilon: 0.05 },
    ],
    ['top_entropy_quantile=0.4 gmpo', { top_entropy_quantile: 0.4, loss_type: 'gmpo' }],
    ['clip_cov', { clip_cov_ratio: 0.2, clip_cov_lb: 0.05, clip_cov_ub: 5 }],
    ['kl_cov', { kl_cov_ratio: 0.2, kl_cov_coef: 1.5, loss_agg_mode: 'seq-mean-token-mean' }],
    ['tis_cap=0.95 cispo', { loss_type: 'cispo', tis_cap: 0.95 }],
    // Rollout correction and the off-policy mask: constant factors of the step, so no gradient flows through them.
    [
      'rollout_is_mode token_truncate [0.9, 1.1]',
      { rollout_is_mode: 'token_truncate', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 },
    ],
    [
      'rollout_is_mode token_mask [0.9, 1.1] cispo',
      { loss_type: 'cispo', rollout_is_mode: 'token_mask', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 },
    ],
    [
      'rollout_is_mode sequence_truncate [0.8, 1.3] sequence',
      {
        rollout_is_mode: 'sequence_truncate',
        rollout_is_clip_min: 0.8,
        rollout_is_clip_max: 1.3,
        importance_sampling_level: 'sequence',
        epsilon: 0.05,
      },
    ],
    [
      'rollout_is_mode sequence_mask [0.7, 1.4] sapo',
      { loss_type: 'sapo', rollout_is_mode: 'sequence_mask', rollout_is_clip_min: 0.7, rollout_is_clip_max: 1.4 },
    ],
    [
      'rollout_is_mode sequence_geo_mask [0.97, 1.03] gmpo',
      { loss_type: 'gmpo', rollout_is_mode: 'sequence_geo_mask', rollout_is_clip_min: 0.97, rollout_is_clip_max: 1.03 },
    ],
    [
      'off_policy_mask_threshold=0.05 + token_mask',
      { off_policy_mask_threshold: 0.05, rollout_is_mode: 'token_mask', rollout_is_clip_max: 1.1, beta: 0.05 },
    ],
  ];
  for (const [name, cfg, spread] of features) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      it(`${name} ${loss_agg_mode}`, () => {
        const inputs = randomInputs(seed++, 4, 6, spread ?? 0.6);
        if (name.startsWith('low_var_kl')) for (let i = 0; i < 8; i++) inputs.refLogp.data[i] = inputs.logp.data[i] + 3; // k3(-3) = 16 > 10
        expectFd(
          name,
          inputs,
          { ...cfg, loss_agg_mode: cfg.loss_agg_mode ?? loss_agg_mode, entropy_coef: 0.02 },
          { ref: true, sampler: true },
        );
      });
    }
  }
});

// ------------------------------------------------------------------------ DPPO's divergence masks and DRO

describe('objective twin: dppo_tv, dppo_kl, dro and vespo gradients match central finite differences', () => {
  let seed = 1200;
  for (const loss_type of ['dppo_tv', 'dppo_kl', 'dro'] as const) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      const s = seed++;
      it(`${loss_type} ${loss_agg_mode}`, () => {
        const inputs = randomInputs(s, 4, 6, 0.9);
        for (let i = 0; i < inputs.oldLogp.data.length; i++)
          inputs.oldLogp.data[i] = Math.min(inputs.oldLogp.data[i], -0.01);
        const config: Partial<ObjectiveConfig> = {
          loss_type,
          loss_agg_mode,
          // Binary KL is about d^2 q / (2 (1 - q)): smaller thresholds than TV's so that some tokens fall outside.
          epsilon: loss_type === 'dppo_kl' ? 0.01 : 0.05,
          epsilon_high: loss_type === 'dppo_kl' ? 0.015 : 0.08,
          clip_ratio_c: 1.3,
          dro_beta: 0.7,
          beta: 0.05,
          kl_estimator: 'k3',
          entropy_coef: 0.02,
          tis_cap: 1.1,
        };
        // DPPO's weight is a stop-gradient of the ratio: move oldLogp (and samplerLogp, for TIS) with logp, as for
        // CISPO. DRO differentiates through its log-ratio: logp alone moves.
        const ins: ObjectiveInputs<T64> = { ...inputs, klExact: undefined };
        const r = run(ins, config);
        const lossOf = () => run(ins, config).loss;
        const linked = loss_type === 'dro' ? [] : [inputs.oldLogp.data, inputs.samplerLogp.data];
        const g = fdGrad(lossOf, inputs.logp.data, linked);
        const c = compareArrays(r.dLogp, g, FD_TOL);
        expect(c.pass, `dLogp: ${c.summary}`).toBe(true);
        if (loss_type !== 'dro') {
          // Some tokens fall outside the divergence region (side != 0) and pass no policy gradient.
          const NL = inputs.logp.data.length;
          let outside = 0;
          for (let i = 0; i < NL; i++) if (inputs.mask.data[i] && r.records[NL + i] !== 0) outside++;
          expect(outside).toBeGreaterThan(0);
        }
      });
    }
  }

  for (const loss_agg_mode of LOSS_AGG_MODES) {
    for (const delta of [null, 1.3]) {
      it(`prime_dppo ${loss_agg_mode} delta ${delta}`, () => {
        const inputs = randomInputs(seed++, 4, 6, 0.9);
        for (let i = 0; i < inputs.samplerLogp.data.length; i++)
          inputs.samplerLogp.data[i] = Math.min(inputs.samplerLogp.data[i], -0.01);
        const config: Partial<ObjectiveConfig> = {
          loss_type: 'prime_dppo',
          loss_agg_mode,
          epsilon: 0.05,
          epsilon_high: 0.08,
          delta,
          adv_tau: 0.8,
          kl_tau: 0.05,
          beta: 0.05,
          kl_estimator: 'k3',
          entropy_coef: 0.02,
        };
        // The ratio is against the sampler (samplerLogp fixed) and passes its gradient: logp alone moves.
        const ins: ObjectiveInputs<T64> = { ...inputs, klExact: undefined };
        const r = run(ins, config);
        const g = fdGrad(() => run(ins, config).loss, inputs.logp.data, []);
        const c = compareArrays(r.dLogp, g, FD_TOL);
        expect(c.pass, `dLogp: ${c.summary}`).toBe(true);
        // Some tokens fall outside the total-variation region (side != 0) and keep only the squared log-ratio.
        const NL = inputs.logp.data.length;
        let outside = 0;
        for (let i = 0; i < NL; i++) if (inputs.mask.data[i] && r.records[NL + i] !== 0) outside++;
        expect(outside).toBeGreaterThan(0);
      });
    }
  }

  for (const loss_agg_mode of LOSS_AGG_MODES) {
    it(`vespo ${loss_agg_mode}`, () => {
      const inputs = randomInputs(seed++, 4, 6, 0.05);
      const config: Partial<ObjectiveConfig> = { loss_type: 'vespo', loss_agg_mode, beta: 0.05, entropy_coef: 0.02 };
      const ins: ObjectiveInputs<T64> = { ...inputs, klExact: undefined, samplerLogp: undefined };
      const r = run(ins, config);
      // phi is a stop-gradient of the sequence ratio: move oldLogp with logp (the ratio stays put).
      const g = fdGrad(() => run(ins, config).loss, inputs.logp.data, [inputs.oldLogp.data]);
      const c = compareArrays(r.dLogp, g, FD_TOL);
      expect(c.pass, `dLogp: ${c.summary}`).toBe(true);
    });
  }

  it('vespo by hand: phi(1) = 1, and the weight of a sequence ratio w is e^lambda w^k e^(-lambda w)', () => {
    // Row 0: log-ratios 0.1 and -0.3 sum to log w = -0.2, A = 1: phi = e^(3 - 0.4 - 3 e^-0.2).
    // Row 1: logp == oldLogp, A = -2: w = 1, phi = 1: l = 2 logp per token.
    const lp = [
      [-1, -0.5],
      [-2, -0.25],
    ];
    const ins: ObjectiveInputs<T64> = {
      logp: t64(lp),
      oldLogp: t64([
        [-1.1, -0.2],
        [-2, -0.25],
      ]),
      advantages: t64([
        [1, 1],
        [-2, -2],
      ]),
      mask: t64([
        [1, 1],
        [1, 1],
      ]),
      entropy: t64([
        [0, 0],
        [0, 0],
      ]),
    };
    const r = run(ins, { loss_type: 'vespo', loss_agg_mode: 'token-mean' });
    const phi0 = Math.exp(3 - 2 * 0.2 - 3 * Math.exp(-0.2));
    expectClose('dLogp', r.dLogp, [-phi0 / 4, -phi0 / 4, 2 / 4, 2 / 4]);
    expect(r.loss).toBeCloseTo((-phi0 * (-1 - 0.5) + 2 * (-2 - 0.25)) / 4, 12);
    expectClose('ratio records', r.records.subarray(0, 4), [Math.exp(-0.2), Math.exp(-0.2), 1, 1]);
  });

  it('dppo_tv by hand: the mask follows the probability gap, the weight is the capped ratio', () => {
    // One token per row. Row 0: p = 0.5, q = 0.4, A = 1: p - q = 0.1 > eps_high 0.08, outside: no loss, side +1.
    // Row 1: p = 0.42, q = 0.4, A = 1: inside; rho = 1.05, weight min(1.05, 1.3) = 1.05, l = -1.05 log 0.42.
    // Row 2: p = 0.3, q = 0.4, A = -1: p - q = -0.1 < -eps 0.05, outside: side -1.
    const lp = [[Math.log(0.5)], [Math.log(0.42)], [Math.log(0.3)]];
    const ins: ObjectiveInputs<T64> = {
      logp: t64(lp),
      oldLogp: t64([[Math.log(0.4)], [Math.log(0.4)], [Math.log(0.4)]]),
      advantages: t64([[1], [1], [-1]]),
      mask: t64([[1], [1], [1]]),
      entropy: t64([[0], [0], [0]]),
    };
    const r = run(ins, { loss_type: 'dppo_tv', epsilon: 0.05, epsilon_high: 0.08, clip_ratio_c: 1.3 });
    expect(r.loss).toBeCloseTo((-1.05 * Math.log(0.42)) / 3, 12);
    expectClose('dLogp', r.dLogp, [0, -1.05 / 3, 0]);
    expectClose('clip sides', r.records.subarray(3, 6), [1, 0, -1]);
    expect(r.metrics['clip_ratio/region_mean']).toBeCloseTo(2 / 3, 12);
  });

  it("vespo takes a token rollout correction into phi's sequence weight (TRL's form) and refuses the sequence modes", () => {
    for (const rollout_is_mode of ROLLOUT_IS_MODES.filter((m) => m.startsWith('sequence')))
      expect(() => resolveObjectiveConfig({ loss_type: 'vespo', rollout_is_mode })).toThrow(
        new RegExp(`rollout_is_mode: loss_type 'vespo' .*'${rollout_is_mode}' is not supported with vespo`),
      );
    // A masked token (its weight 0) takes its whole row's phi to about 0, and no token's loss is multiplied by c:
    // a row with every weight inside the bounds keeps the loss it has without the correction.
    const logp = [-1, -2, -0.5, -1.5];
    const t = (x: number[]) => host(Float64Array.from(x), [2, 2]);
    const ins: ObjectiveInputs<T64> = {
      logp: t(logp),
      oldLogp: t(logp),
      samplerLogp: t([-1, -2.5, -0.5, -1.5]), // row 0's second token: w = e^0.5, outside [0.9, 1.1]
      advantages: t([1, 1, -1, -1]),
      mask: t([1, 1, 1, 1]),
      entropy: t([0, 0, 0, 0]),
    };
    const cfg = { loss_type: 'vespo', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 } as const;
    const masked = run(ins, { ...cfg, rollout_is_mode: 'token_mask' });
    const off = run({ ...ins, samplerLogp: undefined }, { loss_type: 'vespo' });
    expect(masked.records.subarray(0, 2).every((w) => Math.abs(w - 1e-8) < 1e-12)).toBe(true); // w = 1e-8: phi ~ 0
    expectClose('row 1 unchanged', masked.dLogp.subarray(2), Array.from(off.dLogp.subarray(2)));
    // token_truncate: the outside weight becomes 1.1, so log w_0 = log 1.1 and phi = e^3 1.1^2 e^(-3.3).
    const truncated = run(ins, { ...cfg, rollout_is_mode: 'token_truncate' });
    expect(truncated.dLogp[0]).toBeCloseTo(-(Math.exp(3) * 1.1 ** 2 * Math.exp(-3.3)) / 4, 12);
  });

  it('dro needs dro_beta and DPPO / DRO a token-level ratio', () => {
    expect(() => resolveObjectiveConfig({ loss_type: 'dro' })).toThrow(/dro_beta: loss_type 'dro' needs/);
    expect(() => resolveObjectiveConfig({ loss_type: 'dppo_tv', importance_sampling_level: 'sequence' })).toThrow(
      /importance_sampling_level: loss_type 'dppo_tv'/,
    );
  });
});

// ------------------------------------------------------- straight-through KL (k3+) and the unbiased KL correction

describe('objective twin: the unbiased KL correction (use_bias_correction_kl) matches finite differences', () => {
  let seed = 900;
  for (const importance_sampling_level of ['token', 'sequence'] as const) {
    for (const kl_estimator of ['k1', 'k2', 'k3', 'low_var_kl'] as const) {
      for (const loss_agg_mode of LOSS_AGG_MODES) {
        const s = seed++;
        it(`${importance_sampling_level} ${kl_estimator} ${loss_agg_mode}`, () => {
          const eps = importance_sampling_level === 'sequence' ? { epsilon: 0.05, epsilon_high: 0.08 } : {};
          expectFd(
            'unbiased kl',
            randomInputs(s, 3, 5),
            {
              ...eps,
              importance_sampling_level,
              loss_agg_mode,
              beta: 0.07,
              kl_estimator,
              use_bias_correction_kl: true,
              entropy_coef: 0.013,
            },
            { ref: true, sampler: true },
          );
        });
      }
    }
  }

  it('multiplies each token estimate by its ratio (token) or its sequence ratio (sequence)', () => {
    const inputs = randomInputs(950, 3, 5);
    const ins = { ...inputs, klExact: undefined, samplerLogp: undefined };
    const NL = 15;
    for (const importance_sampling_level of ['token', 'sequence'] as const) {
      const base = run(ins, { beta: 0.1, kl_estimator: 'k3', importance_sampling_level });
      const corr = run(ins, { beta: 0.1, kl_estimator: 'k3', importance_sampling_level, use_bias_correction_kl: true });
      let checked = 0;
      for (let i = 0; i < NL; i++) {
        if (!inputs.mask.data[i]) continue;
        const q =
          importance_sampling_level === 'token'
            ? Math.exp(inputs.logp.data[i] - inputs.oldLogp.data[i])
            : base.records[i];
        expect(corr.records[2 * NL + i]).toBeCloseTo(q * base.records[2 * NL + i], 12);
        checked++;
      }
      expect(checked).toBeGreaterThan(3);
    }
  });

  it('with logp == oldLogp (ratio 1) changes the loss by nothing and the gradient by beta k w per token', () => {
    const inputs = randomInputs(951, 3, 5, 0);
    const ins = { ...inputs, klExact: undefined, samplerLogp: undefined };
    const base = run(ins, { beta: 0.1, kl_estimator: 'k3' });
    const corr = run(ins, { beta: 0.1, kl_estimator: 'k3', use_bias_correction_kl: true });
    expect(corr.loss).toBeCloseTo(base.loss, 12);
    const NL = 15;
    for (let i = 0; i < NL; i++) {
      const extra = 0.1 * base.records[2 * NL + i] * base.records[4 * NL + i];
      expect(corr.dLogp[i]).toBeCloseTo(base.dLogp[i] + extra, 12);
    }
  });

  it("refuses kl_estimator 'exact' (its gradient is taken by the full-vocabulary kernel)", () => {
    expect(() => resolveObjectiveConfig({ kl_estimator: 'exact', use_bias_correction_kl: true })).toThrow(
      /use_bias_correction_kl: .*exact/,
    );
  });
});

describe('objective twin: straight-through KL estimators (k1+, k3+, low_var_kl+) take the value of theirs, the gradient of k2', () => {
  for (const [plus, base] of Object.entries(KL_STRAIGHT_THROUGH) as [keyof typeof KL_STRAIGHT_THROUGH, string][]) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      it(`${plus} ${loss_agg_mode}`, () => {
        const inputs = randomInputs(970, 4, 6);
        // Some tokens far from the reference, where k3 and low_var_kl differ (clamp at 10) and k2's gradient is large.
        for (let i = 0; i < 4; i++) inputs.refLogp.data[i] = inputs.logp.data[i] + 3;
        const ins = { ...inputs, klExact: undefined, samplerLogp: undefined };
        const common = { beta: 0.1, loss_agg_mode, entropy_coef: 0.02 };
        const st = run(ins, { ...common, kl_estimator: plus });
        const val = run(ins, { ...common, kl_estimator: base as ObjectiveConfig['kl_estimator'] });
        const grad = run(ins, { ...common, kl_estimator: 'k2' });
        // The value (loss, records, kl metric) is the base estimator's; the gradient is k2's.
        expect(st.loss).toBeCloseTo(val.loss, 12);
        expectClose(`${plus} kl records`, st.records, Array.from(val.records));
        expect(st.metrics.kl).toBeCloseTo(val.metrics.kl, 12);
        expectClose(`${plus} dLogp`, st.dLogp, Array.from(grad.dLogp));
        // And deliberately not the gradient of its own value: finite differences of the loss differ.
        const lossOf = () => run(ins, { ...common, kl_estimator: plus }).loss;
        const fd = fdGrad(lossOf, inputs.logp.data);
        expect(compareArrays(st.dLogp, fd, FD_TOL).pass).toBe(false);
        // k2's gradient itself matches the finite differences of k2's loss (the gradient taken is a true one).
        const fd2 = fdGrad(() => run(ins, { ...common, kl_estimator: 'k2' }).loss, inputs.logp.data);
        expect(compareArrays(grad.dLogp, fd2, FD_TOL).pass).toBe(true);
      });
    }
  }
});

// ------------------------------------------------------------------------------------------ hand-worked cases
//
// Two sequences, L = 3: sequence 0 has 3 tokens, sequence 1 has 2 (its third position is padding).
// logp = [[-1, -2, -0.5], [-1.5, -0.7, pad]]; oldLogp = logp - ln(ratio), so each ratio is exact by construction.

const LP = [
  [-1, -2, -0.5],
  [-1.5, -0.7, 0],
];
const MASK = [
  [1, 1, 1],
  [1, 1, 0],
];
const H = [
  [1.0, 2.0, 0.5],
  [1.5, 0.25, 0],
]; // sum over masked tokens 5.25
const LN2 = Math.log(2);

function handInputs(ratios: number[][], A: number[][], extra: { u?: number[][] } = {}): ObjectiveInputs<T64> {
  const old = LP.map((row, i) => row.map((lp, t) => (MASK[i][t] ? lp - Math.log(ratios[i][t]) : 0)));
  const inputs: ObjectiveInputs<T64> = {
    logp: t64(LP),
    oldLogp: t64(old),
    advantages: t64(A),
    mask: t64(MASK),
    entropy: t64(H),
  };
  // u = logp - refLogp per token.
  if (extra.u) inputs.refLogp = t64(LP.map((row, i) => row.map((lp, t) => lp - extra.u![i][t])));
  return inputs;
}

const RATIOS = [
  [1, 1.5, 0.5],
  [0.5, 1.1, 1],
];
const A_SEQ = [
  [1, 1, 1],
  [-1, -1, 0],
]; // GRPO-style: +1 for sequence 0, -1 for sequence 1
const A_TOK = [
  [0.5, 1.0, -0.5],
  [-1.0, 2.0, 0],
]; // token-level (REINFORCE++ returns, PPO GAE)
const U = [
  [0, LN2, 0],
  [0, 0, 0],
]; // one token 2x likelier under pi_theta than under pi_ref

function expectClose(label: string, got: ArrayLike<number>, want: number[]): void {
  const c = compareArrays(got, want, { atol: 1e-7, rtol: 1e-7 });
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

describe('objective twin: hand-worked presets', () => {
  it('GRPO (DeepSeekMath): ppo_clip eps 0.2, seq-mean-token-mean, k3 KL in the loss with beta 0.04', () => {
    const r = run(handInputs(RATIOS, A_SEQ, { u: U }), preset('grpo'));
    // Per-token l = -min(r A, clip(r, 0.8, 1.2) A):
    //   seq 0 (A = +1): r = 1 -> -1;  r = 1.5 -> -min(1.5, 1.2) = -1.2 (clipped high);  r = 0.5 -> -min(0.5, 0.8) = -0.5
    //   seq 1 (A = -1): r = 0.5 -> -min(-0.5, -0.8) = 0.8 (clipped low);  r = 1.1 -> -min(-1.1, -1.1) = 1.1
    // Weights 1/(N |y_i|): 1/6 for seq 0, 1/4 for seq 1.
    // KL: k3(u = ln 2) = e^-ln2 - 1 + ln2 = 0.5 - 1 + 0.693147 = 0.193147, dk3/du = 1 - e^-u = 0.5.
    const k3 = 0.5 - 1 + LN2;
    const policy = (-1 - 1.2 - 0.5) / 6 + (0.8 + 1.1) / 4; // -0.45 + 0.475 = 0.025
    expect(r.metrics.policy_loss).toBeCloseTo(policy, 12);
    expect(r.loss).toBeCloseTo(policy + (0.04 * k3) / 6, 12); // 0.025 + 0.0012877 = 0.0262877
    // dLogp = w * dl/dr * r (+ w beta dk): unclipped tokens only.
    expectClose('dLogp', r.dLogp, [
      (1 / 6) * -1 * 1, //           -0.166667
      (1 / 6) * 0.04 * 0.5, //        0.003333 (clipped: KL only)
      (1 / 6) * -1 * 0.5, //         -0.083333
      0, //                           clipped low
      (1 / 4) * 1 * 1.1, //           0.275
      0,
    ]);
    expectClose('dEntropy', r.dEntropy, [0, 0, 0, 0, 0, 0]);
    expectClose('ratio', r.records.subarray(0, 6), [1, 1.5, 0.5, 0.5, 1.1, 0]);
    expectClose('clip side', r.records.subarray(6, 12), [0, 1, 0, -1, 0, 0]);
    expectClose('weight', r.records.subarray(24, 30), [1 / 6, 1 / 6, 1 / 6, 1 / 4, 1 / 4, 0]);
    expect(r.metrics['clip_ratio/low_mean']).toBeCloseTo(1 / 5, 12);
    expect(r.metrics['clip_ratio/high_mean']).toBeCloseTo(1 / 5, 12);
    expect(r.metrics['clip_ratio/region_mean']).toBeCloseTo(2 / 5, 12);
    // Per sequence: seq 0 clips 0 of 3 low and 1 of 3 high; seq 1 clips 1 of 2 low and 0 high.
    expect(r.metrics['clip_ratio/low_min']).toBe(0);
    expect(r.metrics['clip_ratio/high_max']).toBeCloseTo(1 / 3, 12);
    expect(r.metrics.kl).toBeCloseTo(k3 / 5, 12); // 0.038629
    expect(r.metrics.entropy).toBeCloseTo(5.25 / 5, 12);
    // approx_kl = mean (r - 1) - ln r: 0 + (0.5 - ln 1.5) + (-0.5 + ln 2) * 2 + (0.1 - ln 1.1), over 5
    expect(r.metrics.approx_kl).toBeCloseTo((0.5 - Math.log(1.5) + 2 * (LN2 - 0.5) + 0.1 - Math.log(1.1)) / 5, 12);
  });

  it('Dr. GRPO: seq-mean-token-sum-norm divides by N * L_max = 2 * 3', () => {
    const r = run(handInputs(RATIOS, A_SEQ), preset('dr_grpo'));
    // Same per-token losses as GRPO; every weight 1/6.
    expect(r.loss).toBeCloseTo((-1 - 1.2 - 0.5 + 0.8 + 1.1) / 6, 12); // -0.8 / 6 = -0.133333
    expectClose('dLogp', r.dLogp, [-1 / 6, 0, -0.5 / 6, 0, 1.1 / 6, 0]);
  });

  it('DAPO: clip-higher 0.2 / 0.28, token-mean', () => {
    const r = run(handInputs(RATIOS, A_SEQ), preset('dapo'));
    // r = 1.5 now clips at 1.28: l = -1.28. Others as GRPO. Weight 1/5 (five tokens).
    expect(r.loss).toBeCloseTo((-1 - 1.28 - 0.5 + 0.8 + 1.1) / 5, 12); // -0.88 / 5 = -0.176
    expectClose('dLogp', r.dLogp, [-1 / 5, 0, -0.5 / 5, 0, 1.1 / 5, 0]); // -0.2, 0, -0.1, 0, 0.22
    expect(r.metrics['clip_ratio/high_mean']).toBeCloseTo(1 / 5, 12);
  });

  it('GSPO: one length-normalized ratio per sequence, eps 3e-4 / 4e-4', () => {
    const r = run(handInputs(RATIOS, A_SEQ), preset('gspo'));
    // s_0 = (1 * 1.5 * 0.5)^(1/3) = 0.75^(1/3) = 0.908560; A = +1: below 1 - 3e-4 but A > 0, so unclipped: l = -s_0.
    // s_1 = (0.5 * 1.1)^(1/2) = 0.741620; A = -1 and s_1 < 0.9997: clipped low, l = 0.9997 for both tokens.
    const s0 = Math.cbrt(0.75);
    const s1 = Math.sqrt(0.55);
    expect(r.loss).toBeCloseTo(0.5 * -s0 + 0.5 * 0.9997, 12); // (-0.908560 + 0.9997) / 2 = 0.045570
    // d loss / d s_0 = sum_t w (-A) = 3 * (1/6) * -1 = -0.5; d s_0 / d logp_t = s_0 / 3. Sequence 1 is clipped.
    const g0 = (-0.5 * s0) / 3; // -0.151427
    expectClose('dLogp', r.dLogp, [g0, g0, g0, 0, 0, 0]);
    expectClose('ratio', r.records.subarray(0, 6), [s0, s0, s0, s1, s1, 0]);
    expect(r.metrics['clip_ratio/low_mean']).toBeCloseTo(2 / 5, 12);
    // Sequence 1 clips as a whole (2 of 2 low), sequence 0 not at all.
    expect(r.metrics['clip_ratio/low_min']).toBe(0);
    expect(r.metrics['clip_ratio/high_max']).toBe(0);
  });

  it('CISPO: -sg(min(r, 5)) A logp, token-mean', () => {
    const r = run(
      handInputs(
        [
          [1, 6, 0.5],
          [0.5, 1.1, 1],
        ],
        A_SEQ,
      ),
      preset('cispo'),
    );
    // l = -min(r, 5) A logp:
    //   seq 0 (A = 1): -1 * -1 = 1;  -5 * -2 = 10 (r = 6 truncated to 5);  -0.5 * -0.5 = 0.25
    //   seq 1 (A = -1): -0.5 * -1 * -1.5 = -0.75;  -1.1 * -1 * -0.7 = -0.77
    expect(r.loss).toBeCloseTo((1 + 10 + 0.25 - 0.75 - 0.77) / 5, 12); // 9.73 / 5 = 1.946
    // dLogp = -min(r, 5) A / 5 (the weight is a constant).
    expectClose('dLogp', r.dLogp, [-1 / 5, -5 / 5, -0.5 / 5, 0.5 / 5, 1.1 / 5, 0]);
    expect(r.metrics.cispo_clip_ratio).toBeCloseTo(1 / 5, 12);
    expect(r.metrics['clip_ratio/region_mean']).toBe(0);
    expect(r.metrics['clip_ratio/high_max']).toBe(0); // CISPO's cap is its own metric, not a high clip
  });

  it('REINFORCE++: ppo_clip token-mean; its KL is in the reward, so beta does not reach the loss', () => {
    const r = run(handInputs(RATIOS, A_TOK, { u: U }), { ...preset('reinforce_pp'), beta: 0.05 });
    // Token advantages [[0.5, 1, -0.5], [-1, 2]]:
    //   r = 1, A = 0.5 -> -0.5;  r = 1.5, A = 1 -> -1.2 (high);  r = 0.5, A = -0.5 -> -min(-0.25, -0.4) = 0.4 (low)
    //   r = 0.5, A = -1 -> 0.8 (low);  r = 1.1, A = 2 -> -2.2
    expect(r.loss).toBeCloseTo((-0.5 - 1.2 + 0.4 + 0.8 - 2.2) / 5, 12); // -2.7 / 5 = -0.54
    expectClose('dLogp', r.dLogp, [(-0.5 * 1) / 5, 0, 0, 0, (-2 * 1.1) / 5, 0]); // -0.1, 0, 0, 0, -0.44
    // The k1 KL is still measured: mean u = ln 2 / 5.
    expect(r.metrics.kl).toBeCloseTo(LN2 / 5, 12);
    expect(r.metrics['clip_ratio/low_mean']).toBeCloseTo(2 / 5, 12);
  });

  it('REINFORCE: -A logp, seq-mean-token-sum, no ratio (so off-policy ratios change nothing)', () => {
    const r = run(handInputs(RATIOS, A_SEQ), preset('reinforce'));
    // l = -A logp: seq 0 (A = 1): 1, 2, 0.5 (sum 3.5); seq 1 (A = -1): -1.5, -0.7 (sum -2.2). Weight 1/N = 1/2.
    expect(r.loss).toBeCloseTo((3.5 - 2.2) / 2, 12); // 0.65
    // dLogp = -A / 2 at every valid token, whatever the ratio.
    expectClose('dLogp', r.dLogp, [-0.5, -0.5, -0.5, 0.5, 0.5, 0]);
    expect(r.metrics['clip_ratio/region_mean']).toBe(0);
  });

  it('RLOO: ppo_clip, seq-mean-token-mean, leave-one-out advantages +-0.5', () => {
    const r = run(
      handInputs(RATIOS, [
        [0.5, 0.5, 0.5],
        [-0.5, -0.5, 0],
      ]),
      preset('rloo'),
    );
    // Half of GRPO's policy losses: seq 0: -0.5, -0.6, -0.25; seq 1: 0.4, 0.55.
    expect(r.loss).toBeCloseTo((-0.5 - 0.6 - 0.25) / 6 + (0.4 + 0.55) / 4, 12); // -0.225 + 0.2375 = 0.0125
    expectClose('dLogp', r.dLogp, [-0.5 / 6, 0, (-0.5 * 0.5) / 6, 0, (0.5 * 1.1) / 4, 0]);
  });

  it('PPO policy part: token-mean, dual clip c = 3, entropy bonus 0.01', () => {
    const r = run(
      handInputs(
        [
          [1, 1.5, 4],
          [0.5, 1.1, 1],
        ],
        A_TOK,
      ),
      { ...preset('ppo'), clip_ratio_c: 3, entropy_coef: 0.01 },
    );
    //   r = 1, A = 0.5 -> -0.5;  r = 1.5, A = 1 -> -1.2 (high)
    //   r = 4, A = -0.5: -min(-2, -0.6) = 2, then dual clip min(2, -3 * -0.5 = 1.5) = 1.5 (no gradient)
    //   r = 0.5, A = -1 -> 0.8 (low);  r = 1.1, A = 2 -> -2.2
    const policy = (-0.5 - 1.2 + 1.5 + 0.8 - 2.2) / 5; // -1.6 / 5 = -0.32
    expect(r.metrics.policy_loss).toBeCloseTo(policy, 12);
    expect(r.loss).toBeCloseTo(policy - (0.01 * 5.25) / 5, 12); // -0.32 - 0.0105 = -0.3305
    expectClose('dLogp', r.dLogp, [-0.5 / 5, 0, 0, 0, -2.2 / 5, 0]);
    expectClose('dEntropy', r.dEntropy, [-0.002, -0.002, -0.002, -0.002, -0.002, 0]);
    expectClose('clip side', r.records.subarray(6, 12), [0, 1, 0, -1, 0, 0]); // the dual-clipped token is neither side
  });

  it('top_entropy_quantile 0.5 keeps the 5 - ceil(0.5 * 4) = 3 highest entropies', () => {
    const cfg = { ...preset('rloo'), top_entropy_quantile: 0.5 };
    const r = run(handInputs(RATIOS, A_SEQ), cfg);
    // Entropies 1.0, 2.0, 0.5 | 1.5, 0.25: kept 2.0, 1.5, 1.0 -> tokens (0,0), (0,1), (1,0); the others lose their
    // policy loss but keep their weights (GRPO losses -1, -1.2 | 0.8).
    expect(r.loss).toBeCloseTo((-1 - 1.2) / 6 + 0.8 / 4, 12); // -0.366667 + 0.2 = -0.166667
    expectClose('dLogp', r.dLogp, [-1 / 6, 0, 0, 0, 0, 0]);
    expect(r.metrics['token_selection/entropy_kept_frac']).toBeCloseTo(3 / 5, 12);
  });

  it('clip_cov detaches the largest-covariance unclipped token; kl_cov penalizes it', () => {
    // One sequence of 4: A = [2, 0, 0, -2] (mean 0), logp = [-1, -2, -3, -5] (mean -2.75):
    // cov = (A - 0)(logp + 2.75) = [3.5, 0, 0, 4.5]. k = max(floor(0.25 * 4), 1) = 1.
    const lp = [[-1, -2, -3, -5]];
    const A = [[2, 0, 0, -2]];
    const mk = (r3: number): ObjectiveInputs<T64> => ({
      logp: t64(lp),
      oldLogp: t64([[-1, -2, -3, -5 - Math.log(r3)]]),
      advantages: t64(A),
      mask: t64([[1, 1, 1, 1]]),
      entropy: t64([[1, 1, 1, 1]]),
    });
    const plan = (cfg: Partial<ObjectiveConfig>, inputs: ObjectiveInputs<T64>) =>
      objectivePlan('t', inputs, resolveObjectiveConfig(cfg), (t) => t.shape);
    const clipCov = { clip_cov_ratio: 0.25, clip_cov_lb: 1, clip_cov_ub: 5 };
    // Token 3 has r = 1.1 (unclipped) and the largest cov 4.5: detached.
    const a = mk(1.1);
    expect(Array.from(objectiveSelection(a, plan(clipCov, a)).flags)).toEqual([1, 1, 1, 3]);
    const ra = run(a, clipCov);
    // Policy losses: -2 (r = 1, A = 2), 0, 0, detached -> loss (-2) / 4.
    expect(ra.loss).toBeCloseTo(-2 / 4, 12);
    expectClose('dLogp', ra.dLogp, [-2 / 4, 0, 0, 0]);
    // With r = 0.5 token 3 is clipped low (A < 0): not a candidate, so token 0 (cov 3.5) is detached instead.
    const b = mk(0.5);
    expect(Array.from(objectiveSelection(b, plan(clipCov, b)).flags)).toEqual([3, 1, 1, 1]);
    // kl_cov: token 3 gets + 1.5 |d| = 1.5 ln 1.1 on top of its ppo_clip loss -min(-2.2, -2.2) = 2.2.
    const klCov = { kl_cov_ratio: 0.25, kl_cov_coef: 1.5 };
    const rc = run(a, klCov);
    expect(rc.loss).toBeCloseTo((-2 + 2.2 + 1.5 * Math.log(1.1)) / 4, 12);
    // d/dlogp of token 3: (-A r + 1.5 sign(d)) / 4 = (2.2 + 1.5) / 4.
    expectClose('dLogp', rc.dLogp, [-2 / 4, 0, 0, (2.2 + 1.5) / 4]);
    expect(rc.metrics['token_selection/cov_selected_frac']).toBeCloseTo(1 / 4, 12);
  });

  it('truncated IS: the policy loss is scaled by min(pi_old / pi_sampler, C); the gap is reported either way', () => {
    const inputs = handInputs(RATIOS, A_SEQ);
    // Sampler log-probs: oldLogp - [[ln 2, 0, -ln 2], [0.1, 0, pad]]: weights exp(gap) = 2 -> capped 1.5, 1, 0.5 | e^0.1, 1.
    const gap = [
      [LN2, 0, -LN2],
      [0.1, 0, 0],
    ];
    inputs.samplerLogp = host(
      inputs.oldLogp.data.map((x, i) => x - gap.flat()[i]),
      [2, 3],
    );
    const r = run(inputs, { ...preset('dapo'), epsilon_high: 0.2, tis_cap: 1.5 });
    // Token-mean of c * l: 1.5 * -1 + 1 * -1.2 + 0.5 * -0.5 + e^0.1 * 0.8 + 1 * 1.1.
    expect(r.loss).toBeCloseTo((-1.5 - 1.2 - 0.25 + Math.exp(0.1) * 0.8 + 1.1) / 5, 12);
    expectClose('dLogp', r.dLogp, [(1.5 * -1) / 5, 0, (0.5 * -0.5) / 5, 0, 1.1 / 5, 0]);
    expect(r.metrics['sampling/sampling_logp_difference/mean']).toBeCloseTo((LN2 + 0 + LN2 + 0.1 + 0) / 5, 12);
    expect(r.metrics['sampling/sampling_logp_difference/max']).toBeCloseTo(LN2, 12);
  });
});

// ------------------------------------------------------------------------- per-sequence clip fractions

describe('objective twin: per-sequence clip fractions (clip_ratio/low_min, clip_ratio/high_max)', () => {
  it('by hand: the min and max over sequences with masked tokens; a sequence without any is skipped', () => {
    // Three sequences, L = 3; the last has no masked token (its values are garbage that must not count).
    //   seq 0: ratios 0.5, 1.5, 1 with A = -1, 1, 1 -> sides -1, +1, 0: low 1/3, high 1/3
    //   seq 1: ratios 0.5, 2 with A = -1, 1 (third token masked) -> sides -1, +1: low 1/2, high 1/2
    const lp = [
      [-1, -2, -0.5],
      [-1.5, -0.7, 50],
      [50, 50, 50],
    ];
    const ratio = [
      [0.5, 1.5, 1],
      [0.5, 2, 1],
      [1, 1, 1],
    ];
    const inputs: ObjectiveInputs<T64> = {
      logp: t64(lp),
      oldLogp: t64(lp.map((row, i) => row.map((x, t) => x - Math.log(ratio[i][t])))),
      advantages: t64([
        [-1, 1, 1],
        [-1, 1, -1],
        [-1, -1, -1],
      ]),
      mask: t64([
        [1, 1, 1],
        [1, 1, 0],
        [0, 0, 0],
      ]),
      entropy: t64([
        [1, 1, 1],
        [1, 1, 1],
        [1, 1, 1],
      ]),
    };
    const r = run(inputs, {} /* ppo_clip, epsilon 0.2 */);
    expect(r.metrics['clip_ratio/low_mean']).toBeCloseTo(2 / 5, 12);
    expect(r.metrics['clip_ratio/high_mean']).toBeCloseTo(2 / 5, 12);
    expect(r.metrics['clip_ratio/low_min']).toBeCloseTo(1 / 3, 12); // the empty sequence would make it 0
    expect(r.metrics['clip_ratio/high_max']).toBeCloseTo(1 / 2, 12);
    // No masked token anywhere: both are 0.
    const none = run(
      {
        ...inputs,
        mask: t64([
          [0, 0, 0],
          [0, 0, 0],
          [0, 0, 0],
        ]),
      },
      {},
    );
    expect([none.metrics['clip_ratio/low_min'], none.metrics['clip_ratio/high_max']]).toEqual([0, 0]);
  });

  for (const [name, cfg, opts] of [
    ['ppo_clip, a low clip in every sequence', { epsilon_high: 0.28 }, { spread: 0.9, lowClipEveryRow: true }],
    [
      'ppo_clip sequence level',
      { importance_sampling_level: 'sequence', epsilon: 0.05, epsilon_high: 0.08 },
      { spread: 0.6 },
    ],
    ['gmpo', { loss_type: 'gmpo', gmpo_clip: 0.2 }, { spread: 0.6 }],
  ] as const) {
    it(`${name}: equal to the fractions of the records' clip sides per sequence, skipping the empty one`, () => {
      const N = 6;
      const L = 9;
      const [logp, oldLogp, advantages, mask, entropy] = randomObjectiveInputs(new Rng(11), N, L, {
        ...opts,
        emptyRow: 2,
      }).map((h) => host(Float64Array.from(h.data), h.shape));
      const r = run({ logp, oldLogp, advantages, mask, entropy }, cfg);
      const low: number[] = [];
      const high: number[] = [];
      for (let i = 0; i < N; i++) {
        let n = 0;
        let lo = 0;
        let hi = 0;
        for (let t = 0; t < L; t++) {
          if (!mask.data[i * L + t]) continue;
          const side = r.records[N * L + i * L + t];
          n++;
          lo += side < 0 ? 1 : 0;
          hi += side > 0 ? 1 : 0;
        }
        if (n === 0) continue;
        low.push(lo / n);
        high.push(hi / n);
      }
      expect(low.length).toBeLessThan(N); // row 2 at least is empty
      expect(r.metrics['clip_ratio/low_min']).toBe(Math.min(...low));
      expect(r.metrics['clip_ratio/high_max']).toBe(Math.max(...high));
      expect(r.metrics['clip_ratio/low_min']).toBeLessThanOrEqual(r.metrics['clip_ratio/low_mean']);
      expect(r.metrics['clip_ratio/high_max']).toBeGreaterThanOrEqual(r.metrics['clip_ratio/high_mean']);
      if (name.includes('every sequence')) expect(r.metrics['clip_ratio/low_min']).toBeGreaterThan(0);
      expect(r.metrics['clip_ratio/high_max']).toBeGreaterThan(0);
    });
  }
});

// ------------------------------------------------------------------------------------- ratio exactly one

describe('objective twin: logp == oldLogp (one update per batch) gives ratio 1 exactly', () => {
  for (const lv of LEVELS) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      it(`${lv.loss_type} ${lv.importance_sampling_level} ${loss_agg_mode}: nothing clips, dLogp = -A * weight`, () => {
        // Per-sequence advantages, so that the sequence-level gradient (sum_t w (-A)) s / |y| is also -A w.
        const inputs = randomInputs(7, 4, 9, 0, true);
        const r = run(inputs, { ...lv, loss_agg_mode, epsilon: 3e-4, epsilon_high: 4e-4, eps_max: 1 });
        const NL = 36;
        for (let i = 0; i < NL; i++) {
          if (!inputs.mask.data[i]) continue;
          expect(r.records[i]).toBe(1); // exp(0) and exp(0 / n)
          const w = r.records[4 * NL + i];
          const want = -inputs.advantages.data[i] * w;
          expect(Math.abs(r.dLogp[i] - want), `token ${i}`).toBeLessThan(1e-15 + 1e-12 * Math.abs(want));
        }
        for (const m of [
          'clip_ratio/low_mean',
          'clip_ratio/high_mean',
          'clip_ratio/region_mean',
          'clip_ratio/low_min',
          'clip_ratio/high_max',
          'cispo_clip_ratio',
          'approx_kl',
        ] as const) {
          expect(r.metrics[m], m).toBe(0);
        }
      });
    }
  }
});

// -------------------------------------------------------------------------------------------- config

describe('objective config', () => {
  it('fills defaults; epsilon_high follows epsilon unless given', () => {
    expect(resolveObjectiveConfig()).toEqual(DEFAULT_OBJECTIVE_CONFIG);
    expect(epsilonHigh(resolveObjectiveConfig({ epsilon: 0.1 }))).toBe(0.1);
    expect(epsilonHigh(resolveObjectiveConfig({ epsilon: 0.1, epsilon_high: 0.3 }))).toBe(0.3);
    expect(resolveObjectiveConfig({ delta: null }).delta).toBeNull();
  });

  it("every preset's objective part resolves on its own", () => {
    for (const name of PRESET_NAMES) expect(() => resolveObjectiveConfig(preset(name)), name).not.toThrow();
  });

  it.each([
    [
      { loss_type: 'ppo' },
      /loss_type: must be one of ppo_clip, cispo, gmpo, sapo, pg, dppo_tv, dppo_kl, dro, vespo, prime_dppo; got "ppo"/,
    ],
    [{ epsilon: 1 }, /epsilon: must be in \[0, 1\), got 1/],
    [{ epsilon: Number.NaN }, /epsilon: must be a number in \[0, 1\), got NaN/],
    [{ clip_ratio_c: 1 }, /clip_ratio_c: must be in \(1, 100\]/],
    [{ delta: 0.9 }, /delta: must be in \(1, 100\]/],
    [{ beta: -0.1 }, /beta: must be in \[0, 10\]/],
    [{ top_entropy_quantile: 1.5 }, /top_entropy_quantile: must be in \[0, 1\]/],
    [
      { loss_type: 'gmpo', importance_sampling_level: 'sequence' },
      /importance_sampling_level: loss_type 'gmpo' forms its own sequence ratio/,
    ],
    [{ clip_cov_ratio: 0.1, kl_cov_ratio: 0.1 }, /cannot both be on/],
    [{ kl_cov_ratio: 0.1, loss_type: 'cispo' }, /kl_cov_ratio: covariance token selection needs loss_type 'ppo_clip'/],
    [{ clip_cov_lb: 5, clip_cov_ub: 1 }, /clip_cov_lb: must be below clip_cov_ub/],
    [{ epsilon_low: 0.2 }, /unknown field epsilon_low/],
  ])('rejects %j', (input, message) => {
    expect(() => resolveObjectiveConfig(input as Partial<ObjectiveConfig>)).toThrow(message);
  });

  it('the twin checks shapes, masks and required inputs', () => {
    const inputs = randomInputs(3, 2, 3);
    const base: ObjectiveInputs<T64> = {
      logp: inputs.logp,
      oldLogp: inputs.oldLogp,
      advantages: inputs.advantages,
      mask: inputs.mask,
      entropy: inputs.entropy,
    };
    expect(() => run(base, { beta: 0.1 })).toThrow(/needs refLogp/);
    expect(() => run(base, { tis_cap: 2 })).toThrow(/tis_cap needs samplerLogp/);
    expect(() => run({ ...base, entropy: t64([[1, 2]]) }, {})).toThrow(/entropy must be \(N, L\) = \(2, 3\)/);
    expect(() =>
      run(
        {
          ...base,
          mask: t64([
            [1, 0.5, 0],
            [1, 1, 1],
          ]),
        },
        {},
      ),
    ).toThrow(/mask must be 0 or 1/);
  });

  it('metric records leave out what was not measured', () => {
    const inputs = randomInputs(3, 2, 3);
    const plan = objectivePlan(
      't',
      {
        logp: inputs.logp,
        oldLogp: inputs.oldLogp,
        advantages: inputs.advantages,
        mask: inputs.mask,
        entropy: inputs.entropy,
      },
      DEFAULT_OBJECTIVE_CONFIG,
      (t) => t.shape,
    );
    const rec = objectiveMetricRecord(new Float64Array(K).fill(0.5), plan);
    expect(Object.keys(rec).sort()).toEqual([
      'approx_kl',
      'clip_ratio/high_max',
      'clip_ratio/high_mean',
      'clip_ratio/low_mean',
      'clip_ratio/low_min',
      'clip_ratio/region_mean',
      'entropy',
      'policy_loss',
    ]);
  });
});
