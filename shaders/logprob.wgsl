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
// Stand-ins for what this file uses of block row-stats (with row-lanes, row-layout); kernels compile the block here.
override LANES: u32 = 1u; override ROWS: u32 = 64u; override WG: u32 = LANES * ROWS;
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
fn lanes_sum(v: f32, lid: u32) -> f32 { return v; }
var<private> row_base: u32; fn z_at(c: u32) -> f32 { return 0.0; }
struct RowStats { zmax: f32, argmax: u32, logZ: f32, H: f32 }
fn row_stats(n: u32, lane: u32, lid: u32) -> RowStats { return RowStats(); }
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
