// sampler: one token per row of logits (N,V) on the GPU with temperature, top-k, top-p, min-p or greedy, driven by
// the counter-based RNG Philox4x32-10 (key (seed, 0), counter (row, step, 0, 0)), so decode steps need no
// readback and the same seed gives the same tokens as the CPU twin.
// Filters are thresholds on z = logits / tau found without sorting: top-k and top-p by a bitwise binary search
// over the order-preserving u32 key of z (32 passes each, a fixed-order reduction over the row per pass), min-p by
// comparing z - max z with log(min_p). The token is drawn by inverse CDF in vocabulary order (each lane of a row
// owns a contiguous chunk; chunk sums are accumulated in lane order), so results are deterministic.
// Outputs: token; logprob and entropy of the UNFILTERED softmax(z) (computed by block row-stats,
// shaders/blocks/row-stats.wgsl, which logprob.wgsl includes too, with the same layout, so they equal its output
// bit for bit on one device);
// filteredLogprob, the token's log-prob under the filtered, renormalised distribution that was sampled (0 for
// greedy).
// Entry points: sampler_sample (tokens, logprob, entropy, filteredLogprob, logits);
//               sampler_random (words (N,4)): the raw Philox words, a test hook for the RNG.
// CPU twin: src/reference/sampler.ts (sampleTokens, samplerRandom), which states the definitions precisely.

