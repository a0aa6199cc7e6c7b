// optimizer: the global gradient norm over a list of tensors, the clip factor, gradient clipping and the AdamW
// step, all reading their scalars from GPU tensors so that a whole optimizer step is one command buffer with no
// readback. Deterministic: the norm is per-chunk partial sums of squares (fixed-order trees) into a small buffer,
// then one workgroup reduces the partials in a fixed order. No atomics.
// Entry points: grad_norm_partial (partials, grad): partials[offset + chunk] = sum of g^2 over one chunk;
//               grad_norm_partial_packed (partials, arena, chunk bounds): the same over tensors packed in one arena;
//               grad_norm_finalize (norm, partials): norm[0] = sqrt(sum of the partials);
//               grad_clip_scale (scale, norm): scale[0] = maxNorm / (norm + 1e-6) if norm > maxNorm, else 1;
//               grad_clip (grads, norm): grads *= that factor, in place;
//               adamw_step (params, m, v, grads), adamw_step_scaled (params, m, v, grads, scale): AdamW in place,
//               gradients multiplied by a Params scalar or by scale[0].
// CPU twins: src/reference/grad-norm.ts (gradNorm, clipScale, gradClip), src/reference/adamw.ts (adamwStep),
// src/reference/optimizer.ts (gradClipScale, adamwStepScaled).

override WG: u32 = 256u;   // a power of two
override ELEMS: u32 = 8u;  // grad_norm_partial: elements per thread, so a chunk is WG * ELEMS elements

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

@compute @workgroup_size(WG)
fn grad_norm_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let chunk = wid.x + wid.y * nwg.x;
  if (chunk >= pn.chunks) { return; } // grid overhang; uniform across the workgroup
  let start = chunk * WG * ELEMS;
  var s = 0.0;
  for (var j = 0u; j < ELEMS; j++) {
    let i = start + j * WG + lid;
    if (i < pn.n) {
      let g = src[i];
      s += g * g;
    }
  }
  let total = workgroup_sum(s, lid);
  if (lid == 0u) { out[pn.offset + chunk] = total; }
}

// Several tensors in one arena: chunk c sums arena[chunks[2c] + j * WG + lid] below chunks[2c + 1] (its tensor's
// end), the same elements in the same order as grad_norm_partial over that tensor alone, so the partials (and the
// norm) are bit for bit the per-tensor ones. pn.chunks: the number of chunks; pn.offset: the first one's partial (the
// arenas' groups before this one).
@group(0) @binding(3) var<storage, read> chunkBounds: array<u32>;

@compute @workgroup_size(WG)
fn grad_norm_partial_packed(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                            @builtin(local_invocation_index) lid: u32) {
  let chunk = wid.x + wid.y * nwg.x;
  if (chunk >= pn.chunks) { return; } // grid overhang; uniform across the workgroup
  let start = chunkBounds[2u * chunk];
  let end = chunkBounds[2u * chunk + 1u];
  var s = 0.0;
  for (var j = 0u; j < ELEMS; j++) {
    let i = start + j * WG + lid;
    if (i < end) {
      let g = src[i];
      s += g * g;
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

// p -= lr wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m / bc1) / (sqrt(v / bc2) + eps).
fn adamw(i: u32, g: f32) {
  var p = param[i];
  p -= pa.lr * pa.weightDecay * p;
  let m = pa.beta1 * m1[i] + pa.oneMinusBeta1 * g;
  let v = pa.beta2 * m2[i] + pa.oneMinusBeta2 * g * g;
  m1[i] = m;
  m2[i] = v;
  p -= (pa.lr * (m / pa.bc1)) / (sqrt(v / pa.bc2) + pa.eps);
  param[i] = p;
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
