// The real-architecture features of the reference model against central finite differences: Qwen3's per-head q/k
// RMSNorm with a head dim that is not dModel / nHeads, and Llama 3's scaled RoPE frequencies (the rope twin alone
// and inside the model), on every entry of the q/k norm gains and sampled entries of every other tensor.

import { describe, expect, it } from 'vitest';
import { compareArrays } from './compare';
import { numericalGradient, weightedSum } from './finite-diff';
import { modelBackward, modelForward } from './model';
import { ropeBackward, ropeForward } from './rope';
import { initParams, paramShapes, type ModelDims } from '../core/model-shapes';
import { Rng } from '../core/random';
import { host, numel, type HostTensor } from '../core/host-tensor';
import type { Llama3RopeScaling } from '../core/rope-frequencies';

function rand(rng: Rng, shape: readonly number[]): HostTensor<Float64Array> {
  return host(
    Float64Array.from({ length: numel(shape) }, () => rng.uniform(-1, 1)),
    shape,
  );
}

function expectGrad(label: string, analytic: ArrayLike<number>, loss: () => number, x: Float64Array, idx: number[]) {
  const num = numericalGradient(loss, x, 1e-6, idx);
  const c = compareArrays(
    idx.map((i) => analytic[i]),
    idx.map((i) => num[i]),
    { atol: 1e-6, rtol: 1e-5 },
  );
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

/**
 * A scaling whose three bands all hold pairs at head dim 8, theta 10000 (inv_freq 1, 0.1, 0.01, 0.001): wavelength
 * 2 pi < 64 / 8 is kept, 62.8 is blended, the two longer ones are divided by the factor.
 */
const SCALING: Llama3RopeScaling = {
  ropeType: 'llama3',
  factor: 8,
  lowFreqFactor: 1,
  highFreqFactor: 8,
  originalMaxPositions: 64,
};

describe('rope with Llama 3 scaling', () => {
  it.each([
    { shape: [2, 3, 4, 8], posOffset: 0 },
    { shape: [1, 5, 3, 6], posOffset: 40 },
    { shape: [1, 1, 1, 2], posOffset: 7 },
  ])('backward matches finite differences for $shape at offset $posOffset', ({ shape, posOffset }) => {
    const rng = new Rng(9);
    const x = rand(rng, shape);
    const out = host(new Float64Array(numel(shape)), shape);
    const w = rand(rng, shape);
    const opts = { theta: 10_000, scaling: SCALING, posOffset };
    const loss = () => (ropeForward(out, x, opts), weightedSum(out.data, w.data));
    const dx = host(new Float64Array(numel(shape)), shape);
    ropeBackward(dx, w, opts);
    expectGrad(
      'dx',
      dx.data,
      loss,
      x.data,
      Array.from({ length: x.data.length }, (_, i) => i),
    );
  });

  it('differs from plain RoPE only on the pairs the scaling slows', () => {
    const shape = [1, 6, 1, 8];
    const x = rand(new Rng(2), shape);
    const plain = host(new Float64Array(numel(shape)), shape);
    const scaled = host(new Float64Array(numel(shape)), shape);
    ropeForward(plain, x, { theta: 10_000 });
    ropeForward(scaled, x, { theta: 10_000, scaling: SCALING });
    // Pair 0 (inv_freq 1, wavelength 2 pi < 64 / 8) is kept; pair 1 (blended) and the last pair (divided) change.
    const at = (t: HostTensor, pos: number, i: number) => t.data[pos * 8 + i];
    for (let pos = 0; pos < 6; pos++) expect(at(scaled, pos, 0)).toBe(at(plain, pos, 0));
    expect(Math.abs(at(scaled, 5, 1) - at(plain, 5, 1))).toBeGreaterThan(1e-6);
    expect(Math.abs(at(scaled, 5, 3) - at(plain, 5, 3))).toBeGreaterThan(1e-6);
  });
});

describe('reference model with real-architecture features', () => {
  const qwen3: ModelDims = {
    vocabSize: 11,
    dModel: 8,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    headDim: 6, // not dModel / nHeads = 2
    dFF: 10,
    ropeTheta: 1_000_000,
    normEps: 1e-6,
    tiedEmbeddings: true,
    qkNorm: true,
  };
  const configs: { name: string; dims: ModelDims; B: number; T: number }[] = [
    { name: 'Qwen3: q/k norm, head dim 6 with dModel 8 and 4 heads, GQA', dims: qwen3, B: 2, T: 3 },
    {
      name: 'Llama 3: scaled RoPE, untied, MQA',
      dims: {
        vocabSize: 9,
        dModel: 12,
        nLayers: 1,
        nHeads: 2,
        nKvHeads: 1,
        dFF: 7,
        ropeTheta: 10_000,
        normEps: 1e-5,
        tiedEmbeddings: false,
        ropeScaling: SCALING,
      },
      B: 1,
      T: 5,
    },
    {
      name: 'all together: q/k norm, explicit head dim, scaled RoPE, q/k/v biases',
      dims: { ...qwen3, nLayers: 1, qkvBias: true, ropeScaling: SCALING, headDim: 8 },
      B: 1,
      T: 4,
    },
  ];

  it('lists q_norm and k_norm of head-dim width, and sizes the projections by the head dim', () => {
    const shapes = Object.fromEntries(paramShapes(qwen3).map((s) => [s.name, s.shape]));
    expect(shapes['model.layers.0.self_attn.q_norm.weight']).toEqual([6]);
    expect(shapes['model.layers.0.self_attn.k_norm.weight']).toEqual([6]);
    expect(shapes['model.layers.0.self_attn.q_proj.weight']).toEqual([24, 8]);
    expect(shapes['model.layers.0.self_attn.k_proj.weight']).toEqual([12, 8]);
    expect(shapes['model.layers.0.self_attn.o_proj.weight']).toEqual([8, 24]);
  });

  it.each(configs)('backward matches finite differences: $name', ({ dims, B, T }) => {
    const rng = new Rng(31);
    const params = initParams(dims, rng, { std: 0.4, dtype: 'f64' });
    const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 5 + 2) % dims.vocabSize);
    const W = rand(rng, [B, T, dims.vocabSize]);
    const loss = () => weightedSum(modelForward(dims, params, tokens, B, T).logits.data, W.data);
    const { cache } = modelForward(dims, params, tokens, B, T);
    const grads = modelBackward(dims, params, cache, W);
    for (const { name } of paramShapes(dims)) {
      const x = params[name].data as Float64Array;
      const all = name.endsWith('_norm.weight');
      const idx = all
        ? Array.from({ length: x.length }, (_, i) => i)
        : [...new Set(Array.from({ length: 3 }, () => rng.int(x.length)))];
      if (all) expect(Math.max(...Array.from(grads[name].data, Math.abs)), name).toBeGreaterThan(1e-6);
      expectGrad(name, grads[name].data, loss, x, idx);
    }
  });

  it('the q/k norm is scale-invariant per head: scaling q_proj changes nothing (up to epsilon)', () => {
    const dims = { ...qwen3, normEps: 1e-14 };
    const params = initParams(dims, new Rng(5), { dtype: 'f64' });
    const tokens = Uint32Array.from([1, 2, 3, 4, 5, 6]);
    const a = modelForward(dims, params, tokens, 2, 3).logits.data;
    const q = params['model.layers.0.self_attn.q_proj.weight'].data;
    for (let i = 0; i < q.length; i++) q[i] *= 3;
    const b = modelForward(dims, params, tokens, 2, 3).logits.data;
    const c = compareArrays(Array.from(b), Array.from(a), { atol: 1e-9, rtol: 1e-6 });
    expect(c.pass, c.summary).toBe(true);
  });
});
