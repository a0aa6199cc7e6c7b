// optimizer: the global gradient norm over a list of tensors, the clip factor, gradient clipping and the AdamW
// step, all reading their scalars from GPU tensors so that a whole optimizer step is one command buffer with no
// readback. Deterministic: the norm is per-chunk partial sums of squares (fixed-order trees) into a small buffer,
// then one workgroup reduces the partials in a fixed order. No atomics. A chunk is WG * ELEMS elements; a thread
// sums ELEMS / 4 quads of 4 consecutive elements (quad j * WG + lid of the chunk, each added as dot(g, g)), so the
// packed entry reads them as vec4 (SwiftShader: 16M elements in 43 ms as vec4, 200 ms as four scalar loads).
// Entry points: grad_norm_partial (partials, grad): partials[offset + chunk] = sum of g^2 over one chunk;
//               grad_norm_partial_packed (partials, arena, arena as vec4, chunk bounds): the same over tensors
//               packed in one arena, in the same order, so the partials are bit for bit the per-tensor ones;
//               grad_norm_finalize (norm, partials): norm[0] = sqrt(sum of the partials);
//               grad_clip_scale (scale, norm): scale[0] = maxNorm / (norm + 1e-6) if norm > maxNorm, else 1;
//               grad_clip (grads, norm): grads *= that factor, in place;
//               adamw_step (params, m, v, grads), adamw_step_scaled (params, m, v, grads, scale): AdamW in place,
//               gradients multiplied by a Params scalar or by scale[0];
//               adamw_step_packed (params, m, v, grads, scale as vec4 arrays): adamw_step_scaled over arenas of a
//               length divisible by 4, a vec4 a thread (the same arithmetic per element, bit for bit).
// CPU twins: src/reference/grad-norm.ts (gradNorm, clipScale, gradClip), src/reference/adamw.ts (adamwStep),
// src/reference/optimizer.ts (gradClipScale, adamwStepScaled).

override WG: u32 = 256u;   // a power of two
override ELEMS: u32 = 8u;  // grad_norm_partial: elements per thread (divisible by 4), a chunk WG * ELEMS elements

struct NormParams {
  n: u32,
  offset: u32,
  chunks: u32,
  maxNorm: f32,
}

struct AdamParams {
  n: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  oneMinusBeta1: f32,
  oneMinusBeta2: f32,
  eps: f32,
  weightDecay: f32,
  bc1: f32,
  bc2: f32,
  gradScale: f32,
}

// (Bindings repeat numbers across entry points: WGSL only requires them distinct within one entry's interface.)
@group(0) @binding(0) var<uniform> pn: NormParams;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;   // partials | norm (1) | scale (1) | grads
@group(0) @binding(2) var<storage, read> src: array<f32>;         // grad | partials | norm (1)

@group(0) @binding(0) var<uniform> pa: AdamParams;
@group(0) @binding(1) var<storage, read_write> param: array<f32>;
@group(0) @binding(2) var<storage, read_write> m1: array<f32>;
@group(0) @binding(3) var<storage, read_write> m2: array<f32>;
@group(0) @binding(4) var<storage, read> grad: array<f32>;
@group(0) @binding(5) var<storage, read> scale: array<f32>;       // (1)

var<workgroup> scratch: array<f32, WG>;

fn workgroup_sum(v: f32, lid: u32) -> f32 {
  scratch[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratch[lid] += scratch[lid + s]; }
    workgroupBarrier();
  }
  let r = scratch[0];
  workgroupBarrier();
  return r;
}

fn clip_factor(norm: f32, maxNorm: f32) -> f32 {
  return select(1.0, maxNorm / (norm + 1e-6), norm > maxNorm);
}

// A thread's quads in a chunk: quad j * WG + lid for j < ELEMS / 4, its first element first + 4 * (j * WG + lid).
fn quad_start(first: u32, j: u32, lid: u32) -> u32 {
  return first + 4u * (j * WG + lid);
}

// Elements k..k+3 of a tensor of `end` elements (zeros past it), read one at a time (any length).
fn tensor_quad(k: u32, end: u32) -> vec4<f32> {
  let last = end - 1u;
  let g = vec4<f32>(src[k], src[min(k + 1u, last)], src[min(k + 2u, last)], src[min(k + 3u, last)]);
  return select(vec4<f32>(0.0), g, vec4<u32>(k, k + 1u, k + 2u, k + 3u) < vec4<u32>(end));
}

