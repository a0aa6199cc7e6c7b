// Typed wrappers of shaders/logprob.wgsl: per-row log-prob of the target and full-vocabulary entropy of
// softmax(logits / tau), and their backward. Same names and argument order as src/reference/logprob.ts.
// Not the sampler (sampler.ts) and not the SFT loss (cross-entropy.ts). Rows are laid out by rowLayout(V) (rows.ts:
// a thread per row for short vocabularies, up to 64 lanes for long ones), the same layout as the sampler's, so the
// two compute a row's statistics in the same order whatever the number of rows.

import raw from '../../shaders/logprob.wgsl?raw';
import { declareShader, uniforms, type Recorder, type Tensor } from '../gpu';
import type { LogprobOptions } from '../reference/logprob';
import { rowLayout, rowWorkgroups, rowsCols } from './rows';
import { WGSL_BLOCKS, rowFamily } from './wgsl-blocks';

const PARAMS = uniforms('Params', {
  rows: 'u32',
  cols: 'u32',
  tau: 'f32', // temperature > 0: z = logits / tau
});
export const LOGPROB_SHADER = declareShader('logprob.wgsl', raw, { uniforms: [PARAMS], blocks: WGSL_BLOCKS });

/** shaders/logprob.wgsl with its shared blocks, in the recorder's device's row reduction variant (wgsl-blocks.ts). */
const family = (rec: Recorder) => rowFamily(rec.ctx, 'logprob', LOGPROB_SHADER.source, 'logprob.wgsl');

function temperatureOf(kernel: string, opts: LogprobOptions): number {
  const tau = opts.temperature ?? 1;
  if (!(tau > 0) || !Number.isFinite(tau))
    throw new Error(`${kernel}: temperature must be a positive number, got ${tau}`);
  return tau;
}

/** Checks (N,V) f32 logits, (N) u32 targets (or tokens) and (N) row tensors; returns N and V. */
export function headDims(
  kernel: string,
  logits: Tensor,
  targets: Tensor<'u32'> | null,
  rowTensors: [Tensor, string][],
  targetsName = 'targets',
): { N: number; V: number } {
  if (logits.shape.length < 2) throw new Error(`${kernel}: logits must be (N,V), got ${logits.describe()}`);
  if (logits.dtype !== 'f32') throw new Error(`${kernel}: logits must be f32, got ${logits.describe()}`);
  const { rows: N, cols: V } = rowsCols(logits);
  if (targets) {
    if (targets.dtype !== 'u32') throw new Error(`${kernel}: ${targetsName} must be u32, got ${targets.describe()}`);
    if (targets.size !== N)
      throw new Error(
        `${kernel}: ${targetsName} ${targets.describe()} must have one entry per row of ${logits.describe()}`,
      );
  }
  for (const [t, name] of rowTensors) {
    if (t.size !== N) throw new Error(`${kernel}: ${name} ${t.describe()} must have N=${N} elements`);
  }
  return { N, V };
}

/**
 * logprob[n] = log softmax(logits[n] / tau)[targets[n]];  entropy[n] = -sum_v p_v log p_v.
 * @param logprob (N) overwritten.
 * @param entropy (N) overwritten.
 * @param logits  (N,V) raw logits.
 * @param targets (N) u32 token ids, each < V (not checked on the GPU; an out-of-range id reads the row's last logit).
 * @param sumPiSquared (N) overwritten with sum_v p_v^2 when given (the optimal token baseline's input); absent,
 *   the plain entry runs and nothing more is computed.
 */
export function logprobForward(
  rec: Recorder,
  logprob: Tensor,
  entropy: Tensor,
  logits: Tensor,
  targets: Tensor<'u32'>,
  opts: LogprobOptions = {},
  sumPiSquared?: Tensor,
): void {
  const kernel = 'logprobForward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = headDims(kernel, logits, targets, [
    [logprob, 'logprob'],
    [entropy, 'entropy'],
    ...(sumPiSquared ? ([[sumPiSquared, 'sumPiSquared']] as [Tensor, string][]) : []),
  ]);
  const layout = rowLayout(V);
  rec.dispatch({
    family: family(rec),
    entry: sumPiSquared ? 'logprob_forward_sum_pi_squared' : 'logprob_forward',
    constants: { ...layout },
    params: PARAMS.pack({ rows: N, cols: V, tau }),
    bindings: sumPiSquared ? [logprob, entropy, logits, targets, sumPiSquared] : [logprob, entropy, logits, targets],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}

/**
 * Backward of logprobForward (softmax recomputed): dLogits = (dLogprob ([v = t] - p) - dEntropy p (log p + H)) / tau.
 * @param dLogits  (N,V) overwritten.
 * @param dLogprob (N) upstream gradient of logprob.
 * @param dEntropy (N) upstream gradient of entropy.
 * @param logits   (N,V) forward input.
 * @param targets  (N) forward input (u32).
 */
export function logprobBackward(
  rec: Recorder,
  dLogits: Tensor,
  dLogprob: Tensor,
  dEntropy: Tensor,
  logits: Tensor,
  targets: Tensor<'u32'>,
  opts: LogprobOptions = {},
): void {
  const kernel = 'logprobBackward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = headDims(kernel, logits, targets, [
    [dLogprob, 'dLogprob'],
    [dEntropy, 'dEntropy'],
  ]);
  if (dLogits.size !== logits.size)
    throw new Error(`${kernel}: ${dLogits.describe()} must have the shape of ${logits.describe()}`);
  const layout = rowLayout(V);
  rec.dispatch({
    family: family(rec),
    entry: 'logprob_backward',
    constants: { ...layout },
    params: PARAMS.pack({ rows: N, cols: V, tau }),
    // logits at binding 3, as in the forward (the shader's shared row statistics read one `logits` variable)
    bindings: [dLogits, dLogprob, logits, dEntropy, targets],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}
