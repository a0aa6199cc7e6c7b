// Tests of the value family: every case of value.cases.ts on the GPU against the CPU twin, determinism and the
// wrapper's checks; then the twin alone: dValues against central finite differences of its loss (clipped and
// unclipped), the metrics against a direct computation, and the degenerate batches (all masked, values ==
// oldValues). A missing adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import { compareArrays } from '../reference/compare';
import { numericalGradient } from '../reference/finite-diff';
import { Rng } from '../core/random';
import { host, type HostTensor } from '../core/host-tensor';
import * as ref from '../reference/value';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { VALUE_METRICS, valueLossForwardBackward, type ValueLossOptions } from './value';
import { randomValueInputs, valueCases } from './value.cases';

const gpu = useNodeDevice();

const cases = valueCases();

describe('value loss on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.family))).toEqual(new Set(['value']));
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

describe('value wrapper', () => {
  it('re-exports the metric names', () => {
    expect(VALUE_METRICS).toEqual(['value_loss', 'value_clipfrac', 'vpred_mean', 'return_mean']);
    expect(VALUE_METRICS).toBe(ref.VALUE_METRICS);
  });

  it('is deterministic: two runs over 16384 tokens are bit-identical', async () => {
    const [N, L] = [64, 256];
    const ins = randomValueInputs(new Rng(3), N, L).map((h, i) =>
      gpu.ctx.fromArray(h.data, h.shape, { label: `det:in${i}` }),
    );
    const run = async () => {
      const outs = [[1], [N, L], [VALUE_METRICS.length]].map((s, i) => gpu.ctx.tensor(s, { label: `det:out${i}` }));
      const rec = gpu.ctx.recorder('value determinism');
      valueLossForwardBackward(rec, outs[0], outs[1], outs[2], ins[0], ins[1], ins[2], ins[3], {
        cliprange: 0.2,
        coef: 0.5,
      });
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

  it('checks shapes and options before recording', () => {
    const t = (s: number[]) => gpu.ctx.tensor(s, { label: 'chk' });
    const [v, o, r, m, d] = [t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3])];
    const rec = gpu.ctx.recorder('value checks');
    const call = (
      over: Partial<Record<'loss' | 'dValues' | 'metrics' | 'returns' | 'mask', ReturnType<typeof t>>>,
      opts: ValueLossOptions = { coef: 0.5 },
    ) =>
      valueLossForwardBackward(
        rec,
        over.loss ?? t([1]),
        over.dValues ?? d,
        over.metrics ?? t([4]),
        v,
        o,
        over.returns ?? r,
        over.mask ?? m,
        opts,
      );
    expect(() => call({ mask: t([3, 2]) })).toThrow(/mask .* must have the shape of values/);
    expect(() => call({ returns: t([6]) })).toThrow(/returns .* must have the shape of values/);
    expect(() => call({ dValues: t([2, 2]) })).toThrow(/dValues/);
    expect(() => call({ loss: t([2]) })).toThrow(/loss must be one f32/);
    expect(() => call({ metrics: t([3]) })).toThrow(/metrics must be 4 f32/);
    expect(() => call({}, { coef: NaN })).toThrow(/coef/);
    expect(() => call({}, { coef: 0.5, cliprange: -0.1 })).toThrow(/cliprange/);
    rec.submit();
  });
});

// ---------------------------------------------------------------------------------------------- the twin

const f64 = (t: HostTensor) => host(Float64Array.from(t.data), t.shape);

/** Runs the twin in double precision; returns loss, dValues and metrics. */
function twin(ins: HostTensor[], opts: ValueLossOptions) {
  const [values, oldValues, returns, mask] = ins;
  const loss = host(new Float64Array(1), [1]);
  const dValues = host(new Float64Array(values.data.length), values.shape);
  const metrics = host(new Float64Array(VALUE_METRICS.length), [VALUE_METRICS.length]);
  ref.valueLossForwardBackward(loss, dValues, metrics, values, oldValues, returns, mask, opts);
  return { loss: loss.data[0], dValues: dValues.data, metrics: Array.from(metrics.data) };
}

describe('value twin', () => {
  it.each([
    { N: 1, L: 1, opts: { cliprange: 0.2, coef: 0.5 } },
    { N: 3, L: 17, opts: { cliprange: 0.2, coef: 0.5 } },
    { N: 8, L: 33, opts: { cliprange: 0.05, coef: 2 } },
    { N: 8, L: 33, opts: { coef: 1 } },
  ])('dValues matches finite differences of the loss for $N x $L $opts', ({ N, L, opts }) => {
    const ins = randomValueInputs(new Rng(61 + N * L), N, L).map(f64);
    const values = ins[0].data as Float64Array;
    const { dValues } = twin(ins, opts);
    const num = numericalGradient(() => twin(ins, opts).loss, values, 1e-6);
    const c = compareArrays(dValues, num, { atol: 1e-8, rtol: 1e-6 });
    expect(c.pass, c.summary).toBe(true);
    // Some tokens must be clipped (zero gradient) and some not, for the check to mean anything.
    if (opts.cliprange !== undefined && N * L > 1) {
      const clipfrac = twin(ins, opts).metrics[1];
      expect(clipfrac).toBeGreaterThan(0.05);
      expect(clipfrac).toBeLessThan(0.95);
    }
  });

  it('gives the metrics and loss of a direct computation, never reading masked tokens', () => {
    const [N, L] = [5, 21];
    const ins = randomValueInputs(new Rng(71), N, L).map(f64);
    const [V, Vo, R, m] = ins.map((t) => t.data);
    const eps = 0.2;
    let M = 0;
    let sumL = 0;
    let clipped = 0;
    let sumV = 0;
    let sumR = 0;
    let sumU = 0;
    for (let i = 0; i < V.length; i++) {
      if (!m[i]) continue;
      const u = (V[i] - R[i]) ** 2;
      const uc = (Math.min(Math.max(V[i], Vo[i] - eps), Vo[i] + eps) - R[i]) ** 2;
      M++;
      sumL += 0.5 * Math.max(u, uc);
      sumU += 0.5 * u;
      clipped += uc > u ? 1 : 0;
      sumV += V[i];
      sumR += R[i];
    }
    const clip = twin(ins, { cliprange: eps, coef: 0.3 });
    const close = (a: number[], b: number[]) => {
      const c = compareArrays(a, b, { atol: 1e-13, rtol: 1e-12 });
      expect(c.pass, c.summary).toBe(true);
    };
    close([clip.loss, ...clip.metrics], [(0.3 * sumL) / M, sumL / M, clipped / M, sumV / M, sumR / M]);
    const plain = twin(ins, { coef: 0.3 });
    close([plain.loss, ...plain.metrics], [(0.3 * sumU) / M, sumU / M, 0, sumV / M, sumR / M]);
    for (let i = 0; i < V.length; i++) if (!m[i]) expect(clip.dValues[i]).toBe(0);
  });

  it('is all zeros for an all-masked batch, and values == oldValues never clips', () => {
    const empty = twin(randomValueInputs(new Rng(81), 3, 17, { allMasked: true }).map(f64), {
      cliprange: 0.2,
      coef: 0.5,
    });
    expect([empty.loss, ...empty.metrics]).toEqual([0, 0, 0, 0, 0]);
    expect(Array.from(empty.dValues).every((x) => x === 0)).toBe(true);
    const ins = randomValueInputs(new Rng(82), 8, 33, { sameOld: true }).map(f64);
    const clip = twin(ins, { cliprange: 0.2, coef: 0.5 });
    const plain = twin(ins, { coef: 0.5 });
    expect(clip.metrics[1]).toBe(0);
    expect(clip.loss).toBe(plain.loss);
    expect(Array.from(clip.dValues)).toEqual(Array.from(plain.dValues));
  });
});

// Gradient accumulation: a minibatch's rows in two micro-batches, each call given the minibatch's masked-token count.
describe('value loss with the minibatch total of a micro-batch', () => {
  it('the GPU follows the twin, and the micro-batches add up to the minibatch', async () => {
    const [N, L] = [7, 11];
    const all = randomValueInputs(new Rng(17), N, L);
    const opts = { coef: 0.5, cliprange: 0.1 };
    const out = (n: number) => [
      host(new Float32Array(1), [1]),
      host(new Float32Array(n * L), [n, L]),
      host(new Float32Array(VALUE_METRICS.length), [VALUE_METRICS.length]),
    ];
    const whole = out(N);
    ref.valueLossForwardBackward(whole[0], whole[1], whole[2], all[0], all[1], all[2], all[3], opts);
    const totalTokens = all[3].data.reduce((a, b) => a + b, 0);
    let loss = 0;
    const metrics = new Float64Array(VALUE_METRICS.length);
    for (const [a, b] of [
      [0, 3],
      [3, 7],
    ]) {
      const ins = all.map((h) => host(Float32Array.from(h.data.subarray(a * L, b * L)), [b - a, L]));
      const twin = out(b - a);
      ref.valueLossForwardBackward(twin[0], twin[1], twin[2], ins[0], ins[1], ins[2], ins[3], { ...opts, totalTokens });
      const dev = ins.map((h, i) => gpu.ctx.fromArray(h.data, h.shape, { label: `agg:in${i}` }));
      const outs = twin.map((h, i) => gpu.ctx.tensor(h.shape, { label: `agg:out${i}` }));
      const rec = gpu.ctx.recorder('value totals');
      valueLossForwardBackward(rec, outs[0], outs[1], outs[2], dev[0], dev[1], dev[2], dev[3], {
        ...opts,
        totalTokens,
      });
      rec.submit();
      const got = await gpu.ctx.readMany(outs);
      for (const t of [...dev, ...outs]) t.destroy();
      got.forEach((g, i) => {
        const r = compareArrays(g, twin[i].data, { atol: 1e-6, rtol: 1e-4 });
        expect(r.pass, `rows ${a}..${b} output ${i}: ${r.summary}`).toBe(true);
      });
      const r = compareArrays(twin[1].data, whole[1].data.subarray(a * L, b * L), { atol: 1e-9, rtol: 1e-6 });
      expect(r.pass, `rows ${a}..${b} dValues: ${r.summary}`).toBe(true);
      loss += twin[0].data[0];
      twin[2].data.forEach((v, j) => (metrics[j] += v));
    }
    expect(compareArrays([loss], whole[0].data, { atol: 1e-7, rtol: 1e-6 }).pass).toBe(true);
    const m = compareArrays(metrics, whole[2].data, { atol: 1e-7, rtol: 1e-6 });
    expect(m.pass, m.summary).toBe(true);
  });
});
