// Typed wrapper of shaders/matmul.wgsl: checks shapes, picks a variant, records the dispatch.
// Same name and argument order as the CPU twin src/reference/matmul.ts (after the recorder).
// The variant is the caller's, else the one the autotune chose for this device and layout (matmul-tune.ts), else
// 'blocked'; a variant that cannot take a shape (matmulVariantSupports) falls back (variantFor). A tuned default
// whose workgroup covers far more rows than the product has (a decode step's few rows) steps down to a smaller
// tile (defaultVariantFor): the autotune measures training-sized products.
// The B operand (the weights of y = x W^T and dx = dy W) may be stored bf16 or f16: every variant then reads it
// through half-operand.ts (widened to f32 on load; A, C and the accumulation stay f32).

import raw from '../../shaders/matmul.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import { specialize } from '../gpu/specialize';
import { matmulDims, type MatmulOptions } from '../reference/matmul';
import { operandCodec, withHalfOperand, type HalfCodec } from './half-operand';

/** The implementations of matmul; 'naive' is the oracle, the others must match it. */
export const MATMUL_VARIANTS = [
  'naive',
  'blocked',
  'strided',
  'vec4',
  'wide',
  'tall',
  'square',
  'tiled',
  'tiled128',
] as const;
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

const PARAMS = uniforms('Params', {
  M: 'u32',
  N: 'u32',
  K: 'u32',
  batch: 'u32',
  strideA: 'u32', // elements between batch entries of A (0: shared by the batch)
  strideB: 'u32',
  strideC: 'u32',
  alpha: 'f32',
  accumulate: 'u32', // 1: C += alpha * op(A) op(B)
});
export const MATMUL_SHADER = declareShader('matmul.wgsl', raw, { uniforms: [PARAMS] });

/** The register tiles of matmul_wide (rows x columns of C per invocation), by variant. */
const TILES = { wide: [8, 8], tall: [16, 8], square: [16, 16] } as const;
type TileVariant = keyof typeof TILES;

function isTile(v: MatmulVariant): v is TileVariant {
  return Object.hasOwn(TILES, v);
}

/** matmul.wgsl with matmul_wide's tile of `rows` x `cols` written out (src/gpu/specialize.ts). */
function expandTile(rows: number, cols: number): string {
  return specialize(
    MATMUL_SHADER.source,
    {
      values: { WIDE_ROWS: rows, WIDE_COLS: cols },
      repeats: [
        { marker: 'ku', count: 4, tokens: (u) => ({ _u: u }) },
        { marker: 'rows', count: rows, tokens: (r) => ({ _rq: r >> 2, _rl: r & 3, _r: r }) },
        { marker: 'quads', count: rows / 4, tokens: (q) => ({ _rq: q }) },
        {
          marker: 'cols',
          count: cols / 4,
          tokens: (v) => ({ _v: v, _v0: 4 * v, _v1: 4 * v + 1, _v2: 4 * v + 2, _v3: 4 * v + 3 }),
        },
      ],
    },
    MATMUL_SHADER.file,
  );
}
const sources = new Map<string, string>();
const tunings = new WeakMap<GPUDevice, MatmulTuning>();

/**
 * The kernel family of a variant: 'matmul' (every entry, matmul_wide at 8x8), or matmul_wide's other tiles each in
 * its own module; with a half B operand the same modules read B through `codec` ('matmul-bf16', 'matmul-tall-bf16').
 */
function familyOf(rec: Recorder, variant: MatmulVariant, codec: HalfCodec | null) {
  const tile: TileVariant = isTile(variant) ? variant : 'wide';
  const name = `${tile === 'wide' ? 'matmul' : `matmul-${tile}`}${codec ? `-${codec}` : ''}`;
  let text = sources.get(name);
  if (!text) {
    text = expandTile(TILES[tile][0], TILES[tile][1]);
    if (codec) text = withHalfOperand(text, 'B', codec, 'B4');
    sources.set(name, text);
  }
  return rec.ctx.family(name, text);
}

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
 * Whether a variant can run a shape: 'vec4' and the tiles of matmul_wide ('wide', 'tall', 'square') read 4 floats
 * at a time along each operand's contiguous dimension, so those must divide by 4 (A*B^T: K; A*B: K and N; A^T*B: M
 * and N), and have no A^T*B^T loop. 'wide' and 'tall' also take A*B and A^T*B with only N divisible by 4 (scalarA:
 * A read a float at a time). 'square' takes only N divisible by 16 with vec4 operands: its 16 columns would
 * otherwise waste up to 3/4 of a tile (N = 24 wastes a third), and scalar A loads cost more than its wider tile saves.
 */
