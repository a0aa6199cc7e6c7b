// GPU-vs-twin tier for the objective family (shaders/objective.wgsl against src/reference/objective.ts): every
// case of objective.cases.ts, plus determinism (two runs bit-identical), the wrapper's checks, and the trainers' own
// formulas (verl's k3+, dppo_tv, dppo_kl and dro, TRL's use_bias_correction_kl and vespo) from reference/fixtures/trainer-formulas.json. A missing
// adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import { OBJECTIVE_METRICS, objectiveForwardBackward as refObjective } from '../reference/objective';
import { host, type HostTensor } from '../core/host-tensor';
import { Rng } from '../core/random';
import { objectiveForwardBackward, objectiveLayout } from './objective';
import { objectiveCases, pickInputs, randomObjectiveInputs } from './objective.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { resolveObjectiveConfig, type KlEstimator, type ObjectiveConfig } from '../schema/objective';
import { compareArrays } from '../reference/compare';
import trainerFormulas from '../reference/fixtures/trainer-formulas.json';
import estimatorPeers from '../reference/fixtures/estimator-peers.json';

const gpu = useNodeDevice();

const cases = objectiveCases();

describe('objective on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.family))).toEqual(new Set(['objective']));
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(100);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

describe('objective wrapper', () => {
  it('spreads long rows over lanes', () => {
    expect(objectiveLayout(8, 33)).toEqual({ LANES: 4, ROWS: 16 });
    expect(objectiveLayout(2, 300)).toEqual({ LANES: 16, ROWS: 4 });
    expect(objectiveLayout(2, 700)).toEqual({ LANES: 64, ROWS: 1 });
    expect(objectiveLayout(1, 2000)).toEqual({ LANES: 64, ROWS: 1 });
    expect(objectiveLayout(4096, 512)).toEqual({ LANES: 1, ROWS: 64 });
  });

  it('is deterministic: two runs with a token selection are bit-identical', async () => {
    const N = 16;
    const L = 70;
    const ins = randomObjectiveInputs(new Rng(7), N, L).map((h, i) =>
      gpu.ctx.fromArray(h.data, h.shape, { label: `det:in${i}` }),
    );
    const cfg = { kl_cov_ratio: 0.1, top_entropy_quantile: 0.5, beta: 0.04 } as const;
    const run = async () => {
      const outs = [[1], [N, L], [N, L], [5, N, L], [OBJECTIVE_METRICS.length]].map((s, i) =>
        gpu.ctx.tensor(s, { label: `det:out${i}` }),
      );
      const rec = gpu.ctx.recorder('objective determinism');
      objectiveForwardBackward(
        rec,
        outs[0],
        outs[1],
        outs[2],
        outs[3],
        outs[4],
        pickInputs(ins, { ref: true }),
        resolveObjectiveConfig(cfg),
      );
      rec.submit();
      const got = await gpu.ctx.readMany(outs);
      for (const t of outs) t.destroy();
      return got;
    };
    const a = await run();
    const b = await run();
    for (const t of ins) t.destroy();
    a.forEach((x, i) => expect(Array.from(b[i]), `output ${i}`).toEqual(Array.from(x)));
  });

  it('checks shapes and required inputs before recording', () => {
    const t = (s: number[]) => gpu.ctx.tensor(s, { label: 'chk' });
    const [lp, old, adv, mask, ent] = [t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3])];
    const inputs = { logp: lp, oldLogp: old, advantages: adv, mask, entropy: ent };
    const rec = gpu.ctx.recorder('objective checks');
    const outs = [t([1]), t([2, 3]), t([2, 3]), t([5, 2, 3]), t([OBJECTIVE_METRICS.length])] as const;
    const call = (over: object, cfg: Partial<ObjectiveConfig> = {}) =>
      objectiveForwardBackward(
        rec,
        outs[0],
        outs[1],
        outs[2],
        outs[3],
        outs[4],
        { ...inputs, ...over },
        resolveObjectiveConfig(cfg),
      );
    expect(() => call({ mask: t([3, 2]) })).toThrow(/mask must be \(N, L\) = \(2, 3\)/);
    expect(() => call({}, { beta: 0.1 })).toThrow(/needs refLogp/);
    expect(() => call({}, { beta: 0.1, kl_estimator: 'exact' })).toThrow(/needs klExact/);
    expect(() => call({}, { tis_cap: 2 })).toThrow(/tis_cap needs samplerLogp/);
    expect(() => call({}, { epsilon: 1.5 })).toThrow(/epsilon: must be in \[0, 1\)/);
    expect(() => objectiveForwardBackward(rec, outs[0], t([2, 2]), outs[2], outs[3], outs[4], inputs)).toThrow(/dLogp/);
    rec.submit();
  });
});

