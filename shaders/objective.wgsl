// objective: the unified RL objective (docs/algorithms.md#policy-losses) over N sequences padded to L tokens,
// forward and backward in one go: scalar loss, d loss / d logp and d loss / d entropy per token, per-token records
// for the inspector and the objective's metrics. Every formula is stated in the CPU twin, src/reference/objective.ts
// (objectiveForwardBackward); this file follows it in f32. Not the log-prob backward, the advantages or the value loss.
//
// The wrapper copies the per-token inputs into one packed u32 buffer of PLANES planes (N, L) (floats as bits),
// which keeps every entry point within 8 storage buffers, and owns a small stats buffer. Three dispatches:
//   objective_select   (packed, stats)   one workgroup: masked-token count M, and when a token selection is on
//                      (top_entropy_quantile, clip_cov, kl_cov) its batch-level threshold by a bitwise search over
//                      order-preserving u32 keys (32 passes, integer counts, one barrier a pass), then per-token
//                      selection flags into the packed buffer's FLAGS plane.
//   objective_rows     (dLogp, dEntropy, records, stats, packed)   a row = a sequence, LANES threads per row
//                      (ROWS rows a workgroup): per-row n_i and the sequence ratio, then every token's loss,
//                      gradients and records, then (sequence ratio, GMPO) the row's summed ratio gradient back to
//                      its tokens; the row's metric partial sums and its masked-token count n_i go to stats.
//   objective_finalize (loss, metrics, stats)   one workgroup: a thread per metric reduces the row partials in row
//                      order (sums; the per-row clip fractions' min / max for low_min / high_max). No float atomics
//                      anywhere: every sum has a fixed order, so results are deterministic.
// Gradient accumulation (flag F_AGG): the call is one micro-batch of a minibatch, and M and N of the aggregation
// weights and of the metrics' means are the minibatch's (Params.aggTokens, aggRows) rather than counted here.

override LANES: u32 = 1u;        // threads per row (1, 4, 16 or 64)
override ROWS: u32 = 64u;        // rows per workgroup
override WG: u32 = LANES * ROWS; // derived: do not pass
// The run's discrete configuration, constant per pipeline so that code for a feature that is off is not compiled
// (a third of objective_rows' compile time on SwiftShader, nearly all of objective_select's).
override FLAGS: u32 = 0u;   // F_* bits (objective_select: only those it reads; objective_rows: all)
override RS_MODE: u32 = 0u; // RS_*: the rollout correction (objective_rows)

// Declared in src/kernels/objective.ts: SELECT_WG (objective_select's workgroup; the twin's selectionSum follows its
// order), FINAL_WG (objective_finalize: one thread per metric, plus the loss), the planes P_* of the packed input
// (each N*L words; P_COVKEY: scratch u32 covariance keys, 0 not a candidate; P_FLAGS: u32 flags, bit 0 kept by the
// entropy quantile, bit 1 cov-selected), the stats layout S_ROWS and RP, the feature bits F_* of FLAGS and
// the codes of Params.lossType (LOSS_*), aggMode (AGG_*), klMode (KL_*) and RS_MODE (RS_*, the rollout correction).
const SELECT_WG: u32 = 256u;
const FINAL_WG: u32 = 20u;
const P_LOGP: u32 = 0u;
const P_OLD: u32 = 1u;
const P_ADV: u32 = 2u;
const P_MASK: u32 = 3u;
const P_ENT: u32 = 4u;
const P_REF: u32 = 5u;
const P_SAMPLER: u32 = 6u;
const P_KLX: u32 = 7u;
const P_COVKEY: u32 = 8u;
const P_FLAGS: u32 = 9u;
const S_ROWS: u32 = 16u;
const RP: u32 = 24u;
const F_DUAL: u32 = 1u;
const F_DELTA: u32 = 2u;
const F_SAMPLER: u32 = 8u;
const F_KLX: u32 = 16u;
const F_KL: u32 = 32u;
const F_SEL_ENT: u32 = 64u;
const F_CLIP_COV: u32 = 128u;
const F_KL_COV: u32 = 256u;
const F_KL_ST: u32 = 4096u;
const F_KL_BC: u32 = 8192u;
const F_AGG: u32 = 16384u;
const F_RS_MIN: u32 = 512u;
const F_RS_MAX: u32 = 1024u;
const F_OFF: u32 = 2048u;
const RS_OFF: u32 = 0u;
const RS_TOKEN_TRUNCATE: u32 = 1u;
const RS_TOKEN_MASK: u32 = 2u;
const RS_SEQUENCE_TRUNCATE: u32 = 3u;
const RS_SEQUENCE_MASK: u32 = 4u;
const RS_SEQUENCE_GEO_MASK: u32 = 5u;
const LOSS_PPO_CLIP: u32 = 0u;
const LOSS_CISPO: u32 = 1u;
const LOSS_GMPO: u32 = 2u;
const LOSS_SAPO: u32 = 3u;
const LOSS_PG: u32 = 4u;
const LOSS_DPPO_TV: u32 = 5u;
const LOSS_DPPO_KL: u32 = 6u;
const LOSS_DRO: u32 = 7u;
const LOSS_VESPO: u32 = 8u;
const LOSS_PRIME_DPPO: u32 = 9u;
const AGG_TOKEN_MEAN: u32 = 0u;
const AGG_SEQ_MEAN_TOKEN_MEAN: u32 = 1u;
const AGG_SEQ_MEAN_TOKEN_SUM: u32 = 2u;
const AGG_SEQ_MEAN_TOKEN_SUM_NORM: u32 = 3u;
const KL_K1: u32 = 1u;
const KL_K2: u32 = 2u;
const KL_K3: u32 = 3u;
const KL_LOW_VAR_KL: u32 = 4u;
const KL_EXACT: u32 = 5u;

