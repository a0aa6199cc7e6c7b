// attention-rows: the same causal grouped-query attention as attention.wgsl (same bindings, same masking, same
// outputs), specialized for head dims that divide by 4 (HD = 4 * HD4, HD4 <= 16) and many rows: a thread per row,
// the row's head vectors held in vec4 registers, every loop over the head dim unrolled. Measured on SwiftShader at
// the nano preset's shapes, 3-7x faster than attention.wgsl's thread-per-row path, whose head-dim loops load one
// float at a time from storage and keep partial sums in dynamically indexed private arrays. Taken where the rows
// fill the device or the adapter is a CPU one; otherwise attention.wgsl's lanes (defaultAttentionPath in
// src/kernels/attention.ts).
//
// A template, expanded by src/kernels/attention.ts (expandUnrolled in src/gpu/unroll.ts) for one HD4:
//   a line ending in `// @unroll` is repeated HD4 times with $c replaced by 0, 1, ..., HD4 - 1;
//   @sum(expr) becomes (expr[$c=0] + expr[$c=1] + ...).
// Entry points and their bindings (after the uniform params at 0), as attention.wgsl's:
//   attention_forward        (out, lse, q, k, v, kvStart)
//   attention_backward_dq    (dq, dOut, q, k, v, stats, kvStart)
//   attention_backward_dkdv  (dk, dv, dOut, q, k, v, stats, kvStart)
// (attention_backward_stats stays in attention.wgsl.) CPU twin: src/reference/attention.ts.

struct Params {
  B: u32,
  T: u32,     // query positions
  Tk: u32,    // valid key positions, >= T; queries are the last T of them
  Tcap: u32,  // key positions allocated per sequence in k, v, dk, dv (their row stride), >= Tk
  NH: u32,    // query heads
  NKV: u32,   // kv heads; NH % NKV == 0
  HD: u32,    // head dim, 4 * HD4
  scale: f32, // score scale
}

const WG: u32 = 64u;
const HD4: u32 = __HD4__u;
const NEG_BIG: f32 = -3.402823e38; // "minus infinity" that stays finite: exp(NEG_BIG - m) is 0

@group(0) @binding(0) var<uniform> p: Params;
// Each entry's bindings follow its twin's argument order, so a slot holds different tensors per entry.
@group(0) @binding(1) var<storage, read_write> o1: array<vec4<f32>>; // forward: out; dq: dq; dkdv: dk
@group(0) @binding(2) var<storage, read_write> o2f: array<f32>;      // forward: lse (B,NH,T)
@group(0) @binding(2) var<storage, read_write> o2: array<vec4<f32>>; // dkdv: dv

fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

// ---------------------------------------------------------------------------------------------------------
// Forward: a thread per query row (b, h, t): an online softmax over keys kvStart[b] .. t + Tk - T, rescaling
// every step without a branch (max, two exps), which SwiftShader runs much faster than a divergent rescale.

@group(0) @binding(3) var<storage, read> fq: array<vec4<f32>>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<vec4<f32>>; // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<vec4<f32>>; // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> fStart: array<u32>;   // kvStart (B)

@compute @workgroup_size(WG)
fn attention_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NH + h) * T + t, the lse index
  if (row >= p.B * p.NH * p.T) { return; }
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let qo = ((b * p.T + t) * p.NH + h) * HD4;
  let kStride = p.NKV * HD4;
  let first = fStart[b];
  let end = t + (p.Tk - p.T) + 1u;
  let q$c = fq[qo + $c] * p.scale; // @unroll
  var a$c = vec4<f32>(0.0); // @unroll
  var m = NEG_BIG;
  var l = 0.0;
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let s = @sum(dot(q$c, fk[ko + $c]));
    let mNew = max(m, s);
    let keep = exp(m - mNew);
    let w = exp(s - mNew);
    m = mNew;
    l = l * keep + w;
    a$c = a$c * keep + w * fv[ko + $c]; // @unroll
    ko += kStride;
  }
  let seen = l > 0.0; // false for a pad query (no visible key)
  o2f[row] = select(0.0, m + log(l), seen);
  let inv = select(0.0, 1.0 / l, seen);
  o1[qo + $c] = a$c * inv; // @unroll
}

