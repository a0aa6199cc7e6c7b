// attention: causal grouped-query softmax attention over rotated q, k, v (no projections, no RoPE), forward and
// backward, flash style: the forward saves the per-row logsumexp and the backward recomputes probabilities.
// Queries are the LAST T of the Tk key positions (Tk = T in training, Tk > T when decoding against a KV cache);
// query head h reads kv head h / (NH / NKV).
// Entry points: attention_forward (out, lse, q, k, v); attention_backward_dq (dq, dOut, q, k, v, out, lse);
// attention_backward_dkdv (dk, dv, dOut, q, k, v, out, lse). No float atomics: dq is owned by query rows and
// dk/dv by key rows, each summing over what it needs. CPU twins: src/reference/attention.ts.
//
// Every entry gives one workgroup to one row and spreads that row's loop (over keys, or over (query, head)
// pairs for dk/dv) across WG threads; each thread keeps its own partial sums in workgroup memory and one
// barrier later every thread merges all WG partials (no reduction trees: barriers are slow on SwiftShader).

override WG: u32 = 32u;     // threads per workgroup (any count; the wrapper keeps WG * HD_MAX within budget)
override HD_MAX: u32 = 64u; // sizes the workgroup arrays; the wrapper passes HD rounded up

struct Params {
  B: u32,
  T: u32,     // query positions
  Tk: u32,    // key positions, >= T
  NH: u32,    // query heads
  NKV: u32,   // kv heads; NH % NKV == 0
  HD: u32,    // head dim, <= HD_MAX
  scale: f32, // score scale, 1/sqrt(HD) by default
}

@group(0) @binding(0) var<uniform> p: Params;
// Bindings follow each entry's twin argument order; entries only use their own, so auto layouts differ.
@group(0) @binding(1) var<storage, read_write> o1: array<f32>; // forward: out (B,T,NH,HD); dq: dq; dkdv: dk (B,Tk,NKV,HD)
@group(0) @binding(2) var<storage, read_write> o2: array<f32>; // forward: lse (B,NH,T); dkdv: dv (B,Tk,NKV,HD)

const NEG_BIG: f32 = -3.402823e38; // "minus infinity" that stays finite: exp(NEG_BIG - m) is 0

var<workgroup> rowA: array<f32, HD_MAX>; // forward, dq: q row; dkdv: k row
var<workgroup> rowB: array<f32, HD_MAX>; // dq: dOut row; dkdv: v row
var<workgroup> accA: array<f32, WG * HD_MAX>; // per-thread partial vectors, element e of thread i at e * WG + i
var<workgroup> accB: array<f32, WG * HD_MAX>; // dkdv only (dv partials)
var<workgroup> redM: array<f32, WG>; // per-thread running max (forward) or unused
var<workgroup> redL: array<f32, WG>; // per-thread running sum of exp(s - m)

fn linear_row(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + wid.y * nwg.x;
}

// ---------------------------------------------------------------------------------------------------------
// Forward: one workgroup per (b, h, t); thread i takes keys i, i + WG, ... with an online softmax of its own
// (running max m, running sum l, running weighted sum of v rows), then the WG partials are merged.

@group(0) @binding(3) var<storage, read> fq: array<f32>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<f32>; // k (B,Tk,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<f32>; // v (B,Tk,NKV,HD)

