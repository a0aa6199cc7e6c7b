// softmax: row softmax and log-softmax over the last dimension of a (rows, cols) f32 matrix, forward and
// backward. Stable for logits of magnitude 1e4: the row max is subtracted first.
// Entry points: softmax_forward, log_softmax_forward (out, x); softmax_backward, log_softmax_backward (dx, y, dy)
// where y is the forward output. CPU twins: src/reference/softmax.ts.
//
// A workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts, rowLayout, picked from the row
// length only); lane i takes columns i, i + LANES, ...; the row's lanes are merged in lane order through a small
// workgroup buffer, one barrier per merge. LANES = 1 (short rows: a thread per row) has no barrier at all.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
override MERGE: u32 = 2u * WG;   // derived: two merge slots (alternating), so a merge needs one barrier

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (rows, cols): y, or dx for backward
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, cols): x, or y for backward
@group(0) @binding(3) var<storage, read> dy: array<f32>;        // (rows, cols): upstream gradient

const NEG_BIG: f32 = -3.402823e38;

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

// Row max and log of the sum of exp(x - max) over the first n columns (n = 0 past the last row).
fn row_stats(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> {
  var m = NEG_BIG;
  for (var c = lane; c < n; c += LANES) { m = max(m, x[base + c]); }
  let rowMax = lanes_merge(m, lid, 1u);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(x[base + c] - rowMax); }
  return vec2<f32>(rowMax, log(lanes_merge(s, lid, 0u)));
}

@compute @workgroup_size(WG)
fn softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  let st = row_stats(base, n, lane, lid);
  for (var c = lane; c < n; c += LANES) { out[base + c] = exp(x[base + c] - st.x - st.y); }
}

@compute @workgroup_size(WG)
fn log_softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  let st = row_stats(base, n, lane, lid);
  for (var c = lane; c < n; c += LANES) { out[base + c] = x[base + c] - st.x - st.y; }
}

// dx = y * (dy - sum(dy * y))
@compute @workgroup_size(WG)
fn softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += dy[base + c] * x[base + c]; }
  let dot = lanes_merge(s, lid, 0u);
  for (var c = lane; c < n; c += LANES) { out[base + c] = x[base + c] * (dy[base + c] - dot); }
}

// dx = dy - exp(y) * sum(dy), with y = log-softmax(x)
@compute @workgroup_size(WG)
fn log_softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += dy[base + c]; }
  let total = lanes_merge(s, lid, 0u);
  for (var c = lane; c < n; c += LANES) { out[base + c] = dy[base + c] - exp(x[base + c]) * total; }
}
