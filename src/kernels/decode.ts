// Typed wrappers of shaders/decode.wgsl: KV-cache writes (into an f32 cache, or one stored bf16/f16), row gathers and per-step end-of-sequence bookkeeping.
// Same names as src/reference/decode.ts, with the recorder first; shapes come from the tensors.

import raw from '../../shaders/decode.wgsl?raw';
import {
  declareShader,
  grid,
  isHalfStorage,
  spanOf,
  uniforms,
  type DispatchCost,
  type GpuContext,
  type Params,
  type Recorder,
  type Tensor,
} from '../gpu';
import { endOfSequenceIds, MAX_EOS_IDS, type EndOfSequence } from '../io/end-of-sequence';
import { WGSL_BLOCKS } from './wgsl-blocks';

const WG = 64;

/**
 * A decode step's cursor: a u32 on the GPU (tensor[0]) that the kernels of a step against a KV cache add to their
 * base position (ropeDecodeKv: the cache row written and the rotation's positions; attentionForward: the keys
 * valid). A rollout sets it before each decode step by a copy inside the command buffer, so every step records the
 * same dispatches with the same bindings and parameters: no bind group or uniform buffer is made per step.
 * `value` is what the tensor holds when the dispatches run; the host's checks, launch shapes and costs use it.
 */
export interface DecodeCursor {
  tensor: Tensor<'u32'>;
  value: number;
}

/** Checks a cursor whose value is subtracted from `base` (a position or a key count) in the kernel's parameters. */
export function checkCursor(kernel: string, cursor: DecodeCursor, base: number): void {
  if (cursor.tensor.dtype !== 'u32' || cursor.tensor.size < 1)
    throw new Error(`${kernel}: the decode cursor ${cursor.tensor.describe()} must be u32 with an element`);
  if (!Number.isInteger(cursor.value) || cursor.value < 0 || cursor.value > base)
    throw new Error(`${kernel}: the decode cursor's value ${cursor.value} must be a whole number from 0 to ${base}`);
}

const zeroCursors = new WeakMap<GpuContext, Tensor<'u32'>>();

/** The tensor a kernel binds as its cursor when the caller gives none: one zero per context (never written). */
export function zeroCursor(ctx: GpuContext): Tensor<'u32'> {
  let t = zeroCursors.get(ctx);
  if (!t) zeroCursors.set(ctx, (t = ctx.tensor<'u32'>([1], { dtype: 'u32', label: 'decode:zero_cursor' })));
  return t;
}

const PARAMS = uniforms('Params', {
  B: 'u32', // rows (batch)
  T: 'u32', // new positions per row (kv_write) / rows of the index (gather)
  Tcap: 'u32', // cache capacity per row (kv_write) / completion length S (finish)
  W: 'u32', // 32-bit words per position
  pos: 'u32', // first cache position written (kv_write) / completion column (finish)
  padId: 'u32',
  // End-of-sequence ids (finish): up to MAX_EOS_IDS, unused slots repeating the first id.
  eosIdsLow: 'vec4<u32>',
  eosIdsHigh: 'vec4<u32>',
  // finish: the log-prob's and entropy's first element in the step's samples buffer.
  logprobAt: 'u32',
  entropyAt: 'u32',
});
export const DECODE_SHADER = declareShader('decode.wgsl', raw, { uniforms: [PARAMS], blocks: WGSL_BLOCKS });
/** The shader with its blocks (half-bits) pasted in. */
const SOURCE = DECODE_SHADER.source;

