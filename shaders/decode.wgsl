// decode: bookkeeping kernels of KV-cache decoding, bit copies of 32-bit words (floats travel as their bits) but for
// the half cache's write, which rounds.
// Entry points: decode_kv_write (cache[b, pos+t] = x[b, t]), decode_kv_write_bf16 / _f16 (the same into a cache
// stored half, rounding f32 to nearest even), decode_gather_rows (out[r] = x[rows[r]]),
// decode_finish (end-of-sequence logic for one step's samples: a row ends at any of up to 8 ids). CPU twins: src/reference/decode.ts
// (kvWrite, kvWriteHalf, gatherRows, decodeFinish).

override WG: u32 = 64u;

struct Params {
  B: u32,
  T: u32,
  Tcap: u32,
  W: u32,
  pos: u32,
  padId: u32,
  eosIdsLow: vec4<u32>,
  eosIdsHigh: vec4<u32>,
  logprobAt: u32,
  entropyAt: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

// --- decode_kv_write: cache (B, Tcap, W) <- x (B, T, W) at positions pos..pos+T-1
@group(0) @binding(1) var<storage, read_write> cache: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<u32>;

fn linear(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

@compute @workgroup_size(WG)
fn decode_kv_write(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let i = linear(wid, nwg, lid);
  if (i >= p.B * p.T * p.W) { return; }
  let w = i % p.W;
  let bt = i / p.W;
  let t = bt % p.T;
  let b = bt / p.T;
  cache[(b * p.Tcap + p.pos + t) * p.W + w] = x[i];
}

// --- decode_kv_write_bf16 / decode_kv_write_f16: the same write into a cache stored half (two elements per 32-bit
// word, element 2i in the low half of word i). Here W counts the cache's words per position (its elements / 2: a
// position's NKV*HD elements are even, since RoPE needs an even HD, so no word straddles two positions) and x is
// f32 (B, T, 2W) read through its bits. Each value is rounded to nearest even in integer arithmetic, so every
// adapter stores the same bits (CPU twin: src/core/half.ts toHalfBits); no shader-f16 is needed.

// bf16_bits(u), f16_bits(u): an f32's bits rounded to half bits.
// @region half-bits
// Stand-ins for what this file uses of block half-bits; kernels compile the block here.
fn bf16_bits(u: u32) -> u32 { return u >> 16u; }
fn f16_bits(u: u32) -> u32 { return u >> 16u; }
// @end half-bits

fn kv_write_half(i: u32, bf16: bool) {
  if (i >= p.B * p.T * p.W) { return; }
  let w = i % p.W;
  let bt = i / p.W;
  let t = bt % p.T;
  let b = bt / p.T;
  let lo = x[2u * i]; // the f32's bits
  let hi = x[2u * i + 1u];
  var word: u32;
  if (bf16) { word = bf16_bits(lo) | (bf16_bits(hi) << 16u); } else { word = f16_bits(lo) | (f16_bits(hi) << 16u); }
  cache[(b * p.Tcap + p.pos + t) * p.W + w] = word;
}

@compute @workgroup_size(WG)
fn decode_kv_write_bf16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  kv_write_half(linear(wid, nwg, lid), true);
}

@compute @workgroup_size(WG)
fn decode_kv_write_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
  kv_write_half(linear(wid, nwg, lid), false);
}

// --- decode_gather_rows: out (R, W) <- x (N, W) at rows idx (R), with R = p.T
@group(0) @binding(3) var<storage, read> idx: array<u32>;

@compute @workgroup_size(WG)
fn decode_gather_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let i = linear(wid, nwg, lid);
  if (i >= p.T * p.W) { return; }
  let w = i % p.W;
  let r = i / p.W;
  cache[i] = x[idx[r] * p.W + w];
}

// --- decode_finish: one step's samples into the completion buffers, with end-of-sequence logic.
// (Bindings may repeat numbers used above: WGSL only requires them distinct within one entry point's interface.)
// The step's samples are one buffer: the sampled ids (R) at 0, the log-probs' and entropies' bits (R each) at
// logprobAt and entropyAt (views of one arena, so 8 storage buffers in all, WebGPU's default). The column written is
// pos + cursor[0]: a rollout's decode cursor (src/kernels/decode.ts DecodeCursor), so every decode step records the
// same dispatch with the same bindings, or a zero for a step given by pos alone.
@group(0) @binding(1) var<storage, read_write> current: array<u32>;   // (R)
@group(0) @binding(2) var<storage, read_write> done: array<u32>;      // (R)
@group(0) @binding(3) var<storage, read_write> tokens: array<u32>;    // (R, S)
@group(0) @binding(4) var<storage, read_write> logprobs: array<f32>;  // (R, S)
@group(0) @binding(5) var<storage, read_write> entropies: array<f32>; // (R, S)
@group(0) @binding(6) var<storage, read_write> mask: array<f32>;      // (R, S)
@group(0) @binding(7) var<storage, read> samples: array<u32>;        // sampled (R), log-prob and entropy bits (R each)
@group(0) @binding(8) var<storage, read> cursor: array<u32>;         // (1): added to pos

@compute @workgroup_size(WG)
fn decode_finish(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
  let r = linear(wid, nwg, lid);
  if (r >= p.B) { return; }
  let i = r * p.Tcap + p.pos + cursor[0];
  if (done[r] != 0u) {
    tokens[i] = p.padId;
    logprobs[i] = 0.0;
    entropies[i] = 0.0;
    mask[i] = 0.0;
    current[r] = p.padId;
    return;
  }
  let tok = samples[r];
  tokens[i] = tok;
  logprobs[i] = bitcast<f32>(samples[p.logprobAt + r]);
  entropies[i] = bitcast<f32>(samples[p.entropyAt + r]);
  mask[i] = 1.0;
  current[r] = tok;
  // Unused id slots repeat the first id, so comparing all eight is the same as comparing the ids given.
  if (any(vec4<u32>(tok) == p.eosIdsLow) || any(vec4<u32>(tok) == p.eosIdsHigh)) { done[r] = 1u; }
}
