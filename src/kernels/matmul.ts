// Typed wrapper of shaders/matmul.wgsl: checks shapes, picks a variant, records the dispatch.
// Same name and argument order as the CPU twin src/reference/matmul.ts (after the recorder).

import source from '../../shaders/matmul.wgsl?raw';
import { Params, type Recorder, type Tensor } from '../gpu';
import { matmulDims, type MatmulOptions } from '../reference/matmul';

/** The implementations of matmul; 'naive' is the oracle, the others must match it. */
export const MATMUL_VARIANTS = ['naive', 'blocked'] as const;
export type MatmulVariant = (typeof MATMUL_VARIANTS)[number];

export interface GpuMatmulOptions extends MatmulOptions {
  /** Which implementation to run (default 'blocked'). */
  variant?: MatmulVariant;
}

const WG = 8;

/** out = alpha * op(a) * op(b) (+ out if accumulate), batched; 2-D operands are shared across the batch. */
export function matmul(rec: Recorder, out: Tensor, a: Tensor, b: Tensor, opts: GpuMatmulOptions = {}): void {
  const d = matmulDims(out.shape, a.shape, b.shape, opts);
  const variant = opts.variant ?? 'blocked';
  const perThread = variant === 'blocked' ? 4 : 1;
  const params = new Params()
    .u32(d.M)
    .u32(d.N)
    .u32(d.K)
    .u32(d.batch)
    .u32(d.strideA)
    .u32(d.strideB)
    .u32(d.strideC)
    .f32(opts.alpha ?? 1);
  rec.dispatch({
    family: rec.ctx.family('matmul', source),
    entry: `matmul_${variant}`,
    constants: { TRANS_A: !!opts.transA, TRANS_B: !!opts.transB, ACCUMULATE: !!opts.accumulate, WG_X: WG, WG_Y: WG },
    params,
    bindings: [out, a, b],
    workgroups: [Math.ceil(d.N / perThread / WG), Math.ceil(d.M / perThread / WG), d.batch],
  });
}
