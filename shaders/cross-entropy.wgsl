// cross-entropy: the SFT loss, masked mean over rows of -log softmax(logits)[target], and its backward.
// Deterministic: per-row losses first, then one workgroup sums them in a fixed order (thread-strided partial
// sums, then a tree). No temperature (that is logprob.wgsl), no label smoothing.
// Entry points: cross_entropy_rows (rowLoss, logits, targets, mask): rowLoss[n] = mask[n] (lse_n - logits[n, t_n]);
//               cross_entropy_reduce (loss, rowLoss, mask): loss[0] = sum rowLoss / sum mask (0 if sum mask is 0);
//               cross_entropy_mask_sum (count, mask): count[0] = sum mask;
//               cross_entropy_backward (dLogits, logits, targets, mask, count).
// CPU twins: src/reference/cross-entropy.ts (crossEntropyForward = rows + reduce, crossEntropyBackward = mask_sum
// + backward). Rows with mask 0 never read their target (padding may hold any id).
//
// Row entries (rows, backward) are laid out by block row-layout (shaders/blocks/row-layout.wgsl: LANES threads per
// row, ROWS rows per workgroup, lanes merged in lane order); a row's max and normaliser come from block
// row-max-logsum, which softmax.wgsl includes too.

override RED_WG: u32 = 256u; // reduce and mask_sum: threads of their one workgroup, a power of two

struct Params {
  rows: u32,
  cols: u32,
  dLoss: f32,
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

// ---- lanes of a row ----

// Element i of the logits, for block row-max-logsum.
fn row_value(i: u32) -> f32 {
  return logits[i];
}

// row_of, lanes_sum, lanes_max and row_max_logsum (base, n, lane, lid) -> (row max, log sum exp(x - max)).
// @region row-max-logsum
// Stand-ins for what this file uses of block row-max-logsum (with row-lanes, row-layout); kernels compile the block here.
override LANES: u32 = 1u; override ROWS: u32 = 64u; override WG: u32 = LANES * ROWS;
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
fn row_max_logsum(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> { return vec2<f32>(); }
// @end row-max-logsum

@compute @workgroup_size(WG)
fn cross_entropy_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  var w = 0.0;
  if (live) { w = mask[row]; }
  let base = row * p.cols;
  let st = row_max_logsum(base, select(0u, p.cols, w != 0.0), lane, lid); // masked rows read nothing
  if (live && lane == 0u) {
    var loss = 0.0;
    if (w != 0.0) {
      let t = min(targets[row], p.cols - 1u);
      loss = w * ((st.x - logits[base + t]) + st.y); // lse - x_t with lse = max + log(sum)
    }
    out[row] = loss;
  }
}

// ---- the fixed-order final reductions (one workgroup) ----

var<workgroup> scratch: array<f32, RED_WG>;

fn workgroup_sum(v: f32, lid: u32) -> f32 {
  scratch[lid] = v;
  workgroupBarrier();
  for (var s = RED_WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratch[lid] += scratch[lid + s]; }
    workgroupBarrier();
  }
  let r = scratch[0];
  workgroupBarrier();
  return r;
}

@compute @workgroup_size(RED_WG)
fn cross_entropy_reduce(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  var c = 0.0;
  for (var i = lid; i < p.rows; i += RED_WG) {
    s += red_rows[i];
    c += red_mask[i];
  }
  let total = workgroup_sum(s, lid);
  let n = workgroup_sum(c, lid);
  if (lid == 0u) { out[0] = select(0.0, total / n, n != 0.0); }
}

@compute @workgroup_size(RED_WG)
fn cross_entropy_mask_sum(@builtin(local_invocation_index) lid: u32) {
  var c = 0.0;
  for (var i = lid; i < p.rows; i += RED_WG) { c += red_rows[i]; }
  let n = workgroup_sum(c, lid);
  if (lid == 0u) { out[0] = n; }
}

// dLogits[n, v] = dLoss mask[n] / count (softmax(logits[n])_v - [v = t_n]); rows with mask 0 (or count 0) get 0.
@compute @workgroup_size(WG)
fn cross_entropy_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  let n = count[0];
  var w = 0.0;
  if (live) { w = mask[row]; }
  let on = w != 0.0 && n != 0.0;
  let base = row * p.cols;
  let st = row_max_logsum(base, select(0u, p.cols, on), lane, lid);
  if (!live) { return; } // after the merges
  if (!on) {
    for (var c = lane; c < p.cols; c += LANES) { out[base + c] = 0.0; }
    return;
  }
  let scale = p.dLoss * w / n;
  let t = targets[row];
  for (var c = lane; c < p.cols; c += LANES) {
    let pr = exp((logits[base + c] - st.x) - st.y);
    out[base + c] = scale * (pr - select(0.0, 1.0, c == t));
  }
}
