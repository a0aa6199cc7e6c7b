// GPU-vs-twin tier for the fused decode projections (shaders/projection.wgsl against src/reference/projection.ts),
// the fused kernels against the GPU kernels they replace run in sequence (bit for bit, in the sum order of each
// matmul variant), and the kernel's fit within WebGPU's default 8 storage buffers per stage.

import { describe, expect, it } from 'vitest';
import { projectionCases } from './projection.cases';
import { itEachCaseMatchesTwin, useDefaultLimitsDevice, useNodeDevice } from '../testing/test-device';
import { tensorArena, type Tensor } from '../gpu';
import { Rng } from '../core/random';
import { randomHost } from './verify';
import { toHalfBits } from '../core/half';
import {
  PROJECTION_SHADER,
  QKV_LORA_STORAGE_BUFFERS,
  projectionAddLora,
  projectionGateUp,
  projectionPair,
  projectionQkv,
  projectionQkvLoraFits,
  projectionWorkgroup,
} from './projection';
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

describe("the LoRA epilogues equal the adapters' matmuls run after the base products, bit for bit", () => {
  // The trainer's LoRA forward (GpuModel.loraForward): xa = op(x) A^T, then y += s xa B^T (an accumulating matmul with
  // alpha s) after the base product, before the bias and SwiGLU; o and down accumulate their base product into the
  // residual first. The fused kernels sum the base along K in the base variant's order and the delta along the rank
  // in the adapters' variant's order (here the next variant in the list, so the two orders differ in some runs).
  const shapes = [
    { M: 5, K: 36, N: [40, 8, 12], F: 24 },
    { M: 4, K: 48, N: [48, 24, 24], F: 128, dtype: 'bf16' as const },
    { M: 64, K: 576, N: [64, 16, 16], F: 64 },
  ];
  const rank = 8;
  const variants = MATMUL_VARIANTS;
  const bits = (a: ArrayLike<number>) => new Uint32Array(Float32Array.from(a).buffer);
  for (const s of shapes)
    variants.forEach((variant, v) => {
      const loraVariant = variants[(v + 1) % variants.length];
      it(`M=${s.M} K=${s.K}${s.dtype ? ` ${s.dtype}` : ''}: base ${variant}, adapters ${loraVariant}`, async () => {
        const order = matmulSumOrder(variant);
        const loraOrder = matmulSumOrder(loraVariant);
        const ctx = gpu.ctx;
        const rng = new Rng(s.M * 1000 + s.K + v);
        const up = (shape: number[], scale = 1) => ctx.fromArray(randomHost(rng, shape, scale).data, shape);
        const weight = (shape: number[]) =>
          s.dtype
            ? ctx.fromArray<'bf16'>(toHalfBits(randomHost(rng, shape).data, s.dtype), shape, { dtype: s.dtype })
            : up(shape);
        const x = up([s.M, s.K], 3);
        const gain = up([s.K]);
        const out = (n: number) => ctx.tensor([s.M, n]);
        // The base weights, the adapters (A (rank, K), B (N, rank)) in one arena, the xa rows in another.
        // (out, in) of q, k, v, gate, up and down.
        const dims: [number, number][] = [
          ...s.N.map((n): [number, number] => [n, s.K]),
          [s.F, s.K],
          [s.F, s.K],
          [s.K, s.F],
        ];
        const ws = dims.map((d) => weight(d));
        const adapters = tensorArena(
          ctx,
          dims.flatMap(([n, k]) => [
            [rank, k],
            [n, rank],
          ]),
          dims.flatMap((_, i) => [`A${i}`, `B${i}`]),
          'adapters',
        );
        const rec = ctx.recorder('lora epilogue bits');
        adapters.views.forEach((t, i) => rec.copy(t, up([...t.shape], i % 2 ? 0.5 : 1)));
        const A = (i: number) => adapters.views[2 * i];
        const B = (i: number) => adapters.views[2 * i + 1];
        const xas = tensorArena(
          ctx,
          dims.map(() => [s.M, rank]),
          dims.map((_, i) => `xa${i}`),
          'xa',
        );
        const xa = (i: number) => xas.views[i];
        const biases = tensorArena(ctx, [[s.K], ...s.N.map((n) => [n])], ['gain', 'b0', 'b1', 'b2'], 'vectors');
        rec.copy(biases.views[0], gain);
        s.N.forEach((n, i) => rec.copy(biases.views[1 + i], up([n])));
        const scale = 2;
        const three = <T>(a: T[]) => a as unknown as [T, T, T];
        const lora = (idx: number[]) => ({ xa: idx.map(xa), B: idx.map(B), scale, order: loraOrder });
        // Fused: the q/k/v adapters' x A^T with the norm folded, then q/k/v with the epilogue and biases; the gate/up
        // adapters' pair, then gate/up with the epilogue; o/down accumulating with the epilogue.
        const fusedQkv = s.N.map(out);
        const fusedAct = out(s.F);
        const residual = up([s.M, s.K], 2);
        const fusedRes = out(s.K);
        rec.copy(fusedRes, residual);
        const norm = { gain: biases.views[0], eps: 1e-5 };
        projectionQkv(rec, three([0, 1, 2].map(xa)), x, three([0, 1, 2].map(A)), { norm, biases: null, order });
        projectionQkv(rec, three(fusedQkv), x, three(ws.slice(0, 3)), {
          norm,
          biases: three(biases.views.slice(1)),
          order,
          lora: lora([0, 1, 2]),
        });
        projectionPair(rec, [xa(3), xa(4)], x, [A(3), A(4)], { norm, order });
        projectionGateUp(rec, fusedAct, x, ws[3], ws[4], { norm, order, lora: lora([3, 4]) });
        gpuMatmul(rec, xa(5), fusedAct, A(5), { transB: true, variant });
        projectionAddLora(rec, fusedRes, fusedAct, ws[5], { order, lora: lora([5]) });
        // Separate, as the trainer runs them (its xa rows in fresh tensors).
        const normed = ctx.tensor([s.M, s.K]);
        const rstd = ctx.tensor([s.M]);
        rmsnormForward(rec, normed, rstd, x, biases.views[0], { eps: 1e-5 });
        const sepXa = dims.map(() => out(rank));
        const adapted = (y: Tensor, input: Tensor, i: number, accumulate: boolean) => {
          gpuMatmul(rec, y, input, ws[i], { transB: true, variant, accumulate });
          gpuMatmul(rec, sepXa[i], input, A(i), { transB: true, variant });
          gpuMatmul(rec, y, sepXa[i], B(i), { transB: true, variant: loraVariant, accumulate: true, alpha: scale });
        };
        const sepQkv = s.N.map(out);
        sepQkv.forEach((y, i) => {
          adapted(y, normed, i, false);
          gpuBiasAdd(rec, y, biases.views[1 + i]);
        });
        const [gate, upOut, act] = [out(s.F), out(s.F), out(s.F)];
        adapted(gate, normed, 3, false);
        adapted(upOut, normed, 4, false);
        gpuSwiglu(rec, act, gate, upOut);
        const sepRes = out(s.K);
        rec.copy(sepRes, residual);
        adapted(sepRes, act, 5, true);
        rec.submit();
        const got = await ctx.readMany([
          ...fusedQkv,
          fusedAct,
          fusedRes,
          xa(3),
          xa(4),
          ...sepQkv,
          act,
          sepRes,
          sepXa[3],
          sepXa[4],
        ]);
        for (let i = 0; i < 7; i++)
          expect(bits(got[i] as Float32Array), `output ${i}`).toEqual(bits(got[7 + i] as Float32Array));
        for (const t of [
          x,
          gain,
          residual,
          ...ws,
          ...fusedQkv,
          fusedAct,
          fusedRes,
          normed,
          rstd,
          ...sepXa,
          ...sepQkv,
          gate,
          upOut,
          act,
          sepRes,
        ])
          t.destroy();
        for (const a of [adapters, xas, biases]) a.all.destroy();
      });
    });
});

