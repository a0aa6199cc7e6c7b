// GPU-vs-twin tier for the fused decode projections (shaders/projection.wgsl against src/reference/projection.ts),
// the twin itself against the unfused kernels' twins (rmsnormForward, matmul, biasAdd, swigluForward), and the
// kernel's fit within WebGPU's default 8 storage buffers per stage.

import { describe, expect, it } from 'vitest';
import { projectionCases } from './projection.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { projectionGateUp, projectionQkv } from '../reference/projection';
import { rmsnormForward } from '../reference/rmsnorm';
import { matmul } from '../reference/matmul';
import { biasAdd } from '../reference/bias';
import { swigluForward } from '../reference/swiglu';
import { compareArrays } from '../reference/compare';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import { randomHost } from './verify';
import { PROJECTION_SHADER } from './projection';

const gpu = useNodeDevice();

describe('fused decode projections on the GPU match their CPU twins', () => {
  itEachCaseMatchesTwin(gpu, projectionCases(), { logResults: true });
});

describe('the fused twins equal the unfused kernels run one after another', () => {
  const rng = new Rng(7);
  const [M, K, F] = [3, 12, 8];
  const x = randomHost(rng, [M, K], 3);
  const gain = randomHost(rng, [K]);
  const eps = 1e-5;
  const normed = host(new Float32Array(M * K), [M, K]);
  rmsnormForward(normed, host(new Float32Array(M), [M]), x, gain, { eps });
  const tol = { atol: 1e-5, rtol: 1e-5 };

  it('q, k, v with the norm folded and biases: rmsnorm, three matmuls, three bias adds', () => {
    const ws = [8, 4, 4].map((n) => randomHost(rng, [n, K]));
    const bs = [8, 4, 4].map((n) => randomHost(rng, [n]));
    const fused = [8, 4, 4].map((n) => host(new Float32Array(M * n), [M, n]));
    const three = <T>(a: T[]) => a as unknown as [T, T, T];
    projectionQkv(three(fused), x, three(ws), { norm: { gain, eps }, biases: three(bs) });
    ws.forEach((w, s) => {
      const y = host(new Float32Array(M * w.shape[0]), [M, w.shape[0]]);
      matmul(y, normed, w, { transB: true });
      biasAdd(y, bs[s]);
      const c = compareArrays(fused[s].data, y.data, tol);
      expect(c.pass, c.summary).toBe(true);
    });
  });

  it('gate/up with SwiGLU and the norm folded: rmsnorm, two matmuls, swiglu', () => {
    const wg = randomHost(rng, [F, K]);
    const wu = randomHost(rng, [F, K]);
    const fused = host(new Float32Array(M * F), [M, F]);
    projectionGateUp(fused, x, wg, wu, { norm: { gain, eps } });
    const g = host(new Float32Array(M * F), [M, F]);
    const u = host(new Float32Array(M * F), [M, F]);
    matmul(g, normed, wg, { transB: true });
    matmul(u, normed, wu, { transB: true });
    const act = host(new Float32Array(M * F), [M, F]);
    swigluForward(act, g, u);
    const c = compareArrays(fused.data, act.data, tol);
    expect(c.pass, c.summary).toBe(true);
  });
});

describe('projection within WebGPU default limits', () => {
  it('binds at most 8 storage buffers per entry point', () => {
    const storage = [...PROJECTION_SHADER.source.matchAll(/@binding\((\d+)\) var<storage/g)].map((m) => Number(m[1]));
    expect(Math.max(...storage)).toBeLessThanOrEqual(8);
  });
});
