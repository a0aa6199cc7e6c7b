// Typed wrapper of shaders/bradley-terry.wgsl: a reward model's Bradley-Terry loss over preference pairs, forward and
// backward in one single-workgroup dispatch (loss, dScores, metrics). Same name and argument order as
// src/reference/bradley-terry.ts, which states the formulas and the summation order. Not the reward model's forward.

import raw from '../../shaders/bradley-terry.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import {
  BT_METRICS,
  BT_THREADS,
  resolveBradleyTerryOptions,
  type BradleyTerryOptions,
} from '../reference/bradley-terry';

export { BT_METRICS, type BradleyTerryOptions, type BtMetricName } from '../reference/bradley-terry';

const PARAMS = uniforms('Params', {
  n: 'u32', // scores
  pairs: 'u32', // P
  center_coef: 'f32', // lambda
});
/** WG: the one workgroup's threads, the twin's summation order. */
export const BRADLEY_TERRY_SHADER = declareShader('bradley-terry.wgsl', raw, {
  uniforms: [PARAMS],
  consts: { WG: BT_THREADS },
});

/**
 * The Bradley-Terry loss on the GPU (formulas: src/reference/bradley-terry.ts):
 * loss = (1/P) sum_p softplus(s[r_p] - s[c_p]) + lambda (s[c_p] + s[r_p])^2.
 * @param loss    (1) overwritten.
 * @param dScores (N) overwritten: d loss / d scores.
 * @param metrics (3) overwritten: BT_METRICS (bt_loss without the centering term, bt_accuracy, bt_margin).
 * @param scores  (N) the reward model's scores.
 * @param pairs   (P, 2) u32 (preferred, other) indices into scores; the caller keeps them below N (not checked on
 *                the GPU: an out-of-range index reads 0 under WebGPU's bounds rules).
 */
export function bradleyTerryForwardBackward(
  rec: Recorder,
  loss: Tensor,
  dScores: Tensor,
  metrics: Tensor,
  scores: Tensor,
  pairs: Tensor<'u32'>,
  opts: BradleyTerryOptions = {},
): void {
  const kernel = 'bradleyTerryForwardBackward';
  const { centerCoef } = resolveBradleyTerryOptions(kernel, opts);
  if (scores.dtype !== 'f32' || dScores.dtype !== 'f32')
    throw new Error(`${kernel}: scores and dScores must be f32, got ${scores.describe()} and ${dScores.describe()}`);
  if (dScores.size !== scores.size)
    throw new Error(`${kernel}: dScores ${dScores.describe()} must have the size of scores ${scores.describe()}`);
  if (pairs.dtype !== 'u32' || pairs.size % 2 !== 0 || pairs.size === 0)
    throw new Error(`${kernel}: pairs must be (P, 2) u32 with P >= 1, got ${pairs.describe()}`);
  if (loss.size !== 1 || loss.dtype !== 'f32')
    throw new Error(`${kernel}: loss must be one f32, got ${loss.describe()}`);
  if (metrics.size !== BT_METRICS.length || metrics.dtype !== 'f32') {
    throw new Error(`${kernel}: metrics must be ${BT_METRICS.length} f32 (BT_METRICS), got ${metrics.describe()}`);
  }
  rec.dispatch({
    family: rec.ctx.family('bradley-terry', BRADLEY_TERRY_SHADER.source),
    entry: 'bradley_terry_forward_backward',
    params: PARAMS.pack({ n: scores.size, pairs: pairs.size / 2, center_coef: centerCoef }),
    bindings: [loss, dScores, metrics, scores, pairs],
    workgroups: [1],
  });
}
