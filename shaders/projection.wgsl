// projection: the fused few-rows projections of a decode step (y = op(x) W^T, W stored (N, K) like nn.Linear),
// each reading its weights once in one dispatch instead of one matmul per projection and separate epilogues.
// Entry points:
//   projection_qkv:     y0 = op(x) W0^T (+ b0), y1 = op(x) W1^T (+ b1), y2 = op(x) W2^T (+ b2): attention's q, k and
//                       v products from three weight buffers; the column space is [0, N0 + N1 + N2) and each
//                       invocation's 4 columns lie in one of the three (N0 and N1 divide by 4).
//   projection_gate_up: act = silu(op(x) W0^T) * (op(x) W1^T): the MLP's gate and up products with SwiGLU; with
//                       PAIR the two products themselves, written at outAt0 and outAt1 of one buffer (a LoRA
//                       layer's x A^T for its gate and up adapters, whose xa rows are views of one buffer).
//   projection_qkv_lora, projection_gate_up_lora: the same with a LoRA epilogue, y_s += scale * xa_s B_s^T added to
//                       each product before its bias or SwiGLU (a decode step's adapted projections: xa_s = op(x)
//                       A_s^T computed before, B_s (N_s, rank)), as the trainer's matmul(y, xa, B, accumulate) adds it.
//   projection_add_lora: y += x W0^T, then y += scale * xa B^T: an adapted o or down product accumulating into the
//                       residual stream, as the trainer's two accumulating matmuls add them.
// The epilogue sums along the rank in the order of the matmul variant the trainer runs for xa B^T (LORA_K1, as K1
// for the base products); xa and B are read as f32 from lora_xa and lora_b at xaAt0..2 and bAt0..2 (views of one
// buffer each: a layer's xa rows and the adapters' arena). projection_qkv_lora binds 10 storage buffers (the model
// runs it only where the device allows them, projectionQkvLoraFits); every other entry point binds 8 at most.
// op(x) = x, or with NORM the RMSNorm folded in: op(x)[i, k] = g[k] * (x[i, k] * rstd_i), rstd_i =
// 1/sqrt(mean_k x[i, k]^2 + eps), each row's rstd summed first in rmsnorm.wgsl's order (LANES strided lanes of vec4
// squares merged in lane order), so op(x) is bit for bit the row rmsnorm_forward writes and no normed copy of x is
// written. The products are summed along K in the order of the matmul variant they must equal (K1 off: matmul_vec4's
// and the register tiles' A*B^T order, a dot product of 4 k at a time added to the sum; K1 on: matmul_blocked's,
// strided's, tiled's and naive's, one k at a time), so the outputs equal rmsnorm_forward, matmul (A*B^T), biasAdd
// and swiglu_forward in sequence wherever matmul runs a variant of that order (src/kernels/projection.ts,
// projectionSumOrder: the sampler's log-probs equal the trainer's).
// Each invocation computes a 4 x 4 tile of rows and columns (matmul.wgsl's matmul_vec4 A*B^T loop), K divisible
// by 4; out-of-range rows and columns read a clamped index and are not stored. A workgroup is WG_X column tiles by
// WG_Y row tiles, shaped to the rows (src/kernels/projection.ts projectionWorkgroup: 64 x 1 for a decode step's 4
// rows), and with NORM sums its rows' rstd once for all its tiles. projection_qkv picks its weight buffer once per
// invocation and runs one K loop per buffer (a choice inside the loop cost a branch per k on SwiftShader), or with
// ONE_K_LOOP one loop choosing at each k (lavapipe, where the three loops compiled over the 2 s budget).
// Vectors: the gain g at gainAt and the biases b0, b1, b2 at biasAt0..2 of one f32 array (a layer's arena of its
// norm gain and q/k/v biases, or the gain itself): 8 storage buffers at most, WebGPU's default limit.
// The weights may be stored bf16/f16 (src/kernels/projection.ts rewrites W0_4..W2_4, Wg_4 and Wu_4 through
// half-operand.ts).
// CPU twins: src/reference/projection.ts (projectionQkv, projectionGateUp).

