// Typed wrappers of shaders/reduce.wgsl. Same names and argument order as src/reference/reduce.ts.

import raw from '../../shaders/reduce.wgsl?raw';
import { declareShader, type Recorder, type Tensor } from '../gpu';
import { ROW_PARAMS, rowDispatch, rowsCols } from './rows';

export const REDUCE_SHADER = declareShader('reduce.wgsl', raw, { uniforms: [ROW_PARAMS] });

function check(what: string, out: Tensor, x: Tensor): void {
  const { rows } = rowsCols(x);
  if (out.size !== rows) throw new Error(`${what}: ${out.describe()} must have one element per row of ${x.describe()}`);
}

/** out[r] = sum_c x[r, c] */
export function reduceSumRows(rec: Recorder, out: Tensor, x: Tensor): void {
  check('reduceSumRows', out, x);
  rowDispatch(rec, rec.ctx.family('reduce', REDUCE_SHADER.source), 'reduce_sum_rows', x, [out, x]);
}

/** out[r] = max_c x[r, c] */
export function reduceMaxRows(rec: Recorder, out: Tensor, x: Tensor): void {
  check('reduceMaxRows', out, x);
  rowDispatch(rec, rec.ctx.family('reduce', REDUCE_SHADER.source), 'reduce_max_rows', x, [out, x]);
}
