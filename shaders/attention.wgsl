// attention: causal grouped-query softmax attention over rotated q, k, v (no projections, no RoPE), forward and
// backward, flash style: the forward saves the per-row logsumexp and the backward recomputes probabilities.
// Queries are the LAST T of the Tk key positions (Tk = T in training, Tk > T when decoding against a KV cache);
// query head h reads kv head h / (NH / NKV).
// Entry points: attention_forward (out, lse, q, k, v); attention_backward_dq (dq, dOut, q, k, v, out, lse);
// attention_backward_dkdv (dk, dv, dOut, q, k, v, out, lse). No float atomics: dq is owned by query rows and
// dk/dv by key rows, each summing over what it needs. CPU twins: src/reference/attention.ts.
//
// A workgroup takes ROWS rows (workgroup x, y: the block of rows; z: a block of HB head dims) and gives each
// row LANES threads that split the row's loop: keys for forward and dq, (query, head) pairs for dk/dv. A lane
// keeps its partial vector in a private array; the lanes of a row are summed through a small workgroup array,
// PART floats a round. LANES = 1 (a thread per row, no barriers) suits training's many rows; many lanes suit
// a decode step's few long rows. Workgroup memory is kept small on purpose: SwiftShader's pipeline compile time
// grows quadratically with workgroup (and private) array size under Dawn's zero-initialization (4096 floats:
// ~5 s; 256: ~0.15 s).

override LANES: u32 = 4u;  // threads per row
override ROWS: u32 = 16u;  // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override PART: u32 = 256u; // floats of the merge buffer, >= WG; a round merges PART / WG dims of every row

// Head dims per workgroup: private arrays need a constant size. HD > HB runs ceil(HD / HB) workgroups per row,
// each recomputing the scores (full-HD dots) and producing its own slice of dims.
const HB: u32 = 64u;

struct Params {
  B: u32,
  T: u32,     // query positions
  Tk: u32,    // key positions, >= T
  NH: u32,    // query heads
  NKV: u32,   // kv heads; NH % NKV == 0
  HD: u32,    // head dim
  scale: f32, // score scale, 1/sqrt(HD) by default
}

@group(0) @binding(0) var<uniform> p: Params;
// Each entry's bindings follow its twin's argument order, so the same slot holds different tensors per entry;
// an entry's auto layout has only the variables it uses.
@group(0) @binding(1) var<storage, read_write> o1: array<f32>; // forward: out (B,T,NH,HD); dq: dq; dkdv: dk (B,Tk,NKV,HD)
@group(0) @binding(2) var<storage, read_write> o2: array<f32>; // forward: lse (B,NH,T); dkdv: dv (B,Tk,NKV,HD)

const NEG_BIG: f32 = -3.402823e38; // "minus infinity" that stays finite: exp(NEG_BIG - m) is 0

var<workgroup> redM: array<f32, WG>; // forward: each lane's running max
var<workgroup> redL: array<f32, WG>; // forward: each lane's running sum of exp(s - m)
var<workgroup> part: array<f32, PART>; // merge round: dim c of lane i of row r at (r * PART / WG + c) * LANES + i

// This thread's row (may be past the last row: such threads only join the barriers).
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
}

// Merge round, first half: this lane's dims c0 .. c0 + PART/WG of acc, times w, into part.
fn stage(acc: ptr<function, array<f32, HB>>, w: f32, c0: u32, lid: u32) {
  let ch = PART / WG;
  let r = lid / LANES;
  let lane = lid % LANES;
  for (var c = 0u; c < ch; c++) {
    var a = 0.0;
    if (c0 + c < HB) { a = (*acc)[c0 + c]; }
    part[(r * ch + c) * LANES + lane] = a * w;
  }
}