override NORM: bool = false;
override LANES: u32 = 1u; // rmsnorm.wgsl's lanes per row for rows of K (src/kernels/rows.ts rowLayout)
override BIAS: bool = false;
override K1: bool = false; // sum one k at a time (matmul_blocked's order) instead of 4 k per dot product
override LORA_K1: bool = false; // the same for the LoRA epilogue's sum along the rank
override PAIR: bool = false; // projection_gate_up: store the two products, no SwiGLU
// projection_qkv(_lora): one K loop that picks the weight buffer at each k instead of one loop per buffer (the same
// products in the same order): lavapipe compiles it in about 60% of the time and runs it as fast; SwiftShader runs it
// 2.5x slower (src/kernels/projection.ts qkvOneLoop).
override ONE_K_LOOP: bool = false;
override WG_X: u32 = 8u;
override WG_Y: u32 = 8u;

struct Params {
  M: u32,
  K: u32,
  N0: u32,
  N1: u32,
  N2: u32,
  gainAt: u32,
  biasAt0: u32,
  biasAt1: u32,
  biasAt2: u32,
  eps: f32,
  rank: u32,
  loraScale: f32,
  xaAt0: u32,
  xaAt1: u32,
  xaAt2: u32,
  bAt0: u32,
  bAt1: u32,
  bAt2: u32,
  outAt0: u32,
  outAt1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> Y0: array<f32>; // (M, N0); projection_gate_up: act (M, N0)
@group(0) @binding(2) var<storage, read_write> Y1: array<f32>; // (M, N1)
@group(0) @binding(3) var<storage, read_write> Y2: array<f32>; // (M, N2)
@group(0) @binding(4) var<storage, read> X4: array<vec4<f32>>; // (M, K)
@group(0) @binding(5) var<storage, read> W0_4: array<vec4<f32>>; // (N0, K)
@group(0) @binding(6) var<storage, read> W1_4: array<vec4<f32>>; // (N1, K)
@group(0) @binding(7) var<storage, read> W2_4: array<vec4<f32>>; // (N2, K)
@group(0) @binding(8) var<storage, read> vecs: array<f32>;     // gain (K) at gainAt; biases at biasAt0..2

// projection_gate_up (its own variables at its own bindings: WGSL allows that across entry points)
@group(0) @binding(1) var<storage, read_write> act: array<f32>;  // (M, N0)
@group(0) @binding(2) var<storage, read> Xg4: array<vec4<f32>>;  // (M, K)
@group(0) @binding(3) var<storage, read> Wg_4: array<vec4<f32>>; // gate (N0, K)
@group(0) @binding(4) var<storage, read> Wu_4: array<vec4<f32>>; // up (N0, K)
@group(0) @binding(5) var<storage, read> gain_g: array<f32>;     // (K) at gainAt

// The LoRA epilogue's operands (the *_lora entry points)
@group(0) @binding(9) var<storage, read> lora_xa: array<f32>;  // xa_s (M, rank) at xaAt0..2
@group(0) @binding(10) var<storage, read> lora_b: array<f32>;  // B_s (N_s, rank) at bAt0..2

fn gain4(k4: u32) -> vec4<f32> {
  let at = p.gainAt + 4u * k4;
  return vec4<f32>(vecs[at], vecs[at + 1u], vecs[at + 2u], vecs[at + 3u]);
}
fn gain4_g(k4: u32) -> vec4<f32> {
  let at = p.gainAt + 4u * k4;
  return vec4<f32>(gain_g[at], gain_g[at + 1u], gain_g[at + 2u], gain_g[at + 3u]);
}

// rmsnorm_forward's rstd of a row from its vec4s v(c), c < K/4: lane l sums the squares of vec4s l, l + LANES, ...
// (each vec4's four in order), and the lanes are added in lane order. One copy per input array (an entry point may
// use only its own bindings).
fn row_rstd_qkv(a: u32) -> f32 {
  let n = p.K / 4u;
  var total_ss = 0.0;
  for (var lane = 0u; lane < LANES; lane++) {
    var ss = 0.0;
    for (var c = lane; c < n; c += LANES) {
      let sq = X4[a + c] * X4[a + c];
      ss += sq.x + sq.y + sq.z + sq.w;
    }
    if (lane == 0u) { total_ss = ss; } else { total_ss += ss; }
  }
  return 1.0 / sqrt(total_ss / f32(p.K) + p.eps);
}
fn row_rstd_gate_up(a: u32) -> f32 {
  let n = p.K / 4u;
  var total_ss = 0.0;
  for (var lane = 0u; lane < LANES; lane++) {
    var ss = 0.0;
    for (var c = lane; c < n; c += LANES) {
      let sq = Xg4[a + c] * Xg4[a + c];
      ss += sq.x + sq.y + sq.z + sq.w;
    }
    if (lane == 0u) { total_ss = ss; } else { total_ss += ss; }
  }
  return 1.0 / sqrt(total_ss / f32(p.K) + p.eps);
}

// With NORM each workgroup sums its rows' rstd once, before any invocation returns: row r of the workgroup's 4 * WG_Y
// rows by invocation r (rows past M skipped), into rstd_wg, then a barrier; the tiles read their rows' from it.
// Each rstd is summed by one invocation in row_rstd's order, so it is the value every tile computed for itself
// before, without each of the WG_X column tiles re-reading the rows of x.
var<workgroup> rstd_wg: array<f32, 4u * WG_Y>;

fn rstd_of_rows_qkv(row0: u32, li: u32) {
  if (!NORM) { return; }
  for (var r = li; r < 4u * WG_Y; r += WG_X * WG_Y) {
    if (row0 + r < p.M) { rstd_wg[r] = row_rstd_qkv((row0 + r) * (p.K / 4u)); }
  }
  workgroupBarrier();
}
fn rstd_of_rows_gate_up(row0: u32, li: u32) {
  if (!NORM) { return; }
  for (var r = li; r < 4u * WG_Y; r += WG_X * WG_Y) {
    if (row0 + r < p.M) { rstd_wg[r] = row_rstd_gate_up((row0 + r) * (p.K / 4u)); }
  }
  workgroupBarrier();
}

// The tile's 4 rows' rstd (ones without NORM): rows i0.. clamped to the last, from rstd_wg (row0: the workgroup's
// first row).
fn rstd4(i0: u32, row0: u32) -> vec4<f32> {
  if (!NORM) { return vec4<f32>(1.0); }
  let iLast = p.M - 1u;
  return vec4<f32>(rstd_wg[i0 - row0], rstd_wg[min(i0 + 1u, iLast) - row0], rstd_wg[min(i0 + 2u, iLast) - row0],
                   rstd_wg[min(i0 + 3u, iLast) - row0]);
}

// A 4-row tile of vec4s: the rows' x at one k (normed with NORM), or the rows' sums of 4 columns.
struct Tile4 {
  r0: vec4<f32>,
  r1: vec4<f32>,
  r2: vec4<f32>,
  r3: vec4<f32>,
}

// The tile's rows' vec4 k of x, with NORM g * (x * rstd) as rmsnorm_forward writes it.
fn x_tile_qkv(a: vec4<u32>, k: u32, r: vec4<f32>) -> Tile4 {
  var t = Tile4(X4[a.x + k], X4[a.y + k], X4[a.z + k], X4[a.w + k]);
  if (NORM) {
    let g = gain4(k);
    t = Tile4(g * (t.r0 * r.x), g * (t.r1 * r.y), g * (t.r2 * r.z), g * (t.r3 * r.w));
  }
  return t;
}
fn x_tile_gate_up(a: vec4<u32>, k: u32, r: vec4<f32>) -> Tile4 {
  var t = Tile4(Xg4[a.x + k], Xg4[a.y + k], Xg4[a.z + k], Xg4[a.w + k]);
  if (NORM) {
    let g = gain4_g(k);
    t = Tile4(g * (t.r0 * r.x), g * (t.r1 * r.y), g * (t.r2 * r.z), g * (t.r3 * r.w));
  }
  return t;
}

// One vec4 of k of a row's 4 columns added to its sum acc: with K1 one k at a time, each k's product with the 4
// columns' weights added as matmul_blocked adds it (acc += a * b); else the 4 k's dot product per column, as
// matmul_vec4 adds it.
fn step4(acc: vec4<f32>, x: vec4<f32>, y0: vec4<f32>, y1: vec4<f32>, y2: vec4<f32>, y3: vec4<f32>) -> vec4<f32> {
  return step4_in(K1, acc, x, y0, y1, y2, y3);
}
fn step4_in(k1: bool, acc: vec4<f32>, x: vec4<f32>, y0: vec4<f32>, y1: vec4<f32>, y2: vec4<f32>,
            y3: vec4<f32>) -> vec4<f32> {
  var s = acc;
  if (k1) {
    s += x.x * vec4<f32>(y0.x, y1.x, y2.x, y3.x);
    s += x.y * vec4<f32>(y0.y, y1.y, y2.y, y3.y);
    s += x.z * vec4<f32>(y0.z, y1.z, y2.z, y3.z);
    s += x.w * vec4<f32>(y0.w, y1.w, y2.w, y3.w);
  } else {
    s += vec4<f32>(dot(x, y0), dot(x, y1), dot(x, y2), dot(x, y3));
  }
  return s;
}

// The tile's rows (clamped to the last) and their first vec4 in X4.
fn row_starts(i0: u32) -> vec4<u32> {
  let iLast = p.M - 1u;
  let K4 = p.K / 4u;
  return vec4<u32>(i0, min(i0 + 1u, iLast), min(i0 + 2u, iLast), min(i0 + 3u, iLast)) * K4;
}

// Stores row i of a tile into y of width n at column c0, skipping the columns past n.
fn store_row0(i: u32, c0: u32, v: vec4<f32>) {
  for (var c = 0u; c < 4u; c++) { if (c0 + c < p.N0) { Y0[i * p.N0 + c0 + c] = v[c]; } }
}
fn store_row1(i: u32, c0: u32, v: vec4<f32>) {
  for (var c = 0u; c < 4u; c++) { if (c0 + c < p.N1) { Y1[i * p.N1 + c0 + c] = v[c]; } }
}
fn store_row2(i: u32, c0: u32, v: vec4<f32>) {
  for (var c = 0u; c < 4u; c++) { if (c0 + c < p.N2) { Y2[i * p.N2 + c0 + c] = v[c]; } }
}

fn bias4(at: u32, c0: u32, n: u32) -> vec4<f32> {
  if (!BIAS) { return vec4<f32>(0.0); }
  let last = n - 1u;
  return vec4<f32>(vecs[at + c0], vecs[at + min(c0 + 1u, last)], vecs[at + min(c0 + 2u, last)],
                   vecs[at + min(c0 + 3u, last)]);
}

// The K loop of a 4 x 4 tile against one weight buffer (b: the tile's 4 columns' first vec4s), one function per
// buffer: the buffer is chosen once per invocation, not per k.
fn product_w0(a: vec4<u32>, b: vec4<u32>, r: vec4<f32>) -> array<vec4<f32>, 4> {
  var t = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k = 0u; k < p.K / 4u; k++) {
    let x = x_tile_qkv(a, k, r);
    let y0 = W0_4[b.x + k];
    let y1 = W0_4[b.y + k];
    let y2 = W0_4[b.z + k];
    let y3 = W0_4[b.w + k];
    t[0] = step4(t[0], x.r0, y0, y1, y2, y3);
    t[1] = step4(t[1], x.r1, y0, y1, y2, y3);
    t[2] = step4(t[2], x.r2, y0, y1, y2, y3);
    t[3] = step4(t[3], x.r3, y0, y1, y2, y3);
  }
  return t;
}
fn product_w1(a: vec4<u32>, b: vec4<u32>, r: vec4<f32>) -> array<vec4<f32>, 4> {
  var t = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k = 0u; k < p.K / 4u; k++) {
    let x = x_tile_qkv(a, k, r);
    let y0 = W1_4[b.x + k];
    let y1 = W1_4[b.y + k];
    let y2 = W1_4[b.z + k];
    let y3 = W1_4[b.w + k];
    t[0] = step4(t[0], x.r0, y0, y1, y2, y3);
    t[1] = step4(t[1], x.r1, y0, y1, y2, y3);
    t[2] = step4(t[2], x.r2, y0, y1, y2, y3);
    t[3] = step4(t[3], x.r3, y0, y1, y2, y3);
  }
  return t;
}
fn product_w2(a: vec4<u32>, b: vec4<u32>, r: vec4<f32>) -> array<vec4<f32>, 4> {
  var t = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k = 0u; k < p.K / 4u; k++) {
    let x = x_tile_qkv(a, k, r);
    let y0 = W2_4[b.x + k];
    let y1 = W2_4[b.y + k];
    let y2 = W2_4[b.z + k];
    let y3 = W2_4[b.w + k];
    t[0] = step4(t[0], x.r0, y0, y1, y2, y3);
    t[1] = step4(t[1], x.r1, y0, y1, y2, y3);
    t[2] = step4(t[2], x.r2, y0, y1, y2, y3);
    t[3] = step4(t[3], x.r3, y0, y1, y2, y3);
  }
  return t;
}

