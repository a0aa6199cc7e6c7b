// CPU twins of shaders/reduce.wgsl: per-row sum and max of a (rows, cols) tensor into (rows).

import { rowsCols } from './rows';
import type { HostTensor } from '../core/host-tensor';

function reduceRows(
  what: string,
  out: HostTensor,
  x: HostTensor,
  init: number,
  op: (acc: number, v: number) => number,
): void {
  const { rows, cols } = rowsCols(x, what);
  if (out.data.length !== rows)
    throw new Error(`${what}: output has ${out.data.length} elements, input has ${rows} rows`);
  for (let r = 0; r < rows; r++) {
    let acc = init;
    for (let c = 0; c < cols; c++) acc = op(acc, x.data[r * cols + c]);
    out.data[r] = acc;
  }
}

/** out[r] = sum_c x[r, c] */
export function reduceSumRows(out: HostTensor, x: HostTensor): void {
  reduceRows('reduceSumRows', out, x, 0, (a, v) => a + v);
}

/** out[r] = max_c x[r, c] */
export function reduceMaxRows(out: HostTensor, x: HostTensor): void {
  reduceRows('reduceMaxRows', out, x, -Infinity, (a, v) => Math.max(a, v));
}
