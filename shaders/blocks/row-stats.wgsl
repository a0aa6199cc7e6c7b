// Block row-stats (region row-stats): max, argmax, log-sum-exp and entropy of softmax(logits / tau) over a
// row, for logprob.wgsl and sampler.wgsl; includes block row-lanes. A fragment, not a shader: shaders hold
// it in a region of its name. The including shader declares `logits` (storage array<f32>, (rows, cols))
// and a uniform `p` with `tau` (temperature > 0). Both wrappers lay rows out with rowLayout(V), so the sampler's
// log-prob and entropy equal logprob_forward's bit for bit, whatever the number of rows of either call: the same
// code in the same order (pi_old of a rollout is exactly the sampler's distribution). The lane merges (lanes_sum,
// lanes_argmax) come from block row-lanes, or row-lanes-subgroup on a device with subgroups (one variant for
// every family of a device, src/kernels/wgsl-blocks.ts).

// @region row-lanes
// @end row-lanes

var<private> row_base: u32; // this thread's row * cols

fn z_at(c: u32) -> f32 {
  return logits[row_base + c] / p.tau;
}

struct RowStats {
  zmax: f32,   // max of z = logits / tau
  argmax: u32, // its lowest index
  logZ: f32,   // log sum exp(z - zmax)
  H: f32,      // entropy of softmax(z)
}

// Statistics of softmax(z) over the first n columns of the row at row_base (n = 0: reads nothing). Call in
// uniform control flow.
fn row_stats(n: u32, lane: u32, lid: u32) -> RowStats {
  var m = NEG_BIG;
  var mi = 0u;
  for (var c = lane; c < n; c += LANES) {
    let z = z_at(c);
    if (z > m) {
      m = z;
      mi = c;
    }
  }
  let am = lanes_argmax(m, mi, lid);
  let zmax = bitcast<f32>(am.x);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) { s += exp(z_at(c) - zmax); }
  let logZ = log(lanes_sum(s, lid));
  var h = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let lp = (z_at(c) - zmax) - logZ;
    h -= exp(lp) * lp;
  }
  return RowStats(zmax, am.y, logZ, lanes_sum(h, lid));
}