// The three products above as one loop (ONE_K_LOOP): segment seg's weights, read through w_seg at each k.
fn w_seg(seg: u32, i: u32) -> vec4<f32> {
  if (seg == 0u) { return W0_4[i]; }
  if (seg == 1u) { return W1_4[i]; }
  return W2_4[i];
}
fn product_seg(seg: u32, a: vec4<u32>, b: vec4<u32>, r: vec4<f32>) -> array<vec4<f32>, 4> {
  var t = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k = 0u; k < p.K / 4u; k++) {
    let x = x_tile_qkv(a, k, r);
    let y0 = w_seg(seg, b.x + k);
    let y1 = w_seg(seg, b.y + k);
    let y2 = w_seg(seg, b.z + k);
    let y3 = w_seg(seg, b.w + k);
    t[0] = step4(t[0], x.r0, y0, y1, y2, y3);
    t[1] = step4(t[1], x.r1, y0, y1, y2, y3);
    t[2] = step4(t[2], x.r2, y0, y1, y2, y3);
    t[3] = step4(t[3], x.r3, y0, y1, y2, y3);
  }
  return t;
}

// A tile's 4 columns, clamped to the last of n, from its first column c0.
fn tile_columns(c0: u32, n: u32) -> vec4<u32> {
  let last = n - 1u;
  return vec4<u32>(c0, min(c0 + 1u, last), min(c0 + 2u, last), min(c0 + 3u, last));
}

