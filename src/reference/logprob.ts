// CPU twin of shaders/logprob.wgsl: per-row log-probability of a target token and full-vocabulary entropy of
// softmax(logits / tau), and their backward. This is what every RL loss pushes its gradient through.
// Not sampling (the sampler kernel) and not the SFT loss (cross-entropy.ts).

import type { HostTensor } from '../core/host-tensor';

export interface LogprobOptions {
  /** Sampling temperature tau > 0 (default 1): probabilities are softmax(logits / tau), matching the sampler. */
  temperature?: number;
}

function logprobDims(kernel: string, logits: HostTensor, targets: Uint32Array, rowOutputs: [HostTensor, string][]) {
  if (logits.shape.length < 2) throw new Error(`${kernel}: logits must be (N,V), got [${logits.shape.join(', ')}]`);
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  if (targets.length !== N) throw new Error(`${kernel}: ${targets.length} targets for ${N} rows`);
  for (const [t, name] of rowOutputs) {
    if (t.data.length !== N) throw new Error(`${kernel}: ${name} has ${t.data.length} elements, want N=${N}`);
  }
  for (let n = 0; n < N; n++) {
    if (targets[n] >= V)
      throw new Error(`${kernel}: target ${targets[n]} at row ${n} is outside the vocabulary (V=${V})`);
  }
  return { N, V };
}

function temperatureOf(kernel: string, opts: LogprobOptions): number {
  const tau = opts.temperature ?? 1;
  if (!(tau > 0) || !Number.isFinite(tau))
    throw new Error(`${kernel}: temperature must be a positive number, got ${tau}`);
  return tau;
}

/**
 * Max and logsumexp of row n of logits / tau (max-subtracted, so logits of magnitude 1e4 stay finite).
 */
function rowLse(logits: HostTensor, n: number, V: number, tau: number): { max: number; lse: number } {
  const o = n * V;
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits.data[o + v] / tau);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits.data[o + v] / tau - max);
  return { max, lse: max + Math.log(sum) };
}

/** Row n's log-sum-exp of logits / tau and its entropy -sum_v p_v log p_v (the shader's row_stats). */
function rowStats(logits: HostTensor, n: number, V: number, tau: number): { lse: number; h: number } {
  const o = n * V;
  const { lse } = rowLse(logits, n, V, tau);
  let h = 0;
  for (let v = 0; v < V; v++) {
    const lp = logits.data[o + v] / tau - lse;
    h -= Math.exp(lp) * lp; // p = 0 underflow gives 0 * finite = 0
  }
  return { lse, h };
}

/** Twin of write_forward: row n's target log-prob and entropy, from the row's statistics. */
function writeForward(
  logprob: HostTensor,
  entropy: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  n: number,
  V: number,
  tau: number,
  st: { lse: number; h: number },
): void {
  logprob.data[n] = logits.data[n * V + targets[n]] / tau - st.lse;
  entropy.data[n] = st.h;
}

/**
 * logprob[n] = log softmax(logits[n] / tau)[targets[n]];  entropy[n] = -sum_v p_v log p_v.
 * @param logprob (N) overwritten.
 * @param entropy (N) overwritten.
 * @param logits  (N,V) raw logits (N = B*T rows).
 * @param targets (N) token ids, each < V.
 */
export function logprobForward(
  logprob: HostTensor,
  entropy: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  opts: LogprobOptions = {},
): void {
  const kernel = 'logprobForward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = logprobDims(kernel, logits, targets, [
    [logprob, 'logprob'],
    [entropy, 'entropy'],
  ]);
  for (let n = 0; n < N; n++) writeForward(logprob, entropy, logits, targets, n, V, tau, rowStats(logits, n, V, tau));
}

/**
 * Backward of logprobForward. With z = logits / tau, p = softmax(z), H the entropy:
 * d logprob / dz_v = [v = target] - p_v;  dH / dz_v = -p_v (log p_v + H);  dLogits = dz / tau.
 * @param dLogits  (N,V) overwritten.
 * @param dLogprob (N) upstream gradient of logprob.
 * @param dEntropy (N) upstream gradient of entropy.
 * @param logits   (N,V) forward input (softmax is recomputed, nothing is saved).
 * @param targets  (N) forward input.
 */
export function logprobBackward(
  dLogits: HostTensor,
  dLogprob: HostTensor,
  dEntropy: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  opts: LogprobOptions = {},
): void {
  const kernel = 'logprobBackward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = logprobDims(kernel, logits, targets, [
    [dLogprob, 'dLogprob'],
    [dEntropy, 'dEntropy'],
  ]);
  if (dLogits.data.length !== logits.data.length) {
    throw new Error(
      `${kernel}: dLogits [${dLogits.shape.join(', ')}] must have the shape of logits [${logits.shape.join(', ')}]`,
    );
  }
  for (let n = 0; n < N; n++) {
    const o = n * V;
    const { lse, h } = rowStats(logits, n, V, tau);
    const gl = dLogprob.data[n];
    const gh = dEntropy.data[n];
    for (let v = 0; v < V; v++) {
      const lp = logits.data[o + v] / tau - lse;
      const p = Math.exp(lp);
      const dz = gl * ((v === targets[n] ? 1 : 0) - p) - gh * p * (lp + h);
      dLogits.data[o + v] = dz / tau;
    }
  }
}

/**
 * Twin of logprob_forward_sum_pi_squared: logprobForward, and sumPiSquared[n] = sum_v p_v^2 with
 * p = softmax(logits[n] / tau): the collision probability of the row's
 * distribution, the per-token input of the optimal token baseline (verl's calculate_sum_pi_squared_from_logits,
 * exp(logsumexp(2z) - 2 logsumexp(z))). Forward only: it enters the advantage, never the loss.
 * @param logprob, entropy, logits, targets as logprobForward's.
 * @param sumPiSquared (N) overwritten, in (0, 1].
 */
export function logprobForwardSumPiSquared(
  logprob: HostTensor,
  entropy: HostTensor,
  sumPiSquared: HostTensor,
  logits: HostTensor,
  targets: Uint32Array,
  opts: LogprobOptions = {},
): void {
  const kernel = 'logprobForwardSumPiSquared';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = logprobDims(kernel, logits, targets, [
    [logprob, 'logprob'],
    [entropy, 'entropy'],
    [sumPiSquared, 'sumPiSquared'],
  ]);
  for (let n = 0; n < N; n++) {
    const o = n * V;
    const st = rowStats(logits, n, V, tau);
    writeForward(logprob, entropy, logits, targets, n, V, tau, st);
    let s = 0;
    for (let v = 0; v < V; v++) s += Math.exp(2 * (logits.data[o + v] / tau - st.lse));
    sumPiSquared.data[n] = s;
  }
}
