// rmsnorm: Hugging Face Llama RMSNorm over the last dimension of (rows, C), y = w * x * rstd with
// rstd = 1/sqrt(mean(x^2) + eps) per row, saved for the backward. No mean subtraction, no bias (not LayerNorm).
// Entry points: rmsnorm_forward (out, rstd, x, weight);
//               rmsnorm_backward_weight (dWeight, dOut, x, rstd) and rmsnorm_backward (dx, dOut, x, rstd, weight),
//               the two dispatches of the backward.
// CPU twins: src/reference/rmsnorm.ts (rmsnormForward, rmsnormBackward).
//
// Specialized by src/kernels/value-type.ts: the alias V is f32 as written, or vec4<f32> where C divides by 4, and
// every loop over channels and every channel index below counts values of type V (W floats each): on SwiftShader
// a vec4 load costs about twice an f32 one, for four values. total() sums the components of a V (region total).
//
// Rows (forward, backward dx): a workgroup takes ROWS rows and gives each LANES threads (src/kernels/rows.ts,
// rowLayout, picked from C only); lane i takes channels i, i + LANES, ...; the row's lanes are summed in lane
// order through a small workgroup buffer (one barrier). LANES = 1 (C below 1024: a thread per row) has no
// barrier at all: SwiftShader runs barriers very slowly, and runs every workgroup of an entry point that has one
// more slowly, which is why dWeight is an entry of its own.
//
// dWeight (rmsnorm_backward_weight): workgroup g reduces dWeight over all rows for the COLS channels of chunk g
// (a column reduction: WG/COLS row lanes with compensated sums, then summed in lane order; no atomics, so
// deterministic). dWeight is always accumulated into.

override LANES: u32 = 1u;           // threads per row: 1, 4, 16 or 64
override ROWS: u32 = 64u;           // rows per workgroup
override WG: u32 = LANES * ROWS;    // derived: do not pass
override COLS: u32 = 4u;            // backward: channels per dWeight workgroup, a power of two dividing WG
override ACCUMULATE: bool = false;  // backward: dx += instead of dx =

alias V = f32;
const W: u32 = 1u; // floats per V

struct Params {
  rows: u32,
  C: u32,
  eps: f32,
}

fn total(v: V) -> f32 {
  // @region total
  return v;
  // @end total
}

@group(0) @binding(0) var<uniform> p: Params;

// rmsnorm_forward
@group(0) @binding(1) var<storage, read_write> out: array<V>;    // (N, C)
@group(0) @binding(2) var<storage, read_write> rstd: array<f32>; // (N)
@group(0) @binding(3) var<storage, read> x: array<V>;            // (N, C)
@group(0) @binding(4) var<storage, read> weight: array<V>;       // (C)

// rmsnorm_backward_weight and rmsnorm_backward (same binding numbers, other variables: WGSL allows that across
// entry points, and x is the forward's)
@group(0) @binding(1) var<storage, read_write> d_weight: array<V>; // weight entry: (C), accumulated into
@group(0) @binding(1) var<storage, read_write> dx: array<V>;       // dx entry: (N, C)
@group(0) @binding(2) var<storage, read> d_out: array<V>;          // (N, C)
@group(0) @binding(4) var<storage, read> rstd_b: array<f32>;       // (N)
@group(0) @binding(5) var<storage, read> weight_b: array<V>;       // dx entry: (C)

var<workgroup> scratch: array<f32, WG>;
var<workgroup> scratch_v: array<V, WG>;

// The sum of the row's LANES values of v, in lane order. Call in uniform control flow (once per entry: the
// buffer is not reused).
fn lanes_sum(v: f32, lid: u32) -> f32 {
  if (LANES == 1u) { return v; }
  scratch[lid] = v;
  workgroupBarrier();
  let r0 = lid - lid % LANES;
  var s = scratch[r0];
  for (var i = 1u; i < LANES; i++) { s += scratch[r0 + i]; }
  return s;
}

// This thread's row of block b (may be past the last row: such threads read nothing but join the merge).
fn row_of(b: u32, lid: u32) -> u32 {
  return b * ROWS + lid / LANES;
}

@compute @workgroup_size(WG)
fn rmsnorm_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid.x + wid.y * nwg.x, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  let n = select(0u, p.C / W, live);
  let base = row * (p.C / W);
  var ss = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let v = x[base + c];
    ss += total(v * v);
  }
  let r = 1.0 / sqrt(lanes_sum(ss, lid) / f32(p.C) + p.eps);
  if (live && lane == 0u) { rstd[row] = r; }
  for (var c = lane; c < n; c += LANES) { out[base + c] = weight[c] * (x[base + c] * r); }
}

// dWeight[c] += sum over rows n of dOut[n, c] * x[n, c] * rstd[n], for the COLS channels (of type V) of `chunk`.
fn weight_columns(chunk: u32, lid: u32) {
  let lanes = WG / COLS;
  let cc = lid % COLS;
  let lane = lid / COLS;
  let c = chunk * COLS + cc;
  let CV = p.C / W;
  // Compensated (Kahan) sum per lane: a lane adds N/lanes terms of both signs, and the twin sums in f64.
  var s = V(0.0);
  var comp = V(0.0);
  if (c < CV) {
    for (var n = lane; n < p.rows; n += lanes) {
      let y = d_out[n * CV + c] * x[n * CV + c] * rstd_b[n] - comp;
      let t = s + y;
      comp = (t - s) - y;
      s = t;
    }
  }
  scratch_v[lid] = s;
  workgroupBarrier();
  if (lane == 0u && c < CV) { // the lanes of channel c sit at cc, cc + COLS, ...: summed in lane order
    var sum = scratch_v[cc];
    for (var i = 1u; i < lanes; i++) { sum += scratch_v[cc + i * COLS]; }
    d_weight[c] += sum;
  }
}

@compute @workgroup_size(WG)
fn rmsnorm_backward_weight(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  weight_columns(wid.x + wid.y * nwg.x, lid);
}

// dx_j = r * w_j * dy_j - r^3 * x_j / C * sum_i(dy_i * w_i * x_i), ROWS rows per workgroup.
@compute @workgroup_size(WG)
fn rmsnorm_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid.x + wid.y * nwg.x, lid);
  let lane = lid % LANES;
  let live = row < p.rows;
  let n = select(0u, p.C / W, live);
  let base = row * (p.C / W);
  var r = 0.0;
  if (live) { r = rstd_b[row]; }
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += total(d_out[base + c] * weight_b[c] * x[base + c]); }
  let k = r * r * r * lanes_sum(s, lid) / f32(p.C);
  for (var c = lane; c < n; c += LANES) {
    let gx = r * weight_b[c] * d_out[base + c] - k * x[base + c];
    if (ACCUMULATE) {
      dx[base + c] += gx;
    } else {
      dx[base + c] = gx;
    }
  }
}
