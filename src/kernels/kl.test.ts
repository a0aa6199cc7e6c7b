// Tests of the kl family: every case of kl.cases.ts on the GPU against the CPU twin, the GPU's exact zero when the
// reference equals the policy, determinism and the wrapper's checks; then the twin alone: its backward against
// central finite differences of its forward, the plain formula sum p (log p - log q), shift invariance and
// finiteness at logits of magnitude 1e4. A missing adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import type { Tensor } from '../gpu';
import { compareArrays, type Tolerance } from '../reference/compare';
import { numericalGradient, weightedSum } from '../reference/finite-diff';
import * as ref from '../reference/kl';
import { Rng } from '../core/random';
import { host, numel, type HostTensor } from '../core/host-tensor';
import { klExactBackward, klExactForward } from './kl';
import { klCases } from './kl.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { randomHost } from './verify';

const gpu = useNodeDevice();

const cases = klCases();

describe('kl on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.family))).toEqual(new Set(['kl']));
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(50);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

describe('kl wrapper', () => {
  it('gives exactly 0 and a zero gradient when refLogits equal logits, bit-identically across runs', async () => {
    for (const [N, V] of [
      [33, 300],
      [17, 1024],
      [2, 16384],
    ]) {
      const rng = new Rng(N + V);
      const logits = randomHost(rng, [N, V], 3).data;
      const other = randomHost(rng, [N, V], 3).data;
      const dKlIn = randomHost(rng, [N]).data;
      const start = randomHost(rng, [N, V]).data;
      const run = async (refData: Float32Array) => {
        const gl = gpu.ctx.fromArray(logits, [N, V], { label: 'kl:logits' });
        const gr = gpu.ctx.fromArray(refData, [N, V], { label: 'kl:ref' });
        const gd = gpu.ctx.fromArray(dKlIn, [N], { label: 'kl:dKl' });
        const kl = gpu.ctx.tensor([N], { label: 'kl:kl' });
        const dl = gpu.ctx.fromArray(start, [N, V], { label: 'kl:dLogits' });
        const dacc = gpu.ctx.fromArray(start, [N, V], { label: 'kl:dLogitsAcc' });
        const rec = gpu.ctx.recorder('kl same');
        klExactForward(rec, kl, gl, gr, { temperature: 0.7 });
        klExactBackward(rec, dl, gd, gl, gr, { temperature: 0.7 });
        klExactBackward(rec, dacc, gd, gl, gr, { temperature: 0.7, accumulate: true });
        rec.submit();
        const got = await gpu.ctx.readMany([kl, dl, dacc]);
        for (const t of [gl, gr, gd, kl, dl, dacc] as Tensor[]) t.destroy();
        return got;
      };
      const [kl, dl, dacc] = await run(logits);
      expect(
        Array.from(kl).every((x) => x === 0),
        `${N}x${V} kl`,
      ).toBe(true);
      expect(
        Array.from(dl).every((x) => x === 0),
        `${N}x${V} dLogits`,
      ).toBe(true);
      expect(Array.from(dacc), `${N}x${V} accumulate leaves dLogits as it was`).toEqual(Array.from(start));
      const a = await run(other);
      const b = await run(other);
      a.forEach((x, i) => expect(Array.from(b[i]), `${N}x${V} rerun output ${i}`).toEqual(Array.from(x)));
      expect(Array.from(a[0]).every((x) => x > 0)).toBe(true);
    }
  });

  it('checks shapes and the temperature before recording', () => {
    const t = (s: number[]) => gpu.ctx.tensor(s, { label: 'chk' });
    const rec = gpu.ctx.recorder('kl checks');
    expect(() => klExactForward(rec, t([2]), t([2, 5]), t([2, 4]))).toThrow(
      /refLogits .* must have the shape of logits/,
    );
    expect(() => klExactForward(rec, t([3]), t([2, 5]), t([2, 5]))).toThrow(/kl .* must have N=2/);
    expect(() => klExactForward(rec, t([2]), t([2, 5]), t([2, 5]), { temperature: 0 })).toThrow(/temperature/);
    expect(() => klExactBackward(rec, t([2, 4]), t([2]), t([2, 5]), t([2, 5]))).toThrow(/dLogits/);
    expect(() => klExactBackward(rec, t([2, 5]), t([5]), t([2, 5]), t([2, 5]))).toThrow(/dKl .* must have N=2/);
    rec.submit();
  });
});

// ---------------------------------------------------------------------------------------------- the twin

const FD: Tolerance = { atol: 1e-7, rtol: 1e-6 };

function rand(rng: Rng, shape: readonly number[], lo = -1, hi = 1): HostTensor<Float64Array> {
  const data = new Float64Array(numel(shape));
  for (let i = 0; i < data.length; i++) data[i] = rng.uniform(lo, hi) || 0.5 * hi;
  return host(data, shape);
}

const z64 = (shape: readonly number[]) => host(new Float64Array(numel(shape)), shape);

/** The plain definition, row by row: sum_v p_v (log p_v - log q_v) with two log-softmaxes. */
function naiveKl(logits: HostTensor, refLogits: HostTensor, tau: number): number[] {
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  const logSoftmax = (x: HostTensor, o: number) => {
    const z = Array.from(x.data.subarray(o, o + V), (a) => a / tau);
    const m = Math.max(...z);
    const lse = m + Math.log(z.reduce((s, a) => s + Math.exp(a - m), 0));
    return z.map((a) => a - lse);
  };
  return Array.from({ length: N }, (_, n) => {
    const lp = logSoftmax(logits, n * V);
    const lq = logSoftmax(refLogits, n * V);
    return lp.reduce((s, a, v) => s + Math.exp(a) * (a - lq[v]), 0);
  });
}

describe('kl twin', () => {
  it.each([
    { N: 5, V: 11, temperature: 0.7 },
    { N: 1, V: 2, temperature: 1 },
    { N: 3, V: 37, temperature: 1.3 },
    { N: 2, V: 64, temperature: 1 },
  ])('backward matches finite differences for N=$N V=$V tau=$temperature', ({ N, V, temperature }) => {
    const rng = new Rng(21 + V);
    const logits = rand(rng, [N, V], -3, 3);
    const refLogits = rand(rng, [N, V], -3, 3);
    const dKl = rand(rng, [N]);
    const kl = z64([N]);
    const opts = { temperature };
    const loss = () => (ref.klExactForward(kl, logits, refLogits, opts), weightedSum(kl.data, dKl.data));
    const dLogits = z64([N, V]);
    ref.klExactBackward(dLogits, dKl, logits, refLogits, opts);
    const num = numericalGradient(loss, logits.data, 1e-6);
    const c = compareArrays(dLogits.data, num, FD);
    expect(c.pass, `dLogits: ${c.summary}`).toBe(true);
  });

  it('equals the plain sum p (log p - log q), is positive, and is exactly 0 against itself', () => {
    const rng = new Rng(31);
    const [N, V] = [6, 23];
    const logits = rand(rng, [N, V], -4, 4);
    const refLogits = rand(rng, [N, V], -4, 4);
    for (const tau of [1, 0.6, 2]) {
      const kl = z64([N]);
      ref.klExactForward(kl, logits, refLogits, { temperature: tau });
      const want = naiveKl(logits, refLogits, tau);
      const c = compareArrays(kl.data, want, { atol: 1e-13, rtol: 1e-12 });
      expect(c.pass, `tau=${tau}: ${c.summary}`).toBe(true);
      expect(Array.from(kl.data).every((x) => x > 0)).toBe(true);
      ref.klExactForward(kl, logits, logits, { temperature: tau });
      expect(Array.from(kl.data)).toEqual(new Array(N).fill(0));
    }
  });

  it('accumulate adds the gradient to what dLogits held', () => {
    const rng = new Rng(41);
    const [N, V] = [3, 9];
    const logits = rand(rng, [N, V], -2, 2);
    const refLogits = rand(rng, [N, V], -2, 2);
    const dKl = rand(rng, [N]);
    const fresh = z64([N, V]);
    ref.klExactBackward(fresh, dKl, logits, refLogits, { temperature: 0.8 });
    const acc = rand(rng, [N, V]);
    const before = acc.data.slice();
    ref.klExactBackward(acc, dKl, logits, refLogits, { temperature: 0.8, accumulate: true });
    const c = compareArrays(
      acc.data,
      before.map((x, i) => x + fresh.data[i]),
      { atol: 1e-15, rtol: 1e-14 },
    );
    expect(c.pass, c.summary).toBe(true);
  });

  it('is shift invariant and stays finite with logits of magnitude 1e4', () => {
    const rng = new Rng(51);
    const [N, V] = [4, 9];
    const logits = rand(rng, [N, V], -2, 2);
    const refLogits = rand(rng, [N, V], -2, 2);
    const dKl = rand(rng, [N]);
    const res = (x: HostTensor, y: HostTensor, tau: number) => {
      const kl = z64([N]);
      const d = z64([N, V]);
      ref.klExactForward(kl, x, y, { temperature: tau });
      ref.klExactBackward(d, dKl, x, y, { temperature: tau });
      return { kl: kl.data, d: d.data };
    };
    for (const tau of [1, 0.7]) {
      const a = res(logits, refLogits, tau);
      const b = res(
        host(
          logits.data.map((x) => x + 1e4),
          [N, V],
        ),
        host(
          refLogits.data.map((x) => x - 1e4),
          [N, V],
        ),
        tau,
      );
      for (const key of ['kl', 'd'] as const) {
        const c = compareArrays(b[key], a[key], { atol: 1e-9, rtol: 1e-9 });
        expect(c.pass, `tau=${tau} ${key}: ${c.summary}`).toBe(true);
      }
    }
    // Widely spread huge logits, in both precisions: finite, kl >= 0, each gradient row sums to 0.
    const huge = rand(rng, [N, V], -1e4, 1e4);
    const hugeRef = rand(rng, [N, V], -1e4, 1e4);
    for (const f32 of [false, true]) {
      const cast = (t: HostTensor) => (f32 ? host(Float32Array.from(t.data), t.shape) : t);
      const kl = cast(z64([N]));
      const d = cast(z64([N, V]));
      ref.klExactForward(kl, cast(huge), cast(hugeRef), { temperature: 0.7 });
      ref.klExactBackward(d, cast(dKl), cast(huge), cast(hugeRef), { temperature: 0.7 });
      expect(Array.from(kl.data).every((x) => Number.isFinite(x) && x >= 0)).toBe(true);
      expect(Array.from(d.data).every(Number.isFinite)).toBe(true);
      for (let n = 0; n < N; n++) {
        const row = Array.from(d.data.subarray(n * V, (n + 1) * V));
        expect(Math.abs(row.reduce((s, x) => s + x, 0))).toBeLessThan(1e-6 * Math.max(1, ...row.map(Math.abs)));
      }
    }
  });
});
