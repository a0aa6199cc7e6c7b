// CPU twin of shaders/attention.wgsl: causal grouped-query softmax attention, naive (materializes one score
// row at a time). Saves the per-row logsumexp, not the probabilities, so the backward recomputes them
// (flash-attention style). Not the projections or RoPE: q, k, v arrive already projected and rotated.
//
// Two extensions for batched generation: a per-row key start (left padding: prompts of different lengths in one
// batch) and a key capacity (k and v live in a KV cache of Tcap positions per row, of which the first Tk are
// valid).
//
// GPU entry points: attention_forward implements attentionForward; attentionBackward is three passes,
// attention_backward_stats (lse and D = rowsum(dOut * out) per query row), attention_backward_dq and
// attention_backward_dkdv.

import type { HostTensor } from '../core/host-tensor';

export interface AttentionOptions {
  /** Score scale; default 1/sqrt(HD) as in HF Llama. */
  scale?: number;
  /**
   * Per batch row b (length B), the first visible key position (left padding): keys j < kvStart[b] are masked
   * for every query of row b, on top of causality. A query with no visible key (absolute position <
   * kvStart[b], a pad query) outputs 0 with lse 0 and passes no gradient. Default: all zeros.
   */
  kvStart?: Uint32Array;
  /**
   * Tk, the number of valid key positions; default k.shape[1]. k and v may be a KV cache (B,Tcap,NKV,HD) of
   * which only the first Tk <= Tcap positions are valid: Tcap is the row stride, positions Tk.. are ignored
   * (and get dk = dv = 0). Queries are the last T of the Tk: query i sits at absolute position Tk - T + i.
   */
  keys?: number;
}

/**
 * Checks the attention shapes. Queries are the LAST Tq positions of the Tk keys (Tq = Tk for training,
 * Tq < Tk when decoding against a KV cache): query t sees keys kvStart[b] <= j <= t + (Tk - Tq).
 */
function attentionDims(
  kernel: string,
  q: HostTensor,
  k: HostTensor,
  v: HostTensor,
  lse: HostTensor,
  opts: AttentionOptions,
) {
  const s = (t: HostTensor) => `[${t.shape.join(', ')}]`;
  if (q.shape.length !== 4) throw new Error(`${kernel}: q must be (B,T,NH,HD), got ${s(q)}`);
  if (k.shape.length !== 4) throw new Error(`${kernel}: k must be (B,Tcap,NKV,HD), got ${s(k)}`);
  const [B, Tq, NH, HD] = q.shape;
  const [Bk, Tcap, NKV, HDk] = k.shape;
  if (Bk !== B || HDk !== HD) throw new Error(`${kernel}: k ${s(k)} does not match q ${s(q)} in B or HD`);
  if (v.shape.length !== 4 || v.shape.some((d, i) => d !== k.shape[i])) {
    throw new Error(`${kernel}: v ${s(v)} must have the shape of k ${s(k)}`);
  }
  if (NKV < 1 || NH % NKV !== 0) throw new Error(`${kernel}: NH=${NH} query heads must be a multiple of NKV=${NKV}`);
  const Tk = opts.keys ?? Tcap;
  if (!Number.isInteger(Tk) || Tk > Tcap)
    throw new Error(`${kernel}: keys=${Tk} valid positions in a key tensor of ${Tcap}`);
  if (Tk < Tq) throw new Error(`${kernel}: ${Tk} key positions for ${Tq} query positions`);
  if (lse.data.length !== B * NH * Tq)
    throw new Error(`${kernel}: lse has ${lse.data.length} elements, want (B,NH,T)=${B * NH * Tq}`);
  const kvStart = opts.kvStart ?? new Uint32Array(B);
  if (kvStart.length !== B)
    throw new Error(`${kernel}: kvStart has ${kvStart.length} entries, want one per batch row (${B})`);
  return { B, Tq, Tk, Tcap, NH, NKV, HD, group: NH / NKV, offset: Tk - Tq, kvStart };
}

function checkSame(kernel: string, a: HostTensor, aName: string, b: HostTensor, bName: string): void {
  if (a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) {
    throw new Error(
      `${kernel}: ${aName} [${a.shape.join(', ')}] must have the shape of ${bName} [${b.shape.join(', ')}]`,
    );
  }
}

/**
 * out[b,t,h,:] = sum_{s <= j <= a} softmax_j(scale * q[b,t,h,:] . k[b,j,g,:]) v[b,j,g,:], g = floor(h / (NH/NKV)),
 * a = t + Tk - T the query's absolute position, s = kvStart[b]; out = 0 and lse = 0 when s > a (pad query).
 * @param out (B,T,NH,HD) attention output, overwritten.
 * @param lse (B,NH,T) logsumexp of the scaled scores per query row, overwritten; kept for the backward.
 * @param q   (B,T,NH,HD) rotated queries.
 * @param k   (B,Tcap,NKV,HD) rotated keys, the first Tk = opts.keys ?? Tcap positions valid (Tk = T in training).
 * @param v   (B,Tcap,NKV,HD) values.
 */
