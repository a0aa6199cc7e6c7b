// matmul: batched C = alpha * op(A) * op(B) (+ C when p.accumulate != 0), row-major f32.
// op(A) is (M,K), stored (M,K) or, with TRANS_A, (K,M); op(B) is (K,N), stored (K,N) or, with TRANS_B, (N,K).
// Entry points: matmul_naive (one thread per element: the oracle), matmul_blocked (each thread a 4x4 tile held in
// registers, no workgroup barriers: fast on SwiftShader and decent everywhere), matmul_vec4 (the same tile with
// vec4 loads, for shapes whose contiguous dimensions divide by 4), matmul_wide (the same with 8x8 to 16x16 tiles),
// matmul_tiled (64x64 workgroup tiles staged in workgroup memory: the usual choice on GPUs), matmul_tiled128
// (128x128 workgroup tiles, 8x8 per invocation, for large products on GPUs) and matmul_split_k (A*B^T for few
// rows with K split over 16 invocations, not a variant of matmul(): src/kernels/matmul.ts matmulSplitK). src/kernels/matmul-tune.ts picks one per device and layout.
// CPU twin: src/reference/matmul.ts (matmul).

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override WG_X: u32 = 8u;
override WG_Y: u32 = 8u;

struct Params {
  M: u32,
  N: u32,
  K: u32,
  batch: u32,
  strideA: u32,
  strideB: u32,
  strideC: u32,
  alpha: f32,
  accumulate: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> C: array<f32>; // (batch, M, N)
@group(0) @binding(2) var<storage, read> A: array<f32>;       // (batch?, M, K) or (batch?, K, M)
@group(0) @binding(3) var<storage, read> B: array<f32>;       // (batch?, K, N) or (batch?, N, K)

fn a_at(base: u32, i: u32, k: u32) -> f32 {
  if (TRANS_A) { return A[base + k * p.M + i]; }
  return A[base + i * p.K + k];
}

fn b_at(base: u32, k: u32, j: u32) -> f32 {
  if (TRANS_B) { return B[base + j * p.K + k]; }
  return B[base + k * p.N + j];
}

// Accumulation is a uniform, not an override constant: one pipeline serves both (half the pipelines to compile,
// for one uniform branch per stored element).
fn store(base: u32, i: u32, j: u32, v: f32) {
  let idx = base + i * p.N + j;
  if (p.accumulate != 0u) {
    C[idx] = C[idx] + p.alpha * v;
  } else {
    C[idx] = p.alpha * v;
  }
}

// Stores a 4x4 register tile whose element (r, c) belongs at row i0 + r*di, column j0 + c*dj of C, skipping the
// rows and columns outside C.
fn store_tile(baseC: u32, i0: u32, j0: u32, di: u32, dj: u32, tile: array<vec4<f32>, 4>) {
  var t = tile;
  for (var r = 0u; r < 4u; r++) {
    let i = i0 + r * di;
    if (i >= p.M) { break; }
    for (var c = 0u; c < 4u; c++) {
      let j = j0 + c * dj;
      if (j < p.N) { store(baseC, i, j, t[r][c]); }
    }
  }
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_naive(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x;
  let i = gid.y;
  let z = gid.z;
  if (i >= p.M || j >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  var s = 0.0;
  for (var k = 0u; k < p.K; k++) {
    s += a_at(baseA, i, k) * b_at(baseB, k, j);
  }
  store(z * p.strideC, i, j, s);
}

// Each invocation computes C[i0..i0+3, j0..j0+3]. Out-of-range rows/columns read a clamped (valid) index and
// are simply not stored, which keeps the inner loop free of branches.
@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_blocked(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  let z = gid.z;
  if (i0 >= p.M || j0 >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  let iLast = p.M - 1u;
  let jLast = p.N - 1u;
  let ri = vec4<u32>(i0, min(i0 + 1u, iLast), min(i0 + 2u, iLast), min(i0 + 3u, iLast));
  let cj = vec4<u32>(j0, min(j0 + 1u, jLast), min(j0 + 2u, jLast), min(j0 + 3u, jLast));
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k = 0u; k < p.K; k++) {
    let a = vec4<f32>(a_at(baseA, ri.x, k), a_at(baseA, ri.y, k), a_at(baseA, ri.z, k), a_at(baseA, ri.w, k));
    let b = vec4<f32>(b_at(baseB, k, cj.x), b_at(baseB, k, cj.y), b_at(baseB, k, cj.z), b_at(baseB, k, cj.w));
    acc0 += a.x * b;
    acc1 += a.y * b;
    acc2 += a.z * b;
    acc3 += a.w * b;
  }
  store_tile(z * p.strideC, i0, j0, 1u, 1u, array<vec4<f32>, 4>(acc0, acc1, acc2, acc3));
}

// ---- matmul_vec4: the 4x4 register tile of matmul_blocked, loading operands as vec4 along their contiguous
// dimension (4 k at a time, or 4 columns), through vec4 views of the same buffers. One inner loop per layout,
// chosen by the override flags (constant-folded): A*B^T (dot products along k), A*B and A^T*B (outer products).
// The wrapper uses it only where the vec4 dimensions divide by 4 (matmulVariantSupports); A^T*B^T is not covered.

@group(0) @binding(2) var<storage, read> A4: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> B4: array<vec4<f32>>;

// One step of an A*B^T 4x4 register tile at vec4 index k along K: rows a (vec4 offsets of 4 rows of A) against
// rows b of B, as 4 k-wide dot products added per element (matmul_vec4's and matmul_split_k's order).
fn nt_tile_step(a: vec4<u32>, b: vec4<u32>, k: u32) -> array<vec4<f32>, 4> {
  let x0 = A4[a.x + k];
  let x1 = A4[a.y + k];
  let x2 = A4[a.z + k];
  let x3 = A4[a.w + k];
  let y0 = B4[b.x + k];
  let y1 = B4[b.y + k];
  let y2 = B4[b.z + k];
  let y3 = B4[b.w + k];
  return array<vec4<f32>, 4>(
    vec4<f32>(dot(x0, y0), dot(x0, y1), dot(x0, y2), dot(x0, y3)),
    vec4<f32>(dot(x1, y0), dot(x1, y1), dot(x1, y2), dot(x1, y3)),
    vec4<f32>(dot(x2, y0), dot(x2, y1), dot(x2, y2), dot(x2, y3)),
    vec4<f32>(dot(x3, y0), dot(x3, y1), dot(x3, y2), dot(x3, y3)),
  );
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j0 = gid.x * 4u;
  let i0 = gid.y * 4u;
  let z = gid.z;
  if (i0 >= p.M || j0 >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  let iLast = p.M - 1u;
  let jLast = p.N - 1u;
  let ri = vec4<u32>(i0, min(i0 + 1u, iLast), min(i0 + 2u, iLast), min(i0 + 3u, iLast));
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  if (!TRANS_A && TRANS_B) {
    // A (M,K) and B (N,K): rows of both are contiguous in k. K % 4 == 0.
    let cj = vec4<u32>(j0, min(j0 + 1u, jLast), min(j0 + 2u, jLast), min(j0 + 3u, jLast));
    let K4 = p.K / 4u;
    let a0 = (baseA + ri.x * p.K) / 4u;
    let a1 = (baseA + ri.y * p.K) / 4u;
    let a2 = (baseA + ri.z * p.K) / 4u;
    let a3 = (baseA + ri.w * p.K) / 4u;
    let b0 = (baseB + cj.x * p.K) / 4u;
    let b1 = (baseB + cj.y * p.K) / 4u;
    let b2 = (baseB + cj.z * p.K) / 4u;
    let b3 = (baseB + cj.w * p.K) / 4u;
    for (var k = 0u; k < K4; k++) {
      let d = nt_tile_step(vec4<u32>(a0, a1, a2, a3), vec4<u32>(b0, b1, b2, b3), k);
      acc0 += d[0];
      acc1 += d[1];
      acc2 += d[2];
      acc3 += d[3];
    }
  } else if (!TRANS_A) {
    // A (M,K) rows contiguous in k; B (K,N) rows contiguous in j. K % 4 == 0 and N % 4 == 0.
    let K4 = p.K / 4u;
    let N4 = p.N / 4u;
    let a0 = (baseA + ri.x * p.K) / 4u;
    let a1 = (baseA + ri.y * p.K) / 4u;
    let a2 = (baseA + ri.z * p.K) / 4u;
    let a3 = (baseA + ri.w * p.K) / 4u;
    var b = baseB / 4u + gid.x;
    for (var k = 0u; k < K4; k++) {
      let y0 = B4[b];
      let y1 = B4[b + N4];
      let y2 = B4[b + 2u * N4];
      let y3 = B4[b + 3u * N4];
      b += 4u * N4;
      let x0 = A4[a0 + k];
      let x1 = A4[a1 + k];
      let x2 = A4[a2 + k];
      let x3 = A4[a3 + k];
      acc0 += x0.x * y0 + x0.y * y1 + x0.z * y2 + x0.w * y3;
      acc1 += x1.x * y0 + x1.y * y1 + x1.z * y2 + x1.w * y3;
      acc2 += x2.x * y0 + x2.y * y1 + x2.z * y2 + x2.w * y3;
      acc3 += x3.x * y0 + x3.y * y1 + x3.z * y2 + x3.w * y3;
    }
  } else {
    // A stored (K,M) and B (K,N): at each k, 4 consecutive rows of op(A) and 4 columns of B are one vec4 each.
    // M % 4 == 0 and N % 4 == 0 (so the clamps above never bite).
    let M4 = p.M / 4u;
    let N4 = p.N / 4u;
    var a = baseA / 4u + gid.y;
    var b = baseB / 4u + gid.x;
    for (var k = 0u; k < p.K; k++) {
      let x = A4[a];
      let y = B4[b];
      a += M4;
      b += N4;
      acc0 += x.x * y;
      acc1 += x.y * y;
      acc2 += x.z * y;
      acc3 += x.w * y;
    }
  }
  store_tile(z * p.strideC, i0, j0, 1u, 1u, array<vec4<f32>, 4>(acc0, acc1, acc2, acc3));
}

// ---- matmul_wide: matmul_vec4 with a ROWS x COLS register tile per invocation (rows i0..i0+ROWS-1, columns
// j0..j0+COLS-1 held as COLS/4 vec4 per row): 8x8 is variant 'wide', 16x8 'tall', 16x16 'square'. Larger tiles do
// more multiply-adds per operand load (ROWS * COLS per ROWS + COLS floats), which is what pays on CPU drivers: on
// SwiftShader a storage load costs about as much as ten vec4 multiply-adds (BENCHMARKS.md). Same layouts and
// divisibility as matmul_vec4. Specialized once per tile by matmul.ts (src/gpu/specialize.ts): WIDE_ROWS and
// WIDE_COLS are the tile; a line ending in `// @ku` is repeated for _u = 0..3 (k within a step of 4), one in
// `// @rows` for _r = 0..ROWS-1 (_rq = _r / 4, _rl = _r % 4), one in `// @quads` for row quads _rq = 0..ROWS/4-1,
// one in `// @cols` for column quads _v = 0..COLS/4-1 (_v0 .. _v3 = its columns 4 _v .. 4 _v + 3); a line with
// several markers for every combination, the first marker outermost (passes in that order). As written, copy 0
// of every repeated line (region as-written): valid WGSL, though only a specialized tile computes a whole tile.
// Rows and columns past C are clamped on load and skipped on store.

const WIDE_ROWS: u32 = 4u;
const WIDE_COLS: u32 = 4u;
// @region as-written
const _u: u32 = 0u;
const _r: u32 = 0u;
const _rq: u32 = 0u;
const _rl: u32 = 0u;
const _v: u32 = 0u;
const _v0: u32 = 0u;
const _v1: u32 = 1u;
const _v2: u32 = 2u;
const _v3: u32 = 3u;
// @end as-written

// The tile's column quads per row, and its quads in all, row-major (quad t: row t / WIDE_QUAD_COLS, columns from
// 4 (t % WIDE_QUAD_COLS)).
const WIDE_QUAD_COLS: u32 = WIDE_COLS / 4u;
const WIDE_QUADS: u32 = WIDE_ROWS * WIDE_QUAD_COLS;

// Stores the tile as 4x4 blocks through store_tile, skipping what lies outside C. The accumulators are copied into a
// private array and stored by one loop: a store written out per quad (a bounds check, the accumulate branch, four
// guarded writes, 64 copies for the 16x16 tile) was half or more of the tile's compile time on SwiftShader (1.3-1.7 s
// against 0.35-0.48 s for the square tile), while the loop runs once per invocation, after the whole K loop.
fn store_wide_tile(baseC: u32, i0: u32, j0: u32, tile: ptr<function, array<vec4<f32>, WIDE_QUADS>>) {
  for (var b = 0u; b < WIDE_QUADS / 4u; b++) {
    let rq = b / WIDE_QUAD_COLS;
    let v = b % WIDE_QUAD_COLS;
    let t = 4u * rq * WIDE_QUAD_COLS + v; // the block's first row
    let rows = array<vec4<f32>, 4>(
      (*tile)[t],
      (*tile)[t + WIDE_QUAD_COLS],
      (*tile)[t + 2u * WIDE_QUAD_COLS],
      (*tile)[t + 3u * WIDE_QUAD_COLS],
    );
    store_tile(baseC, i0 + 4u * rq, j0 + 4u * v, 1u, 1u, rows);
  }
}

@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_wide(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j0 = gid.x * WIDE_COLS;
  let i0 = gid.y * WIDE_ROWS;
  let z = gid.z;
  if (i0 >= p.M || j0 >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  let iLast = p.M - 1u;
  let jLast = p.N - 1u;
  var acc_r__v = vec4<f32>(0.0); // @rows @cols
  if (!TRANS_A && TRANS_B) {
    // A (M,K) and B (N,K): dot products along k, 4 k at a time. K % 4 == 0.
    let K4 = p.K / 4u;
    let a_r = (baseA + min(i0 + _r, iLast) * p.K) / 4u; // @rows
    let b_v0 = (baseB + min(j0 + _v0, jLast) * p.K) / 4u; let b_v1 = (baseB + min(j0 + _v1, jLast) * p.K) / 4u; let b_v2 = (baseB + min(j0 + _v2, jLast) * p.K) / 4u; let b_v3 = (baseB + min(j0 + _v3, jLast) * p.K) / 4u; // @cols
    for (var k = 0u; k < K4; k++) {
      let y_v0 = B4[b_v0 + k]; let y_v1 = B4[b_v1 + k]; let y_v2 = B4[b_v2 + k]; let y_v3 = B4[b_v3 + k]; // @cols
      let x_r = A4[a_r + k]; // @rows
      acc_r__v += vec4<f32>(dot(x_r, y_v0), dot(x_r, y_v1), dot(x_r, y_v2), dot(x_r, y_v3)); // @rows @cols
    }
  } else if (!TRANS_A) {
    // A (M,K) rows contiguous in k; B (K,N) rows contiguous in j: 4 rows of B per column quad, the updates
    // ordered k-outermost as in A^T*B below. K % 4 == 0 and N % 4 == 0.
    let K4 = p.K / 4u;
    let N4 = p.N / 4u;
    let a_r = (baseA + min(i0 + _r, iLast) * p.K) / 4u; // @rows
    var b_v = baseB / 4u + min(j0 / 4u + _v, N4 - 1u); // @cols
    for (var k = 0u; k < K4; k++) {
      let y_v = array<vec4<f32>, 4>(B4[b_v], B4[b_v + N4], B4[b_v + 2u * N4], B4[b_v + 3u * N4]); // @cols
      b_v += 4u * N4; // @cols
      let x_r = A4[a_r + k]; // @rows
      acc_r__v += x_r[_u] * y_v[_u]; // @ku @rows @cols
    }
  } else {
    // A stored (K,M) and B (K,N): at each k, rows i0..i0+ROWS-1 of op(A) are ROWS/4 vec4 and the tile's columns of
    // B COLS/4 vec4. M % 4 == 0 and N % 4 == 0.
    let M4 = p.M / 4u;
    let N4 = p.N / 4u;
    // Four k per iteration, the updates ordered k-outermost so that consecutive multiply-adds hit different
    // accumulators: SwiftShader runs this loop up to twice as fast as one k per iteration; the last K % 4 k one
    // at a time.
    var a_rq = baseA / 4u + min(i0 / 4u + _rq, M4 - 1u); // @quads
    var b_v = baseB / 4u + min(j0 / 4u + _v, N4 - 1u); // @cols
    let K4 = p.K / 4u;
    for (var k4 = 0u; k4 < K4; k4++) {
      let x_rq__u = A4[a_rq + _u * M4]; // @ku @quads
      let y_v__u = B4[b_v + _u * N4]; // @ku @cols
      a_rq += 4u * M4; // @quads
      b_v += 4u * N4; // @cols
      acc_r__v += x_rq__u[_rl] * y_v__u; // @ku @rows @cols
    }
    for (var k = 4u * K4; k < p.K; k++) {
      let x_rq = A4[a_rq]; // @quads
      let y_v = B4[b_v]; // @cols
      a_rq += M4; // @quads
      b_v += N4; // @cols
      acc_r__v += x_rq[_rl] * y_v; // @rows @cols
    }
  }
  var tile: array<vec4<f32>, WIDE_QUADS>;
  tile[_r * WIDE_QUAD_COLS + _v] = acc_r__v; // @rows @cols
  store_wide_tile(z * p.strideC, i0, j0, &tile);
}

// matmul_wide_scalar_a: the same tile for the shapes whose op(A) cannot be read 4 floats at a time (A*B with K, or
// A^T*B with M, not divisible by 4, as at a vocabulary of 99) while B (K,N) can (N % 4 == 0): A one float at a time
// through the f32 view, B as COLS/4 vec4 per k. Its own entry point, since one entry may not bind A and A4 both.
@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_wide_scalar_a(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j0 = gid.x * WIDE_COLS;
  let i0 = gid.y * WIDE_ROWS;
  let z = gid.z;
  if (i0 >= p.M || j0 >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let iLast = p.M - 1u;
  let N4 = p.N / 4u;
  var acc_r__v = vec4<f32>(0.0); // @rows @cols
  let row_r = min(i0 + _r, iLast); // @rows
  var b_v = (z * p.strideB) / 4u + min(j0 / 4u + _v, N4 - 1u); // @cols
  for (var k = 0u; k < p.K; k++) {
    let y_v = B4[b_v]; // @cols
    b_v += N4; // @cols
    let x_r = a_at(baseA, row_r, k); // @rows
    acc_r__v += x_r * y_v; // @rows @cols
  }
  var tile: array<vec4<f32>, WIDE_QUADS>;
  tile[_r * WIDE_QUAD_COLS + _v] = acc_r__v; // @rows @cols
  store_wide_tile(z * p.strideC, i0, j0, &tile);
}

// ---- matmul_tiled: the classic GPU kernel. A 16x16 workgroup computes a 64x64 tile of C, each invocation a 4x4
// block; 64x16 slices of op(A) and 16x64 slices of op(B) are staged in workgroup memory (8 KiB), loaded
// cooperatively along each operand's contiguous dimension. Good on GPUs; slow on SwiftShader (barriers).

// Element idx of a K-slice (tk values of k from k0) of op(A)'s rows i0 .. i0 + tile - 1, or of op(B)'s columns:
// its place in the slice (k, and the row or column `at` within the tile) and its value (0 past M, N or K), the
// index mapped so that consecutive invocations read consecutive addresses of the operand's storage. Shared by
// matmul_tiled and matmul_tiled128.
struct SliceElement { k: u32, at: u32, v: f32 }

fn slice_a(idx: u32, tile: u32, tk: u32, baseA: u32, i0: u32, k0: u32) -> SliceElement {
  var row = idx / tk;
  var kk = idx % tk;
  if (TRANS_A) { row = idx % tile; kk = idx / tile; }
  let i = i0 + row;
  let k = k0 + kk;
  return SliceElement(kk, row, select(0.0, a_at(baseA, min(i, p.M - 1u), min(k, p.K - 1u)), i < p.M && k < p.K));
}

fn slice_b(idx: u32, tile: u32, tk: u32, baseB: u32, j0: u32, k0: u32) -> SliceElement {
  var col = idx % tile;
  var kk = idx / tile;
  if (TRANS_B) { col = idx / tk; kk = idx % tk; }
  let j = j0 + col;
  let k = k0 + kk;
  return SliceElement(kk, col, select(0.0, b_at(baseB, min(k, p.K - 1u), min(j, p.N - 1u)), j < p.N && k < p.K));
}

const TILE: u32 = 64u;
const TK: u32 = 16u;
var<workgroup> As: array<array<f32, 64>, 16>; // [k][row of the tile]
var<workgroup> Bs: array<array<f32, 64>, 16>; // [k][column of the tile]

@compute @workgroup_size(16, 16, 1)
fn matmul_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let z = wid.z;
  let tileI = wid.y * TILE;
  let tileJ = wid.x * TILE;
  let t = lid.y * 16u + lid.x;
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  var acc = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k0 = 0u; k0 < p.K; k0 += TK) {
    for (var e = 0u; e < 4u; e++) {
      let idx = t + 256u * e;
      let a = slice_a(idx, TILE, TK, baseA, tileI, k0);
      As[a.k][a.at] = a.v;
      let b = slice_b(idx, TILE, TK, baseB, tileJ, k0);
      Bs[b.k][b.at] = b.v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let a = vec4<f32>(As[kk][lid.y * 4u], As[kk][lid.y * 4u + 1u], As[kk][lid.y * 4u + 2u], As[kk][lid.y * 4u + 3u]);
      let b = vec4<f32>(Bs[kk][lid.x * 4u], Bs[kk][lid.x * 4u + 1u], Bs[kk][lid.x * 4u + 2u], Bs[kk][lid.x * 4u + 3u]);
      acc[0] += a.x * b;
      acc[1] += a.y * b;
      acc[2] += a.z * b;
      acc[3] += a.w * b;
    }
    workgroupBarrier();
  }
  if (z >= p.batch) { return; }
  store_tile(z * p.strideC, tileI + lid.y * 4u, tileJ + lid.x * 4u, 1u, 1u, acc);
}

// ---- matmul_tiled128: matmul_tiled with a 128x128 tile of C per 16x16 workgroup, each invocation an 8x8 block (its
// rows ty*4 .. ty*4+3 and 64+ty*4 .. 64+ty*4+3, its columns likewise with tx, so that neighbouring invocations read
// neighbouring vec4 of the staged slices), over K-slices of 8 staged in workgroup memory (8 KiB, as matmul_tiled):
// 64 multiply-adds per 4 vec4 reads of workgroup memory where matmul_tiled does 16 per 2. For large products on
// GPUs. The same sum as matmul_tiled, blocked and naive: one k at a time in k order (slices padded with zeros past K
// add +0), so the results are theirs bit for bit wherever the driver compiles the multiply-adds alike.

const TILE2: u32 = 128u;
const TK2: u32 = 8u;
var<workgroup> As2: array<vec4<f32>, 256>; // [k][row quad of the tile]: rows 4q .. 4q+3 of slice row k
var<workgroup> Bs2: array<vec4<f32>, 256>; // [k][column quad of the tile]

@compute @workgroup_size(16, 16, 1)
fn matmul_tiled128(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let z = wid.z;
  let tileI = wid.y * TILE2;
  let tileJ = wid.x * TILE2;
  let t = lid.y * 16u + lid.x;
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  // acc[2r + h]: row r of the 8 (r < 4: ty*4 + r; else 64 + ty*4 + r - 4), columns of half h (tx*4 .. or 64 + tx*4 ..).
  var acc: array<vec4<f32>, 16>;
  for (var k0 = 0u; k0 < p.K; k0 += TK2) {
    for (var e = 0u; e < 4u; e++) {
      let idx = t + 256u * e; // 0 .. 1023: a slice element of A and one of B
      let a = slice_a(idx, TILE2, TK2, baseA, tileI, k0);
      As2[a.k * 32u + a.at / 4u][a.at % 4u] = a.v;
      let b = slice_b(idx, TILE2, TK2, baseB, tileJ, k0);
      Bs2[b.k * 32u + b.at / 4u][b.at % 4u] = b.v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK2; kk++) {
      let a0 = As2[kk * 32u + lid.y];
      let a1 = As2[kk * 32u + 16u + lid.y];
      let b0 = Bs2[kk * 32u + lid.x];
      let b1 = Bs2[kk * 32u + 16u + lid.x];
      acc[0] += a0.x * b0;
      acc[1] += a0.x * b1;
      acc[2] += a0.y * b0;
      acc[3] += a0.y * b1;
      acc[4] += a0.z * b0;
      acc[5] += a0.z * b1;
      acc[6] += a0.w * b0;
      acc[7] += a0.w * b1;
      acc[8] += a1.x * b0;
      acc[9] += a1.x * b1;
      acc[10] += a1.y * b0;
      acc[11] += a1.y * b1;
      acc[12] += a1.z * b0;
      acc[13] += a1.z * b1;
      acc[14] += a1.w * b0;
      acc[15] += a1.w * b1;
    }
    workgroupBarrier();
  }
  if (z >= p.batch) { return; }
  let baseC = z * p.strideC;
  for (var r = 0u; r < 8u; r++) {
    let i = tileI + select(0u, 64u, r >= 4u) + lid.y * 4u + r % 4u;
    if (i >= p.M) { continue; }
    for (var c = 0u; c < 4u; c++) {
      let j = tileJ + lid.x * 4u + c;
      if (j < p.N) { store(baseC, i, j, acc[2u * r][c]); }
      if (j + 64u < p.N) { store(baseC, i, j + 64u, acc[2u * r + 1u][c]); }
    }
  }
}

// ---- matmul_strided: matmul_blocked's 4x4 register tile with its rows and columns spread WG_Y and WG_X apart
// (invocation (tx, ty) of a workgroup owns columns tx, tx+WG_X, tx+2WG_X, tx+3WG_X of the workgroup's 4WG_X-wide
// tile, rows likewise). Neighbouring invocations then read neighbouring columns of B and write neighbouring
// columns of C, and share their rows of A: on CPU drivers that run invocations as SIMD lanes (SwiftShader) those
// become contiguous vector loads and broadcasts instead of gathers. No workgroup memory, no barriers.
@compute @workgroup_size(WG_X, WG_Y, 1)
fn matmul_strided(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let z = wid.z;
  let i0 = wid.y * 4u * WG_Y + lid.y;
  let j0 = wid.x * 4u * WG_X + lid.x;
  if (i0 >= p.M || j0 >= p.N || z >= p.batch) { return; }
  let baseA = z * p.strideA;
  let baseB = z * p.strideB;
  let iLast = p.M - 1u;
  let jLast = p.N - 1u;
  let ri = vec4<u32>(i0, min(i0 + WG_Y, iLast), min(i0 + 2u * WG_Y, iLast), min(i0 + 3u * WG_Y, iLast));
  let cj = vec4<u32>(j0, min(j0 + WG_X, jLast), min(j0 + 2u * WG_X, jLast), min(j0 + 3u * WG_X, jLast));
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k = 0u; k < p.K; k++) {
    let b = vec4<f32>(b_at(baseB, k, cj.x), b_at(baseB, k, cj.y), b_at(baseB, k, cj.z), b_at(baseB, k, cj.w));
    acc0 += a_at(baseA, ri.x, k) * b;
    acc1 += a_at(baseA, ri.y, k) * b;
    acc2 += a_at(baseA, ri.z, k) * b;
    acc3 += a_at(baseA, ri.w, k) * b;
  }
  store_tile(z * p.strideC, i0, j0, WG_Y, WG_X, array<vec4<f32>, 4>(acc0, acc1, acc2, acc3));
}

// ---- matmul_split_k: A*B^T (B stored (N,K)) for a decode step's few rows, the K loop split over 16 invocations.
// matmul_vec4 gives each invocation a 4x4 tile of C and walks all of K alone: at a decode step's rows (M <= 64) a
// product of SmolLM2-135M's widths is 36 to 96 workgroups, each invocation a chain of K / 4 dependent steps, which
// leaves most of a large GPU idle. Here the SPLIT_LANES = 16 invocations of a tile each take every 16th group of 4 k
// (lane l: groups l, l + 16, ...; neighbouring lanes read neighbouring 16 bytes of a row), so a chain is K / 64 steps
// with 16 times the invocations; the 16 partial tiles are then summed through workgroup memory in lane order: one
// fixed order, not matmul_vec4's (results differ from it in the last bits). A workgroup is 64 invocations: 4 tiles
// side by side (16 columns) of 4 rows; invocation l of a tile then stores element (l / 4, l % 4). No batch, no
// transposed A, K % 4 == 0 (src/kernels/matmul.ts matmulSplitK).

const SPLIT_LANES: u32 = 16u; // K lanes of a tile; also its 16 elements, one stored per lane
const SPLIT_TILES: u32 = 4u; // tiles per workgroup, side by side along the columns
var<workgroup> partial: array<vec4<f32>, 256>; // every invocation's partial tile, row by row (4 KiB)

@compute @workgroup_size(64)
fn matmul_split_k(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % SPLIT_LANES;
  let tile = lid / SPLIT_LANES;
  let i0 = wid.y * 4u;
  let j0 = (wid.x * SPLIT_TILES + tile) * 4u;
  let K4 = p.K / 4u;
  let rows = min(vec4<u32>(i0, i0 + 1u, i0 + 2u, i0 + 3u), vec4<u32>(p.M - 1u)) * K4;
  let cols = min(vec4<u32>(j0, j0 + 1u, j0 + 2u, j0 + 3u), vec4<u32>(p.N - 1u)) * K4;
  var acc = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
  for (var k = lane; k < K4; k += SPLIT_LANES) {
    let d = nt_tile_step(rows, cols, k);
    for (var r = 0u; r < 4u; r++) { acc[r] += d[r]; }
  }
  for (var r = 0u; r < 4u; r++) { partial[lid * 4u + r] = acc[r]; }
  workgroupBarrier();
  // This invocation's element of its tile, summed over the tile's lanes in lane order.
  let r = lane / 4u;
  let c = lane % 4u;
  var sum = 0.0;
  for (var l = 0u; l < SPLIT_LANES; l++) { sum += partial[(tile * SPLIT_LANES + l) * 4u + r][c]; }
  let i = i0 + r;
  let j = j0 + c;
  if (i < p.M && j < p.N) { store(0u, i, j, sum); }
}
