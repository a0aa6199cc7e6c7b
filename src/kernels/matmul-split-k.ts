// Typed wrapper of shaders/matmul-split-k.wgsl: y = x W^T for few rows with the K loop split over 16 invocations
// per 4 x 4 tile (a decode step's shape on a large GPU), W stored (N, K) f32, bf16 or f16. Same name and argument
// order as matmul() for A*B^T (twin: src/reference/matmul.ts matmul with transB). It sums along K in its own order
// (16 strided partial sums, added in lane order), so it equals matmul()'s products within rounding, not bit for
// bit: the engine's rollouts keep the trainer's order (src/kernels/projection.ts), and this kernel is measured
// beside them by the bench (`npm run bench:gpu`'s model matmuls) until a GPU shows whether a decode step gains.

import raw from '../../shaders/matmul-split-k.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import { operandCodec, withHalfVec4Operand, type HalfCodec } from './half-operand';

const PARAMS = uniforms('Params', {
  M: 'u32',
  N: 'u32',
  K: 'u32',
  alpha: 'f32',
  accumulate: 'u32', // 1: C += alpha * A B^T
});
export const MATMUL_SPLIT_K_SHADER = declareShader('matmul-split-k.wgsl', raw, { uniforms: [PARAMS] });

/** Columns of C one workgroup covers (4 tiles of 4 side by side) and its rows (one tile's). */
const WORKGROUP_COLUMNS = 16;
const WORKGROUP_ROWS = 4;

const sources = new Map<string, string>();

function familyOf(rec: Recorder, codec: HalfCodec | null) {
  const name = `matmul-split-k${codec ? `-${codec}` : ''}`;
  let text = sources.get(name);
  if (text === undefined) {
    text = codec ? withHalfVec4Operand(MATMUL_SPLIT_K_SHADER.source, 'B4', codec) : MATMUL_SPLIT_K_SHADER.source;
    sources.set(name, text);
  }
  return rec.ctx.family(name, text);
}

/** Whether the split-K product takes y (M, N) = x (M, K) W^T: K divides by 4 (vec4 loads along K), M and N >= 1. */
export function matmulSplitKFits(M: number, N: number, K: number): boolean {
  return M >= 1 && N >= 1 && K >= 4 && K % 4 === 0;
}

/**
 * out (M, N) = alpha * a (M, K) b^T (+ out when accumulating), b stored (N, K) f32, bf16 or f16 (read as f32: twin =
 * matmul on roundToWeightDtype(b)). 2-D operands only.
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
    family: familyOf(rec, codec),
    entry: 'matmul_split_k',
    label: `matmul.matmul_split_k${codec ? `.${codec}` : ''}`,
    params: PARAMS.pack({ M, N, K, alpha: opts.alpha ?? 1, accumulate: opts.accumulate ? 1 : 0 }),
    bindings: [out, a, b],
    workgroups: [Math.ceil(N / WORKGROUP_COLUMNS), Math.ceil(M / WORKGROUP_ROWS)],
    // Each operand read once and C written once (read too when accumulating), as matmul() counts it.
    cost: {
      bytes: a.byteLength + b.byteLength + out.byteLength * (opts.accumulate ? 2 : 1),
      flops: 2 * M * N * K,
    },
  });
}
