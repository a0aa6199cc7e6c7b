// CPU twins of the GPU-resident variants in shaders/optimizer.wgsl: the clip factor written to a 1-element
// tensor, and AdamW taking its gradient scale from a 1-element tensor. They only adapt the existing twins
// (grad-norm.ts clipScale, adamw.ts adamwStep) to tensors; the math lives there. Plus the composite
// clippedAdamwStep (norm, clip factor, AdamW on every tensor), twin of the GPU's one-command-buffer step.

import { adamwStep, type AdamwOptions } from './adamw';
import { clipScale, gradNorm } from './grad-norm';
import type { HostTensor } from '../core/host-tensor';

function scalarOf(kernel: string, name: string, t: HostTensor): number {
  if (t.data.length !== 1) throw new Error(`${kernel}: ${name} must have 1 element, got ${t.data.length}`);
  return t.data[0];
}

/**
 * scale[0] = clipScale(norm[0], maxNorm): maxNorm / (norm + 1e-6) when norm > maxNorm, else 1.
 * @param scale (1) overwritten.
 * @param norm  (1) the global gradient norm, from gradNorm.
 */
export function gradClipScale(scale: HostTensor, norm: HostTensor, opts: { maxNorm: number }): void {
  if (!(opts.maxNorm > 0)) throw new Error(`gradClipScale: maxNorm must be positive, got ${opts.maxNorm}`);
  scalarOf('gradClipScale', 'scale', scale);
  scale.data[0] = clipScale(scalarOf('gradClipScale', 'norm', norm), opts.maxNorm);
}

/**
 * adamwStep with the gradient scale read from a 1-element tensor (the GPU's clip factor), in place.
 * @param params    (any shape) updated in place.
 * @param m         (same) first moment, updated in place.
 * @param v         (same) second moment, updated in place.
 * @param grads     (same) gradient.
 * @param gradScale (1) multiplies every gradient (e.g. from gradClipScale).
 */
export function adamwStepScaled(
  params: HostTensor,
  m: HostTensor,
  v: HostTensor,
  grads: HostTensor,
  gradScale: HostTensor,
  opts: Omit<AdamwOptions, 'gradScale'>,
): void {
  adamwStep(params, m, v, grads, { ...opts, gradScale: scalarOf('adamwStepScaled', 'gradScale', gradScale) });
}

/** The tensors of one clipped AdamW step: parallel lists, one entry per parameter tensor. */
export interface HostOptimizerState {
  params: readonly HostTensor[];
  m: readonly HostTensor[];
  v: readonly HostTensor[];
  grads: readonly HostTensor[];
}

/**
 * norm[0] = gradNorm(grads); scale[0] = clip factor (1 when maxNorm is undefined); adamwStepScaled on every tensor.
 * @param norm  (1) overwritten with the global gradient norm (before clipping).
 * @param scale (1) overwritten with the clip factor.
 */
export function clippedAdamwStep(
  norm: HostTensor,
  scale: HostTensor,
  state: HostOptimizerState,
  opts: Omit<AdamwOptions, 'gradScale'> & { maxNorm?: number },
): void {
  const n = state.params.length;
  if (state.m.length !== n || state.v.length !== n || state.grads.length !== n) {
    throw new Error(`clippedAdamwStep: params, m, v and grads must be parallel lists`);
  }
  gradNorm(norm, state.grads);
  if (opts.maxNorm === undefined) scale.data[0] = 1;
  else gradClipScale(scale, norm, { maxNorm: opts.maxNorm });
  for (let i = 0; i < n; i++) adamwStepScaled(state.params[i], state.m[i], state.v[i], state.grads[i], scale, opts);
}
