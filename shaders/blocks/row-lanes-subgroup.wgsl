// Block row-lanes-subgroup: block row-lanes's merges (lanes_sum, lanes_max, lanes_argmax) with subgroup
// operations, for devices with the `subgroups` feature; src/kernels/wgsl-blocks.ts puts it in a shader's region
// row-lanes and puts `enable subgroups;` first. A fragment, not a shader. Not used elsewhere.
// A row's LANES lanes (consecutive local invocation indices, starting at a multiple of LANES) are merged in two
// steps: a butterfly of subgroupShuffleXor over clusters of `width` = min(LANES, invocations in the subgroup)
// lanes, a fixed tree whose result every lane of the cluster holds bit for bit (float + and max commute); then,
// when LANES > 4, the clusters' results in cluster order through workgroup memory (one barrier). WebGPU's
// subgroups hold 4 to 128 invocations and their number is read at run time (subgroupAdd(1u)), never assumed; so
// 4-lane rows never need the workgroup step, and 16- or 64-lane rows read LANES / width values after it instead
// of LANES. It relies on a 1-D workgroup's subgroups being runs of consecutive local invocation indices that
// start at a multiple of their size, as on GPUs' drivers and SwiftShader (src/kernels/row-reductions.test.ts
// checks it on the test device). Sums come out in another order than block row-lanes's: equal up to rounding.
// The order of 16- and 64-lane rows follows the subgroup size, so a driver that compiled two pipelines with
// different sizes could round the sampler's and logprob's sums differently; 4-lane rows never depend on it.
// Call every merge in uniform control flow: rows past the last one join them too.

// @region row-layout
// @end row-layout

var<workgroup> lane_buf: array<f32, MERGE>;
var<workgroup> lane_buf_u: array<u32, MERGE>;

// Every WebGPU subgroup has at least 4 invocations: rows of up to 4 lanes never span two subgroups.
const SUBGROUP_MIN: u32 = 4u;

fn lanes_combine(a: f32, b: f32, op: u32) -> f32 {
  if (op == 0u) { return a + b; }
  return max(a, b);
}

// The lanes of this thread's row inside its subgroup: min(LANES, invocations in the subgroup), a power of two.
fn cluster_width() -> u32 {
  return min(LANES, subgroupAdd(1u));
}

// The row's LANES values of v combined with op (0: sum, 1: max).
fn lanes_merge(v: f32, lid: u32, op: u32) -> f32 {
  if (LANES == 1u) { return v; }
  let width = cluster_width();
  var a = v;
  for (var d = 1u; d < width; d <<= 1u) { a = lanes_combine(a, subgroupShuffleXor(a, d), op); }
  if (LANES <= SUBGROUP_MIN) { return a; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = a;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var t = lane_buf[r0];
  for (var i = width; i < LANES; i += width) { t = lanes_combine(t, lane_buf[r0 + i], op); }
  return t;
}

// The sum of the row's LANES values of v.
fn lanes_sum(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 0u);
}

// The largest of the row's LANES values of v.
fn lanes_max(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 1u);
}

// (b, bi) replaces (m, mi) when larger, or equal with a lower index: the lowest index of the largest value.
fn argmax_takes(m: f32, mi: u32, b: f32, bi: u32) -> bool {
  return b > m || (b == m && bi < mi);
}

// The row's largest v and its lowest index i, as (bitcast<u32>(v), i).
fn lanes_argmax(v: f32, i: u32, lid: u32) -> vec2<u32> {
  if (LANES == 1u) { return vec2<u32>(bitcast<u32>(v), i); }
  let width = cluster_width();
  var m = v;
  var mi = i;
  for (var d = 1u; d < width; d <<= 1u) {
    let b = subgroupShuffleXor(m, d);
    let bi = subgroupShuffleXor(mi, d);
    if (argmax_takes(m, mi, b, bi)) {
      m = b;
      mi = bi;
    }
  }
  if (LANES > SUBGROUP_MIN) {
    let o = merge_slot * WG;
    merge_slot ^= 1u;
    lane_buf[o + lid] = m;
    lane_buf_u[o + lid] = mi;
    workgroupBarrier();
    let r0 = o + lid - lid % LANES;
    m = lane_buf[r0];
    mi = lane_buf_u[r0];
    for (var j = width; j < LANES; j += width) {
      let b = lane_buf[r0 + j];
      let bi = lane_buf_u[r0 + j];
      if (argmax_takes(m, mi, b, bi)) {
        m = b;
        mi = bi;
      }
    }
  }
  return vec2<u32>(bitcast<u32>(m), mi);
}
