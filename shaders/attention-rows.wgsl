// attention-rows: the same causal grouped-query attention as attention.wgsl (same bindings, same masking, same
// outputs), specialized for head dims that divide by 4 (HD = 4 * HD4, HD4 <= 16) and many rows: a thread per RQ
// consecutive rows (query rows for the forward and dq, key rows for dk/dv), the rows' head vectors held in vec4
// registers, every loop over the head dim unrolled. Each key (forward, dq) or query (dk/dv) a thread loads serves
// its RQ rows: on SwiftShader a storage load costs about ten vec4 multiply-adds, so RQ = 4 roughly halves these
// kernels' time at the nano and micro presets' shapes against a thread per row (BENCHMARKS.md). RQ is 4 up to
// HD 16, then 2 and 1 (rowsPerThread in src/kernels/attention.ts keeps RQ * HD4 <= 16, and <= 6 on lavapipe:
// compile time grows steeply with the registers written out). Above that bound for one row (head dim 64; 24 on
// lavapipe) the rows path takes attention-rows-looped.wgsl, the same kernels with the head dim walked by loops.
// A pair of a thread's rows that the causal mask hides is computed and discarded by select(), without a branch. Taken where the rows
// fill the device or the adapter is a CPU one; otherwise attention.wgsl's lanes (defaultAttentionPath in
// src/kernels/attention.ts).
//
// Specialized by src/kernels/attention.ts (src/gpu/specialize.ts) for one HD4 and one RQ; as written, the kernel
// for HD4 = 1 and RQ = 1 (region as-written):
//   a line ending in `// @qrows` is repeated RQ times with _t replaced by 0, 1, ..., RQ - 1 (a thread's rows);
//   a line ending in `// @unroll` is repeated HD4 times with _c replaced by 0, 1, ..., HD4 - 1;
//   a line ending in `// @qrows @unroll` is repeated for every (row, c); sum_c(expr) sums expr over _c.
// Rows of a thread past the last row are clamped to it on load and not stored.
// Entry points and their bindings (after the uniform params at 0), as attention.wgsl's:
//   attention_forward        (out, lse, q, k, v, kvStart, cursor)   Tk + cursor[0] keys valid (cursor: a rollout's
//                            decode step, src/kernels/decode.ts DecodeCursor; a zero outside decoding)
//   attention_backward_dq    (dq, dOut, q, k, v, stats, kvStart)
//   attention_backward_dkdv  (dk, dv, dOut, q, k, v, stats, kvStart)
// (attention_backward_stats stays in attention.wgsl.) CPU twin: src/reference/attention.ts.

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
const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
// @region attention-rows-head
// Stand-ins for what this file uses of block attention-rows-head; kernels compile the block here.
const HD4: u32 = 1u; const RQ: u32 = 1u; const NEG_BIG: f32 = -3.402823e38;
@group(0) @binding(1) var<storage, read_write> o1: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> o2f: array<f32>;
@group(0) @binding(2) var<storage, read_write> o2: array<vec4<f32>>;
fn thread_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
// @end attention-rows-head
// @region as-written
// As written: copy 0 of every repeated line (one row a thread, head dim 4), a sum over the head dim its one term.
const _t: u32 = 0u;
const _c: u32 = 0u;
fn sum_c(x: f32) -> f32 { return x; }
// @end as-written

// ---------------------------------------------------------------------------------------------------------
// Forward: a thread per RQ consecutive query rows of one (b, h): an online softmax over keys kvStart[b] .. (its
// last row's) t + Tk - T, rescaling every step without a branch (max, two exps), which SwiftShader runs much
// faster than a divergent rescale. A row skips (by select) the keys after its own last one.

@group(0) @binding(3) var<storage, read> fq: array<vec4<f32>>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<vec4<f32>>; // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<vec4<f32>>; // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> fStart: array<u32>;   // kvStart (B)
@group(0) @binding(7) var<storage, read> fCursor: array<u32>; // (1): keys valid = Tk + fCursor[0] (a decode step)

@compute @workgroup_size(WG)
fn attention_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.T + RQ - 1u) / RQ;
  let tid = thread_of(wid, nwg, lid);
  if (tid >= p.B * p.NH * blocks) { return; }
  let bh = tid / blocks; // b * NH + h
  let tFirst = (tid % blocks) * RQ;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let kStride = p.NKV * HD4;
  let first = fStart[b];
  let offset = p.Tk + fCursor[0] - p.T;
  let end = min(tFirst + RQ - 1u, p.T - 1u) + offset + 1u;
  let t_t = min(tFirst + _t, p.T - 1u); // @qrows
  let last_t = t_t + offset; // @qrows
  let qo_t = ((b * p.T + t_t) * p.NH + h) * HD4; // @qrows
  let q_t__c = fq[qo_t + _c] * p.scale; // @qrows @unroll
  var a_t__c = vec4<f32>(0.0); // @qrows @unroll
  var m_t = NEG_BIG; // @qrows
  var l_t = 0.0; // @qrows
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let k_c = fk[ko + _c]; // @unroll
    let v_c = fv[ko + _c]; // @unroll
    let s_t = sum_c(dot(q_t__c, k_c)); // @qrows
    let see_t = j <= last_t; // @qrows
    let mNew_t = select(m_t, max(m_t, s_t), see_t); // @qrows
    let keep_t = exp(m_t - mNew_t); // @qrows
    let w_t = select(0.0, exp(s_t - mNew_t), see_t); // @qrows
    m_t = mNew_t; // @qrows
    l_t = l_t * keep_t + w_t; // @qrows
    a_t__c = a_t__c * keep_t + w_t * v_c; // @qrows @unroll
    ko += kStride;
  }
  // seen: false for a pad query (no visible key)
  let seen_t = l_t > 0.0; // @qrows
  let inv_t = select(0.0, 1.0 / l_t, seen_t); // @qrows
  if (tFirst + _t < p.T) { o2f[bh * p.T + t_t] = select(0.0, m_t + log(l_t), seen_t); } // @qrows
  if (tFirst + _t < p.T) { o1[qo_t + _c] = a_t__c * inv_t; } // @qrows @unroll
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

