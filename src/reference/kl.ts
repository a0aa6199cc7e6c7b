// CPU twin of shaders/kl.wgsl: the exact full-vocabulary KL(pi_theta || pi_ref) per row, on logits / tau, and its
// backward to the policy's logits (the reference model is frozen: refLogits get no gradient). This is the
// `kl_estimator: exact` value of docs/algorithms.md#kl-estimators. Not the per-token estimators k1/k2/k3 (objective.ts) and not the
// log-prob or entropy (logprob.ts).

import type { HostTensor } from '../core/host-tensor';

export interface KlOptions {
  /** Sampling temperature tau > 0 (default 1): p = softmax(logits / tau), q = softmax(refLogits / tau). */
  temperature?: number;
}

export interface KlBackwardOptions extends KlOptions {
  /** Add into dLogits instead of overwriting it (the trainer adds this to the log-prob backward's dLogits). */
  accumulate?: boolean;
}

/** Checks (N,V) logits and refLogits of one shape and (N) row tensors; returns N and V. */
function klDims(kernel: string, logits: HostTensor, refLogits: HostTensor, rowTensors: [HostTensor, string][]) {
  if (logits.shape.length < 2) throw new Error(`${kernel}: logits must be (N,V), got [${logits.shape.join(', ')}]`);
  if (refLogits.shape.length !== logits.shape.length || refLogits.shape.some((d, i) => d !== logits.shape[i])) {
    throw new Error(
      `${kernel}: refLogits [${refLogits.shape.join(', ')}] must have the shape of logits [${logits.shape.join(', ')}]`,
    );
  }
  const V = logits.shape[logits.shape.length - 1];
  const N = V === 0 ? 0 : logits.data.length / V;
  for (const [t, name] of rowTensors) {
    if (t.data.length !== N) throw new Error(`${kernel}: ${name} has ${t.data.length} elements, want N=${N}`);
  }
  return { N, V };
}

function temperatureOf(kernel: string, opts: KlOptions): number {
  const tau = opts.temperature ?? 1;
  if (!(tau > 0) || !Number.isFinite(tau))
    throw new Error(`${kernel}: temperature must be a positive number, got ${tau}`);
  return tau;
}

/**
 * One row's statistics in the shader's argmax-relative form (see shaders/kl.wgsl): with z = logits / tau,
 * y = refLogits / tau, a the lowest index of max z, e_v = (z_v - zmax) - (y_v - y_a):
 * r = sum_v p_v e_v and kl = (ymax - y_a) + log Sq - log Sp + r. Mathematically the plain sum_v p_v (log p_v - log q_v).
 */
function rowKl(logits: HostTensor, refLogits: HostTensor, n: number, V: number, tau: number) {
  const o = n * V;
  let zmax = -Infinity;
  let ya = 0;
  let ymax = -Infinity;
  for (let v = 0; v < V; v++) {
    const z = logits.data[o + v] / tau;
    const y = refLogits.data[o + v] / tau;
    if (z > zmax) {
      zmax = z;
      ya = y;
    }
    ymax = Math.max(ymax, y);
  }
  let sp = 0;
  let sq = 0;
  let se = 0;
  for (let v = 0; v < V; v++) {
    const z = logits.data[o + v] / tau;
    const y = refLogits.data[o + v] / tau;
    const ez = Math.exp(z - zmax);
    sp += ez;
    sq += Math.exp(y - ymax);
    se += ez * (z - zmax - (y - ya));
  }
  const logSp = Math.log(sp);
  const r = se / sp;
  return { zmax, ya, logSp, r, kl: ymax - ya + (Math.log(sq) - logSp) + r };
}

/**
 * kl[n] = sum_v p_v (log p_v - log q_v), p = softmax(logits[n] / tau), q = softmax(refLogits[n] / tau).
 * @param kl        (N) overwritten.
 * @param logits    (N,V) the policy's raw logits.
 * @param refLogits (N,V) the reference model's raw logits.
 */
export function klExactForward(kl: HostTensor, logits: HostTensor, refLogits: HostTensor, opts: KlOptions = {}): void {
  const kernel = 'klExactForward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = klDims(kernel, logits, refLogits, [[kl, 'kl']]);
  for (let n = 0; n < N; n++) kl.data[n] = rowKl(logits, refLogits, n, V, tau).kl;
}

/**
 * Backward of klExactForward to the policy's logits:
 * dLogits[n, v] = dKl[n] p_v ((log p_v - log q_v) - kl[n]) / tau (computed as p_v (e_v - r), see rowKl).
 * @param dLogits   (N,V) overwritten, or added into with accumulate.
 * @param dKl       (N) upstream gradient of kl.
 * @param logits    (N,V) forward input (nothing is saved: the softmaxes are recomputed).
 * @param refLogits (N,V) forward input (no gradient).
 */
export function klExactBackward(
  dLogits: HostTensor,
  dKl: HostTensor,
  logits: HostTensor,
  refLogits: HostTensor,
  opts: KlBackwardOptions = {},
): void {
  const kernel = 'klExactBackward';
  const tau = temperatureOf(kernel, opts);
  const { N, V } = klDims(kernel, logits, refLogits, [[dKl, 'dKl']]);
  if (dLogits.data.length !== logits.data.length) {
    throw new Error(
      `${kernel}: dLogits [${dLogits.shape.join(', ')}] must have the shape of logits [${logits.shape.join(', ')}]`,
    );
  }
  for (let n = 0; n < N; n++) {
    const o = n * V;
    const { zmax, ya, logSp, r } = rowKl(logits, refLogits, n, V, tau);
    const g = dKl.data[n] / tau;
    for (let v = 0; v < V; v++) {
      const z = logits.data[o + v] / tau;
      const y = refLogits.data[o + v] / tau;
      const p = Math.exp(z - zmax - logSp);
      const d = g * p * (z - zmax - (y - ya) - r);
      dLogits.data[o + v] = opts.accumulate ? dLogits.data[o + v] + d : d;
    }
  }
}