// Merge round, second half: the sum over the lanes of row slot r of staged dim c.
fn gather(r: u32, c: u32) -> f32 {
  let base = (r * (PART / WG) + c) * LANES;
  var s = 0.0;
  for (var i = 0u; i < LANES; i++) { s += part[base + i]; }
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// Forward: a row is (b, h, t) (and a dim block); lane i takes keys i, i + LANES, ... with an online softmax of
// its own (running max m, running sum l, running weighted sum of v rows); the row's lanes are then merged.

@group(0) @binding(3) var<storage, read> fq: array<f32>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<f32>; // k (B,Tk,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<f32>; // v (B,Tk,NKV,HD)

@compute @workgroup_size(WG)
fn attention_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NH + h) * T + t, the lse index
  let live = row < p.B * p.NH * p.T;
  let lane = lid % LANES;
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let HD = p.HD;
  let d0 = wid.z * HB; // this workgroup's dims d0 .. d0 + nd
  let nd = min(HB, HD - d0);
  let qo = ((b * p.T + t) * p.NH + h) * HD;
  let keys = select(0u, t + (p.Tk - p.T) + 1u, live); // causal: keys 0 .. t + Tk - T
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tk * p.NKV + g) * HD;

  var acc: array<f32, HB>;
  var m = NEG_BIG;
  var l = 0.0;
  for (var j = lane; j < keys; j += LANES) {
    let ko = kBase + j * kStride;
    var s = 0.0;
    for (var e = 0u; e < HD; e++) { s += fq[qo + e] * fk[ko + e]; }
    s *= p.scale;
    if (s > m) { // new running max: rescale what this lane has so far
      let c = exp(m - s);
      l *= c;
      for (var e = 0u; e < nd; e++) { acc[e] *= c; }
      m = s;
    }
    let w = exp(s - m);
    l += w;
    for (var e = 0u; e < nd; e++) { acc[e] += w * fv[ko + d0 + e]; }
  }

  if (LANES == 1u) { // a thread per row: nothing to merge
    if (live) {
      if (wid.z == 0u) { o2[row] = m + log(l); }
      let inv = 1.0 / l;
      for (var e = 0u; e < nd; e++) { o1[qo + d0 + e] = acc[e] * inv; }
    }
    return;
  }

  redM[lid] = m;
  redL[lid] = l;
  workgroupBarrier();
  // Every lane reads its row's LANES (m, l) itself: cheaper on SwiftShader than a reduction tree of barriers.
  let r0 = lid - lane;
  var M = NEG_BIG;
  for (var i = 0u; i < LANES; i++) { M = max(M, redM[r0 + i]); }
  var L = 0.0;
  for (var i = 0u; i < LANES; i++) { L += redL[r0 + i] * exp(redM[r0 + i] - M); }
  if (live && wid.z == 0u && lane == 0u) { o2[row] = M + log(L); }
  let w = select(0.0, exp(m - M) / L, live); // this lane's share; 0 for a lane that saw no key

  let ch = PART / WG;
  for (var c0 = 0u; c0 < nd; c0 += ch) {
    stage(&acc, w, c0, lid);
    workgroupBarrier();
    if (live) {
      for (var c = lane; c < ch && c0 + c < nd; c += LANES) { o1[qo + d0 + c0 + c] = gather(lid / LANES, c); }
    }
    workgroupBarrier();
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

// A row is a query row (b, h, t) (and a dim block); lane i takes keys i, i + LANES, ... and keeps a partial dq.
@compute @workgroup_size(WG)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NH + h) * T + t
  let live = row < p.B * p.NH * p.T;
  let lane = lid % LANES;
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let HD = p.HD;
  let d0 = wid.z * HB;
  let nd = min(HB, HD - d0);
  let qo = ((b * p.T + t) * p.NH + h) * HD;
  let keys = select(0u, t + (p.Tk - p.T) + 1u, live);
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tk * p.NKV + g) * HD;

  var acc: array<f32, HB>;
  if (live) {
    let lse = qLse[row];
    var D = 0.0;
    for (var e = 0u; e < HD; e++) { D += qDOut[qo + e] * qOut[qo + e]; }
    for (var j = lane; j < keys; j += LANES) {
      let ko = kBase + j * kStride;
      var s = 0.0;
      var dp = 0.0;
      for (var e = 0u; e < HD; e++) {
        s += qQ[qo + e] * qK[ko + e];
        dp += qDOut[qo + e] * qV[ko + e];
      }
      let ds = exp(s * p.scale - lse) * (dp - D) * p.scale;
      for (var e = 0u; e < nd; e++) { acc[e] += ds * qK[ko + d0 + e]; }
    }
  }

  if (LANES == 1u) {
    if (live) {
      for (var e = 0u; e < nd; e++) { o1[qo + d0 + e] = acc[e]; }
    }
    return;
  }
  let ch = PART / WG;
  for (var c0 = 0u; c0 < nd; c0 += ch) {
    stage(&acc, 1.0, c0, lid);
    workgroupBarrier();
    if (live) {
      for (var c = lane; c < ch && c0 + c < nd; c += LANES) { o1[qo + d0 + c0 + c] = gather(lid / LANES, c); }
    }
    workgroupBarrier();
  }
}

