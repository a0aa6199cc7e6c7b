// Tests of the weight-stats family: every case of weight-stats.cases.ts on the GPU against the CPU twin; the rank-1
// share from the GPU's power iteration against an exact eigen-decomposition of dW^T dW (src/reference/jacobi.ts)
// within 1e-3, on noise-only, mixed and nearly rank-1 updates at awkward shapes; the rank-1 update it leaves behind
// against the exact top singular triple; bit-identical repeats; and the wrapper's checks. Never skips.

import { describe, expect, it } from 'vitest';
import type { Tensor } from '../gpu';
import { squaredSingularValues, symmetricEigenvalues } from '../reference/jacobi';
import { Rng } from '../core/random';
import { host } from '../core/host-tensor';
import * as ref from '../reference/weight-stats';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { RANK1_ITERATIONS, rank1Apply, rank1Share, relativeUpdate, weightUpdateStats } from './weight-stats';
import { updatedWeights, weightStatsCases } from './weight-stats.cases';

const gpu = useNodeDevice();

const cases = weightStatsCases();

describe('weight-stats on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.family))).toEqual(new Set(['weight-stats']));
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

/** The GPU's stats, u and v for one weight, after weightUpdateStats (and the rank-1 weights when asked). */
async function onGpu(w: Float32Array, w0: Float32Array, shape: readonly number[], opts: { apply?: boolean } = {}) {
  const { R, C } = ref.matrixDims({ shape });
  const ctx = gpu.ctx;
  const gw = ctx.fromArray(w, shape, { label: 'ws:w' });
  const gw0 = ctx.fromArray(w0, shape, { label: 'ws:w0' });
  const out = ctx.tensor([3], { label: 'ws:out' });
  const u = ctx.tensor([R], { label: 'ws:u' });
  const v = ctx.tensor([C], { label: 'ws:v' });
  const rank1 = ctx.tensor(shape, { label: 'ws:rank1' });
  const rec = ctx.recorder('weight stats test');
  weightUpdateStats(rec, out, u, v, gw, gw0, { slot: 0, iterations: RANK1_ITERATIONS });
  if (opts.apply) rank1Apply(rec, rank1, gw0, u, v);
  rec.submit();
  const [stats, uu, vv, r1] = (await ctx.readMany([out, u, v, rank1])) as Float32Array[];
  for (const t of [gw, gw0, out, u, v, rank1] as Tensor[]) t.destroy();
  return { stats, u: uu, v: vv, rank1: r1 };
}

const SHAPES = [
  [17, 65],
  [64, 64],
  [129, 33],
  [1, 65],
  [65, 1],
  [48, 128],
  [5, 5],
];
const SIGNALS = [0, 0.3, 1, 3];

describe('rank-1 share against an exact SVD', () => {
  it('the Jacobi solver gives the eigenvalues of a known symmetric matrix', () => {
    // Q diag(5, 2, -1) Q^T with Q a rotation: eigenvalues 5, 2, -1.
    const c = Math.cos(0.7);
    const s = Math.sin(0.7);
    const q = [c, -s, 0, s, c, 0, 0, 0, 1];
    const d = [5, 2, -1];
    const a = new Float64Array(9);
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) for (let k = 0; k < 3; k++) a[i * 3 + j] += q[i * 3 + k] * d[k] * q[j * 3 + k];
    const got = symmetricEigenvalues(a, 3);
    got.forEach((x, i) => expect(x).toBeCloseTo([5, 2, -1][i], 12));
    // A rank-1 matrix x y^T has one singular value ||x|| ||y||.
    const sv = squaredSingularValues([1, 2, 3, 2, 4, 6], 2, 3);
    expect(sv[0]).toBeCloseTo(14 * 5, 10);
    expect(sv[1]).toBeCloseTo(0, 10);
  });

  for (const shape of SHAPES) {
    it(`${shape.join('x')}: GPU sigma_1^2 / ||dW||^2 within 1e-3 of the exact share for updates of signal ${SIGNALS.join(', ')}`, async () => {
      const [R, C] = shape;
      const rng = new Rng(R * 1000 + C);
      for (const signal of SIGNALS) {
        const { w, w0 } = updatedWeights(rng, shape, signal);
        const d = Float64Array.from(w.data, (x, i) => x - w0.data[i]);
        const sv = squaredSingularValues(d, R, C);
        const total = sv.reduce((a, b) => a + b, 0);
        const { stats } = await onGpu(w.data, w0.data, shape);
        const label = `${shape.join('x')} signal ${signal}: exact share ${(sv[0] / total).toFixed(5)}, sigma_2/sigma_1 ${Math.sqrt((sv[1] ?? 0) / sv[0]).toFixed(3)}`;
        expect(Math.abs(rank1Share(stats[0], stats[2]) - sv[0] / total), label).toBeLessThan(1e-3);
        const startSq = w0.data.reduce((a, x) => a + x * x, 0);
        expect(relativeUpdate(stats[0], stats[1]), label).toBeCloseTo(Math.sqrt(total / startSq), 5);
      }
    });
  }

  it('leaves the top singular triple behind: W_0 + u v^T is the best rank-1 update', async () => {
    const shape = [33, 70];
    const [R, C] = shape;
    const { w, w0 } = updatedWeights(new Rng(5), shape, 3);
    const { stats, u, v, rank1 } = await onGpu(w.data, w0.data, shape, { apply: true });
    // v is a unit vector, and u = dW v has norm sigma_1.
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(u.reduce((a, x) => a + x * x, 0) / stats[2]).toBeCloseTo(1, 4);
    // The residual dW - u v^T holds exactly the rest of the spectrum: ||dW||^2 - sigma_1^2.
    let residual = 0;
    for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) residual += (w.data[r * C + c] - rank1[r * C + c]) ** 2;
    const d = Float64Array.from(w.data, (x, i) => x - w0.data[i]);
    const sv = squaredSingularValues(d, R, C);
    expect(residual / stats[0]).toBeCloseTo(sv.slice(1).reduce((a, b) => a + b, 0) / stats[0], 4);
  });
});

