// half-pack: f32 values rounded to half-precision storage (round to nearest even), two per 32-bit word, element 2i
// in the low half of word i (src/gpu/tensor.ts), the upper half of a lone last element 0. One word per invocation.
// The sampler's half copy of trained f32 weights is made with it (src/model/gpu-model.ts, rolloutDtype).
// Entry points: half_pack_bf16, half_pack_f16. CPU twin: src/reference/half-pack.ts (packHalf), the host's
// f32ToBf16Bits / f32ToF16Bits of src/core/half.ts bit for bit: the input is read as its bits (u32), so no float
// canonicalization (subnormal flush, NaN payloads) can differ from the host's.

override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<u32>; // (ceil(n / 2)) words of half storage
@group(0) @binding(2) var<storage, read> a: array<u32>;         // (n) the f32 values' bits

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
