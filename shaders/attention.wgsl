// attention: causal grouped-query softmax attention over rotated q, k, v (no projections, no RoPE), forward and
// backward, flash style: the forward saves the per-row logsumexp and the backward recomputes probabilities.
// Queries are the LAST T of the Tk valid key positions (Tk = T in training, Tk > T when decoding against a KV
// cache): query t sits at absolute position a = Tk - T + t. k, v, dk and dv hold Tcap >= Tk positions per
// sequence (a KV cache's capacity: the row stride); positions Tk.. are ignored. Left padding: row b's keys
// j < kvStart[b] are masked, so query t sees keys kvStart[b] <= j <= a; a query with none (a < kvStart[b], a
// pad query) outputs 0 with lse 0 and passes no gradient. Query head h reads kv head h / (NH / NKV).
// Entry points and their bindings (after the uniform params at 0):
//   attention_forward        (out, lse, q, k, v, kvStart, cursor)   Tk + cursor[0] keys valid (cursor: a rollout's
//                            decode step, src/kernels/decode.ts DecodeCursor; a zero outside decoding)
//   attention_backward_stats (stats, dOut, out, lse)              stats (B,NH,T,2) = (lse, D = rowsum(dOut*out))
//   attention_backward_dq    (dq, dOut, q, k, v, stats, kvStart)
//   attention_backward_dkdv  (dk, dv, dOut, q, k, v, stats, kvStart)
// The backward's stats pass packs lse and D into one buffer so that dk/dv binds 8 storage buffers, WebGPU's
// default maxStorageBuffersPerShaderStage (lse, D, out and kvStart apart would be 10), and D is computed once
// per query row instead of once per (key, query) pair. No float atomics: dq is owned by query rows and dk/dv by
// key rows, each summing over what it needs. CPU twins: src/reference/attention.ts (the stats are internal).
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
// each recomputing the scores (full-HD dots) and producing its own slice of dims. STATS_WG: attention_backward_stats'
// threads, a thread per query row.
const HB: u32 = 64u;
const STATS_WG: u32 = 64u;

struct Params {
  B: u32,
  T: u32,
  Tk: u32,
  Tcap: u32,
  NH: u32,
  NKV: u32,
  HD: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
// Each entry's bindings follow its twin's argument order, so the same slot holds different tensors per entry;
// an entry's auto layout has only the variables it uses.
@group(0) @binding(1) var<storage, read_write> o1: array<f32>; // forward: out (B,T,NH,HD); dq: dq; dkdv: dk (B,Tcap,NKV,HD)
@group(0) @binding(2) var<storage, read_write> o2: array<f32>; // forward: lse (B,NH,T); dkdv: dv (B,Tcap,NKV,HD)

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
// A lane that sees no key keeps m = NEG_BIG, l = 0 and weighs 0 in the merge; a row whose lanes all see none
// (a pad query) has L = 0 and writes zeros.

@group(0) @binding(3) var<storage, read> fq: array<f32>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<f32>; // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<f32>; // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> fStart: array<u32>; // kvStart (B)
@group(0) @binding(7) var<storage, read> fCursor: array<u32>; // (1): keys valid = Tk + fCursor[0] (a decode step)

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
  var first = 0u;
  if (live) { first = fStart[b]; }
  let end = select(0u, t + (p.Tk + fCursor[0] - p.T) + 1u, live); // keys first .. t + Tk - T
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tcap * p.NKV + g) * HD;

  var acc: array<f32, HB>;
  var m = NEG_BIG;
  var l = 0.0;
  for (var j = first + lane; j < end; j += LANES) {
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
      let seen = l > 0.0; // false for a pad query
      if (wid.z == 0u) { o2[row] = select(0.0, m + log(l), seen); }
      let inv = select(0.0, 1.0 / l, seen);
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
  let seen = L > 0.0; // false for a pad query
  if (live && wid.z == 0u && lane == 0u) { o2[row] = select(0.0, M + log(L), seen); }
  let w = select(0.0, exp(m - M) / L, live && seen); // this lane's share; 0 for a lane that saw no key

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

// attention_backward_stats: bindings (stats, dOut, out, lse). A thread per query row (b, h, t) (row = lse index)
// packs (lse, D): D is 0 for a pad query, whose out is 0.
@group(0) @binding(1) var<storage, read_write> sStats: array<vec2<f32>>; // (B,NH,T) pairs
@group(0) @binding(2) var<storage, read> sDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(3) var<storage, read> sOut: array<f32>;  // out (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> sLse: array<f32>;  // lse (B,NH,T)

@compute @workgroup_size(STATS_WG)
fn attention_backward_stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) lid: u32) {
  let row = (wid.x + wid.y * nwg.x) * STATS_WG + lid;
  if (row >= p.B * p.NH * p.T) { return; }
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let qo = ((b * p.T + t) * p.NH + h) * p.HD;
  var D = 0.0;
  for (var e = 0u; e < p.HD; e++) { D += sDOut[qo + e] * sOut[qo + e]; }
  sStats[row] = vec2<f32>(sLse[row], D);
}

