// CPU twin of shaders/optimizer.wgsl: one AdamW step in place, PyTorch's torch.optim.AdamW semantics
// (decoupled weight decay applied to the parameter before the Adam update, bias-corrected moments).
// Not the learning-rate schedule (the trainer passes lr per step) and not gradient clipping (grad-norm.ts).

import type { HostTensor } from '../core/host-tensor';

export interface AdamwOptions {
  /** Learning rate for this step. */
  lr: number;
  /** Step count t >= 1 (1 on the first update), for the bias corrections 1 - beta^t. */
  t: number;
  /** First-moment decay (default 0.9). */
  beta1?: number;
  /** Second-moment decay (default 0.999). */
  beta2?: number;
  /** Added to sqrt(v_hat) (default 1e-8). */
  eps?: number;
  /** Decoupled weight decay: p -= lr * weightDecay * p (default 0.01, PyTorch's AdamW default). */
  weightDecay?: number;
  /** Multiplies every gradient on the fly (the clip factor from grad-norm.ts; default 1). */
  gradScale?: number;
}

/**
 * One AdamW update, elementwise, in place:
 * p -= lr*wd*p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps),
 * with g = gradScale * grads.
 * @param params (any shape) updated in place.
 * @param m      (same) first moment, updated in place (zeros before the first step).
 * @param v      (same) second moment, updated in place (zeros before the first step).
 * @param grads  (same) gradient.
 */
export function adamwStep(
  params: HostTensor,
  m: HostTensor,
  v: HostTensor,
  grads: HostTensor,
  opts: AdamwOptions,
): void {
  const n = params.data.length;
  for (const [t, name] of [
    [m, 'm'],
    [v, 'v'],
    [grads, 'grads'],
  ] as const) {
    if (t.data.length !== n) throw new Error(`adamwStep: ${name} has ${t.data.length} elements, params has ${n}`);
  }
  if (!(opts.t >= 1) || !Number.isInteger(opts.t))
    throw new Error(`adamwStep: step count t must be an integer >= 1, got ${opts.t}`);
  const b1 = opts.beta1 ?? 0.9;
  const b2 = opts.beta2 ?? 0.999;
  const eps = opts.eps ?? 1e-8;
  const wd = opts.weightDecay ?? 0.01;
  const scale = opts.gradScale ?? 1;
  const lr = opts.lr;
  const bc1 = 1 - Math.pow(b1, opts.t);
  const bc2 = 1 - Math.pow(b2, opts.t);
  for (let i = 0; i < n; i++) {
    const g = scale * grads.data[i];
    let p = params.data[i];
    p -= lr * wd * p;
    const mi = b1 * m.data[i] + (1 - b1) * g;
    const vi = b2 * v.data[i] + (1 - b2) * g * g;
    m.data[i] = mi;
    v.data[i] = vi;
    p -= (lr * (mi / bc1)) / (Math.sqrt(vi / bc2) + eps);
    params.data[i] = p;
  }
}
