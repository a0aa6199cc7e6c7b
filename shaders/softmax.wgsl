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
// Stand-ins for what this file uses of block row-max-logsum (with row-lanes, row-layout); kernels compile the block here.
override LANES: u32 = 1u; override ROWS: u32 = 64u; override WG: u32 = LANES * ROWS;
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
fn lanes_sum(v: f32, lid: u32) -> f32 { return v; }
fn row_max_logsum(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> { return vec2<f32>(); }
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
