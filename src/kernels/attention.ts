// Typed wrappers of shaders/attention.wgsl: causal grouped-query attention, forward and backward (flash style:
// the forward saves the logsumexp per query row, the backward recomputes the probabilities). Same names and
// argument order as src/reference/attention.ts, after the recorder. Not the projections or RoPE. Two kernel
// paths: 'rows' (a thread per 1-4 rows) when HD divides by 4 and either the rows fill the device or the adapter is a
// CPU one, and shaders/attention.wgsl (rows split over lanes, any HD) for the rest, such as a decode step's few long
// rows on a GPU (defaultAttentionPath). The rows path has two forms of one algorithm (rowsForm): the head vectors in
// unrolled vec4 registers (shaders/attention-rows.wgsl) or in private arrays walked by loops
// (shaders/attention-rows-looped.wgsl), for the compilers that the unrolled form costs seconds.

import raw from '../../shaders/attention.wgsl?raw';
import rowsRaw from '../../shaders/attention-rows.wgsl?raw';
import rowsLoopedRaw from '../../shaders/attention-rows-looped.wgsl?raw';
import {
  declareShader,
  grid,
  uniforms,
  type Params,
  isHalfStorage,
  type DType,
  type Dispatch,
  type GpuContext,
  type KernelFamily,
  type Recorder,
  type Tensor,
} from '../gpu';
import { specialize } from '../gpu/specialize';
import { vulkanDriverOf } from '../gpu/vulkan-drivers';
import { checkCursor, zeroCursor, type DecodeCursor } from './decode';
import { operandCodec, withHalfOperand, withHalfVec4Operand, type HalfCodec } from './half-operand';
import { WGSL_BLOCKS } from './wgsl-blocks';

/** The twin's options (src/reference/attention.ts), with kvStart on the GPU. */
export interface AttentionOptions {
  /** Score scale; default 1/sqrt(HD) as in HF Llama. */
  scale?: number;
  /**
   * (B) u32, per batch row the first visible key position (left padding): keys j < kvStart[b] are masked for
   * every query of row b. A query with no visible key outputs 0 with lse 0 and passes no gradient. Default:
   * no padding (a cached zeros tensor is bound).
   */
  kvStart?: Tensor<'u32'>;
  /**
   * Tk, the number of valid key positions; default k.shape[1]. k and v may be a KV cache (B,Tcap,NKV,HD) of
   * which only the first Tk <= Tcap positions are valid (Tcap is the row stride). Queries are the last T of the
   * Tk: query i sits at absolute position Tk - T + i.
   */
  keys?: number;
  /**
   * The forward only: a decode step's cursor (decode.ts): the kernel reads Tk as keys - cursor.value plus the
   * cursor's GPU value, so one recorded dispatch serves every step. Default: none (a cached zero is bound).
   */
  cursor?: DecodeCursor;
  /**
   * The kernel path: 'rows' (attention-rows*.wgsl; needs HD % 4 == 0 and HD <= 128), 'lanes' (attention.wgsl).
   * Default: defaultAttentionPath.
   */
  path?: AttentionPath;
  /** The form of the 'rows' path (tests run both on every driver). Default: rowsForm. */
  rowsForm?: RowsForm;
}

export type AttentionPath = 'rows' | 'lanes';

/**
 * The two forms of the 'rows' path, the same arithmetic in the same order: 'registers' (attention-rows.wgsl, every
 * loop over the head dim written out, head vectors in named vec4 registers) and 'looped' (attention-rows-looped.wgsl,
 * head vectors in private arrays walked by loops that stay rolled).
 */
export type RowsForm = 'registers' | 'looped';

/** The largest head dim of the 'rows' path (Qwen3's 128; the 'looped' form above ROWS_MAX_REGISTER_VEC4 * 4). */
export const ROWS_MAX_HD = 128;

/** Whether the 'rows' path takes head dim HD. */
export function rowsPathSupports(HD: number): boolean {
  return HD % 4 === 0 && HD <= ROWS_MAX_HD;
}

const rowsSources = new Map<string, string>();

