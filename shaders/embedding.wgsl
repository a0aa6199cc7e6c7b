// embedding: token-embedding lookup (forward) and its scatter-add into the table's gradient (backward).
// Not the positional encoding (rope.wgsl) and not the tied lm_head (a matmul).
// Entry points: embedding_forward (out, table, tokens);
//               embedding_backward_links (links, tokens), then embedding_backward (dTable, dOut, tokens, links).
// CPU twins: src/reference/embedding.ts (embeddingForward, embeddingBackward; the links pass has no twin).
//
// Backward without float atomics, deterministic and bit-identical to the twin. Pass 1 links every position n to
// the next position with the same token (N if none) and flags the token's first occurrence; pass 2 runs one
// invocation per (position, channel), and those at a first occurrence walk the chain, adding dOut[m, c] for
// m = n0, n1, ... in increasing position onto the existing dTable[v, c]: the twin's exact order of f32 additions.
// Work: pass 1 scans tokens (up to O(N) per position, N = B*T: tokens seen once are the worst case), pass 2 is
// O(N*C) in all; the longest serial chain is the most frequent token's count. `links` is N u32 of scratch.
// Token ids >= V are a caller bug the GPU cannot throw on: the forward writes NaN for them (loud), the backward
// drops their gradient.

override WG: u32 = 256u;

const FIRST: u32 = 0x80000000u; // links[n] flag: n is its token's first occurrence
const SKIP: u32 = 0x7fffffffu;  // links[n] for an id >= V

struct Params {
  rows: u32,
  C: u32,
  V: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

// embedding_forward
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (N, C)
@group(0) @binding(2) var<storage, read> table: array<f32>;     // (V, C)
@group(0) @binding(3) var<storage, read> tokens: array<u32>;    // (N)

// embedding_backward_links (a variable may share a binding with another across entry points)
@group(0) @binding(1) var<storage, read_write> links_out: array<u32>; // (N) next position | FIRST
@group(0) @binding(2) var<storage, read> tokens_l: array<u32>;        // (N)

// embedding_backward (tokens as in the forward)
@group(0) @binding(1) var<storage, read_write> d_table: array<f32>; // (V, C), accumulated into
@group(0) @binding(2) var<storage, read> d_out: array<f32>;         // (N, C)
@group(0) @binding(4) var<storage, read> links: array<u32>;         // (N) from embedding_backward_links

fn linear(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

// out[n, c] = table[tokens[n], c], one element per invocation.
@compute @workgroup_size(WG)
fn embedding_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let i = linear(wid, nwg, lid);
  if (i >= p.rows * p.C) { return; }
  let n = i / p.C;
  let c = i - n * p.C;
  let v = tokens[n];
  if (v < p.V) {
    out[i] = table[v * p.C + c];
  } else {
    out[i] = bitcast<f32>(0x7fc00000u | (v & 0x3fffffu)); // quiet NaN carrying the bad id's low bits
  }
}

// links[n] = (next m > n with tokens[m] == tokens[n], else N) | FIRST if no earlier m has that token.
@compute @workgroup_size(WG)
fn embedding_backward_links(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) lid: u32) {
  let n = linear(wid, nwg, lid);
  if (n >= p.rows) { return; }
  let v = tokens_l[n];
  if (v >= p.V) {
    links_out[n] = SKIP;
    return;
  }
  var next = p.rows;
  for (var m = n + 1u; m < p.rows; m++) {
    if (tokens_l[m] == v) {
      next = m;
      break;
    }
  }
  var first = FIRST;
  for (var m = n; m > 0u; m--) {
    if (tokens_l[m - 1u] == v) {
      first = 0u;
      break;
    }
  }
  links_out[n] = next | first;
}

// dTable[tokens[n], c] += dOut[n, c], summed along each token's chain by the invocations of its first occurrence.
@compute @workgroup_size(WG)
fn embedding_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let i = linear(wid, nwg, lid);
  if (i >= p.rows * p.C) { return; }
  let n = i / p.C;
  let link = links[n];
  if ((link & FIRST) == 0u) { return; } // also SKIP
  let c = i - n * p.C;
  let at = tokens[n] * p.C + c;
  var acc = d_table[at];
  var m = n;
  loop {
    acc += d_out[m * p.C + c];
    m = links[m] & ~FIRST;
    if (m >= p.rows) { break; }
  }
  d_table[at] = acc;
}
