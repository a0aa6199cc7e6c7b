// CPU twin of shaders/projection.wgsl: the fused few-rows projections of a decode step. projectionQkv is attention's
// q, k and v products (y_s = op(x) W_s^T + b_s) and projectionGateUp the MLP's gate and up products with SwiGLU
// (act = silu(op(x) Wg^T) * (op(x) Wu^T)), where op(x) is x or, with a norm, x's RMSNorm; with a LoRA epilogue each
// product gains s xa_s B_s^T before its bias or SwiGLU. projectionPair is two products of one input (a LoRA layer's
// x A^T for gate and up), projectionAddLora y += x W^T + s xa B^T (an adapted o or down product). The kernel computes
// exactly what rmsnormForward, matmul (A*B^T, accumulating for the adapters), biasAdd and swigluForward compute in
// sequence, so the twin is that sequence.

import { host, type HostTensor } from '../core/host-tensor';
import { biasAdd } from './bias';
import { matmul } from './matmul';
import { rmsnormForward } from './rmsnorm';
import { swigluForward } from './swiglu';

/** The folded RMSNorm of the input rows: its gain (K) and epsilon. */
export interface FoldedNorm {
  gain: HostTensor;
  eps: number;
}

/** A LoRA epilogue: y_s += scale * xa_s B_s^T, xa_s (M, rank), B_s (N_s, rank). */
export interface LoraEpilogue {
  xa: readonly HostTensor[];
  B: readonly HostTensor[];
  scale: number;
}

/** y (M, N) += scale * xa_s B_s^T, as the trainer's loraUp adds it. */
function addLora(y: HostTensor, lora: LoraEpilogue | undefined, s: number): void {
  if (lora) matmul(y, lora.xa[s], lora.B[s], { transB: true, accumulate: true, alpha: lora.scale });
}

/** x as (M, K) rows, normed when `norm` is given. */
function inputRows(kernel: string, x: HostTensor, K: number, norm: FoldedNorm | null): HostTensor {
  if (x.shape[x.shape.length - 1] !== K) throw new Error(`${kernel}: x [${x.shape.join(', ')}] must have ${K} columns`);
  const M = x.data.length / K;
  const rows = host(Float32Array.from(x.data), [M, K]);
  if (!norm) return rows;
  if (norm.gain.data.length !== K) throw new Error(`${kernel}: the norm's gain must have ${K} elements`);
  const out = host(new Float32Array(M * K), [M, K]);
  rmsnormForward(out, host(new Float32Array(M), [M]), rows, norm.gain, { eps: norm.eps });
  return out;
}

/** y (any shape of M * N values) as (M, N). */
function as2d(y: HostTensor, N: number): HostTensor {
  return host(y.data, [y.data.length / N, N]);
}

/**
 * y_s = op(x) W_s^T (+ b_s) for s = 0, 1, 2 (overwritten).
 * @param ys    three outputs (M, N_s).
 * @param x     (M, K) input rows (the residual stream with a norm, else the normed rows).
 * @param ws    three weights (N_s, K).
 * @param opts  the folded norm, if any, the three biases (N_s), if any, and the adapters' epilogue, if any.
 */
export function projectionQkv(
  ys: readonly [HostTensor, HostTensor, HostTensor],
  x: HostTensor,
  ws: readonly [HostTensor, HostTensor, HostTensor],
  opts: {
    norm: FoldedNorm | null;
    biases: readonly [HostTensor, HostTensor, HostTensor] | null;
    lora?: LoraEpilogue;
  },
): void {
  const rows = inputRows('projectionQkv', x, ws[0].shape[1], opts.norm);
  ys.forEach((y, s) => {
    const out = as2d(y, ws[s].shape[0]);
    matmul(out, rows, ws[s], { transB: true });
    addLora(out, opts.lora, s);
    if (opts.biases) biasAdd(out, opts.biases[s]);
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
  opts: { norm: FoldedNorm | null; lora?: LoraEpilogue },
): void {
  if (wg.shape[0] !== wu.shape[0]) throw new Error(`projectionGateUp: gate has ${wg.shape[0]} rows, up ${wu.shape[0]}`);
  const F = wg.shape[0];
  const rows = inputRows('projectionGateUp', x, wg.shape[1], opts.norm);
  const M = rows.shape[0];
  const gate = host(new Float32Array(M * F), [M, F]);
  const up = host(new Float32Array(M * F), [M, F]);
  matmul(gate, rows, wg, { transB: true });
  matmul(up, rows, wu, { transB: true });
  addLora(gate, opts.lora, 0);
  addLora(up, opts.lora, 1);
  swigluForward(as2d(act, F), gate, up);
}

/** y_s = op(x) W_s^T for s = 0, 1 (overwritten): ys (M, N), ws (N, K). */
export function projectionPair(
  ys: readonly [HostTensor, HostTensor],
  x: HostTensor,
  ws: readonly [HostTensor, HostTensor],
  opts: { norm: FoldedNorm | null },
): void {
  const rows = inputRows('projectionPair', x, ws[0].shape[1], opts.norm);
  ys.forEach((y, s) => matmul(as2d(y, ws[s].shape[0]), rows, ws[s], { transB: true }));
}

/** y += x W^T, then y += scale * xa B^T: y (M, N), x (M, K), w (N, K). */
export function projectionAddLora(y: HostTensor, x: HostTensor, w: HostTensor, opts: { lora: LoraEpilogue }): void {
  const out = as2d(y, w.shape[0]);
  matmul(out, inputRows('projectionAddLora', x, w.shape[1], null), w, { transB: true, accumulate: true });
  addLora(out, opts.lora, 0);
}