describe('weight-stats wrapper', () => {
  it('is bit-identical across repeats, and a zero update gives zeros, not NaN', async () => {
    const shape = [40, 24];
    const { w, w0 } = updatedWeights(new Rng(9), shape, 1);
    const a = await onGpu(w.data, w0.data, shape, { apply: true });
    const b = await onGpu(w.data, w0.data, shape, { apply: true });
    for (const k of ['stats', 'u', 'v', 'rank1'] as const) expect(Array.from(b[k]), k).toEqual(Array.from(a[k]));
    const z = await onGpu(w0.data, w0.data, shape, { apply: true });
    expect(z.stats[0]).toBe(0);
    expect(z.stats[2]).toBe(0);
    expect(Array.from(z.v).every((x) => x === 0)).toBe(true);
    expect(Array.from(z.rank1)).toEqual(Array.from(w0.data));
    expect(rank1Share(z.stats[0], z.stats[2])).toBe(0);
  });

  it('refuses mismatched shapes, a bad slot and zero iterations, naming the problem', () => {
    const ctx = gpu.ctx;
    const t = (shape: number[]) => ctx.tensor(shape, { label: 'ws:check' });
    const [out, u, v, w, w0] = [t([3]), t([4]), t([5]), t([4, 5]), t([4, 5])];
    const rec = ctx.recorder('weight stats checks');
    expect(() => weightUpdateStats(rec, out, v, v, w, w0, { slot: 0, iterations: 1 })).toThrow(
      /u .* one element per row/,
    );
    expect(() => weightUpdateStats(rec, out, u, u, w, w0, { slot: 0, iterations: 1 })).toThrow(
      /v .* one element per column/,
    );
    expect(() => weightUpdateStats(rec, out, u, v, w, t([5, 5]), { slot: 0, iterations: 1 })).toThrow(
      /w0 .* size of w/,
    );
    expect(() => weightUpdateStats(rec, out, u, v, w, w0, { slot: 1, iterations: 1 })).toThrow(/slot 1/);
    expect(() => weightUpdateStats(rec, out, u, v, w, w0, { slot: 0, iterations: 0 })).toThrow(/iterations/);
    expect(() => rank1Apply(rec, t([2, 3, 4]), w0, u, v)).toThrow(/vector or a matrix/);
    rec.submit();
    expect(() =>
      ref.weightUpdateStats(
        host(new Float32Array(3), [3]),
        host(new Float32Array(4), [4]),
        host(new Float32Array(5), [5]),
        host(new Float32Array(20), [4, 5]),
        host(new Float32Array(20), [4, 5]),
        { slot: 0, iterations: 0 },
      ),
    ).toThrow(/iterations/);
  });
});
