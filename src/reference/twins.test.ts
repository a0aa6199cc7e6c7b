// Every backward twin against central finite differences of its forward (Float64Array, random non-zero inputs,
// awkward shapes), plus the forward properties a gradient check cannot see (causality, shift invariance, ...).
// The PyTorch parity of the assembled model is in parity.test.ts.

import { describe, expect, it } from 'vitest';
import { adamwStep } from './adamw';
import { attentionBackward, attentionForward } from './attention';
import { compareArrays, type Tolerance } from './compare';
import { crossEntropyBackward, crossEntropyForward } from './cross-entropy';
import { embeddingBackward, embeddingForward } from './embedding';
import { numericalGradient, weightedSum } from './finite-diff';
import { clipScale, gradClip, gradNorm } from './grad-norm';
import { logprobBackward, logprobForward, logprobForwardSumPiSquared } from './logprob';
import { modelBackward, modelForward } from './model';
import { initParams, paramShapes, type ModelDims } from '../core/model-shapes';
import { Rng } from '../core/random';
import { rmsnormBackward, rmsnormForward } from './rmsnorm';
import { ropeBackward, ropeForward } from './rope';
import { swigluBackward, swigluForward } from './swiglu';
import { host, numel, type HostTensor } from '../core/host-tensor';

const FD: Tolerance = { atol: 1e-7, rtol: 1e-6 };

/** A Float64 tensor of uniform values in [lo, hi), never zero. */
function rand(rng: Rng, shape: readonly number[], lo = -1, hi = 1): HostTensor<Float64Array> {
  const data = new Float64Array(numel(shape));
  for (let i = 0; i < data.length; i++) {
    let x = 0;
    while (x === 0) x = rng.uniform(lo, hi);
    data[i] = x;
  }
  return host(data, shape);
}

function z64(shape: readonly number[]): HostTensor<Float64Array> {
  return host(new Float64Array(numel(shape)), shape);
}

