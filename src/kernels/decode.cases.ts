// GPU-vs-twin cases of the decode bookkeeping kernels (bit-exact: they only copy and select).

import {
  decodeFinish as decodeFinishTwin,
  gatherRows as gatherRowsTwin,
  kvWrite as kvWriteTwin,
} from '../reference/decode';
import { decodeFinish, gatherRows, kvWrite } from './decode';
import { gpuTwinCase, randomHost, randomInts, type KernelCase } from './verify';

const exact = { atol: 0, rtol: 0 };

export function decodeCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  for (const [B, T, Tcap, W, pos] of [
    [1, 1, 1, 1, 0],
    [3, 5, 17, 6, 9],
    [2, 1, 33, 8, 32],
  ] as const) {
    cases.push(
      gpuTwinCase({
        name: `kvWrite B=${B} T=${T} cap=${Tcap} W=${W} pos=${pos}`,
        family: 'decode',
        inputs: (rng) => [randomHost(rng, [B, T, W])],
        outputs: [{ shape: [B, Tcap, W], random: true }],
        gpu: (rec, [cache], [x]) => kvWrite(rec, cache, x, pos),
        twin: ([cache], [x]) => kvWriteTwin(cache.data, x.data as Float32Array, { B, T, Tcap, W }, pos),
        tol: exact,
      }),
    );
  }
  for (const [R, N, W] of [
    [1, 1, 1],
    [5, 13, 7],
  ] as const) {
    cases.push(
      gpuTwinCase({
        name: `gatherRows R=${R} N=${N} W=${W}`,
        family: 'decode',
        inputs: (rng) => [randomHost(rng, [N, W]), randomInts(rng, [R], N)],
        outputs: [{ shape: [R, W] }],
        gpu: (rec, [out], [x, idx]) => gatherRows(rec, out, x, idx as never),
        twin: ([out], [x, idx]) => gatherRowsTwin(out.data, x.data as Float32Array, idx.data as Uint32Array, W),
        tol: exact,
      }),
    );
  }
  // decodeFinish over a few steps: rows finish at different steps; the token buffer is compared through its bits.
  const R = 6;
  const S = 5;
  const eosId = 2;
  const padId = 0;
  cases.push({
    name: `decodeFinish R=${R} S=${S} over ${S} steps`,
    family: 'decode',
    async run(ctx) {
      const t0 = performance.now();
      const stepsSampled = [
        [5, 2, 7, 9, 3, 2],
        [2, 8, 2, 4, 5, 6],
        [9, 9, 9, 2, 7, 6],
        [4, 4, 4, 4, 2, 6],
        [1, 1, 1, 1, 1, 1],
      ].map((a) => Uint32Array.from(a));
      const lp = (s: number) => Float32Array.from({ length: R }, (_, r) => -0.1 * (r + 1) - s);
      const en = (s: number) => Float32Array.from({ length: R }, (_, r) => 0.5 + 0.01 * r + s);
      const twin = {
        current: new Uint32Array(R),
        done: new Uint32Array(R),
        tokens: new Uint32Array(R * S),
        logprobs: new Float32Array(R * S),
        entropies: new Float32Array(R * S),
        mask: new Float32Array(R * S),
      };
      const g = {
        current: ctx.tensor<'u32'>([R], { dtype: 'u32', label: 'current' }),
        done: ctx.tensor<'u32'>([R], { dtype: 'u32', label: 'done' }),
        tokens: ctx.tensor<'u32'>([R, S], { dtype: 'u32', label: 'tokens' }),
        logprobs: ctx.tensor([R, S], { label: 'logprobs' }),
        entropies: ctx.tensor([R, S], { label: 'entropies' }),
        mask: ctx.tensor([R, S], { label: 'mask' }),
      };
      const sampled = ctx.tensor<'u32'>([R], { dtype: 'u32', label: 'sampled' });
      const logprob = ctx.tensor([R], { label: 'logprob' });
      const entropy = ctx.tensor([R], { label: 'entropy' });
      for (let s = 0; s < S; s++) {
        ctx.upload(sampled, stepsSampled[s]);
        ctx.upload(logprob, lp(s));
        ctx.upload(entropy, en(s));
        const rec = ctx.recorder(`decodeFinish step ${s}`);
        decodeFinish(rec, g, sampled, logprob, entropy, { step: s, eosId, padId });
        rec.submit();
        decodeFinishTwin(twin, stepsSampled[s], lp(s), en(s), { step: s, S, eosId, padId });
      }
      const got = await ctx.readMany([g.current, g.done, g.tokens, g.logprobs, g.entropies, g.mask]);
      const want = [twin.current, twin.done, twin.tokens, twin.logprobs, twin.entropies, twin.mask];
      const names = ['current', 'done', 'tokens', 'logprobs', 'entropies', 'mask'];
      const bad = names.filter((_, i) => got[i].some((v, j) => v !== want[i][j]));
      for (const t of [...Object.values(g), sampled, logprob, entropy]) t.destroy();
      return {
        name: this.name,
        family: 'decode',
        pass: bad.length === 0,
        maxAbsError: bad.length ? 1 : 0,
        summary: bad.length
          ? `differs in ${bad.join(', ')}`
          : `bit-exact over ${S} steps (${R} rows, EOS at different steps)`,
        ms: performance.now() - t0,
      };
    },
  });
  return cases;
}
