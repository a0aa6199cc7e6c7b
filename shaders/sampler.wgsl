// sampler: one token per row of logits (N,V) on the GPU with temperature, top-k, top-p, min-p or greedy, one
// workgroup per row, driven by the counter-based RNG Philox4x32-10 (key (seed, 0), counter (row, step, 0, 0)),
// so decode steps need no readback and the same seed gives the same tokens as the CPU twin.
// Filters are thresholds on z = logits / tau found without sorting: top-k and top-p by a bitwise binary search
// over the order-preserving u32 key of z (32 passes each, a fixed-order workgroup reduction per pass), min-p by
// comparing z - max z with log(min_p). The token is drawn by inverse CDF in vocabulary order (each thread owns a
// contiguous chunk; chunk sums are scanned in a fixed order), so results are deterministic.
// Outputs: token; logprob and entropy of the UNFILTERED softmax(z) (computed exactly like logprob.wgsl, so they
// equal its output bit for bit on one device); filteredLogprob, the token's log-prob under the filtered,
// renormalised distribution that was sampled (0 for greedy).
// Entry points: sampler_sample (tokens, logprob, entropy, filteredLogprob, logits);
//               sampler_random (words (N,4)): the raw Philox words, a test hook for the RNG.
// CPU twin: src/reference/sampler.ts (sampleTokens, samplerRandom), which states the definitions precisely.

override WG: u32 = 256u; // a power of two

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

var<workgroup> scratch: array<f32, WG>;
var<workgroup> scratchU: array<u32, WG>;
var<workgroup> chosen: u32;

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

// ---- workgroup reductions (fixed-order trees) ----

fn workgroup_sum(v: f32, lid: u32) -> f32 {
  scratch[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratch[lid] += scratch[lid + s]; }
    workgroupBarrier();
  }
  let r = scratch[0];
  workgroupBarrier();
  return r;
}

fn workgroup_count(v: u32, lid: u32) -> u32 {
  scratchU[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) { scratchU[lid] += scratchU[lid + s]; }
    workgroupBarrier();
  }
  let r = scratchU[0];
  workgroupBarrier();
  return r;
}

// Max value and its lowest index.
fn workgroup_argmax(v: f32, i: u32, lid: u32) -> vec2<u32> {
  scratch[lid] = v;
  scratchU[lid] = i;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      let a = scratch[lid];
      let b = scratch[lid + s];
      let bi = scratchU[lid + s];
      if (b > a || (b == a && bi < scratchU[lid])) {
        scratch[lid] = b;
        scratchU[lid] = bi;
      }
    }
    workgroupBarrier();
  }
  let r = vec2<u32>(bitcast<u32>(scratch[0]), scratchU[0]);
  workgroupBarrier();
  return r;
}

// ---- the sampler ----

// Order-preserving u32 key of an f32: a < b as floats <=> key(a) < key(b) (finite values).
fn float_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

var<private> row_base: u32;

fn z_at(c: u32) -> f32 {
  return logits[row_base + c] / p.tau;
}

// Number of z with key >= k.
fn count_at_least(k: u32, lid: u32) -> u32 {
  var n = 0u;
  for (var c = lid; c < p.cols; c += WG) { n += select(0u, 1u, float_key(z_at(c)) >= k); }
  return workgroup_count(n, lid);
}

// Mass (unnormalised, exp(z - zmax)) of z with key >= max(k, floorKey).
fn mass_at_least(k: u32, floorKey: u32, zmax: f32, lid: u32) -> f32 {
  let t = max(k, floorKey);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let z = z_at(c);
    if (float_key(z) >= t) { s += exp(z - zmax); }
  }
  return workgroup_sum(s, lid);
}

@compute @workgroup_size(WG)
fn sampler_sample(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; } // uniform across the workgroup
  row_base = row * p.cols;

  // Max (and argmax), log of the sum and entropy of softmax(z): the same arithmetic as logprob_forward.
  var m = -3.402823e38;
  var mi = 0u;
  for (var c = lid; c < p.cols; c += WG) {
    let z = z_at(c);
    if (z > m) { m = z; mi = c; }
  }
  let am = workgroup_argmax(m, mi, lid);
  let zmax = bitcast<f32>(am.x);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(z_at(c) - zmax); }
  let logZ = log(workgroup_sum(s, lid));
  var h = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let lp = (z_at(c) - zmax) - logZ;
    h -= exp(lp) * lp;
  }
  let H = workgroup_sum(h, lid);

  var tok = am.y;
  var filtered = 0.0;
  if (p.greedy == 0u) {
    // Top-k: the largest key K with count(key >= K) >= k is the key of the k-th largest z.
    var kKey = 0u;
    if (p.topK > 0u && p.topK < p.cols) {
      for (var bit = 31i; bit >= 0i; bit--) {
        let cand = kKey | (1u << u32(bit));
        if (count_at_least(cand, lid) >= p.topK) { kKey = cand; }
      }
    }
    // Top-p within the top-k set: the largest key K whose head {key >= K} holds mass >= topP * mass(top-k set).
    var pKey = 0u;
    if (p.topP < 1.0) {
      let need = p.topP * mass_at_least(0u, kKey, zmax, lid);
      for (var bit = 31i; bit >= 0i; bit--) {
        let cand = pKey | (1u << u32(bit));
        if (mass_at_least(cand, kKey, zmax, lid) >= need) { pKey = cand; }
      }
    }
    let tKey = max(kKey, pKey);

    // Inverse CDF in vocabulary order: thread lid owns columns [lid * chunk, (lid + 1) * chunk).
    let chunk = (p.cols + WG - 1u) / WG;
    let c0 = min(lid * chunk, p.cols);
    let c1 = min(c0 + chunk, p.cols);
    var part = 0.0;
    for (var c = c0; c < c1; c++) {
      let z = z_at(c);
      if (float_key(z) >= tKey && (z - zmax) >= p.logMinP) { part += exp(z - zmax); }
    }
    scratch[lid] = part;
    if (lid == 0u) { chosen = 0xffffffffu; }
    workgroupBarrier();
    if (lid == 0u) { // inclusive prefix sums of the chunk sums, in order
      var acc = 0.0;
      for (var i = 0u; i < WG; i++) {
        acc += scratch[i];
        scratch[i] = acc;
      }
    }
    workgroupBarrier();
    let total = scratch[WG - 1u];
    let u = f32(sampler_words(row).x >> 8u) * (1.0 / 16777216.0);
    let goal = u * total;
    let lo = select(0.0, scratch[max(lid, 1u) - 1u], lid > 0u);
    let hi = scratch[lid];
    if (lo <= goal && goal < hi) { // intervals [lo, hi) are disjoint: at most one thread claims the draw
      var acc = lo;
      var pick = 0xffffffffu;
      var last = 0xffffffffu;
      for (var c = c0; c < c1; c++) {
        let z = z_at(c);
        if (float_key(z) >= tKey && (z - zmax) >= p.logMinP) {
          let w = exp(z - zmax);
          if (w > 0.0) { last = c; }
          acc += w;
          if (acc > goal) { pick = c; break; }
        }
      }
      chosen = select(pick, last, pick == 0xffffffffu); // rounding fallback: the chunk's last kept token
    }
    workgroupBarrier();
    let picked = chosen;
    if (picked != 0xffffffffu) { tok = picked; } // else (u * total rounded up to total): the argmax
    filtered = (z_at(tok) - zmax) - log(total);
  }

  if (lid == 0u) {
    tokens[row] = tok;
    logprob[row] = (z_at(tok) - zmax) - logZ;
    entropy[row] = H;
    filteredLogprob[row] = filtered;
  }
}
