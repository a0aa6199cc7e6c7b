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
// Row entries (rows, backward): a workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts,
// rowLayout, picked from the row length only). Lane i takes columns i, i + LANES, ...; the row's lanes are merged
// in lane order through a small workgroup buffer, one barrier per merge. LANES = 1 (short rows: a thread per
// row) has no barrier at all: SwiftShader runs barriers very slowly.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override MERGE: u32 = 2u * WG;   // derived: two merge slots (alternating), so a merge needs one barrier
override RED_WG: u32 = 256u;     // reduce and mask_sum: threads of their one workgroup, a power of two

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

const NEG_BIG: f32 = -3.402823e38;

// ---- lanes of a row ----

var<workgroup> lane_buf: array<f32, MERGE>;
var<private> merge_slot: u32;

// This thread's row (may be past the last row: such threads read nothing but join the merges).
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
}

// The row's LANES values of v in lane order, combined with op (0: sum, 1: max). Call in uniform control flow.
// Slots alternate, so a slot is rewritten only after the next merge's barrier: one barrier per merge.
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

// Row max and log of the sum of exp(x - max) over the first n columns (n = 0 for rows that read nothing).
fn row_stats(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> {
  var m = NEG_BIG;
  for (var c = lane; c < n; c += LANES) { m = max(m, logits[base + c]); }
  let rowMax = lanes_merge(m, lid, 1u);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(logits[base + c] - rowMax); }
  return vec2<f32>(rowMax, log(lanes_merge(s, lid, 0u)));
}

@compute @workgroup_size(WG)
fn cross_entropy_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  var w = 0.0;
  if (live) { w = mask[row]; }
  let base = row * p.cols;
  let st = row_stats(base, select(0u, p.cols, w != 0.0), lane, lid); // masked rows read nothing
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
  let st = row_stats(base, select(0u, p.cols, on), lane, lid);
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