/**
 * The most head-dim vec4 a thread of the 'registers' form holds per register array (RQ * HD / 4): the rows' queries
 * and accumulators (forward, dq) or keys, values and both accumulators (dk/dv) are each RQ * HD / 4 vec4, every one
 * a named register in straight-line code. Compilers that keep them all live in one block grow steeply with that
 * count: at HD 64 with 4 rows a thread a pipeline took 44-86 s on SwiftShader and over a minute on lavapipe
 * (docs/benchmarks/drivers.md). 16 keeps 4 rows a thread up to HD 16 (the nano, micro and tiny presets), 2 up to
 * HD 32 and 1 to HD 64; above, the 'looped' form. Lavapipe's bound is smaller (ROWS_LAVAPIPE_MAX_REGISTER_VEC4).
 */
export const ROWS_MAX_REGISTER_VEC4 = 16;

/**
 * ROWS_MAX_REGISTER_VEC4 on lavapipe (Mesa's llvmpipe), whose LLVM cost grows far more steeply with the registers
 * and storage loads written out: cold on an idle machine, at head dim 12 with 4 rows a thread (12 vec4 per array)
 * the forward, dq and dk/dv took 0.96, 1.43 and 1.72 s (1.7-3.4 s of CPU), with 2 rows (6 vec4) 0.40, 0.59 and
 * 0.78 s, and at head dim 64 (16 vec4) 2.6, 4.1 and 6.1 s.
 * 6 keeps the registers form, at 2 rows a thread, for the nano preset's head dim 12 (3-5x faster there than the
 * looped form) and 1 row to head dim 24; above, lavapipe takes the looped form (docs/benchmarks/drivers.md,
 * "attention-rows in two forms").
 */
export const ROWS_LAVAPIPE_MAX_REGISTER_VEC4 = 6;

/** The registers form's bound on this adapter: ROWS_LAVAPIPE_MAX_REGISTER_VEC4 on lavapipe, else ROWS_MAX_REGISTER_VEC4. */
export function rowsRegisterBound(ctx: GpuContext): number {
  return vulkanDriverOf(ctx.report) === 'lavapipe' ? ROWS_LAVAPIPE_MAX_REGISTER_VEC4 : ROWS_MAX_REGISTER_VEC4;
}

/**
 * The same bound for the 'looped' form (RQ * HD / 4 per private array): each of a thread's rows is written out
 * in every loop body; 4 rows a thread up to HD 8, 2 up to HD 16 and 1 above (on lavapipe 2 rows at head dims
 * 12-16 ran as fast as 4, for about half the compile).
 */
export const ROWS_MAX_LOOPED_VEC4 = 8;

/**
 * The form of the 'rows' path on this adapter at head dim HD: 'registers' while one row's head vector fits the
 * adapter's register bound (rowsRegisterBound: to head dim 64 on SwiftShader, which runs that form 2-4x faster than
 * the looped one and compiles it in under 2 s, and on GPUs; to head dim 24 on lavapipe), else 'looped' (lavapipe
 * compiles the registers form at head dims 32-64 in 1.6-6.1 s per entry point, the looped one in 0.14-0.4 s, and
 * runs it 1.1-2.2x slower there). docs/benchmarks/drivers.md, "attention-rows in two forms".
 */
export function rowsForm(ctx: GpuContext, HD: number): RowsForm {
  return Math.ceil(HD / 4) <= rowsRegisterBound(ctx) ? 'registers' : 'looped';
}

/**
 * Rows per thread of the 'rows' path (RQ in attention-rows*.wgsl) for sequences of `perSequence` rows at head dim
 * HD: 4, fewer where 4 rows would hold more than `bound` vec4 per array (the form's: rowsRegisterBound,
 * ROWS_MAX_LOOPED_VEC4), and 1 for a decode step's single query, where a thread's other rows would only be computed
 * and discarded. A row's arithmetic is the same whatever RQ is (the same keys in the same order), so the results do
 * not depend on it.
 */
export function rowsPerThread(perSequence: number, HD: number, bound = ROWS_MAX_REGISTER_VEC4): number {
  if (perSequence < 4) return 1;
  let rq = 4;
  while (rq > 1 && rq * Math.ceil(HD / 4) > bound) rq /= 2;
  return rq;
}

/**
 * attention-rows.wgsl ('registers') or attention-rows-looped.wgsl ('looped') expanded for HD and RQ rows per thread
 * (one family each, compiled on first use); with a codec, the forward's keys and values (fk, fv) read from a KV
 * cache stored half.
 */
