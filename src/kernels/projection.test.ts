// GPU-vs-twin tier for the fused decode projections (shaders/projection.wgsl against src/reference/projection.ts),
// the fused kernels against the GPU kernels they replace run in sequence (bit for bit, in the sum order of each
// matmul variant), and the kernel's fit within WebGPU's default 8 storage buffers per stage.

import { describe, expect, it } from 'vitest';
import { projectionCases } from './projection.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { tensorArena } from '../gpu';
import { Rng } from '../core/random';
import { randomHost } from './verify';
import { toHalfBits } from '../core/half';
import { PROJECTION_SHADER, projectionGateUp, projectionQkv, projectionWorkgroup } from './projection';
import { rmsnormForward } from './rmsnorm';
import { MATMUL_VARIANTS, matmul as gpuMatmul, matmulSumOrder } from './matmul';
import { biasAdd as gpuBiasAdd } from './bias';
import { swigluForward as gpuSwiglu } from './swiglu';

const gpu = useNodeDevice();

describe('fused decode projections on the GPU match their CPU twins', () => {
  itEachCaseMatchesTwin(gpu, projectionCases(), { logResults: true });
});

describe('the fused projections equal the kernels they replace, bit for bit', () => {
  // rmsnormForward, matmul A*B^T in every variant (the fused kernel in that variant's order along K: 'k4' for vec4
  // and the register tiles, 'k1' for naive, blocked, strided and tiled), biasAdd and swigluForward in sequence, on
  // the GPU. K 48 with q 48, k/v 24 and gate/up 128 is the shipped checkpoints' layer (the copy warm start's). Rows of
  // K >= 1024 get 4 lanes in rmsnorm (rows.ts): the fused norm sums them in the same order. The bf16 shape's
  // weights are stored bf16, as a LoRA or frozen base's are (both sides widen them on load). The rows pick the
  // workgroup's shape (projectionWorkgroup): the shapes cover each of its row-tile counts, 1 to 8.
  const shapes: { M: number; K: number; N: number[]; F?: number; dtype?: 'bf16' }[] = [
    { M: 5, K: 36, N: [40, 8, 12] },
    { M: 8, K: 48, N: [48, 24, 24], F: 128 },
    { M: 4, K: 48, N: [48, 24, 24], F: 128, dtype: 'bf16' },
    { M: 64, K: 576, N: [64, 16, 16] },
    { M: 3, K: 1024, N: [16, 8, 8] },
    { M: 13, K: 48, N: [48, 24, 24], F: 36 },
  ];
  it('the shapes run every workgroup shape the rows can pick', () => {
    const picked = new Set(shapes.map((s) => projectionWorkgroup(s.M).WG_Y));
    expect([...picked].sort((a, b) => a - b)).toEqual([1, 2, 4, 8]);
    for (const M of [1, 4, 5, 8, 9, 16, 17, 64, 1000]) {
      const { WG_X, WG_Y } = projectionWorkgroup(M);
      expect(WG_X * WG_Y).toBe(64);
      expect(4 * WG_Y >= M || WG_Y === 8).toBe(true);
    }
  });
  const variants = MATMUL_VARIANTS;
  const bits = (a: ArrayLike<number>) => new Uint32Array(Float32Array.from(a).buffer);
  for (const s of shapes)
    for (const variant of variants)
      it(`M=${s.M} K=${s.K}${s.dtype ? ` ${s.dtype}` : ''}: q/k/v with norm and biases, gate/up with norm, against matmul ${variant}`, async () => {
        const order = matmulSumOrder(variant);
        const F = s.F ?? s.N[0];
        const ctx = gpu.ctx;
        const rng = new Rng(s.M * 1000 + s.K);
        const up = (shape: number[], scale = 1) => ctx.fromArray(randomHost(rng, shape, scale).data, shape);
        const x = up([s.M, s.K], 3);
        const gain = up([s.K]);
        const weight = (shape: number[]) =>
          s.dtype
            ? ctx.fromArray<'bf16'>(toHalfBits(randomHost(rng, shape).data, s.dtype), shape, { dtype: s.dtype })
            : up(shape);
        const ws = s.N.map((n) => weight([n, s.K]));
        const bs = s.N.map((n) => up([n]));
        const [wg, wu] = [weight([F, s.K]), weight([F, s.K])];
        const out = (n: number) => ctx.tensor([s.M, n]);
        const fused = s.N.map(out);
        const fusedAct = out(F);
        const separate = s.N.map(out);
        const [gate, upOut, act] = [out(F), out(F), out(F)];
        const normed = ctx.tensor([s.M, s.K]);
        const rstd = ctx.tensor([s.M]);
        // The gain and biases as views of one buffer, as the model's arena holds them.
        const rec = ctx.recorder('projection bits');
        const three = <T>(a: T[]) => a as unknown as [T, T, T];
        const arena = tensorArena(ctx, [[s.K], ...s.N.map((n) => [n])], ['gain', 'b0', 'b1', 'b2'], 'vectors');
        [gain, ...bs].forEach((t, i) => rec.copy(arena.views[i], t));
        projectionQkv(rec, three(fused), x, three(ws), {
          norm: { gain: arena.views[0], eps: 1e-5 },
          biases: three(arena.views.slice(1)),
          order,
        });
        projectionGateUp(rec, fusedAct, x, wg, wu, { norm: { gain, eps: 1e-5 }, order });
        rmsnormForward(rec, normed, rstd, x, gain, { eps: 1e-5 });
        separate.forEach((y, i) => {
          gpuMatmul(rec, y, normed, ws[i], { transB: true, variant });
          gpuBiasAdd(rec, y, bs[i]);
        });
        gpuMatmul(rec, gate, normed, wg, { transB: true, variant });
        gpuMatmul(rec, upOut, normed, wu, { transB: true, variant });
        gpuSwiglu(rec, act, gate, upOut);
        rec.submit();
        const got = await ctx.readMany([...fused, fusedAct, ...separate, act]);
        for (let i = 0; i < 4; i++) expect(bits(got[i] as Float32Array)).toEqual(bits(got[4 + i] as Float32Array));
        for (const t of [
          x,
          gain,
          ...ws,
          ...bs,
          wg,
          wu,
          ...fused,
          fusedAct,
          ...separate,
          gate,
          upOut,
          act,
          normed,
          rstd,
        ])
          t.destroy();
        arena.all.destroy();
      });
});

describe('projection within WebGPU default limits', () => {
  it('binds at most 8 storage buffers per entry point', () => {
    const storage = [...PROJECTION_SHADER.source.matchAll(/@binding\((\d+)\) var<storage/g)].map((m) => Number(m[1]));
    expect(Math.max(...storage)).toBeLessThanOrEqual(8);
  });
});
