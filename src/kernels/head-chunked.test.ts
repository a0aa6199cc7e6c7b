// The chunked LM head (head-chunked.ts) on the GPU against its unchunked CPU twin (src/reference/head.ts) at
// awkward shapes: several row chunks with a partial last one, one chunk larger than the rows, a single row,
// vocabularies of 2, 37, 300 and 1025 (each side of the row kernels' lane edges), with and without a reference,
// temperatures 1 and 0.7, with the sum of squared probabilities (the optimal token baseline's input); the backward
// (dH and dW) against central finite differences of the twin's forward in f64, and the GPU's against the same
// differences; the budget's row count; and the wrapper's checks. A missing adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import type { Tensor } from '../gpu';
import { host, type HostTensor } from '../core/host-tensor';
import { Rng } from '../core/random';
import { compareArrays } from '../reference/compare';
import { numericalGradient, weightedSum } from '../reference/finite-diff';
import { headBackward, headForward } from '../reference/head';
import { useNodeDevice } from '../testing/test-device';
import { ChunkedHead, chunkedHeadBytes, headChunkRows } from './head-chunked';
import { randomHost, randomInts } from './verify';

const gpu = useNodeDevice();

interface HeadCase {
  rows: number;
  C: number;
  V: number;
  /** Rows per chunk the budget allows. */
  chunk: number;
  reference: boolean;
  temperature: number;
}

const CASES: HeadCase[] = [
  { rows: 13, C: 8, V: 37, chunk: 5, reference: true, temperature: 1 },
  { rows: 13, C: 8, V: 37, chunk: 64, reference: true, temperature: 0.7 },
  { rows: 1, C: 12, V: 2, chunk: 3, reference: false, temperature: 1 },
  { rows: 33, C: 16, V: 300, chunk: 7, reference: false, temperature: 0.7 },
  { rows: 70, C: 24, V: 1025, chunk: 16, reference: true, temperature: 0.7 },
];

function inputs(c: HeadCase) {
  const rng = new Rng(c.rows * 1000 + c.V + c.C);
  return {
    h: randomHost(rng, [c.rows, c.C], 2),
    W: randomHost(rng, [c.V, c.C], 1),
    refH: randomHost(rng, [c.rows, c.C], 2),
    refW: randomHost(rng, [c.V, c.C], 1),
    targets: randomInts(rng, [c.rows], c.V).data,
    dLogp: randomHost(rng, [c.rows]),
    dEntropy: randomHost(rng, [c.rows]),
    dKl: randomHost(rng, [c.rows]),
    dWStart: randomHost(rng, [c.V, c.C]),
  };
}

async function runGpu(c: HeadCase, x: ReturnType<typeof inputs>) {
  const { ctx } = gpu;
  const budgetBytes = c.chunk * 4 * c.V * (c.reference ? 3 : 2);
  const head = new ChunkedHead(ctx, {
    dModel: c.C,
    vocabSize: c.V,
    maxRows: c.rows,
    reference: c.reference,
    budgetBytes,
  });
  expect(head.rowsPerChunk).toBe(Math.min(c.chunk, c.rows));
  const owned: Tensor[] = [];
  const f = (a: HostTensor | Float32Array, shape: number[]) => {
    const t = ctx.fromArray(a instanceof Float32Array ? a : (a.data as Float32Array), shape, { label: 'head.test' });
    owned.push(t);
    return t;
  };
  const out = (shape: number[]) => {
    const t = ctx.tensor(shape, { label: 'head.test.out' });
    owned.push(t);
    return t;
  };
  const h = f(x.h, [c.rows, c.C]);
  const W = f(x.W, [c.V, c.C]);
  const targets = ctx.fromArray<'u32'>(x.targets, [c.rows], { dtype: 'u32', label: 'head.test.targets' });
  const ref = c.reference ? { h: f(x.refH, [c.rows, c.C]), W: f(x.refW, [c.V, c.C]) } : undefined;
  const logp = out([c.rows]);
  const entropy = out([c.rows]);
  const sumPiSquared = out([c.rows]);
  const refLogp = out([c.rows]);
  const kl = out([c.rows]);
  const dH = out([c.rows, c.C]);
  const dW = f(x.dWStart, [c.V, c.C]);
  const rec = ctx.recorder('head.test');
  head.forward(rec, {
    policy: { h, W },
    targets,
    logp,
    entropy,
    sumPiSquared,
    temperature: c.temperature,
    ...(ref ? { reference: { ...ref, logp: refLogp, kl } } : {}),
  });
  head.backward(rec, {
    policy: { h, W },
    targets,
    dLogp: f(x.dLogp, [c.rows]),
    dEntropy: f(x.dEntropy, [c.rows]),
    dH,
    dW,
    temperature: c.temperature,
    ...(ref ? { reference: { ...ref, dKl: f(x.dKl, [c.rows]) } } : {}),
  });
  rec.submit();
  const [gLogp, gEnt, gSumPiSq, gRefLogp, gKl, gdH, gdW] = (await ctx.readMany([
    logp,
    entropy,
    sumPiSquared,
    refLogp,
    kl,
    dH,
    dW,
  ])) as Float32Array[];
  for (const t of owned) t.destroy();
  targets.destroy();
  head.destroy();
  return { logp: gLogp, entropy: gEnt, sumPiSquared: gSumPiSq, refLogp: gRefLogp, kl: gKl, dH: gdH, dW: gdW };
}

