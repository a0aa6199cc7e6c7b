// The sampler twin (no GPU): Philox4x32-10 against Random123's known answers, the empirical distribution of
// 20k draws against the exact sampling distribution (chi-square at p = 1e-4 and total variation < 0.02) for
// plain temperature, top-k, top-p, min-p and a combination, greedy = argmax, and same seed -> same tokens.

import { describe, expect, it } from 'vitest';
import { logprobForward } from './logprob';
import { Rng } from '../core/random';
import {
  floatKey,
  keptMask,
  mulhi32,
  philox4x32,
  sampleTokens,
  samplerSettings,
  samplerUniform,
  samplingDistribution,
  scaledRow,
  type SamplerOptions,
} from './sampler';
import { host, type HostTensor } from '../core/host-tensor';

const LOGITS_V8 = [2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -3.0];
const DRAWS = 20000;

function repeatRows(row: readonly number[], n: number): HostTensor<Float32Array> {
  const data = new Float32Array(n * row.length);
  for (let r = 0; r < n; r++) data.set(row, r * row.length);
  return host(data, [n, row.length]);
}

function sample(logits: HostTensor<Float32Array>, opts: SamplerOptions) {
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  const out = {
    tokens: new Uint32Array(N),
    logprob: new Float32Array(N),
    entropy: new Float32Array(N),
    filtered: new Float32Array(N),
  };
  sampleTokens(out.tokens, host(out.logprob, [N]), host(out.entropy, [N]), host(out.filtered, [N]), logits, opts);
  return out;
}

/** Upper critical value of chi-square with `df` degrees of freedom at z standard deviations (Wilson-Hilferty). */
function chiSquareCritical(df: number, z: number): number {
  const a = 2 / (9 * df);
  return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
}

/** Checks counts of draws against a distribution: zero outside its support, chi-square and TV inside. */
function expectMatches(tokens: Uint32Array, want: Float64Array): { chi2: number; tv: number } {
  const counts = new Array<number>(want.length).fill(0);
  for (const t of tokens) counts[t]++;
  let chi2 = 0;
  let df = -1;
  let tv = 0;
  for (let v = 0; v < want.length; v++) {
    tv += Math.abs(counts[v] / tokens.length - want[v]) / 2;
    if (want[v] === 0) {
      expect(counts[v], `token ${v} is outside the support`).toBe(0);
      continue;
    }
    const e = want[v] * tokens.length;
    chi2 += (counts[v] - e) ** 2 / e;
    df++;
  }
  if (df > 0) expect(chi2).toBeLessThan(chiSquareCritical(df, 3.72)); // upper tail p = 1e-4
  expect(tv).toBeLessThan(0.02); // expected TV at 20k draws over 8 tokens is about 0.006
  return { chi2, tv };
}

function support(p: Float64Array): number[] {
  return [...p.keys()].filter((v) => p[v] > 0);
}

describe('Philox4x32-10', () => {
  it('matches the Random123 known-answer vectors (kat_vectors, philox4x32 10)', () => {
    const hex = (a: Uint32Array) => [...a].map((x) => x.toString(16).padStart(8, '0'));
    expect(hex(philox4x32([0, 0, 0, 0], [0, 0]))).toEqual(['6627e8d5', 'e169c58d', 'bc57ac4c', '9b00dbd8']);
    expect(hex(philox4x32([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff]))).toEqual([
      '408f276d',
      '41c83b0e',
      'a20bc7c6',
      '6d5451fd',
    ]);
    expect(hex(philox4x32([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]))).toEqual([
      'd16cfe09',
      '94fdcceb',
      '5001e420',
      '24126ea1',
    ]);
  });

  it('mulhi32 is the high word of the exact 64-bit product', () => {
    const rng = new Rng(7);
    for (let i = 0; i < 2000; i++) {
      const a = Math.floor(rng.next() * 2 ** 32);
      const b = i === 0 ? 0xffffffff : Math.floor(rng.next() * 2 ** 32);
      const aa = i === 0 ? 0xffffffff : a;
      expect(mulhi32(aa, b)).toBe(Number((BigInt(aa) * BigInt(b)) >> 32n));
    }
  });

  it('gives uniforms in [0, 1) with mean 1/2 over rows and steps', () => {
    let s = 0;
    for (let i = 0; i < DRAWS; i++) {
      const u = samplerUniform(42, i % 100, Math.floor(i / 100));
      expect(u >= 0 && u < 1).toBe(true);
      s += u;
    }
    expect(Math.abs(s / DRAWS - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / DRAWS));
  });
});