// The LoRA delta of row i at columns cols: xa[i] . B[c] for each column c, xa's rows at xaAt and B's at bAt of
// width rank, summed along the rank 4 at a time (LORA_K1: one k at a time) as the trainer's matmul sums xa B^T.
fn lora_delta(i: u32, cols: vec4<u32>, xaAt: u32, bAt: u32) -> vec4<f32> {
  let R = p.rank;
  let xr = xaAt + i * R;
  let b = vec4<u32>(bAt) + cols * R;
  var acc = vec4<f32>(0.0);
  for (var k = 0u; k < R; k += 4u) {
    let x = vec4<f32>(lora_xa[xr + k], lora_xa[xr + k + 1u], lora_xa[xr + k + 2u], lora_xa[xr + k + 3u]);
    let y0 = vec4<f32>(lora_b[b.x + k], lora_b[b.x + k + 1u], lora_b[b.x + k + 2u], lora_b[b.x + k + 3u]);
    let y1 = vec4<f32>(lora_b[b.y + k], lora_b[b.y + k + 1u], lora_b[b.y + k + 2u], lora_b[b.y + k + 3u]);
    let y2 = vec4<f32>(lora_b[b.z + k], lora_b[b.z + k + 1u], lora_b[b.z + k + 2u], lora_b[b.z + k + 3u]);
    let y3 = vec4<f32>(lora_b[b.w + k], lora_b[b.w + k + 1u], lora_b[b.w + k + 2u], lora_b[b.w + k + 3u]);
    acc = step4_in(LORA_K1, acc, x, y0, y1, y2, y3);
  }
  return acc;
}

