// Typed wrappers of shaders/bias.wgsl (a Linear layer's bias and its gradient). Same names and argument order as
// src/reference/bias.ts. Used by the GPU model only when the checkpoint has q/k/v biases (Qwen2).

import raw from '../../shaders/bias.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import { rowsCols } from './rows';

const WG = 256;

const PARAMS = uniforms('Params', { rows: 'u32', cols: 'u32' });
export const BIAS_SHADER = declareShader('bias.wgsl', raw, { uniforms: [PARAMS] });

function launch(
  rec: Recorder,
  entry: string,
  out: Tensor,
  input: Tensor,
  rows: number,
  cols: number,
  threads: number,
): void {
  rec.dispatch({
    family: rec.ctx.family('bias', BIAS_SHADER.source),
    entry,
    constants: { WG },
    params: PARAMS.pack({ rows, cols }),
    bindings: [out, input],
    workgroups: grid(Math.max(1, Math.ceil(threads / WG)), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}

/** x[r, c] += bias[c], in place, over the rows of x (its last dimension is the bias's). */
export function biasAdd(rec: Recorder, x: Tensor, bias: Tensor): void {
  const { rows, cols } = rowsCols(x);
  if (bias.size !== cols)
    throw new Error(`biasAdd: ${bias.describe()} must have one element per column of ${x.describe()}`);
  launch(rec, 'bias_add', x, bias, rows, cols, rows * cols);
}

/** dBias[c] += sum_r dy[r, c] (accumulates, like every parameter gradient of the model). */
export function biasGrad(rec: Recorder, dBias: Tensor, dy: Tensor): void {
  const { rows, cols } = rowsCols(dy);
  if (dBias.size !== cols)
    throw new Error(`biasGrad: ${dBias.describe()} must have one element per column of ${dy.describe()}`);
  launch(rec, 'bias_grad', dBias, dy, rows, cols, cols);
}
