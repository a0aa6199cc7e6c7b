// attention-rows-looped: attention-rows.wgsl's kernels (the same entry points, bindings, masking, outputs, and a thread
// per RQ consecutive rows) with the head dim walked by loops instead of written out: a row's head vectors live in
// private arrays `array<vec4<f32>, HD4>` indexed by the loop counter, and every loop over the head dim runs to
// p.HD / 4 (a uniform, = HD4), so no compiler can unroll it back into HD4 named registers. For LLVM-based drivers
// (Mesa's lavapipe/llvmpipe) that is what keeps the compile cheap: their cost grows steeply with the storage
// loads and live registers written out, and cold on an idle machine lavapipe compiled the written-out form of
// attention-rows.wgsl in 1.6-6.1 s per entry point at head dims 32-64 (about twice that in CPU time), this form
// in 0.14-0.4 s (BENCHMARKS.md, "attention-rows in two forms"). SwiftShader, which keeps a dynamically indexed
// array in memory, runs this form 2-4x slower than the registers. So rowsForm in src/kernels/attention.ts takes it
// where one row's head vector is more than the adapter's register bound (rowsRegisterBound): above head dim 24 on
// lavapipe, above 64 everywhere (Qwen3's 128). rowsPerThread's bound for this form: RQ * HD4 <= 8.
//
// Specialized by src/kernels/attention.ts (src/gpu/specialize.ts) for one HD4 and one RQ (as written, 1 and 1,
// region as-written): a line ending in `// @qrows` is repeated RQ times with _t replaced by 0, 1, ..., RQ - 1 (a
// thread's rows). Rows of a thread past the last row are clamped to it on load and not stored.
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
// As written: copy 0 of every repeated line (one row a thread).
const _t: u32 = 0u;
// @end as-written

// ---------------------------------------------------------------------------------------------------------
// Forward: a thread per RQ consecutive query rows of one (b, h), an online softmax over keys kvStart[b] .. (its
// last row's) t + Tk - T, rescaling every step without a branch; a row skips (by select) the keys after its own
// last one. Per key: the scores over the head dim, then the accumulators over it (each key and value read once).

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
  let hd4 = p.HD / 4u; // = HD4, but a uniform: loops to it stay rolled
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
  var q_t: array<vec4<f32>, HD4>; // @qrows
  var a_t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    q_t[c] = fq[qo_t + c] * p.scale; // @qrows
  }
  var m_t = NEG_BIG; // @qrows
  var l_t = 0.0; // @qrows
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    var s_t = 0.0; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = fk[ko + c];
      s_t += dot(q_t[c], kc); // @qrows
    }
    let see_t = j <= last_t; // @qrows
    let mNew_t = select(m_t, max(m_t, s_t), see_t); // @qrows
    let keep_t = exp(m_t - mNew_t); // @qrows
    let w_t = select(0.0, exp(s_t - mNew_t), see_t); // @qrows
    m_t = mNew_t; // @qrows
    l_t = l_t * keep_t + w_t; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let vc = fv[ko + c];
      a_t[c] = a_t[c] * keep_t + w_t * vc; // @qrows
    }
    ko += kStride;
  }
  // seen: false for a pad query (no visible key)
  let seen_t = l_t > 0.0; // @qrows
  let inv_t = select(0.0, 1.0 / l_t, seen_t); // @qrows
  if (tFirst + _t < p.T) { o2f[bh * p.T + t_t] = select(0.0, m_t + log(l_t), seen_t); } // @qrows
  for (var c = 0u; c < hd4; c++) {
    if (tFirst + _t < p.T) { o1[qo_t + c] = a_t[c] * inv_t; } // @qrows
  }
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
// it sees. dq = 0 for a pad query, which sees none. The key read for the scores is kept (kk) for the accumulation.
@compute @workgroup_size(WG)
fn attention_backward_dq(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.T + RQ - 1u) / RQ;
  let tid = thread_of(wid, nwg, lid);
  if (tid >= p.B * p.NH * blocks) { return; }
  let hd4 = p.HD / 4u;
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
  var q_t: array<vec4<f32>, HD4>; // @qrows
  var d_t: array<vec4<f32>, HD4>; // @qrows
  var a_t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    q_t[c] = qQ[qo_t + c] * p.scale; // @qrows
    d_t[c] = qDOut[qo_t + c]; // @qrows
  }
  var kk: array<vec4<f32>, HD4>;
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    var s_t = 0.0; // @qrows
    var dp_t = 0.0; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = qK[ko + c];
      let vc = qV[ko + c];
      kk[c] = kc;
      s_t += dot(q_t[c], kc); // @qrows
      dp_t += dot(d_t[c], vc); // @qrows
    }
    let ds_t = select(0.0, exp(s_t - st_t.x) * (dp_t - st_t.y), j <= last_t); // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = kk[c];
      a_t[c] += ds_t * kc; // @qrows
    }
    ko += kStride;
  }
  for (var c = 0u; c < hd4; c++) {
    if (tFirst + _t < p.T) { o1[qo_t + c] = a_t[c] * p.scale; } // @qrows
  }
}

