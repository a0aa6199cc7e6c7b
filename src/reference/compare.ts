// Compares a computed array with an expected one and explains the difference.
// Used by every GPU-vs-twin case and finite-difference check; prints the first mismatches. A tolerance may scale
// with the conditioning of a sum (sumTerms): summation order differs between drivers' compilers.

import type { FloatArray } from '../core/host-tensor';

export interface Tolerance {
  /** Absolute tolerance. */
  atol: number;
  /** Relative tolerance (relative to |expected|). */
  rtol: number;
  /**
   * K, the number of terms each element sums (a reduction's row length, a matmul's inner dimension). With it an
   * element also passes within conditionedBound(K, Σ|terms|): the rounding error of an f32 sum in any order
   * scales with the sum of the terms' magnitudes, not with |result|, which cancellation can make tiny. The
   * magnitudes come from the twin run on absolute values (kernels/verify.ts). Without it the bound assumes the GPU
   * adds in the twin's order.
   */
  sumTerms?: number;
}

/** f32 machine epsilon (2^-23). */
export const F32_EPS = 2 ** -23;

/**
 * The rounding error allowed to a sum of K f32 terms whose magnitudes add up to `magnitude` (Σ|a_i b_i| for a
 * dot product), in any summation order: sqrt(K)·eps·Σ|terms|, the probabilistic bound of Higham and Mary (2019)
 * for errors that do not all point one way (a fixed order's worst case is (K-1)·eps·Σ|terms|; a tree's is
 * log2(K)·eps·Σ|terms|). For a well-conditioned sum (terms of one sign) it is sqrt(K)·eps·|result|, tighter than
 * a fixed rtol of 1e-5 up to K = 7000.
 */
export function conditionedBound(K: number, magnitude: number): number {
  return Math.sqrt(Math.max(1, K)) * F32_EPS * magnitude;
}

export interface Comparison {
  pass: boolean;
  maxAbsError: number;
  maxRelError: number;
  /** Up to five failing elements: index, value obtained, value expected. */
  mismatches: { index: number; got: number; want: number }[];
  /** One line for logs: "max abs 1.2e-6, max rel 3.4e-7" plus the first mismatches when failing. */
  summary: string;
}

/**
 * Element i passes when |got - want| <= atol + rtol * |want| (+ conditionedBound(K, magnitude[i]) when the
 * tolerance has sumTerms K, which then needs `magnitude`: Σ|terms| per element); NaN or a length mismatch fails.
 */
export function compareArrays(
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  tol: Tolerance,
  magnitude?: ArrayLike<number>,
): Comparison {
  if (tol.sumTerms !== undefined && magnitude?.length !== want.length)
    throw new Error(
      `compareArrays: a tolerance with sumTerms (${tol.sumTerms}) needs one magnitude (Σ|terms|) per element`,
    );
  const mismatches: Comparison['mismatches'] = [];
  let maxAbsError = 0;
  let maxRelError = 0;
  let failures = 0;
  if (got.length !== want.length) {
    return {
      pass: false,
      maxAbsError: Infinity,
      maxRelError: Infinity,
      mismatches: [],
      summary: `length mismatch: got ${got.length} elements, want ${want.length}`,
    };
  }
  for (let i = 0; i < want.length; i++) {
    const g = got[i];
    const w = want[i];
    const abs = Math.abs(g - w);
    const rel = abs / Math.max(Math.abs(w), 1e-30);
    const conditioned =
      tol.sumTerms !== undefined && magnitude ? conditionedBound(tol.sumTerms, Math.abs(magnitude[i])) : 0;
    const ok = abs <= tol.atol + tol.rtol * Math.abs(w) + conditioned || g === w;
    if (Number.isNaN(abs)) {
      maxAbsError = NaN;
    } else {
      if (abs > maxAbsError) maxAbsError = abs;
      if (rel > maxRelError && Math.abs(w) > tol.atol) maxRelError = rel;
    }
    if (!ok) {
      failures++;
      if (mismatches.length < 5) mismatches.push({ index: i, got: g, want: w });
    }
  }
  const pass = failures === 0;
  let summary = `max abs ${fmt(maxAbsError)}, max rel ${fmt(maxRelError)} over ${want.length}`;
  if (!pass) {
    summary +=
      `; ${failures} mismatches (atol ${tol.atol}, rtol ${tol.rtol}${tol.sumTerms !== undefined ? `, sqrt(${tol.sumTerms})·eps·Σ|terms|` : ''}), first: ` +
      mismatches.map((m) => `[${m.index}] got ${m.got} want ${m.want}`).join(', ');
  }
  return { pass, maxAbsError, maxRelError, mismatches, summary };
}

function fmt(x: number): string {
  return Number.isFinite(x) ? x.toExponential(2) : String(x);
}

/** Converts any float array to Float64Array (for comparisons and finite differences). */
export function toF64(a: FloatArray): Float64Array {
  return a instanceof Float64Array ? a : Float64Array.from(a);
}
