// CPU twin of shaders/bradley-terry.wgsl: the Bradley-Terry loss of a reward model over P preference pairs
// (docs/algorithms.md#reward-models-and-bradley-terry), forward and backward in one call: the scalar loss,
// d loss / d scores and three metrics. Not the reward model's forward (src/rl/rewards/reward-model.ts).
//
// Scores s (N) are the model's scalar rewards of N sequences; pair p says sequence c_p is preferred to r_p.
//   d_p = s[c_p] - s[r_p];  loss = (1/P) sum_p [ softplus(-d_p) + lambda (s[c_p] + s[r_p])^2 ]   (0 when P = 0)
//   softplus(-d) = -log sigmoid(d), computed as max(-d, 0) + log(1 + exp(-|d|)).
//   d loss / d s[i] = (1/P) sum_p ( [i = c_p] (-sigmoid(-d_p)) + [i = r_p] sigmoid(-d_p) + 2 lambda (s[c_p] + s[r_p]) ([i = c_p] + [i = r_p]) )
// lambda is TRL's center_rewards_coefficient: it pins the scores' offset, which the preference term leaves free.
// A sequence may appear in several pairs; its gradient sums over them. Sequences in no pair get 0.
// Summation order (the shader's): the metrics' thread t of the one BT_THREADS-thread workgroup sums pairs t, t + 64,
// ... in order, then a tree (s = 32, ..., 1: partial[t] += partial[t + s]); each gradient entry sums its pairs in
// pair order. This twin follows that order in double precision.

import type { HostTensor } from '../core/host-tensor';

/** Index -> name of the metrics output; means over pairs (0 when P = 0). */
export const BT_METRICS = [
  'bt_loss', //      0: mean softplus(-d), without the centering term
  'bt_accuracy', //  1: fraction of pairs with d > 0 (the model prefers the preferred sequence)
  'bt_margin', //    2: mean d
] as const;

export type BtMetricName = (typeof BT_METRICS)[number];

/** Threads of the shader's one workgroup: the summation order above. */
export const BT_THREADS = 64;

export interface BradleyTerryOptions {
  /** lambda >= 0, the weight of the centering term (TRL's center_rewards_coefficient); default 0. */
  centerCoef?: number;
}

/** Validates the options (shared with the GPU wrapper). */
export function resolveBradleyTerryOptions(kernel: string, opts: BradleyTerryOptions): { centerCoef: number } {
  const centerCoef = opts.centerCoef ?? 0;
  if (!(centerCoef >= 0 && Number.isFinite(centerCoef)))
    throw new Error(`${kernel}: centerCoef must be a finite number >= 0, got ${centerCoef}`);
  return { centerCoef };
}

/** -log sigmoid(d) without overflow. */
export function softplusNeg(d: number): number {
  return Math.max(-d, 0) + Math.log1p(Math.exp(-Math.abs(d)));
}

/** sigmoid(-d) = 1 / (1 + e^d). */
function sigmoidNeg(d: number): number {
  return 1 / (1 + Math.exp(d));
}

/**
 * The Bradley-Terry loss and its gradient (formulas in the header).
 * @param loss    (1) overwritten.
 * @param dScores (N) overwritten: d loss / d scores.
 * @param metrics (3) overwritten: BT_METRICS.
 * @param scores  (N) the reward model's scores.
 * @param pairs   (P, 2) u32: (preferred, other) indices into scores.
 */
export function bradleyTerryForwardBackward(
  loss: HostTensor,
  dScores: HostTensor,
  metrics: HostTensor,
  scores: HostTensor,
  pairs: { data: Uint32Array; shape: readonly number[] },
  opts: BradleyTerryOptions = {},
): void {
  const kernel = 'bradleyTerryForwardBackward';
  const { centerCoef } = resolveBradleyTerryOptions(kernel, opts);
  const N = scores.data.length;
  const P = pairs.data.length / 2;
  if (!Number.isInteger(P))
    throw new Error(`${kernel}: pairs must hold (preferred, other) index pairs, got ${pairs.data.length} values`);
  if (dScores.data.length !== N)
    throw new Error(`${kernel}: dScores has ${dScores.data.length} elements, want ${N} (the size of scores)`);
  if (loss.data.length !== 1) throw new Error(`${kernel}: loss must have 1 element, got ${loss.data.length}`);
  if (metrics.data.length !== BT_METRICS.length)
    throw new Error(`${kernel}: metrics must have ${BT_METRICS.length} elements, got ${metrics.data.length}`);
  for (let i = 0; i < pairs.data.length; i++) {
    if (pairs.data[i] >= N)
      throw new Error(`${kernel}: pair ${i >> 1} names sequence ${pairs.data[i]}, but there are ${N} scores`);
  }
  const s = (i: number) => scores.data[i];

  const part = Array.from({ length: BT_THREADS }, () => [0, 0, 0, 0]); // (sum softplus, sum [d > 0], sum d, sum center)
  for (let p = 0; p < P; p++) {
    const c = s(pairs.data[2 * p]);
    const r = s(pairs.data[2 * p + 1]);
    const d = c - r;
    const q = part[p % BT_THREADS];
    q[0] += softplusNeg(d);
    q[1] += d > 0 ? 1 : 0;
    q[2] += d;
    q[3] += (c + r) * (c + r);
  }
  for (let w = BT_THREADS / 2; w > 0; w >>= 1) {
    for (let t = 0; t < w; t++) for (let k = 0; k < 4; k++) part[t][k] += part[t + w][k];
  }
  const inv = P > 0 ? 1 / P : 0;
  const [sumLoss, sumAcc, sumMargin, sumCenter] = part[0];
  loss.data[0] = (sumLoss + centerCoef * sumCenter) * inv;
  metrics.data[0] = sumLoss * inv;
  metrics.data[1] = sumAcc * inv;
  metrics.data[2] = sumMargin * inv;
  for (let i = 0; i < N; i++) {
    let g = 0;
    for (let p = 0; p < P; p++) {
      const ci = pairs.data[2 * p];
      const ri = pairs.data[2 * p + 1];
      if (ci !== i && ri !== i) continue;
      const c = s(ci);
      const r = s(ri);
      const sn = sigmoidNeg(c - r);
      const center = 2 * centerCoef * (c + r);
      if (ci === i) g += -sn + center;
      if (ri === i) g += sn + center;
    }
    dScores.data[i] = g * inv;
  }
}