// The GPU objective against the trainers' own formulas (src/reference/fixtures/trainer-formulas.json, computed by
// functions transcribed from verl and TRL): verl's straight-through KL and TRL's bias-corrected KL, each alone in
// the loss (beta 1, A = 0, no entropy bonus, token-mean), so dLogp is the KL's gradient over the token count.
describe("objective on the GPU matches the trainers' KL formulas", () => {
  const F32 = { atol: 2e-6, rtol: 2e-5 };
  async function klOnGpu(
    rows: {
      logp: number[][];
      old: number[][];
      ref: number[][];
      mask: number[][];
      adv?: number[][];
      sampler?: number[][];
    },
    cfg: Partial<ObjectiveConfig>,
  ) {
    const N = rows.logp.length;
    const L = rows.logp[0].length;
    const up = (x: number[][], name: string) =>
      gpu.ctx.fromArray(Float32Array.from(x.flat()), [N, L], { label: `trainer-kl:${name}` });
    const zeros = rows.logp.map((r) => r.map(() => 0));
    const ins = {
      logp: up(rows.logp, 'logp'),
      oldLogp: up(rows.old, 'old'),
      advantages: up(rows.adv ?? zeros, 'adv'),
      mask: up(rows.mask, 'mask'),
      entropy: up(zeros, 'ent'),
      refLogp: up(rows.ref, 'ref'),
      ...(rows.sampler ? { samplerLogp: up(rows.sampler, 'sampler') } : {}),
    };
    const outs = [[1], [N, L], [N, L], [5, N, L], [OBJECTIVE_METRICS.length]].map((s, i) =>
      gpu.ctx.tensor(s, { label: `trainer-kl:out${i}` }),
    );
    const rec = gpu.ctx.recorder('objective trainer kl');
    objectiveForwardBackward(
      rec,
      outs[0],
      outs[1],
      outs[2],
      outs[3],
      outs[4],
      ins,
      resolveObjectiveConfig({ beta: 1, loss_agg_mode: 'token-mean', ...cfg }),
    );
    rec.submit();
    const [loss, dLogp, , records] = await gpu.ctx.readMany(outs);
    for (const t of [...outs, ...Object.values(ins)]) t.destroy();
    return {
      loss: loss[0],
      dLogp,
      kl: records.subarray(2 * N * L, 3 * N * L),
      sides: records.subarray(N * L, 2 * N * L),
    };
  }
  const close = (label: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
    const c = compareArrays(got, want, F32);
    expect(c.pass, `${label}: ${c.summary}`).toBe(true);
  };

  const LAB_OF_VERL: Record<string, KlEstimator> = { 'k1+': 'k1+', 'k3+': 'low_var_kl+', 'low_var_kl+': 'low_var_kl+' };
  for (const c of trainerFormulas.verl_kl_penalty) {
    it(`verl ${c.verl_name} (the lab's ${LAB_OF_VERL[c.verl_name]})`, async () => {
      const n = c.logprob.length;
      const r = await klOnGpu(
        { logp: [c.logprob], old: [c.logprob], ref: [c.ref_logprob], mask: [c.logprob.map(() => 1)] },
        { kl_estimator: LAB_OF_VERL[c.verl_name] },
      );
      close('kl records', r.kl, c.value);
      close(
        'dLogp',
        r.dLogp,
        c.grad.map((g) => g / n),
      );
    });
  }
  for (const c of trainerFormulas.verl_policy_loss) {
    it(`verl ${c.loss_mode} policy loss`, async () => {
      const cfg = c.config as {
        clip_ratio_low?: number;
        clip_ratio_high?: number;
        clip_ratio_c?: number;
        dro_beta?: number;
      };
      const r = await klOnGpu(
        { logp: c.log_prob, old: c.old_log_prob, ref: c.log_prob, mask: c.response_mask, adv: c.advantages },
        {
          beta: 0,
          loss_type: c.loss_mode as 'dppo_tv' | 'dppo_kl' | 'dro',
          epsilon: cfg.clip_ratio_low ?? 0.2,
          epsilon_high: cfg.clip_ratio_high ?? null,
          clip_ratio_c: cfg.clip_ratio_c ?? null,
          dro_beta: cfg.dro_beta ?? null,
        },
      );
      close('loss', [r.loss], [c.pg_loss]);
      close('dLogp', r.dLogp, c.grad.flat());
      const outside = Array.from(r.sides).filter((x) => x !== 0).length;
      const M = c.response_mask.flat().reduce((a, b) => a + b, 0);
      expect(outside / M).toBeCloseTo(c.pg_clipfrac, 6);
    });
  }
  // prime-rl's default_loss_fn, run on these inputs (fixtures/estimator-peers.json): the ratio is to the sampler.
  for (const c of estimatorPeers.prime_default_loss) {
    it(`prime-rl default loss (prime_dppo), adv_tau ${c.config.adv_tau}, kl_tau ${c.config.kl_tau}`, async () => {
      const r = await klOnGpu(
        {
          logp: c.trainer_logprobs,
          old: c.trainer_logprobs,
          ref: c.trainer_logprobs,
          mask: c.mask,
          adv: c.advantages,
          sampler: c.inference_logprobs,
        },
        {
          beta: 0,
          loss_type: 'prime_dppo',
          epsilon: c.config.dppo_mask_low,
          epsilon_high: c.config.dppo_mask_high,
          adv_tau: c.config.adv_tau,
          kl_tau: c.config.kl_tau,
        },
      );
      close('loss', [r.loss], [c.loss]);
      close('dLogp', r.dLogp, c.grad.flat());
    });
  }
  // TRL's vespo with a token rollout correction inside its sequence weight (fixtures/estimator-peers.json).
  for (const c of estimatorPeers.trl_vespo_token_is) {
    it(`TRL vespo with ${c.mode} [${c.clip_min}, ${c.clip_max}]`, async () => {
      const r = await klOnGpu(
        {
          logp: c.logp,
          old: c.old_logp,
          ref: c.logp,
          mask: c.mask,
          adv: c.advantages.map(([a]) => c.logp[0].map(() => a)),
          sampler: c.sampling_logp,
        },
        {
          beta: 0,
          loss_type: 'vespo',
          rollout_is_mode: c.mode as 'token_truncate' | 'token_mask',
          rollout_is_clip_min: c.clip_min,
          rollout_is_clip_max: c.clip_max,
        },
      );
      close('loss', [r.loss], [c.loss]);
      close('dLogp', r.dLogp, c.grad.flat());
    });
  }
  for (const c of trainerFormulas.trl_vespo) {
    it('TRL vespo policy loss', async () => {
      const r = await klOnGpu(
        {
          logp: c.logp,
          old: c.old_logp,
          ref: c.logp,
          mask: c.mask,
          adv: c.advantages.map(([a]) => c.logp[0].map(() => a)),
        },
        {
          beta: 0,
          loss_type: 'vespo',
          vespo_k_pos: c.params.k_pos,
          vespo_lambda_pos: c.params.lambda_pos,
          vespo_k_neg: c.params.k_neg,
          vespo_lambda_neg: c.params.lambda_neg,
        },
      );
      close('loss', [r.loss], [c.loss]);
      close('dLogp', r.dLogp, c.grad.flat());
    });
  }
  for (const c of trainerFormulas.trl_use_bias_correction_kl) {
    it(`TRL use_bias_correction_kl, ${c.importance_sampling_level} ratio`, async () => {
      const r = await klOnGpu(
        { logp: c.logp, old: c.old_logp, ref: c.ref_logp, mask: c.mask },
        {
          kl_estimator: 'k3',
          use_bias_correction_kl: true,
          importance_sampling_level: c.importance_sampling_level as 'token' | 'sequence',
        },
      );
      close('loss', [r.loss], [c.loss]);
      close('per-token kl', r.kl, c.per_token_kl.flat());
      close('dLogp', r.dLogp, c.grad.flat());
    });
  }
});

