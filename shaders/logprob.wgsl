// logprob: fused per-row log-softmax of logits / tau, gathered log-probability of the target token and the
// full-vocabulary entropy, and their backward (the softmax is recomputed; nothing is saved). Every reduction is
// in a fixed order, so results are deterministic. Stable for logits of magnitude 1e4: the row max of z =
// logits / tau is subtracted before exp, and log-probs are formed as (z - max) - log(sum).
// Entry points: logprob_forward (logprob, entropy, logits, targets);
//               logprob_forward_sum_pi_squared (logprob, entropy, logits, targets, sumPiSquared): the same, and
//               sum_v p_v^2 per row (the optimal token baseline's input), only dispatched when it is asked for;
//               logprob_backward (dLogits, dLogprob, logits, dEntropy, targets): NOT the twin's argument order
//               (dLogits, dLogprob, dEntropy, logits, targets): logits sits at binding 3 in both entries, so that
//               both use the one `logits` variable that the row statistics read.
// CPU twins: src/reference/logprob.ts (logprobForward, logprobForwardSumPiSquared, logprobBackward).
// Rows are laid out and their statistics (max, argmax, log-sum-exp, entropy) computed by block row-stats
// (shaders/blocks/row-stats.wgsl), which shaders/sampler.wgsl includes too, so that the sampler's log-probs and
// this kernel's agree bit for bit on one device (pi_old == the sampler's distribution).

struct Params {
  rows: u32,
  cols: u32,
  tau: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out0: array<f32>; // forward: logprob (N); backward: dLogits (N,V)
@group(0) @binding(2) var<storage, read_write> out1: array<f32>; // forward: entropy (N)
@group(0) @binding(3) var<storage, read> logits: array<f32>;     // (N,V), both entries
@group(0) @binding(4) var<storage, read> fwd_targets: array<u32>; // forward: targets (N)
@group(0) @binding(5) var<storage, read_write> sum_pi_sq: array<f32>; // logprob_forward_sum_pi_squared: (N)

@group(0) @binding(2) var<storage, read> d_logprob: array<f32>;   // backward: (N)
@group(0) @binding(4) var<storage, read> d_entropy: array<f32>;   // backward: (N)
@group(0) @binding(5) var<storage, read> bwd_targets: array<u32>; // backward: (N)

// Row layout (LANES, ROWS, WG, row_of), lane merges and row_stats(); reads `logits` and `p.tau`.
// @region row-stats
// Block row-stats (region row-stats): max, argmax, log-sum-exp and entropy of softmax(logits / tau) over a
// row, for logprob.wgsl and sampler.wgsl; includes block row-lanes. A fragment, not a shader: shaders hold
// it in a region of its name. The including shader declares `logits` (storage array<f32>, (rows, cols))
// and a uniform `p` with `tau` (temperature > 0). Both wrappers lay rows out with rowLayout(V), so the sampler's
// log-prob and entropy equal logprob_forward's bit for bit, whatever the number of rows of either call: the same
// code in the same order (pi_old of a rollout is exactly the sampler's distribution). The lane merges (lanes_sum,
// lanes_argmax) come from block row-lanes, or row-lanes-subgroup on a device with subgroups (one variant for
// every family of a device, src/kernels/wgsl-blocks.ts).

// @region row-lanes
// Block row-lanes (region row-lanes): the merges of a row's lanes (f32 sum and max, and argmax), in lane
// order through workgroup memory, on top of block row-layout, which it includes. A fragment, not a shader:
// shaders hold it in a region of its name (src/gpu/specialize.ts). Every device runs it; a device with the `subgroups`
// feature gets block row-lanes-subgroup in its place (same functions, same results up to summation order).
// Call every merge in uniform control flow: rows past the last one join them too.

// @region row-layout
// Block row-layout (region row-layout): how the row kernels (softmax, cross-entropy, logprob, sampler, kl)
// spread rows over threads. A fragment, not a shader: shaders hold it in a region of its name.
// A workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts, rowLayout, picked from the row
// length only); lane i takes columns i, i + LANES, ... of its row; the row's lanes are merged in lane order
// through a small workgroup buffer of MERGE entries (the includer's, or block row-lanes's f32 one): two slots
// that alternate (merge_slot), so a slot is rewritten only after the next merge's barrier, one barrier per
// merge. LANES = 1 (short rows, e.g. a 99-token vocabulary: a thread per row) has no barrier at all:
// SwiftShader runs barriers very slowly.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override MERGE: u32 = 2u * WG;   // derived: the two merge slots

const NEG_BIG: f32 = -3.402823e38;

var<private> merge_slot: u32; // the slot of the next merge: 0 or 1

// This thread's row (may be past the last row: such threads read nothing but join the merges).
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
}
// @end row-layout

var<workgroup> lane_buf: array<f32, MERGE>;
var<workgroup> lane_buf_u: array<u32, MERGE>;

// The row's LANES values of v in lane order, combined with op (0: sum, 1: max).
fn lanes_merge(v: f32, lid: u32, op: u32) -> f32 {
  if (LANES == 1u) { return v; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var a = lane_buf[r0];
  for (var i = 1u; i < LANES; i++) {
    let b = lane_buf[r0 + i];
    if (op == 0u) { a += b; } else { a = max(a, b); }
  }
  return a;
}

// The sum of the row's LANES values of v, in lane order.
fn lanes_sum(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 0u);
}

// The largest of the row's LANES values of v.
fn lanes_max(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 1u);
}

// The row's largest v and its lowest index i, as (bitcast<u32>(v), i).
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
// @end row-lanes

var<private> row_base: u32; // this thread's row * cols

fn z_at(c: u32) -> f32 {
  return logits[row_base + c] / p.tau;
}

struct RowStats {
  zmax: f32,   // max of z = logits / tau
  argmax: u32, // its lowest index
  logZ: f32,   // log sum exp(z - zmax)
  H: f32,      // entropy of softmax(z)
}

// Statistics of softmax(z) over the first n columns of the row at row_base (n = 0: reads nothing). Call in
// uniform control flow.
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
// @end row-stats

// A forward row's outputs from its statistics: the target's log-prob and the entropy.
fn write_forward(row: u32, st: RowStats) {
  let t = min(fwd_targets[row], p.cols - 1u); // the wrapper validates nothing on the GPU; never read out of row
  out0[row] = (z_at(t) - st.zmax) - st.logZ;
  out1[row] = st.H;
}

@compute @workgroup_size(WG)
fn logprob_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  row_base = row * p.cols;
  let st = row_stats(select(0u, p.cols, live), lane, lid);
  if (live && lane == 0u) { write_forward(row, st); }
}

// logprob_forward, and sum_v p_v^2 = sum_v exp(2 log p_v): one more pass over the row after its statistics, in
// the fixed lane order, so no (rows, V) probabilities are kept (the CPU twin: logprobForwardSumPiSquared).
@compute @workgroup_size(WG)
fn logprob_forward_sum_pi_squared(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                  @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  row_base = row * p.cols;
  let n = select(0u, p.cols, live);
  let st = row_stats(n, lane, lid);
  var q = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let lp = (z_at(c) - st.zmax) - st.logZ;
    q += exp(2.0 * lp);
  }
  let total = lanes_sum(q, lid);
  if (live && lane == 0u) {
    write_forward(row, st);
    sum_pi_sq[row] = total;
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
