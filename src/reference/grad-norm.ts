// CPU twin of shaders/optimizer.wgsl: the global L2 norm over all gradient tensors and the clip that follows
// (PyTorch clip_grad_norm_ semantics: scale = max_norm / (norm + 1e-6), applied only when norm > max_norm).
// Not the optimizer: adamw.ts can take the scale as `gradScale` instead of a separate pass.

import type { HostTensor } from '../core/host-tensor';

/**
 * norm = sqrt(sum over every tensor and element of g^2), accumulated in JS numbers.
 * @param out   (1) overwritten with the norm.
 * @param grads the gradient tensors, any shapes.
 * @returns the norm (also written to out).
 */
export function gradNorm(out: HostTensor, grads: readonly HostTensor[]): number {
  if (out.data.length !== 1) throw new Error(`gradNorm: out must have 1 element, got ${out.data.length}`);
  let ss = 0;
  for (const g of grads) for (let i = 0; i < g.data.length; i++) ss += g.data[i] * g.data[i];
  const norm = Math.sqrt(ss);
  out.data[0] = norm;
  return norm;
}

/** The clip factor: maxNorm / (norm + 1e-6) when norm > maxNorm, else 1. */
export function clipScale(norm: number, maxNorm: number): number {
  return norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
}

export interface GradClipOptions {
  /** Clip threshold on the global norm (TRL `max_grad_norm`, e.g. 1.0). */
  maxNorm: number;
}

/**
 * Scales every gradient in place by clipScale(norm, maxNorm).
 * @param grads the gradient tensors, scaled in place.
 * @param norm  their global norm, from gradNorm.
 * @returns the factor applied (1 when no clipping happened).
 */
export function gradClip(grads: readonly HostTensor[], norm: number, opts: GradClipOptions): number {
  if (!(opts.maxNorm > 0)) throw new Error(`gradClip: maxNorm must be positive, got ${opts.maxNorm}`);
  const s = clipScale(norm, opts.maxNorm);
  if (s !== 1) for (const g of grads) for (let i = 0; i < g.data.length; i++) g.data[i] *= s;
  return s;
}
