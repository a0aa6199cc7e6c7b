// Typed wrappers of shaders/kl.wgsl: the exact full-vocabulary KL(pi_theta || pi_ref) per row on logits / tau,
// and its backward to the policy's logits. Same names and argument order as src/reference/kl.ts (the formulas).
// Not the per-token KL estimators (objective.ts). Rows are laid out by rowLayout(V) (rows.ts), as logprob's are:
// a thread per row for short vocabularies, up to 64 lanes for long ones; each call is one dispatch.

import raw from '../../shaders/kl.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import type { KlBackwardOptions, KlOptions } from '../reference/kl';
import { headDims } from './logprob';
import { rowLayout, rowWorkgroups } from './rows';
import { WGSL_BLOCKS } from './wgsl-blocks';

const PARAMS = uniforms('Params', {
  rows: 'u32',
  cols: 'u32',
  tau: 'f32', // temperature > 0
  accumulate: 'u32', // backward: 1 adds into dLogits, 0 overwrites
});
export const KL_SHADER = declareShader('kl.wgsl', raw, { uniforms: [PARAMS], blocks: WGSL_BLOCKS });

/** shaders/kl.wgsl with its shared blocks included (src/kernels/wgsl-blocks.ts). */
const source = KL_SHADER.source;

export type { KlBackwardOptions, KlOptions } from '../reference/kl';

/** The shader carries the argmax column as an f32, exact below 2^24. */
const MAX_V = 2 ** 24;

function temperatureOf(kernel: string, opts: KlOptions): number {
  const tau = opts.temperature ?? 1;
  if (!(tau > 0) || !Number.isFinite(tau))
    throw new Error(`${kernel}: temperature must be a positive number, got ${tau}`);
  return tau;
}

/** Checks logits and refLogits (N,V) f32 of one shape, and the (N) row tensors; returns N and V. */
function klDims(
  kernel: string,
  logits: Tensor,
  refLogits: Tensor,
  rowTensors: [Tensor, string][],
): { N: number; V: number } {
  const { N, V } = headDims(kernel, logits, null, rowTensors);
  if (refLogits.dtype !== 'f32') throw new Error(`${kernel}: refLogits must be f32, got ${refLogits.describe()}`);
  if (refLogits.shape.length !== logits.shape.length || refLogits.shape.some((d, i) => d !== logits.shape[i])) {
    throw new Error(`${kernel}: refLogits ${refLogits.describe()} must have the shape of logits ${logits.describe()}`);
  }
  if (V >= MAX_V) throw new Error(`${kernel}: V=${V} is too large (at most ${MAX_V - 1})`);
  return { N, V };
}

/**
 * kl[n] = sum_v p_v (log p_v - log q_v), p = softmax(logits[n] / tau), q = softmax(refLogits[n] / tau).
 * @param kl        (N) overwritten.
 * @param logits    (N,V) the policy's raw logits.
 * @param refLogits (N,V) the reference model's raw logits.
 */
export function klExactForward(
  rec: Recorder,
  kl: Tensor,
  logits: Tensor,
  refLogits: Tensor,
  opts: KlOptions = {},
): void {
  const kernel = 'klExactForward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = klDims(kernel, logits, refLogits, [[kl, 'kl']]);
  if (N === 0) return;
  const layout = rowLayout(V);
  rec.dispatch({
    family: rec.ctx.family('kl', source),
    entry: 'kl_exact_forward',
    constants: { ...layout },
    params: PARAMS.pack({ rows: N, cols: V, tau, accumulate: 0 }),
    bindings: [kl, logits, refLogits],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}

/**
 * Backward of klExactForward to the policy's logits (softmaxes recomputed; refLogits get no gradient):
 * dLogits[n, v] = dKl[n] p_v ((log p_v - log q_v) - kl[n]) / tau.
 * @param dLogits   (N,V) overwritten, or added into with accumulate: true.
 * @param dKl       (N) upstream gradient of kl.
 * @param logits    (N,V) forward input.
 * @param refLogits (N,V) forward input.
 */
export function klExactBackward(
  rec: Recorder,
  dLogits: Tensor,
  dKl: Tensor,
  logits: Tensor,
  refLogits: Tensor,
  opts: KlBackwardOptions = {},
): void {
  const kernel = 'klExactBackward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = klDims(kernel, logits, refLogits, [[dKl, 'dKl']]);
  if (dLogits.size !== logits.size || dLogits.dtype !== 'f32') {
    throw new Error(`${kernel}: dLogits ${dLogits.describe()} must be f32 with the shape of ${logits.describe()}`);
  }
  if (N === 0) return;
  const layout = rowLayout(V);
  rec.dispatch({
    family: rec.ctx.family('kl', source),
    entry: 'kl_exact_backward',
    constants: { ...layout },
    params: PARAMS.pack({ rows: N, cols: V, tau, accumulate: opts.accumulate ? 1 : 0 }),
    bindings: [dLogits, dKl, logits, refLogits],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}
