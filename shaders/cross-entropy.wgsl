// cross-entropy: the SFT loss, masked mean over rows of -log softmax(logits)[target], and its backward.
// Deterministic: per-row losses first (one workgroup per row), then one workgroup sums them in a fixed order
// (thread-strided partial sums, then a tree). No temperature (that is logprob.wgsl), no label smoothing.
// Entry points: cross_entropy_rows (rowLoss, logits, targets, mask): rowLoss[n] = mask[n] (lse_n - logits[n, t_n]);
//               cross_entropy_reduce (loss, rowLoss, mask): loss[0] = sum rowLoss / sum mask (0 if sum mask is 0);
//               cross_entropy_mask_sum (count, mask): count[0] = sum mask;
//               cross_entropy_backward (dLogits, logits, targets, mask, count).
// CPU twins: src/reference/cross-entropy.ts (crossEntropyForward = rows + reduce, crossEntropyBackward = mask_sum
// + backward). Rows with mask 0 never read their target (padding may hold any id).

override WG: u32 = 256u; // a power of two

struct Params {
  rows: u32,
  cols: u32,
  dLoss: f32, // backward only: upstream gradient of the scalar loss
}

@group(0) @binding(0) var<uniform> p: Params;
// (Bindings repeat numbers across entry points: WGSL only requires them distinct within one entry's interface.)
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // rowLoss (N) | loss (1) | count (1) | dLogits (N,V)
@group(0) @binding(2) var<storage, read> logits: array<f32>;    // (N,V)
@group(0) @binding(3) var<storage, read> targets: array<u32>;   // (N)
@group(0) @binding(4) var<storage, read> mask: array<f32>;      // (N)
@group(0) @binding(5) var<storage, read> count: array<f32>;     // (1), from cross_entropy_mask_sum

@group(0) @binding(2) var<storage, read> red_rows: array<f32>;  // reduce: rowLoss (N); mask_sum: mask (N)
@group(0) @binding(3) var<storage, read> red_mask: array<f32>;  // reduce: mask (N)

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

// Row max and log of the sum of exp(x - max).
fn row_stats(base: u32, lid: u32) -> vec2<f32> {
  var m = -3.402823e38;
  for (var c = lid; c < p.cols; c += WG) { m = max(m, logits[base + c]); }
  let rowMax = workgroup_max(m, lid);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(logits[base + c] - rowMax); }
  return vec2<f32>(rowMax, log(workgroup_sum(s, lid)));
}

@compute @workgroup_size(WG)
fn cross_entropy_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; } // uniform across the workgroup
  let w = mask[row];
  if (w == 0.0) { // uniform too (one value per workgroup)
    if (lid == 0u) { out[row] = 0.0; }
    return;
  }
  let base = row * p.cols;
  let st = row_stats(base, lid);
  if (lid == 0u) {
    let t = min(targets[row], p.cols - 1u);
    out[row] = w * ((st.x - logits[base + t]) + st.y); // lse - x_t with lse = max + log(sum)
  }
}

@compute @workgroup_size(WG)
fn cross_entropy_reduce(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  var c = 0.0;
  for (var i = lid; i < p.rows; i += WG) {
    s += red_rows[i];
    c += red_mask[i];
  }
  let total = workgroup_sum(s, lid);
  let n = workgroup_sum(c, lid);
  if (lid == 0u) { out[0] = select(0.0, total / n, n != 0.0); }
}

@compute @workgroup_size(WG)
fn cross_entropy_mask_sum(@builtin(local_invocation_index) lid: u32) {
  var c = 0.0;
  for (var i = lid; i < p.rows; i += WG) { c += red_rows[i]; }
  let n = workgroup_sum(c, lid);
  if (lid == 0u) { out[0] = n; }
}

// dLogits[n, v] = dLoss mask[n] / count (softmax(logits[n])_v - [v = t_n]); rows with mask 0 (or count 0) get 0.
@compute @workgroup_size(WG)
fn cross_entropy_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let n = count[0];
  let w = mask[row];
  if (w == 0.0 || n == 0.0) {
    for (var c = lid; c < p.cols; c += WG) { out[base + c] = 0.0; }
    return;
  }
  let scale = p.dLoss * w / n;
  let st = row_stats(base, lid);
  let t = targets[row];
  for (var c = lid; c < p.cols; c += WG) {
    let pr = exp((logits[base + c] - st.x) - st.y);
    out[base + c] = scale * (pr - select(0.0, 1.0, c == t));
  }
}
