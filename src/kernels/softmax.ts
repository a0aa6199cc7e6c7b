// Typed wrappers of shaders/softmax.wgsl. Same names and argument order as src/reference/softmax.ts. The shader's
// lane merges are the device's row reduction variant (src/kernels/wgsl-blocks.ts, rowFamily).

import raw from '../../shaders/softmax.wgsl?raw';
import { declareShader, type Recorder, type Tensor } from '../gpu';
import { ROW_PARAMS, rowDispatch } from './rows';
import { WGSL_BLOCKS, rowFamily } from './wgsl-blocks';

export const SOFTMAX_SHADER = declareShader('softmax.wgsl', raw, { uniforms: [ROW_PARAMS], blocks: WGSL_BLOCKS });

/** shaders/softmax.wgsl with its shared blocks, in the recorder's device's variant. */
const family = (rec: Recorder) => rowFamily(rec.ctx, 'softmax', SOFTMAX_SHADER.source, 'softmax.wgsl');

function check(what: string, ...ts: Tensor[]): void {
  for (const t of ts)
    if (t.size !== ts[0].size) throw new Error(`${what}: ${t.describe()} and ${ts[0].describe()} differ in size`);
}

/** out = softmax(x) over the last dimension */
export function softmaxForward(rec: Recorder, out: Tensor, x: Tensor): void {
  check('softmaxForward', out, x);
  rowDispatch(rec, family(rec), 'softmax_forward', x, [out, x]);
}

/** out = log_softmax(x) over the last dimension */
export function logSoftmaxForward(rec: Recorder, out: Tensor, x: Tensor): void {
  check('logSoftmaxForward', out, x);
  rowDispatch(rec, family(rec), 'log_softmax_forward', x, [out, x]);
}

/** dx = y * (dy - sum(dy * y)), y = softmax(x) */
export function softmaxBackward(rec: Recorder, dx: Tensor, y: Tensor, dy: Tensor): void {
  check('softmaxBackward', dx, y, dy);
  rowDispatch(rec, family(rec), 'softmax_backward', y, [dx, y, dy]);
}

/** dx = dy - exp(y) * sum(dy), y = log_softmax(x) */
export function logSoftmaxBackward(rec: Recorder, dx: Tensor, y: Tensor, dy: Tensor): void {
  check('logSoftmaxBackward', dx, y, dy);
  rowDispatch(rec, family(rec), 'log_softmax_backward', y, [dx, y, dy]);
}
