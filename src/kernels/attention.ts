// Typed wrappers of shaders/attention.wgsl: causal grouped-query attention, forward and backward (flash style:
// the forward saves the logsumexp per query row, the backward recomputes the probabilities). Same names and
// argument order as src/reference/attention.ts, after the recorder. Not the projections or RoPE.

import source from '../../shaders/attention.wgsl?raw';
import { Params, grid, type Recorder, type Tensor } from '../gpu';
import type { AttentionOptions } from '../reference/attention';

export type { AttentionOptions } from '../reference/attention';

const MAX_WG = 64;

/**
 * Workgroup size and head-dim bound for an entry keeping `vectors` partial rows of HD_MAX floats per thread,
 * sized to the device's workgroup memory (16 KiB by default: HD=64 gives 32 threads forward, 28 for dk/dv).
 */
function tuning(rec: Recorder, HD: number, vectors: number): { WG: number; HD_MAX: number } {
  const HD_MAX = Math.ceil(HD / 4) * 4;
  // Besides the partials: two staged rows (rowA, rowB) and two per-thread scalars (redM, redL).
  const floats = Math.floor(rec.ctx.device.limits.maxComputeWorkgroupStorageSize / 4) - 2 * HD_MAX - 2 * MAX_WG;
  const fit = Math.min(MAX_WG, Math.floor(floats / (vectors * HD_MAX)));
  // Whole warps where possible, else multiples of 4 (SwiftShader's SIMD width).
  const WG = fit >= 32 ? Math.floor(fit / 32) * 32 : Math.floor(fit / 4) * 4;
  if (WG < 4) throw new Error(`attention: head dim ${HD} does not fit this device's workgroup memory`);
  return { WG, HD_MAX };
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
 * lse[b,h,t] = logsumexp_j of the scaled scores. One workgroup per query row, its keys spread over the threads
 * (so a decode step, T = 1, still uses a workgroup's worth of threads per head).
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
  const maxDim = rec.ctx.device.limits.maxComputeWorkgroupsPerDimension;
  rec.dispatch({
    family: rec.ctx.family('attention', source),
    entry: 'attention_forward',
    constants: tuning(rec, d.HD, 1),
    params: params(d, opts),
    bindings: [out, lse, q, k, v],
    workgroups: grid(d.B * d.NH * d.T, maxDim),
  });
}

/**
 * Backward of attentionForward: dq (one workgroup per query row, over its keys) and dk, dv (one workgroup per
 * key row, over the queries that see it and the query heads sharing its kv head). Two dispatches, no atomics;
 * dq, dk and dv are overwritten.
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
  const maxDim = rec.ctx.device.limits.maxComputeWorkgroupsPerDimension;
  const p = params(d, opts);
  rec.dispatch({
    family,
    entry: 'attention_backward_dq',
    constants: tuning(rec, d.HD, 1),
    params: p,
    bindings: [dq, dOut, q, k, v, out, lse],
    workgroups: grid(d.B * d.NH * d.T, maxDim),
  });
  rec.dispatch({
    family,
    entry: 'attention_backward_dkdv',
    constants: tuning(rec, d.HD, 2),
    params: p,
    bindings: [dk, dv, dOut, q, k, v, out, lse],
    workgroups: grid(d.B * d.NKV * d.Tk, maxDim),
  });
}