// Stats buffer (u32 words): batch values, then RP words per row from S_ROWS.
const S_M: u32 = 0u;       // f32 masked-token count M
const S_KEY_ENT: u32 = 1u; // u32 entropy threshold key
const S_KEY_COV: u32 = 2u; // u32 covariance threshold key
const S_MEAN_A: u32 = 3u;  // f32 mean advantage over masked tokens (cov selection only)
const S_MEAN_LP: u32 = 4u; // f32 mean logp over masked tokens (cov selection only)
// Row partials.
const Q_LOSS: u32 = 0u;
const Q_POLICY: u32 = 1u;
const Q_LOW: u32 = 2u;
const Q_HIGH: u32 = 3u;
const Q_CISPO: u32 = 4u;
const Q_KL: u32 = 5u;
const Q_KLX: u32 = 6u;
const Q_ENT: u32 = 7u;
const Q_APPROX: u32 = 8u;
const Q_DIFF: u32 = 9u;
const Q_DIFFMAX: u32 = 10u;
const Q_KEPT: u32 = 11u;
const Q_COV: u32 = 12u;
const Q_N: u32 = 13u;     // masked tokens in the row (n_i)
const Q_ISW: u32 = 14u;   // rollout correction: summed weight c
const Q_TRUNC: u32 = 15u; // rollout correction: tokens truncated
const Q_ISMASK: u32 = 16u; // rollout correction: tokens masked
const Q_OFF: u32 = 17u;   // off-policy mask: tokens dropped

struct Params {
  N: u32,
  L: u32,
  lossType: u32,
  seqLevel: u32,
  aggMode: u32,
  klMode: u32,
  epsLow: f32,
  epsHigh: f32,
  clipC: f32,
  delta: f32,
  epsMax: f32,
  tauPos: f32,
  tauNeg: f32,
  gmpoClip: f32,
  beta: f32,
  entropyCoef: f32,
  oneMinusQ: f32,
  covFrac: f32,
  covLb: f32,
  covUb: f32,
  klCovCoef: f32,
  rsMin: f32,
  rsMax: f32,
  offThreshold: f32,
  dppoCap: f32,
  droBeta: f32,
  vespoKPos: f32,
  vespoLamPos: f32,
  vespoKNeg: f32,
  vespoLamNeg: f32,
  advTau: f32,
  klTau: f32,
  aggRows: u32,
  aggTokens: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
// objective_select
@group(0) @binding(1) var<storage, read_write> sel_packed: array<u32>;
@group(0) @binding(2) var<storage, read_write> sel_stats: array<u32>;
// objective_rows
@group(0) @binding(1) var<storage, read_write> d_logp: array<f32>;
@group(0) @binding(2) var<storage, read_write> d_entropy: array<f32>;
@group(0) @binding(3) var<storage, read_write> recs: array<f32>; // (5, N, L)
@group(0) @binding(4) var<storage, read_write> row_stats: array<u32>;
@group(0) @binding(5) var<storage, read> packed: array<u32>;
// objective_finalize
@group(0) @binding(1) var<storage, read_write> loss_out: array<f32>;    // (1)
@group(0) @binding(2) var<storage, read_write> metrics_out: array<f32>; // (K)
@group(0) @binding(3) var<storage, read> fin_stats: array<u32>;

// ---------------------------------------------------------------------------------------------- shared math

// Order-preserving u32 key of an f32 (as in sampler.wgsl): a < b <=> key(a) < key(b) for finite values.
fn float_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// e^x - 1 without cancellation near 0.
fn expm1(x: f32) -> f32 {
  if (abs(x) < 0.1) { return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0))))); }
  return exp(x) - 1.0;
}

// e^x - 1 - x without cancellation near 0.
fn expm1_minus_x(x: f32) -> f32 {
  if (abs(x) < 0.1) { return x * x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0))))); }
  return exp(x) - 1.0 - x;
}