// A thread per RQ consecutive query rows of one (b, h), over the keys its last row sees; each row keeps the keys
// it sees. dq = 0 for a pad query, which sees none.
@compute @workgroup_size(WG)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.T + RQ - 1u) / RQ;
  let tid = thread_of(wid, nwg, lid);
  if (tid >= p.B * p.NH * blocks) { return; }
  let bh = tid / blocks; // b * NH + h
  let tFirst = (tid % blocks) * RQ;
  let h = bh % p.NH;
  let b = bh / p.NH;
  let g = h / (p.NH / p.NKV);
  let kStride = p.NKV * HD4;
  let first = qStart[b];
  let offset = p.Tk - p.T;
  let end = min(tFirst + RQ - 1u, p.T - 1u) + offset + 1u;
  let t_t = min(tFirst + _t, p.T - 1u); // @qrows
  let last_t = t_t + offset; // @qrows
  let qo_t = ((b * p.T + t_t) * p.NH + h) * HD4; // @qrows
  let st_t = qStats[bh * p.T + t_t]; // @qrows
  let q_t__c = qQ[qo_t + _c] * p.scale; // @qrows @unroll
  let d_t__c = qDOut[qo_t + _c]; // @qrows @unroll
  var a_t__c = vec4<f32>(0.0); // @qrows @unroll
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let k_c = qK[ko + _c]; // @unroll
    let v_c = qV[ko + _c]; // @unroll
    let s_t = sum_c(dot(q_t__c, k_c)); // @qrows
    let dp_t = sum_c(dot(d_t__c, v_c)); // @qrows
    let ds_t = select(0.0, exp(s_t - st_t.x) * (dp_t - st_t.y), j <= last_t); // @qrows
    a_t__c += ds_t * k_c; // @qrows @unroll
    ko += kStride;
  }
  if (tFirst + _t < p.T) { o1[qo_t + _c] = a_t__c * p.scale; } // @qrows @unroll
}

@group(0) @binding(3) var<storage, read> kDOut: array<vec4<f32>>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<vec4<f32>>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<vec4<f32>>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<vec4<f32>>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(7) var<storage, read> kStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(8) var<storage, read> kStart: array<u32>;      // kvStart (B)

// A thread per RQ consecutive key rows j of one (b, g), over all Tcap positions, summing over the queries that see
// its first key (t >= j - (Tk - T)) and the query heads of kv head g; each key keeps the queries that see it. A
// masked key (j < kvStart[b]) or one past Tk has none and gets zeros. Every query that sees an unmasked key is
// itself unmasked, so no pair needs the query's mask.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.Tcap + RQ - 1u) / RQ;
  let tid = thread_of(wid, nwg, lid);
  if (tid >= p.B * p.NKV * blocks) { return; }
  let bg = tid / blocks; // b * NKV + g
  let jFirst = (tid % blocks) * RQ;
  let g = bg % p.NKV;
  let b = bg / p.NKV;
  let group = p.NH / p.NKV;
  let offset = p.Tk - p.T;
  let start = kStart[b];
  let j_t = min(jFirst + _t, p.Tcap - 1u); // @qrows
  let ko_t = ((b * p.Tcap + j_t) * p.NKV + g) * HD4; // @qrows
  let visible_t = j_t < p.Tk && j_t >= start; // @qrows
  var anyVisible = false;
  anyVisible = anyVisible || visible_t; // @qrows
  let t0 = select(0u, jFirst - offset, jFirst > offset); // the first query that sees key jFirst
  let tEnd = select(t0, p.T, anyVisible);
  let k_t__c = kK[ko_t + _c] * p.scale; // @qrows @unroll
  let v_t__c = kV[ko_t + _c]; // @qrows @unroll
  var ak_t__c = vec4<f32>(0.0); // @qrows @unroll
  var av_t__c = vec4<f32>(0.0); // @qrows @unroll
  for (var t = t0; t < tEnd; t++) {
    for (var h = g * group; h < (g + 1u) * group; h++) {
      let qo = ((b * p.T + t) * p.NH + h) * HD4;
      let q_c = kQ[qo + _c]; // @unroll
      let d_c = kDOut[qo + _c]; // @unroll
      let st = kStats[(b * p.NH + h) * p.T + t];
      let s_t = sum_c(dot(q_c, k_t__c)); // @qrows
      let dp_t = sum_c(dot(d_c, v_t__c)); // @qrows
      let pr_t = select(0.0, exp(s_t - st.x), visible_t && j_t <= t + offset); // @qrows
      let ds_t = pr_t * (dp_t - st.y); // @qrows
      ak_t__c += ds_t * q_c; // @qrows @unroll
      av_t__c += pr_t * d_c; // @qrows @unroll
    }
  }
  if (jFirst + _t < p.Tcap) { o1[ko_t + _c] = ak_t__c * p.scale; } // @qrows @unroll
  if (jFirst + _t < p.Tcap) { o2[ko_t + _c] = av_t__c; } // @qrows @unroll
}