describe('projection within WebGPU default limits', () => {
  const small = useDefaultLimitsDevice(gpu);

  it('runs every case but projection_qkv_lora on a device with 8 storage buffers per stage, which refuses that one', async () => {
    const dev = small.ctx;
    expect(dev.device.limits.maxStorageBuffersPerShaderStage).toBe(8);
    expect(projectionQkvLoraFits(dev.device)).toBe(false);
    const all = projectionCases();
    const qkvLora = (name: string) => name.startsWith('projectionQkv') && name.includes(' lora ');
    const fitting = all.filter((c) => !qkvLora(c.name));
    expect(all.length - fitting.length).toBeGreaterThanOrEqual(15);
    for (const c of fitting.filter((_, i) => i % 3 === 0 || /lora|Pair/.test(fitting[i].name))) {
      const r = await c.run(dev);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    }
    await expect(all.find((c) => qkvLora(c.name))!.run(dev)).rejects.toThrow(/binds 10 storage buffers/);
    await dev.flush();
  });

  it('binds at most 8 storage buffers per entry point but projection_qkv_lora, which binds 10', () => {
    const storage = [...PROJECTION_SHADER.source.matchAll(/@binding\((\d+)\) var<storage[^>]*> (\w+)/g)];
    const over = storage.filter((m) => Number(m[1]) > 8).map((m) => m[2]);
    expect(over).toEqual(['lora_xa', 'lora_b']);
    // Those two are the LoRA epilogue's operands: projection_gate_up_lora binds 7 (1-5, 9, 10), projection_add_lora
    // 6 (1, 4, 5, 8, 9, 10), projection_qkv_lora 10, which the model runs only where the device allows it.
    expect(QKV_LORA_STORAGE_BUFFERS).toBe(10);
    expect(projectionQkvLoraFits(gpu.ctx.device)).toBe(gpu.ctx.device.limits.maxStorageBuffersPerShaderStage >= 10);
  });
});
