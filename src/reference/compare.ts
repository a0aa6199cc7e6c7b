// Compares a computed array with an expected one and explains the difference.
// Used by every GPU-vs-twin case and finite-difference check; prints the first mismatches.

import type { FloatArray } from '../core/host-tensor';

export interface Tolerance {
  /** Absolute tolerance. */
  atol: number;
  /** Relative tolerance (relative to |expected|). */
  rtol: number;
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

/** Element i passes when |got - want| <= atol + rtol * |want|; NaN or a length mismatch fails. */
export function compareArrays(got: ArrayLike<number>, want: ArrayLike<number>, tol: Tolerance): Comparison {
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
    const ok = abs <= tol.atol + tol.rtol * Math.abs(w) || g === w;
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
      `; ${failures} mismatches (atol ${tol.atol}, rtol ${tol.rtol}), first: ` +
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