@compute @workgroup_size(WG)
fn grad_norm_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let chunk = wid.x + wid.y * nwg.x;
  if (chunk >= pn.chunks) { return; } // grid overhang; uniform across the workgroup
  var s = 0.0;
  for (var j = 0u; j < ELEMS / 4u; j++) {
    let k = quad_start(chunk * WG * ELEMS, j, lid);
    if (k < pn.n) {
      let g = tensor_quad(k, pn.n);
      s += dot(g, g);
    }
  }
  let total = workgroup_sum(s, lid);
  if (lid == 0u) { out[pn.offset + chunk] = total; }
}

// Several tensors in one arena: chunk c sums the quads from chunkBounds[2c] below chunkBounds[2c + 1] (its tensor's
// end), the same elements in the same order as grad_norm_partial over that tensor alone, so the partials (and the
// norm) are bit for bit the per-tensor ones. pn.chunks: the number of chunks; pn.offset: the first one's partial (the
// arenas' groups before this one).
@group(0) @binding(3) var<storage, read> chunkBounds: array<u32>;
@group(0) @binding(4) var<storage, read> src4: array<vec4<f32>>;  // the arena again, as quads

@compute @workgroup_size(WG)
fn grad_norm_partial_packed(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) lid: u32) {
  let chunk = wid.x + wid.y * nwg.x;
  if (chunk >= pn.chunks) { return; } // grid overhang; uniform across the workgroup
  let end = chunkBounds[2u * chunk + 1u];
  var s = 0.0;
  for (var j = 0u; j < ELEMS / 4u; j++) {
    let k = quad_start(chunkBounds[2u * chunk], j, lid);
    if (k < end) {
      // k and the arena's length are multiples of 4: the quad is in bounds; elements past the tensor count zero.
      let g = select(vec4<f32>(0.0), src4[k / 4u], vec4<u32>(k, k + 1u, k + 2u, k + 3u) < vec4<u32>(end));
      s += dot(g, g);
    }
  }
  let total = workgroup_sum(s, lid);
  if (lid == 0u) { out[pn.offset + chunk] = total; }
}

@compute @workgroup_size(WG)
fn grad_norm_finalize(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  for (var i = lid; i < pn.n; i += WG) { s += src[i]; }
  let total = workgroup_sum(s, lid);
  if (lid == 0u) { out[0] = sqrt(total); }
}

@compute @workgroup_size(1)
fn grad_clip_scale() {
  out[0] = clip_factor(src[0], pn.maxNorm);
}

@compute @workgroup_size(WG)
fn grad_clip(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= pn.n) { return; }
  let s = clip_factor(src[0], pn.maxNorm);
  if (s != 1.0) { out[i] = out[i] * s; }
}

struct AdamwResult {
  p: vec4<f32>,
  m: vec4<f32>,
  v: vec4<f32>,
}

// p -= lr wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m / bc1) / (sqrt(v / bc2) + eps), lane by lane.
fn adamw4(p0: vec4<f32>, m0: vec4<f32>, v0: vec4<f32>, g: vec4<f32>) -> AdamwResult {
  var p = p0;
  p -= pa.lr * pa.weightDecay * p;
  let m = pa.beta1 * m0 + pa.oneMinusBeta1 * g;
  let v = pa.beta2 * v0 + pa.oneMinusBeta2 * g * g;
  p -= (pa.lr * (m / pa.bc1)) / (sqrt(v / pa.bc2) + pa.eps);
  return AdamwResult(p, m, v);
}

fn adamw(i: u32, g: f32) {
  let r = adamw4(vec4<f32>(param[i]), vec4<f32>(m1[i]), vec4<f32>(m2[i]), vec4<f32>(g));
  m1[i] = r.m.x;
  m2[i] = r.v.x;
  param[i] = r.p.x;
}

@compute @workgroup_size(WG)
fn adamw_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= pa.n) { return; }
  adamw(i, pa.gradScale * grad[i]);
}

@compute @workgroup_size(WG)
fn adamw_step_scaled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= pa.n) { return; }
  adamw(i, scale[0] * grad[i]);
}

@group(0) @binding(1) var<storage, read_write> param4: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> m14: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> m24: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> grad4: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn adamw_step_packed(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= pa.n / 4u) { return; }
  let r = adamw4(param4[i], m14[i], m24[i], scale[0] * grad4[i]);
  m14[i] = r.m;
  m24[i] = r.v;
  param4[i] = r.p;
}
