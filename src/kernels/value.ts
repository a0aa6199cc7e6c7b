// Typed wrapper of shaders/value.wgsl: PPO's clipped value loss, token-mean over masked tokens, forward and
// backward in one single-workgroup dispatch (loss, dValues, metrics). Same name and argument order as
// src/reference/value.ts, which states the formulas and the summation order. Not GAE or the returns (src/rl) and
// not the critic's forward; one workgroup loops over every token, meant for batches of up to ~16k tokens.

import raw from '../../shaders/value.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import { VALUE_METRICS, VALUE_THREADS, resolveValueLossOptions, type ValueLossOptions } from '../reference/value';

export { VALUE_METRICS, type ValueLossOptions, type ValueMetricName } from '../reference/value';

const PARAMS = uniforms('Params', {
  count: 'u32', // N * L
  clip: 'u32', // 1: clip V to [Vold - cliprange, Vold + cliprange]
  cliprange: 'f32',
  coef: 'f32', // vf_coef
  agg: 'u32', // 1: divide by aggTokens, the minibatch's masked tokens (gradient accumulation), not the own count
  aggTokens: 'f32',
});
/** WG: the one workgroup's threads, the twin's summation order. */
export const VALUE_SHADER = declareShader('value.wgsl', raw, { uniforms: [PARAMS], consts: { WG: VALUE_THREADS } });

function sameShape(a: Tensor, b: Tensor): boolean {
  return a.shape.length === b.shape.length && a.shape.every((d, i) => d === b.shape[i]);
}

/**
 * PPO's clipped value loss on the GPU (formulas: src/reference/value.ts):
 * loss = coef * sum m 0.5 max((V - R)^2, (clip(V, Vold - eps, Vold + eps) - R)^2) / sum m.
 * @param loss      (1) overwritten.
 * @param dValues   (N, L) overwritten: d loss / d values (0 where mask is 0).
 * @param metrics   (4) overwritten: VALUE_METRICS (value_loss without coef, value_clipfrac, vpred_mean, return_mean).
 * @param values    (N, L) the critic's predictions.
 * @param oldValues (N, L) the predictions at rollout time (the clip's center; unused without cliprange).
 * @param returns   (N, L) the targets.
 * @param mask      (N, L) f32, 1 for tokens that count (not checked on the GPU).
 */
export function valueLossForwardBackward(
  rec: Recorder,
  loss: Tensor,
  dValues: Tensor,
  metrics: Tensor,
  values: Tensor,
  oldValues: Tensor,
  returns: Tensor,
  mask: Tensor,
  opts: ValueLossOptions,
): void {
  const kernel = 'valueLossForwardBackward';
  const { clip, cliprange, coef, totalTokens } = resolveValueLossOptions(kernel, opts);
  const named: [Tensor, string][] = [
    [values, 'values'],
    [oldValues, 'oldValues'],
    [returns, 'returns'],
    [mask, 'mask'],
    [dValues, 'dValues'],
  ];
  for (const [t, name] of named) {
    if (t.dtype !== 'f32') throw new Error(`${kernel}: ${name} must be f32, got ${t.describe()}`);
    if (!sameShape(t, values))
      throw new Error(`${kernel}: ${name} ${t.describe()} must have the shape of values ${values.describe()}`);
  }
  if (loss.size !== 1 || loss.dtype !== 'f32')
    throw new Error(`${kernel}: loss must be one f32, got ${loss.describe()}`);
  if (metrics.size !== VALUE_METRICS.length || metrics.dtype !== 'f32') {
    throw new Error(
      `${kernel}: metrics must be ${VALUE_METRICS.length} f32 (VALUE_METRICS), got ${metrics.describe()}`,
    );
  }
  rec.dispatch({
    family: rec.ctx.family('value', VALUE_SHADER.source),
    entry: 'value_loss_forward_backward',
    params: PARAMS.pack({
      count: values.size,
      clip: clip ? 1 : 0,
      cliprange,
      coef,
      agg: totalTokens !== null ? 1 : 0,
      aggTokens: totalTokens ?? 0,
    }),
    bindings: [loss, dValues, metrics, values, oldValues, returns, mask],
    workgroups: [1],
  });
}
