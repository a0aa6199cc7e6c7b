// bias: the per-column bias of a Linear layer (Qwen2's q/k/v projections) on a (rows, cols) f32 matrix.
// Entry points: bias_add (x[r, c] += bias[c], in place, one element per invocation) and bias_grad
// (dbias[c] += sum_r dy[r, c], one column per invocation, a compensated sum down the column).
// CPU twins: src/reference/bias.ts (biasAdd, biasGrad).

override WG: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // bias_add: x (rows, cols); bias_grad: dbias (cols)
@group(0) @binding(2) var<storage, read> a: array<f32>;         // bias_add: bias (cols); bias_grad: dy (rows, cols)

// Workgroups may be spread over x and y (see src/gpu/recorder.ts grid()).
fn index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

@compute @workgroup_size(WG)
fn bias_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i < p.rows * p.cols) { out[i] += a[i % p.cols]; }
}

// Consecutive invocations take consecutive columns, so each step down the rows reads one contiguous run.
@compute @workgroup_size(WG)
fn bias_grad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let c = index(wid, nwg, lid);
  if (c >= p.cols) { return; }
  // Kahan sum: a column of a training batch has thousands of terms of both signs (the twin sums in f64).
  var s = 0.0;
  var comp = 0.0;
  for (var r = 0u; r < p.rows; r++) {
    let y = a[r * p.cols + c] - comp;
    let t = s + y;
    comp = (t - s) - y;
    s = t;
  }
  out[c] += s;
}