export function matmulVariantSupports(
  variant: MatmulVariant,
  s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean },
): boolean {
  if (variant === 'square') return vec4Operands(s) && s.N % 16 === 0;
  if (variant !== 'vec4' && !isTile(variant)) return true;
  return vec4Operands(s) || (variant !== 'vec4' && scalarA(s));
}

/** The variant that runs a shape for `wanted`: itself where it can, 'square' falls back to 'tall', the rest to 'blocked'. */
export function variantFor(
  wanted: MatmulVariant,
  s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean },
): MatmulVariant {
  if (matmulVariantSupports(wanted, s)) return wanted;
  return wanted === 'square' ? variantFor('tall', s) : 'blocked';
}

/** Rows and columns of C one invocation of a WG x WG workgroup computes: 1 (naive), a matmul_wide tile, or 4 x 4. */
function invocationTile(v: Exclude<MatmulVariant, 'tiled' | 'tiled128'>): readonly [number, number] {
  return v === 'naive' ? [1, 1] : isTile(v) ? TILES[v] : [4, 4];
}

/**
 * Rows and columns of C one workgroup of a variant covers: 'tiled' 64 x 64 (16 x 16 invocations of 4 x 4) and
 * 'tiled128' 128 x 128 (of 8 x 8); the others WG x WG invocations of their invocationTile.
 */
function workgroupSpan(v: MatmulVariant): readonly [number, number] {
  if (v === 'tiled') return [64, 64];
  if (v === 'tiled128') return [128, 128];
  const [rows, cols] = invocationTile(v);
  return [rows * WG, cols * WG];
}

/** The smaller tiles a product too small for its tile steps down to, in order. */
const SMALLER_TILE: Partial<Record<MatmulVariant, MatmulVariant>> = {
  square: 'wide',
  tall: 'wide',
  wide: 'vec4',
  tiled128: 'tiled',
};

/**
 * The share of SwiftShader's lanes that compute columns of C for a tile `cols` wide: it runs a workgroup's invocations
 * four at a time along x, so ceil(N / cols) invocations across take whole fours (those past N return at once).
 */
function columnLanesUsed(N: number, cols: number): number {
  const across = Math.ceil(N / cols);
  return N / (cols * 4 * Math.ceil(across / 4));
}

/**
 * Whether a product is too small for variant v, so that the next smaller tile runs it faster. For matmul_wide's
 * tiles and vec4 (one tile per invocation): rows filling at most half of an invocation's tile (the rest is computed
 * for nothing), or a smaller tile that puts at least 1.5 times the share of the lanes to work across the columns
 * (columnLanesUsed: a LoRA rank of 16 fills a quarter of a 16-wide tile's fours, half of an 8-wide tile's, all of
 * vec4's; 48 columns fill three quarters of either tile's, and the larger tile's better reuse wins), or a product
 * that is one workgroup of this tile and several of the smaller one (a CPU adapter runs a workgroup on one core: a
 * weight gradient of nano's, 128 x 48 x 1024 A^T*B, one 128 x 128 workgroup of the 16x16 tile, ran 1.28x faster as two
 * of the 8x8 one). For the workgroup tiles ('tiled128'; 'tiled' has no smaller one): rows filling at most half of
 * the workgroup's.
 */
function tooSmallFor(v: MatmulVariant, s: { M: number; N: number }): boolean {
  if (v === 'tiled' || v === 'tiled128') return 2 * s.M <= workgroupSpan(v)[0];
  const [rows, cols] = invocationTile(v);
  const next = SMALLER_TILE[v];
  if (next !== 'wide' && next !== 'vec4') return 2 * s.M <= rows;
  const nextCols = invocationTile(next)[1];
  return (
    2 * s.M <= rows ||
    columnLanesUsed(s.N, nextCols) >= 1.5 * columnLanesUsed(s.N, cols) ||
    (workgroupsOver(v, s) === 1 && workgroupsOver(next, s) > 1)
  );
}

/** The workgroups of variant v's grid over C (M x N). */
function workgroupsOver(v: MatmulVariant, s: { M: number; N: number }): number {
  const [rows, cols] = workgroupSpan(v);
  return Math.ceil(s.M / rows) * Math.ceil(s.N / cols);
}

