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
// Block half-bits (region half-bits): an f32's bits rounded to bfloat16 or IEEE half bits, round to nearest
// even in integer arithmetic, so every adapter stores the same bits and none needs shader-f16. A fragment, not a
// shader: shaders hold it in a region of its name. Included by half-pack.wgsl (the sampler's half copy
// of the weights) and decode.wgsl (the half KV cache). CPU twin: src/core/half.ts (f32ToBf16Bits, f32ToF16Bits).

/** bfloat16 bits of the f32 with bits u: round to nearest even; a NaN stays a (quiet) NaN of the same sign. */
fn bf16_bits(u: u32) -> u32 {
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) != 0u) { return (u >> 16u) | 0x40u; }
  return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

/** IEEE half bits of the f32 with bits u: round to nearest even, subnormals kept, overflow to infinity. */
fn f16_bits(u: u32) -> u32 {
  let sign = (u >> 16u) & 0x8000u;
  let expo = i32((u >> 23u) & 0xffu);
  var mant = u & 0x7fffffu;
  if (expo == 255) { return sign | 0x7c00u | select(0u, 0x200u, mant != 0u); }
  let e = expo - 127 + 15;
  if (e >= 31) { return sign | 0x7c00u; }
  if (e <= 0) {
    if (e < -10) { return sign; } // underflows to a signed zero
    mant = mant | 0x800000u; // the implicit leading 1
    let shift = u32(14 - e); // 14..24
    let half = 1u << (shift - 1u);
    var m = mant >> shift;
    let rest = mant & ((1u << shift) - 1u);
    if (rest > half || (rest == half && (m & 1u) == 1u)) { m = m + 1u; }
    return sign | m; // m may round up into the smallest normal: the right bit pattern
  }
  var h = (u32(e) << 10u) | (mant >> 13u);
  let rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) { h = h + 1u; } // may carry into infinity: correct
  return sign | h;
}
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
