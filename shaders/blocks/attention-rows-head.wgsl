// Block attention-rows-head (region attention-rows-head): what both forms of attention-rows share, the head-dim
// and rows-per-thread constants (values that src/kernels/attention.ts specializes; as written, head dim 4 and one
// row a thread), the output bindings (after the uniform params at 0, which each shader binds itself) and a
// thread's index.

const HD4: u32 = 1u; // head dim / 4
const RQ: u32 = 1u; // rows per thread
const NEG_BIG: f32 = -3.402823e38; // "minus infinity" that stays finite: exp(NEG_BIG - m) is 0

// Each entry's bindings follow its twin's argument order, so a slot holds different tensors per entry.
@group(0) @binding(1) var<storage, read_write> o1: array<vec4<f32>>; // forward: out; dq: dq; dkdv: dk
@group(0) @binding(2) var<storage, read_write> o2f: array<f32>;      // forward: lse (B,NH,T)
@group(0) @binding(2) var<storage, read_write> o2: array<vec4<f32>>; // dkdv: dv

fn thread_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.x + wid.y * nwg.x) * WG + lid;
}
