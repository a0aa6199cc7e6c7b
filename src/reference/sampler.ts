// CPU twin of shaders/sampler.wgsl: one token per row of logits (N,V) with temperature, top-k, top-p, min-p or
// greedy, driven by the counter-based RNG Philox4x32-10 keyed by (seed, 0) at counter (row, step, 0, 0), so the
// same seed and step give the same tokens here and on the GPU (bit for bit unless a draw falls within float
// rounding of a CDF or filter boundary). Written as the plain definition (sorts, double-precision sums), not as
// the GPU's threshold search: it is the oracle. Not the log-prob kernel used in training (logprob.ts).
//
// Definitions (z = f32(logits / tau), tau = temperature, or 1 when temperature is 0):
//   filtering keeps K = {v : z_v >= T_k, z_v >= T_p, z_v - max z >= log(min_p)} where
//   - T_k (top_k = k in [1, V)) is the k-th largest z; ties at T_k are all kept (so |K| may exceed k);
//   - T_p (top_p = p in (0, 1)) is the largest z-value such that the mass of {z >= T_p}, within the top-k set and
//     renormalised there, is >= p: the smallest head of the sorted distribution reaching mass p (ties kept);
//   - min_p in (0, 1]: keep tokens with probability >= min_p times the largest probability;
//   the token is drawn from softmax(z) restricted to K by inverse CDF in vocabulary order with one uniform u.
//   Greedy (greedy flag or temperature 0): the argmax of the logits (lowest index among ties).
// Outputs per row: the token; logprob = log softmax(z)[token] and entropy of softmax(z), the UNFILTERED sampling
// distribution (what the trainer's logprob kernel computes with the same temperature, so pi_old matches it);
// filteredLogprob = log of the token's probability under the filtered, renormalised distribution actually
// sampled (0 for greedy).

import type { HostTensor } from '../core/host-tensor';

export interface SamplerOptions {
  /** tau >= 0; 0 means greedy (log-probs and entropy then use tau = 1). */
  temperature: number;
  /** Keep the k most likely tokens (ties kept); 0 or >= V disables (default 0). */
  topK?: number;
  /** Nucleus mass in (0, 1]; 1 disables (default 1). */
  topP?: number;
  /** Keep tokens with p >= minP * p_max, minP in [0, 1]; 0 disables (default 0). */
  minP?: number;
  /** Argmax instead of sampling (log-probs still use the temperature when it is > 0). */
  greedy?: boolean;
  /** RNG key (u32). */
  seed: number;
  /** Step counter (u32), e.g. the decode position: one fresh uniform per (row, step). */
  step: number;
}

/** Validated sampler settings with every default filled in (shared by the twin and the GPU wrapper). */
export interface SamplerSettings {
  tau: number;
  greedy: boolean;
  topK: number;
  topP: number;
  minP: number;
  seed: number;
  step: number;
}

export function samplerSettings(kernel: string, opts: SamplerOptions): SamplerSettings {
  const t = opts.temperature;
  if (!(t >= 0) || !Number.isFinite(t)) throw new Error(`${kernel}: temperature must be a number >= 0, got ${t}`);
  const topK = opts.topK ?? 0;
  if (!Number.isInteger(topK) || topK < 0 || topK > 0xffffffff)
    throw new Error(`${kernel}: topK must be an integer >= 0, got ${topK}`);
  const topP = opts.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new Error(`${kernel}: topP must be in (0, 1], got ${topP}`);
  const minP = opts.minP ?? 0;
  if (!(minP >= 0 && minP <= 1)) throw new Error(`${kernel}: minP must be in [0, 1], got ${minP}`);
  for (const [name, v] of [
    ['seed', opts.seed],
    ['step', opts.step],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`${kernel}: ${name} must be a u32, got ${v}`);
  }
  return {
    tau: t > 0 ? t : 1,
    greedy: Boolean(opts.greedy) || t === 0,
    topK,
    topP,
    minP,
    seed: opts.seed,
    step: opts.step,
  };
}

// ---- Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; Random123) ----

const PHILOX_M0 = 0xd2511f53;
const PHILOX_M1 = 0xcd9e8d57;
const PHILOX_W0 = 0x9e3779b9;
const PHILOX_W1 = 0xbb67ae85;

