// peak: the adapter's arithmetic throughput, for the benchmark's "fraction of peak" (src/bench/peak.ts).
// Entry point peak_fma: each invocation runs `iters` rounds of 8 independent vec4 multiply-adds on registers
// (64 flop per round, no memory traffic in the loop) and writes one sum so nothing is optimized away.
// Not a model kernel and it has no CPU twin: it computes nothing anyone reads.

override WG: u32 = 64u;

struct Params {
  iters: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn peak_fma(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = gid.x + gid.y * nwg.x * WG;
  let s = f32(id & 255u) * 1e-3;
  let m = vec4<f32>(0.999, 0.998, 0.997, 0.996) * p.scale;
  let c = vec4<f32>(1e-3, 2e-3, 3e-3, 4e-3);
  var a0 = vec4<f32>(s);
  var a1 = a0 + 0.1;
  var a2 = a0 + 0.2;
  var a3 = a0 + 0.3;
  var a4 = a0 + 0.4;
  var a5 = a0 + 0.5;
  var a6 = a0 + 0.6;
  var a7 = a0 + 0.7;
  for (var i = 0u; i < p.iters; i++) {
    a0 = a0 * m + c;
    a1 = a1 * m + c;
    a2 = a2 * m + c;
    a3 = a3 * m + c;
    a4 = a4 * m + c;
    a5 = a5 * m + c;
    a6 = a6 * m + c;
    a7 = a7 * m + c;
  }
  let t = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  out[id] = t.x + t.y + t.z + t.w;
}
