// CPU twins of shaders/weight-stats.wgsl: how far one weight matrix moved from the run's starting copy, and how much
// of that move lies in its top singular direction. weightUpdateStats gives ||dW||_F^2, ||W_0||_F^2 and sigma_1^2
// of dW = W - W_0 (power iteration on dW^T dW from a fixed start vector), plus the top right singular vector v and
// dW v; rank1Apply writes W_0 + (dW v) v^T, the rank-1 update. Not the exact SVD the tests compare with (jacobi.ts).

import type { HostTensor } from '../core/host-tensor';

/** The three numbers weightUpdateStats writes per matrix, in slot order. */
export const WEIGHT_STATS = ['delta_sq', 'start_sq', 'sigma1_sq'] as const;

/**
 * Power iterations per measurement. With a gap, each iteration multiplies the Rayleigh quotient's error by
 * (sigma_2 / sigma_1)^4, so a nearly rank-1 update (the RL case) converges in a few; with clustered top singular
 * values the error shrinks only like 1/K, since the quotient is a weighted mean of the clustered values. Measured
 * against an exact eigen-decomposition on random, noise-only and rank-1-plus-noise updates at shapes 17x65 to
 * 128x48: the largest error of the share was 1.4e-3 to 2.4e-3 with 32 iterations and 5.7e-4 to 9.5e-4 with 64, so
 * 64 (src/kernels/weight-stats.test.ts checks it within 1e-3).
 */
export const RANK1_ITERATIONS = 64;

export interface WeightStatsOptions {
  /** Matrix index: the stats go to out[3 slot .. 3 slot + 2]. */
  slot: number;
  /** Power iterations (at least 1). */
  iterations: number;
}

/**
 * The deterministic start vector of the power iteration at column c: a PCG hash of c mapped to [-1, 1). Hashed
 * rather than constant, so it is not orthogonal to a top direction whose entries sum to zero. Exact in f32.
 */
export function powerStart(c: number): number {
  const x = (Math.imul(c >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul(((x >>> ((x >>> 28) + 4)) ^ x) >>> 0, 277803737) >>> 0;
  const h = ((word >>> 22) ^ word) >>> 0;
  return (h >>> 8) / 8388608 - 1;
}

/** (rows, cols) of a weight: a matrix as it is, a vector (a norm's gain) as one row. */
export function matrixDims(w: { shape: readonly number[] }, what = 'weight'): { R: number; C: number } {
  if (w.shape.length === 1) return { R: 1, C: w.shape[0] };
  if (w.shape.length === 2) return { R: w.shape[0], C: w.shape[1] };
  throw new Error(`${what}: a weight must be a vector or a matrix, got shape [${w.shape.join(', ')}]`);
}

function checkArgs(
  what: string,
  w: HostTensor,
  w0: HostTensor,
  u: HostTensor,
  v: HostTensor,
): { R: number; C: number } {
  const { R, C } = matrixDims(w, what);
  if (w0.data.length !== w.data.length)
    throw new Error(`${what}: W_0 has ${w0.data.length} elements, W has ${w.data.length}`);
  if (u.data.length !== R) throw new Error(`${what}: u must have one element per row (${R}), got ${u.data.length}`);
  if (v.data.length !== C) throw new Error(`${what}: v must have one element per column (${C}), got ${v.data.length}`);
  return { R, C };
}

/**
 * Statistics of dW = w - w0 (R, C), in f64:
 *   out[3 slot] = ||dW||_F^2, out[3 slot + 1] = ||w0||_F^2, out[3 slot + 2] = sigma_1^2 = ||dW v||^2,
 * with v (C) the unit vector after `iterations` steps of v <- dW^T dW v / ||dW^T dW v|| from powerStart, and
 * u (R) = dW v (so sigma_1 u_1 v_1^T = u v^T). A zero dW gives v = 0, u = 0 and sigma_1^2 = 0.
 */
export function weightUpdateStats(
  out: HostTensor,
  u: HostTensor,
  v: HostTensor,
  w: HostTensor,
  w0: HostTensor,
  opts: WeightStatsOptions,
): void {
  const what = 'weightUpdateStats';
  const { R, C } = checkArgs(what, w, w0, u, v);
  const { slot, iterations } = opts;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error(`${what}: iterations must be a whole number >= 1, got ${iterations}`);
  if (!Number.isInteger(slot) || slot < 0 || 3 * slot + 3 > out.data.length)
    throw new Error(`${what}: slot ${slot} is outside out (${out.data.length} elements)`);
  const d = new Float64Array(R * C);
  let deltaSq = 0;
  let startSq = 0;
  for (let i = 0; i < d.length; i++) {
    d[i] = w.data[i] - w0.data[i];
    deltaSq += d[i] * d[i];
    startSq += w0.data[i] * w0.data[i];
  }
  const vv = Float64Array.from({ length: C }, (_, c) => powerStart(c));
  const uu = new Float64Array(R);
  const multiplyV = () => {
    for (let r = 0; r < R; r++) {
      let s = 0;
      for (let c = 0; c < C; c++) s += d[r * C + c] * vv[c];
      uu[r] = s;
    }
  };
  for (let k = 0; k < iterations; k++) {
    multiplyV();
    let norm = 0;
    for (let c = 0; c < C; c++) {
      let s = 0;
      for (let r = 0; r < R; r++) s += d[r * C + c] * uu[r];
      vv[c] = s;
      norm += s * s;
    }
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let c = 0; c < C; c++) vv[c] *= inv;
  }
  multiplyV();
  let sigmaSq = 0;
  for (let r = 0; r < R; r++) sigmaSq += uu[r] * uu[r];
  out.data[3 * slot] = deltaSq;
  out.data[3 * slot + 1] = startSq;
  out.data[3 * slot + 2] = sigmaSq;
  u.data.set(uu);
  v.data.set(vv);
}

/** w[r, c] = w0[r, c] + u[r] v[c]: the starting weights plus the rank-1 update (u, v from weightUpdateStats). */
export function rank1Apply(w: HostTensor, w0: HostTensor, u: HostTensor, v: HostTensor): void {
  const { R, C } = checkArgs('rank1Apply', w, w0, u, v);
  for (let r = 0; r < R; r++)
    for (let c = 0; c < C; c++) w.data[r * C + c] = w0.data[r * C + c] + u.data[r] * v.data[c];
}

/** The share of ||dW||_F^2 in the top singular direction, sigma_1^2 / ||dW||_F^2 (0 when dW = 0), from the stats. */
export function rank1Share(deltaSq: number, sigma1Sq: number): number {
  return deltaSq > 0 ? Math.min(1, sigma1Sq / deltaSq) : 0;
}

/** ||W - W_0||_F / ||W_0||_F from the stats (0 when W_0 is zero). */
export function relativeUpdate(deltaSq: number, startSq: number): number {
  return startSq > 0 ? Math.sqrt(deltaSq / startSq) : 0;
}
