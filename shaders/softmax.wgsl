// softmax: row softmax and log-softmax over the last dimension of a (rows, cols) f32 matrix, forward and
// backward. Stable for logits of magnitude 1e4: the row max is subtracted first.
// Entry points: softmax_forward, log_softmax_forward (out, x); softmax_backward, log_softmax_backward (dx, y, dy)
// where y is the forward output. CPU twins: src/reference/softmax.ts.
// Rows are laid out by block row-layout (shaders/blocks/row-layout.wgsl: LANES threads per row, ROWS rows per
// workgroup, lanes merged in lane order); the forward's max and normaliser come from block row-max-logsum,
// which cross-entropy.wgsl includes too.

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (rows, cols): y, or dx for backward
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, cols): x, or y for backward
@group(0) @binding(3) var<storage, read> dy: array<f32>;        // (rows, cols): upstream gradient

// Element i of the input, for block row-max-logsum.
fn row_value(i: u32) -> f32 {
  return x[i];
}

// row_of, lanes_sum, lanes_max and row_max_logsum (base, n, lane, lid) -> (row max, log sum exp(x - max)).
// @region row-max-logsum
// Block row-max-logsum (region row-max-logsum): a row's max and the log of its softmax normaliser, for
// the kernels without a temperature (softmax, cross-entropy); includes block row-lanes. A fragment, not a
// shader: shaders hold it in a region of its name. The including shader defines
// `fn row_value(i: u32) -> f32`, element i of its (rows, cols) input, so the block needs no buffer of its own.

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

// (max, log sum exp(v - max)) over the first n columns of the row at base (n = 0: reads nothing), with
// v = row_value(base + c); log-sum-exp = max + log sum. Call in uniform control flow.
fn row_max_logsum(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> {
  var m = NEG_BIG;
  for (var c = lane; c < n; c += LANES) { m = max(m, row_value(base + c)); }
  let rowMax = lanes_max(m, lid);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(row_value(base + c) - rowMax); }
  return vec2<f32>(rowMax, log(lanes_sum(s, lid)));
}
// @end row-max-logsum

@compute @workgroup_size(WG)
fn softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  let st = row_max_logsum(base, n, lane, lid);
  for (var c = lane; c < n; c += LANES) { out[base + c] = exp(x[base + c] - st.x - st.y); }
}

@compute @workgroup_size(WG)
fn log_softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  let base = row * p.cols;
  let st = row_max_logsum(base, n, lane, lid);
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
  let dot = lanes_sum(s, lid);
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
  let total = lanes_sum(s, lid);
  for (var c = lane; c < n; c += LANES) { out[base + c] = dy[base + c] - exp(x[base + c]) * total; }
}
