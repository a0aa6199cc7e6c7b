// swiglu: the Llama MLP gate, out = silu(gate) * up with silu(g) = g * sigmoid(g), elementwise over n values,
// one element per invocation: an f32, or where n divides by 4 a vec4 (src/kernels/value-type.ts specializes the
// alias V, f32 as written, to vec4<f32>; on SwiftShader a vec4 load costs about twice an f32 one, for four values).
// Not the gate/up/down projections (matmuls).
// Entry points: swiglu_forward (out, gate, up); swiglu_backward (dGate, dUp, dOut, gate, up).
// CPU twins: src/reference/swiglu.ts (swigluForward, swigluBackward).
//
// Each entry point declares its own variables; the two share binding numbers, which WGSL allows because no
// entry point uses two variables with the same binding (auto layouts hold only what an entry point uses).

override WG: u32 = 256u;

alias V = f32; // the value type: f32, or vec4<f32> (src/kernels/value-type.ts)

struct Params {
  n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;

// swiglu_forward
@group(0) @binding(1) var<storage, read_write> out: array<V>; // (n)
@group(0) @binding(2) var<storage, read> gate: array<V>;      // (n)
@group(0) @binding(3) var<storage, read> up: array<V>;        // (n)

// swiglu_backward
@group(0) @binding(1) var<storage, read_write> d_gate: array<V>; // (n)
@group(0) @binding(2) var<storage, read_write> d_up: array<V>;   // (n)
@group(0) @binding(3) var<storage, read> d_out: array<V>;        // (n)
@group(0) @binding(4) var<storage, read> gate_b: array<V>;       // (n)
@group(0) @binding(5) var<storage, read> up_b: array<V>;         // (n)

// Workgroups may be spread over x and y (see src/gpu/recorder.ts grid()).
fn index(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}

// 1 / (1 + exp(-g)): exp overflows to +inf for g < -88 and the quotient is then 0, the right limit.
fn sigmoid(g: V) -> V {
  return 1.0 / (1.0 + exp(-g));
}

@compute @workgroup_size(WG)
fn swiglu_forward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i >= p.n) { return; }
  let g = gate[i];
  out[i] = g * sigmoid(g) * up[i];
}

// dUp = dOut * silu(gate); dGate = dOut * up * s * (1 + gate * (1 - s)), s = sigmoid(gate).
@compute @workgroup_size(WG)
fn swiglu_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let i = index(wid, nwg, lid);
  if (i >= p.n) { return; }
  let g = gate_b[i];
  let s = sigmoid(g);
  let dy = d_out[i];
  d_up[i] = dy * g * s;
  d_gate[i] = dy * up_b[i] * s * (1.0 + g * (1.0 - s));
}
