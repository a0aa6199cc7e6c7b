// reduce: row reductions of a (rows, cols) f32 matrix into (rows), one workgroup per row.
// Entry points: reduce_sum_rows, reduce_max_rows. CPU twins: src/reference/reduce.ts (reduceSumRows, reduceMaxRows).

override WG: u32 = 64u; // a power of two

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (rows)
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, cols)

var<workgroup> scratch: array<f32, WG>;

@compute @workgroup_size(WG)
fn reduce_sum_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; } // uniform across the workgroup
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += x[row * p.cols + c]; }
  scratch[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) { scratch[lid] += scratch[lid + stride]; }
    workgroupBarrier();
  }
  if (lid == 0u) { out[row] = scratch[0]; }
}

@compute @workgroup_size(WG)
fn reduce_max_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  var m = -3.402823e38;
  for (var c = lid; c < p.cols; c += WG) { m = max(m, x[row * p.cols + c]); }
  scratch[lid] = m;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) { scratch[lid] = max(scratch[lid], scratch[lid + stride]); }
    workgroupBarrier();
  }
  if (lid == 0u) { out[row] = scratch[0]; }
}
