// sampler: one token per row of logits (N,V) on the GPU with temperature, top-k, top-p, min-p or greedy, driven by
// the counter-based RNG Philox4x32-10 (key (seed, 0), counter (row, step, 0, 0)), so decode steps need no
// readback and the same seed gives the same tokens as the CPU twin.
// Filters are thresholds on z = logits / tau found without sorting: top-k and top-p by a radix search over the
// order-preserving u32 key of z, 4 bits a pass (8 passes each: per pass, each lane counts (or sums the mass of) the
// row's z in the 16 digit buckets under the prefix found so far, and the lanes' buckets are merged in lane order),
// min-p by comparing z - max z with log(min_p). Both searches together read the row 16 times where a bitwise
// binary search read it 64 times, and past the first pass compute exp() only for the z under the prefix. Measured
// on SwiftShader (CPU), old and new interleaved, one row of 151,936: top-p 154-174 -> 86-100 ms, top-k + top-p
// 188-269 -> 151-172 ms, but top-k alone 91-100 -> 93-126 ms (a pass does more per element, which a CPU pays and
// a GPU, bound by reading the row, should not); a 99-token vocabulary within the machine's noise.
// The token is drawn by inverse CDF in vocabulary order (each lane of a row owns a contiguous chunk; chunk sums are
// accumulated in lane order), so results are deterministic.
// Outputs: token; logprob and entropy of the UNFILTERED softmax(z) (computed by block row-stats,
// shaders/blocks/row-stats.wgsl, which logprob.wgsl includes too, with the same layout, so they equal its output
// bit for bit on one device);
// filteredLogprob, the token's log-prob under the filtered, renormalised distribution that was sampled (0 for
// greedy).
// Entry points: sampler_sample (tokens, logprob, entropy, filteredLogprob, logits, cursor): the RNG's step is
//                 p.step + cursor[0] (a rollout's decode cursor, src/kernels/decode.ts; a zero outside decoding);
//               sampler_random (words (N,4)): the raw Philox words, a test hook for the RNG.
// CPU twin: src/reference/sampler.ts (sampleTokens, samplerRandom), which states the definitions precisely.

