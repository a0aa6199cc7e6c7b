// softmax: row softmax and log-softmax over the last dimension of a (rows, cols) f32 matrix, forward and
// backward, one workgroup per row. Stable for logits of magnitude 1e4: the row max is subtracted first.
// Entry points: softmax_forward, log_softmax_forward (out, x); softmax_backward, log_softmax_backward (dx, y, dy)
// where y is the forward output. CPU twins: src/reference/softmax.ts.

override WG: u32 = 64u; // a power of two

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (rows, cols): y, or dx for backward
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, cols): x, or y for backward
@group(0) @binding(3) var<storage, read> dy: array<f32>;        // (rows, cols): upstream gradient

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
  for (var c = lid; c < p.cols; c += WG) { m = max(m, x[base + c]); }
  let rowMax = workgroup_max(m, lid);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(x[base + c] - rowMax); }
  return vec2<f32>(rowMax, log(workgroup_sum(s, lid)));
}

@compute @workgroup_size(WG)
fn softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let st = row_stats(base, lid);
  for (var c = lid; c < p.cols; c += WG) { out[base + c] = exp(x[base + c] - st.x - st.y); }
}

@compute @workgroup_size(WG)
fn log_softmax_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let st = row_stats(base, lid);
  for (var c = lid; c < p.cols; c += WG) { out[base + c] = x[base + c] - st.x - st.y; }
}

// dx = y * (dy - sum(dy * y))
@compute @workgroup_size(WG)
fn softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += dy[base + c] * x[base + c]; }
  let dot = workgroup_sum(s, lid);
  for (var c = lid; c < p.cols; c += WG) { out[base + c] = x[base + c] * (dy[base + c] - dot); }
}

// dx = dy - exp(y) * sum(dy), with y = log-softmax(x)
@compute @workgroup_size(WG)
fn log_softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += dy[base + c]; }
  let total = workgroup_sum(s, lid);
  for (var c = lid; c < p.cols; c += WG) { out[base + c] = dy[base + c] - exp(x[base + c]) * total; }
}
