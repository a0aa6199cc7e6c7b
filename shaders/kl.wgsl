// kl: the exact full-vocabulary KL(pi_theta || pi_ref) per row of softmax(logits / tau) against
// softmax(refLogits / tau), and its backward to the policy's logits only (the reference is frozen). Not the
// per-token KL estimators k1/k2/k3 (objective.wgsl) and not the log-prob or entropy (logprob.wgsl).
// Entry points: kl_exact_forward (kl, logits, refLogits); kl_exact_backward (dLogits, dKl, logits, refLogits), bindings in the
// twin's order. CPU twins: src/reference/kl.ts (klExactForward, klExactBackward), which state the same formulas.
//
// With z = logits / tau, y = refLogits / tau, a = the lowest index of max z (z_a = zmax), ymax = max y,
// Sp = sum_v exp(z_v - zmax), Sq = sum_v exp(y_v - ymax), everything is written relative to the argmax a:
//   log p_v - log q_v = e_v + d_a,  e_v = (z_v - zmax) - (y_v - y_a),  d_a = (ymax - y_a) + log Sq - log Sp;
//   r = sum_v p_v e_v = (sum_v exp(z_v - zmax) e_v) / Sp;  kl = d_a + r;
//   d kl / d z_v = p_v (log p_v - log q_v - kl) = p_v (e_v - r);  dLogits = dKl * dz / tau.
// Why relative to a: where p is nearly one-hot (large logits), log p_a - log q_a - kl is a tiny difference of two
// numbers of the size of the logits; in this form it is -r, with e_a = 0 exactly, so no cancellation happens.
// Max-subtracted exps keep logits of magnitude 1e4 finite. Every sum has a fixed order (deterministic).
//
// Rows are laid out as logprob.wgsl's, by block row-layout (shaders/blocks/row-layout.wgsl; rowLayout by V
// only): LANES threads per row, lanes merged in lane order through two alternating slots, two merges per row.
// The merges here are kl's own (not block row-lanes's f32 ones): each carries a vec4 state, the max pass's
// (zmax, y at its lowest index, ymax, index) in one barrier and the sum pass's three sums in another.
// The two entries read logits/refLogits at different bindings (the twin's order), and WGSL cannot portably pass
// storage pointers to a function, so each entry has its own three short column loops over the shared steps below.

