// logprob: fused per-row log-softmax of logits / tau, gathered log-probability of the target token and the
// full-vocabulary entropy, and their backward (the softmax is recomputed; nothing is saved). One workgroup per
// row; every reduction is a fixed-order tree, so results are deterministic. Stable for logits of magnitude 1e4:
// the row max of z = logits / tau is subtracted before exp, and log-probs are formed as (z - max) - log(sum).
// Entry points: logprob_forward (logprob, entropy, logits, targets);
//               logprob_backward (dLogits, dLogprob, dEntropy, logits, targets).
// CPU twins: src/reference/logprob.ts (logprobForward, logprobBackward).
// The row statistics here are written exactly like shaders/sampler.wgsl's, so that the sampler's log-probs and
// this kernel's agree bit for bit on one device (pi_old == the sampler's distribution).

override WG: u32 = 256u; // a power of two

struct Params {
  rows: u32,
  cols: u32,
  tau: f32, // temperature > 0: z = logits / tau
}

@group(0) @binding(0) var<uniform> p: Params;
// forward: (logprob (N), entropy (N), logits (N,V), targets (N))
// backward: (dLogits (N,V), dLogprob (N), dEntropy (N), logits (N,V), targets (N))
@group(0) @binding(1) var<storage, read_write> out0: array<f32>;
@group(0) @binding(2) var<storage, read_write> out1: array<f32>; // forward: entropy
@group(0) @binding(3) var<storage, read> fwd_logits: array<f32>;
@group(0) @binding(4) var<storage, read> fwd_targets: array<u32>;

@group(0) @binding(2) var<storage, read> d_logprob: array<f32>;
@group(0) @binding(3) var<storage, read> d_entropy: array<f32>;
@group(0) @binding(4) var<storage, read> bwd_logits: array<f32>;
@group(0) @binding(5) var<storage, read> bwd_targets: array<u32>;

var<workgroup> scratch: array<f32, WG>;

fn workgroup_max(v: f32, lid: u32) -> f32 {
  scratch[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratch[lid] = max(scratch[lid], scratch[lid + s]); }
    workgroupBarrier();
  }
  let r = scratch[0];
  workgroupBarrier();
  return r;
}

fn workgroup_sum(v: f32, lid: u32) -> f32 {
  scratch[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratch[lid] += scratch[lid + s]; }
    workgroupBarrier();
  }
  let r = scratch[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(WG)
fn logprob_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; } // uniform across the workgroup
  let base = row * p.cols;
  var m = -3.402823e38;
  for (var c = lid; c < p.cols; c += WG) { m = max(m, fwd_logits[base + c] / p.tau); }
  let zmax = workgroup_max(m, lid);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(fwd_logits[base + c] / p.tau - zmax); }
  let logZ = log(workgroup_sum(s, lid));
  var h = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let lp = (fwd_logits[base + c] / p.tau - zmax) - logZ;
    h -= exp(lp) * lp;
  }
  let entropy = workgroup_sum(h, lid);
  if (lid == 0u) {
    let t = min(fwd_targets[row], p.cols - 1u); // the wrapper validates nothing on the GPU; never read out of row
    out0[row] = (fwd_logits[base + t] / p.tau - zmax) - logZ;
    out1[row] = entropy;
  }
}

// dz_v = gl ([v = t] - p_v) - gh p_v (log p_v + H);  dLogits = dz / tau.
@compute @workgroup_size(WG)
fn logprob_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var m = -3.402823e38;
  for (var c = lid; c < p.cols; c += WG) { m = max(m, bwd_logits[base + c] / p.tau); }
  let zmax = workgroup_max(m, lid);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(bwd_logits[base + c] / p.tau - zmax); }
  let logZ = log(workgroup_sum(s, lid));
  var h = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let lp = (bwd_logits[base + c] / p.tau - zmax) - logZ;
    h -= exp(lp) * lp;
  }
  let entropy = workgroup_sum(h, lid);
  let gl = d_logprob[row];
  let gh = d_entropy[row];
  let t = bwd_targets[row];
  for (var c = lid; c < p.cols; c += WG) {
    let lp = (bwd_logits[base + c] / p.tau - zmax) - logZ;
    let pr = exp(lp);
    let onehot = select(0.0, 1.0, c == t);
    out0[base + c] = (gl * (onehot - pr) - gh * pr * (lp + entropy)) / p.tau;
  }
}
