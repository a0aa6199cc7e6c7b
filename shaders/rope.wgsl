// rope: rotary position embedding in Hugging Face Llama's rotate_half convention on (B,T,H,HD) tensors
// (H = NH for queries, NKV for keys): every pair (x_i, x_{i+HD/2}) of every head is rotated by the angle
// pos * inv_freq[i], inv_freq[i] = theta^(-2i/HD) (Llama 3 rescaled when the model asks: the wrapper builds the
// table from src/core/rope-frequencies.ts, so the shader is the same); the backward rotates by the opposite angle.
// Not attention.
// Entry points, all (out, freqs, x[, positions]) with out = dx in the backward:
//   rope_forward, rope_backward                                   position of token (b, t) = posOffset + t
//   rope_forward_positions, rope_backward_positions               position = positions[b*T + t]
//   rope_forward_inplace, rope_backward_inplace                   (out, freqs): rotates out in place
//   rope_forward_inplace_positions, rope_backward_inplace_positions   (out, freqs, positions)
//   rope_decode_kv (q, freqs, positions, k, v, kcache, vcache, cursor): a forward against a KV cache in one
//       dispatch: q rotated in place (H heads), k rotated (Hkv heads) and written into kcache and v into vcache at
//       cache position pos_offset + cursor + t, the cache stored f32 or, with KV_MODE 1/2, bf16/f16 (rounded to
//       nearest even as decode.wgsl's decode_kv_write_bf16/_f16 do); the rotation's position is positions[n] +
//       cursor. cursor[0] is a rollout's decode step, set by a copy before it (src/kernels/decode.ts DecodeCursor), so every
//       decode step records the same dispatch with the same bindings. Each invocation takes two consecutive pairs
//       (HD divisible by 4), so the 32-bit words of a half cache are each written by one invocation.
// CPU twins: src/reference/rope.ts (ropeForward, ropeBackward, ropeDecodeKv). In-place needs its own entry points
// because WebGPU rejects one buffer bound both writable and readable in a dispatch.
//
// Angles are exact to ~1e-6 rad for positions < 2^24 (plain f32 pos * inv_freq is off by ~pos * 3e-8 rad,
// 1e-4 at pos 4096): `freqs` (half, 8), built in f64 by the wrapper, holds per pair i the turn rate
// f = inv_freq / 2pi as A = frac(4096 f) and B = f, each split into three f32 chunks of 12 significant bits
// at scales 2^-12, 2^-24, 2^-36. With pos = 4096 ph + pl (ph, pl < 4096) every chunk product is exact in f32,
// so frac(pos f) = frac(ph A + pl B) loses only the final additions' roundings. cos/sin are then polynomials on
// [-pi/4, pi/4] after a quadrant reduction in turns, not WGSL's cos/sin: the spec bounds those only by 2^-11
// absolute error, and SwiftShader's are off by 1.9e-4. Outputs match the f64 twin to ~1e-6.

override WG: u32 = 64u;
override KV_MODE: u32 = 0u; // rope_decode_kv's cache storage: 0 f32, 1 bf16, 2 f16

// Hkv (key/value heads; H counts the query heads) and Tcap (cache positions per row) are rope_decode_kv's.
struct Params {
  rows: u32,
  T: u32,
  H: u32,
  half: u32,
  pos_offset: u32,
  Hkv: u32,
  Tcap: u32,
}
const TABLE_STRIDE: u32 = 8u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (B,T,H,HD); also the input in place
@group(0) @binding(2) var<storage, read> freqs: array<f32>;     // (half, 8): A1 A2 A3 B1 B2 B3 - -
@group(0) @binding(3) var<storage, read> x: array<f32>;         // (B,T,H,HD)
@group(0) @binding(4) var<storage, read> positions: array<u32>; // (B*T)
// In-place variants bind positions third (a different variable may share a binding across entry points).
@group(0) @binding(3) var<storage, read> positions_ip: array<u32>; // (B*T)
// rope_decode_kv: out is q, positions_ip the positions, then the new keys and values and the caches (their words).
@group(0) @binding(4) var<storage, read> k_new: array<f32>;          // (B,T,Hkv,HD)
@group(0) @binding(5) var<storage, read> v_new: array<f32>;          // (B,T,Hkv,HD)
@group(0) @binding(6) var<storage, read_write> k_cache: array<u32>;  // (B,Tcap,Hkv,HD) f32 bits or half pairs
@group(0) @binding(7) var<storage, read_write> v_cache: array<u32>;
@group(0) @binding(8) var<storage, read> cursor: array<u32>;         // (1): added to positions and pos_offset