@group(0) @binding(3) var<storage, read> kDOut: array<vec4<f32>>; // dOut (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> kQ: array<vec4<f32>>;    // q (B,T,NH,HD)
@group(0) @binding(5) var<storage, read> kK: array<vec4<f32>>;    // k (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> kV: array<vec4<f32>>;    // v (B,Tcap,NKV,HD)
@group(0) @binding(7) var<storage, read> kStats: array<vec2<f32>>; // (lse, D) per query row
@group(0) @binding(8) var<storage, read> kStart: array<u32>;      // kvStart (B)

// A thread per RQ consecutive key rows j of one (b, g), over all Tcap positions, summing over the queries that see
// its first key (t >= j - (Tk - T)) and the query heads of kv head g; each key keeps the queries that see it. A
// masked key (j < kvStart[b]) or one past Tk has none and gets zeros. The query and dOut read for the scores are
// kept (qq, dd) for the accumulation.
@compute @workgroup_size(WG)
fn attention_backward_dkdv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.Tcap + RQ - 1u) / RQ;
  let tid = thread_of(wid, nwg, lid);
  if (tid >= p.B * p.NKV * blocks) { return; }
  let hd4 = p.HD / 4u;
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
  var k_t: array<vec4<f32>, HD4>; // @qrows
  var v_t: array<vec4<f32>, HD4>; // @qrows
  var ak_t: array<vec4<f32>, HD4>; // @qrows
  var av_t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    k_t[c] = kK[ko_t + c] * p.scale; // @qrows
    v_t[c] = kV[ko_t + c]; // @qrows
  }
  var qq: array<vec4<f32>, HD4>;
  var dd: array<vec4<f32>, HD4>;
  for (var t = t0; t < tEnd; t++) {
    for (var h = g * group; h < (g + 1u) * group; h++) {
      let qo = ((b * p.T + t) * p.NH + h) * HD4;
      let st = kStats[(b * p.NH + h) * p.T + t];
      var s_t = 0.0; // @qrows
      var dp_t = 0.0; // @qrows
      for (var c = 0u; c < hd4; c++) {
        let qc = kQ[qo + c];
        let dc = kDOut[qo + c];
        qq[c] = qc;
        dd[c] = dc;
        s_t += dot(qc, k_t[c]); // @qrows
        dp_t += dot(dc, v_t[c]); // @qrows
      }
      let pr_t = select(0.0, exp(s_t - st.x), visible_t && j_t <= t + offset); // @qrows
      let ds_t = pr_t * (dp_t - st.y); // @qrows
      for (var c = 0u; c < hd4; c++) {
        let qc = qq[c];
        let dc = dd[c];
        ak_t[c] += ds_t * qc; // @qrows
        av_t[c] += pr_t * dc; // @qrows
      }
    }
  }
  for (var c = 0u; c < hd4; c++) {
    if (jFirst + _t < p.Tcap) { o1[ko_t + c] = ak_t[c] * p.scale; } // @qrows
    if (jFirst + _t < p.Tcap) { o2[ko_t + c] = av_t[c]; } // @qrows
  }
}
