// CPU twin of the chunked LM head (src/kernels/head-chunked.ts): the same results computed the plain way, on the
// whole (rows, V) logits at once: logits = h W^T, then the log-prob, entropy, reference log-prob and exact KL of
// logprob.ts and kl.ts, and the backward dLogits pushed through the head (dH = dLogits W, dW += dLogits^T h).
// Not chunked: the twin is the unchunked path the GPU's chunks must reproduce.

import { zeros, type HostTensor } from '../core/host-tensor';
import { klExactBackward, klExactForward } from './kl';
import { logprobBackward, logprobForward, logprobForwardSumPiSquared } from './logprob';
import { matmul } from './matmul';

/** One model's head: hidden states (rows, C) and weight (V, C). */
export interface HostHeadSide {
  h: HostTensor;
  W: HostTensor;
}

function logitsOf(side: HostHeadSide, like: 'f32' | 'f64'): HostTensor {
  const rows = side.h.shape[0];
  const V = side.W.shape[0];
  const out = zeros([rows, V], like);
  matmul(out, side.h, side.W, { transB: true });
  return out;
}

const precision = (t: HostTensor): 'f32' | 'f64' => (t.data instanceof Float64Array ? 'f64' : 'f32');

/** Per-row log-prob, entropy (and sum_v p_v^2 when asked), and with a reference its log-prob and the exact KL (each (rows)). */
export function headForward(
  policy: HostHeadSide,
  targets: Uint32Array,
  opts: { temperature: number; reference?: HostHeadSide; sumPiSquared?: boolean },
): { logp: HostTensor; entropy: HostTensor; sumPiSquared?: HostTensor; refLogp?: HostTensor; kl?: HostTensor } {
  const like = precision(policy.h);
  const rows = policy.h.shape[0];
  const logits = logitsOf(policy, like);
  const logp = zeros([rows], like);
  const entropy = zeros([rows], like);
  const sumPiSquared = opts.sumPiSquared ? zeros([rows], like) : undefined;
  if (sumPiSquared)
    logprobForwardSumPiSquared(logp, entropy, sumPiSquared, logits, targets, { temperature: opts.temperature });
  else logprobForward(logp, entropy, logits, targets, { temperature: opts.temperature });
  if (!opts.reference) return { logp, entropy, sumPiSquared };
  const refLogits = logitsOf(opts.reference, like);
  const refLogp = zeros([rows], like);
  logprobForward(refLogp, zeros([rows], like), refLogits, targets, { temperature: opts.temperature });
  const kl = zeros([rows], like);
  klExactForward(kl, logits, refLogits, { temperature: opts.temperature });
  return { logp, entropy, sumPiSquared, refLogp, kl };
}

/** Backward of headForward: dH (rows, C) and dW (V, C) from the upstream gradients of logp, entropy and kl. */
export function headBackward(
  policy: HostHeadSide,
  targets: Uint32Array,
  grads: { dLogp: HostTensor; dEntropy: HostTensor; dKl?: HostTensor },
  opts: { temperature: number; reference?: HostHeadSide },
): { dH: HostTensor; dW: HostTensor } {
  const like = precision(policy.h);
  const logits = logitsOf(policy, like);
  const dLogits = zeros(logits.shape, like);
  logprobBackward(dLogits, grads.dLogp, grads.dEntropy, logits, targets, { temperature: opts.temperature });
  if (opts.reference && grads.dKl) {
    const refLogits = logitsOf(opts.reference, like);
    klExactBackward(dLogits, grads.dKl, logits, refLogits, { temperature: opts.temperature, accumulate: true });
  }
  const dH = zeros(policy.h.shape, like);
  matmul(dH, dLogits, policy.W);
  const dW = zeros(policy.W.shape, like);
  matmul(dW, dLogits, policy.h, { transA: true });
  return { dH, dW };
}