// attention_backward_dq: bindings (dq, dOut, q, k, v, stats, kvStart).
@group(0) @binding(2) var<storage, read> qDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(3) var<storage, read> qQ: array<f32>;    // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> qK: array<f32>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> qV: array<f32>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> qStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(7) var<storage, read> qStart: array<u32>; // kvStart (B)

// A row is a query row (b, h, t) (and a dim block); lane i takes its visible keys first + i, first + i + LANES,
// ... and keeps a partial dq (0 for a pad query, which sees none).
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
  let kStride = p.NKV * HD;
  let kBase = (b * p.Tcap * p.NKV + g) * HD;

  var acc: array<f32, HB>;
  if (live) {
    let st = qStats[row];
    let lse = st.x;
    let D = st.y;
    let end = t + (p.Tk - p.T) + 1u; // keys qStart[b] .. t + Tk - T
    for (var j = qStart[b] + lane; j < end; j += LANES) {
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

// attention_backward_dkdv: bindings (dk, dv, dOut, q, k, v, stats, kvStart): 8 storage buffers.
@group(0) @binding(3) var<storage, read> kDOut: array<f32>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<f32>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<f32>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<f32>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(7) var<storage, read> kStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(8) var<storage, read> kStart: array<u32>; // kvStart (B)

// A row is a key row (b, g, j) over all Tcap positions (and a dim block); lane i takes the (query t, head of
// group g) pairs i, i + LANES, ... among the queries that see key j (t + Tk - T >= j) and keeps partial dk and
// dv. A masked key (j < kvStart[b]) or one past the valid Tk has no pairs and gets zeros. Every query that sees
// an unmasked key j is itself unmasked (its position is >= j >= kvStart[b]), so no pair needs the mask.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NKV + g) * Tcap + j
  let live = row < p.B * p.NKV * p.Tcap;
  let lane = lid % LANES;
  let j = row % p.Tcap;
  let bg = row / p.Tcap;
  let g = bg % p.NKV;
  let b = bg / p.NKV;
  let HD = p.HD;
  let d0 = wid.z * HB;
  let nd = min(HB, HD - d0);
  let group = p.NH / p.NKV;
  let ko = ((b * p.Tcap + j) * p.NKV + g) * HD;
  var visible = false;
  if (live) { visible = j < p.Tk && j >= kStart[b]; }
  let offset = p.Tk - p.T;
  let t0 = select(0u, j - offset, j > offset); // first query that sees key j
  let pairs = select(0u, (p.T - t0) * group, visible);

  var accK: array<f32, HB>;
  var accV: array<f32, HB>;
  for (var i = lane; i < pairs; i += LANES) {
    let t = t0 + i / group;
    let h = g * group + i % group; // heads fastest: neighbouring lanes read neighbouring q rows
    let qo = ((b * p.T + t) * p.NH + h) * HD;
    var s = 0.0;
    var dp = 0.0;
    for (var e = 0u; e < HD; e++) {
      s += kQ[qo + e] * kK[ko + e];
      dp += kDOut[qo + e] * kV[ko + e];
    }
    let st = kStats[(b * p.NH + h) * p.T + t];
    let pr = exp(s * p.scale - st.x);
    let ds = pr * (dp - st.y) * p.scale;
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
