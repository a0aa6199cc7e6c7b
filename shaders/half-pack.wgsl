// half-pack: f32 values rounded to half-precision storage (round to nearest even), two per 32-bit word, element 2i
// in the low half of word i (src/gpu/tensor.ts), the upper half of a lone last element 0. One word per invocation.
// The sampler's half copy of trained f32 weights is made with it (src/model/gpu-model.ts, rolloutDtype). And back:
// half storage widened to f32 (exact), which the merged LoRA copy of a half base starts from (rolloutMergeLora).
// Entry points: half_pack_bf16, half_pack_f16, half_unpack_bf16, half_unpack_f16. CPU twin:
// src/reference/half-pack.ts (packHalf, unpackHalf), the host's f32ToBf16Bits / f32ToF16Bits / halfBitsToF32 of
// src/core/half.ts bit for bit: values move as their bits (u32), so no float canonicalization (subnormal flush, NaN
// payloads) can differ from the host's.

override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// Packing: out holds (ceil(n / 2)) words of half storage and a (n) the f32 values' bits; unpacking the reverse.
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

// Workgroups may be spread over x and y (see src/gpu/recorder.ts grid()).
fn index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

// bf16_bits(u), f16_bits(u): an f32's bits rounded to half bits.
// @region half-bits
// Stand-ins for what this file uses of block half-bits; kernels compile the block here.
fn bf16_bits(u: u32) -> u32 { return u >> 16u; }
fn f16_bits(u: u32) -> u32 { return u >> 16u; }
// @end half-bits

@compute @workgroup_size(WG)
fn half_pack_bf16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let w = index(wid, nwg, lid);
  let i = 2u * w;
  if (i >= p.n) { return; }
  let hi = select(0u, bf16_bits(a[i + 1u]), i + 1u < p.n);
  out[w] = bf16_bits(a[i]) | (hi << 16u);
}

@compute @workgroup_size(WG)
fn half_pack_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
  let w = index(wid, nwg, lid);
  let i = 2u * w;
  if (i >= p.n) { return; }
  let hi = select(0u, f16_bits(a[i + 1u]), i + 1u < p.n);
  out[w] = f16_bits(a[i]) | (hi << 16u);
}

// The f32 bits of IEEE half bits h (exact): subnormals become normal f32s, infinities stay, a NaN stays a NaN.
fn f16_to_f32_bits(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 31u) { return sign | 0x7f800000u | (m << 13u); }
  if (e == 0u) { return sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8); } // m * 2^-24, exact
  return sign | ((e + 112u) << 23u) | (m << 13u);
}

@compute @workgroup_size(WG)
fn half_unpack_bf16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let w = index(wid, nwg, lid);
  let i = 2u * w;
  if (i >= p.n) { return; }
  let word = a[w];
  out[i] = word << 16u;
  if (i + 1u < p.n) { out[i + 1u] = word & 0xffff0000u; }
}

@compute @workgroup_size(WG)
fn half_unpack_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let w = index(wid, nwg, lid);
  let i = 2u * w;
  if (i >= p.n) { return; }
  let word = a[w];
  out[i] = f16_to_f32_bits(word & 0xffffu);
  if (i + 1u < p.n) { out[i + 1u] = f16_to_f32_bits(word >> 16u); }
}
