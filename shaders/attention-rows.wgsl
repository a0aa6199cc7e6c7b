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
// A template, expanded by src/kernels/attention.ts (src/gpu/template.ts) for one HD4 and one RQ:
//   a line ending in `// @qrows` is repeated RQ times with $t replaced by 0, 1, ..., RQ - 1 (a thread's rows);
//   a line ending in `// @unroll` is repeated HD4 times with $c replaced by 0, 1, ..., HD4 - 1;
//   a line ending in `// @qrows @unroll` is repeated for every (row, c); @sum(expr) sums expr over $c.
// Rows of a thread past the last row are clamped to it on load and not stored.
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
// Forward: a thread per RQ consecutive query rows of one (b, h): an online softmax over keys kvStart[b] .. (its
// last row's) t + Tk - T, rescaling every step without a branch (max, two exps), which SwiftShader runs much
// faster than a divergent rescale. A row skips (by select) the keys after its own last one.

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
  let q$t_$c = fq[qo$t + $c] * p.scale; // @qrows @unroll
  var a$t_$c = vec4<f32>(0.0); // @qrows @unroll
  var m$t = NEG_BIG; // @qrows
  var l$t = 0.0; // @qrows
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let k$c = fk[ko + $c]; // @unroll
    let v$c = fv[ko + $c]; // @unroll
    let s$t = @sum(dot(q$t_$c, k$c)); // @qrows
    let see$t = j <= last$t; // @qrows
    let mNew$t = select(m$t, max(m$t, s$t), see$t); // @qrows
    let keep$t = exp(m$t - mNew$t); // @qrows
    let w$t = select(0.0, exp(s$t - mNew$t), see$t); // @qrows
    m$t = mNew$t; // @qrows
    l$t = l$t * keep$t + w$t; // @qrows
    a$t_$c = a$t_$c * keep$t + w$t * v$c; // @qrows @unroll
    ko += kStride;
  }
  // seen: false for a pad query (no visible key)
  let seen$t = l$t > 0.0; // @qrows
  let inv$t = select(0.0, 1.0 / l$t, seen$t); // @qrows
  if (tFirst + $t < p.T) { o2f[bh * p.T + t$t] = select(0.0, m$t + log(l$t), seen$t); } // @qrows
  if (tFirst + $t < p.T) { o1[qo$t + $c] = a$t_$c * inv$t; } // @qrows @unroll
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
  let t$t = min(tFirst + $t, p.T - 1u); // @qrows
  let last$t = t$t + offset; // @qrows
  let qo$t = ((b * p.T + t$t) * p.NH + h) * HD4; // @qrows
  let st$t = qStats[bh * p.T + t$t]; // @qrows
  let q$t_$c = qQ[qo$t + $c] * p.scale; // @qrows @unroll
  let d$t_$c = qDOut[qo$t + $c]; // @qrows @unroll
  var a$t_$c = vec4<f32>(0.0); // @qrows @unroll
  var ko = (b * p.Tcap * p.NKV + g) * HD4 + first * kStride;
  for (var j = first; j < end; j++) {
    let k$c = qK[ko + $c]; // @unroll
    let v$c = qV[ko + $c]; // @unroll
    let s$t = @sum(dot(q$t_$c, k$c)); // @qrows
    let dp$t = @sum(dot(d$t_$c, v$c)); // @qrows
    let ds$t = select(0.0, exp(s$t - st$t.x) * (dp$t - st$t.y), j <= last$t); // @qrows
    a$t_$c += ds$t * k$c; // @qrows @unroll
    ko += kStride;
  }
  if (tFirst + $t < p.T) { o1[qo$t + $c] = a$t_$c * p.scale; } // @qrows @unroll
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
  let j$t = min(jFirst + $t, p.Tcap - 1u); // @qrows
  let ko$t = ((b * p.Tcap + j$t) * p.NKV + g) * HD4; // @qrows
  let visible$t = j$t < p.Tk && j$t >= start; // @qrows
  var anyVisible = false;
  anyVisible = anyVisible || visible$t; // @qrows
  let t0 = select(0u, jFirst - offset, jFirst > offset); // the first query that sees key jFirst
  let tEnd = select(t0, p.T, anyVisible);
  let k$t_$c = kK[ko$t + $c] * p.scale; // @qrows @unroll
  let v$t_$c = kV[ko$t + $c]; // @qrows @unroll
  var ak$t_$c = vec4<f32>(0.0); // @qrows @unroll
  var av$t_$c = vec4<f32>(0.0); // @qrows @unroll
  for (var t = t0; t < tEnd; t++) {
    for (var h = g * group; h < (g + 1u) * group; h++) {
      let qo = ((b * p.T + t) * p.NH + h) * HD4;
      let q$c = kQ[qo + $c]; // @unroll
      let d$c = kDOut[qo + $c]; // @unroll
      let st = kStats[(b * p.NH + h) * p.T + t];
      let s$t = @sum(dot(q$c, k$t_$c)); // @qrows
      let dp$t = @sum(dot(d$c, v$t_$c)); // @qrows
      let pr$t = select(0.0, exp(s$t - st.x), visible$t && j$t <= t + offset); // @qrows
      let ds$t = pr$t * (dp$t - st.y); // @qrows
      ak$t_$c += ds$t * q$c; // @qrows @unroll
      av$t_$c += pr$t * d$c; // @qrows @unroll
    }
  }
  if (jFirst + $t < p.Tcap) { o1[ko$t + $c] = ak$t_$c * p.scale; } // @qrows @unroll
  if (jFirst + $t < p.Tcap) { o2[ko$t + $c] = av$t_$c; } // @qrows @unroll
}