function launch(
  rec: Recorder,
  entry: string,
  threads: number,
  params: Params,
  bindings: Tensor[],
  cost?: DispatchCost,
): void {
  rec.dispatch({
    family: rec.ctx.family('decode', SOURCE),
    entry,
    constants: { WG },
    params,
    bindings,
    workgroups: grid(Math.ceil(threads / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
    cost,
  });
}

function p(
  B: number,
  T: number,
  Tcap: number,
  W: number,
  pos: number,
  eos: EndOfSequence = { eosId: 0 },
  padId = 0,
  samplesAt: { logprob: number; entropy: number } = { logprob: 0, entropy: 0 },
): Params {
  const ids = endOfSequenceIds(eos);
  if (ids.length > MAX_EOS_IDS)
    throw new Error(`decode: ${ids.length} end-of-sequence ids; at most ${MAX_EOS_IDS} are supported`);
  const slot = (i: number) => ids[i] ?? ids[0];
  return PARAMS.pack({
    B,
    T,
    Tcap,
    W,
    pos,
    padId,
    eosIdsLow: [slot(0), slot(1), slot(2), slot(3)],
    eosIdsHigh: [slot(4), slot(5), slot(6), slot(7)],
    logprobAt: samplesAt.logprob,
    entropyAt: samplesAt.entropy,
  });
}

/**
 * cache (B, Tcap, ...W) <- x (B, T, ...W) at positions pos..pos+T-1: a bit copy for a 32-bit cache (any 32-bit
 * dtype), and for a bf16 or f16 cache x (f32) rounded to nearest even (twin: kvWriteHalf). A half cache needs an even
 * W (elements per position), so that no 32-bit word holds two positions.
 */
export function kvWrite(rec: Recorder, cache: Tensor, x: Tensor, pos: number): void {
  const [B, Tcap] = cache.shape;
  const [Bx, T] = x.shape;
  const W = cache.size / (B * Tcap);
  if (Bx !== B || x.size !== B * T * W)
    throw new Error(`kvWrite: ${x.describe()} does not fit rows of ${cache.describe()}`);
  if (pos + T > Tcap)
    throw new Error(`kvWrite: positions ${pos}..${pos + T - 1} exceed the capacity ${Tcap} of ${cache.describe()}`);
  if (!isHalfStorage(cache.dtype)) {
    // x read, and its positions of the cache written (the cache is bound whole).
    launch(rec, 'decode_kv_write', B * T * W, p(B, T, Tcap, W, pos), [cache, x], {
      bytes: 2 * x.byteLength,
      flops: 0,
    });
    return;
  }
  if (x.dtype !== 'f32') throw new Error(`kvWrite: a ${cache.dtype} cache takes f32 values, got ${x.describe()}`);
  if (W % 2 !== 0)
    throw new Error(`kvWrite: a ${cache.dtype} cache needs an even number of values per position, got ${W}`);
  const words = W / 2;
  launch(rec, `decode_kv_write_${cache.dtype}`, B * T * words, p(B, T, Tcap, words, pos), [cache, x], {
    bytes: x.byteLength * 1.5,
    flops: 0,
  });
}

/** out (R, ...W) <- x (N, ...W) at rows idx (R). */
export function gatherRows(rec: Recorder, out: Tensor, x: Tensor, idx: Tensor<'u32'>): void {
  const R = idx.size;
  const W = out.size / Math.max(R, 1);
  if (out.shape[0] !== R || x.size % W !== 0)
    throw new Error(`gatherRows: ${out.describe()} must have one row of ${x.describe()} per index`);
  launch(rec, 'decode_gather_rows', R * W, p(0, R, 0, W, 0), [out, x, idx], {
    bytes: 2 * out.byteLength + idx.byteLength,
    flops: 0,
  });
}

/** The completion buffers decodeFinish writes (see src/reference/decode.ts DecodeState). */
export interface DecodeBuffers {
  current: Tensor<'u32'>;
  done: Tensor<'u32'>;
  tokens: Tensor<'u32'>;
  logprobs: Tensor;
  entropies: Tensor;
  mask: Tensor;
}

/**
 * One step's samples (R) into column `step` of the (R, S) completion buffers, with end-of-sequence logic: a row
 * ends at the first of any of its end-of-sequence ids (`eosId`, and `eosIds` when there are several). `sampled`,
 * `logprob` and `entropy` are views of one buffer (bound as one: 8 storage buffers in all). With a decode cursor the
 * column is step - cursor.value plus the cursor's GPU value, so every step of a rollout records the same dispatch.
 */
export function decodeFinish(
  rec: Recorder,
  state: DecodeBuffers,
  sampled: Tensor<'u32'>,
  logprob: Tensor,
  entropy: Tensor,
  opts: { step: number; padId: number; cursor?: DecodeCursor } & EndOfSequence,
): void {
  const [R, S] = state.tokens.shape;
  if (sampled.size !== R || state.current.size !== R || logprob.size !== R || entropy.size !== R)
    throw new Error(`decodeFinish: the samples must have ${R} rows, got ${sampled.describe()}`);
  if (opts.step >= S) throw new Error(`decodeFinish: step ${opts.step} is past the completion length ${S}`);
  const samples = spanOf([sampled, logprob, entropy]);
  if (samples?.at[0] !== 0)
    throw new Error('decodeFinish: the sampled ids, log-probs and entropies must be views of one buffer, ids first');
  if (opts.cursor) checkCursor('decodeFinish', opts.cursor, opts.step);
  const base = opts.step - (opts.cursor?.value ?? 0);
  launch(
    rec,
    'decode_finish',
    R,
    p(R, 1, S, 1, base, opts, opts.padId, { logprob: samples.at[1], entropy: samples.at[2] }),
    [
      state.current,
      state.done,
      state.tokens,
      state.logprobs,
      state.entropies,
      state.mask,
      samples.bound,
      opts.cursor?.tensor ?? zeroCursor(rec.ctx),
    ],
  );
}