export function attentionForward(
  out: HostTensor,
  lse: HostTensor,
  q: HostTensor,
  k: HostTensor,
  v: HostTensor,
  opts: AttentionOptions = {},
): void {
  const d = attentionDims('attentionForward', q, k, v, lse, opts);
  checkSame('attentionForward', out, 'out', q, 'q');
  const { B, Tq, Tcap, NH, NKV, HD, group, offset, kvStart } = d;
  const scale = opts.scale ?? 1 / Math.sqrt(HD);
  const scores = new Float64Array(Tcap);
  const acc = new Float64Array(HD);
  for (let b = 0; b < B; b++) {
    const first = kvStart[b];
    for (let h = 0; h < NH; h++) {
      const g = Math.floor(h / group);
      for (let t = 0; t < Tq; t++) {
        const qo = ((b * Tq + t) * NH + h) * HD;
        const last = t + offset; // causal: keys first..last
        if (first > last) {
          // pad query: no visible key
          lse.data[(b * NH + h) * Tq + t] = 0;
          out.data.fill(0, qo, qo + HD);
          continue;
        }
        let max = -Infinity;
        for (let j = first; j <= last; j++) {
          const ko = ((b * Tcap + j) * NKV + g) * HD;
          let s = 0;
          for (let e = 0; e < HD; e++) s += q.data[qo + e] * k.data[ko + e];
          scores[j] = s * scale;
          if (scores[j] > max) max = scores[j];
        }
        let sum = 0;
        for (let j = first; j <= last; j++) sum += Math.exp(scores[j] - max);
        const l = max + Math.log(sum);
        lse.data[(b * NH + h) * Tq + t] = l;
        acc.fill(0);
        for (let j = first; j <= last; j++) {
          const p = Math.exp(scores[j] - l);
          const vo = ((b * Tcap + j) * NKV + g) * HD;
          for (let e = 0; e < HD; e++) acc[e] += p * v.data[vo + e];
        }
        for (let e = 0; e < HD; e++) out.data[qo + e] = acc[e];
      }
    }
  }
}

/**
 * Backward of attentionForward. With P = exp(S - lse), dP = dOut v^T, D = rowsum(dOut * out):
 * dS = P * (dP - D); dq = scale * dS k; dk = scale * dS^T q; dv = P^T dOut, summed over the NH/NKV query
 * heads that share each kv head, over the visible (query, key) pairs only. Pad queries get dq = 0; masked keys
 * (j < kvStart[b]) and key positions past the valid Tk get dk = dv = 0.
 * @param dq   (B,T,NH,HD) overwritten.
 * @param dk   (B,Tcap,NKV,HD) overwritten (all of it).
 * @param dv   (B,Tcap,NKV,HD) overwritten (all of it).
 * @param dOut (B,T,NH,HD) upstream gradient.
 * @param q    (B,T,NH,HD) forward input.
 * @param k    (B,Tcap,NKV,HD) forward input.
 * @param v    (B,Tcap,NKV,HD) forward input.
 * @param out  (B,T,NH,HD) forward output (for D).
 * @param lse  (B,NH,T) saved by the forward.
 */
export function attentionBackward(
  dq: HostTensor,
  dk: HostTensor,
  dv: HostTensor,
  dOut: HostTensor,
  q: HostTensor,
  k: HostTensor,
  v: HostTensor,
  out: HostTensor,
  lse: HostTensor,
  opts: AttentionOptions = {},
): void {
  const kernel = 'attentionBackward';
  const d = attentionDims(kernel, q, k, v, lse, opts);
  checkSame(kernel, dq, 'dq', q, 'q');
  checkSame(kernel, dOut, 'dOut', q, 'q');
  checkSame(kernel, out, 'out', q, 'q');
  checkSame(kernel, dk, 'dk', k, 'k');
  checkSame(kernel, dv, 'dv', v, 'v');
  const { B, Tq, Tcap, NH, NKV, HD, group, offset, kvStart } = d;
  const scale = opts.scale ?? 1 / Math.sqrt(HD);
  const dkAcc = new Float64Array(dk.data.length);
  const dvAcc = new Float64Array(dv.data.length);
  const dqRow = new Float64Array(HD);
  for (let b = 0; b < B; b++) {
    const first = kvStart[b];
    for (let h = 0; h < NH; h++) {
      const g = Math.floor(h / group);
      for (let t = 0; t < Tq; t++) {
        const qo = ((b * Tq + t) * NH + h) * HD;
        const l = lse.data[(b * NH + h) * Tq + t];
        let D = 0;
        for (let e = 0; e < HD; e++) D += dOut.data[qo + e] * out.data[qo + e];
        dqRow.fill(0);
        for (let j = first; j <= t + offset; j++) {
          const ko = ((b * Tcap + j) * NKV + g) * HD;
          let s = 0;
          let dp = 0;
          for (let e = 0; e < HD; e++) {
            s += q.data[qo + e] * k.data[ko + e];
            dp += dOut.data[qo + e] * v.data[ko + e];
          }
          const p = Math.exp(s * scale - l);
          const ds = p * (dp - D) * scale;
          for (let e = 0; e < HD; e++) {
            dqRow[e] += ds * k.data[ko + e];
            dkAcc[ko + e] += ds * q.data[qo + e];
            dvAcc[ko + e] += p * dOut.data[qo + e];
          }
        }
        for (let e = 0; e < HD; e++) dq.data[qo + e] = dqRow[e];
      }
    }
  }
  dk.data.set(dkAcc);
  dv.data.set(dvAcc);
}
