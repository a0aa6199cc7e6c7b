// CPU twins of shaders/softmax.wgsl: row softmax and log-softmax over the last dimension, forward and backward.
// Stable for large logits: the row max is subtracted before exponentiating.

import { rowsCols } from './rows';
import type { HostTensor } from '../core/host-tensor';

function rowLogSumExp(x: ArrayLike<number>, base: number, cols: number): number {
  let m = -Infinity;
  for (let c = 0; c < cols; c++) m = Math.max(m, x[base + c]);
  let s = 0;
  for (let c = 0; c < cols; c++) s += Math.exp(x[base + c] - m);
  return m + Math.log(s);
}

function checkSame(what: string, ...ts: HostTensor[]): { rows: number; cols: number } {
  const rc = rowsCols(ts[0], what);
  for (const t of ts) {
    if (t.data.length !== ts[0].data.length)
      throw new Error(`${what}: operands differ in size (${t.data.length} vs ${ts[0].data.length})`);
  }
  return rc;
}

/** out = softmax(x) per row */
export function softmaxForward(out: HostTensor, x: HostTensor): void {
  const { rows, cols } = checkSame('softmaxForward', out, x);
  for (let r = 0; r < rows; r++) {
    const lse = rowLogSumExp(x.data, r * cols, cols);
    for (let c = 0; c < cols; c++) out.data[r * cols + c] = Math.exp(x.data[r * cols + c] - lse);
  }
}

/** out = log_softmax(x) per row */
export function logSoftmaxForward(out: HostTensor, x: HostTensor): void {
  const { rows, cols } = checkSame('logSoftmaxForward', out, x);
  for (let r = 0; r < rows; r++) {
    const lse = rowLogSumExp(x.data, r * cols, cols);
    for (let c = 0; c < cols; c++) out.data[r * cols + c] = x.data[r * cols + c] - lse;
  }
}

/** dx = y * (dy - sum(dy * y)) per row, y = softmax(x) */
export function softmaxBackward(dx: HostTensor, y: HostTensor, dy: HostTensor): void {
  const { rows, cols } = checkSame('softmaxBackward', dx, y, dy);
  for (let r = 0; r < rows; r++) {
    const b = r * cols;
    let dot = 0;
    for (let c = 0; c < cols; c++) dot += dy.data[b + c] * y.data[b + c];
    for (let c = 0; c < cols; c++) dx.data[b + c] = y.data[b + c] * (dy.data[b + c] - dot);
  }
}

/** dx = dy - exp(y) * sum(dy) per row, y = log_softmax(x) */
export function logSoftmaxBackward(dx: HostTensor, y: HostTensor, dy: HostTensor): void {
  const { rows, cols } = checkSame('logSoftmaxBackward', dx, y, dy);
  for (let r = 0; r < rows; r++) {
    const b = r * cols;
    let total = 0;
    for (let c = 0; c < cols; c++) total += dy.data[b + c];
    for (let c = 0; c < cols; c++) dx.data[b + c] = dy.data[b + c] - Math.exp(y.data[b + c]) * total;
  }
}
