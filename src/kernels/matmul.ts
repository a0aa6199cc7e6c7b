// Typed wrapper of shaders/matmul.wgsl: checks shapes, picks a variant, records the dispatch.
// Same name and argument order as the CPU twin src/reference/matmul.ts (after the recorder).
// The variant is the caller's, else the one the autotune chose for this device and layout (matmul-tune.ts), else
// 'blocked'; a variant that cannot take a shape (matmulVariantSupports) falls back to 'blocked'.

import source from '../../shaders/matmul.wgsl?raw';
import { Params, type Recorder, type Tensor } from '../gpu';
import { expandRepeated, expandUnrolled } from '../gpu/template';
import { matmulDims, type MatmulOptions } from '../reference/matmul';

/** The implementations of matmul; 'naive' is the oracle, the others must match it. */
export const MATMUL_VARIANTS = ['naive', 'blocked', 'strided', 'vec4', 'wide', 'tall', 'tiled'] as const;
export type MatmulVariant = (typeof MATMUL_VARIANTS)[number];

/** Storage layout of the operands: N = as stored, T = transposed (A*B^T is 'NT'). */
export type MatmulLayout = 'NN' | 'NT' | 'TN' | 'TT';

export interface GpuMatmulOptions extends MatmulOptions {
  /** Which implementation to run (default: the device's tuned choice for the layout, else 'blocked'). */
  variant?: MatmulVariant;
}

/** A per-layout choice of variant for one device (from the autotune). */
export type MatmulTuning = Partial<Record<MatmulLayout, MatmulVariant>>;

const WG = 8;

/** matmul.wgsl with matmul_wide's tile of `rows` x 8 expanded (src/gpu/template.ts): 8 rows for 'wide', 16 for 'tall'. */
function expandTile(rows: number): string {
  const byRow = expandRepeated(source.replaceAll('__ROWS__', String(rows)), 'rows', rows, (r) => ({ $rq: String(r >> 2), $rl: String(r & 3), $r: String(r) }));
  return expandUnrolled(expandRepeated(byRow, 'quads', rows / 4, (q) => ({ $q: String(q) })), 8);
}
/** Rows of C per invocation of matmul_wide, by variant. */
const TILE_ROWS = { wide: 8, tall: 16 } as const;
const sources = { wide: expandTile(TILE_ROWS.wide), tall: expandTile(TILE_ROWS.tall) };
const tunings = new WeakMap<GPUDevice, MatmulTuning>();

/** Makes `tuning` the default variants of matmul() on this device (matmul-tune.ts calls it). */
export function setMatmulTuning(device: GPUDevice, tuning: MatmulTuning | null): void {
  if (tuning) tunings.set(device, { ...tuning });
  else tunings.delete(device);
}

/** The tuned default variants of a device ({} before any autotune). */
export function matmulTuning(device: GPUDevice): MatmulTuning {
  return { ...(tunings.get(device) ?? {}) };
}

export function layoutOf(opts: { transA?: boolean; transB?: boolean }): MatmulLayout {
  return `${opts.transA ? 'T' : 'N'}${opts.transB ? 'T' : 'N'}` as MatmulLayout;
}

/**
 * Whether a variant can run a shape: 'vec4', 'wide' and 'tall' read 4 floats at a time along each operand's
 * contiguous dimension, so those must divide by 4 (A*B^T: K; A*B: K and N; A^T*B: M and N), and have no A^T*B^T
 * loop. 'wide' and 'tall' also take A*B and A^T*B with only N divisible by 4 (scalarA: A read a float at a time).
 */
export function matmulVariantSupports(variant: MatmulVariant, s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean }): boolean {
  if (variant !== 'vec4' && variant !== 'wide' && variant !== 'tall') return true;
  return vec4Operands(s) || (variant !== 'vec4' && scalarA(s));
}

function vec4Operands(s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean }): boolean {
  switch (layoutOf(s)) {
    case 'NT':
      return s.K % 4 === 0;
    case 'NN':
      return s.K % 4 === 0 && s.N % 4 === 0;
    case 'TN':
      return s.M % 4 === 0 && s.N % 4 === 0;
    case 'TT':
      return false;
  }
}

/** A shape matmul_wide_scalar_a runs: B stored (K,N) with N divisible by 4, A in any layout but A^T*B^T. */
function scalarA(s: { N: number; transB?: boolean }): boolean {
  return !s.transB && s.N % 4 === 0;
}

/** out = alpha * op(a) * op(b) (+ out if accumulate), batched; 2-D operands are shared across the batch. */
export function matmul(rec: Recorder, out: Tensor, a: Tensor, b: Tensor, opts: GpuMatmulOptions = {}): void {
  const d = matmulDims(out.shape, a.shape, b.shape, opts);
  const wanted = opts.variant ?? tunings.get(rec.ctx.device)?.[layoutOf(opts)] ?? 'blocked';
  const variant = matmulVariantSupports(wanted, { ...d, transA: opts.transA, transB: opts.transB }) ? wanted : 'blocked';
  const params = new Params()
    .u32(d.M)
    .u32(d.N)
    .u32(d.K)
    .u32(d.batch)
    .u32(d.strideA)
    .u32(d.strideB)
    .u32(d.strideC)
    .f32(opts.alpha ?? 1);
  // Workgroup grid: 'tiled' covers 64x64 of C per workgroup; the others 8x8 invocations of 1 (naive), 8x8 (wide),
  // 16x8 (tall: rows x columns) or 4x4 elements.
  const tile = variant === 'wide' || variant === 'tall';
  const cols = variant === 'tiled' ? 64 : variant === 'naive' ? WG : tile ? 8 * WG : 4 * WG;
  const rows = variant === 'tiled' ? 64 : variant === 'naive' ? WG : tile ? TILE_ROWS[variant] * WG : 4 * WG;
  rec.dispatch({
    // 'tall' is matmul_wide expanded for 16 rows: its own module.
    family: variant === 'tall' ? rec.ctx.family('matmul-tall', sources.tall) : rec.ctx.family('matmul', sources.wide),
    entry: tile ? (vec4Operands({ ...d, ...opts }) ? 'matmul_wide' : 'matmul_wide_scalar_a') : `matmul_${variant}`,
    label: `matmul.matmul_${variant}`,
    constants: { TRANS_A: !!opts.transA, TRANS_B: !!opts.transB, ACCUMULATE: !!opts.accumulate, ...(variant === 'tiled' ? {} : { WG_X: WG, WG_Y: WG }) },
    params,
    bindings: [out, a, b],
    workgroups: [Math.ceil(d.N / cols), Math.ceil(d.M / rows), d.batch],
  });
}