/** High 32 bits of the 64-bit product of two u32 (16-bit limbs, exactly as the WGSL does it). */
export function mulhi32(a: number, b: number): number {
  const al = a & 0xffff;
  const ah = a >>> 16;
  const bl = b & 0xffff;
  const bh = b >>> 16;
  const ll = al * bl;
  const lh = al * bh;
  const hl = ah * bl;
  const hh = ah * bh;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  return (hh + (lh >>> 16) + (hl >>> 16) + (mid >>> 16)) >>> 0;
}

/** Philox4x32 with 10 rounds: four u32 words from a 128-bit counter and a 64-bit key. */
export function philox4x32(counter: readonly number[], key: readonly [number, number]): Uint32Array {
  let [c0, c1, c2, c3] = counter.map((x) => x >>> 0);
  let k0 = key[0] >>> 0;
  let k1 = key[1] >>> 0;
  for (let r = 0; r < 10; r++) {
    if (r > 0) {
      k0 = (k0 + PHILOX_W0) >>> 0;
      k1 = (k1 + PHILOX_W1) >>> 0;
    }
    const hi0 = mulhi32(PHILOX_M0, c0);
    const lo0 = Math.imul(PHILOX_M0, c0) >>> 0;
    const hi1 = mulhi32(PHILOX_M1, c2);
    const lo1 = Math.imul(PHILOX_M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
  }
  return Uint32Array.of(c0, c1, c2, c3);
}

/** The sampler's four random words for a row at a step: Philox4x32-10(counter (row, step, 0, 0), key (seed, 0)). */
export function samplerWords(seed: number, row: number, step: number): Uint32Array {
  return philox4x32([row, step, 0, 0], [seed, 0]);
}

/** The sampler's uniform in [0, 1): the top 24 bits of word 0, times 2^-24 (exact in f32). */
export function samplerUniform(seed: number, row: number, step: number): number {
  return (samplerWords(seed, row, step)[0] >>> 8) / 16777216;
}

/**
 * Twin of the GPU's sampler_random entry (a test hook): out[4 row + i] = samplerWords(seed, row, step)[i].
 * @param out (N*4) overwritten.
 */
export function samplerRandom(out: Uint32Array, rows: number, opts: { seed: number; step: number }): void {
  if (out.length !== rows * 4) throw new Error(`samplerRandom: out has ${out.length} words, want ${rows * 4}`);
  for (let r = 0; r < rows; r++) out.set(samplerWords(opts.seed, r, opts.step), r * 4);
}

// ---- the sampler ----

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Order-preserving u32 key of an f32 (larger float, larger key), as the GPU's threshold search uses. */
export function floatKey(x: number): number {
  f32[0] = x;
  const b = u32[0];
  return (b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
}

/** The filtered set K of one row of z (see the file header); `m` is max z. Exposed for the statistical tests. */
export function keptMask(z: Float32Array, s: SamplerSettings): Uint8Array {
  const V = z.length;
  let m = -Infinity;
  for (let v = 0; v < V; v++) m = Math.max(m, z[v]);
  const keys = Uint32Array.from(z, floatKey);
  let tk = 0;
  if (s.topK > 0 && s.topK < V) tk = Uint32Array.from(keys).sort().reverse()[s.topK - 1];
  let tp = 0;
  if (s.topP < 1) {
    const idx: number[] = [];
    let zA = 0;
    for (let v = 0; v < V; v++) {
      if (keys[v] >= tk) {
        idx.push(v);
        zA += Math.exp(z[v] - m);
      }
    }
    idx.sort((a, b) => keys[b] - keys[a]);
    let cum = 0;
    tp = keys[idx[idx.length - 1]];
    for (let i = 0; i < idx.length; ) {
      const key = keys[idx[i]];
      for (; i < idx.length && keys[idx[i]] === key; i++) cum += Math.exp(z[idx[i]] - m);
      if (cum >= s.topP * zA) {
        tp = key;
        break;
      }
    }
  }
  const logMinP = s.minP > 0 ? Math.fround(Math.log(s.minP)) : -Infinity;
  const kept = new Uint8Array(V);
  const t = Math.max(tk, tp);
  for (let v = 0; v < V; v++) kept[v] = keys[v] >= t && Math.fround(z[v] - m) >= logMinP ? 1 : 0;
  return kept;
}

/**
 * z = f32(logits / tau) for one row, correctly rounded: what the GPU computes where its f32 division is correctly
 * rounded (SwiftShader's is; WGSL allows 2.5 ulp, which can only move a draw that sits on a boundary).
 */
export function scaledRow(logits: HostTensor, row: number, V: number, tau: number): Float32Array {
  const z = new Float32Array(V);
  for (let v = 0; v < V; v++) z[v] = logits.data[row * V + v] / tau;
  return z;
}

/**
 * Samples one token per row (see the file header for the exact distribution and outputs).
 * @param tokens          (N) overwritten with token ids.
 * @param logprob         (N) overwritten: log softmax(z)[token], the unfiltered sampling distribution.
 * @param entropy         (N) overwritten: entropy of softmax(z).
 * @param filteredLogprob (N) overwritten: log-prob of the token under the filtered distribution (0 for greedy).
 * @param logits          (N,V) raw logits (finite).
 */
export function sampleTokens(
  tokens: Uint32Array,
  logprob: HostTensor,
  entropy: HostTensor,
  filteredLogprob: HostTensor,
  logits: HostTensor,
  opts: SamplerOptions,
): void {
  const kernel = 'sampleTokens';
  const s = samplerSettings(kernel, opts);
  if (logits.shape.length < 2) throw new Error(`${kernel}: logits must be (N,V), got [${logits.shape.join(', ')}]`);
  const V = logits.shape[logits.shape.length - 1];
  const N = V === 0 ? 0 : logits.data.length / V;
  for (const [t, name] of [
    [tokens, 'tokens'],
    [logprob.data, 'logprob'],
    [entropy.data, 'entropy'],
    [filteredLogprob.data, 'filteredLogprob'],
  ] as const) {
    if (t.length !== N) throw new Error(`${kernel}: ${name} has ${t.length} elements, want N=${N}`);
  }
  for (let n = 0; n < N; n++) {
    const z = scaledRow(logits, n, V, s.tau);
    let m = -Infinity;
    let argmax = 0;
    for (let v = 0; v < V; v++) {
      if (z[v] > m) {
        m = z[v];
        argmax = v;
      }
    }
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(z[v] - m);
    const logZ = Math.log(sum);
    let h = 0;
    for (let v = 0; v < V; v++) {
      const lp = z[v] - m - logZ;
      h -= Math.exp(lp) * lp;
    }
    let tok = argmax;
    let filtered = 0;
    if (!s.greedy) {
      const kept = keptMask(z, s);
      let zS = 0;
      for (let v = 0; v < V; v++) if (kept[v]) zS += Math.exp(z[v] - m);
      const target = samplerUniform(s.seed, n, s.step) * zS;
      let cum = 0;
      for (let v = 0; v < V; v++) {
        if (!kept[v]) continue;
        cum += Math.exp(z[v] - m);
        if (cum > target) {
          tok = v;
          break;
        }
      }
      filtered = z[tok] - m - Math.log(zS);
    }
    tokens[n] = tok;
    logprob.data[n] = z[tok] - m - logZ;
    entropy.data[n] = h;
    filteredLogprob.data[n] = filtered;
  }
}

/**
 * The exact distribution the sampler draws row `row` from (filtered, renormalised softmax of z; a point mass
 * for greedy), in double precision: the reference for the statistical tests.
 */
export function samplingDistribution(logits: HostTensor, row: number, opts: SamplerOptions): Float64Array {
  const s = samplerSettings('samplingDistribution', opts);
  const V = logits.shape[logits.shape.length - 1];
  const z = scaledRow(logits, row, V, s.tau);
  const out = new Float64Array(V);
  let m = -Infinity;
  let argmax = 0;
  for (let v = 0; v < V; v++) {
    if (z[v] > m) {
      m = z[v];
      argmax = v;
    }
  }
  if (s.greedy) {
    out[argmax] = 1;
    return out;
  }
  const kept = keptMask(z, s);
  let total = 0;
  for (let v = 0; v < V; v++) total += out[v] = kept[v] ? Math.exp(z[v] - m) : 0;
  for (let v = 0; v < V; v++) out[v] /= total;
  return out;
}
