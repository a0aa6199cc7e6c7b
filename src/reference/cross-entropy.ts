// CPU twin of shaders/cross-entropy.wgsl: the SFT loss, mean over unmasked rows of -log softmax(logits)[target],
// and its backward to the logits. No temperature (that is logprob.ts, for RL), no label smoothing.

import type { FloatArray, HostTensor } from '../core/host-tensor';

function crossEntropyDims(kernel: string, logits: HostTensor, targets: Uint32Array, mask: FloatArray) {
  if (logits.shape.length < 2) throw new Error(`${kernel}: logits must be (N,V), got [${logits.shape.join(', ')}]`);
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  if (targets.length !== N) throw new Error(`${kernel}: ${targets.length} targets for ${N} rows`);
  if (mask.length !== N) throw new Error(`${kernel}: mask has ${mask.length} entries for ${N} rows`);
  let count = 0;
  for (let n = 0; n < N; n++) {
    if (mask[n] === 0) continue; // masked rows may hold any target (e.g. padding)
    if (targets[n] >= V)
      throw new Error(`${kernel}: target ${targets[n]} at row ${n} is outside the vocabulary (V=${V})`);
    count += mask[n];
  }
  return { N, V, count };
}

/** logsumexp of row n (max-subtracted). */
function rowLse(logits: HostTensor, n: number, V: number): number {
  const o = n * V;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits.data[o + v]);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits.data[o + v] - max);
  return max + Math.log(sum);
}

/**
 * loss[0] = sum_n mask[n] * (lse_n - logits[n, targets[n]]) / sum_n mask[n]  (0 when every row is masked).
 * The mask is 0/1 in practice (1 = the row counts); other values weight the rows.
 * @param loss    (1) overwritten.
 * @param logits  (N,V) raw logits.
 * @param targets (N) token ids; ignored where mask is 0.
 * @param mask    (N) row weights, 0 or 1.
 */
export function crossEntropyForward(
  loss: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  mask: FloatArray,
): void {
  const { N, V, count } = crossEntropyDims('crossEntropyForward', logits, targets, mask);
  if (loss.data.length !== 1) throw new Error(`crossEntropyForward: loss must have 1 element, got ${loss.data.length}`);
  let total = 0;
  for (let n = 0; n < N; n++) {
    if (mask[n] === 0) continue;
    total += mask[n] * (rowLse(logits, n, V) - logits.data[n * V + targets[n]]);
  }
  loss.data[0] = count > 0 ? total / count : 0;
}

export interface CrossEntropyBackwardOptions {
  /** Upstream gradient of the scalar loss (default 1). */
  dLoss?: number;
}

/**
 * Backward of crossEntropyForward: dLogits[n, v] = dLoss * mask[n] / sum(mask) * (softmax(logits[n])_v - [v = target]).
 * @param dLogits (N,V) overwritten (rows with mask 0 get zeros).
 * @param logits  (N,V) forward input.
 * @param targets (N) forward input.
 * @param mask    (N) forward input.
 */
export function crossEntropyBackward(
  dLogits: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  mask: FloatArray,
  opts: CrossEntropyBackwardOptions = {},
): void {
  const { N, V, count } = crossEntropyDims('crossEntropyBackward', logits, targets, mask);
  if (dLogits.data.length !== logits.data.length) {
    throw new Error(
      `crossEntropyBackward: dLogits [${dLogits.shape.join(', ')}] must have the shape of logits [${logits.shape.join(', ')}]`,
    );
  }
  const dLoss = opts.dLoss ?? 1;
  for (let n = 0; n < N; n++) {
    const o = n * V;
    if (mask[n] === 0 || count === 0) {
      for (let v = 0; v < V; v++) dLogits.data[o + v] = 0;
      continue;
    }
    const w = (dLoss * mask[n]) / count;
    const lse = rowLse(logits, n, V);
    for (let v = 0; v < V; v++) {
      const p = Math.exp(logits.data[o + v] - lse);
      dLogits.data[o + v] = w * (p - (v === targets[n] ? 1 : 0));
    }
  }
}