describe('floatKey', () => {
  it('preserves the order of floats', () => {
    const xs = [-3.4e38, -1e4, -1.5, -1e-30, -0, 0, 1e-30, 0.7, 1, 1e4, 3.4e38];
    for (let i = 1; i < xs.length; i++) expect(floatKey(xs[i]) > floatKey(xs[i - 1])).toBe(true);
  });
});

describe('sampler twin: the empirical distribution of 20k draws (fixed seed) matches the sampling distribution', () => {
  const logits = repeatRows(LOGITS_V8, DRAWS);
  const row0 = host(Float32Array.from(LOGITS_V8), [1, 8]);
  // p(tau = 1) = .405 .245 .149 .090 .055 .033 .020 .003; cumulative .405 .650 .799 .889 ...
  const configs: { name: string; opts: SamplerOptions; support?: number[] }[] = [
    { name: 'temperature 1', opts: { temperature: 1, seed: 1, step: 0 }, support: [0, 1, 2, 3, 4, 5, 6, 7] },
    { name: 'temperature 0.7', opts: { temperature: 0.7, seed: 2, step: 0 }, support: [0, 1, 2, 3, 4, 5, 6, 7] },
    { name: 'temperature 1.5', opts: { temperature: 1.5, seed: 3, step: 9 }, support: [0, 1, 2, 3, 4, 5, 6, 7] },
    { name: 'top-k 3', opts: { temperature: 1, topK: 3, seed: 4, step: 0 }, support: [0, 1, 2] },
    { name: 'top-p 0.85', opts: { temperature: 1, topP: 0.85, seed: 5, step: 0 }, support: [0, 1, 2, 3] },
    { name: 'min-p 0.1', opts: { temperature: 1, minP: 0.1, seed: 6, step: 0 }, support: [0, 1, 2, 3, 4] },
    {
      name: 'top-k 6 + top-p 0.9 + min-p 0.05 at tau 0.7',
      opts: { temperature: 0.7, topK: 6, topP: 0.9, minP: 0.05, seed: 7, step: 0 },
    },
  ];
  for (const { name, opts, support: expected } of configs) {
    it(name, () => {
      const want = samplingDistribution(row0, 0, opts);
      if (expected) expect(support(want)).toEqual(expected);
      const { chi2, tv } = expectMatches(sample(logits, opts).tokens, want);
      console.log(`${name}: chi2 ${chi2.toFixed(2)}, TV ${tv.toFixed(4)}`);
    });
  }

  it('one row over 20k decode steps (the step counter drives the draws)', () => {
    const opts = { temperature: 0.9, seed: 8 };
    const tokens = new Uint32Array(DRAWS);
    for (let step = 0; step < DRAWS; step++) tokens[step] = sample(row0, { ...opts, step }).tokens[0];
    expectMatches(tokens, samplingDistribution(row0, 0, { ...opts, step: 0 }));
  });

  it('the exact distribution is the renormalised softmax of logits / tau on the kept set', () => {
    const opts = { temperature: 0.7, topK: 3, seed: 0, step: 0 };
    const want = samplingDistribution(row0, 0, opts);
    const e = LOGITS_V8.slice(0, 3).map((x) => Math.exp(Math.fround(x / 0.7)));
    const z = e.reduce((a, b) => a + b);
    for (let v = 0; v < 3; v++) expect(want[v]).toBeCloseTo(e[v] / z, 6);
  });
});