/** Asserts analytic == numerical gradient of `loss` with respect to `x` (all entries, or a sample). */
function expectGrad(
  label: string,
  analytic: ArrayLike<number>,
  loss: () => number,
  x: Float64Array,
  tol = FD,
  indices?: number[],
): void {
  const num = numericalGradient(loss, x, 1e-6, indices);
  const which = indices ?? Array.from({ length: x.length }, (_, i) => i);
  const got = which.map((i) => analytic[i]);
  const want = which.map((i) => num[i]);
  const c = compareArrays(got, want, tol);
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

describe('embedding', () => {
  it.each([
    { V: 7, C: 3, tokens: [0, 6, 3, 3, 1, 6] },
    { V: 1, C: 1, tokens: [0] },
    { V: 5, C: 4, tokens: [2] },
  ])('backward is the scatter-add of the forward (V=$V, C=$C)', ({ V, C, tokens }) => {
    const rng = new Rng(1);
    const ids = Uint32Array.from(tokens);
    const table = rand(rng, [V, C]);
    const out = z64([1, ids.length, C]);
    const w = rand(rng, out.shape);
    const loss = () => (embeddingForward(out, table, ids), weightedSum(out.data, w.data));
    const dTable = rand(rng, [V, C]);
    const before = dTable.data.slice();
    embeddingBackward(dTable, w, ids);
    const delta = dTable.data.map((x, i) => x - before[i]); // accumulates into existing contents
    expectGrad('dTable', delta, loss, table.data);
  });

  it('rejects out-of-vocabulary tokens and mismatched shapes', () => {
    const table = rand(new Rng(2), [4, 3]);
    expect(() => embeddingForward(z64([1, 2, 3]), table, Uint32Array.from([0, 4]))).toThrow(/outside the vocabulary/);
    expect(() => embeddingForward(z64([1, 2, 2]), table, Uint32Array.from([0, 1]))).toThrow(/C=3/);
    expect(() => embeddingForward(z64([1, 3, 3]), table, Uint32Array.from([0, 1]))).toThrow(/2 tokens for 3 rows/);
  });
});

describe('rmsnorm', () => {
  it.each([{ shape: [2, 3, 5] }, { shape: [1, 1, 7] }, { shape: [1, 1, 1] }, { shape: [3, 2, 16] }])(
    'backward matches finite differences for $shape',
    ({ shape }) => {
      const rng = new Rng(3);
      const C = shape[2];
      const x = rand(rng, shape);
      const weight = rand(rng, [C], 0.5, 1.5);
      const out = z64(shape);
      const rstd = z64([shape[0], shape[1]]);
      const w = rand(rng, shape);
      const opts = { eps: 1e-5 };
      const loss = () => (rmsnormForward(out, rstd, x, weight, opts), weightedSum(out.data, w.data));
      loss();
      const dx = rand(rng, shape); // overwritten without accumulate
      const dWeight = rand(rng, [C]);
      const dW0 = dWeight.data.slice();
      rmsnormBackward(dx, dWeight, w, x, weight, rstd);
      expectGrad('dx', dx.data, loss, x.data);
      expectGrad(
        'dWeight',
        dWeight.data.map((v, i) => v - dW0[i]),
        loss,
        weight.data,
      );
      // accumulate adds into dx
      const acc = rand(rng, shape);
      const acc0 = acc.data.slice();
      loss();
      rmsnormBackward(acc, z64([C]), w, x, weight, rstd, { accumulate: true });
      const c = compareArrays(
        acc.data.map((v, i) => v - acc0[i]),
        dx.data,
        { atol: 1e-12, rtol: 1e-12 },
      );
      expect(c.pass, c.summary).toBe(true);
    },
  );

  it('matches the HF formula w * x / sqrt(mean(x^2) + eps) and keeps the rstd', () => {
    const x = host(Float64Array.from([3, -4]), [1, 1, 2]);
    const out = z64([1, 1, 2]);
    const rstd = z64([1, 1]);
    rmsnormForward(out, rstd, x, host(Float64Array.from([2, 0.5]), [2]), { eps: 1e-5 });
    const r = 1 / Math.sqrt(12.5 + 1e-5);
    expect(rstd.data[0]).toBeCloseTo(r, 14);
    expect(Array.from(out.data)).toEqual([2 * 3 * r, 0.5 * -4 * r]);
  });
});

describe('rope', () => {
  it.each([
    { shape: [2, 3, 4, 6], posOffset: 0 },
    { shape: [1, 1, 1, 2], posOffset: 0 },
    { shape: [1, 5, 3, 2], posOffset: 3 },
    { shape: [2, 1, 2, 4], posOffset: 17 },
  ])('backward matches finite differences for $shape at offset $posOffset', ({ shape, posOffset }) => {
    const rng = new Rng(4);
    const x = rand(rng, shape);
    const out = z64(shape);
    const w = rand(rng, shape);
    const opts = { theta: 10000, posOffset };
    const loss = () => (ropeForward(out, x, opts), weightedSum(out.data, w.data));
    const dx = z64(shape);
    ropeBackward(dx, w, opts);
    expectGrad('dx', dx.data, loss, x.data);
  });

  it('is a rotation of (x_i, x_{i+HD/2}) that is the identity at position 0, in place or not', () => {
    const rng = new Rng(5);
    const shape = [2, 4, 3, 6];
    const x = rand(rng, shape);
    const out = z64(shape);
    ropeForward(out, x, { theta: 500 });
    const inPlace = host(x.data.slice(), shape);
    ropeForward(inPlace, inPlace, { theta: 500 });
    expect(Array.from(inPlace.data)).toEqual(Array.from(out.data));
    const HD = 6;
    for (let b = 0; b < 2; b++) {
      for (let t = 0; t < 4; t++) {
        for (let h = 0; h < 3; h++) {
          const o = ((b * 4 + t) * 3 + h) * HD;
          for (let i = 0; i < HD / 2; i++) {
            const n0 = Math.hypot(x.data[o + i], x.data[o + i + 3]);
            const n1 = Math.hypot(out.data[o + i], out.data[o + i + 3]);
            expect(n1).toBeCloseTo(n0, 12);
            if (t === 0) expect(out.data[o + i]).toBe(x.data[o + i]);
            // the rotation angle is pos * theta^(-2i/HD)
            const angle =
              Math.atan2(out.data[o + i + 3], out.data[o + i]) - Math.atan2(x.data[o + i + 3], x.data[o + i]);
            const want = t * Math.pow(500, (-2 * i) / HD);
            expect(Math.cos(angle)).toBeCloseTo(Math.cos(want), 10);
            expect(Math.sin(angle)).toBeCloseTo(Math.sin(want), 10);
          }
        }
      }
    }
  });

  it('posOffset and explicit positions agree with the tail of a longer sequence', () => {
    const rng = new Rng(6);
    const full = rand(rng, [1, 6, 2, 4]);
    const outFull = z64(full.shape);
    ropeForward(outFull, full, { theta: 10000 });
    const tail = host(full.data.slice(4 * 2 * 4), [1, 2, 2, 4]);
    const a = z64(tail.shape);
    const b = z64(tail.shape);
    ropeForward(a, tail, { theta: 10000, posOffset: 4 });
    ropeForward(b, tail, { theta: 10000, positions: Uint32Array.from([4, 5]) });
    expect(Array.from(a.data)).toEqual(Array.from(outFull.data.slice(4 * 2 * 4)));
    expect(Array.from(b.data)).toEqual(Array.from(a.data));
    expect(() => ropeForward(z64([1, 1, 1, 3]), z64([1, 1, 1, 3]), { theta: 1e4 })).toThrow(/must be even/);
  });
});

describe('attention', () => {
  const cases = [
    { B: 2, T: 5, NH: 4, NKV: 2, HD: 6 },
    { B: 1, T: 1, NH: 1, NKV: 1, HD: 2 },
    { B: 2, T: 4, NH: 3, NKV: 3, HD: 2 },
    { B: 1, T: 3, NH: 4, NKV: 1, HD: 4 },
    { B: 1, T: 7, NH: 2, NKV: 2, HD: 3 },
  ];
  it.each(cases)(
    'backward matches finite differences for B=$B T=$T NH=$NH NKV=$NKV HD=$HD',
    ({ B, T, NH, NKV, HD }) => {
      const rng = new Rng(7);
      const q = rand(rng, [B, T, NH, HD], -1.5, 1.5);
      const k = rand(rng, [B, T, NKV, HD], -1.5, 1.5);
      const v = rand(rng, [B, T, NKV, HD]);
      const out = z64([B, T, NH, HD]);
      const lse = z64([B, NH, T]);
      const w = rand(rng, out.shape);
      const loss = () => (attentionForward(out, lse, q, k, v), weightedSum(out.data, w.data));
      loss();
      const dq = rand(rng, q.shape);
      const dk = rand(rng, k.shape);
      const dv = rand(rng, v.shape);
      attentionBackward(dq, dk, dv, w, q, k, v, out, lse);
      expectGrad('dq', dq.data, loss, q.data);
      expectGrad('dk', dk.data, loss, k.data);
      expectGrad('dv', dv.data, loss, v.data);
    },
  );

  it('is causal: no output depends on a later key or value', () => {
    const rng = new Rng(8);
    const [B, T, NH, NKV, HD] = [2, 6, 4, 2, 4];
    const q = rand(rng, [B, T, NH, HD]);
    const k = rand(rng, [B, T, NKV, HD]);
    const v = rand(rng, [B, T, NKV, HD]);
    const out0 = z64(q.shape);
    const lse = z64([B, NH, T]);
    attentionForward(out0, lse, q, k, v);
    const j = 3; // perturb position j of every sequence
    for (let b = 0; b < B; b++) {
      for (let e = 0; e < NKV * HD; e++) {
        k.data[(b * T + j) * NKV * HD + e] += 0.7;
        v.data[(b * T + j) * NKV * HD + e] -= 0.9;
      }
    }
    const out1 = z64(q.shape);
    attentionForward(out1, lse, q, k, v);
    const row = NH * HD;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const a = Array.from(out0.data.slice((b * T + t) * row, (b * T + t + 1) * row));
        const c = Array.from(out1.data.slice((b * T + t) * row, (b * T + t + 1) * row));
        if (t < j) expect(c).toEqual(a);
        else expect(c).not.toEqual(a);
      }
    }
    // position 0 sees only itself: out = v[0] of its kv head
    for (let h = 0; h < NH; h++) {
      const g = Math.floor(h / (NH / NKV));
      for (let e = 0; e < HD; e++) expect(out1.data[h * HD + e]).toBeCloseTo(v.data[g * HD + e], 14);
    }
  });

  it('queries against a longer key sequence (KV cache) equal the last rows of the full pass', () => {
    const rng = new Rng(9);
    const [B, T, NH, NKV, HD] = [2, 5, 4, 2, 2];
    const q = rand(rng, [B, T, NH, HD]);
    const k = rand(rng, [B, T, NKV, HD]);
    const v = rand(rng, [B, T, NKV, HD]);
    const out = z64(q.shape);
    attentionForward(out, z64([B, NH, T]), q, k, v);
    const Tq = 2;
    const qTail = z64([B, Tq, NH, HD]);
    for (let b = 0; b < B; b++)
      qTail.data.set(q.data.subarray((b * T + T - Tq) * NH * HD, (b * T + T) * NH * HD), b * Tq * NH * HD);
    const outTail = z64(qTail.shape);
    attentionForward(outTail, z64([B, NH, Tq]), qTail, k, v);
    for (let b = 0; b < B; b++) {
      const want = out.data.slice((b * T + T - Tq) * NH * HD, (b * T + T) * NH * HD);
      const got = outTail.data.slice(b * Tq * NH * HD, (b + 1) * Tq * NH * HD);
      const c = compareArrays(got, want, { atol: 1e-14, rtol: 1e-12 });
      expect(c.pass, c.summary).toBe(true);
    }
  });

  it('rejects NH not a multiple of NKV', () => {
    expect(() =>
      attentionForward(z64([1, 2, 3, 2]), z64([1, 3, 2]), z64([1, 2, 3, 2]), z64([1, 2, 2, 2]), z64([1, 2, 2, 2])),
    ).toThrow(/multiple of NKV/);
  });

  // Left padding (kvStart) and keys in a larger cache (Tcap > Tk valid positions). Rows with kvStart past some
  // queries' positions have pad queries (no visible key: out = lse = 0, no gradient); the cache's positions
  // past Tk and the masked keys must get exactly zero gradient, which the finite differences see as well.
  const padded = [
    { B: 3, T: 5, NH: 4, NKV: 2, HD: 3, Tk: 5, Tcap: 5, kvStart: [0, 2, 5] },
    { B: 2, T: 2, NH: 2, NKV: 1, HD: 3, Tk: 5, Tcap: 7, kvStart: [1, 4] },
    { B: 2, T: 1, NH: 2, NKV: 2, HD: 2, Tk: 4, Tcap: 6, kvStart: [3, 0] },
    { B: 1, T: 4, NH: 3, NKV: 1, HD: 2, Tk: 4, Tcap: 9, kvStart: [0] },
  ];
  it.each(padded)(
    'masked backward matches finite differences for B=$B T=$T Tk=$Tk Tcap=$Tcap NH=$NH NKV=$NKV HD=$HD kvStart=$kvStart',
    ({ B, T, NH, NKV, HD, Tk, Tcap, kvStart }) => {
      const rng = new Rng(17);
      const opts = { kvStart: Uint32Array.from(kvStart), keys: Tk };
      const q = rand(rng, [B, T, NH, HD], -1.5, 1.5);
      const k = rand(rng, [B, Tcap, NKV, HD], -1.5, 1.5);
      const v = rand(rng, [B, Tcap, NKV, HD]);
      const out = z64([B, T, NH, HD]);
      const lse = z64([B, NH, T]);
      const w = rand(rng, out.shape);
      const loss = () => (attentionForward(out, lse, q, k, v, opts), weightedSum(out.data, w.data));
      loss();
      const dq = rand(rng, q.shape);
      const dk = rand(rng, k.shape);
      const dv = rand(rng, v.shape);
      attentionBackward(dq, dk, dv, w, q, k, v, out, lse, opts);
      expectGrad('dq', dq.data, loss, q.data);
      expectGrad('dk', dk.data, loss, k.data);
      expectGrad('dv', dv.data, loss, v.data);
      // pad queries: exact zeros, and so are the gradients of masked keys and of cache positions past Tk
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) {
          if (Tk - T + t >= kvStart[b]) continue;
          for (let h = 0; h < NH; h++) {
            expect(lse.data[(b * NH + h) * T + t]).toBe(0);
            for (let e = 0; e < HD; e++) {
              expect(out.data[((b * T + t) * NH + h) * HD + e]).toBe(0);
              expect(dq.data[((b * T + t) * NH + h) * HD + e]).toBe(0);
            }
          }
        }
        for (let j = 0; j < Tcap; j++) {
          if (j >= kvStart[b] && j < Tk) continue;
          for (let e = 0; e < NKV * HD; e++) {
            expect(dk.data[(b * Tcap + j) * NKV * HD + e]).toBe(0);
            expect(dv.data[(b * Tcap + j) * NKV * HD + e]).toBe(0);
          }
        }
      }
    },
  );

  /** Positions from..to (exclusive) of batch row b of a (B,L,...) tensor, as a (1,to-from,...) tensor. */
  function slice(x: HostTensor<Float64Array>, b: number, from: number, to: number): HostTensor<Float64Array> {
    const [, L, ...rest] = x.shape;
    const row = numel(rest);
    return host(x.data.slice((b * L + from) * row, (b * L + to) * row), [1, to - from, ...rest]);
  }

  it.each([
    { B: 3, T: 9, NH: 4, NKV: 2, HD: 6, Tk: 9, Tcap: 9, kvStart: [0, 3, 8] },
    { B: 3, T: 1, NH: 4, NKV: 2, HD: 4, Tk: 13, Tcap: 20, kvStart: [0, 4, 12] },
    { B: 2, T: 5, NH: 2, NKV: 1, HD: 3, Tk: 5, Tcap: 16, kvStart: [2, 5] },
    { B: 2, T: 3, NH: 2, NKV: 2, HD: 3, Tk: 7, Tcap: 8, kvStart: [6, 1] },
  ])(
    'a left-padded row in a cache equals the unpadded sequence alone (B=$B T=$T Tk=$Tk Tcap=$Tcap kvStart=$kvStart)',
    ({ B, T, NH, NKV, HD, Tk, Tcap, kvStart }) => {
      // The property batched generation relies on: for a row with kvStart = s, the queries at positions >= s
      // give what attention over the sequence without its pad prefix gives, forward and backward; cache
      // positions past Tk hold garbage that nothing reads.
      const rng = new Rng(18);
      const opts = { kvStart: Uint32Array.from(kvStart), keys: Tk };
      const q = rand(rng, [B, T, NH, HD], -2, 2);
      const k = rand(rng, [B, Tcap, NKV, HD], -2, 2);
      const v = rand(rng, [B, Tcap, NKV, HD]);
      const dOut = rand(rng, [B, T, NH, HD]);
      const out = z64(q.shape);
      const lse = z64([B, NH, T]);
      attentionForward(out, lse, q, k, v, opts);
      const [dq, dk, dv] = [z64(q.shape), z64(k.shape), z64(v.shape)];
      attentionBackward(dq, dk, dv, dOut, q, k, v, out, lse, opts);
      const exact = { atol: 1e-14, rtol: 1e-12 };
      const same = (label: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
        const c = compareArrays(got, want, exact);
        expect(c.pass, `${label}: ${c.summary}`).toBe(true);
      };
      const offset = Tk - T;
      for (let b = 0; b < B; b++) {
        const s = kvStart[b];
        const t0 = Math.min(T, Math.max(0, s - offset)); // first real query of the row
        const Tq = T - t0;
        // pad queries and masked keys: zeros
        same(`row ${b} pad out`, slice(out, b, 0, t0).data, new Float64Array(t0 * NH * HD));
        same(`row ${b} pad dq`, slice(dq, b, 0, t0).data, new Float64Array(t0 * NH * HD));
        same(`row ${b} masked dk`, slice(dk, b, 0, s).data, new Float64Array(s * NKV * HD));
        same(`row ${b} masked dv`, slice(dv, b, 0, s).data, new Float64Array(s * NKV * HD));
        same(`row ${b} dk past Tk`, slice(dk, b, Tk, Tcap).data, new Float64Array((Tcap - Tk) * NKV * HD));
        const lseRow = (h: number) => lse.data.slice((b * NH + h) * T, (b * NH + h + 1) * T);
        for (let h = 0; h < NH; h++) same(`row ${b} pad lse`, lseRow(h).slice(0, t0), new Float64Array(t0));
        if (Tq === 0) continue;
        // the unpadded sequence: keys s..Tk, queries t0..T, no options
        const [q1, k1, v1, dOut1] = [slice(q, b, t0, T), slice(k, b, s, Tk), slice(v, b, s, Tk), slice(dOut, b, t0, T)];
        const out1 = z64(q1.shape);
        const lse1 = z64([1, NH, Tq]);
        attentionForward(out1, lse1, q1, k1, v1);
        const [dq1, dk1, dv1] = [z64(q1.shape), z64(k1.shape), z64(v1.shape)];
        attentionBackward(dq1, dk1, dv1, dOut1, q1, k1, v1, out1, lse1);
        same(`row ${b} out`, slice(out, b, t0, T).data, out1.data);
        for (let h = 0; h < NH; h++) same(`row ${b} lse`, lseRow(h).slice(t0), lse1.data.slice(h * Tq, (h + 1) * Tq));
        same(`row ${b} dq`, slice(dq, b, t0, T).data, dq1.data);
        same(`row ${b} dk`, slice(dk, b, s, Tk).data, dk1.data);
        same(`row ${b} dv`, slice(dv, b, s, Tk).data, dv1.data);
      }
    },
  );

  it('rejects a kvStart of the wrong length and keys beyond the key tensor', () => {
    const [q, k, out, lse] = [z64([2, 2, 2, 2]), z64([2, 4, 1, 2]), z64([2, 2, 2, 2]), z64([2, 2, 2])];
    expect(() => attentionForward(out, lse, q, k, k, { kvStart: new Uint32Array(3) })).toThrow(/kvStart has 3 entries/);
    expect(() => attentionForward(out, lse, q, k, k, { keys: 5 })).toThrow(/keys=5/);
    expect(() => attentionForward(out, lse, q, k, k, { keys: 1 })).toThrow(/1 key positions for 2/);
    expect(() => attentionBackward(out, k, k, out, q, k, k, out, lse, { kvStart: new Uint32Array(1) })).toThrow(
      /kvStart/,
    );
  });
});

