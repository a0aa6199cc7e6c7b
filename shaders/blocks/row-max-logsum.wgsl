// Block row-max-logsum (region row-max-logsum): a row's max and the log of its softmax normaliser, for
// the kernels without a temperature (softmax, cross-entropy); includes block row-lanes. A fragment, not a
// shader: shaders hold it in a region of its name. The including shader defines
// `fn row_value(i: u32) -> f32`, element i of its (rows, cols) input, so the block needs no buffer of its own.

// @region row-lanes
// @end row-lanes

// (max, log sum exp(v - max)) over the first n columns of the row at base (n = 0: reads nothing), with
// v = row_value(base + c); log-sum-exp = max + log sum. Call in uniform control flow.
fn row_max_logsum(base: u32, n: u32, lane: u32, lid: u32) -> vec2<f32> {
  var m = NEG_BIG;
  for (var c = lane; c < n; c += LANES) { m = max(m, row_value(base + c)); }
  let rowMax = lanes_max(m, lid);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(row_value(base + c) - rowMax); }
  return vec2<f32>(rowMax, log(lanes_sum(s, lid)));
}
