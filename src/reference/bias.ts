// CPU twins of shaders/bias.wgsl: adding a per-column bias to every row of a (rows, cols) tensor (Qwen2's q/k/v
// projection biases) and its gradient, the column sums of the output gradient. Not the matmul that precedes it.

import { rowsCols } from './rows';
import type { HostTensor } from '../core/host-tensor';

function checkBias(what: string, bias: HostTensor, x: HostTensor): { rows: number; cols: number } {
  const rc = rowsCols(x, what);
  if (bias.data.length !== rc.cols)
    throw new Error(`${what}: bias has ${bias.data.length} elements, rows have ${rc.cols} columns`);
  return rc;
}

/** x[r, c] += bias[c], in place (the bias of a Linear layer added after its matmul). */
export function biasAdd(x: HostTensor, bias: HostTensor): void {
  const { rows, cols } = checkBias('biasAdd', bias, x);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) x.data[r * cols + c] += bias.data[c];
}

/** dBias[c] += sum_r dy[r, c]: the bias gradient, accumulated like every other parameter gradient. */
export function biasGrad(dBias: HostTensor, dy: HostTensor): void {
  const { rows, cols } = checkBias('biasGrad', dBias, dy);
  for (let c = 0; c < cols; c++) {
    let s = 0;
    for (let r = 0; r < rows; r++) s += dy.data[r * cols + c];
    dBias.data[c] += s;
  }
}