describe('swiglu', () => {
  it.each([{ shape: [3, 7] }, { shape: [1, 1, 1] }, { shape: [2, 3, 5] }])(
    'backward matches finite differences for $shape',
    ({ shape }) => {
      const rng = new Rng(10);
      const gate = rand(rng, shape, -4, 4);
      const up = rand(rng, shape, -2, 2);
      const out = z64(shape);
      const w = rand(rng, shape);
      const loss = () => (swigluForward(out, gate, up), weightedSum(out.data, w.data));
      const dGate = z64(shape);
      const dUp = z64(shape);
      swigluBackward(dGate, dUp, w, gate, up);
      expectGrad('dGate', dGate.data, loss, gate.data);
      expectGrad('dUp', dUp.data, loss, up.data);
    },
  );
});

describe('logprob', () => {
  it.each([
    { N: 5, V: 11, temperature: 0.7 },
    { N: 1, V: 2, temperature: 1 },
    { N: 3, V: 37, temperature: 1.3 },
  ])('backward matches finite differences for N=$N V=$V tau=$temperature', ({ N, V, temperature }) => {
    const rng = new Rng(11);
    const logits = rand(rng, [N, V], -3, 3);
    const targets = Uint32Array.from({ length: N }, () => rng.int(V));
    const lp = z64([N]);
    const ent = z64([N]);
    const wl = rand(rng, [N]);
    const we = rand(rng, [N]);
    const opts = { temperature };
    const loss = () => (
      logprobForward(lp, ent, logits, targets, opts), weightedSum(lp.data, wl.data) + weightedSum(ent.data, we.data)
    );
    const dLogits = z64([N, V]);
    logprobBackward(dLogits, wl, we, logits, targets, opts);
    expectGrad('dLogits', dLogits.data, loss, logits.data);
  });

  it('gives the exact log-softmax and entropy on a hand-checked row', () => {
    const logits = host(Float64Array.from([1, 2, 3]), [1, 3]);
    const lp = z64([1]);
    const ent = z64([1]);
    logprobForward(lp, ent, logits, Uint32Array.from([2]), { temperature: 0.5 });
    const z = [2, 4, 6];
    const lse = Math.log(z.reduce((s, x) => s + Math.exp(x), 0));
    expect(lp.data[0]).toBeCloseTo(6 - lse, 14);
    expect(ent.data[0]).toBeCloseTo(-z.reduce((s, x) => s + Math.exp(x - lse) * (x - lse), 0), 14);
  });

  it("gives sum_v p_v^2 in closed form: 1/V for equal logits, 1 for a one-hot row, verl's logsumexp form otherwise", () => {
    const [N, V] = [3, 5];
    const x = z64([N, V]);
    x.data.set([0, 0, 0, 0, 0], 0); // equal logits: p = 1/V, sum p^2 = 1/V
    x.data.set([1e4, 0, -3, 2, 1], V); // one token takes all the mass
    x.data.set([1, 2, 3, -1, 0.5], 2 * V);
    const tau = 0.7;
    const q = z64([N]);
    const targets = Uint32Array.from([0, 1, 2]);
    const [lp, ent] = [z64([N]), z64([N])];
    logprobForwardSumPiSquared(lp, ent, q, x, targets, { temperature: tau });
    expect(q.data[0]).toBeCloseTo(1 / V, 14);
    expect(q.data[1]).toBeCloseTo(1, 14);
    const z = [1, 2, 3, -1, 0.5].map((v) => v / tau);
    const lse = (a: number[]) => Math.log(a.reduce((s, v) => s + Math.exp(v), 0));
    // verl's calculate_sum_pi_squared_from_logits: exp(logsumexp(2z) - 2 logsumexp(z))
    expect(q.data[2]).toBeCloseTo(Math.exp(lse(z.map((v) => 2 * v)) - 2 * lse(z)), 14);
    // its log-probs and entropies are logprobForward's
    const [lp2, ent2] = [z64([N]), z64([N])];
    logprobForward(lp2, ent2, x, targets, { temperature: tau });
    expect(Array.from(lp.data)).toEqual(Array.from(lp2.data));
    expect(Array.from(ent.data)).toEqual(Array.from(ent2.data));
    expect(() => logprobForwardSumPiSquared(z64([N]), z64([N]), z64([2]), x, targets)).toThrow(
      /sumPiSquared has 2 elements, want N=3/,
    );
  });

  it('stays finite and correct with logits of magnitude 1e4', () => {
    const rng = new Rng(12);
    const [N, V] = [4, 9];
    const small = rand(rng, [N, V], -2, 2);
    const big = host(
      small.data.map((x) => x + 1e4),
      [N, V],
    ); // shift every logit by 1e4
    const targets = Uint32Array.from([0, 3, 8, 5]);
    const wl = rand(rng, [N]);
    const we = rand(rng, [N]);
    const res = (x: HostTensor) => {
      const lp = z64([N]);
      const ent = z64([N]);
      const d = z64([N, V]);
      logprobForward(lp, ent, x, targets, { temperature: 0.9 });
      logprobBackward(d, wl, we, x, targets, { temperature: 0.9 });
      return { lp: lp.data, ent: ent.data, d: d.data };
    };
    const a = res(small);
    const b = res(big);
    // softmax is shift invariant: the shifted rows must give the same values up to the rounding of x + 1e4
    for (const key of ['lp', 'ent', 'd'] as const) {
      const c = compareArrays(b[key], a[key], { atol: 1e-9, rtol: 1e-9 });
      expect(c.pass, `${key}: ${c.summary}`).toBe(true);
    }
    // widely spread huge logits: one-hot softmax, still finite
    const huge = rand(rng, [N, V], -1e4, 1e4);
    for (const dtype of ['f64', 'f32'] as const) {
      const x = dtype === 'f64' ? huge : host(Float32Array.from(huge.data), [N, V]);
      const lp = dtype === 'f64' ? z64([N]) : host(new Float32Array(N), [N]);
      const ent = dtype === 'f64' ? z64([N]) : host(new Float32Array(N), [N]);
      const d = dtype === 'f64' ? z64([N, V]) : host(new Float32Array(N * V), [N, V]);
      const argmax = Uint32Array.from({ length: N }, (_, n) => {
        let best = 0;
        for (let v = 1; v < V; v++) if (x.data[n * V + v] > x.data[n * V + best]) best = v;
        return best;
      });
      logprobForward(lp, ent, x, argmax, {});
      logprobBackward(d, wl, we, x, argmax, {});
      for (let n = 0; n < N; n++) {
        expect(lp.data[n]).toBeCloseTo(0, 12);
        expect(ent.data[n]).toBeCloseTo(0, 12);
      }
      expect(Array.from(d.data).every(Number.isFinite)).toBe(true);
      // logprob of a non-argmax target is finite and hugely negative
      logprobForward(
        lp,
        ent,
        x,
        Uint32Array.from(argmax, (a) => (a + 1) % V),
        {},
      );
      for (let n = 0; n < N; n++) {
        expect(Number.isFinite(lp.data[n])).toBe(true);
        expect(lp.data[n]).toBeLessThan(-1);
      }
    }
  });
});

