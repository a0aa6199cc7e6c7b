// reduce: row reductions of a (rows, cols) f32 matrix into (rows).
// Entry points: reduce_sum_rows, reduce_max_rows. CPU twins: src/reference/reduce.ts (reduceSumRows, reduceMaxRows).
//
// A workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts, rowLayout, picked from the row
// length only); lane i takes columns i, i + LANES, ... (a compensated sum for reduce_sum_rows); the row's lanes
// are merged in lane order through a small workgroup buffer (one barrier). LANES = 1 (short rows: a thread per
// row) has no barrier at all.

override LANES: u32 = 1u;        // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (rows)
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, cols)

var<workgroup> scratch: array<f32, WG>;

// The row's LANES values of v in lane order, combined with op (0: sum, 1: max). Call in uniform control flow,
// once per entry (the buffer is not reused).
fn lanes_merge(v: f32, lid: u32, op: u32) -> f32 {
  if (LANES == 1u) { return v; }
  scratch[lid] = v;
  workgroupBarrier();
  let r0 = lid - lid % LANES;
  var a = scratch[r0];
  for (var i = 1u; i < LANES; i++) {
    let b = scratch[r0 + i];
    if (op == 0u) { a += b; } else { a = max(a, b); }
  }
  return a;
}

@compute @workgroup_size(WG)
fn reduce_sum_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = (wid.x + wid.y * nwg.x) * ROWS + lid / LANES; // past the last row: reads nothing, joins the merge
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  // Compensated (Kahan) sum per lane: with a thread per row, a lane adds up to 1023 terms of both signs in
  // sequence, whose rounding errors would otherwise pile up (the twin sums in f64).
  var s = 0.0;
  var comp = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let y = x[row * p.cols + c] - comp;
    let t = s + y;
    comp = (t - s) - y;
    s = t;
  }
  let total = lanes_merge(s, lid, 0u);
  if (row < p.rows && lane == 0u) { out[row] = total; }
}

@compute @workgroup_size(WG)
fn reduce_max_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
  let lane = lid % LANES;
  let n = select(0u, p.cols, row < p.rows);
  var m = -3.402823e38;
  for (var c = lane; c < n; c += LANES) { m = max(m, x[row * p.cols + c]); }
  let best = lanes_merge(m, lid, 1u);
  if (row < p.rows && lane == 0u) { out[row] = best; }
}