fn ppo_side(r: f32, A: f32) -> f32 {
  if (r < 1.0 - p.epsLow && A < 0.0) { return -1.0; }
  if (r > 1.0 + p.epsHigh && A > 0.0) { return 1.0; }
  return 0.0;
}

// GMPO's clipped log-ratio (x), d dmin / d d (y) and side (z).
fn gmpo_token(d: f32, A: f32) -> vec3<f32> {
  let dc = clamp(d, -20.0, 20.0);
  let e = clamp(dc, -p.gmpoClip, p.gmpoClip);
  let inside = d > -20.0 && d < 20.0;
  if (A > 0.0) {
    let clipped = dc > p.gmpoClip;
    return vec3<f32>(min(dc, e), select(0.0, 1.0, !clipped && inside), select(0.0, 1.0, clipped));
  }
  if (A < 0.0) {
    let clipped = dc < -p.gmpoClip;
    return vec3<f32>(max(dc, e), select(0.0, 1.0, !clipped && inside), select(0.0, -1.0, clipped));
  }
  return vec3<f32>(0.0);
}

// The twin's LOG_WEIGHT_CAP: a log importance weight is capped at 20 above before exp.
fn capped_exp(x: f32) -> f32 { return exp(min(x, 20.0)); }

// Outside [rsMin, rsMax] (a bound whose flag is unset does not bound).
fn rs_outside(v: f32) -> bool {
  return ((FLAGS & F_RS_MIN) != 0u && v < p.rsMin) || ((FLAGS & F_RS_MAX) != 0u && v > p.rsMax);
}

// The twin's rolloutCorrectionWeight: (c, truncated, masked) from the token's log weight x, the row's sum X and n.
fn rs_weight(x: f32, rowSum: f32, n: f32) -> vec3<f32> {
  switch (RS_MODE) {
    case RS_TOKEN_TRUNCATE, RS_SEQUENCE_TRUNCATE: {
      let w = capped_exp(select(rowSum, x, RS_MODE == RS_TOKEN_TRUNCATE));
      var c = w;
      if ((FLAGS & F_RS_MIN) != 0u) { c = max(c, p.rsMin); }
      if ((FLAGS & F_RS_MAX) != 0u) { c = min(c, p.rsMax); }
      return vec3<f32>(c, select(0.0, 1.0, rs_outside(w)), 0.0);
    }
    case RS_TOKEN_MASK, RS_SEQUENCE_MASK: {
      let w = capped_exp(select(rowSum, x, RS_MODE == RS_TOKEN_MASK));
      let out = rs_outside(w);
      return vec3<f32>(select(w, 0.0, out), 0.0, select(0.0, 1.0, out));
    }
    case RS_SEQUENCE_GEO_MASK: {
      let out = rs_outside(capped_exp(select(0.0, rowSum / n, n > 0.0)));
      return vec3<f32>(select(capped_exp(x), 0.0, out), 0.0, select(0.0, 1.0, out));
    }
    default: { return vec3<f32>(1.0, 0.0, 0.0); } // RS_OFF
  }
}

// DPPO's divergence mask (the twin's dppoValid): 1 where the token may still move in the direction A pushes it.
fn dppo_valid(lp: f32, old: f32, A: f32) -> f32 {
  let pr = exp(lp);
  let q = exp(old);
  if (p.lossType == LOSS_DPPO_TV) {
    return select(select(0.0, 1.0, pr - q >= -p.epsLow), select(0.0, 1.0, pr - q <= p.epsHigh), A > 0.0);
  }
  let b = q * (old - lp) + (1.0 - q) * log((1.0 - q + 1e-8) / (1.0 - pr + 1e-8));
  return select(select(0.0, 1.0, b <= p.epsLow || pr >= q), select(0.0, 1.0, b <= p.epsHigh || pr <= q), A > 0.0);
}

// ---------------------------------------------------------------------------------------------- objective_select

var<workgroup> sel_sum: array<vec2<f32>, SELECT_WG>;
var<workgroup> sel_count: atomic<u32>;
var<workgroup> sel_counters: array<atomic<u32>, 6>; // 3 rotating slots x (entropy, cov)

fn sel_f(plane: u32, i: u32) -> f32 {
  return bitcast<f32>(sel_packed[plane * p.N * p.L + i]);
}

