// A random batch for the same-batch A/B's tests (compare.test.ts, compare-explain.test.ts): the objective cases'
// random inputs (ragged masks, garbage in padding) with rewards, correctness, lengths and finished flags per row.
// Test support only.

import { randomObjectiveInputs } from '../../kernels/objective.cases';
import { Rng } from '../../core/random';
import type { ComparedBatch } from './compare';

/** A batch of N rows in groups of G from the objective cases' random inputs: ragged masks, garbage in padding. */
export function randomComparedBatch(seed: number, N: number, G: number, S: number, spread: number): ComparedBatch {
  const rng = new Rng(seed);
  const [logp, old, , mask, ent, refLp, smp, klx] = randomObjectiveInputs(rng, N, S, { spread });
  const lengths = new Uint32Array(N);
  for (let r = 0; r < N; r++) lengths[r] = mask.data.subarray(r * S, (r + 1) * S).lastIndexOf(1) + 1;
  const correct = Uint8Array.from({ length: N }, () => (rng.next() < 0.5 ? 1 : 0));
  return {
    groupSize: G,
    S,
    rewards: Float32Array.from(correct),
    correct,
    lengths,
    finished: Array.from({ length: N }, (_, r) => r % 3 !== 1),
    completionMask: Float32Array.from(mask.data),
    logp: Float32Array.from(logp.data),
    oldLogp: Float32Array.from(old.data),
    entropy: Float32Array.from(ent.data),
    samplerLogp: Float32Array.from(smp.data),
    refLogp: Float32Array.from(refLp.data),
    klExact: Float32Array.from(klx.data),
  };
}
