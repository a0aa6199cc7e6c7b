// GPU-vs-twin cases of the bradley-terry family (shaders/bradley-terry.wgsl against src/reference/bradley-terry.ts):
// one pair, pairs sharing sequences (a sequence in many pairs sums its gradients), sequences in no pair, margins of
// magnitude 40 (softplus and sigmoid must not overflow), ties (d = 0), with and without the centering term, and up
// to 500 pairs over 1000 scores. Every output is compared: loss, dScores (overwritten from random contents), metrics.

import * as ref from '../reference/bradley-terry';
import type { Rng } from '../core/random';
import { host, type HostTensor } from '../core/host-tensor';
import { BT_METRICS, bradleyTerryForwardBackward, type BradleyTerryOptions } from './bradley-terry';
import { gpuTwinCase, type KernelCase } from './verify';

export interface RandomPairsOptions {
  /** Scale of the scores (default 2). */
  scale?: number;
  /** Every pair compares two equal scores. */
  ties?: boolean;
}

/** Random scores (N) and P pairs of distinct indices below N (indices repeat across pairs). */
export function randomPairInputs(
  rng: Rng,
  N: number,
  P: number,
  opts: RandomPairsOptions = {},
): [HostTensor<Float32Array>, { data: Uint32Array; shape: number[] }] {
  const s = opts.scale ?? 2;
  const scores = host(
    Float32Array.from({ length: N }, () => (opts.ties ? 0.75 : rng.uniform(-s, s))),
    [N],
  );
  const pairs = new Uint32Array(2 * P);
  for (let p = 0; p < P; p++) {
    const c = rng.int(N);
    let r = rng.int(N - 1);
    if (r >= c) r += 1;
    pairs[2 * p] = c;
    pairs[2 * p + 1] = r;
  }
  return [scores, { data: pairs, shape: [P, 2] }];
}

function btCase(
  N: number,
  P: number,
  opts: BradleyTerryOptions,
  inputs: RandomPairsOptions = {},
  tag = '',
): KernelCase {
  const s = inputs.scale ?? 2;
  return gpuTwinCase({
    name: `bradleyTerryForwardBackward N=${N} P=${P} centerCoef=${opts.centerCoef ?? 0}${tag ? ` ${tag}` : ''}`,
    family: 'bradley-terry',
    inputs: (rng) => randomPairInputs(rng, N, P, inputs),
    outputs: [
      { shape: [1], random: true },
      { shape: [N], random: true },
      { shape: [BT_METRICS.length], random: true },
    ],
    gpu: (rec, [loss, dScores, metrics], [scores, pairs]) =>
      bradleyTerryForwardBackward(rec, loss, dScores, metrics, scores, pairs as never, opts),
    twin: ([loss, dScores, metrics], [scores, pairs]) =>
      ref.bradleyTerryForwardBackward(
        loss,
        dScores,
        metrics,
        scores as HostTensor,
        pairs as { data: Uint32Array; shape: number[] },
        opts,
      ),
    tol: [
      { atol: 1e-5 * s, rtol: 1e-5 },
      { atol: 1e-7, rtol: 1e-4 },
      { atol: 1e-5 * s, rtol: 1e-5 },
    ],
  });
}

/** Every bradley-terry case, in a stable order. */
export function bradleyTerryCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  for (const [N, P] of [
    [2, 1],
    [3, 7],
    [17, 9],
    [65, 130],
    [1000, 500],
  ] as const) {
    for (const opts of [{}, { centerCoef: 0.01 }]) cases.push(btCase(N, P, opts));
  }
  cases.push(
    btCase(9, 40, {}, { scale: 40 }, 'margins of magnitude 40'),
    btCase(5, 6, { centerCoef: 0.5 }, { ties: true }, 'ties'),
    btCase(2, 64, {}, {}, 'two sequences in 64 pairs'),
  );
  return cases;
}
