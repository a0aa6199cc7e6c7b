// Cases of the split-K few-rows product (src/kernels/matmul.ts matmulSplitK) against its CPU twin (matmul with transB on
// the weights as stored) and against matmul()'s own product on the GPU, both within the f32 rounding of sums of K
// terms (the orders differ). Awkward shapes: one row, rows and columns that fill no whole tile (M 1, 3, 5, 33; N 1,
// 7, 13), K of 4 (lanes with no k), K not a multiple of 64 (lanes with one group more than others), a decode step's
// 64 rows at SmolLM2-135M's widths (q/o 576 x 576, gate/up 1536 x 576, down 576 x 1536, k/v 192 x 576); weights
// f32, bf16 and f16; alpha and accumulation.

import { roundToWeightDtype, toHalfBits, type HalfDtype } from '../core/half';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import type { GpuContext } from '../gpu';
import { compareArrays } from '../reference/compare';
import { matmul as matmulTwin } from '../reference/matmul';
import { halfCodec } from './half-operand';
import { matmul, matmulSplitK } from './matmul';

import { randomHost, seedOf, type CaseResult, type KernelCase } from './verify';

interface Shape {
  M: number;
  N: number;
  K: number;
  alpha?: number;
  accumulate?: boolean;
}

const SHAPES: Shape[] = [
  { M: 1, N: 1, K: 4 },
  { M: 3, N: 7, K: 12 },
  { M: 5, N: 13, K: 68, alpha: 0.5 },
  { M: 33, N: 17, K: 132, accumulate: true },
  { M: 64, N: 576, K: 576 },
  { M: 64, N: 192, K: 576, alpha: 2, accumulate: true },
  { M: 64, N: 1536, K: 576 },
  { M: 64, N: 576, K: 1536, accumulate: true },
];

type WeightDtype = 'f32' | HalfDtype;

function uploadWeights(
  ctx: GpuContext,
  values: Float32Array,
  shape: readonly number[],
  dtype: WeightDtype,
  label: string,
) {
  if (dtype === 'f32') return { t: ctx.fromArray(values, shape, { label }), rounded: values };
  const t = ctx.fromArray<HalfDtype>(toHalfBits(values, dtype), shape, { dtype, label });
  return { t, rounded: roundToWeightDtype(values, dtype) };
}

function splitKCase(s: Shape, dtype: WeightDtype): KernelCase {
  const extra = `${s.alpha !== undefined ? ` alpha=${s.alpha}` : ''}${s.accumulate ? ' accumulate' : ''}`;
  const name = `matmulSplitK ${s.M}x${s.N}x${s.K}${extra} ${dtype} W`;
  return {
    name,
    family: 'matmul',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const a = randomHost(rng, [s.M, s.K]);
      const w = randomHost(rng, [s.N, s.K]);
      const start = randomHost(rng, [s.M, s.N]); // C before the product: kept (times 1) when accumulating
      const gA = ctx.fromArray(a.data, a.shape, { label: `${name}:a` });
      const gW = uploadWeights(ctx, w.data, w.shape, dtype, `${name}:w`);
      const opts = { alpha: s.alpha, accumulate: s.accumulate };
      const outs = [0, 1].map((i) => ctx.fromArray(start.data, start.shape, { label: `${name}:out${i}` }));
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      matmulSplitK(rec, outs[0], gA, gW.t, opts);
      matmul(rec, outs[1], gA, gW.t, { ...opts, transB: true });
      rec.submit();
      const [split, engine] = (await ctx.readMany(outs)) as Float32Array[];
      const ms = performance.now() - t0;
      for (const t of [gA, gW.t, ...outs]) t.destroy();
      const want = host(new Float32Array(start.data), start.shape);
      matmulTwin(want, a, host(gW.rounded, w.shape), { ...opts, transB: true });
      // Sums of K products in f32, in other orders than the twin's and matmul()'s: the matmul cases' bound.
      const tol = { atol: 1e-5 * Math.sqrt(s.K), rtol: 1e-5 };
      const twin = compareArrays(split, want.data, tol);
      const gpu = compareArrays(split, engine, tol);
      const codec = dtype === 'f32' ? 'f32' : halfCodec(dtype, ctx.device);
      return {
        name,
        family: 'matmul',
        pass: twin.pass && gpu.pass,
        summary: `${codec}: twin ${twin.summary}; matmul() ${gpu.summary}`,
        maxAbsError: twin.maxAbsError,
        ms,
      };
    },
  };
}

export function matmulSplitKCases(): KernelCase[] {
  return SHAPES.flatMap((s) => (['f32', 'bf16', 'f16'] as const).map((dtype) => splitKCase(s, dtype)));
}
