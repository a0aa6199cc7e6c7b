// CPU twin of shaders/value.wgsl: PPO's clipped value loss (docs/algorithms.md#ppo-value-loss-and-critic), token-mean over the
// masked tokens of N sequences padded to L, forward and backward in one call: the scalar loss, d loss / d values
// and four metrics. Not the returns or advantages (GAE lives in src/rl) and not the critic's forward.
//
// Per token with m = mask (0/1; other values weight the token), V = values, R = returns, eps = cliprange:
//   u = (V - R)^2;  vc = clip(V, Vold - eps, Vold + eps);  uc = (vc - R)^2;  l = 0.5 max(u, uc)  (0.5 u without eps).
//   M = sum m;  loss = coef * sum m l / M  (0 when M = 0);  dValues = coef * m * dl/dV / M.
//   dl/dV = V - R, except where the clipped branch is strictly larger (uc > u): there V lies outside the clip range
//   (inside it vc = V and the branches tie), so the gradient through vc is 0. Ties take the unclipped branch.
// Tokens with m = 0 are skipped entirely (padding may hold any value) and get dValues = 0.
// Summation order (the shader's): thread t of the one VALUE_THREADS-thread workgroup sums tokens t, t + 64, t + 128,
// ... in index order, then a tree: for s = 32, 16, ..., 1, partial[t] += partial[t + s]. This twin sums in that
// order, in double precision.

import type { HostTensor } from '../core/host-tensor';

/** Index -> name of the metrics output. Means are over masked tokens (0 when none is masked in). */
export const VALUE_METRICS = [
  'value_loss', //     0: sum m l / M, without vf_coef
  'value_clipfrac', // 1: fraction of masked tokens where the clipped branch is strictly larger (uc > u)
  'vpred_mean', //     2: mean masked V
  'return_mean', //    3: mean masked R
] as const;

export type ValueMetricName = (typeof VALUE_METRICS)[number];

/** Threads of the shader's one workgroup: the summation order above. */
export const VALUE_THREADS = 64;

export interface ValueLossOptions {
  /** Value clip range eps_v >= 0 (verl's cliprange_value); absent = no clipping. */
  cliprange?: number;
  /** Weight of the value loss, vf_coef (finite). */
  coef: number;
  /**
   * Gradient accumulation: the whole minibatch's masked-token count M when this call is one micro-batch of it. The
   * loss, its gradient and the metrics are divided by it instead of the call's own count, so the micro-batches'
   * results add up to the minibatch's.
   */
  totalTokens?: number;
}

/** Validates the options (shared with the GPU wrapper). */
export function resolveValueLossOptions(
  kernel: string,
  opts: ValueLossOptions,
): { clip: boolean; cliprange: number; coef: number; totalTokens: number | null } {
  const { cliprange, coef } = opts;
  const totalTokens = opts.totalTokens ?? null;
  if (totalTokens !== null && !(Number.isInteger(totalTokens) && totalTokens >= 0 && totalTokens < 2 ** 24))
    throw new Error(`${kernel}: totalTokens must be an integer in [0, 2^24) or absent, got ${totalTokens}`);
  if (!Number.isFinite(coef)) throw new Error(`${kernel}: coef (vf_coef) must be a finite number, got ${coef}`);
  if (cliprange !== undefined && !(cliprange >= 0 && Number.isFinite(cliprange))) {
    throw new Error(`${kernel}: cliprange must be a finite number >= 0 or absent, got ${cliprange}`);
  }
  return { clip: cliprange !== undefined, cliprange: cliprange ?? 0, coef, totalTokens };
}

/** One token's loss l, clipped flag (uc > u) and dl/dV. */
function valueToken(
  V: number,
  Vold: number,
  R: number,
  clip: boolean,
  eps: number,
): { l: number; clipped: boolean; g: number } {
  const d = V - R;
  const u = d * d;
  if (!clip) return { l: 0.5 * u, clipped: false, g: d };
  const vc = Math.min(Math.max(V, Vold - eps), Vold + eps);
  const dc = vc - R;
  const uc = dc * dc;
  return uc > u ? { l: 0.5 * uc, clipped: true, g: 0 } : { l: 0.5 * u, clipped: false, g: d };
}

/**
 * PPO's clipped value loss, token-mean over masked tokens (formulas in the header).
 * @param loss      (1) overwritten: coef * sum m l / M.
 * @param dValues   (N, L) overwritten: d loss / d values (0 where m = 0).
 * @param metrics   (4) overwritten: VALUE_METRICS.
 * @param values    (N, L) the critic's predictions V.
 * @param oldValues (N, L) the predictions at rollout time Vold (the clip's center).
 * @param returns   (N, L) the targets R.
 * @param mask      (N, L) 1 for tokens that count, 0 for prompt and padding.
 */
export function valueLossForwardBackward(
  loss: HostTensor,
  dValues: HostTensor,
  metrics: HostTensor,
  values: HostTensor,
  oldValues: HostTensor,
  returns: HostTensor,
  mask: HostTensor,
  opts: ValueLossOptions,
): void {
  const kernel = 'valueLossForwardBackward';
  const { clip, cliprange, coef, totalTokens } = resolveValueLossOptions(kernel, opts);
  const n = values.data.length;
  for (const [t, name] of [
    [oldValues, 'oldValues'],
    [returns, 'returns'],
    [mask, 'mask'],
    [dValues, 'dValues'],
  ] as const) {
    if (t.data.length !== n)
      throw new Error(`${kernel}: ${name} has ${t.data.length} elements, want ${n} (the size of values)`);
  }
  if (loss.data.length !== 1) throw new Error(`${kernel}: loss must have 1 element, got ${loss.data.length}`);
  if (metrics.data.length !== VALUE_METRICS.length) {
    throw new Error(`${kernel}: metrics must have ${VALUE_METRICS.length} elements, got ${metrics.data.length}`);
  }

  // Per-thread partial sums (sum m, sum m l, sum m [clipped], sum m V, sum m R), then the tree.
  const part = Array.from({ length: VALUE_THREADS }, () => [0, 0, 0, 0, 0]);
  for (let i = 0; i < n; i++) {
    const m = mask.data[i];
    if (m === 0) continue;
    const { l, clipped } = valueToken(values.data[i], oldValues.data[i], returns.data[i], clip, cliprange);
    const p = part[i % VALUE_THREADS];
    p[0] += m;
    p[1] += m * l;
    p[2] += clipped ? m : 0;
    p[3] += m * values.data[i];
    p[4] += m * returns.data[i];
  }
  for (let s = VALUE_THREADS / 2; s > 0; s >>= 1) {
    for (let t = 0; t < s; t++) for (let k = 0; k < 5; k++) part[t][k] += part[t + s][k];
  }
  const [own, sumL, sumClip, sumV, sumR] = part[0];
  const M = totalTokens ?? own;
  const inv = M !== 0 ? 1 / M : 0;
  loss.data[0] = coef * sumL * inv;
  metrics.data[0] = sumL * inv;
  metrics.data[1] = sumClip * inv;
  metrics.data[2] = sumV * inv;
  metrics.data[3] = sumR * inv;
  const scale = coef * inv;
  for (let i = 0; i < n; i++) {
    const m = mask.data[i];
    dValues.data[i] =
      m === 0 ? 0 : scale * m * valueToken(values.data[i], oldValues.data[i], returns.data[i], clip, cliprange).g;
  }
}
