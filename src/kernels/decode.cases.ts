// GPU-vs-twin cases of the decode bookkeeping kernels (bit-exact: they only copy and select).

import {
  decodeFinish as decodeFinishTwin,
  gatherRows as gatherRowsTwin,
  kvWrite as kvWriteTwin,
} from '../reference/decode';
import { decodeFinish, gatherRows, kvWrite } from './decode';
import { Tensor, tensorArena } from '../gpu';
import type { EndOfSequence } from '../io/end-of-sequence';
import { gpuTwinCase, randomHost, randomInts, type KernelCase } from './verify';

const exact = { atol: 0, rtol: 0 };

/** Six rows' samples over five steps: the rows end (id 2) at steps 0 to 3, the last steps write pads. */
const FIVE_STEPS = [
  [5, 2, 7, 9, 3, 2],
  [2, 8, 2, 4, 5, 6],
  [9, 9, 9, 2, 7, 6],
  [4, 4, 4, 4, 2, 6],
  [1, 1, 1, 1, 1, 1],
];

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
  cases.push(finishCase('decodeFinish R=6 S=5 over 5 steps', FIVE_STEPS, { eosId: 2 }, 0));
  // The same steps through a decode cursor, as a rollout records them: step s >= 1 at column 1 plus the cursor's
  // value s - 1, set by an upload before the step (the kernel reads the column from the GPU, not its parameters).
  cases.push(finishCase('decodeFinish R=6 S=5 over 5 steps, a decode cursor', FIVE_STEPS, { eosId: 2 }, 0, true));
  // Several end-of-sequence ids (Llama 3.2 Instruct ships three): a row ends at the first of any of them. Row 0
  // meets the second id (7) before the first (2); row 3 never meets one; the pad is one of the ids (Qwen pads with
  // <|endoftext|>, which also ends a completion), so the pad written after a row's end is itself an id.
  cases.push(
    finishCase(
      'decodeFinish two end-of-sequence ids, the second first in a row, pad = an id',
      [
        [7, 2, 5, 9, 3, 4],
        [2, 7, 9, 4, 5, 9],
        [4, 4, 7, 2, 4, 9],
        [2, 2, 4, 9, 2, 6],
        [1, 1, 1, 6, 1, 1],
      ],
      { eosId: 2, eosIds: [2, 7] },
      7,
    ),
  );
  // All eight slots of the uniform array in use: each id ends its row, ids in the high vec4 included.
  cases.push(
    finishCase(
      'decodeFinish eight end-of-sequence ids',
      [
        [40, 41, 42, 43, 1, 1, 1, 1, 3],
        [1, 1, 1, 1, 44, 45, 46, 47, 3],
        [5, 5, 5, 5, 5, 5, 5, 5, 3],
      ],
      { eosId: 40, eosIds: [40, 41, 42, 43, 44, 45, 46, 47] },
      0,
    ),
  );
  return cases;
}

/**
 * A decodeFinish case over `steps.length` steps: `steps[s][r]` is row r's sample at step s. The GPU kernel and its
 * twin update the same completion buffers; every buffer must match bit for bit. The samples are views of one arena
 * (with its alignment padding between them), as a rollout allocates them; with `cursor` every step after the first
 * takes its column from a decode cursor.
 */
function finishCase(name: string, steps: number[][], eos: EndOfSequence, padId: number, cursor = false): KernelCase {
  const S = steps.length;
  const R = steps[0].length;
  const stepsSampled = steps.map((a) => Uint32Array.from(a));
  return {
    name,
    family: 'decode',
    async run(ctx) {
      const t0 = performance.now();
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
      const arena = tensorArena(ctx, [[R], [R], [R]], ['sampled', 'logprob', 'entropy'], 'samples');
      const [ids, logprob, entropy] = arena.views;
      const sampled = new Tensor<'u32'>(ids.buffer, [R], 'u32', 'sampled', ids.byteOffset, false);
      const gc = ctx.tensor<'u32'>([1], { dtype: 'u32', label: 'cursor' });
      for (let s = 0; s < S; s++) {
        ctx.upload(sampled, stepsSampled[s]);
        ctx.upload(logprob, lp(s));
        ctx.upload(entropy, en(s));
        const stepCursor = cursor && s > 0 ? { tensor: gc, value: s - 1 } : undefined;
        if (stepCursor) ctx.upload(gc, Uint32Array.of(s - 1));
        const rec = ctx.recorder(`decodeFinish step ${s}`);
        decodeFinish(rec, g, sampled, logprob, entropy, { step: s, ...eos, padId, cursor: stepCursor });
        rec.submit();
        decodeFinishTwin(twin, stepsSampled[s], lp(s), en(s), { step: s, S, ...eos, padId });
      }
      const got = await ctx.readMany([g.current, g.done, g.tokens, g.logprobs, g.entropies, g.mask]);
      const want = [twin.current, twin.done, twin.tokens, twin.logprobs, twin.entropies, twin.mask];
      const names = ['current', 'done', 'tokens', 'logprobs', 'entropies', 'mask'];
      const bad = names.filter((_, i) => got[i].some((v, j) => v !== want[i][j]));
      for (const t of [...Object.values(g), arena.all, gc]) t.destroy();
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
  };
}