describe('cross-entropy', () => {
  it.each([
    { N: 6, V: 5, mask: [1, 0, 1, 1, 0, 1] },
    { N: 1, V: 3, mask: [1] },
    { N: 4, V: 37, mask: [1, 1, 1, 1] },
  ])('backward matches finite differences for N=$N V=$V', ({ N, V, mask }) => {
    const rng = new Rng(13);
    const logits = rand(rng, [N, V], -3, 3);
    const targets = Uint32Array.from({ length: N }, (_, n) => (mask[n] ? rng.int(V) : 999)); // masked rows: garbage targets
    const m = Float64Array.from(mask);
    const loss = z64([1]);
    const dLoss = 0.37;
    const f = () => (crossEntropyForward(loss, logits, targets, m), dLoss * loss.data[0]);
    const d = rand(rng, [N, V]);
    crossEntropyBackward(d, logits, targets, m, { dLoss });
    expectGrad('dLogits', d.data, f, logits.data);
    // equals the mean of -logprob over the unmasked rows
    const lp = z64([N]);
    const safe = Uint32Array.from(targets, (t) => (t < V ? t : 0));
    logprobForward(lp, z64([N]), logits, safe);
    let s = 0;
    for (let n = 0; n < N; n++) s -= mask[n] * lp.data[n];
    f();
    expect(loss.data[0]).toBeCloseTo(s / mask.reduce((a, b) => a + b, 0), 13);
  });

  it('is 0 with a zero gradient when every row is masked', () => {
    const logits = rand(new Rng(14), [2, 3]);
    const loss = z64([1]);
    const d = rand(new Rng(15), [2, 3]);
    crossEntropyForward(loss, logits, Uint32Array.from([0, 1]), new Float64Array(2));
    crossEntropyBackward(d, logits, Uint32Array.from([0, 1]), new Float64Array(2));
    expect(loss.data[0]).toBe(0);
    expect(Array.from(d.data)).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe('adamw', () => {
  it('takes the closed-form first step and moves by lr * g/(|g|+eps) under a constant gradient', () => {
    const rng = new Rng(16);
    const n = 13;
    const p0 = rand(rng, [n]);
    const g = rand(rng, [n]);
    const p = host(p0.data.slice(), [n]);
    const m = z64([n]);
    const v = z64([n]);
    const [lr, wd, eps] = [1e-2, 0.1, 1e-8];
    adamwStep(p, m, v, g, { lr, t: 1, weightDecay: wd, eps });
    for (let i = 0; i < n; i++) {
      const want = p0.data[i] * (1 - lr * wd) - (lr * g.data[i]) / (Math.abs(g.data[i]) + eps);
      expect(p.data[i]).toBeCloseTo(want, 14);
      expect(m.data[i]).toBeCloseTo(0.1 * g.data[i], 15);
      expect(v.data[i]).toBeCloseTo(0.001 * g.data[i] * g.data[i], 15);
    }
    // bias correction makes m_hat = g and v_hat = g^2 exactly under a constant gradient, so with no decay
    // every step moves by the same amount
    const q = host(p0.data.slice(), [n]);
    const m2 = z64([n]);
    const v2 = z64([n]);
    for (let t = 1; t <= 5; t++) adamwStep(q, m2, v2, g, { lr, t, weightDecay: 0, beta1: 0.8, beta2: 0.95, eps: 0 });
    for (let i = 0; i < n; i++) expect(q.data[i]).toBeCloseTo(p0.data[i] - 5 * lr * Math.sign(g.data[i]), 12);
  });

  it('gradScale equals pre-scaled gradients', () => {
    const rng = new Rng(17);
    const n = 7;
    const p0 = rand(rng, [n]);
    const g = rand(rng, [n]);
    const a = host(p0.data.slice(), [n]);
    const b = host(p0.data.slice(), [n]);
    adamwStep(a, z64([n]), z64([n]), g, { lr: 0.1, t: 3, gradScale: 0.25 });
    adamwStep(
      b,
      z64([n]),
      z64([n]),
      host(
        g.data.map((x) => 0.25 * x),
        [n],
      ),
      { lr: 0.1, t: 3 },
    );
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
    expect(() => adamwStep(a, z64([n]), z64([n]), g, { lr: 0.1, t: 0 })).toThrow(/t must be/);
  });
});

describe('grad-norm', () => {
  it('computes the global L2 norm over tensors and clips only above max_norm', () => {
    const grads = [host(Float64Array.from([3, 0.5]), [2]), host(Float64Array.from([-4, 1, -0.5]), [1, 3])];
    const out = z64([1]);
    const norm = gradNorm(out, grads);
    expect(norm).toBeCloseTo(Math.sqrt(9 + 0.25 + 16 + 1 + 0.25), 14);
    expect(out.data[0]).toBe(norm);
    expect(gradClip(grads, norm, { maxNorm: 10 })).toBe(1);
    const s = gradClip(grads, norm, { maxNorm: 2 });
    expect(s).toBeCloseTo(2 / (norm + 1e-6), 15);
    expect(gradNorm(out, grads)).toBeCloseTo(2, 5);
    expect(clipScale(1, 1)).toBe(1);
  });
});

describe('reference model', () => {
  const configs: { name: string; dims: ModelDims; B: number; T: number }[] = [
    {
      name: 'GQA NH=4 NKV=2 HD=2, tied, B=2 T=3',
      dims: {
        vocabSize: 11,
        dModel: 8,
        nLayers: 2,
        nHeads: 4,
        nKvHeads: 2,
        dFF: 10,
        ropeTheta: 10000,
        normEps: 1e-5,
        tiedEmbeddings: true,
      },
      B: 2,
      T: 3,
    },
    {
      name: 'NH=NKV=2 HD=6, untied, odd F, B=1 T=4',
      dims: {
        vocabSize: 9,
        dModel: 12,
        nLayers: 1,
        nHeads: 2,
        nKvHeads: 2,
        dFF: 7,
        ropeTheta: 100,
        normEps: 1e-6,
        tiedEmbeddings: false,
      },
      B: 1,
      T: 4,
    },
    {
      name: 'T=1, MQA NH=2 NKV=1',
      dims: {
        vocabSize: 5,
        dModel: 4,
        nLayers: 2,
        nHeads: 2,
        nKvHeads: 1,
        dFF: 3,
        ropeTheta: 10000,
        normEps: 1e-5,
        tiedEmbeddings: true,
      },
      B: 2,
      T: 1,
    },
  ];

  it.each(configs)(
    'backward matches finite differences on sampled entries of every tensor: $name',
    ({ dims, B, T }) => {
      const rng = new Rng(18);
      const params = initParams(dims, rng, { std: 0.4, dtype: 'f64' });
      const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 3 + 1) % dims.vocabSize);
      const W = rand(rng, [B, T, dims.vocabSize]);
      const loss = () => weightedSum(modelForward(dims, params, tokens, B, T).logits.data, W.data);
      const { cache } = modelForward(dims, params, tokens, B, T);
      const grads = modelBackward(dims, params, cache, W);
      for (const { name } of paramShapes(dims)) {
        const x = params[name].data as Float64Array;
        const idx = [...new Set(Array.from({ length: 4 }, () => rng.int(x.length)))];
        if (name === 'model.embed_tokens.weight') idx.push(tokens[0] * dims.dModel); // an entry that is looked up
        expectGrad(name, grads[name].data, loss, x, { atol: 1e-6, rtol: 1e-5 }, idx);
      }
    },
  );

  it('f32 and f64 runs agree', () => {
    const dims = configs[0].dims;
    const p64 = initParams(dims, new Rng(19), { dtype: 'f64' });
    const p32 = Object.fromEntries(Object.entries(p64).map(([k, t]) => [k, host(Float32Array.from(t.data), t.shape)]));
    for (const t of Object.values(p64)) t.data.set(Float32Array.from(t.data)); // same (f32-representable) weights
    const tokens = Uint32Array.from([1, 5, 2, 9, 0, 3]);
    const a = modelForward(dims, p64, tokens, 2, 3);
    const b = modelForward(dims, p32, tokens, 2, 3);
    expect(b.logits.data).toBeInstanceOf(Float32Array);
    const c = compareArrays(b.logits.data, a.logits.data, { atol: 1e-5, rtol: 1e-4 });
    expect(c.pass, c.summary).toBe(true);
    const ga = modelBackward(dims, p64, a.cache, a.logits);
    const gb = modelBackward(dims, p32, b.cache, b.logits);
    for (const k of Object.keys(ga)) {
      const cg = compareArrays(gb[k].data, ga[k].data, { atol: 1e-4, rtol: 1e-3 });
      expect(cg.pass, `${k}: ${cg.summary}`).toBe(true);
    }
  });

  it('rejects wrong parameter shapes and token counts with clear messages', () => {
    const dims = configs[0].dims;
    const params = initParams(dims, new Rng(20));
    expect(() => modelForward(dims, params, new Uint32Array(5), 2, 3)).toThrow(/5 tokens/);
    const { ['model.norm.weight']: _dropped, ...rest } = params;
    void _dropped;
    expect(() => modelForward(dims, rest, new Uint32Array(6), 2, 3)).toThrow(/missing parameter model.norm.weight/);
    expect(() =>
      modelForward(
        dims,
        { ...params, 'lm_head.weight': params['model.embed_tokens.weight'] },
        new Uint32Array(6),
        2,
        3,
      ),
    ).toThrow(/tied/);
  });
});