function rowsFamily(ctx: GpuContext, form: RowsForm, HD: number, RQ: number, kv: HalfCodec | null): KernelFamily {
  const HD4 = HD / 4;
  const key = `${form === 'looped' ? 'looped-' : ''}hd${HD}-rq${RQ}${kv ? `-kv-${kv}` : ''}`;
  let text = rowsSources.get(key);
  if (!text) {
    const shader = form === 'looped' ? ATTENTION_ROWS_LOOPED_SHADER : ATTENTION_ROWS_SHADER;
    const qrows = { marker: 'qrows', count: RQ, tokens: (t: number) => ({ _t: t }) };
    const unroll = { marker: 'unroll', count: HD4, tokens: (c: number) => ({ _c: c }), sum: 'sum_c' };
    text = specialize(
      shader.source,
      { values: { HD4, RQ }, repeats: form === 'looped' ? [qrows] : [qrows, unroll] },
      shader.file,
    );
    if (kv) text = withHalfVec4Operand(withHalfVec4Operand(text, 'fk', kv), 'fv', kv).replaceAll('enable f16;\n', '');
    if (kv === 'f16-native') text = `enable f16;\n${text}`;
    rowsSources.set(key, text);
  }
  return ctx.family(`attention-rows-${key}`, text);
}

/**
 * The path a kernel over `rows` rows of `length` items takes by default: 'rows' where it applies and either a
 * thread per row already fills the device (attentionLayout gives one lane; on a GPU only up to the head dims of
 * the 'registers' form, as the 'looped' form's private arrays are not measured there) or the adapter is a CPU
 * (software) one, where parallelism beyond its few cores buys nothing and workgroup barriers are slow; else 'lanes'.
 */
export function defaultAttentionPath(ctx: GpuContext, HD: number, rows: number, length: number): AttentionPath {
  if (!rowsPathSupports(HD)) return 'lanes';
  if (ctx.report.isFallbackAdapter) return 'rows';
  return Math.ceil(HD / 4) <= ROWS_MAX_REGISTER_VEC4 && attentionLayout(rows, length).LANES === 1 ? 'rows' : 'lanes';
}

/**
 * Where one entry point over `rows` rows of `length` items runs: on opts.path (else defaultAttentionPath), its
 * family, override constants and workgroups. The rows come as sequences of `perSequence` rows (T query rows, or Tcap
 * key rows), which the 'rows' path gives rowsPerThread(perSequence, HD) to a thread. Both files name their entry points
 * alike.
 */
function launch(
  kernel: string,
  rec: Recorder,
  HD: number,
  rows: number,
  perSequence: number,
  length: number,
  opts: AttentionOptions,
  kv: HalfCodec | null = null,
): Pick<Dispatch, 'family' | 'constants' | 'workgroups'> {
  if (opts.path === 'rows' && !rowsPathSupports(HD)) {
    throw new Error(
      `${kernel}: path 'rows' needs a head dim that divides by 4 and is at most ${ROWS_MAX_HD}, got ${HD}`,
    );
  }
  if (opts.rowsForm === 'registers' && Math.ceil(HD / 4) > ROWS_MAX_REGISTER_VEC4) {
    throw new Error(
      `${kernel}: rowsForm 'registers' holds at most ${ROWS_MAX_REGISTER_VEC4} vec4 per head vector (head dim ${4 * ROWS_MAX_REGISTER_VEC4}), got head dim ${HD}`,
    );
  }
  if ((opts.path ?? defaultAttentionPath(rec.ctx, HD, rows, length)) === 'rows') {
    const form = opts.rowsForm ?? rowsForm(rec.ctx, HD);
    const RQ = rowsPerThread(perSequence, HD, form === 'looped' ? ROWS_MAX_LOOPED_VEC4 : rowsRegisterBound(rec.ctx));
    const threads = (rows / perSequence) * Math.ceil(perSequence / RQ);
    return { family: rowsFamily(rec.ctx, form, HD, RQ, kv), workgroups: workgroups(rec, threads, ROWS_WG) };
  }
  const layout = attentionLayout(rows, length);
  return {
    family: kv ? lanesHalfKvFamily(rec.ctx, kv) : rec.ctx.family('attention', ATTENTION_SHADER.source),
    constants: layout,
    workgroups: workgroups(rec, rows, layout.ROWS, Math.ceil(HD / HB)),
  };
}

/** attention.wgsl with the forward's keys and values (fk, fv) read from a KV cache stored half through `kv`. */
function lanesHalfKvFamily(ctx: GpuContext, kv: HalfCodec): KernelFamily {
  let text = withHalfOperand(withHalfOperand(ATTENTION_SHADER.source, 'fk', kv), 'fv', kv).replaceAll(
    'enable f16;\n',
    '',
  );
  if (kv === 'f16-native') text = `enable f16;\n${text}`;
  return ctx.family(`attention-kv-${kv}`, text);
}