// ---------------------------------------------------------------------------------------------------------
// Backward. With P = exp(S - lse), dP = dOut v^T, D = rowsum(dOut * out): dS = P * (dP - D);
// dq = scale * dS k; dk = scale * dS^T q; dv = P^T dOut. (lse, D) per query row come from
// attention.wgsl's attention_backward_stats.

@group(0) @binding(2) var<storage, read> qDOut: array<vec4<f32>>; // dOut (B,T,NH,HD)
@group(0) @binding(3) var<storage, read> qQ: array<vec4<f32>>;    // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> qK: array<vec4<f32>>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> qV: array<vec4<f32>>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> qStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(7) var<storage, read> qStart: array<u32>;      // kvStart (B)

// A thread per query row (b, h, t) over its visible keys; dq = 0 for a pad query, which sees none.
@compute @workgroup_size(WG)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NH + h) * T + t
  if (row >= p.B * p.NH * p.T) { return; }
  let t = row % p.T;
  let bh = row / p.T;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let qo = ((b * p.T + t) * p.NH + h) * HD4;
  let kStride = p.NKV * HD4;
  let st = qStats[row];
  let first = qStart[b];
  let end = t + (p.Tk - p.T) + 1u;
  let q$c = qQ[qo + $c] * p.scale; // @unroll
  let d$c = qDOut[qo + $c]; // @unroll
  var a$c = vec4<f32>(0.0); // @unroll
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let k$c = qK[ko + $c]; // @unroll
    let s = @sum(dot(q$c, k$c));
    let dp = @sum(dot(d$c, qV[ko + $c]));
    let ds = exp(s - st.x) * (dp - st.y);
    a$c += ds * k$c; // @unroll
    ko += kStride;
  }
  o1[qo + $c] = a$c * p.scale; // @unroll
}

@group(0) @binding(3) var<storage, read> kDOut: array<vec4<f32>>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<vec4<f32>>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<vec4<f32>>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<vec4<f32>>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(7) var<storage, read> kStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(8) var<storage, read> kStart: array<u32>;      // kvStart (B)

// A thread per key row (b, g, j) over all Tcap positions, summing over the queries that see key j (t >= j - (Tk -
// T)) and the query heads of kv head g. A masked key (j < kvStart[b]) or one past Tk has none and gets zeros.
// Every query that sees an unmasked key is itself unmasked, so no pair needs the mask.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid); // (b * NKV + g) * Tcap + j
  if (row >= p.B * p.NKV * p.Tcap) { return; }
  let j = row % p.Tcap;
  let bg = row / p.Tcap;
  let g = bg % p.NKV;
  let b = bg / p.NKV;
  let group = p.NH / p.NKV;
  let ko = ((b * p.Tcap + j) * p.NKV + g) * HD4;
  let offset = p.Tk - p.T;
  let visible = j < p.Tk && j >= kStart[b];
  let t0 = select(0u, j - offset, j > offset); // the first query that sees key j
  let tEnd = select(t0, p.T, visible);
  let k$c = kK[ko + $c] * p.scale; // @unroll
  let v$c = kV[ko + $c]; // @unroll
  var ak$c = vec4<f32>(0.0); // @unroll
  var av$c = vec4<f32>(0.0); // @unroll
  for (var t = t0; t < tEnd; t++) {
    for (var h = g * group; h < (g + 1u) * group; h++) {
      let qo = ((b * p.T + t) * p.NH + h) * HD4;
      let q$c = kQ[qo + $c]; // @unroll
      let d$c = kDOut[qo + $c]; // @unroll
      let st = kStats[(b * p.NH + h) * p.T + t];
      let s = @sum(dot(q$c, k$c));
      let dp = @sum(dot(d$c, v$c));
      let pr = exp(s - st.x);
      let ds = pr * (dp - st.y);
      ak$c += ds * q$c; // @unroll
      av$c += pr * d$c; // @unroll
    }
  }
  o1[ko + $c] = ak$c * p.scale; // @unroll
  o2[ko + $c] = av$c; // @unroll
}