// Gradient accumulation: a minibatch's rows split into micro-batches, each call given the minibatch's totals (rows,
// masked tokens). The GPU follows the twin on each micro-batch, and the micro-batches' losses, gradients, records
// and token-mean metrics add up to the whole minibatch's (the twin's, in double precision, so only f32 rounding of
// the results separates them).
describe('objective with the minibatch totals of a micro-batch', () => {
  const N = 9;
  const L = 13;
  /** The max / min metrics, each the call's own (the learner combines them); the others are shares that add up. */
  const EXTREME = /[_/](max|min)$/;
  const parts = [
    [0, 4],
    [4, 9],
  ] as const;
  const rowsOf = (h: HostTensor, [a, b]: readonly [number, number]) =>
    host(Float32Array.from(h.data.subarray(a * L, b * L)), [b - a, L]);
  const outsHost = (n: number) => [
    host(new Float32Array(1), [1]),
    host(new Float32Array(n * L), [n, L]),
    host(new Float32Array(n * L), [n, L]),
    host(new Float32Array(5 * n * L), [5, n, L]),
    host(new Float32Array(OBJECTIVE_METRICS.length), [OBJECTIVE_METRICS.length]),
  ];
  const close = (label: string, got: ArrayLike<number>, want: ArrayLike<number>, tol = { atol: 2e-6, rtol: 1e-4 }) => {
    const r = compareArrays(got, want, tol);
    expect(r.pass, `${label}: ${r.summary}`).toBe(true);
  };
  for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const)
    it(`${agg}: the GPU follows the twin, and the micro-batches add up to the minibatch`, async () => {
      const all = randomObjectiveInputs(new Rng(31), N, L);
      const cfg = resolveObjectiveConfig({ loss_agg_mode: agg, beta: 0.05, entropy_coef: 0.02, tis_cap: 2 });
      const use = { ref: true, sampler: true };
      const whole = outsHost(N);
      refObjective(whole[0], whole[1], whole[2], whole[3], whole[4], pickInputs(all, use), cfg);
      let tokens = 0;
      for (let i = 0; i < N * L; i++) tokens += all[3].data[i];
      const totals = { rows: N, tokens };
      let loss = 0;
      const metricSum = new Float64Array(OBJECTIVE_METRICS.length);
      for (const part of parts) {
        const n = part[1] - part[0];
        const ins = all.map((h) => rowsOf(h, part));
        const twin = outsHost(n);
        refObjective(twin[0], twin[1], twin[2], twin[3], twin[4], pickInputs(ins, use), cfg, totals);
        const dev = ins.map((h, i) => gpu.ctx.fromArray(h.data, h.shape, { label: `agg:in${i}` }));
        const outs = twin.map((h, i) => gpu.ctx.tensor(h.shape, { label: `agg:out${i}` }));
        const rec = gpu.ctx.recorder('objective totals');
        objectiveForwardBackward(rec, outs[0], outs[1], outs[2], outs[3], outs[4], pickInputs(dev, use), cfg, totals);
        rec.submit();
        const got = await gpu.ctx.readMany(outs);
        for (const t of [...dev, ...outs]) t.destroy();
        ['loss', 'dLogp', 'dEntropy', 'records', 'metrics'].forEach((name, i) =>
          close(`${agg} rows ${part}: GPU ${name}`, got[i], twin[i].data),
        );
        // The micro-batch's gradients, records are the minibatch's rows' own.
        const at = (h: HostTensor, plane: number, size: number) =>
          h.data.subarray(plane * size + part[0] * L, plane * size + part[1] * L);
        close(`${agg} rows ${part}: dLogp`, twin[1].data, at(whole[1], 0, N * L), { atol: 1e-9, rtol: 1e-6 });
        for (let p = 0; p < 5; p++)
          close(
            `${agg} rows ${part}: record ${p}`,
            twin[3].data.subarray(p * n * L, (p + 1) * n * L),
            at(whole[3], p, N * L),
            {
              atol: 1e-9,
              rtol: 1e-6,
            },
          );
        loss += twin[0].data[0];
        twin[4].data.forEach((v, j) => (metricSum[j] += v));
      }
      close(`${agg}: summed loss`, [loss], whole[0].data, { atol: 1e-7, rtol: 1e-6 });
      const summed = OBJECTIVE_METRICS.map((name, j) => (EXTREME.test(name) ? 0 : metricSum[j]));
      const want = OBJECTIVE_METRICS.map((name, j) => (EXTREME.test(name) ? 0 : whole[4].data[j]));
      close(`${agg}: summed metrics`, summed, want, { atol: 1e-7, rtol: 1e-6 });
    });

  it('refuses a batch-level token selection and totals below the call', () => {
    const ins = randomObjectiveInputs(new Rng(3), 2, 4);
    const o = outsHost(2);
    const call = (cfg: Partial<ObjectiveConfig>, totals: { rows: number; tokens: number }) =>
      refObjective(o[0], o[1], o[2], o[3], o[4], pickInputs(ins, {}), resolveObjectiveConfig(cfg), totals);
    expect(() => call({ top_entropy_quantile: 0.5 }, { rows: 4, tokens: 8 })).toThrow(/token selection/);
    expect(() => call({}, { rows: 1, tokens: 8 })).toThrow(/totals.rows must be an integer >= the call's N = 2/);
  });
});
