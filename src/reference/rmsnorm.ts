// CPU twin of shaders/rmsnorm.wgsl: Hugging Face Llama RMSNorm, y = w * x / sqrt(mean(x^2) + eps), per row.
// Forward saves rstd = 1/sqrt(mean(x^2) + eps) per row for the backward. No mean subtraction, no bias
// (that would be LayerNorm, which this model does not use).
// GPU entry points: rmsnorm_forward; rmsnormBackward is rmsnorm_backward (dx per row) and
// rmsnorm_backward_weight (dWeight, a deterministic column reduction).

import type { HostTensor } from '../core/host-tensor';

export interface RmsnormOptions {
  /** The epsilon inside the square root (HF `rms_norm_eps`, e.g. 1e-5 or 1e-6). */
  eps: number;
}

export interface RmsnormBackwardOptions {
  /** Add dx into the existing contents of `dx` (the residual-stream gradient) instead of overwriting it. */
  accumulate?: boolean;
}

/** Checks the rmsnorm shapes and returns (N rows, C channels). */
function rmsnormDims(
  kernel: string,
  x: HostTensor,
  weight: HostTensor,
  rstd: HostTensor,
  others: [HostTensor, string][],
): { N: number; C: number } {
  if (weight.shape.length !== 1) throw new Error(`${kernel}: weight must be (C), got [${weight.shape.join(', ')}]`);
  const C = weight.shape[0];
  if (x.shape.length < 1 || x.shape[x.shape.length - 1] !== C) {
    throw new Error(`${kernel}: x must be (B,T,C) with C=${C}, got [${x.shape.join(', ')}]`);
  }
  const N = x.data.length / C;
  if (rstd.data.length !== N) throw new Error(`${kernel}: rstd has ${rstd.data.length} elements, want B*T=${N}`);
  for (const [t, name] of others) {
    if (t.data.length !== x.data.length || t.shape[t.shape.length - 1] !== C) {
      throw new Error(
        `${kernel}: ${name} has shape [${t.shape.join(', ')}], want the shape of x [${x.shape.join(', ')}]`,
      );
    }
  }
  return { N, C };
}

/**
 * out = weight * x * rstd, rstd = 1/sqrt(mean(x^2) + eps) per row.
 * @param out    (B,T,C) normalized output, overwritten (may not alias x).
 * @param rstd   (B*T) reciprocal RMS per row, overwritten; kept for the backward.
 * @param x      (B,T,C) input.
 * @param weight (C) gain.
 */
export function rmsnormForward(
  out: HostTensor,
  rstd: HostTensor,
  x: HostTensor,
  weight: HostTensor,
  opts: RmsnormOptions,
): void {
  const { N, C } = rmsnormDims('rmsnormForward', x, weight, rstd, [[out, 'out']]);
  for (let n = 0; n < N; n++) {
    const o = n * C;
    let ss = 0;
    for (let c = 0; c < C; c++) ss += x.data[o + c] * x.data[o + c];
    const r = 1 / Math.sqrt(ss / C + opts.eps);
    rstd.data[n] = r;
    for (let c = 0; c < C; c++) out.data[o + c] = weight.data[c] * (x.data[o + c] * r);
  }
}

/**
 * Backward of rmsnormForward.
 * dx_j = r * w_j * dy_j - r^3 * x_j / C * sum_i(dy_i * w_i * x_i);  dWeight_i += sum over rows of dy_i * x_i * r.
 * @param dx      (B,T,C) input gradient, overwritten (or added to with `accumulate`).
 * @param dWeight (C) gain gradient, always accumulated into.
 * @param dOut    (B,T,C) upstream gradient.
 * @param x       (B,T,C) forward input.
 * @param weight  (C) gain.
 * @param rstd    (B*T) saved by the forward.
 */
export function rmsnormBackward(
  dx: HostTensor,
  dWeight: HostTensor,
  dOut: HostTensor,
  x: HostTensor,
  weight: HostTensor,
  rstd: HostTensor,
  opts: RmsnormBackwardOptions = {},
): void {
  const { N, C } = rmsnormDims('rmsnormBackward', x, weight, rstd, [
    [dx, 'dx'],
    [dOut, 'dOut'],
  ]);
  if (dWeight.data.length !== C)
    throw new Error(`rmsnormBackward: dWeight has ${dWeight.data.length} elements, want C=${C}`);
  const dw = new Float64Array(C); // summed over rows in JS numbers, added to dWeight once
  for (let n = 0; n < N; n++) {
    const o = n * C;
    const r = rstd.data[n];
    let dot = 0; // sum_i dy_i * w_i * x_i
    for (let c = 0; c < C; c++) dot += dOut.data[o + c] * weight.data[c] * x.data[o + c];
    const k = (r * r * r * dot) / C;
    for (let c = 0; c < C; c++) {
      const g = r * weight.data[c] * dOut.data[o + c] - k * x.data[o + c];
      dx.data[o + c] = (opts.accumulate ? dx.data[o + c] : 0) + g;
      dw[c] += dOut.data[o + c] * x.data[o + c] * r;
    }
  }
  for (let c = 0; c < C; c++) dWeight.data[c] += dw[c];
}
