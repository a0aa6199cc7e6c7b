// elementwise: flat f32 operations over n elements, one element per invocation: an f32, or where n divides by 4 a
// vec4 (src/kernels/value-type.ts specializes the alias V, f32 as written, to vec4<f32>; on SwiftShader a vec4
// load costs about twice an f32 one, for four values).
// Entry points: elementwise_add (out = a + b), elementwise_scale (out = alpha * a), elementwise_fill (out = value),
// elementwise_copy (out = a). CPU twins: src/reference/elementwise.ts (add, scale, fill, copy).

override WG: u32 = 256u;

alias V = f32; // the value type: f32, or vec4<f32> (src/kernels/value-type.ts)

struct Params {
  n: u32,
  alpha: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<V>; // (n)
@group(0) @binding(2) var<storage, read> a: array<V>;         // (n)
@group(0) @binding(3) var<storage, read> b: array<V>;         // (n)

// Workgroups may be spread over x and y (see src/gpu/recorder.ts grid()).
fn index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

@compute @workgroup_size(WG)
fn elementwise_add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i < p.n) { out[i] = a[i] + b[i]; }
}

@compute @workgroup_size(WG)
fn elementwise_scale(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i < p.n) { out[i] = p.alpha * a[i]; }
}

@compute @workgroup_size(WG)
fn elementwise_fill(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i < p.n) { out[i] = V(p.alpha); }
}

@compute @workgroup_size(WG)
fn elementwise_copy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i < p.n) { out[i] = a[i]; }
}
