// Typed wrappers of shaders/attention.wgsl: causal grouped-query attention, forward and backward (flash style:
// the forward saves the logsumexp per query row, the backward recomputes the probabilities). Same names and
// argument order as src/reference/attention.ts, after the recorder. Not the projections or RoPE.

import source from '../../shaders/attention.wgsl?raw';
import { Params, grid, type Recorder, type Tensor } from '../gpu';
import type { AttentionOptions } from '../reference/attention';

export type { AttentionOptions } from '../reference/attention';

/** Head dims per workgroup (HB in the shader); larger head dims take ceil(HD / HB) workgroups per row. */
const HB = 64;

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

/** Workgroup counts: blocks of ROWS rows over x and y (each <= the per-dimension limit), dim blocks on z. */
function workgroups(rec: Recorder, rows: number, perGroup: number, HD: number): [number, number, number] {
  const [x, y] = grid(Math.ceil(rows / perGroup), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension);
  return [x, y, Math.ceil(HD / HB)];
}

function dims(kernel: string, q: Tensor, k: Tensor, v: Tensor, lse: Tensor) {
  const s = (t: Tensor) => `(${t.shape.join(', ')})`;
  if (q.shape.length !== 4) throw new Error(`${kernel}: q must be (B,T,NH,HD), got ${q.describe()}`);
  if (k.shape.length !== 4) throw new Error(`${kernel}: k must be (B,Tk,NKV,HD), got ${k.describe()}`);
  const [B, T, NH, HD] = q.shape;
  const [Bk, Tk, NKV, HDk] = k.shape;
  if (Bk !== B || HDk !== HD) throw new Error(`${kernel}: k ${s(k)} does not match q ${s(q)} in B or HD`);
  if (v.shape.length !== 4 || v.shape.some((d, i) => d !== k.shape[i])) {
    throw new Error(`${kernel}: v ${s(v)} must have the shape of k ${s(k)}`);
  }
  if (NKV < 1 || NH % NKV !== 0) throw new Error(`${kernel}: NH=${NH} query heads must be a multiple of NKV=${NKV}`);
  if (Tk < T) throw new Error(`${kernel}: ${Tk} key positions for ${T} query positions`);
  if (lse.size !== B * NH * T) throw new Error(`${kernel}: lse ${lse.describe()} must have (B,NH,T)=${B * NH * T} elements`);
  for (const t of [q, k, v, lse]) if (t.dtype !== 'f32') throw new Error(`${kernel}: ${t.describe()} must be f32`);
  return { B, T, Tk, NH, NKV, HD };
}

function sameShape(kernel: string, a: Tensor, aName: string, b: Tensor, bName: string): void {
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new Error(`${kernel}: ${aName} ${a.describe()} must have the shape of ${bName} ${b.describe()}`);
  }
  if (a.dtype !== 'f32') throw new Error(`${kernel}: ${aName} ${a.describe()} must be f32`);
}

function params(d: ReturnType<typeof dims>, opts: AttentionOptions): Params {
  return new Params()
    .u32(d.B)
    .u32(d.T)
    .u32(d.Tk)
    .u32(d.NH)
    .u32(d.NKV)
    .u32(d.HD)
    .f32(opts.scale ?? 1 / Math.sqrt(d.HD));
}

/**
 * out[b,t,h,:] = sum_{j <= t + Tk - T} softmax_j(scale * q[b,t,h,:] . k[b,j,g,:]) v[b,j,g,:], g = h / (NH/NKV);
 * lse[b,h,t] = logsumexp_j of the scaled scores. A thread per query row when there are many rows (training);
 * up to 64 threads splitting a row's keys when there are few (a decode step, T = 1): see attentionLayout.
 * @param out (B,T,NH,HD) overwritten.
 * @param lse (B,NH,T) overwritten; kept for the backward.
 * @param q   (B,T,NH,HD) rotated queries.
 * @param k   (B,Tk,NKV,HD) rotated keys, Tk >= T (queries are the last T positions).
 * @param v   (B,Tk,NKV,HD) values.
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
  const d = dims('attentionForward', q, k, v, lse);
  sameShape('attentionForward', out, 'out', q, 'q');
  const rows = d.B * d.NH * d.T;
  const layout = attentionLayout(rows, d.Tk);
  rec.dispatch({
    family: rec.ctx.family('attention', source),
    entry: 'attention_forward',
    constants: layout,
    params: params(d, opts),
    bindings: [out, lse, q, k, v],
    workgroups: workgroups(rec, rows, layout.ROWS, d.HD),
  });
}

/**
 * Backward of attentionForward in two dispatches, no atomics: dq per query row (over its keys), then dk and dv
 * per key row (over the queries that see it and the query heads sharing its kv head), each row given one or
 * more threads as in attentionLayout. dq, dk and dv are overwritten.
 * @param dq   (B,T,NH,HD)
 * @param dk   (B,Tk,NKV,HD)
 * @param dv   (B,Tk,NKV,HD)
 * @param dOut (B,T,NH,HD) upstream gradient.
 * @param q    (B,T,NH,HD) forward input.
 * @param k    (B,Tk,NKV,HD) forward input.
 * @param v    (B,Tk,NKV,HD) forward input.
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
  const d = dims(kernel, q, k, v, lse);
  sameShape(kernel, dq, 'dq', q, 'q');
  sameShape(kernel, dOut, 'dOut', q, 'q');
  sameShape(kernel, out, 'out', q, 'q');
  sameShape(kernel, dk, 'dk', k, 'k');
  sameShape(kernel, dv, 'dv', v, 'v');
  const family = rec.ctx.family('attention', source);
  const p = params(d, opts);
  const qRows = d.B * d.NH * d.T;
  const qLayout = attentionLayout(qRows, d.Tk);
  rec.dispatch({
    family,
    entry: 'attention_backward_dq',
    constants: qLayout,
    params: p,
    bindings: [dq, dOut, q, k, v, out, lse],
    workgroups: workgroups(rec, qRows, qLayout.ROWS, d.HD),
  });
  const kRows = d.B * d.NKV * d.Tk;
  const kLayout = attentionLayout(kRows, d.T * (d.NH / d.NKV));
  rec.dispatch({
    family,
    entry: 'attention_backward_dkdv',
    constants: kLayout,
    params: p,
    bindings: [dk, dv, dOut, q, k, v, out, lse],
    workgroups: workgroups(rec, kRows, kLayout.ROWS, d.HD),
  });
}