/**
 * The variant matmul() runs when the caller names none: the tuned (or default) one for the layout, stepped down
 * from 'square'/'tall' to 'wide' and from 'wide' to 'vec4' while the product is too small for the tile
 * (tooSmallFor), then variantFor's fallbacks. Measured on SwiftShader (2 cores), bf16 weights, median ms of 5 x 6
 * products (square / wide / vec4): 1 x 1536 x 576 A*B^T 4.52 / 3.01 / 2.11; 4 rows 4.65 / 3.19 / 2.08; 8 rows
 * 4.99 / 3.40 / 4.06; 12 rows 4.62 / 5.69 / 5.32; 32 rows 9.70 / 11.86 / 15.10; 64 rows 19.25 / 25.38 / 30.41
 * (A*B at 576 x 1536 alike). A LoRA rank of 16 at 160 rows, f32: x A^T 160 x 16 x 576 2.99-3.73 / 1.68-1.77 /
 * 1.19-1.26; dY^T xa 1536 x 16 x 160 7.89 / 5.60 / 5.02; dY B 160 x 16 x 1536 10.51 / 5.03 / 3.27. Nano's 48 columns
 * (median of 11): 1024 x 48 x 128 A*B 4.7 / 6.7 / 5.7, A*B^T 4.1 / 5.2 / 5.7; its 24 columns 1024 x 24 x 48 A*B 2.7 /
 * 2.7 / 2.7 (and 2.9 / 2.6 / 3.8 in another run), A*B^T 2.7 / 2.7 / 3.1. Its weight gradients, A^T*B (median of
 * 30): 128 x 48 x 1024 6.30 / 4.93 / 7.20, 48 x 128 x 1024 4.82 / 3.70 / 6.97 (one workgroup of the 16x16 tile, two of
 * the 8x8), 48 x 48 x 1024 2.45 / 3.52 / 3.57 (one of either); micro's 176 x 64 x 1024 5.84 / 7.98 / 11.22. Every variant
 * equals the naive oracle (matmul tests); the elements of C are summed in a different order along K from one
 * variant to another (matmul_wide's tiles agree with each other in every layout, and with vec4 except in A*B), so
 * results can differ in the last bits.
 */
export function defaultVariantFor(
  tuned: MatmulVariant,
  s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean },
): MatmulVariant {
  let v = tuned;
  for (let next = SMALLER_TILE[v]; next && tooSmallFor(v, s); next = SMALLER_TILE[v]) {
    if (!matmulVariantSupports(next, s)) break;
    v = next;
  }
  return variantFor(v, s);
}

/**
 * The variant matmul() runs for a shape when the caller names none: defaultVariantFor of the device's tuned variant
 * for the layout, else of 'blocked'.
 */
export function defaultMatmulVariant(
  device: GPUDevice,
  s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean },
): MatmulVariant {
  return defaultVariantFor(tunings.get(device)?.[layoutOf(s)] ?? 'blocked', s);
}

/**
 * How a variant sums each element of C = A*B^T along K: 'k4' (vec4 and matmul_wide's tiles: a dot product of 4 k
 * at a time, added to the sum) or 'k1' (naive, blocked, strided, tiled and tiled128: one k's product at a time, in k
 * order; the tiles' zero padding past K adds +0 to a sum that starts at +0, which leaves every sum as it is). Kernels
 * of one order give the same bits where the driver compiles their multiply-adds alike (src/kernels/projection.test.ts checks
 * the fused projections against every variant on each driver); of two orders they differ in the last bits.
 */
export type MatmulSumOrder = 'k4' | 'k1';