/** Threads per workgroup of attention-rows.wgsl (WG in the shader). */
const ROWS_WG = 64;

/** Head dims per workgroup (HB in the shader); larger head dims take ceil(HD / HB) workgroups per row. */
const HB = 64;

/** Threads per workgroup of attention_backward_stats (STATS_WG in the shader): a thread per query row. */
const STATS_WG = 64;

/** The uniforms of both paths' shaders. */
const PARAMS = uniforms('Params', {
  B: 'u32',
  T: 'u32', // query positions
  Tk: 'u32', // valid key positions, >= T; queries are the last T of them
  Tcap: 'u32', // key positions allocated per sequence in k, v, dk, dv (their row stride), >= Tk
  NH: 'u32', // query heads
  NKV: 'u32', // kv heads; NH % NKV == 0
  HD: 'u32', // head dim
  scale: 'f32', // score scale, 1/sqrt(HD) by default
});
export const ATTENTION_SHADER = declareShader('attention.wgsl', raw, { uniforms: [PARAMS], consts: { HB, STATS_WG } });
export const ATTENTION_ROWS_SHADER = declareShader('attention-rows.wgsl', rowsRaw, {
  uniforms: [PARAMS],
  consts: { WG: ROWS_WG },
  blocks: WGSL_BLOCKS,
});
export const ATTENTION_ROWS_LOOPED_SHADER = declareShader('attention-rows-looped.wgsl', rowsLoopedRaw, {
  uniforms: [PARAMS],
  consts: { WG: ROWS_WG },
  blocks: WGSL_BLOCKS,
});

/** Threads per workgroup (ROWS * LANES); the shader's merge buffer (PART = 256 floats) must hold them. */
const THREADS = 64;
/** Rows * lanes above which a thread per row already fills a GPU, so rows get no more lanes. */
const FILL = 4096;
/** The fewest items a lane should loop over (below it, merging the lanes costs more than they save). */
const MIN_ITEMS = 8;

/**
 * How a kernel spreads `rows` rows, each looping over up to `length` items (keys, or (query, head) pairs),
 * over threads: LANES threads per row, ROWS rows per workgroup. Training's many rows get a thread each (no
 * barriers); a decode step's few long rows get up to 64 lanes. LANES is 1, 4, 16 or 64 so that few pipelines
 * get compiled (each costs 0.1-0.3 s on SwiftShader).
 */
export function attentionLayout(rows: number, length: number): { LANES: number; ROWS: number } {
  let lanes = 1;
  while (lanes < THREADS && rows * lanes < FILL && length >= 4 * lanes * MIN_ITEMS) lanes *= 4;
  return { LANES: lanes, ROWS: THREADS / lanes };
}

/** Workgroup counts: blocks of perGroup rows over x and y (each <= the per-dimension limit), dimBlocks on z. */
function workgroups(rec: Recorder, rows: number, perGroup: number, dimBlocks = 1): [number, number, number] {
  const [x, y] = grid(Math.ceil(rows / perGroup), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension);
  return [x, y, dimBlocks];
}

/**
 * Per context, tensors the wrappers own: the zeros bound as kvStart when none is given, and the backward's
 * (lse, D) stats. Each grows (to a power of two) and is replaced, never destroyed: an open recorder may still
 * use the old one. Reusing one scratch across calls is safe: dispatches run in recording order.
 */
const owned = new WeakMap<GpuContext, Map<string, Tensor>>();

function ownedTensor<D extends DType>(ctx: GpuContext, name: string, size: number, dtype: D): Tensor<D> {
  let m = owned.get(ctx);
  if (!m) owned.set(ctx, (m = new Map()));
  const t = m.get(name) as Tensor<D> | undefined;
  if (t && t.size >= size) return t;
  const n = Math.max(64, 2 ** Math.ceil(Math.log2(size)));
  const fresh = ctx.tensor<D>([n], { dtype, label: `attention:${name}` }); // zero-initialized
  m.set(name, fresh);
  return fresh;
}