@compute @workgroup_size(SELECT_WG)
fn objective_select(@builtin(local_invocation_index) lid: u32) {
  let NL = p.N * p.L;
  var c = 0u;
  for (var i = lid; i < NL; i += SELECT_WG) { if (sel_f(P_MASK, i) > 0.0) { c++; } }
  atomicAdd(&sel_count, c);
  workgroupBarrier();
  let n = atomicLoad(&sel_count);
  let selEnt = (FLAGS & F_SEL_ENT) != 0u;
  let clipCov = (FLAGS & F_CLIP_COV) != 0u;
  let covMode = (FLAGS & (F_CLIP_COV | F_KL_COV)) != 0u;

  var meanA = 0.0;
  var meanLp = 0.0;
  if (covMode) {
    var s = vec2<f32>(0.0);
    for (var i = lid; i < NL; i += SELECT_WG) {
      if (sel_f(P_MASK, i) > 0.0) { s += vec2<f32>(sel_f(P_ADV, i), sel_f(P_LOGP, i)); }
    }
    sel_sum[lid] = s;
    workgroupBarrier();
    for (var st = SELECT_WG / 2u; st > 0u; st >>= 1u) {
      if (lid < st) { sel_sum[lid] += sel_sum[lid + st]; }
      workgroupBarrier();
    }
    let tot = sel_sum[0];
    if (n > 0u) {
      meanA = tot.x / f32(n);
      meanLp = tot.y / f32(n);
    }
    // Each thread writes, and later reads, only its own strided tokens' keys: no barrier needed between.
    for (var i = lid; i < NL; i += SELECT_WG) {
      var key = 0u;
      if (sel_f(P_MASK, i) > 0.0) {
        let A = sel_f(P_ADV, i);
        let lp = sel_f(P_LOGP, i);
        let cov = (A - meanA) * (lp - meanLp);
        var cand = true;
        if (clipCov) {
          let r = exp(lp - sel_f(P_OLD, i));
          cand = ppo_side(r, A) == 0.0 && cov > p.covLb && cov < p.covUb;
        }
        if (cand) { key = float_key(cov); }
      }
      sel_packed[P_COVKEY * NL + i] = key;
    }
  }

  var kEnt = 0u;
  if (selEnt && n > 0u) { kEnt = n - u32(ceil(p.oneMinusQ * f32(n - 1u))); }
  var kCov = 0u;
  if (covMode && n > 0u) { kCov = max(u32(floor(p.covFrac * f32(n))), 1u); }

  // Both threshold searches at once: after pass b, bit 31 - b of each key is settled. The key K found is the
  // largest with #{key >= K} >= k, i.e. the key of the k-th largest. Counts rotate over three slots so that a
  // pass needs one barrier: pass b adds into slot b % 3, reads slot (b - 1) % 3, and thread 0 clears
  // slot (b + 1) % 3, which nobody touches in pass b.
  // (n comes from an atomic, which the uniformity analysis cannot see as uniform: with n = 0 the search runs
  // with k = 0 and selects nothing, as there are no masked tokens.)
  var keyEnt = 0u;
  var keyCov = 0u;
  if (selEnt || covMode) {
    for (var b = 0u; b <= 32u; b++) {
      if (b > 0u) {
        let prev = (b - 1u) % 3u;
        let bit = 1u << (32u - b);
        keyEnt = select(keyEnt, keyEnt | bit, atomicLoad(&sel_counters[prev * 2u]) >= kEnt);
        keyCov = select(keyCov, keyCov | bit, atomicLoad(&sel_counters[prev * 2u + 1u]) >= kCov);
      }
      if (b == 32u) { break; }
      let bit = 1u << (31u - b);
      let candEnt = keyEnt | bit;
      let candCov = keyCov | bit;
      var ne = 0u;
      var nc = 0u;
      for (var i = lid; i < NL; i += SELECT_WG) {
        if (selEnt && sel_f(P_MASK, i) > 0.0 && float_key(sel_f(P_ENT, i)) >= candEnt) { ne++; }
        if (covMode && sel_packed[P_COVKEY * NL + i] >= candCov) { nc++; }
      }
      let slot = b % 3u;
      atomicAdd(&sel_counters[slot * 2u], ne);
      atomicAdd(&sel_counters[slot * 2u + 1u], nc);
      if (lid == 0u) {
        let next = (b + 1u) % 3u;
        atomicStore(&sel_counters[next * 2u], 0u);
        atomicStore(&sel_counters[next * 2u + 1u], 0u);
      }
      workgroupBarrier();
    }
    for (var i = lid; i < NL; i += SELECT_WG) {
      var fl = 0u;
      if (sel_f(P_MASK, i) > 0.0) {
        if (!selEnt || float_key(sel_f(P_ENT, i)) >= keyEnt) { fl |= 1u; }
        let ck = sel_packed[P_COVKEY * NL + i];
        if (covMode && ck != 0u && ck >= keyCov) { fl |= 2u; }
      }
      sel_packed[P_FLAGS * NL + i] = fl;
    }
  }
  if (lid == 0u) {
    // Under gradient accumulation (F_AGG) M is the whole minibatch's masked tokens, given by the wrapper.
    sel_stats[S_M] = bitcast<u32>(select(f32(n), p.aggTokens, (FLAGS & F_AGG) != 0u));
    sel_stats[S_KEY_ENT] = keyEnt;
    sel_stats[S_KEY_COV] = keyCov;
    sel_stats[S_MEAN_A] = bitcast<u32>(meanA);
    sel_stats[S_MEAN_LP] = bitcast<u32>(meanLp);
  }
}

