// CPU twin of shaders/projection.wgsl: the fused few-rows projections of a decode step. projectionQkv is attention's
// q, k and v products (y_s = op(x) W_s^T + b_s) and projectionGateUp the MLP's gate and up products with SwiGLU
// (act = silu(op(x) Wg^T) * (op(x) Wu^T)), where op(x) is x or, with a gain, x's RMSNorm folded in:
// op(x)[i, k] = x[i, k] g[k] rstd_i, rstd_i = 1/sqrt(mean_k x[i, k]^2 + eps). They equal rmsnormForward, matmul
// (A*B^T), biasAdd and swigluForward run one after another up to the order of the sums (rstd applied after the dot
// product here and in the kernel, before it in rmsnormForward).

import type { HostTensor } from '../core/host-tensor';

/** The folded RMSNorm of the input rows: its gain (K) and epsilon. */
export interface FoldedNorm {
  gain: HostTensor;
  eps: number;
}

/** The rows and width of x (M, K) and each weight's rows, checked against the outputs (M, N_s). */
function projectionDims(
  kernel: string,
  ys: readonly HostTensor[],
  x: HostTensor,
  ws: readonly HostTensor[],
  norm: FoldedNorm | null,
): { M: number; K: number; N: number[] } {
  const K = x.shape[x.shape.length - 1];
  const M = x.data.length / K;
  const N = ws.map((w, s) => {
    if (w.shape.length !== 2 || w.shape[1] !== K)
      throw new Error(`${kernel}: weight ${s} must be (N, ${K}), got [${w.shape.join(', ')}]`);
    return w.shape[0];
  });
  ys.forEach((y, s) => {
    const n = N[Math.min(s, N.length - 1)];
    if (y.data.length !== M * n || y.shape[y.shape.length - 1] !== n)
      throw new Error(`${kernel}: output ${s} must be (${M}, ${n}), got [${y.shape.join(', ')}]`);
  });
  if (norm && norm.gain.data.length !== K)
    throw new Error(`${kernel}: the norm's gain must have ${K} elements, got ${norm.gain.data.length}`);
  return { M, K, N };
}

/** Each row's op(x) and the factor its products are scaled by (rstd, or 1 without a norm). */
function inputRows(
  x: HostTensor,
  M: number,
  K: number,
  norm: FoldedNorm | null,
): { rows: Float64Array[]; r: number[] } {
  const rows: Float64Array[] = [];
  const r: number[] = [];
  for (let i = 0; i < M; i++) {
    const row = new Float64Array(K);
    let ss = 0;
    for (let k = 0; k < K; k++) {
      const v = x.data[i * K + k];
      ss += v * v;
      row[k] = norm ? v * norm.gain.data[k] : v;
    }
    rows.push(row);
    r.push(norm ? 1 / Math.sqrt(ss / K + norm.eps) : 1);
  }
  return { rows, r };
}

function dot(row: Float64Array, w: HostTensor, j: number, K: number): number {
  let s = 0;
  for (let k = 0; k < K; k++) s += row[k] * w.data[j * K + k];
  return s;
}

/**
 * y_s = op(x) W_s^T (+ b_s) for s = 0, 1, 2 (overwritten).
 * @param ys    three outputs (M, N_s).
 * @param x     (M, K) input rows (the residual stream with a norm, else the normed rows).
 * @param ws    three weights (N_s, K).
 * @param opts  the folded norm, if any, and the three biases (N_s), if any.
 */
export function projectionQkv(
  ys: readonly [HostTensor, HostTensor, HostTensor],
  x: HostTensor,
  ws: readonly [HostTensor, HostTensor, HostTensor],
  opts: { norm: FoldedNorm | null; biases: readonly [HostTensor, HostTensor, HostTensor] | null },
): void {
  const { M, K, N } = projectionDims('projectionQkv', ys, x, ws, opts.norm);
  opts.biases?.forEach((b, s) => {
    if (b.data.length !== N[s]) throw new Error(`projectionQkv: bias ${s} must have ${N[s]} elements`);
  });
  const { rows, r } = inputRows(x, M, K, opts.norm);
  ys.forEach((y, s) => {
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N[s]; j++)
        y.data[i * N[s] + j] = r[i] * dot(rows[i], ws[s], j, K) + (opts.biases ? opts.biases[s].data[j] : 0);
  });
}

/**
 * act = silu(op(x) Wg^T) * (op(x) Wu^T) (overwritten).
 * @param act  (M, F).
 * @param x    (M, K) input rows.
 * @param wg   (F, K) gate weight.
 * @param wu   (F, K) up weight.
 */
export function projectionGateUp(
  act: HostTensor,
  x: HostTensor,
  wg: HostTensor,
  wu: HostTensor,
  opts: { norm: FoldedNorm | null },
): void {
  const { M, K, N } = projectionDims('projectionGateUp', [act], x, [wg, wu], opts.norm);
  if (N[0] !== N[1]) throw new Error(`projectionGateUp: gate has ${N[0]} rows, up ${N[1]}`);
  const F = N[0];
  const { rows, r } = inputRows(x, M, K, opts.norm);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < F; j++) {
      const g = Math.fround(r[i] * dot(rows[i], wg, j, K));
      const u = Math.fround(r[i] * dot(rows[i], wu, j, K));
      act.data[i * F + j] = g * (1 / (1 + Math.exp(-g))) * u;
    }
}
