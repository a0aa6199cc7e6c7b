// matmul: batched C = alpha * op(A) * op(B) (+ C when ACCUMULATE), row-major f32.
// op(A) is (M,K), stored (M,K) or, with TRANS_A, (K,M); op(B) is (K,N), stored (K,N) or, with TRANS_B, (N,K).
// Entry points: matmul_naive (one thread per element: the oracle) and matmul_blocked (each thread a 4x4 tile
// held in registers, no workgroup barriers: fast on SwiftShader and decent everywhere).
// CPU twin: src/reference/matmul.ts (matmul).

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;
override WG_X: u32 = 8u;
override WG_Y: u32 = 8u;

struct Params {
  M: u32,
  N: u32,
  K: u32,
  batch: u32,
  strideA: u32, // elements between batch entries of A (0: shared by the batch)
  strideB: u32,
  strideC: u32,
  alpha: f32,
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

fn store(base: u32, i: u32, j: u32, v: f32) {
  let idx = base + i * p.N + j;
  if (ACCUMULATE) {
    C[idx] = C[idx] + p.alpha * v;
  } else {
    C[idx] = p.alpha * v;
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
  let baseC = z * p.strideC;
  var rows = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
  for (var r = 0u; r < 4u; r++) {
    let i = i0 + r;
    if (i >= p.M) { break; }
    for (var c = 0u; c < 4u; c++) {
      let j = j0 + c;
      if (j < p.N) { store(baseC, i, j, rows[r][c]); }
    }
  }
}