function dims(kernel: string, q: Tensor, k: Tensor, v: Tensor, lse: Tensor, opts: AttentionOptions) {
  const s = (t: Tensor) => `(${t.shape.join(', ')})`;
  if (q.shape.length !== 4) throw new Error(`${kernel}: q must be (B,T,NH,HD), got ${q.describe()}`);
  if (k.shape.length !== 4) throw new Error(`${kernel}: k must be (B,Tcap,NKV,HD), got ${k.describe()}`);
  const [B, T, NH, HD] = q.shape;
  const [Bk, Tcap, NKV, HDk] = k.shape;
  if (Bk !== B || HDk !== HD) throw new Error(`${kernel}: k ${s(k)} does not match q ${s(q)} in B or HD`);
  if (v.shape.length !== 4 || v.shape.some((d, i) => d !== k.shape[i])) {
    throw new Error(`${kernel}: v ${s(v)} must have the shape of k ${s(k)}`);
  }
  if (NKV < 1 || NH % NKV !== 0) throw new Error(`${kernel}: NH=${NH} query heads must be a multiple of NKV=${NKV}`);
  const Tk = opts.keys ?? Tcap;
  if (!Number.isInteger(Tk) || Tk > Tcap)
    throw new Error(`${kernel}: keys=${Tk} valid positions in a key tensor ${k.describe()}`);
  if (Tk < T) throw new Error(`${kernel}: ${Tk} key positions for ${T} query positions`);
  if (lse.size !== B * NH * T)
    throw new Error(`${kernel}: lse ${lse.describe()} must have (B,NH,T)=${B * NH * T} elements`);
  for (const t of [q, lse]) if (t.dtype !== 'f32') throw new Error(`${kernel}: ${t.describe()} must be f32`);
  // k and v: f32, or (the forward only) a KV cache stored bf16/f16, both alike.
  if (v.dtype !== k.dtype) throw new Error(`${kernel}: v ${v.describe()} must have the dtype of k ${k.describe()}`);
  if (k.dtype !== 'f32' && (kernel !== 'attentionForward' || !isHalfStorage(k.dtype)))
    throw new Error(`${kernel}: ${k.describe()} must be f32${kernel === 'attentionForward' ? ', bf16 or f16' : ''}`);
  const ks = opts.kvStart;
  if (ks && (ks.dtype !== 'u32' || ks.size !== B))
    throw new Error(`${kernel}: kvStart ${ks.describe()} must be (B)=(${B}) u32`);
  if (opts.cursor) {
    if (kernel !== 'attentionForward') throw new Error(`${kernel}: a decode cursor is the forward's only`);
    checkCursor(kernel, opts.cursor, Tk);
  }
  return { B, T, Tk, Tcap, NH, NKV, HD };
}

/** The kvStart tensor to bind: the caller's, or owned zeros (no padding). */
function kvStartOf(rec: Recorder, d: ReturnType<typeof dims>, opts: AttentionOptions): Tensor<'u32'> {
  return opts.kvStart ?? ownedTensor(rec.ctx, 'zeros', d.B, 'u32');
}

/** The forward's cursor tensor to bind: the caller's, or the context's zero (Tk as given). */
function cursorOf(rec: Recorder, opts: AttentionOptions): Tensor<'u32'> {
  return opts.cursor?.tensor ?? zeroCursor(rec.ctx);
}

function sameShape(kernel: string, a: Tensor, aName: string, b: Tensor, bName: string): void {
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new Error(`${kernel}: ${aName} ${a.describe()} must have the shape of ${bName} ${b.describe()}`);
  }
  if (a.dtype !== 'f32') throw new Error(`${kernel}: ${aName} ${a.describe()} must be f32`);
}

function params(d: ReturnType<typeof dims>, opts: AttentionOptions): Params {
  const { B, T, Tcap, NH, NKV, HD } = d;
  const Tk = d.Tk - (opts.cursor?.value ?? 0); // the forward adds the cursor's GPU value back
  return PARAMS.pack({ B, T, Tk, Tcap, NH, NKV, HD, scale: opts.scale ?? 1 / Math.sqrt(d.HD) });
}

/**
 * out[b,t,h,:] = sum_{s <= j <= a} softmax_j(scale * q[b,t,h,:] . k[b,j,g,:]) v[b,j,g,:], g = h / (NH/NKV),
 * a = t + Tk - T, s = kvStart[b]; lse[b,h,t] = logsumexp_j of the scaled scores; out = lse = 0 for a pad query
 * (s > a). A thread per query row when there are many rows (training); up to 64 threads splitting a row's keys
 * when there are few (a decode step, T = 1): see attentionLayout.
 * @param out (B,T,NH,HD) overwritten.
 * @param lse (B,NH,T) overwritten; kept for the backward.
 * @param q   (B,T,NH,HD) rotated queries.
 * @param k   (B,Tcap,NKV,HD) rotated keys; the first Tk = opts.keys ?? Tcap valid, Tk >= T (queries are the last T).
 *            f32, or a KV cache stored bf16/f16 (widened exactly to f32 on load: the result equals the f32 kernel's
 *            on the half values).
 * @param v   (B,Tcap,NKV,HD) values, of k's dtype.
 */
