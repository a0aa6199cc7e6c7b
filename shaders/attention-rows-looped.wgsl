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
// A template, expanded by src/kernels/attention.ts (src/gpu/template.ts) for one HD4 and one RQ: a line ending in
// `// @qrows` is repeated RQ times with $t replaced by 0, 1, ..., RQ - 1 (a thread's rows). Rows of a thread past
// the last row are clamped to it on load and not stored.
// Entry points and their bindings (after the uniform params at 0), as attention.wgsl's:
//   attention_forward        (out, lse, q, k, v, kvStart)
//   attention_backward_dq    (dq, dOut, q, k, v, stats, kvStart)
//   attention_backward_dkdv  (dk, dv, dOut, q, k, v, stats, kvStart)
// (attention_backward_stats stays in attention.wgsl.) CPU twin: src/reference/attention.ts.

// @uniforms Params
// @consts

@group(0) @binding(0) var<uniform> p: Params;
// @include attention-rows-head

// ---------------------------------------------------------------------------------------------------------
// Forward: a thread per RQ consecutive query rows of one (b, h), an online softmax over keys kvStart[b] .. (its
// last row's) t + Tk - T, rescaling every step without a branch; a row skips (by select) the keys after its own
// last one. Per key: the scores over the head dim, then the accumulators over it (each key and value read once).

@group(0) @binding(3) var<storage, read> fq: array<vec4<f32>>; // q (B,T,NH,HD)
@group(0) @binding(4) var<storage, read> fk: array<vec4<f32>>; // k (B,Tcap,NKV,HD)
@group(0) @binding(5) var<storage, read> fv: array<vec4<f32>>; // v (B,Tcap,NKV,HD)
@group(0) @binding(6) var<storage, read> fStart: array<u32>;   // kvStart (B)

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
  let offset = p.Tk - p.T;
  let end = min(tFirst + RQ - 1u, p.T - 1u) + offset + 1u;
  let t$t = min(tFirst + $t, p.T - 1u); // @qrows
  let last$t = t$t + offset; // @qrows
  let qo$t = ((b * p.T + t$t) * p.NH + h) * HD4; // @qrows
  var q$t: array<vec4<f32>, HD4>; // @qrows
  var a$t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    q$t[c] = fq[qo$t + c] * p.scale; // @qrows
  }
  var m$t = NEG_BIG; // @qrows
  var l$t = 0.0; // @qrows
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    var s$t = 0.0; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = fk[ko + c];
      s$t += dot(q$t[c], kc); // @qrows
    }
    let see$t = j <= last$t; // @qrows
    let mNew$t = select(m$t, max(m$t, s$t), see$t); // @qrows
    let keep$t = exp(m$t - mNew$t); // @qrows
    let w$t = select(0.0, exp(s$t - mNew$t), see$t); // @qrows
    m$t = mNew$t; // @qrows
    l$t = l$t * keep$t + w$t; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let vc = fv[ko + c];
      a$t[c] = a$t[c] * keep$t + w$t * vc; // @qrows
    }
    ko += kStride;
  }
  // seen: false for a pad query (no visible key)
  let seen$t = l$t > 0.0; // @qrows
  let inv$t = select(0.0, 1.0 / l$t, seen$t); // @qrows
  if (tFirst + $t < p.T) { o2f[bh * p.T + t$t] = select(0.0, m$t + log(l$t), seen$t); } // @qrows
  for (var c = 0u; c < hd4; c++) {
    if (tFirst + $t < p.T) { o1[qo$t + c] = a$t[c] * inv$t; } // @qrows
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
  let t$t = min(tFirst + $t, p.T - 1u); // @qrows
  let last$t = t$t + offset; // @qrows
  let qo$t = ((b * p.T + t$t) * p.NH + h) * HD4; // @qrows
  let st$t = qStats[bh * p.T + t$t]; // @qrows
  var q$t: array<vec4<f32>, HD4>; // @qrows
  var d$t: array<vec4<f32>, HD4>; // @qrows
  var a$t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    q$t[c] = qQ[qo$t + c] * p.scale; // @qrows
    d$t[c] = qDOut[qo$t + c]; // @qrows
  }
  var kk: array<vec4<f32>, HD4>;
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    var s$t = 0.0; // @qrows
    var dp$t = 0.0; // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = qK[ko + c];
      let vc = qV[ko + c];
      kk[c] = kc;
      s$t += dot(q$t[c], kc); // @qrows
      dp$t += dot(d$t[c], vc); // @qrows
    }
    let ds$t = select(0.0, exp(s$t - st$t.x) * (dp$t - st$t.y), j <= last$t); // @qrows
    for (var c = 0u; c < hd4; c++) {
      let kc = kk[c];
      a$t[c] += ds$t * kc; // @qrows
    }
    ko += kStride;
  }
  for (var c = 0u; c < hd4; c++) {
    if (tFirst + $t < p.T) { o1[qo$t + c] = a$t[c] * p.scale; } // @qrows
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
  let j$t = min(jFirst + $t, p.Tcap - 1u); // @qrows
  let ko$t = ((b * p.Tcap + j$t) * p.NKV + g) * HD4; // @qrows
  let visible$t = j$t < p.Tk && j$t >= start; // @qrows
  var anyVisible = false;
  anyVisible = anyVisible || visible$t; // @qrows
  let t0 = select(0u, jFirst - offset, jFirst > offset); // the first query that sees key jFirst
  let tEnd = select(t0, p.T, anyVisible);
  var k$t: array<vec4<f32>, HD4>; // @qrows
  var v$t: array<vec4<f32>, HD4>; // @qrows
  var ak$t: array<vec4<f32>, HD4>; // @qrows
  var av$t: array<vec4<f32>, HD4>; // @qrows
  for (var c = 0u; c < hd4; c++) {
    k$t[c] = kK[ko$t + c] * p.scale; // @qrows
    v$t[c] = kV[ko$t + c]; // @qrows
  }
  var qq: array<vec4<f32>, HD4>;
  var dd: array<vec4<f32>, HD4>;
  for (var t = t0; t < tEnd; t++) {
    for (var h = g * group; h < (g + 1u) * group; h++) {
      let qo = ((b * p.T + t) * p.NH + h) * HD4;
      let st = kStats[(b * p.NH + h) * p.T + t];
      var s$t = 0.0; // @qrows
      var dp$t = 0.0; // @qrows
      for (var c = 0u; c < hd4; c++) {
        let qc = kQ[qo + c];
        let dc = kDOut[qo + c];
        qq[c] = qc;
        dd[c] = dc;
        s$t += dot(qc, k$t[c]); // @qrows
        dp$t += dot(dc, v$t[c]); // @qrows
      }
      let pr$t = select(0.0, exp(s$t - st.x), visible$t && j$t <= t + offset); // @qrows
      let ds$t = pr$t * (dp$t - st.y); // @qrows
      for (var c = 0u; c < hd4; c++) {
        let qc = qq[c];
        let dc = dd[c];
        ak$t[c] += ds$t * qc; // @qrows
        av$t[c] += pr$t * dc; // @qrows
      }
    }
  }
  for (var c = 0u; c < hd4; c++) {
    if (jFirst + $t < p.Tcap) { o1[ko$t + c] = ak$t[c] * p.scale; } // @qrows
    if (jFirst + $t < p.Tcap) { o2[ko$t + c] = av$t[c]; } // @qrows
  }
}