struct Params {
  rows: u32,
  cols: u32,
  tau: f32,
  accumulate: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// kl_exact_forward
@group(0) @binding(1) var<storage, read_write> kl_out: array<f32>; // (N)
@group(0) @binding(2) var<storage, read> f_logits: array<f32>;     // (N,V)
@group(0) @binding(3) var<storage, read> f_ref: array<f32>;        // (N,V)
// kl_exact_backward
@group(0) @binding(1) var<storage, read_write> d_logits: array<f32>; // (N,V)
@group(0) @binding(2) var<storage, read> d_kl: array<f32>;           // (N)
@group(0) @binding(3) var<storage, read> b_logits: array<f32>;       // (N,V)
@group(0) @binding(4) var<storage, read> b_ref: array<f32>;          // (N,V)

// LANES, ROWS, WG, MERGE, NEG_BIG, merge_slot and row_of.
// @region row-layout
// Stand-ins for what this file uses of block row-layout; kernels compile the block here.
override LANES: u32 = 1u; override ROWS: u32 = 64u; override WG: u32 = LANES * ROWS; override MERGE: u32 = 2u * WG;
const NEG_BIG: f32 = -3.402823e38; var<private> merge_slot: u32;
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
// @end row-layout

var<workgroup> lane_buf: array<vec4<f32>, MERGE>;

// ---- the per-column steps and the lane merges, shared by both entries ----

// Max pass state: (zmax, y at zmax's lowest index, ymax, that index as f32: exact, the wrapper keeps V < 2^24).
fn max_init() -> vec4<f32> {
  return vec4<f32>(NEG_BIG, 0.0, NEG_BIG, 0.0);
}

// Columns come in increasing order within a lane, so a strict > keeps the lowest index of the max.
fn max_step(m: vec4<f32>, z: f32, y: f32, c: u32) -> vec4<f32> {
  var r = m;
  if (z > r.x) {
    r.x = z;
    r.y = y;
    r.w = f32(c);
  }
  r.z = max(r.z, y);
  return r;
}

// The row's max state over its LANES lanes (lane order; ties go to the lowest index). Call in uniform control flow.
fn lanes_max(v: vec4<f32>, lid: u32) -> vec4<f32> {
  if (LANES == 1u) { return v; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var m = lane_buf[r0];
  for (var i = 1u; i < LANES; i++) {
    let b = lane_buf[r0 + i];
    if (b.x > m.x || (b.x == m.x && b.w < m.w)) {
      m.x = b.x;
      m.y = b.y;
      m.w = b.w;
    }
    m.z = max(m.z, b.z);
  }
  return m;
}

// e_v = (z_v - zmax) - (y_v - y_a) (m = the merged max state).
fn e_of(z: f32, y: f32, m: vec4<f32>) -> f32 {
  return (z - m.x) - (y - m.y);
}

// Sum pass: (Sp, Sq, sum exp(z - zmax) e, 0).
fn sum_step(s: vec4<f32>, z: f32, y: f32, m: vec4<f32>) -> vec4<f32> {
  let ez = exp(z - m.x);
  return s + vec4<f32>(ez, exp(y - m.z), ez * e_of(z, y, m), 0.0);
}

// The sum of the row's LANES values of v, in lane order. Call in uniform control flow.
fn lanes_sum(v: vec4<f32>, lid: u32) -> vec4<f32> {
  if (LANES == 1u) { return v; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var s = lane_buf[r0];
  for (var i = 1u; i < LANES; i++) { s += lane_buf[r0 + i]; }
  return s;
}

// (kl, r, log Sp) of a row from its merged max state m and sums s.
fn row_kl(m: vec4<f32>, s: vec4<f32>) -> vec3<f32> {
  let logSp = log(s.x);
  let r = s.z / s.x;
  return vec3<f32>(((m.z - m.y) + (log(s.y) - logSp)) + r, r, logSp);
}

// ---- entries ----

@compute @workgroup_size(WG)
fn kl_exact_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  let n = select(0u, p.cols, live); // rows past the end read nothing
  let base = row * p.cols;
  var m = max_init();
  for (var c = lane; c < n; c += LANES) { m = max_step(m, f_logits[base + c] / p.tau, f_ref[base + c] / p.tau, c); }
  m = lanes_max(m, lid);
  var s = vec4<f32>(0.0);
  for (var c = lane; c < n; c += LANES) { s = sum_step(s, f_logits[base + c] / p.tau, f_ref[base + c] / p.tau, m); }
  s = lanes_sum(s, lid);
  if (live && lane == 0u) { kl_out[row] = row_kl(m, s).x; }
}

// dLogits_v (+)= dKl p_v (e_v - r) / tau.
@compute @workgroup_size(WG)
fn kl_exact_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  let n = select(0u, p.cols, live);
  let base = row * p.cols;
  var m = max_init();
  for (var c = lane; c < n; c += LANES) { m = max_step(m, b_logits[base + c] / p.tau, b_ref[base + c] / p.tau, c); }
  m = lanes_max(m, lid);
  var s = vec4<f32>(0.0);
  for (var c = lane; c < n; c += LANES) { s = sum_step(s, b_logits[base + c] / p.tau, b_ref[base + c] / p.tau, m); }
  s = lanes_sum(s, lid);
  if (!live) { return; } // after the merges
  let k = row_kl(m, s);
  let g = d_kl[row] / p.tau;
  for (var c = lane; c < n; c += LANES) {
    let z = b_logits[base + c] / p.tau;
    let y = b_ref[base + c] / p.tau;
    let pv = exp((z - m.x) - k.z);
    var d = g * pv * (e_of(z, y, m) - k.y);
    if (p.accumulate != 0u) { d += d_logits[base + c]; }
    d_logits[base + c] = d;
  }
}