export function attentionForward(
  rec: Recorder,
  out: Tensor,
  lse: Tensor,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  opts: AttentionOptions = {},
): void {
  const d = dims('attentionForward', q, k, v, lse, opts);
  sameShape('attentionForward', out, 'out', q, 'q');
  const kv = operandCodec('attentionForward', 'the keys and values', k.dtype, rec.ctx.device);
  rec.dispatch({
    ...launch('attentionForward', rec, d.HD, d.B * d.NH * d.T, d.T, d.Tk, opts, kv),
    entry: 'attention_forward',
    params: params(d, opts),
    bindings: [out, lse, q, k, v, kvStartOf(rec, d, opts), cursorOf(rec, opts)],
    // The first Tk positions of k and v are read (a KV cache is bound whole); per (row, head, query, key) one
    // dot product and one multiply-add of HD.
    cost: {
      bytes: out.byteLength + lse.byteLength + q.byteLength + ((k.byteLength + v.byteLength) * d.Tk) / d.Tcap,
      flops: 4 * d.B * d.NH * d.T * d.Tk * d.HD,
    },
  });
}

/**
 * Backward of attentionForward in three dispatches, no atomics: the per-query-row stats (lse, D = rowsum(dOut *
 * out)) into a scratch the wrapper owns, dq per query row (over its keys), then dk and dv per key row (over the
 * queries that see it and the query heads sharing its kv head), each row given one or more threads as in
 * attentionLayout. dq, dk and dv are overwritten, all of dk and dv: zeros at masked keys and past Tk.
 * @param dq   (B,T,NH,HD)
 * @param dk   (B,Tcap,NKV,HD)
 * @param dv   (B,Tcap,NKV,HD)
 * @param dOut (B,T,NH,HD) upstream gradient.
 * @param q    (B,T,NH,HD) forward input.
 * @param k    (B,Tcap,NKV,HD) forward input.
 * @param v    (B,Tcap,NKV,HD) forward input.
 * @param out  (B,T,NH,HD) forward output.
 * @param lse  (B,NH,T) saved by the forward.
 */
export function attentionBackward(
  rec: Recorder,
  dq: Tensor,
  dk: Tensor,
  dv: Tensor,
  dOut: Tensor,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  out: Tensor,
  lse: Tensor,
  opts: AttentionOptions = {},
): void {
  const kernel = 'attentionBackward';
  const d = dims(kernel, q, k, v, lse, opts);
  sameShape(kernel, dq, 'dq', q, 'q');
  sameShape(kernel, dOut, 'dOut', q, 'q');
  sameShape(kernel, out, 'out', q, 'q');
  sameShape(kernel, dk, 'dk', k, 'k');
  sameShape(kernel, dv, 'dv', v, 'v');
  const p = params(d, opts);
  const kvStart = kvStartOf(rec, d, opts);
  const qRows = d.B * d.NH * d.T;
  // (lse, D) pairs per query row: one buffer, so that dk/dv binds 8 storage buffers (the WebGPU default limit).
  const stats = ownedTensor(rec.ctx, 'stats', 2 * qRows, 'f32');
  rec.dispatch({
    family: rec.ctx.family('attention', ATTENTION_SHADER.source),
    entry: 'attention_backward_stats',
    params: p,
    bindings: [stats, dOut, out, lse],
    workgroups: [...grid(Math.ceil(qRows / STATS_WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension), 1],
  });
  rec.dispatch({
    ...launch(kernel, rec, d.HD, qRows, d.T, d.Tk, opts),
    entry: 'attention_backward_dq',
    params: p,
    bindings: [dq, dOut, q, k, v, stats, kvStart],
  });
  rec.dispatch({
    ...launch(kernel, rec, d.HD, d.B * d.NKV * d.Tcap, d.Tcap, d.T * (d.NH / d.NKV), opts),
    entry: 'attention_backward_dkdv',
    params: p,
    bindings: [dk, dv, dOut, q, k, v, stats, kvStart],
  });
}
