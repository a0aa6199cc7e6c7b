// Typed wrappers of shaders/cross-entropy.wgsl: the masked-mean SFT loss and its backward. Same names and
// argument order as src/reference/cross-entropy.ts; the mask is an f32 tensor (N), targets u32 (N).
// Each call records two dispatches (per-row work, then a one-workgroup fixed-order reduction), with the
// intermediate in a per-context scratch tensor, so the result is deterministic and never read back. The per-row
// dispatches give a row LANES threads and a workgroup ROWS rows, from the vocabulary size (rows.ts, rowLayout).

import raw from '../../shaders/cross-entropy.wgsl?raw';
import { declareShader, uniforms, type GpuContext, type Recorder, type Tensor } from '../gpu';
import type { CrossEntropyBackwardOptions } from '../reference/cross-entropy';
import { headDims } from './logprob';
import { rowLayout, rowWorkgroups } from './rows';
import { WGSL_BLOCKS, rowFamily } from './wgsl-blocks';

const PARAMS = uniforms('Params', {
  rows: 'u32',
  cols: 'u32',
  dLoss: 'f32', // backward only: upstream gradient of the scalar loss
});
export const CROSS_ENTROPY_SHADER = declareShader('cross-entropy.wgsl', raw, {
  uniforms: [PARAMS],
  blocks: WGSL_BLOCKS,
});

/** shaders/cross-entropy.wgsl with its shared blocks, in the recorder's device's row reduction variant (wgsl-blocks.ts). */
const familyOf = (rec: Recorder) =>
  rowFamily(rec.ctx, 'cross-entropy', CROSS_ENTROPY_SHADER.source, 'cross-entropy.wgsl');

/** Threads of the one workgroup of the final fixed-order reductions (cross_entropy_reduce, _mask_sum). */
const REDUCE_WG = 256;

const scratchTensors = new WeakMap<GpuContext, Map<string, Tensor>>();

/**
 * A scratch tensor owned by the context, one per (purpose, size), reused by every call. Safe within and
 * across command buffers because dispatches that use it run in recording order; it lives as long as the device.
 */
function scratch(ctx: GpuContext, purpose: string, size: number): Tensor {
  let m = scratchTensors.get(ctx);
  if (!m) scratchTensors.set(ctx, (m = new Map()));
  const key = `${purpose}:${size}`;
  let t = m.get(key);
  if (!t) m.set(key, (t = ctx.tensor([Math.max(1, size)], { label: `cross-entropy scratch ${key}` })));
  return t;
}

export interface CrossEntropyForwardOptions {
  /** (N) tensor to hold the per-row weighted losses (default: a scratch tensor kept by the context). */
  rowLoss?: Tensor;
}

function checkMask(kernel: string, mask: Tensor, N: number): void {
  if (mask.dtype !== 'f32') throw new Error(`${kernel}: mask must be f32 row weights, got ${mask.describe()}`);
  if (mask.size !== N) throw new Error(`${kernel}: mask ${mask.describe()} must have N=${N} entries`);
}

/**
 * loss[0] = sum_n mask[n] (lse_n - logits[n, targets[n]]) / sum_n mask[n] (0 when every row is masked).
 * @param loss    (1) overwritten.
 * @param logits  (N,V) raw logits.
 * @param targets (N) u32 token ids (ignored where mask is 0).
 * @param mask    (N) f32 row weights, 0 or 1.
 */
export function crossEntropyForward(
  rec: Recorder,
  loss: Tensor,
  logits: Tensor,
  targets: Tensor<'u32'>,
  mask: Tensor,
  opts: CrossEntropyForwardOptions = {},
): void {
  const kernel = 'crossEntropyForward';
  const { N, V } = headDims(kernel, logits, targets, []);
  checkMask(kernel, mask, N);
  if (loss.size !== 1) throw new Error(`${kernel}: loss must have 1 element, got ${loss.describe()}`);
  const rowLoss = opts.rowLoss ?? scratch(rec.ctx, 'rowLoss', N);
  if (rowLoss.size !== N) throw new Error(`${kernel}: rowLoss ${rowLoss.describe()} must have N=${N} elements`);
  if (N === 0) return;
  const family = familyOf(rec);
  const params = PARAMS.pack({ rows: N, cols: V, dLoss: 0 });
  const layout = rowLayout(V);
  rec.dispatch({
    family,
    entry: 'cross_entropy_rows',
    constants: { ...layout },
    params,
    bindings: [rowLoss, logits, targets, mask],
    workgroups: rowWorkgroups(rec, N, layout),
  });
  rec.dispatch({
    family,
    entry: 'cross_entropy_reduce',
    constants: { RED_WG: REDUCE_WG },
    params,
    bindings: [loss, rowLoss, mask],
    workgroups: [1],
  });
}

/**
 * Backward of crossEntropyForward: dLogits[n, v] = dLoss mask[n] / sum(mask) (softmax(logits[n])_v - [v = t_n]).
 * @param dLogits (N,V) overwritten (rows with mask 0 get zeros).
 * @param logits  (N,V) forward input.
 * @param targets (N) forward input (u32).
 * @param mask    (N) forward input (f32).
 */
export function crossEntropyBackward(
  rec: Recorder,
  dLogits: Tensor,
  logits: Tensor,
  targets: Tensor<'u32'>,
  mask: Tensor,
  opts: CrossEntropyBackwardOptions = {},
): void {
  const kernel = 'crossEntropyBackward';
  const { N, V } = headDims(kernel, logits, targets, []);
  checkMask(kernel, mask, N);
  if (dLogits.size !== logits.size)
    throw new Error(`${kernel}: ${dLogits.describe()} must have the shape of ${logits.describe()}`);
  if (N === 0) return;
  const dLoss = opts.dLoss ?? 1;
  const count = scratch(rec.ctx, 'maskSum', 1);
  const family = familyOf(rec);
  const params = PARAMS.pack({ rows: N, cols: V, dLoss });
  rec.dispatch({
    family,
    entry: 'cross_entropy_mask_sum',
    constants: { RED_WG: REDUCE_WG },
    params,
    bindings: [count, mask],
    workgroups: [1],
  });
  const layout = rowLayout(V);
  rec.dispatch({
    family,
    entry: 'cross_entropy_backward',
    constants: { ...layout },
    params,
    bindings: [dLogits, logits, targets, mask, count],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}