describe('sampler twin: filters, greedy, determinism and outputs', () => {
  const rng = new Rng(99);
  const N = 33;
  const V = 37;
  const logits = host(
    Float32Array.from({ length: N * V }, () => rng.uniform(-3, 3)),
    [N, V],
  );
  const argmaxOf = (n: number) => {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits.data[n * V + v] > logits.data[n * V + best]) best = v;
    return best;
  };

  it('greedy flag and temperature 0 give the argmax; filtered log-prob 0', () => {
    for (const opts of [
      { temperature: 0.7, greedy: true, seed: 1, step: 0 },
      { temperature: 0, seed: 1, step: 0 },
    ]) {
      const r = sample(logits, opts);
      for (let n = 0; n < N; n++) {
        expect(r.tokens[n]).toBe(argmaxOf(n));
        expect(r.filtered[n]).toBe(0);
      }
    }
  });

  it('greedy ties go to the lowest index; top-k keeps every tie at the k-th value', () => {
    const tied = host(Float32Array.of(0, 1, 1, 1, -1), [1, 5]);
    expect(sample(tied, { temperature: 0, seed: 0, step: 0 }).tokens[0]).toBe(1);
    expect(support(samplingDistribution(tied, 0, { temperature: 1, topK: 2, seed: 0, step: 0 }))).toEqual([1, 2, 3]);
  });

  it('top-k 1 is greedy; top-p near 0 keeps only the argmax', () => {
    for (const opts of [
      { temperature: 1, topK: 1, seed: 3, step: 2 },
      { temperature: 1, topP: 1e-6, seed: 3, step: 2 },
    ]) {
      const r = sample(logits, opts);
      for (let n = 0; n < N; n++) expect(r.tokens[n]).toBe(argmaxOf(n));
    }
  });

  it('same seed and step give the same tokens; another seed or step gives other tokens', () => {
    const opts = { temperature: 1, seed: 123, step: 5 };
    const a = sample(logits, opts).tokens;
    expect(sample(logits, opts).tokens).toEqual(a);
    const differ = (b: Uint32Array) => b.filter((t, i) => t !== a[i]).length;
    expect(differ(sample(logits, { ...opts, seed: 124 }).tokens)).toBeGreaterThan(N / 2);
    expect(differ(sample(logits, { ...opts, step: 6 }).tokens)).toBeGreaterThan(N / 2);
  });

  it('logprob and entropy are those of the unfiltered softmax(logits / tau) (= logprobForward); filtered log-prob is under the kept set', () => {
    const opts = { temperature: 0.7, topK: 10, topP: 0.9, seed: 9, step: 1 };
    const r = sample(logits, opts);
    const lp = host(new Float32Array(N), [N]);
    const h = host(new Float32Array(N), [N]);
    logprobForward(lp, h, logits, r.tokens, { temperature: 0.7 });
    for (let n = 0; n < N; n++) {
      expect(r.logprob[n]).toBeCloseTo(lp.data[n], 5);
      expect(r.entropy[n]).toBeCloseTo(h.data[n], 5);
      const p = samplingDistribution(logits, n, opts);
      expect(p[r.tokens[n]]).toBeGreaterThan(0);
      expect(r.filtered[n]).toBeCloseTo(Math.log(p[r.tokens[n]]), 5);
      expect(r.filtered[n]).toBeGreaterThanOrEqual(r.logprob[n] - 1e-6); // filtering only raises the kept tokens
    }
  });

  it('keptMask: min-p keeps p >= minP * pmax', () => {
    const z = scaledRow(logits, 0, V, 1);
    const kept = keptMask(z, samplerSettings('test', { temperature: 1, minP: 0.2, seed: 0, step: 0 }));
    const m = Math.max(...z);
    for (let v = 0; v < V; v++) expect(kept[v] === 1).toBe(Math.exp(z[v] - m) >= 0.2);
  });

  it('rejects invalid settings', () => {
    const bad: Partial<SamplerOptions>[] = [
      { temperature: -1 },
      { topP: 0 },
      { topP: 1.5 },
      { minP: 2 },
      { topK: 1.5 },
      { seed: -1 },
      { step: 2 ** 32 },
    ];
    for (const b of bad) expect(() => sample(logits, { temperature: 1, seed: 0, step: 0, ...b })).toThrow();
  });
});