// rows[r] += loraScale * delta for the tile's rows from i0 (clamped to the last row), as matmul's accumulating
// store adds alpha * v.
fn add_lora(rows: array<vec4<f32>, 4>, i0: u32, cols: vec4<u32>, xaAt: u32, bAt: u32) -> array<vec4<f32>, 4> {
  var t = rows;
  let iLast = p.M - 1u;
  for (var i = 0u; i < 4u; i++) {
    t[i] = t[i] + p.loraScale * lora_delta(min(i0 + i, iLast), cols, xaAt, bAt);
  }
  return t;
}

// A q/k/v tile: its segment (0, 1, 2), the first column in it, the segment's width, and the products.
struct QkvTile {
  seg: u32,
  c0: u32,
  n: u32,
  rows: array<vec4<f32>, 4>,
}

// The tile at column j0 of [0, N0 + N1 + N2) and row i0 (row0: the workgroup's first row, for the rows' rstd).
fn qkv_tile(j0: u32, i0: u32, row0: u32) -> QkvTile {
  var t = QkvTile(0u, j0, p.N0, array<vec4<f32>, 4>());
  if (j0 >= p.N0 + p.N1) {
    t.seg = 2u;
    t.c0 = j0 - p.N0 - p.N1;
    t.n = p.N2;
  } else if (j0 >= p.N0) {
    t.seg = 1u;
    t.c0 = j0 - p.N0;
    t.n = p.N1;
  }
  let b = tile_columns(t.c0, t.n) * (p.K / 4u);
  let a = row_starts(i0);
  let r = rstd4(i0, row0);
  if (ONE_K_LOOP) {
    t.rows = product_seg(t.seg, a, b, r);
  } else if (t.seg == 0u) {
    t.rows = product_w0(a, b, r);
  } else if (t.seg == 1u) {
    t.rows = product_w1(a, b, r);
  } else {
    t.rows = product_w2(a, b, r);
  }
  return t;
}

