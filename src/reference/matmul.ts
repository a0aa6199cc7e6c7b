// CPU twin of shaders/matmul.wgsl: batched C = alpha * op(A) * op(B) (+ C when accumulating).
// The oracle every GPU matmul variant is tested against. Row-major, any float precision.

import type { HostTensor } from '../core/host-tensor';

/** Options shared by the matmul twin and its GPU wrapper (src/kernels/matmul.ts). */
export interface MatmulOptions {
  /** A is stored transposed: (K, M) instead of (M, K). Used for A^T * B (weight gradients). */
  transA?: boolean;
  /** B is stored transposed: (N, K) instead of (K, N). Used for A * B^T (linear layers, input gradients). */
  transB?: boolean;
  /** Add into the existing contents of C instead of overwriting them (gradient accumulation). */
  accumulate?: boolean;
  /** Scale applied to the product (default 1). */
  alpha?: number;
}

/** Dimensions of a (possibly batched) matmul, derived once from the operand shapes. */
export interface MatmulDims {
  batch: number;
  M: number;
  N: number;
  K: number;
  /** Elements between consecutive batch entries; 0 when an operand is shared across the batch. */
  strideA: number;
  strideB: number;
  strideC: number;
}

/**
 * Derives and checks the matmul dimensions. Operands are 2-D (M, K) or 3-D (batch, M, K);
 * a 2-D operand next to a 3-D one is shared by every batch entry (stride 0).
 */
export function matmulDims(
  outShape: readonly number[],
  aShape: readonly number[],
  bShape: readonly number[],
  opts: MatmulOptions = {},
): MatmulDims {
  const rank = (s: readonly number[], what: string) => {
    if (s.length !== 2 && s.length !== 3) throw new Error(`matmul: ${what} must be 2-D or 3-D, got [${s.join(', ')}]`);
    return s.length;
  };
  rank(aShape, 'A');
  rank(bShape, 'B');
  rank(outShape, 'C');
  const last2 = (s: readonly number[]) => [s[s.length - 2], s[s.length - 1]];
  const [a0, a1] = last2(aShape);
  const [b0, b1] = last2(bShape);
  const [M, K] = opts.transA ? [a1, a0] : [a0, a1];
  const [Kb, N] = opts.transB ? [b1, b0] : [b0, b1];
  if (K !== Kb) throw new Error(`matmul: inner dimensions differ: op(A) is ${M}x${K}, op(B) is ${Kb}x${N}`);
  const [c0, c1] = last2(outShape);
  if (c0 !== M || c1 !== N) throw new Error(`matmul: C is ${c0}x${c1} but op(A)*op(B) is ${M}x${N}`);
  const batchOf = (s: readonly number[]) => (s.length === 3 ? s[0] : 1);
  const batch = batchOf(outShape);
  for (const [s, what] of [
    [aShape, 'A'],
    [bShape, 'B'],
  ] as const) {
    if (s.length === 3 && s[0] !== batch) throw new Error(`matmul: ${what} has batch ${s[0]} but C has batch ${batch}`);
  }
  return {
    batch,
    M,
    N,
    K,
    strideA: aShape.length === 3 ? M * K : 0,
    strideB: bShape.length === 3 ? K * N : 0,
    strideC: M * N,
  };
}

/** out = alpha * op(a) * op(b) (+ out if accumulate), batched. */
export function matmul(out: HostTensor, a: HostTensor, b: HostTensor, opts: MatmulOptions = {}): void {
  const d = matmulDims(out.shape, a.shape, b.shape, opts);
  const alpha = opts.alpha ?? 1;
  const A = a.data;
  const B = b.data;
  const C = out.data;
  for (let z = 0; z < d.batch; z++) {
    const oa = z * d.strideA;
    const ob = z * d.strideB;
    const oc = z * d.strideC;
    for (let i = 0; i < d.M; i++) {
      for (let j = 0; j < d.N; j++) {
        let s = 0;
        for (let k = 0; k < d.K; k++) {
          const av = opts.transA ? A[oa + k * d.M + i] : A[oa + i * d.K + k];
          const bv = opts.transB ? B[ob + j * d.K + k] : B[ob + k * d.N + j];
          s += av * bv;
        }
        const idx = oc + i * d.N + j;
        C[idx] = (opts.accumulate ? C[idx] : 0) + alpha * s;
      }
    }
  }
}