// ---------------------------------------------------------------------------------------------- objective_rows

var<workgroup> part: array<vec4<f32>, WG>;

// Sums v over the lanes of this thread's row, in lane order; every lane gets the total.
fn row_sum(v: vec4<f32>, lid: u32) -> vec4<f32> {
  part[lid] = v;
  workgroupBarrier();
  let base = (lid / LANES) * LANES;
  var s = vec4<f32>(0.0);
  for (var j = 0u; j < LANES; j++) { s += part[base + j]; }
  workgroupBarrier();
  return s;
}

// As row_sum for x, y, z; the max for w.
fn row_sum3_max1(v: vec4<f32>, lid: u32) -> vec4<f32> {
  part[lid] = v;
  workgroupBarrier();
  let base = (lid / LANES) * LANES;
  var s = vec4<f32>(0.0);
  for (var j = 0u; j < LANES; j++) {
    let q = part[base + j];
    s = vec4<f32>(s.xyz + q.xyz, max(s.w, q.w));
  }
  workgroupBarrier();
  return s;
}

fn in_f(plane: u32, idx: u32) -> f32 {
  return bitcast<f32>(packed[plane * p.N * p.L + idx]);
}

fn put_stat(row: u32, q: u32, v: f32) {
  row_stats[S_ROWS + row * RP + q] = bitcast<u32>(v);
}