// Adds the tile's bias (BIAS) and stores its rows.
fn qkv_store(i0: u32, t: QkvTile) {
  var at = p.biasAt0;
  if (t.seg == 1u) { at = p.biasAt1; } else if (t.seg == 2u) { at = p.biasAt2; }
  let bias = bias4(at, t.c0, t.n);
  var rows = t.rows;
  if (BIAS) {
    for (var i = 0u; i < 4u; i++) { rows[i] = rows[i] + bias; }
  }
  for (var i = 0u; i < 4u; i++) {
    if (i0 + i >= p.M) { break; }
    if (t.seg == 0u) {
      store_row0(i0 + i, t.c0, rows[i]);
    } else if (t.seg == 1u) {
      store_row1(i0 + i, t.c0, rows[i]);
    } else {
      store_row2(i0 + i, t.c0, rows[i]);
    }
  }
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn projection_qkv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(local_invocation_index) li: u32) {
  let row0 = wid.y * 4u * WG_Y;
  rstd_of_rows_qkv(row0, li);
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  if (i0 >= p.M || j0 >= p.N0 + p.N1 + p.N2) { return; }
  qkv_store(i0, qkv_tile(j0, i0, row0));
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn projection_qkv_lora(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(local_invocation_index) li: u32) {
  let row0 = wid.y * 4u * WG_Y;
  rstd_of_rows_qkv(row0, li);
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  if (i0 >= p.M || j0 >= p.N0 + p.N1 + p.N2) { return; }
  var t = qkv_tile(j0, i0, row0);
  var xaAt = p.xaAt0;
  var bAt = p.bAt0;
  if (t.seg == 1u) {
    xaAt = p.xaAt1;
    bAt = p.bAt1;
  } else if (t.seg == 2u) {
    xaAt = p.xaAt2;
    bAt = p.bAt2;
  }
  t.rows = add_lora(t.rows, i0, tile_columns(t.c0, t.n), xaAt, bAt);
  qkv_store(i0, t);
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn projection_add_lora(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  if (i0 >= p.M || j0 >= p.N0) { return; }
  let cols = tile_columns(j0, p.N0);
  var rows = product_w0(row_starts(i0), cols * (p.K / 4u), vec4<f32>(1.0));
  // y + 1 * acc, as matmul's accumulating store adds the product, then the adapter's delta.
  for (var i = 0u; i < 4u; i++) {
    let row = min(i0 + i, p.M - 1u) * p.N0;
    let y = vec4<f32>(Y0[row + cols.x], Y0[row + cols.y], Y0[row + cols.z], Y0[row + cols.w]);
    rows[i] = y + rows[i];
  }
  rows = add_lora(rows, i0, cols, p.xaAt0, p.bAt0);
  for (var i = 0u; i < 4u; i++) {
    if (i0 + i >= p.M) { break; }
    store_row0(i0 + i, j0, rows[i]);
  }
}

// silu(g) * u as swiglu.wgsl computes it: 1 / (1 + exp(-g)) is 0 for g below -88 (exp overflows to +inf), the
// right limit.
fn swiglu4(g: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
  return g * (1.0 / (1.0 + exp(-g))) * u;
}

// The gate and up products of a tile (rows g0..g3 and u0..u3).
struct GateUpTile {
  g: array<vec4<f32>, 4>,
  u: array<vec4<f32>, 4>,
}

fn gate_up_tile(j0: u32, i0: u32, row0: u32) -> GateUpTile {
  let b = tile_columns(j0, p.N0) * (p.K / 4u);
  let a = row_starts(i0);
  let r = rstd4(i0, row0);
  var g0 = vec4<f32>(0.0);
  var g1 = vec4<f32>(0.0);
  var g2 = vec4<f32>(0.0);
  var g3 = vec4<f32>(0.0);
  var u0 = vec4<f32>(0.0);
  var u1 = vec4<f32>(0.0);
  var u2 = vec4<f32>(0.0);
  var u3 = vec4<f32>(0.0);
  for (var k = 0u; k < p.K / 4u; k++) {
    let x = x_tile_gate_up(a, k, r);
    let w0 = Wg_4[b.x + k];
    let w1 = Wg_4[b.y + k];
    let w2 = Wg_4[b.z + k];
    let w3 = Wg_4[b.w + k];
    let v0 = Wu_4[b.x + k];
    let v1 = Wu_4[b.y + k];
    let v2 = Wu_4[b.z + k];
    let v3 = Wu_4[b.w + k];
    g0 = step4(g0, x.r0, w0, w1, w2, w3);
    g1 = step4(g1, x.r1, w0, w1, w2, w3);
    g2 = step4(g2, x.r2, w0, w1, w2, w3);
    g3 = step4(g3, x.r3, w0, w1, w2, w3);
    u0 = step4(u0, x.r0, v0, v1, v2, v3);
    u1 = step4(u1, x.r1, v0, v1, v2, v3);
    u2 = step4(u2, x.r2, v0, v1, v2, v3);
    u3 = step4(u3, x.r3, v0, v1, v2, v3);
  }
  return GateUpTile(array<vec4<f32>, 4>(g0, g1, g2, g3), array<vec4<f32>, 4>(u0, u1, u2, u3));
}

// Stores a tile's rows of act (N0 wide) at element `at` onward.
fn store_act(at: u32, i0: u32, j0: u32, rows: array<vec4<f32>, 4>) {
  for (var i = 0u; i < 4u; i++) {
    if (i0 + i >= p.M) { break; }
    let v = rows[i];
    for (var c = 0u; c < 4u; c++) { if (j0 + c < p.N0) { act[at + (i0 + i) * p.N0 + j0 + c] = v[c]; } }
  }
}

fn store_swiglu(i0: u32, j0: u32, t: GateUpTile) {
  store_act(0u, i0, j0, array<vec4<f32>, 4>(swiglu4(t.g[0], t.u[0]), swiglu4(t.g[1], t.u[1]),
                                            swiglu4(t.g[2], t.u[2]), swiglu4(t.g[3], t.u[3])));
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn projection_gate_up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(local_invocation_index) li: u32) {
  let row0 = wid.y * 4u * WG_Y;
  rstd_of_rows_gate_up(row0, li);
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  if (i0 >= p.M || j0 >= p.N0) { return; }
  let t = gate_up_tile(j0, i0, row0);
  if (PAIR) {
    store_act(p.outAt0, i0, j0, t.g);
    store_act(p.outAt1, i0, j0, t.u);
  } else {
    store_swiglu(i0, j0, t);
  }
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn projection_gate_up_lora(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                           @builtin(local_invocation_index) li: u32) {
  let row0 = wid.y * 4u * WG_Y;
  rstd_of_rows_gate_up(row0, li);
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  if (i0 >= p.M || j0 >= p.N0) { return; }
  var t = gate_up_tile(j0, i0, row0);
  let cols = tile_columns(j0, p.N0);
  t.g = add_lora(t.g, i0, cols, p.xaAt0, p.bAt0);
  t.u = add_lora(t.u, i0, cols, p.xaAt1, p.bAt1);
  store_swiglu(i0, j0, t);
}