struct Params {
  rows: u32,
  cols: u32,
  seed: u32,
  step: u32,
  greedy: u32,  // 1: argmax (greedy flag, or temperature 0)
  topK: u32,    // 0 (or >= cols): off
  tau: f32,     // temperature, or 1 when greedy with temperature 0
  topP: f32,    // 1: off
  logMinP: f32, // log(min_p), or -3.4e38 when off
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> tokens: array<u32>;          // (N)
@group(0) @binding(2) var<storage, read_write> logprob: array<f32>;         // (N)
@group(0) @binding(3) var<storage, read_write> entropy: array<f32>;         // (N)
@group(0) @binding(4) var<storage, read_write> filteredLogprob: array<f32>; // (N)
@group(0) @binding(5) var<storage, read> logits: array<f32>;                // (N,V)

@group(0) @binding(1) var<storage, read_write> words: array<u32>;           // sampler_random: (N,4)

// Row layout (LANES, ROWS, WG, row_of), lane merges and row_stats(); reads `logits` and `p.tau`.
// @include row-stats

// ---- Philox4x32-10 ----

fn mulhi32(a: u32, b: u32) -> u32 {
  let al = a & 0xffffu;
  let ah = a >> 16u;
  let bl = b & 0xffffu;
  let bh = b >> 16u;
  let ll = al * bl;
  let lh = al * bh;
  let hl = ah * bl;
  let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}

fn philox4x32_10(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var k = key;
  for (var r = 0u; r < 10u; r++) {
    if (r > 0u) { k += vec2<u32>(0x9e3779b9u, 0xbb67ae85u); }
    let hi0 = mulhi32(0xd2511f53u, c.x);
    let lo0 = 0xd2511f53u * c.x;
    let hi1 = mulhi32(0xcd9e8d57u, c.z);
    let lo1 = 0xcd9e8d57u * c.z;
    c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

fn sampler_words(row: u32) -> vec4<u32> {
  return philox4x32_10(vec4<u32>(row, p.step, 0u, 0u), vec2<u32>(p.seed, 0u));
}

@compute @workgroup_size(64)
fn sampler_random(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 64u;
  if (row >= p.rows) { return; }
  let w = sampler_words(row);
  words[row * 4u] = w.x;
  words[row * 4u + 1u] = w.y;
  words[row * 4u + 2u] = w.z;
  words[row * 4u + 3u] = w.w;
}


const NONE: u32 = 0xffffffffu;

var<workgroup> chosen: array<u32, ROWS>; // per row slot: the token drawn by the lane that owns the draw

// The row's LANES counts v, summed. Call in uniform control flow (the same slots as block row-lanes's merges).
fn lanes_count(v: u32, lid: u32) -> u32 {
  if (LANES == 1u) { return v; }
  let o = merge_slot * WG;
  merge_slot ^= 1u;
  lane_buf_u[o + lid] = v;
  workgroupBarrier();
  let r0 = o + lid - lid % LANES;
  var s = lane_buf_u[r0];
  for (var i = 1u; i < LANES; i++) { s += lane_buf_u[r0 + i]; }
  return s;
}

// ---- the sampler ----

// Order-preserving u32 key of an f32: a < b as floats <=> key(a) < key(b) (finite values).
fn float_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// Number of z (of the first n columns) with key >= k.
fn count_at_least(k: u32, n: u32, lane: u32, lid: u32) -> u32 {
  var cnt = 0u;
  for (var c = lane; c < n; c += LANES) { cnt += select(0u, 1u, float_key(z_at(c)) >= k); }
  return lanes_count(cnt, lid);
}

// Mass (unnormalised, exp(z - zmax)) of z (of the first n columns) with key >= max(k, floorKey).
fn mass_at_least(k: u32, floorKey: u32, zmax: f32, n: u32, lane: u32, lid: u32) -> f32 {
  let t = max(k, floorKey);
  var s = 0.0;
  for (var c = lane; c < n; c += LANES) {
    let z = z_at(c);
    if (float_key(z) >= t) { s += exp(z - zmax); }
  }
  return lanes_sum(s, lid);
}

@compute @workgroup_size(WG)
fn sampler_sample(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let row = row_of(wid, nwg, lid);
  let lane = lid % LANES;
  let slot = lid / LANES;
  let live = row < p.rows;
  let n = select(0u, p.cols, live); // rows past the last read nothing but join every merge
  row_base = row * p.cols;

  // Max (and argmax), log of the sum and entropy of softmax(z): block row-stats, as in logprob_forward.
  let st = row_stats(n, lane, lid);
  let zmax = st.zmax;

  var tok = st.argmax;
  var filtered = 0.0;
  if (p.greedy == 0u) {
    // Top-k: the largest key K with count(key >= K) >= k is the key of the k-th largest z.
    var kKey = 0u;
    if (p.topK > 0u && p.topK < p.cols) {
      for (var bit = 31i; bit >= 0i; bit--) {
        let cand = kKey | (1u << u32(bit));
        if (count_at_least(cand, n, lane, lid) >= p.topK) { kKey = cand; }
      }
    }
    // Top-p within the top-k set: the largest key K whose head {key >= K} holds mass >= topP * mass(top-k set).
    var pKey = 0u;
    if (p.topP < 1.0) {
      let need = p.topP * mass_at_least(0u, kKey, zmax, n, lane, lid);
      for (var bit = 31i; bit >= 0i; bit--) {
        let cand = pKey | (1u << u32(bit));
        if (mass_at_least(cand, kKey, zmax, n, lane, lid) >= need) { pKey = cand; }
      }
    }
    let tKey = max(kKey, pKey);

    // Inverse CDF in vocabulary order: lane i of the row owns columns [i * chunk, (i + 1) * chunk).
    let chunk = (n + LANES - 1u) / LANES;
    let c0 = min(lane * chunk, n);
    let c1 = min(c0 + chunk, n);
    var part = 0.0;
    for (var c = c0; c < c1; c++) {
      let z = z_at(c);
      if (float_key(z) >= tKey && (z - zmax) >= p.logMinP) { part += exp(z - zmax); }
    }
    // [lo, hi): this lane's share of the row's kept mass, the chunk sums accumulated in lane order.
    var lo = 0.0;
    var hi = part;
    var total = part;
    if (LANES > 1u) {
      let o = merge_slot * WG;
      merge_slot ^= 1u;
      lane_buf[o + lid] = part;
      if (lane == 0u) { chosen[slot] = NONE; }
      workgroupBarrier();
      let r0 = o + lid - lane;
      var acc = 0.0;
      for (var i = 0u; i < LANES; i++) {
        if (i == lane) { lo = acc; }
        acc += lane_buf[r0 + i];
        if (i == lane) { hi = acc; }
      }
      total = acc;
    }
    let u = f32(sampler_words(row).x >> 8u) * (1.0 / 16777216.0);
    let goal = u * total;
    let owner = lo <= goal && goal < hi; // intervals [lo, hi) are disjoint: at most one lane owns the draw
    var pick = NONE;
    if (owner) {
      var acc = lo;
      var last = NONE;
      for (var c = c0; c < c1; c++) {
        let z = z_at(c);
        if (float_key(z) >= tKey && (z - zmax) >= p.logMinP) {
          let w = exp(z - zmax);
          if (w > 0.0) { last = c; }
          acc += w;
          if (acc > goal) { pick = c; break; }
        }
      }
      pick = select(pick, last, pick == NONE); // rounding fallback: the chunk's last kept token
    }
    if (LANES > 1u) {
      if (owner) { chosen[slot] = pick; }
      workgroupBarrier();
      pick = chosen[slot];
    }
    if (pick != NONE) { tok = pick; } // else (u * total rounded up to total): the argmax
    if (live) { filtered = (z_at(tok) - zmax) - log(total); }
  }

  if (live && lane == 0u) {
    tokens[row] = tok;
    logprob[row] = (z_at(tok) - zmax) - st.logZ;
    entropy[row] = st.H;
    filteredLogprob[row] = filtered;
  }
}
