// rmsnorm: Hugging Face Llama RMSNorm over the last dimension of (rows, C), y = w * x * rstd with
// rstd = 1/sqrt(mean(x^2) + eps) per row, saved for the backward. No mean subtraction, no bias (not LayerNorm).
// Entry points: rmsnorm_forward (out, rstd, x, weight); rmsnorm_backward (dx, dWeight, dOut, x, weight, rstd).
// CPU twins: src/reference/rmsnorm.ts (rmsnormForward, rmsnormBackward).
//
// The backward is one dispatch with two kinds of workgroup: the first ceil(C/COLS) workgroups each reduce
// dWeight over all rows for COLS channels (a column reduction: WG/COLS row lanes with compensated sums, then a
// fixed tree; no atomics, so deterministic), the rest handle one row of dx each, as the forward does. dWeight is
// always accumulated into.

override WG: u32 = 64u;             // a power of two
override COLS: u32 = 4u;            // backward: channels per dWeight workgroup, a power of two <= WG
override ACCUMULATE: bool = false;  // backward: dx += instead of dx =

struct Params {
  rows: u32, // N = B*T
  C: u32,
  eps: f32,
}

@group(0) @binding(0) var<uniform> p: Params;

// rmsnorm_forward
@group(0) @binding(1) var<storage, read_write> out: array<f32>;  // (N, C)
@group(0) @binding(2) var<storage, read_write> rstd: array<f32>; // (N)
@group(0) @binding(3) var<storage, read> x: array<f32>;          // (N, C)
@group(0) @binding(4) var<storage, read> weight: array<f32>;     // (C)

// rmsnorm_backward (same binding numbers, other variables: WGSL allows that across entry points)
@group(0) @binding(1) var<storage, read_write> dx: array<f32>;       // (N, C)
@group(0) @binding(2) var<storage, read_write> d_weight: array<f32>; // (C), accumulated into
@group(0) @binding(3) var<storage, read> d_out: array<f32>;          // (N, C)
@group(0) @binding(4) var<storage, read> x_b: array<f32>;            // (N, C)
@group(0) @binding(5) var<storage, read> weight_b: array<f32>;       // (C)
@group(0) @binding(6) var<storage, read> rstd_b: array<f32>;         // (N)

var<workgroup> scratch: array<f32, WG>;

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

// One workgroup per row.
@compute @workgroup_size(WG)
fn rmsnorm_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  var ss = 0.0;
  for (var c = lid; c < p.C; c += WG) {
    let v = x[base + c];
    ss += v * v;
  }
  let r = 1.0 / sqrt(workgroup_sum(ss, lid) / f32(p.C) + p.eps);
  if (lid == 0u) { rstd[row] = r; }
  for (var c = lid; c < p.C; c += WG) { out[base + c] = weight[c] * (x[base + c] * r); }
}

// dWeight[c] += sum over rows n of dOut[n, c] * x[n, c] * rstd[n], for the COLS channels of `chunk`.
fn weight_columns(chunk: u32, lid: u32) {
  let lanes = WG / COLS;
  let cc = lid % COLS;
  let lane = lid / COLS;
  let c = chunk * COLS + cc;
  // Compensated (Kahan) sum per lane: a lane adds N/lanes terms of both signs, and the twin sums in f64.
  var s = 0.0;
  var comp = 0.0;
  if (c < p.C) {
    for (var n = lane; n < p.rows; n += lanes) {
      let y = d_out[n * p.C + c] * x_b[n * p.C + c] * rstd_b[n] - comp;
      let t = s + y;
      comp = (t - s) - y;
      s = t;
    }
  }
  scratch[lid] = s;
  workgroupBarrier();
  for (var stride = lanes / 2u; stride > 0u; stride >>= 1u) {
    if (lane < stride) { scratch[lid] += scratch[lid + stride * COLS]; }
    workgroupBarrier();
  }
  if (lane == 0u && c < p.C) { d_weight[c] += scratch[cc]; }
}

// dx_j = r * w_j * dy_j - r^3 * x_j / C * sum_i(dy_i * w_i * x_i), one workgroup per row,
// after the ceil(C/COLS) dWeight workgroups (first, so the longer column sums start early).
@compute @workgroup_size(WG)
fn rmsnorm_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * nwg.x;
  let col_groups = (p.C + COLS - 1u) / COLS;
  if (g < col_groups) {
    weight_columns(g, lid);
    return;
  }
  let row = g - col_groups;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  let r = rstd_b[row];
  var s = 0.0;
  for (var c = lid; c < p.C; c += WG) { s += d_out[base + c] * weight_b[c] * x_b[base + c]; }
  let k = r * r * r * workgroup_sum(s, lid) / f32(p.C);
  for (var c = lid; c < p.C; c += WG) {
    let gx = r * weight_b[c] * d_out[base + c] - k * x_b[base + c];
    if (ACCUMULATE) {
      dx[base + c] += gx;
    } else {
      dx[base + c] = gx;
    }
  }
}
