// bradley-terry: a reward model's Bradley-Terry loss over P preference pairs (docs/algorithms.md#reward-models-and-bradley-terry),
// forward and backward in one single-workgroup dispatch: the scalar loss, d loss / d scores and three metrics. Not the
// reward model's forward. Formulas: the CPU twin, src/reference/bradley-terry.ts (bradleyTerryForwardBackward).
// Entry point: bradley_terry_forward_backward (loss, dScores, metrics, scores, pairs), the twin's order.
//
// One workgroup of WG threads: thread t sums pairs t, t + WG, ... in order, then a tree, for s = WG/2, ..., 1:
// partial[t] += partial[t + s]. The gradient loop gives each score one thread, which sums its pairs in pair order:
// O(N P) work without float atomics, fine for the few hundred pairs of a reward-model batch.

const WG: u32 = 64u;

struct Params {
  n: u32,
  pairs: u32,
  center_coef: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> loss: array<f32>;     // (1)
@group(0) @binding(2) var<storage, read_write> d_scores: array<f32>; // (N)
@group(0) @binding(3) var<storage, read_write> metrics: array<f32>;  // (3): bt_loss, bt_accuracy, bt_margin
@group(0) @binding(4) var<storage, read> scores: array<f32>;         // (N)
@group(0) @binding(5) var<storage, read> pairs: array<u32>;          // (P, 2): preferred, other

var<workgroup> red: array<vec4<f32>, WG>; // (sum softplus(-d), sum [d > 0], sum d, sum (c + r)^2)

// -log sigmoid(d) without overflow.
fn softplus_neg(d: f32) -> f32 {
  return max(-d, 0.0) + log(1.0 + exp(-abs(d)));
}

@compute @workgroup_size(WG)
fn bradley_terry_forward_backward(@builtin(local_invocation_index) lid: u32) {
  var a = vec4<f32>(0.0);
  for (var q = lid; q < p.pairs; q += WG) {
    let c = scores[pairs[2u * q]];
    let r = scores[pairs[2u * q + 1u]];
    let d = c - r;
    a += vec4<f32>(softplus_neg(d), select(0.0, 1.0, d > 0.0), d, (c + r) * (c + r));
  }
  red[lid] = a;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { red[lid] += red[lid + s]; }
    workgroupBarrier();
  }
  let inv = select(0.0, 1.0 / f32(p.pairs), p.pairs > 0u);
  if (lid == 0u) {
    let tot = red[0];
    loss[0] = (tot.x + p.center_coef * tot.w) * inv;
    metrics[0] = tot.x * inv;
    metrics[1] = tot.y * inv;
    metrics[2] = tot.z * inv;
  }
  for (var i = lid; i < p.n; i += WG) {
    var g = 0.0;
    for (var q = 0u; q < p.pairs; q++) {
      let ci = pairs[2u * q];
      let ri = pairs[2u * q + 1u];
      if (ci != i && ri != i) { continue; }
      let c = scores[ci];
      let r = scores[ri];
      let sn = 1.0 / (1.0 + exp(c - r));
      let center = 2.0 * p.center_coef * (c + r);
      if (ci == i) { g += -sn + center; }
      if (ri == i) { g += sn + center; }
    }
    d_scores[i] = g * inv;
  }
}