// attention_backward_dkdv: bindings (dk, dv, dOut, q, k, v, out, lse).
@group(0) @binding(3) var<storage, read> kDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<f32>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<f32>;    // k (B,Tk,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<f32>;    // v (B,Tk,NKV,HD)
@group(0) @binding(7) var<storage, read> kOut: array<f32>;  // out (B,T,NH,HD)
@group(0) @binding(8) var<storage, read> kLse: array<f32>;  // lse (B,NH,T)

// A row is a key row (b, g, j) (and a dim block); lane i takes the (query t, head of group g) pairs
// i, i + LANES, ... among the queries that see key j (t + Tk - T >= j) and keeps partial dk and dv. D is
// recomputed per pair (one extra HD dot) rather than stored: the twin's signature has no scratch tensor.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NKV + g) * Tk + j
  let live = row < p.B * p.NKV * p.Tk;
  let lane = lid % LANES;
  let j = row % p.Tk;
  let bg = row / p.Tk;
  let g = bg % p.NKV;
  let b = bg / p.NKV;
  let HD = p.HD;
  let d0 = wid.z * HB;
  let nd = min(HB, HD - d0);
  let group = p.NH / p.NKV;
  let ko = ((b * p.Tk + j) * p.NKV + g) * HD;
  let offset = p.Tk - p.T;
  let t0 = select(0u, j - offset, j > offset); // first query that sees key j
  let pairs = select(0u, (p.T - t0) * group, live);

  var accK: array<f32, HB>;
  var accV: array<f32, HB>;
  for (var i = lane; i < pairs; i += LANES) {
    let t = t0 + i / group;
    let h = g * group + i % group; // heads fastest: neighbouring lanes read neighbouring q rows
    let qo = ((b * p.T + t) * p.NH + h) * HD;
    var s = 0.0;
    var dp = 0.0;
    var D = 0.0;
    for (var e = 0u; e < HD; e++) {
      let dout = kDOut[qo + e];
      s += kQ[qo + e] * kK[ko + e];
      dp += dout * kV[ko + e];
      D += dout * kOut[qo + e];
    }
    let pr = exp(s * p.scale - kLse[(b * p.NH + h) * p.T + t]);
    let ds = pr * (dp - D) * p.scale;
    for (var e = 0u; e < nd; e++) {
      accK[e] += ds * kQ[qo + d0 + e];
      accV[e] += pr * kDOut[qo + d0 + e];
    }
  }

  if (LANES == 1u) {
    if (live) {
      for (var e = 0u; e < nd; e++) {
        o1[ko + d0 + e] = accK[e];
        o2[ko + d0 + e] = accV[e];
      }
    }
    return;
  }
  let ch = PART / WG;
  for (var c0 = 0u; c0 < nd; c0 += ch) {
    stage(&accK, 1.0, c0, lid);
    workgroupBarrier();
    if (live) {
      for (var c = lane; c < ch && c0 + c < nd; c += LANES) { o1[ko + d0 + c0 + c] = gather(lid / LANES, c); }
    }
    workgroupBarrier();
    stage(&accV, 1.0, c0, lid);
    workgroupBarrier();
    if (live) {
      for (var c = lane; c < ch && c0 + c < nd; c += LANES) { o2[ko + d0 + c0 + c] = gather(lid / LANES, c); }
    }
    workgroupBarrier();
  }
}