@compute @workgroup_size(WG)
fn objective_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let row = (wid.x + wid.y * nwg.x) * ROWS + lid / LANES;
  let lane = lid % LANES;
  let valid = row < p.N;
  let end = select(0u, p.L, valid); // rows past the end loop over nothing but join the barriers
  let o = row * p.L;
  let NL = p.N * p.L;
  let gmpo = p.lossType == LOSS_GMPO;
  let seqGrad = gmpo || (p.seqLevel == 1u && p.lossType != LOSS_CISPO && p.lossType != LOSS_PG);
  let hasSel = (FLAGS & (F_SEL_ENT | F_CLIP_COV | F_KL_COV)) != 0u;

  // Row pass 1: n_i, the sum that makes the sequence ratio, the rollout correction's X_i and the off-policy
  // mask's summed log(pi_sampler / pi_theta).
  let hasSampler = (FLAGS & F_SAMPLER) != 0u;
  var n = 0.0;
  var sumD = 0.0;
  var sumIs = 0.0;
  var sumOff = 0.0;
  var sumV = 0.0; // vespo: the summed, clamped log-ratio
  for (var t = lane; t < end; t += LANES) {
    let idx = o + t;
    if (in_f(P_MASK, idx) > 0.0) {
      n += 1.0;
      let lp = in_f(P_LOGP, idx);
      let old = in_f(P_OLD, idx);
      let d = lp - old;
      sumD += select(d, gmpo_token(d, in_f(P_ADV, idx)).x, gmpo);
      let b = select(old, in_f(P_SAMPLER, idx), hasSampler);
      if (hasSampler) { sumIs += old - b; }
      sumOff += b - lp;
      sumV += clamp(d, -20.0, 20.0);
      // TRL's vespo: a token rollout correction's weight enters the sequence weight in log space (the twin's
      // vespoLogCorrection), not the loss.
      if (RS_MODE != RS_OFF && p.lossType == LOSS_VESPO) {
        sumV += clamp(log(max(rs_weight(old - b, 0.0, 0.0).x, 1e-30)), log(1e-8), 20.0);
      }
    }
  }
  let pre = row_sum(vec4<f32>(n, sumD, sumIs, sumOff), lid);
  n = pre.x;
  let rSeq = select(1.0, exp(pre.y / n), n > 0.0);
  let logWV = clamp(row_sum(vec4<f32>(sumV, 0.0, 0.0, 0.0), lid).x, log(1e-8), 20.0); // vespo
  let offDrop = (FLAGS & F_OFF) != 0u && n > 0.0 && pre.w / n > p.offThreshold;

  let M = bitcast<f32>(row_stats[S_M]);
  let Nf = select(f32(p.N), f32(p.aggRows), (FLAGS & F_AGG) != 0u); // the minibatch's N under F_AGG
  var w = 0.0;
  switch (p.aggMode) {
    case AGG_TOKEN_MEAN: { w = select(0.0, 1.0 / M, M > 0.0); }
    case AGG_SEQ_MEAN_TOKEN_MEAN: { w = select(0.0, 1.0 / (Nf * n), n > 0.0); }
    case AGG_SEQ_MEAN_TOKEN_SUM: { w = 1.0 / Nf; }
    default: { w = 1.0 / (Nf * f32(p.L)); } // AGG_SEQ_MEAN_TOKEN_SUM_NORM
  }

  // Row pass 2: every token.
  var q0 = vec4<f32>(0.0); // loss, policy, low, high
  var q1 = vec4<f32>(0.0); // cispo, kl, klExact, entropy
  var q2 = vec4<f32>(0.0); // approx_kl, logp diff, kept, cov-selected
  var q3 = vec4<f32>(0.0); // rollout weight, truncated, masked, off-policy dropped
  var S = 0.0;             // the row's d loss / d (sequence ratio)
  var sKl = 0.0;           // the row's d loss / d s_i through the corrected KL (F_KL_BC at sequence level)
  var diffMax = 0.0;
  for (var t = lane; t < end; t += LANES) {
    let idx = o + t;
    if (in_f(P_MASK, idx) <= 0.0) {
      d_logp[idx] = 0.0;
      d_entropy[idx] = 0.0;
      for (var k = 0u; k < 5u; k++) { recs[k * NL + idx] = 0.0; }
      continue;
    }
    let lp = in_f(P_LOGP, idx);
    let old = in_f(P_OLD, idx);
    let A = in_f(P_ADV, idx);
    let H = in_f(P_ENT, idx);
    let d = lp - old;
    let rho = exp(d);
    let r = select(rho, rSeq, gmpo || p.seqLevel == 1u);
    var l = 0.0;
    var gr = 0.0;   // d l / d r
    var gdir = 0.0; // d l / d logp through logp itself (CISPO)
    var side = 0.0;
    switch (p.lossType) {
      case LOSS_PPO_CLIP: {
        let lo = 1.0 - p.epsLow;
        let hi = 1.0 + p.epsHigh;
        let hasDelta = (FLAGS & F_DELTA) != 0u;
        let rc = select(r, min(r, p.delta), hasDelta);
        let u1 = rc * A;
        let u2 = clamp(r, lo, hi) * A;
        if (u1 <= u2) {
          l = -u1;
          gr = select(0.0, -A, !hasDelta || r < p.delta);
        } else {
          l = -u2;
          gr = select(0.0, -A, r > lo && r < hi);
        }
        if ((FLAGS & F_DUAL) != 0u && A < 0.0 && l > -p.clipC * A) {
          l = -p.clipC * A;
          gr = 0.0;
        }
        side = ppo_side(r, A);
      }
      case LOSS_CISPO: {
        let wgt = min(r, p.epsMax);
        l = -wgt * A * lp;
        gdir = -wgt * A;
        if (r > p.epsMax) {
          side = 1.0;
          q1.x += 1.0;
        }
      }
      case LOSS_GMPO: {
        l = -A * r;
        side = gmpo_token(d, A).z;
      }
      case LOSS_PG: { // REINFORCE: -A logp, no ratio
        l = -A * lp;
        gdir = -A;
      }
      case LOSS_DPPO_TV, LOSS_DPPO_KL: { // DPPO: -A sg(min(rho, C)) logp on tokens inside the divergence region
        let valid = dppo_valid(lp, old, A);
        let wgt = min(exp(clamp(d, -20.0, 20.0)), p.dppoCap);
        l = -A * wgt * lp * valid;
        gdir = -A * wgt * valid;
        if (valid == 0.0) { side = select(-1.0, 1.0, A > 0.0); }
      }
      case LOSS_VESPO: { // VESPO: -sg(phi(w)) A logp, phi a Gamma weight of the row's ratio w
        let pos = A >= 0.0;
        let k = select(p.vespoKNeg, p.vespoKPos, pos);
        let lam = max(select(p.vespoLamNeg, p.vespoLamPos, pos), 1e-4);
        var phi = exp(lam + k * logWV - lam * exp(logWV));
        if (!(phi < 3.0e38)) { phi = 0.0; } // non-finite -> 0, as TRL's nan_to_num
        l = -phi * A * lp;
        gdir = -phi * A;
      }
      case LOSS_PRIME_DPPO: { // prime-rl: -adv_tau A min(rho_b, delta) v + kl_tau e^2, e = logp - b, b the sampler
        let b = select(old, in_f(P_SAMPLER, idx), hasSampler);
        let e = lp - b;
        let rb = exp(e);
        let diff = exp(lp) - exp(b);
        let masked = select((diff < -p.epsLow), (diff > p.epsHigh), A > 0.0);
        let keep = select(1.0, 0.0, masked);
        let hasDelta = (FLAGS & F_DELTA) != 0u;
        let wgt = select(rb, min(rb, p.delta), hasDelta);
        let capped = hasDelta && rb >= p.delta;
        l = -p.advTau * A * wgt * keep + p.klTau * e * e;
        gdir = -p.advTau * A * select(rb, 0.0, capped) * keep + 2.0 * p.klTau * e;
        if (masked) { side = select(-1.0, 1.0, A > 0.0); }
      }
      case LOSS_DRO: { // DRO: -(A logp - beta d^2 / 2)
        l = -(lp * A - 0.5 * p.droBeta * d * d);
        gdir = -A + p.droBeta * d;
      }
      default: { // LOSS_SAPO
        let tau = select(p.tauNeg, p.tauPos, A > 0.0);
        let s = 1.0 / (1.0 + exp(-tau * (r - 1.0)));
        l = -A * 4.0 * s / tau;
        gr = -A * 4.0 * s * (1.0 - s);
      }
    }
    var fl = 1u;
    if (hasSel) { fl = packed[P_FLAGS * NL + idx]; }
    let keep = f32(fl & 1u);
    let picked = f32((fl >> 1u) & 1u);
    let det = select(0.0, picked, (FLAGS & F_CLIP_COV) != 0u);
    let klSel = select(0.0, picked, (FLAGS & F_KL_COV) != 0u);
    var corr = vec3<f32>(1.0, 0.0, 0.0);
    if (RS_MODE != RS_OFF) { corr = rs_weight(old - in_f(P_SAMPLER, idx), pre.z, n); }
    let offKeep = select(1.0, 0.0, offDrop && A < 0.0);
    q3 += vec4<f32>(corr.x, corr.y, corr.z, 1.0 - offKeep);
    let c = select(corr.x, 1.0, p.lossType == LOSS_VESPO) * offKeep; // vespo: the weight is inside phi
    let factor = c * keep * (1.0 - det);
    let lpg = factor * l + c * klSel * p.klCovCoef * abs(d);
    var g = 0.0;
    if (gmpo) {
      S += w * factor * -A;
    } else if (seqGrad) {
      S += w * factor * gr;
    } else {
      g = w * factor * (gr * r + gdir);
    }
    g += w * c * klSel * p.klCovCoef * sign(d);
    var kl = 0.0;
    if ((FLAGS & F_KL) != 0u) {
      if (p.klMode == KL_EXACT) {
        kl = in_f(P_KLX, idx);
      } else {
        let u = lp - in_f(P_REF, idx);
        var dk = 0.0;
        switch (p.klMode) {
          case KL_K1: { kl = u; dk = 1.0; }
          case KL_K2: { kl = 0.5 * u * u; dk = u; }
          case KL_K3: { kl = expm1_minus_x(-u); dk = -expm1(-u); }
          default: { // KL_LOW_VAR_KL
            let k3 = expm1_minus_x(-u);
            kl = clamp(k3, -10.0, 10.0);
            dk = select(0.0, -expm1(-u), k3 < 10.0 && k3 > -10.0);
          }
        }
        if ((FLAGS & F_KL_ST) != 0u) { dk = u; } // straight-through: k2's gradient
        if ((FLAGS & F_KL_BC) != 0u) {
          // Unbiased KL (use_bias_correction_kl): q k, q the ratio; q's gradient to the token, or summed to the row.
          let q = select(rho, rSeq, p.seqLevel == 1u);
          g += w * p.beta * q * dk;
          if (p.seqLevel == 1u) { sKl += w * p.beta * kl; } else { g += w * p.beta * kl * rho; }
          kl = q * kl;
        } else {
          g += w * p.beta * dk;
        }
      }
    }
    let contrib = w * (lpg + p.beta * kl - p.entropyCoef * H);
    d_logp[idx] = g;
    d_entropy[idx] = -p.entropyCoef * w;
    recs[idx] = select(r, exp(logWV), p.lossType == LOSS_VESPO);
    recs[NL + idx] = side;
    recs[2u * NL + idx] = kl;
    recs[3u * NL + idx] = contrib;
    recs[4u * NL + idx] = w;
    q0 += vec4<f32>(contrib, w * lpg, select(0.0, 1.0, side < 0.0 && p.lossType != LOSS_CISPO), select(0.0, 1.0, side > 0.0 && p.lossType != LOSS_CISPO));
    q1 += vec4<f32>(0.0, kl, 0.0, H);
    if ((FLAGS & F_KLX) != 0u) { q1.z += in_f(P_KLX, idx); }
    var diff = 0.0;
    if ((FLAGS & F_SAMPLER) != 0u) {
      diff = abs(old - in_f(P_SAMPLER, idx));
      diffMax = max(diffMax, diff);
    }
    q2 += vec4<f32>(expm1_minus_x(d), diff, keep, picked);
  }
  let s0 = row_sum(q0, lid);
  let s1 = row_sum(q1, lid);
  let s2 = row_sum(q2, lid);
  let s3 = row_sum3_max1(vec4<f32>(S, sKl, 0.0, diffMax), lid);
  let s4 = row_sum(q3, lid);

  // Row pass 3: the sequence ratio's gradient, back to each token (each lane revisits its own tokens).
  if (seqGrad && n > 0.0) {
    let gs = s3.x * rSeq / n;
    for (var t = lane; t < end; t += LANES) {
      let idx = o + t;
      if (in_f(P_MASK, idx) > 0.0) {
        var deriv = 1.0;
        if (gmpo) { deriv = gmpo_token(in_f(P_LOGP, idx) - in_f(P_OLD, idx), in_f(P_ADV, idx)).y; }
        d_logp[idx] += gs * deriv;
      }
    }
  }
  if (s3.y != 0.0 && n > 0.0) {
    let gk = s3.y * rSeq / n;
    for (var t = lane; t < end; t += LANES) {
      let idx = o + t;
      if (in_f(P_MASK, idx) > 0.0) { d_logp[idx] += gk; }
    }
  }
  if (valid && lane == 0u) {
    put_stat(row, Q_LOSS, s0.x);
    put_stat(row, Q_POLICY, s0.y);
    put_stat(row, Q_LOW, s0.z);
    put_stat(row, Q_HIGH, s0.w);
    put_stat(row, Q_CISPO, s1.x);
    put_stat(row, Q_KL, s1.y);
    put_stat(row, Q_KLX, s1.z);
    put_stat(row, Q_ENT, s1.w);
    put_stat(row, Q_APPROX, s2.x);
    put_stat(row, Q_DIFF, s2.y);
    put_stat(row, Q_KEPT, s2.z);
    put_stat(row, Q_COV, s2.w);
    put_stat(row, Q_DIFFMAX, s3.w);
    put_stat(row, Q_N, n);
    put_stat(row, Q_ISW, s4.x);
    put_stat(row, Q_TRUNC, s4.y);
    put_stat(row, Q_ISMASK, s4.z);
    put_stat(row, Q_OFF, s4.w);
  }
}

