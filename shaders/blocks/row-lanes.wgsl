// Block row-lanes (region row-lanes): the merges of a row's lanes (f32 sum and max, and argmax), in lane
// order through workgroup memory, on top of block row-layout, which it includes. A fragment, not a shader:
// shaders hold it in a region of its name (src/gpu/specialize.ts). Every device runs it; a device with the `subgroups`
// feature gets block row-lanes-subgroup in its place (same functions, same results up to summation order).
// Call every merge in uniform control flow: rows past the last one join them too.

// @region row-layout
// @end row-layout

var<workgroup> lane_buf: array<f32, MERGE>;
var<workgroup> lane_buf_u: array<u32, MERGE>;

// The row's LANES values of v in lane order, combined with op (0: sum, 1: max).
fn lanes_merge(v: f32, lid: u32, op: u32) -> f32 {
  if (LANES == 1u) { return v; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var a = lane_buf[r0];
  for (var i = 1u; i < LANES; i++) {
    let b = lane_buf[r0 + i];
    if (op == 0u) { a += b; } else { a = max(a, b); }
  }
  return a;
}

// The sum of the row's LANES values of v, in lane order.
fn lanes_sum(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 0u);
}

// The largest of the row's LANES values of v.
fn lanes_max(v: f32, lid: u32) -> f32 {
  return lanes_merge(v, lid, 1u);
}

// The row's largest v and its lowest index i, as (bitcast<u32>(v), i).
fn lanes_argmax(v: f32, i: u32, lid: u32) -> vec2<u32> {
  if (LANES == 1u) { return vec2<u32>(bitcast<u32>(v), i); }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf[o + lid] = v;
  lane_buf_u[o + lid] = i;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var m = lane_buf[r0];
  var mi = lane_buf_u[r0];
  for (var j = 1u; j < LANES; j++) {
    let b = lane_buf[r0 + j];
    let bi = lane_buf_u[r0 + j];
    if (b > m || (b == m && bi < mi)) {
      m = b;
      mi = bi;
    }
  }
  return vec2<u32>(bitcast<u32>(m), mi);
}
