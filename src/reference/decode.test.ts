// The CPU twins of decode_finish with several end-of-sequence ids and of the half KV cache's write, against
// hand-written buffers (the GPU kernels are compared with these twins bit for bit in src/kernels/decode.cases.ts and
// src/kernels/kv-half.cases.ts).

import { describe, expect, it } from 'vitest';
import { decodeFinish, kvWriteHalf, type DecodeState } from './decode';

function run(steps: number[][], eos: { eosId: number; eosIds?: number[] }, padId: number): DecodeState {
  const S = steps.length;
  const R = steps[0].length;
  const state: DecodeState = {
    current: new Uint32Array(R),
    done: new Uint32Array(R),
    tokens: new Uint32Array(R * S),
    logprobs: new Float32Array(R * S),
    entropies: new Float32Array(R * S),
    mask: new Float32Array(R * S),
  };
  steps.forEach((sampled, s) =>
    decodeFinish(state, Uint32Array.from(sampled), new Float32Array(R).fill(-1), new Float32Array(R).fill(0.5), {
      step: s,
      S,
      padId,
      ...eos,
    }),
  );
  return state;
}

const rows = (a: ArrayLike<number>, S: number) =>
  Array.from({ length: a.length / S }, (_, r) => Array.from(a).slice(r * S, (r + 1) * S));

describe('decodeFinish (CPU twin) with several end-of-sequence ids', () => {
  // steps[s][r]: row 0 meets the second id (7) at step 1, before the first (2); row 1 meets 2; row 2 none.
  const steps = [
    [5, 9, 4],
    [7, 2, 4],
    [2, 7, 4],
  ];

  it('ends a row at the first id of any kind, that token included, and pads after it', () => {
    const st = run(steps, { eosId: 2, eosIds: [2, 7] }, 0);
    expect(rows(st.tokens, 3)).toEqual([
      [5, 7, 0],
      [9, 2, 0],
      [4, 4, 4],
    ]);
    expect(rows(st.mask, 3)).toEqual([
      [1, 1, 0],
      [1, 1, 0],
      [1, 1, 1],
    ]);
    expect(Array.from(st.done)).toEqual([1, 1, 0]);
    expect(rows(st.logprobs, 3)[0]).toEqual([-1, -1, 0]);
  });

  it('with one id, the second id is an ordinary token', () => {
    const st = run(steps, { eosId: 2 }, 0);
    expect(rows(st.tokens, 3)).toEqual([
      [5, 7, 2],
      [9, 2, 0],
      [4, 4, 4],
    ]);
    expect(Array.from(st.done)).toEqual([1, 1, 0]);
  });

  it('a pad that is itself an end-of-sequence id is written with mask 0 after the end', () => {
    const st = run(steps, { eosId: 2, eosIds: [2, 7] }, 7);
    expect(rows(st.tokens, 3)).toEqual([
      [5, 7, 7],
      [9, 2, 7],
      [4, 4, 4],
    ]);
    expect(rows(st.mask, 3).map((m) => m.reduce((a, b) => a + b, 0))).toEqual([2, 2, 3]);
    expect(Array.from(st.current)).toEqual([7, 7, 4]);
  });
});

describe('kvWriteHalf', () => {
  it('writes bf16 bits rounded to nearest even at the positions, leaving the rest of the cache as it was', () => {
    const cache = new Uint16Array(2 * 3 * 2).fill(0xaaaa); // B 2, Tcap 3, W 2
    // 1 + 2^-8 is a tie (to the even 1.0); 0.1 (0x3dcccccd) rounds up to 0x3dcd.
    kvWriteHalf(cache, Float32Array.from([1 + 2 ** -8, 3, -2, 0.1]), { B: 2, T: 1, Tcap: 3, W: 2 }, 1, 'bf16');
    const k = 0xaaaa;
    expect(Array.from(cache)).toEqual([k, k, 0x3f80, 0x4040, k, k, k, k, 0xc000, 0x3dcd, k, k]);
    expect(() => kvWriteHalf(cache, new Float32Array(4), { B: 2, T: 1, Tcap: 3, W: 2 }, 3, 'f16')).toThrow(
      /kvWriteHalf: positions 3\.\.3 exceed the cache capacity 3/,
    );
  });
});
