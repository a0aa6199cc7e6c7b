// GPU-vs-twin cases of the value family (shaders/value.wgsl against src/reference/value.ts): clipped (eps 0.2 and
// 0.05) and unclipped value losses at awkward shapes (N=1 L=1 up to 64x256 = 16384 tokens, the most a batch holds),
// ragged masks whose padding holds garbage (1e3) that must never reach a result, an all-masked batch, a full mask,
// values == oldValues (the first epoch: nothing clips), cliprange 0 and values of magnitude 50.
// Every output is compared: loss, dValues (overwritten from random contents) and the four metrics.

import type { Rng } from '../core/random';
import * as ref from '../reference/value';
import { host, type HostTensor } from '../core/host-tensor';
import { VALUE_METRICS, valueLossForwardBackward, type ValueLossOptions } from './value';
import { gpuTwinCase, type KernelCase } from './verify';

export interface RandomValueOptions {
  /** Scale of values, returns and the old-new gap (default 1). */
  scale?: number;
  /** Mask every token. */
  allMasked?: boolean;
  /** Mask no token (every row full length). */
  fullMask?: boolean;
  /** oldValues equal values exactly. */
  sameOld?: boolean;
}

/**
 * Random value-loss inputs, in the order values, oldValues, returns, mask, each (N, L) f32. Rows have random
 * lengths (the first at least 1) and a few interior masked tokens; masked tokens hold garbage.
 */
export function randomValueInputs(
  rng: Rng,
  N: number,
  L: number,
  opts: RandomValueOptions = {},
): HostTensor<Float32Array>[] {
  const s = opts.scale ?? 1;
  const t = () => host(new Float32Array(N * L), [N, L]);
  const [values, oldValues, returns, mask] = [t(), t(), t(), t()];
  for (let i = 0; i < N; i++) {
    const len = opts.fullMask || N * L === 1 ? L : i === 0 ? Math.max(1, rng.int(L + 1)) : rng.int(L + 1);
    for (let j = 0; j < L; j++) {
      const idx = i * L + j;
      const on = !opts.allMasked && j < len && (opts.fullMask || j === 0 || rng.next() > 0.1);
      mask.data[idx] = on ? 1 : 0;
      const v = rng.uniform(-s, s) || 0.5 * s;
      values.data[idx] = on ? v : 1e3;
      oldValues.data[idx] = on ? (opts.sameOld ? v : v + rng.uniform(-0.3 * s, 0.3 * s)) : -1e3;
      returns.data[idx] = on ? v + (rng.uniform(-s, s) || 0.25 * s) : 1e3;
    }
  }
  return [values, oldValues, returns, mask];
}

function valueCase(
  name: string,
  N: number,
  L: number,
  opts: ValueLossOptions,
  inputs: RandomValueOptions = {},
): KernelCase {
  const s = inputs.scale ?? 1;
  const clipTag = opts.cliprange === undefined ? 'no clip' : `cliprange=${opts.cliprange}`;
  return gpuTwinCase({
    name: `valueLossForwardBackward ${N}x${L} ${clipTag} coef=${opts.coef}${name ? ` ${name}` : ''}`,
    family: 'value',
    inputs: (rng) => randomValueInputs(rng, N, L, inputs),
    outputs: [
      { shape: [1], random: true },
      { shape: [N, L], random: true },
      { shape: [VALUE_METRICS.length], random: true },
    ],
    gpu: (rec, [loss, dValues, metrics], [values, oldValues, returns, mask]) =>
      valueLossForwardBackward(rec, loss, dValues, metrics, values, oldValues, returns, mask, opts),
    twin: ([loss, dValues, metrics], [values, oldValues, returns, mask]) =>
      ref.valueLossForwardBackward(
        loss,
        dValues,
        metrics,
        values as HostTensor,
        oldValues as HostTensor,
        returns as HostTensor,
        mask as HostTensor,
        opts,
      ),
    tol: [
      { atol: 1e-6 * s * s, rtol: 1e-5 },
      { atol: 1e-9 * s, rtol: 1e-5 },
      { atol: 1e-6 * s, rtol: 1e-5 },
    ],
  });
}

/** Every value case, in a stable order. */
export function valueCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const configs: ValueLossOptions[] = [{ cliprange: 0.2, coef: 0.5 }, { coef: 1 }, { cliprange: 0.05, coef: 0.25 }];
  for (const [N, L] of [
    [1, 1],
    [3, 17],
    [8, 33],
    [16, 70],
    [64, 256],
  ] as const) {
    for (const opts of configs) cases.push(valueCase('', N, L, opts));
  }
  cases.push(
    valueCase('all masked', 3, 17, { cliprange: 0.2, coef: 0.5 }, { allMasked: true }),
    valueCase('full mask', 16, 70, { cliprange: 0.2, coef: 0.5 }, { fullMask: true }),
    valueCase('values == oldValues', 8, 33, { cliprange: 0.2, coef: 0.5 }, { sameOld: true }),
    valueCase('', 8, 33, { cliprange: 0, coef: 0.5 }),
    valueCase('values of magnitude 50', 16, 70, { cliprange: 5, coef: 0.5 }, { scale: 50 }),
    valueCase('1000-token rows', 5, 1000, { cliprange: 0.2, coef: 0.5 }),
  );
  return cases;
}
