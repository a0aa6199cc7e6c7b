// CPU twins of shaders/decode.wgsl: the bookkeeping kernels of KV-cache decoding. kvWrite copies new rows into a
// cache at a position (kvWriteHalf: into a cache stored bf16/f16, rounding to nearest even); gatherRows picks rows by
// index; decodeFinish applies end-of-sequence logic to one step's samples and writes them into the completion
// buffers. Bit copies but for kvWriteHalf: they work on any 32-bit data.

import { endOfSequenceIds, type EndOfSequence } from '../io/end-of-sequence';
import { toHalfBits, type HalfDtype } from '../core/half';

/** A 32-bit array the bookkeeping kernels copy bits of (floats are copied through their bits). */
export type Word32Array = Float32Array | Uint32Array | Int32Array;

/**
 * cache[b, pos + t, :] = x[b, t, :] for t < T. cache is (B, Tcap, W), x is (B, T, W); W counts 32-bit words.
 */
export function kvWrite(
  cache: Word32Array,
  x: Word32Array,
  dims: { B: number; T: number; Tcap: number; W: number },
  pos: number,
): void {
  copyRows(cache, x, dims, pos, 'kvWrite');
}

/** cache[b, pos + t, :] = x[b, t, :] for t < T, element by element (the arrays hold elements of one width). */
function copyRows<A extends Word32Array | Uint16Array>(
  cache: A,
  x: A,
  dims: { B: number; T: number; Tcap: number; W: number },
  pos: number,
  kernel: string,
): void {
  const { B, T, Tcap, W } = dims;
  if (pos + T > Tcap) throw new Error(`${kernel}: positions ${pos}..${pos + T - 1} exceed the cache capacity ${Tcap}`);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let w = 0; w < W; w++) cache[(b * Tcap + pos + t) * W + w] = x[(b * T + t) * W + w];
    }
  }
}

/**
 * The write into a cache stored half: cache[b, pos + t, :] = the `dtype` bits of x[b, t, :] rounded to nearest even
 * (toHalfBits), for t < T. cache is (B, Tcap, W) half bits, x is (B, T, W) f32; W counts elements.
 */
export function kvWriteHalf(
  cache: Uint16Array,
  x: Float32Array,
  dims: { B: number; T: number; Tcap: number; W: number },
  pos: number,
  dtype: HalfDtype,
): void {
  copyRows(cache, toHalfBits(x, dtype), dims, pos, 'kvWriteHalf');
}

/** out[r, :] = x[rows[r], :]; out is (R, W), x is (N, W). */
export function gatherRows(out: Word32Array, x: Word32Array, rows: Uint32Array, W: number): void {
  for (let r = 0; r < rows.length; r++) {
    for (let w = 0; w < W; w++) out[r * W + w] = x[rows[r] * W + w];
  }
}

/** Buffers of one rollout that decodeFinish updates. All (R, S) row-major except `current` and `done` (R). */
export interface DecodeState {
  /** The token fed to the next step, per row. */
  current: Uint32Array;
  /** 1 once a row has produced EOS (or was told to stop). */
  done: Uint32Array;
  /** Completion tokens (R, S); pad after the end. */
  tokens: Uint32Array;
  /** Sampler log-probability of each completion token (R, S); 0 after the end. */
  logprobs: Float32Array;
  /** Sampler entropy at each completion position (R, S); 0 after the end. */
  entropies: Float32Array;
  /** 1 for completion tokens that count (including the EOS token itself), 0 after the end. */
  mask: Float32Array;
}

/**
 * One decode step's bookkeeping for rows r < R at column `step` of the completion buffers: a row already done
 * gets pad (mask 0, logprob 0, entropy 0); otherwise the sampled token is kept, and any of the end-of-sequence ids
 * (`eosId`, and `eosIds` when there are several) marks the row done.
 */
export function decodeFinish(
  state: DecodeState,
  sampled: Uint32Array,
  logprob: Float32Array,
  entropy: Float32Array,
  opts: { step: number; S: number; padId: number } & EndOfSequence,
): void {
  const R = sampled.length;
  const eos = new Set(endOfSequenceIds(opts));
  for (let r = 0; r < R; r++) {
    const i = r * opts.S + opts.step;
    if (state.done[r]) {
      state.tokens[i] = opts.padId;
      state.logprobs[i] = 0;
      state.entropies[i] = 0;
      state.mask[i] = 0;
      state.current[r] = opts.padId;
      continue;
    }
    const tok = sampled[r];
    state.tokens[i] = tok;
    state.logprobs[i] = logprob[r];
    state.entropies[i] = entropy[r];
    state.mask[i] = 1;
    state.current[r] = tok;
    if (eos.has(tok)) state.done[r] = 1;
  }
}
