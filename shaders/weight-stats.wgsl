// weight-stats: how far one weight matrix W (R, C) moved from the run's starting copy W_0, and its top singular
// direction. Entry points: weight_update_stats, rank1_apply. CPU twins: src/reference/weight-stats.ts
// (weightUpdateStats, rank1Apply).
//
// weight_update_stats runs as ONE workgroup per matrix (a measurement is a handful of small matrices every few
// steps, not a hot loop): it never materializes dW = W - W_0 but reads both each time. Its phases are separated by
// storage barriers, which order the workgroup's own storage writes:
//   1. ||dW||_F^2 and ||W_0||_F^2, each thread a strided part, then a workgroup sum;
//   2. `iterations` power steps from powerStart(c): u = dW v (a thread per row), v = dW^T u (a thread per column),
//      v /= ||v|| (a workgroup sum);
//   3. u = dW v with the unit v, sigma_1^2 = ||u||^2.
// out[3 slot ..] gets (||dW||^2, ||W_0||^2, sigma_1^2); u and v keep dW v and v for rank1_apply.
// rank1_apply: w[r, c] = w0[r, c] + u[r] v[c], one thread per element.

const WG: u32 = 64u; // weight_update_stats' one workgroup; 64 keeps SwiftShader's barriers cheap
override APPLY_WG: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
  slot: u32,
  iterations: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (matrices * 3) stats; weight_update_stats only
@group(0) @binding(2) var<storage, read_write> u: array<f32>;   // (rows) dW v
@group(0) @binding(3) var<storage, read_write> v: array<f32>;   // (cols) the top right singular vector
@group(0) @binding(4) var<storage, read> w: array<f32>;         // (rows, cols) current weights
@group(0) @binding(5) var<storage, read> w0: array<f32>;        // (rows, cols) starting weights

var<workgroup> red: array<f32, WG>;

// The workgroup's sum of x (every thread's) in a fixed order: each thread adds the WG partial sums itself. Two
// barriers where a tree takes log2(WG) + 2; barriers are most of this kernel's time on SwiftShader. Call in
// uniform control flow.
fn group_sum(x: f32, lid: u32) -> f32 {
  workgroupBarrier(); // earlier reads of red are done
  red[lid] = x;
  workgroupBarrier();
  var s = 0.0;
  for (var i = 0u; i < WG; i++) { s += red[i]; }
  return s;
}

// The power iteration's start vector at column c: a PCG hash of c mapped to [-1, 1) (the twin's powerStart).
fn power_start(c: u32) -> f32 {
  let x = c * 747796405u + 2891336453u;
  let word = ((x >> ((x >> 28u) + 4u)) ^ x) * 277803737u;
  let h = (word >> 22u) ^ word;
  return f32(h >> 8u) / 8388608.0 - 1.0;
}

// u[r] = sum_c dW[r, c] v[c] for this thread's rows; returns the sum of their squares.
fn multiply_v(lid: u32) -> f32 {
  var sq = 0.0;
  for (var r = lid; r < p.rows; r += WG) {
    var s = 0.0;
    let base = r * p.cols;
    for (var c = 0u; c < p.cols; c++) { s += (w[base + c] - w0[base + c]) * v[c]; }
    u[r] = s;
    sq += s * s;
  }
  return sq;
}

@compute @workgroup_size(WG)
fn weight_update_stats(@builtin(local_invocation_index) lid: u32) {
  let n = p.rows * p.cols;
  var dsq = 0.0;
  var ssq = 0.0;
  for (var i = lid; i < n; i += WG) {
    let d = w[i] - w0[i];
    dsq += d * d;
    ssq += w0[i] * w0[i];
  }
  let delta_sq = group_sum(dsq, lid);
  let start_sq = group_sum(ssq, lid);
  for (var c = lid; c < p.cols; c += WG) { v[c] = power_start(c); }
  storageBarrier();
  for (var k = 0u; k < p.iterations; k++) {
    _ = multiply_v(lid);
    storageBarrier();
    var sq = 0.0;
    for (var c = lid; c < p.cols; c += WG) {
      var s = 0.0;
      for (var r = 0u; r < p.rows; r++) { s += (w[r * p.cols + c] - w0[r * p.cols + c]) * u[r]; }
      v[c] = s;
      sq += s * s;
    }
    let norm = group_sum(sq, lid);
    let inv = select(0.0, inverseSqrt(norm), norm > 0.0);
    // Each thread scales the columns it wrote; the barrier below publishes them before the next u = dW v.
    for (var c = lid; c < p.cols; c += WG) { v[c] *= inv; }
    storageBarrier();
  }
  let sigma_sq = group_sum(multiply_v(lid), lid);
  if (lid == 0u) {
    out[3u * p.slot] = delta_sq;
    out[3u * p.slot + 1u] = start_sq;
    out[3u * p.slot + 2u] = sigma_sq;
  }
}

@group(0) @binding(1) var<storage, read_write> w_out: array<f32>; // (rows, cols)
@group(0) @binding(2) var<storage, read> w0_in: array<f32>;       // (rows, cols)
@group(0) @binding(3) var<storage, read> u_in: array<f32>;        // (rows)
@group(0) @binding(4) var<storage, read> v_in: array<f32>;        // (cols)

@compute @workgroup_size(APPLY_WG)
fn rank1_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * APPLY_WG;
  if (i >= p.rows * p.cols) { return; }
  let r = i / p.cols;
  let c = i - r * p.cols;
  w_out[i] = w0_in[r * p.cols + c] + u_in[r] * v_in[c];
}