struct Params {
  rows: u32,
  cols: u32,
  seed: u32,
  step: u32,
  greedy: u32,
  topK: u32,
  tau: f32,
  topP: f32,
  logMinP: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> tokens: array<u32>;          // (N)
@group(0) @binding(2) var<storage, read_write> logprob: array<f32>;         // (N)
@group(0) @binding(3) var<storage, read_write> entropy: array<f32>;         // (N)
@group(0) @binding(4) var<storage, read_write> filteredLogprob: array<f32>; // (N)
@group(0) @binding(5) var<storage, read> logits: array<f32>;                // (N,V)
@group(0) @binding(6) var<storage, read> cursor: array<u32>;                // (1): added to p.step (a decode step)

@group(0) @binding(1) var<storage, read_write> words: array<u32>;           // sampler_random: (N,4)

// Row layout (LANES, ROWS, WG, row_of), lane merges and row_stats(); reads `logits` and `p.tau`.
// @region row-stats
// Stand-ins for what this file uses of block row-stats (with row-lanes, row-layout); kernels compile the block here.
override LANES: u32 = 1u; override ROWS: u32 = 64u; override WG: u32 = LANES * ROWS; override MERGE: u32 = 2u * WG;
var<private> merge_slot: u32; var<workgroup> lane_buf: array<f32, MERGE>;
fn row_of(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 { return lid; }
var<private> row_base: u32; fn z_at(c: u32) -> f32 { return 0.0; }
struct RowStats { zmax: f32, argmax: u32, logZ: f32, H: f32 }
fn row_stats(n: u32, lane: u32, lid: u32) -> RowStats { return RowStats(); }
// @end row-stats

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

fn sampler_words(row: u32, step: u32) -> vec4<u32> {
  return philox4x32_10(vec4<u32>(row, step, 0u, 0u), vec2<u32>(p.seed, 0u));
}

@compute @workgroup_size(64)
fn sampler_random(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = gid.x + gid.y * nwg.x * 64u;
  if (row >= p.rows) { return; }
  let w = sampler_words(row, p.step);
  words[row * 4u] = w.x;
  words[row * 4u + 1u] = w.y;
  words[row * 4u + 2u] = w.z;
  words[row * 4u + 3u] = w.w;
}


const NONE: u32 = 0xffffffffu;
// Whether top-k or top-p is on: the radix search below is compiled only then (without it sampler_sample compiles in
// about half the time on SwiftShader, and plain temperature sampling is the default).
override FILTERED: bool = true;

var<workgroup> chosen: array<u32, ROWS>; // per row slot: the token drawn by the lane that owns the draw

// ---- the radix threshold search ----

const DIGITS: u32 = 16u; // buckets per pass: 4 bits of the key
const DIGIT_INDEX = vec4<u32>(0u, 1u, 2u, 3u); // the first four buckets' digits
override DIGIT_ROWS: u32 = DIGITS * ROWS; // derived: every row's merged buckets
// One vec4 of buckets per thread, then the rows' merged buckets: 1 KiB + 64 B to 4 KiB. Kept small on purpose:
// SwiftShader's pipeline compile time grows steeply with workgroup memory. Measured per multi-lane layout: the
// bitwise search's pipeline 0.08-0.18 s; this one with all 16 buckets per thread at once (4 KiB more) 0.5-0.9 s;
// as written, one vec4 a round, 0.25-0.55 s.
var<workgroup> digit_lanes: array<vec4<u32>, WG>;
var<workgroup> digit_rows: array<u32, DIGIT_ROWS>;
var<private> digit_totals: array<vec4<u32>, 4>; // the row's 16 buckets, merged (lanes_digits)

// Sets digit_totals to the row's buckets b (four vec4 of 16) summed over its LANES lanes in lane order, as f32
// bits when `mass`, else as counts. Four rounds, one vec4 each: every lane writes it, lane i < 4 of the row sums
// component i over the lanes, then (after the last round) every lane reads the 16 sums. Call in uniform control
// flow. Each buffer is rewritten only after a later barrier that every reader of it has passed (no slots alternate).
fn lanes_digits(b0: vec4<u32>, b1: vec4<u32>, b2: vec4<u32>, b3: vec4<u32>, mass: bool, lane: u32, lid: u32) {
  digit_totals = array<vec4<u32>, 4>(b0, b1, b2, b3);
  if (LANES == 1u) { return; }
  let slot = lid / LANES;
  for (var j = 0u; j < 4u; j++) {
    digit_lanes[lid] = digit_totals[j];
    workgroupBarrier();
    if (lane < 4u) {
      var cnt = 0u;
      var sum = 0.0;
      for (var i = 0u; i < LANES; i++) {
        let v = digit_lanes[lid - lane + i][lane];
        cnt += v;
        sum += bitcast<f32>(v);
      }
      digit_rows[slot * DIGITS + 4u * j + lane] = select(cnt, bitcast<u32>(sum), mass);
    }
    workgroupBarrier();
  }
  for (var j = 0u; j < 4u; j++) {
    let o = slot * DIGITS + 4u * j;
    digit_totals[j] = vec4<u32>(digit_rows[o], digit_rows[o + 1u], digit_rows[o + 2u], digit_rows[o + 3u]);
  }
}

// Bucket d of the row's merged buckets.
fn digit_total(d: u32) -> u32 {
  return digit_totals[d / 4u][d % 4u];
}

// Whether key lies under prefix at the digit at bit `shift`: the bits above that digit equal prefix's.
fn under_prefix(key: u32, prefix: u32, shift: u32) -> bool {
  return shift >= 28u || (key >> (shift + 4u)) == (prefix >> (shift + 4u));
}

// The largest key K such that the row's z with key >= K number at least k (count), or hold at least topP of the
// unnormalised mass exp(z - zmax) (mass), counting only z with key >= floorKey: the k-th largest key, or the
// top-p threshold within the top-k set. Digit by digit from the top: the largest digit whose bucket and the
// buckets above it (plus everything above the prefix) still reach the goal. The goal of mass is topP times the
// row's mass above floorKey, which the first pass measures (its buckets summed in the order the search sums them,
// so digit 0 reaches it). Call in uniform control flow.
fn radix_threshold(k: u32, mass: bool, floorKey: u32, zmax: f32, n: u32, lane: u32, lid: u32) -> u32 {
  var prefix = 0u;
  var aboveCount = 0u;
  var aboveMass = 0.0;
  var goal = 0.0;
  for (var level = 0u; level < 8u; level++) {
    let shift = 28u - 4u * level;
    // The buckets as four vec4s, added to by comparing the digit with each bucket's index: no dynamic indexing of a
    // private array in the loop over the row, which SwiftShader runs many times slower.
    var c0 = vec4<u32>(0u);
    var c1 = vec4<u32>(0u);
    var c2 = vec4<u32>(0u);
    var c3 = vec4<u32>(0u);
    var m0 = vec4<f32>(0.0);
    var m1 = vec4<f32>(0.0);
    var m2 = vec4<f32>(0.0);
    var m3 = vec4<f32>(0.0);
    for (var c = lane; c < n; c += LANES) {
      let z = z_at(c);
      let key = float_key(z);
      if (key >= floorKey && under_prefix(key, prefix, shift)) {
        let d = vec4<u32>((key >> shift) & 15u);
        if (mass) {
          let w = vec4<f32>(exp(z - zmax));
          m0 += select(vec4<f32>(0.0), w, d == DIGIT_INDEX);
          m1 += select(vec4<f32>(0.0), w, d == DIGIT_INDEX + 4u);
          m2 += select(vec4<f32>(0.0), w, d == DIGIT_INDEX + 8u);
          m3 += select(vec4<f32>(0.0), w, d == DIGIT_INDEX + 12u);
        } else {
          c0 += select(vec4<u32>(0u), vec4<u32>(1u), d == DIGIT_INDEX);
          c1 += select(vec4<u32>(0u), vec4<u32>(1u), d == DIGIT_INDEX + 4u);
          c2 += select(vec4<u32>(0u), vec4<u32>(1u), d == DIGIT_INDEX + 8u);
          c3 += select(vec4<u32>(0u), vec4<u32>(1u), d == DIGIT_INDEX + 12u);
        }
      }
    }
    if (mass) {
      c0 = bitcast<vec4<u32>>(m0);
      c1 = bitcast<vec4<u32>>(m1);
      c2 = bitcast<vec4<u32>>(m2);
      c3 = bitcast<vec4<u32>>(m3);
    }
    lanes_digits(c0, c1, c2, c3, mass, lane, lid);
    if (mass && level == 0u) {
      var all = 0.0;
      for (var d = 0u; d < DIGITS; d++) { all += bitcast<f32>(digit_total(15u - d)); }
      goal = p.topP * all;
    }
    // The largest digit d with (everything above) + buckets d..15 reaching the goal; d = 0 always does.
    var d = 15u;
    var cnt = aboveCount;
    var sum = aboveMass;
    loop {
      cnt += digit_total(d);
      sum += bitcast<f32>(digit_total(d));
      let reached = select(cnt >= k, sum >= goal, mass);
      if (reached || d == 0u) { break; }
      d--;
    }
    prefix |= d << shift;
    aboveCount = cnt - digit_total(d);
    aboveMass = sum - bitcast<f32>(digit_total(d));
  }
  return prefix;
}

// ---- the sampler ----

// Order-preserving u32 key of an f32: a < b as floats <=> key(a) < key(b) (finite values).
fn float_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
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
    if (FILTERED && p.topK > 0u && p.topK < p.cols) { kKey = radix_threshold(p.topK, false, 0u, zmax, n, lane, lid); }
    // Top-p within the top-k set: the largest key K whose head {key >= K} holds mass >= topP * mass(top-k set).
    var pKey = 0u;
    if (FILTERED && p.topP < 1.0) { pKey = radix_threshold(0u, true, kKey, zmax, n, lane, lid); }
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
    let u = f32(sampler_words(row, p.step + cursor[0]).x >> 8u) * (1.0 / 16777216.0);
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