// ---------------------------------------------------------------------------------------------- objective_finalize

fn fin_q(row: u32, q: u32) -> f32 {
  return bitcast<f32>(fin_stats[S_ROWS + row * RP + q]);
}

// Metric j of OBJECTIVE_METRICS (thread j), the loss (the last thread, FINAL_WG - 1). Each reduces its row partials in row order.
@compute @workgroup_size(FINAL_WG)
fn objective_finalize(@builtin(local_invocation_index) lid: u32) {
  let M = bitcast<f32>(fin_stats[S_M]);
  let inv = select(0.0, 1.0 / M, M > 0.0);
  var s = 0.0;
  switch (lid) {
    case 0u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_POLICY); } metrics_out[0] = s; }
    case 1u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_LOW); } metrics_out[1] = s * inv; }
    case 2u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_HIGH); } metrics_out[2] = s * inv; }
    case 3u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_LOW) + fin_q(i, Q_HIGH); } metrics_out[3] = s * inv; }
    case 4u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_CISPO); } metrics_out[4] = s * inv; }
    case 5u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_KL); } metrics_out[5] = s * inv; }
    case 6u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_KLX); } metrics_out[6] = s * inv; }
    case 7u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_ENT); } metrics_out[7] = s * inv; }
    case 8u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_APPROX); } metrics_out[8] = s * inv; }
    case 9u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_DIFF); } metrics_out[9] = s * inv; }
    case 10u: { for (var i = 0u; i < p.N; i++) { s = max(s, fin_q(i, Q_DIFFMAX)); } metrics_out[10] = s; }
    case 11u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_KEPT); } metrics_out[11] = s * inv; }
    case 12u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_COV); } metrics_out[12] = s * inv; }
    case 13u: { // low_min: rows without masked tokens have no fraction; 0 when no row has one
      var counted = false;
      s = 1.0;
      for (var i = 0u; i < p.N; i++) {
        let n = fin_q(i, Q_N);
        if (n > 0.0) {
          s = min(s, fin_q(i, Q_LOW) / n);
          counted = true;
        }
      }
      metrics_out[13] = select(0.0, s, counted);
    }
    case 14u: { // high_max: a row without masked tokens would add 0, which the max already starts from
      for (var i = 0u; i < p.N; i++) {
        let n = fin_q(i, Q_N);
        if (n > 0.0) { s = max(s, fin_q(i, Q_HIGH) / n); }
      }
      metrics_out[14] = s;
    }
    case 15u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_ISW); } metrics_out[15] = s * inv; }
    case 16u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_TRUNC); } metrics_out[16] = s * inv; }
    case 17u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_ISMASK); } metrics_out[17] = s * inv; }
    case 18u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_OFF); } metrics_out[18] = s * inv; }
    case FINAL_WG - 1u: { for (var i = 0u; i < p.N; i++) { s += fin_q(i, Q_LOSS); } loss_out[0] = s; }
    default: {}
  }
}