// bf16_bits(u), f16_bits(u): an f32's bits rounded to half bits.
// @region half-bits
// Stand-ins for what this file uses of block half-bits; kernels compile the block here.
fn bf16_bits(u: u32) -> u32 { return u >> 16u; }
fn f16_bits(u: u32) -> u32 { return u >> 16u; }
// @end half-bits

// (row n, pair i) of this invocation; n == p.rows past the end.
fn job(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> vec2<u32> {
  let k = (wid.x + wid.y * nwg.x) * WG + lid;
  if (k >= p.rows * p.half) { return vec2<u32>(p.rows, 0u); }
  let n = k / p.half;
  return vec2<u32>(n, k - n * p.half);
}

fn offset_pos(n: u32) -> u32 {
  return p.pos_offset + n % p.T;
}

// (cos, sin) of 2pi * u for u in turns: quadrant q = round(4u), then Taylor polynomials on |x| <= pi/4
// (truncation below 2e-9), so the error is a few f32 roundings on every implementation.
fn cos_sin_turns(u: f32) -> vec2<f32> {
  let q = round(4.0 * u);
  let x = (u - 0.25 * q) * 6.283185307179586;
  let x2 = x * x;
  let s = x * (1.0 + x2 * (-1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (-1.0 / 5040.0 + x2 * (1.0 / 362880.0)))));
  let c = 1.0 + x2 * (-0.5 + x2 * (1.0 / 24.0 + x2 * (-1.0 / 720.0 + x2 * (1.0 / 40320.0 + x2 * (-1.0 / 3628800.0)))));
  switch (i32(q) & 3) { // the angle is x + q * pi/2
    case 0: { return vec2<f32>(c, s); }
    case 1: { return vec2<f32>(-s, c); }
    case 2: { return vec2<f32>(-c, -s); }
    default: { return vec2<f32>(s, -c); }
  }
}

// (cos, sin) of pos * inv_freq[i], sin negated for the backward.
fn cos_sin(pos: u32, i: u32, sign: f32) -> vec2<f32> {
  let f = i * TABLE_STRIDE;
  let ph = f32(pos >> 12u);
  let pl = f32(pos & 4095u);
  let coarse = fract(fract(ph * freqs[f]) + fract(pl * freqs[f + 3u])); // exact: multiples of 2^-12
  var fine = (ph * freqs[f + 1u] + pl * freqs[f + 4u]) + (ph * freqs[f + 2u] + pl * freqs[f + 5u]);
  fine = fine - floor(fine);
  let t = coarse + fine; // turns in [0, 2)
  let cs = cos_sin_turns(t - round(t));
  return vec2<f32>(cs.x, sign * cs.y);
}

// q*cos + rotate_half(q)*sin for one pair, rotate_half(q) = cat(-q2, q1).
fn rotate(a: f32, b: f32, cs: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a * cs.x - b * cs.y, b * cs.x + a * cs.y);
}

fn head_base(n: u32, h: u32, i: u32) -> u32 {
  return (n * p.H + h) * 2u * p.half + i;
}

fn apply(n: u32, i: u32, cs: vec2<f32>) {
  for (var h = 0u; h < p.H; h++) {
    let o = head_base(n, h, i);
    let r = rotate(x[o], x[o + p.half], cs);
    out[o] = r.x;
    out[o + p.half] = r.y;
  }
}

fn apply_inplace(n: u32, i: u32, cs: vec2<f32>) {
  for (var h = 0u; h < p.H; h++) {
    let o = head_base(n, h, i);
    let r = rotate(out[o], out[o + p.half], cs);
    out[o] = r.x;
    out[o + p.half] = r.y;
  }
}

@compute @workgroup_size(WG)
fn rope_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply(j.x, j.y, cos_sin(offset_pos(j.x), j.y, 1.0));
}

