// logprob: fused per-row log-softmax of logits / tau, gathered log-probability of the target token and the
// full-vocabulary entropy, and their backward (the softmax is recomputed; nothing is saved). Every reduction is
// in a fixed order, so results are deterministic. Stable for logits of magnitude 1e4: the row max of z =
// logits / tau is subtracted before exp, and log-probs are formed as (z - max) - log(sum).
// Entry points: logprob_forward (logprob, entropy, logits, targets);
//               logprob_backward (dLogits, dLogprob, logits, dEntropy, targets): NOT the twin's argument order
//               (dLogits, dLogprob, dEntropy, logits, targets): logits sits at binding 3 in both entries, so that
//               both use the one `logits` variable of the shared row statistics below.
// CPU twins: src/reference/logprob.ts (logprobForward, logprobBackward).
// The row statistics are the same code as shaders/sampler.wgsl's (the block between the ==== lines), so that
// the sampler's log-probs and this kernel's agree bit for bit on one device (pi_old == the sampler's
// distribution).

struct Params {
  rows: u32,
  cols: u32,
  tau: f32, // temperature > 0: z = logits / tau
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out0: array<f32>; // forward: logprob (N); backward: dLogits (N,V)
@group(0) @binding(2) var<storage, read_write> out1: array<f32>; // forward: entropy (N)
@group(0) @binding(3) var<storage, read> logits: array<f32>;     // (N,V), both entries
@group(0) @binding(4) var<storage, read> fwd_targets: array<u32>; // forward: targets (N)

@group(0) @binding(2) var<storage, read> d_logprob: array<f32>;   // backward: (N)
@group(0) @binding(4) var<storage, read> d_entropy: array<f32>;   // backward: (N)
@group(0) @binding(5) var<storage, read> bwd_targets: array<u32>; // backward: (N)

// ==== row statistics of softmax(logits / tau), begin: this block is identical in logprob.wgsl and sampler.wgsl
// (src/kernels/head.test.ts checks it), and both wrappers pick the layout with rowLayout(V), so the sampler's
// log-prob and entropy equal logprob_forward's bit for bit, whatever the number of rows of either call.
// A workgroup takes ROWS rows and gives each LANES threads; lane i takes columns i, i + LANES, ... of its row;
// the row's lanes are merged in lane order through a small workgroup buffer, one barrier per merge (two slots
// alternate, so a slot is rewritten only after the next merge's barrier). LANES = 1 (short rows, e.g. a
// 99-token vocabulary: a thread per row) has no barrier at all: SwiftShader runs barriers very slowly.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override MERGE: u32 = 2u * WG;   // derived: the two merge slots

const NEG_BIG: f32 = -3.402823e38;

var<workgroup> lane_buf: array<f32, MERGE>;
var<workgroup> lane_buf_u: array<u32, MERGE>;
var<private> merge_slot: u32;
var<private> row_base: u32; // this thread's row * cols

// This thread's row (may be past the last row: such threads read nothing but join the merges).
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
}

fn z_at(c: u32) -> f32 {
  return logits[row_base + c] / p.tau;
}

// The sum of the row's LANES values of v, in lane order. Call in uniform control flow.
fn lanes_sum(v: f32, lid: u32) -> f32 {
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

// The row's largest v and its lowest index i, as (bitcast<u32>(v), i). Call in uniform control flow.
fn lanes_argmax(v: f32, i: u32, lid: u32) -> vec2<u32> {
  if (LANES == 1u) { return vec2<u32>(bitcast<u32>(v), i); }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  lane_buf_u[o + lid] = i;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var m = lane_buf[r0];
  var mi = lane_buf_u[r0];
  for (var j = 1u; j < LANES; j++) {
    let b = lane_buf[r0 + j];
    let bi = lane_buf_u[r0 + j];
    if (b > m || (b == m && bi < mi)) {
      m = b;
      mi = bi;
    }
  }
  return vec2<u32>(bitcast<u32>(m), mi);
}

struct RowStats {
  zmax: f32,   // max of z = logits / tau
  argmax: u32, // its lowest index
  logZ: f32,   // log sum exp(z - zmax)
  H: f32,      // entropy of softmax(z)
}

// Statistics of softmax(z) over the first n columns of the row at row_base (n = 0: reads nothing).
fn row_stats(n: u32, lane: u32, lid: u32) -> RowStats {
  var m = NEG_BIG;
  var mi = 0u;
  for (var c = lane; c < n; c += LANES) {
    let z = z_at(c);
    if (z > m) {
      m = z;
      mi = c;
    }
  }
  let am = lanes_argmax(m, mi, lid);
  let zmax = bitcast<f32>(am.x);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(z_at(c) - zmax); }
  let logZ = log(lanes_sum(s, lid));
  var h = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let lp = (z_at(c) - zmax) - logZ;
    h -= exp(lp) * lp;
  }
  return RowStats(zmax, am.y, logZ, lanes_sum(h, lid));
}
// ==== row statistics of softmax(logits / tau), end

@compute @workgroup_size(WG)
fn logprob_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  row_base = row * p.cols;
  let st = row_stats(select(0u, p.cols, live), lane, lid);
  if (live && lane == 0u) {
    let t = min(fwd_targets[row], p.cols - 1u); // the wrapper validates nothing on the GPU; never read out of row
    out0[row] = (z_at(t) - st.zmax) - st.logZ;
    out1[row] = st.H;
  }
}

// dz_v = gl ([v = t] - p_v) - gh p_v (log p_v + H);  dLogits = dz / tau.
@compute @workgroup_size(WG)
fn logprob_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  row_base = row * p.cols;
  let st = row_stats(select(0u, p.cols, live), lane, lid);
  if (!live) { return; } // after the merges
  let gl = d_logprob[row];
  let gh = d_entropy[row];
  let t = bwd_targets[row];
  for (var c = lane; c < p.cols; c += LANES) {
    let lp = (z_at(c) - st.zmax) - st.logZ;
    let pr = exp(lp);
    let onehot = select(0.0, 1.0, c == t);
    out0[row_base + c] = (gl * (onehot - pr) - gh * pr * (lp + st.H)) / p.tau;
  }
}
