// matmul-split-k: C (M,N) = alpha * A (M,K) * B^T (+ C when p.accumulate != 0), B stored (N,K) like nn.Linear's
// weight: the few-rows product of a decode step with the K loop split over LANES invocations.
// matmul.wgsl's few-rows tile (matmul_vec4) gives each invocation a 4 x 4 tile of C and walks all of K alone: at a
// decode step's rows (M <= 64) a product of SmolLM2-135M's widths is 36 to 96 workgroups, each invocation a chain
// of K / 4 dependent steps, which leaves most of a large GPU idle and waits on memory latency. Here the LANES = 16
// invocations of a tile each take every 16th group of 4 k (lane l: groups l, l + 16, ...; neighbouring lanes read
// neighbouring 16 bytes of a row, so a tile's row is read in whole cache lines), so a chain is K / 64 steps and
// there are 16 times the invocations; the 16 partial tiles are then summed through workgroup memory, lane 0's
// first, in lane order: one fixed order, the same on every run of a device (not matmul.wgsl's order: results
// differ from matmul()'s in the last bits).
// A workgroup is 64 invocations: 4 tiles side by side (16 columns) of 4 rows, 16 lanes each; invocation l of tile
// t after the merge stores element (l / 4, l % 4) of its tile. Rows and columns past C are clamped on load and not
// stored. No batch, no transposed A. B may be stored bf16/f16 (src/kernels/matmul-split-k.ts rewrites B4 through
// half-operand.ts). CPU twin: src/reference/matmul.ts (matmul with transB).
// Entry point: matmul_split_k (C, A, B).

const LANES: u32 = 16u; // K lanes of a tile; also its 16 elements, one stored per lane
const TILES: u32 = 4u; // tiles per workgroup, side by side along the columns
const WG: u32 = 64u; // LANES * TILES

struct Params {
  M: u32,
  N: u32,
  K: u32,
  alpha: f32,
  accumulate: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> C: array<f32>; // (M, N)
@group(0) @binding(2) var<storage, read> A4: array<vec4<f32>>; // (M, K) as vec4 along K
@group(0) @binding(3) var<storage, read> B4: array<vec4<f32>>; // (N, K) as vec4 along K

// Every invocation's partial tile, row by row: 64 x 4 vec4 (4 KiB).
var<workgroup> partial: array<vec4<f32>, 256>;

@compute @workgroup_size(WG)
fn matmul_split_k(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % LANES;
  let tile = lid / LANES;
  let i0 = wid.y * 4u;
  let j0 = (wid.x * TILES + tile) * 4u;
  let iLast = p.M - 1u;
  let jLast = p.N - 1u;
  let K4 = p.K / 4u;
  let a0 = min(i0, iLast) * K4;
  let a1 = min(i0 + 1u, iLast) * K4;
  let a2 = min(i0 + 2u, iLast) * K4;
  let a3 = min(i0 + 3u, iLast) * K4;
  let b0 = min(j0, jLast) * K4;
  let b1 = min(j0 + 1u, jLast) * K4;
  let b2 = min(j0 + 2u, jLast) * K4;
  let b3 = min(j0 + 3u, jLast) * K4;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k = lane; k < K4; k += LANES) {
    let x0 = A4[a0 + k];
    let x1 = A4[a1 + k];
    let x2 = A4[a2 + k];
    let x3 = A4[a3 + k];
    let y0 = B4[b0 + k];
    let y1 = B4[b1 + k];
    let y2 = B4[b2 + k];
    let y3 = B4[b3 + k];
    acc0 += vec4<f32>(dot(x0, y0), dot(x0, y1), dot(x0, y2), dot(x0, y3));
    acc1 += vec4<f32>(dot(x1, y0), dot(x1, y1), dot(x1, y2), dot(x1, y3));
    acc2 += vec4<f32>(dot(x2, y0), dot(x2, y1), dot(x2, y2), dot(x2, y3));
    acc3 += vec4<f32>(dot(x3, y0), dot(x3, y1), dot(x3, y2), dot(x3, y3));
  }
  partial[lid * 4u] = acc0;
  partial[lid * 4u + 1u] = acc1;
  partial[lid * 4u + 2u] = acc2;
  partial[lid * 4u + 3u] = acc3;
  workgroupBarrier();
  // This invocation's element of its tile, summed over the tile's lanes in lane order.
  let r = lane / 4u;
  let c = lane % 4u;
  let first = tile * LANES;
  var sum = 0.0;
  for (var l = 0u; l < LANES; l++) {
    sum += partial[(first + l) * 4u + r][c];
  }
  let i = i0 + r;
  let j = j0 + c;
  if (i >= p.M || j >= p.N) { return; }
  let idx = i * p.N + j;
  if (p.accumulate != 0u) {
    C[idx] = C[idx] + p.alpha * sum;
  } else {
    C[idx] = p.alpha * sum;
  }
}
