// GPU-vs-twin cases of the weight-stats family (shaders/weight-stats.wgsl against src/reference/weight-stats.ts) at
// awkward shapes: 1x1, 1xN, Nx1, a norm's gain vector, sizes off every multiple of 4, 16 and 64, and matrices
// longer than one workgroup in each direction. Updates are noise plus a rank-1 direction of some strength, as RL
// updates are; the stats buffer starts random and only the case's slot may change.

import type { Rng } from '../core/random';
import * as ref from '../reference/weight-stats';
import type { HostTensor } from '../core/host-tensor';
import { host, numel } from '../core/host-tensor';
import { gpuTwinCase, randomHost, type HostInput, type KernelCase } from './verify';
import { RANK1_ITERATIONS, rank1Apply, weightUpdateStats } from './weight-stats';

const f32In = (x: HostInput) => x as HostTensor<Float32Array>;

/**
 * W_0 uniform in [-1, 1] and W = W_0 + scale (noise + signal a b^T / (R C)^(1/4)) with a, b, noise uniform: the
 * rank-1 part's share of ||dW||^2 grows with `signal` (0: noise only).
 */
export function updatedWeights(
  rng: Rng,
  shape: readonly number[],
  signal: number,
  scale = 0.01,
): { w: HostTensor<Float32Array>; w0: HostTensor<Float32Array> } {
  const { R, C } = ref.matrixDims({ shape });
  const w0 = randomHost(rng, shape);
  const a = randomHost(rng, [R]).data;
  const b = randomHost(rng, [C]).data;
  const noise = randomHost(rng, shape).data;
  const s = signal / Math.sqrt(Math.sqrt(R * C));
  const w = host(new Float32Array(numel(shape)), shape);
  for (let r = 0; r < R; r++)
    for (let c = 0; c < C; c++) w.data[r * C + c] = w0.data[r * C + c] + scale * (noise[r * C + c] + s * a[r] * b[c]);
  return { w, w0 };
}

interface StatsCase {
  shape: number[];
  signal: number;
  slot: number;
  slots: number;
  /** Compare u and v too (only where sigma_1 stands clear of sigma_2, so the direction is well defined). */
  vectors: boolean;
}

const STATS_CASES: StatsCase[] = [
  { shape: [1, 1], signal: 0, slot: 0, slots: 1, vectors: true },
  { shape: [1, 65], signal: 0, slot: 1, slots: 2, vectors: true },
  { shape: [65, 1], signal: 0, slot: 0, slots: 3, vectors: true },
  { shape: [48], signal: 0, slot: 2, slots: 3, vectors: true },
  { shape: [3, 17], signal: 3, slot: 0, slots: 1, vectors: true },
  { shape: [17, 65], signal: 3, slot: 4, slots: 5, vectors: true },
  { shape: [129, 33], signal: 3, slot: 1, slots: 2, vectors: true },
  { shape: [33, 129], signal: 1, slot: 0, slots: 1, vectors: false },
  { shape: [67, 67], signal: 0, slot: 0, slots: 1, vectors: false },
  { shape: [7, 1031], signal: 3, slot: 0, slots: 1, vectors: true },
];

function statsCase({ shape, signal, slot, slots, vectors }: StatsCase): KernelCase {
  const { R, C } = ref.matrixDims({ shape });
  const opts = { slot, iterations: RANK1_ITERATIONS };
  return gpuTwinCase({
    name: `weightUpdateStats ${shape.join('x')} signal ${signal} slot ${slot}/${slots}`,
    family: 'weight-stats',
    inputs: (rng) => {
      const { w, w0 } = updatedWeights(rng, shape, signal);
      return [w, w0];
    },
    outputs: [{ shape: [slots * 3], random: true }, { shape: [R] }, { shape: [C] }],
    gpu: (rec, [out, u, v], [w, w0]) => weightUpdateStats(rec, out, u, v, w, w0, opts),
    twin: ([out, u, v], [w, w0]) => ref.weightUpdateStats(out, u, v, f32In(w), f32In(w0), opts),
    // Sums of squares of differences of order 1e-2 in f32 against f64; u and v after 64 normalizations.
    tol: [
      { atol: 1e-9, rtol: 2e-4 },
      { atol: 2e-5, rtol: 1e-3 },
      { atol: 2e-4, rtol: 1e-3 },
    ],
    skipOutputs: vectors ? [] : [1, 2],
  });
}

function applyCase(shape: number[]): KernelCase {
  const { R, C } = ref.matrixDims({ shape });
  return gpuTwinCase({
    name: `rank1Apply ${shape.join('x')}`,
    family: 'weight-stats',
    inputs: (rng) => [randomHost(rng, shape), randomHost(rng, [R]), randomHost(rng, [C])],
    outputs: [{ shape, random: true }],
    gpu: (rec, [w], [w0, u, v]) => rank1Apply(rec, w, w0, u, v),
    twin: ([w], [w0, u, v]) => ref.rank1Apply(w, f32In(w0), f32In(u), f32In(v)),
    tol: { atol: 1e-6, rtol: 1e-6 },
  });
}

/** Every weight-stats case, in a stable order. */
export function weightStatsCases(): KernelCase[] {
  return [
    ...STATS_CASES.map(statsCase),
    ...[[1, 1], [1, 65], [65, 1], [48], [17, 65], [129, 33], [300, 301]].map(applyCase),
  ];
}