function twin(c: HeadCase, x: ReturnType<typeof inputs>) {
  const opts = {
    temperature: c.temperature,
    sumPiSquared: true,
    ...(c.reference ? { reference: { h: x.refH, W: x.refW } } : {}),
  };
  const fwd = headForward({ h: x.h, W: x.W }, x.targets, opts);
  const bwd = headBackward(
    { h: x.h, W: x.W },
    x.targets,
    { dLogp: x.dLogp, dEntropy: x.dEntropy, ...(c.reference ? { dKl: x.dKl } : {}) },
    opts,
  );
  return { fwd, bwd };
}

const name = (c: HeadCase) =>
  `${c.rows} rows x C ${c.C} x V ${c.V}, ${c.chunk} rows a chunk${c.reference ? ', with a reference' : ''}, tau ${c.temperature}`;

describe('chunked LM head on the GPU matches the unchunked CPU twin', () => {
  for (const c of CASES) {
    it(name(c), async () => {
      const x = inputs(c);
      const got = await runGpu(c, x);
      const want = twin(c, x);
      const tol = { atol: 2e-5, rtol: 2e-4 };
      const check = (label: string, g: Float32Array, w: ArrayLike<number>) => {
        const r = compareArrays(g, w, tol);
        expect(r.pass, `${label}: ${r.summary}`).toBe(true);
      };
      check('logp', got.logp, want.fwd.logp.data);
      check('entropy', got.entropy, want.fwd.entropy.data);
      check('sum of squared probabilities', got.sumPiSquared, want.fwd.sumPiSquared!.data);
      if (c.reference) {
        check('reference logp', got.refLogp, want.fwd.refLogp!.data);
        check('kl', got.kl, want.fwd.kl!.data);
      }
      check('dH', got.dH, want.bwd.dH.data);
      // dW accumulates onto what was there.
      check(
        'dW',
        got.dW,
        want.bwd.dW.data.map((v, i) => v + x.dWStart.data[i]),
      );
    });
  }
});

describe('chunked LM head backward against finite differences', () => {
  // L = sum a logp + b entropy + c kl, differentiated in f64 with respect to h and W.
  const c: HeadCase = { rows: 5, C: 6, V: 11, chunk: 2, reference: true, temperature: 0.7 };
  const x = inputs(c);
  const f64 = (t: HostTensor) => host(Float64Array.from(t.data), t.shape);
  const h = f64(x.h);
  const W = f64(x.W);
  const refSide = { h: f64(x.refH), W: f64(x.refW) };
  const loss = () => {
    const o = headForward({ h, W }, x.targets, { temperature: c.temperature, reference: refSide });
    return (
      weightedSum(o.logp.data, x.dLogp.data) +
      weightedSum(o.entropy.data, x.dEntropy.data) +
      weightedSum(o.kl!.data, x.dKl.data)
    );
  };
  const numeric = {
    dH: numericalGradient(loss, h.data as Float64Array),
    dW: numericalGradient(loss, W.data as Float64Array),
  };

  it('the twin', () => {
    const b = headBackward(
      { h, W },
      x.targets,
      { dLogp: f64(x.dLogp), dEntropy: f64(x.dEntropy), dKl: f64(x.dKl) },
      { temperature: c.temperature, reference: refSide },
    );
    for (const k of ['dH', 'dW'] as const) {
      const r = compareArrays(b[k].data, numeric[k], { atol: 1e-7, rtol: 1e-6 });
      expect(r.pass, `${k}: ${r.summary}`).toBe(true);
    }
  });

  it('the GPU', async () => {
    const got = await runGpu(c, { ...x, dWStart: host(new Float32Array(c.V * c.C), [c.V, c.C]) });
    for (const k of ['dH', 'dW'] as const) {
      const r = compareArrays(got[k], numeric[k], { atol: 1e-4, rtol: 1e-3 });
      expect(r.pass, `${k}: ${r.summary}`).toBe(true);
    }
  });
});

describe('chunked LM head sizes', () => {
  it('takes as many rows a chunk as the budget allows, at least one, at most the rows', () => {
    const smol = { dModel: 576, vocabSize: 49_152, maxRows: 20_000, reference: true };
    expect(headChunkRows(smol)).toBe(Math.floor((64 * 2 ** 20) / (4 * 49_152 * 3)));
    expect(headChunkRows({ ...smol, reference: false })).toBe(Math.floor((64 * 2 ** 20) / (4 * 49_152 * 2)));
    expect(headChunkRows({ ...smol, maxRows: 10 })).toBe(10);
    expect(headChunkRows({ ...smol, budgetBytes: 1 })).toBe(1);
    expect(chunkedHeadBytes(smol)).toBeLessThanOrEqual(64 * 2 ** 20 + 4 * headChunkRows(smol) * (3 * 576 + 9));
  });

  it('refuses rows beyond its size and a reference it was not sized for', () => {
    const { ctx } = gpu;
    const head = new ChunkedHead(ctx, { dModel: 4, vocabSize: 5, maxRows: 3, reference: false });
    const t = (n: number) => ctx.tensor([n], { label: 'head.check' });
    const u = (n: number) => ctx.tensor<'u32'>([n], { dtype: 'u32', label: 'head.check' });
    const rec = ctx.recorder('head.checks');
    const args = (rows: number) => ({
      policy: { h: t(rows * 4), W: t(20) },
      targets: u(rows),
      logp: t(rows),
      entropy: t(rows),
      temperature: 1,
    });
    expect(() => head.forward(rec, args(4))).toThrow(/4 rows, more than the 3 this head was sized for/);
    expect(() => head.forward(rec, { ...args(2), reference: { h: t(8), W: t(20), logp: t(2) } })).toThrow(
      /sized without a reference/,
    );
    expect(() => head.forward(rec, { ...args(2), logp: t(3) })).toThrow(/logp .* must have 2 elements/);
    rec.submit();
    head.destroy();
  });
});