export function matmulSumOrder(variant: MatmulVariant): MatmulSumOrder {
  return variant === 'vec4' || isTile(variant) ? 'k4' : 'k1';
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

/**
 * out = alpha * op(a) * op(b) (+ out if accumulate), batched; 2-D operands are shared across the batch. `out` and
 * `a` are f32; `b` is f32, bf16 or f16 (half weights, read as f32: twin = matmul on roundToWeightDtype(b)).
 */
export function matmul(rec: Recorder, out: Tensor, a: Tensor, b: Tensor, opts: GpuMatmulOptions = {}): void {
  const d = matmulDims(out.shape, a.shape, b.shape, opts);
  for (const [what, t] of [
    ['out', out],
    ['a', a],
  ] as const)
    if (t.dtype !== 'f32') throw new Error(`matmul: ${what} must be f32, got ${t.describe()}`);
  const codec = operandCodec('matmul', 'b', b.dtype, rec.ctx.device);
  const shape = { ...d, transA: opts.transA, transB: opts.transB };
  const variant = opts.variant ? variantFor(opts.variant, shape) : defaultMatmulVariant(rec.ctx.device, shape);
  const params = PARAMS.pack({
    M: d.M,
    N: d.N,
    K: d.K,
    batch: d.batch,
    strideA: d.strideA,
    strideB: d.strideB,
    strideC: d.strideC,
    alpha: opts.alpha ?? 1,
    accumulate: opts.accumulate ? 1 : 0,
  });
  const [spanRows, spanCols] = workgroupSpan(variant);
  const grid: [number, number] = [Math.ceil(d.N / spanCols), Math.ceil(d.M / spanRows)];
  const family = familyOf(rec, variant, codec);
  const entry = isTile(variant)
    ? vec4Operands({ ...d, ...opts })
      ? 'matmul_wide'
      : 'matmul_wide_scalar_a'
    : `matmul_${variant}`;
  const label = `matmul.matmul_${variant}${codec ? `.${codec}` : ''}`;
  const constants = {
    TRANS_A: !!opts.transA,
    TRANS_B: !!opts.transB,
    ...(variant === 'tiled' || variant === 'tiled128' ? {} : { WG_X: WG, WG_Y: WG }),
  };
  // Each operand read once and C written once (read too when accumulating): the least traffic of the product.
  const cost = {
    bytes: a.byteLength + b.byteLength + out.byteLength * (opts.accumulate ? 2 : 1),
    flops: 2 * d.M * d.N * d.K * d.batch,
  };
  rec.dispatch({
    family,
    entry,
    label,
    constants,
    params,
    bindings: [out, a, b],
    workgroups: [...grid, d.batch],
    cost,
  });
}

/** Columns of C one workgroup of matmul_split_k covers (4 tiles of 4 side by side), and its rows (one tile's). */
const SPLIT_K_COLUMNS = 16;
const SPLIT_K_ROWS = 4;

/** Whether matmulSplitK takes out (M, N) = a (M, K) b^T: K a positive multiple of 4 (vec4 loads along K). */
export function matmulSplitKFits(M: number, N: number, K: number): boolean {
  return M >= 1 && N >= 1 && K >= 4 && K % 4 === 0;
}

/**
 * out (M, N) = alpha * a (M, K) b^T (+ out when accumulating) for few rows (a decode step's), with the K loop of
 * each 4x4 tile split over 16 invocations (shaders/matmul.wgsl matmul_split_k); b stored (N, K) f32, bf16 or f16
 * (twin: the CPU matmul with transB on roundToWeightDtype(b)). It sums along K in its own order (16 strided partial
 * sums added in lane order), so it equals matmul()'s product within rounding, not bit for bit: the engine's
 * rollouts keep the trainer's order (src/kernels/projection.ts), and the bench times this kernel beside matmul()
 * at a decode step's rows until a GPU shows whether a decode step gains. 2-D operands only.
 */
export function matmulSplitK(
  rec: Recorder,
  out: Tensor,
  a: Tensor,
  b: Tensor,
  opts: { alpha?: number; accumulate?: boolean } = {},
): void {
  const kernel = 'matmulSplitK';
  if (a.shape.length !== 2 || b.shape.length !== 2 || out.shape.length !== 2)
    throw new Error(`${kernel}: a, b and out must be 2-D, got ${a.describe()}, ${b.describe()}, ${out.describe()}`);
  const [M, K] = a.shape;
  const [N, Kb] = b.shape;
  if (Kb !== K) throw new Error(`${kernel}: b ${b.describe()} must be (N, ${K}) for a ${a.describe()}`);
  if (out.shape[0] !== M || out.shape[1] !== N)
    throw new Error(`${kernel}: out ${out.describe()} must be (${M}, ${N})`);
  if (!matmulSplitKFits(M, N, K)) throw new Error(`${kernel}: K = ${K} must be a positive multiple of 4`);
  for (const [what, t] of [
    ['out', out],
    ['a', a],
  ] as const)
    if (t.dtype !== 'f32') throw new Error(`${kernel}: ${what} must be f32, got ${t.describe()}`);
  const codec = operandCodec(kernel, 'b', b.dtype, rec.ctx.device);
  rec.dispatch({
    family: familyOf(rec, 'vec4', codec),
    entry: 'matmul_split_k',
    label: `matmul.matmul_split_k${codec ? `.${codec}` : ''}`,
    params: PARAMS.pack({
      M,
      N,
      K,
      batch: 1,
      strideA: 0,
      strideB: 0,
      strideC: 0,
      alpha: opts.alpha ?? 1,
      accumulate: opts.accumulate ? 1 : 0,
    }),
    bindings: [out, a, b],
    workgroups: [Math.ceil(N / SPLIT_K_COLUMNS), Math.ceil(M / SPLIT_K_ROWS)],
    // Each operand read once and C written once (read too when accumulating), as matmul() counts it.
    cost: {
      bytes: a.byteLength + b.byteLength + out.byteLength * (opts.accumulate ? 2 : 1),
      flops: 2 * M * N * K,
    },
  });
}