@compute @workgroup_size(WG)
fn attention_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let row = linear_row(wid, nwg); // (b * NH + h) * T + t, the lse index
  if (row >= p.B * p.NH * p.T) { return; }
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let HD = p.HD;
  let qo = ((b * p.T + t) * p.NH + h) * HD;
  let last = t + (p.Tk - p.T); // causal: keys 0..last
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tk * p.NKV + g) * HD;

  for (var e = lid; e < HD; e += WG) { rowA[e] = fq[qo + e] * p.scale; }
  for (var e = 0u; e < HD; e++) { accA[e * WG + lid] = 0.0; }
  workgroupBarrier();

  var m = NEG_BIG;
  var l = 0.0;
  for (var j = lid; j <= last; j += WG) {
    let ko = kBase + j * kStride;
    var s = 0.0;
    for (var e = 0u; e < HD; e++) { s += rowA[e] * fk[ko + e]; }
    if (s > m) { // new running max: rescale what this thread has so far
      let c = exp(m - s);
      l *= c;
      for (var e = 0u; e < HD; e++) { accA[e * WG + lid] *= c; }
      m = s;
    }
    let w = exp(s - m);
    l += w;
    for (var e = 0u; e < HD; e++) { accA[e * WG + lid] += w * fv[ko + e]; }
  }
  redM[lid] = m;
  redL[lid] = l;
  workgroupBarrier();

  // Every thread merges the WG partials itself (WG reads from workgroup memory beat log2(WG) barriers here).
  var M = NEG_BIG;
  for (var i = 0u; i < WG; i++) { M = max(M, redM[i]); }
  var L = 0.0;
  for (var i = 0u; i < WG; i++) { L += redL[i] * exp(redM[i] - M); }
  if (lid == 0u) { o2[row] = M + log(L); }
  let invL = 1.0 / L;
  for (var e = lid; e < HD; e += WG) {
    var a = 0.0;
    for (var i = 0u; i < WG; i++) { a += accA[e * WG + i] * exp(redM[i] - M); }
    o1[qo + e] = a * invL;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Backward. With P = exp(S - lse), dP = dOut v^T, D = rowsum(dOut * out): dS = P * (dP - D);
// dq = scale * dS k; dk = scale * dS^T q; dv = P^T dOut.

// attention_backward_dq: bindings (dq, dOut, q, k, v, out, lse).
@group(0) @binding(2) var<storage, read> qDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(3) var<storage, read> qQ: array<f32>;    // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> qK: array<f32>;    // k (B,Tk,NKV,HD)
@group(0) @binding(5) var<storage, read> qV: array<f32>;    // v (B,Tk,NKV,HD)
@group(0) @binding(6) var<storage, read> qOut: array<f32>;  // out (B,T,NH,HD)
@group(0) @binding(7) var<storage, read> qLse: array<f32>;  // lse (B,NH,T)

// One workgroup per query row (b, h, t); thread i takes keys i, i + WG, ... and keeps a partial dq row.
@compute @workgroup_size(WG)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let row = linear_row(wid, nwg); // (b * NH + h) * T + t
  if (row >= p.B * p.NH * p.T) { return; }
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let HD = p.HD;
  let qo = ((b * p.T + t) * p.NH + h) * HD;
  let last = t + (p.Tk - p.T);
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tk * p.NKV + g) * HD;
  let lse = qLse[row];

  for (var e = lid; e < HD; e += WG) {
    rowA[e] = qQ[qo + e];
    rowB[e] = qDOut[qo + e];
  }
  for (var e = 0u; e < HD; e++) { accA[e * WG + lid] = 0.0; }
  workgroupBarrier();

  var D = 0.0;
  for (var e = 0u; e < HD; e++) { D += rowB[e] * qOut[qo + e]; }
  for (var j = lid; j <= last; j += WG) {
    let ko = kBase + j * kStride;
    var s = 0.0;
    var dp = 0.0;
    for (var e = 0u; e < HD; e++) {
      s += rowA[e] * qK[ko + e];
      dp += rowB[e] * qV[ko + e];
    }
    let ds = exp(s * p.scale - lse) * (dp - D) * p.scale;
    for (var e = 0u; e < HD; e++) { accA[e * WG + lid] += ds * qK[ko + e]; }
  }
  workgroupBarrier();

  for (var e = lid; e < HD; e += WG) {
    var a = 0.0;
    for (var i = 0u; i < WG; i++) { a += accA[e * WG + i]; }
    o1[qo + e] = a;
  }
}

// attention_backward_dkdv: bindings (dk, dv, dOut, q, k, v, out, lse).
@group(0) @binding(3) var<storage, read> kDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<f32>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<f32>;    // k (B,Tk,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<f32>;    // v (B,Tk,NKV,HD)
@group(0) @binding(7) var<storage, read> kOut: array<f32>;  // out (B,T,NH,HD)
@group(0) @binding(8) var<storage, read> kLse: array<f32>;  // lse (B,NH,T)

// One workgroup per key row (b, g, j); thread i takes the (query t, head of group g) pairs i, i + WG, ...
// among the queries that see key j (t + Tk - T >= j) and keeps partial dk and dv rows. D is recomputed per
// pair (one extra HD dot) rather than stored, since the twin's signature has no scratch tensor.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let row = linear_row(wid, nwg); // (b * NKV + g) * Tk + j
  if (row >= p.B * p.NKV * p.Tk) { return; }
  let j = row % p.Tk;
  let bg = row / p.Tk;
  let g = bg % p.NKV;
  let b = bg / p.NKV;
  let HD = p.HD;
  let group = p.NH / p.NKV;
  let ko = ((b * p.Tk + j) * p.NKV + g) * HD;
  let offset = p.Tk - p.T;
  let t0 = select(0u, j - offset, j > offset); // first query that sees key j
  let pairs = (p.T - t0) * group;

  for (var e = lid; e < HD; e += WG) {
    rowA[e] = kK[ko + e];
    rowB[e] = kV[ko + e];
  }
  for (var e = 0u; e < HD; e++) {
    accA[e * WG + lid] = 0.0;
    accB[e * WG + lid] = 0.0;
  }
  workgroupBarrier();

  for (var i = lid; i < pairs; i += WG) {
    let t = t0 + i / group;
    let h = g * group + i % group; // heads fastest: neighbouring threads read neighbouring q rows
    let qo = ((b * p.T + t) * p.NH + h) * HD;
    var s = 0.0;
    var dp = 0.0;
    var D = 0.0;
    for (var e = 0u; e < HD; e++) {
      let dout = kDOut[qo + e];
      s += kQ[qo + e] * rowA[e];
      dp += dout * rowB[e];
      D += dout * kOut[qo + e];
    }
    let pr = exp(s * p.scale - kLse[(b * p.NH + h) * p.T + t]);
    let ds = pr * (dp - D) * p.scale;
    for (var e = 0u; e < HD; e++) {
      accA[e * WG + lid] += ds * kQ[qo + e];
      accB[e * WG + lid] += pr * kDOut[qo + e];
    }
  }
  workgroupBarrier();

  for (var e = lid; e < HD; e += WG) {
    var a = 0.0;
    var c = 0.0;
    for (var i = 0u; i < WG; i++) {
      a += accA[e * WG + i];
      c += accB[e * WG + i];
    }
    o1[ko + e] = a;
    o2[ko + e] = c;
  }
}
