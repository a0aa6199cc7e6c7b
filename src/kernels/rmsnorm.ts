// Typed wrappers of shaders/rmsnorm.wgsl (Hugging Face Llama RMSNorm, per row of the last dimension).
// Same names and argument order as src/reference/rmsnorm.ts, after the recorder. Not LayerNorm.

import raw from '../../shaders/rmsnorm.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import type { RmsnormBackwardOptions, RmsnormOptions } from '../reference/rmsnorm';
import { rowLayout, rowWorkgroups } from './rows';
import { valueTypeFamily } from './value-type';

export type { RmsnormBackwardOptions, RmsnormOptions } from '../reference/rmsnorm';

/** Channels (values of the shader's V) per dWeight workgroup of the backward (its 64 threads: 64 / COLS = 16 row lanes per channel). */
const COLS = 4;

const PARAMS = uniforms('Params', {
  rows: 'u32', // N = B*T
  C: 'u32', // channels (floats)
  eps: 'f32',
});
export const RMSNORM_SHADER = declareShader('rmsnorm.wgsl', raw, { uniforms: [PARAMS] });

/** Checks the rmsnorm shapes and returns (N rows, C channels). */
function rmsnormDims(
  kernel: string,
  x: Tensor,
  weight: Tensor,
  rstd: Tensor,
  others: [Tensor, string][],
): { N: number; C: number } {
  if (weight.shape.length !== 1 || weight.shape[0] < 1)
    throw new Error(`${kernel}: weight must be (C) with C >= 1, got ${weight.describe()}`);
  const C = weight.shape[0];
  if (x.shape.length < 1 || x.shape[x.shape.length - 1] !== C)
    throw new Error(`${kernel}: x must be (B,T,C) with C=${C}, got ${x.describe()}`);
  const N = x.size / C;
  if (rstd.size !== N) throw new Error(`${kernel}: rstd ${rstd.describe()} must have B*T=${N} elements`);
  for (const [t, name] of others) {
    if (t.size !== x.size || t.shape[t.shape.length - 1] !== C) {
      throw new Error(`${kernel}: ${name} ${t.describe()} must have the shape of x ${x.describe()}`);
    }
  }
  for (const t of [x, weight, rstd, ...others.map(([t]) => t)])
    if (t.dtype !== 'f32') throw new Error(`${kernel}: ${t.describe()} must be f32`);
  return { N, C };
}

/**
 * out = weight * x * rstd, rstd = 1/sqrt(mean(x^2) + eps) per row. A thread per row below C = 1024, else 4-64
 * lanes per row (rows.ts, rowLayout); rstd does not depend on the number of rows.
 * @param out    (B,T,C) normalized output, overwritten (may not alias x).
 * @param rstd   (B*T) reciprocal RMS per row, overwritten; kept for the backward.
 * @param x      (B,T,C) input.
 * @param weight (C) gain.
 */
export function rmsnormForward(
  rec: Recorder,
  out: Tensor,
  rstd: Tensor,
  x: Tensor,
  weight: Tensor,
  opts: RmsnormOptions,
): void {
  const { N, C } = rmsnormDims('rmsnormForward', x, weight, rstd, [[out, 'out']]);
  const layout = rowLayout(C);
  rec.dispatch({
    family: valueTypeFamily(rec.ctx, 'rmsnorm', RMSNORM_SHADER.source, C).family,
    entry: 'rmsnorm_forward',
    label: 'rmsnorm.rmsnorm_forward',
    constants: { ...layout },
    params: PARAMS.pack({ rows: N, C, eps: opts.eps }),
    bindings: [out, rstd, x, weight],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}

/**
 * Backward of rmsnormForward, two dispatches: ceil(C / 4) (C / 16 with vec4) dWeight column workgroups (deterministic compensated
 * sums, no atomics), then dx in the forward's row layout (the column reduction's barriers would slow every row
 * workgroup down on SwiftShader if they shared an entry point).
 * dx_j = r * w_j * dy_j - r^3 * x_j / C * sum_i(dy_i * w_i * x_i);  dWeight_i += sum over rows of dy_i * x_i * r.
 * @param dx      (B,T,C) input gradient, overwritten (or added to with `accumulate`).
 * @param dWeight (C) gain gradient, always accumulated into (deterministic column reduction, no atomics).
 * @param dOut    (B,T,C) upstream gradient.
 * @param x       (B,T,C) forward input.
 * @param weight  (C) gain.
 * @param rstd    (B*T) saved by the forward.
 */
export function rmsnormBackward(
  rec: Recorder,
  dx: Tensor,
  dWeight: Tensor,
  dOut: Tensor,
  x: Tensor,
  weight: Tensor,
  rstd: Tensor,
  opts: RmsnormBackwardOptions = {},
): void {
  const { N, C } = rmsnormDims('rmsnormBackward', x, weight, rstd, [
    [dx, 'dx'],
    [dOut, 'dOut'],
  ]);
  if (dWeight.size !== C || dWeight.dtype !== 'f32')
    throw new Error(`rmsnormBackward: dWeight ${dWeight.describe()} must be f32 (C=${C})`);
  const { family, values } = valueTypeFamily(rec.ctx, 'rmsnorm', RMSNORM_SHADER.source, C); // values: C, or C / 4 with vec4
  const params = PARAMS.pack({ rows: N, C, eps: 0 });
  const maxDim = rec.ctx.device.limits.maxComputeWorkgroupsPerDimension;
  rec.dispatch({
    family,
    entry: 'rmsnorm_backward_weight',
    label: 'rmsnorm.rmsnorm_backward_weight',
    constants: { COLS },
    params,
    bindings: [dWeight, dOut, x, rstd],
    workgroups: grid(Math.ceil(values / COLS), maxDim),
  });
  const layout = rowLayout(C);
  rec.dispatch({
    family,
    entry: 'rmsnorm_backward',
    label: 'rmsnorm.rmsnorm_backward',
    constants: { ...layout, ACCUMULATE: !!opts.accumulate },
    params,
    bindings: [dx, dOut, x, rstd, weight],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}
