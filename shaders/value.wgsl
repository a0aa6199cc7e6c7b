// value: PPO's clipped value loss (docs/algorithms.md#ppo-value-loss-and-critic), token-mean over masked tokens, forward and backward in one
// single-workgroup dispatch: the scalar loss, d loss / d values and four metrics. Not GAE or the returns (src/rl)
// and not the critic's forward. Formulas: the CPU twin, src/reference/value.ts (valueLossForwardBackward).
// Entry point: value_loss_forward_backward (loss, dValues, metrics, values, oldValues, returns, mask), the twin's order.
//
// One workgroup of WG threads loops over all N*L tokens (a training batch has at most ~16k): no float atomics, and
// every sum has a fixed order, the twin's: thread t sums tokens t, t + WG, t + 2 WG, ... in index order, then a
// tree, for s = WG/2, ..., 1: partial[t] += partial[t + s]. A second loop writes dValues, which needs the total
// masked count M (under gradient accumulation the whole minibatch's, Params.aggTokens). Tokens with mask 0 are
// skipped entirely (padding may hold any value) and get dValues = 0.

const WG: u32 = 64u;

struct Params {
  count: u32,
  clip: u32,
  cliprange: f32,
  coef: f32,
  agg: u32,
  aggTokens: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> loss: array<f32>;    // (1)
@group(0) @binding(2) var<storage, read_write> d_values: array<f32>; // (N,L)
@group(0) @binding(3) var<storage, read_write> metrics: array<f32>; // (4): value_loss, clipfrac, vpred_mean, return_mean
@group(0) @binding(4) var<storage, read> values: array<f32>;        // (N,L)
@group(0) @binding(5) var<storage, read> old_values: array<f32>;    // (N,L)
@group(0) @binding(6) var<storage, read> returns: array<f32>;       // (N,L)
@group(0) @binding(7) var<storage, read> mask: array<f32>;          // (N,L)

var<workgroup> red_a: array<vec4<f32>, WG>; // (sum m, sum m l, sum m [clipped], sum m V)
var<workgroup> red_b: array<f32, WG>;       // sum m R

// Token i's (l, clipped 0/1, dl/dV). Where uc > u strictly, V lies outside the clip range (inside it vc = V and the
// branches tie), so d vc / d V = 0 and the token passes no gradient; ties take the unclipped branch.
fn token(i: u32) -> vec3<f32> {
  let V = values[i];
  let R = returns[i];
  let d = V - R;
  let u = d * d;
  if (p.clip == 0u) { return vec3<f32>(0.5 * u, 0.0, d); }
  let Vold = old_values[i];
  let vc = min(max(V, Vold - p.cliprange), Vold + p.cliprange);
  let dc = vc - R;
  let uc = dc * dc;
  if (uc > u) { return vec3<f32>(0.5 * uc, 1.0, 0.0); }
  return vec3<f32>(0.5 * u, 0.0, d);
}

@compute @workgroup_size(WG)
fn value_loss_forward_backward(@builtin(local_invocation_index) lid: u32) {
  var a = vec4<f32>(0.0);
  var b = 0.0;
  for (var i = lid; i < p.count; i += WG) {
    let m = mask[i];
    if (m == 0.0) { continue; }
    let t = token(i);
    a += vec4<f32>(m, m * t.x, m * t.y, m * values[i]);
    b += m * returns[i];
  }
  red_a[lid] = a;
  red_b[lid] = b;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red_a[lid] += red_a[lid + s];
      red_b[lid] += red_b[lid + s];
    }
    workgroupBarrier();
  }
  let tot = red_a[0];
  let M = select(tot.x, p.aggTokens, p.agg != 0u); // the minibatch's count under gradient accumulation
  let inv = select(0.0, 1.0 / M, M != 0.0);
  if (lid == 0u) {
    loss[0] = p.coef * tot.y * inv;
    metrics[0] = tot.y * inv;
    metrics[1] = tot.z * inv;
    metrics[2] = tot.w * inv;
    metrics[3] = red_b[0] * inv;
  }
  let scale = p.coef * inv;
  for (var i = lid; i < p.count; i += WG) {
    let m = mask[i];
    var g = 0.0;
    if (m != 0.0) { g = scale * m * token(i).z; }
    d_values[i] = g;
  }
}