@compute @workgroup_size(WG)
fn rope_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply(j.x, j.y, cos_sin(offset_pos(j.x), j.y, -1.0));
}

@compute @workgroup_size(WG)
fn rope_forward_positions(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                          @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply(j.x, j.y, cos_sin(positions[j.x], j.y, 1.0));
}

@compute @workgroup_size(WG)
fn rope_backward_positions(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply(j.x, j.y, cos_sin(positions[j.x], j.y, -1.0));
}

@compute @workgroup_size(WG)
fn rope_forward_inplace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply_inplace(j.x, j.y, cos_sin(offset_pos(j.x), j.y, 1.0));
}

@compute @workgroup_size(WG)
fn rope_backward_inplace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply_inplace(j.x, j.y, cos_sin(offset_pos(j.x), j.y, -1.0));
}

@compute @workgroup_size(WG)
fn rope_forward_inplace_positions(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                  @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply_inplace(j.x, j.y, cos_sin(positions_ip[j.x], j.y, 1.0));
}

@compute @workgroup_size(WG)
fn rope_backward_inplace_positions(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                                   @builtin(local_invocation_index) lid: u32) {
  let j = job(wid, nwg, lid);
  if (j.x >= p.rows) { return; }
  apply_inplace(j.x, j.y, cos_sin(positions_ip[j.x], j.y, -1.0));
}

// Writes elements e and e + 1 (e even) of a cache row: two f32 words, or one word of two halves (low first).
fn cache_pair(k: bool, e: u32, a: f32, b: f32) {
  if (KV_MODE == 0u) {
    if (k) { k_cache[e] = bitcast<u32>(a); k_cache[e + 1u] = bitcast<u32>(b); }
    else { v_cache[e] = bitcast<u32>(a); v_cache[e + 1u] = bitcast<u32>(b); }
    return;
  }
  var word: u32;
  if (KV_MODE == 1u) { word = bf16_bits(bitcast<u32>(a)) | (bf16_bits(bitcast<u32>(b)) << 16u); }
  else { word = f16_bits(bitcast<u32>(a)) | (f16_bits(bitcast<u32>(b)) << 16u); }
  if (k) { k_cache[e / 2u] = word; } else { v_cache[e / 2u] = word; }
}

@compute @workgroup_size(WG)
fn rope_decode_kv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let quarter = p.half / 2u;
  let job_id = (wid.x + wid.y * nwg.x) * WG + lid;
  if (job_id >= p.rows * quarter) { return; }
  let n = job_id / quarter;
  let i = 2u * (job_id - n * quarter); // pairs i and i + 1
  let step = cursor[0];
  let pos = positions_ip[n] + step;
  let cs0 = cos_sin(pos, i, 1.0);
  let cs1 = cos_sin(pos, i + 1u, 1.0);
  for (var h = 0u; h < p.H; h++) {
    let o = head_base(n, h, i);
    let r0 = rotate(out[o], out[o + p.half], cs0);
    let r1 = rotate(out[o + 1u], out[o + 1u + p.half], cs1);
    out[o] = r0.x;
    out[o + 1u] = r1.x;
    out[o + p.half] = r0.y;
    out[o + 1u + p.half] = r1.y;
  }
  // Row n = b * T + t goes to cache row b * Tcap + pos_offset + cursor + t.
  let t = n % p.T;
  let crow = (n - t) / p.T * p.Tcap + p.pos_offset + step + t;
  let HD = 2u * p.half;
  for (var h = 0u; h < p.Hkv; h++) {
    let o = (n * p.Hkv + h) * HD + i;
    let c = (crow * p.Hkv + h) * HD + i;
    let r0 = rotate(k_new[o], k_new[o + p.half], cs0);
    let r1 = rotate(k_new[o + 1u], k_new[o + 1u + p.half], cs1);
    cache_pair(true, c, r0.x, r1.x);
    cache_pair(true, c + p.half, r0.y, r1.y);
    cache_pair(false, c, v_new[o], v_new[o + 1u]);
    cache_pair(false, c + p.half, v_new[o + p.half], v_new[o + 1u + p.half]);
  }
}
