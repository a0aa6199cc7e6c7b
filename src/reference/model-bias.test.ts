// The Qwen2 layout of the reference model (q/k/v projection biases): the bias twins and the whole model's
// backward against central finite differences on every entry of every bias (and sampled entries of the other
// tensors), plus the properties that tie the layout to the Llama one (zero biases change nothing).

import { describe, expect, it } from 'vitest';
import { biasAdd, biasGrad } from './bias';
import { compareArrays } from './compare';
import { numericalGradient, weightedSum } from './finite-diff';
import { modelBackward, modelForward } from './model';
import { initParams, paramShapes, type ModelDims } from '../core/model-shapes';
import { Rng } from '../core/random';
import { host, numel, type HostTensor } from '../core/host-tensor';

function rand(rng: Rng, shape: readonly number[]): HostTensor<Float64Array> {
  return host(
    Float64Array.from({ length: numel(shape) }, () => rng.uniform(-1, 1)),
    shape,
  );
}

function expectGrad(
  label: string,
  analytic: ArrayLike<number>,
  loss: () => number,
  x: Float64Array,
  indices: number[],
): void {
  const num = numericalGradient(loss, x, 1e-6, indices);
  const c = compareArrays(
    indices.map((i) => analytic[i]),
    indices.map((i) => num[i]),
    { atol: 1e-6, rtol: 1e-5 },
  );
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

describe('bias twins', () => {
  it('biasAdd adds the bias to every row; biasGrad accumulates column sums (finite differences)', () => {
    const rng = new Rng(3);
    const x = rand(rng, [5, 3]);
    const b = rand(rng, [3]);
    const W = rand(rng, [5, 3]);
    const loss = () => {
      const y = host(Float64Array.from(x.data), x.shape);
      biasAdd(y, b);
      return weightedSum(y.data, W.data);
    };
    const db = host(Float64Array.from([0.5, -1, 2]), [3]);
    biasGrad(db, W);
    const num = numericalGradient(loss, b.data);
    // The gradient accumulates onto what was there (0.5, -1, 2).
    expect(
      compareArrays(
        Array.from(db.data),
        Array.from(num, (g, i) => g + [0.5, -1, 2][i]),
        { atol: 1e-7, rtol: 1e-6 },
      ).pass,
    ).toBe(true);
    expect(() => biasAdd(x, rand(rng, [4]))).toThrow(/bias has 4 elements, rows have 3 columns/);
  });
});

describe('reference model with q/k/v biases (Qwen2 layout)', () => {
  const configs: { name: string; dims: ModelDims; B: number; T: number }[] = [
    {
      name: 'GQA NH=4 NKV=2 HD=2, tied, B=2 T=3',
      dims: {
        vocabSize: 11,
        dModel: 8,
        nLayers: 2,
        nHeads: 4,
        nKvHeads: 2,
        dFF: 10,
        ropeTheta: 10000,
        normEps: 1e-6,
        tiedEmbeddings: true,
        qkvBias: true,
      },
      B: 2,
      T: 3,
    },
    {
      name: 'MQA NH=2 NKV=1 HD=6, untied, B=1 T=4',
      dims: {
        vocabSize: 9,
        dModel: 12,
        nLayers: 1,
        nHeads: 2,
        nKvHeads: 1,
        dFF: 7,
        ropeTheta: 100,
        normEps: 1e-6,
        tiedEmbeddings: false,
        qkvBias: true,
      },
      B: 1,
      T: 4,
    },
  ];

  it('lists q/k/v biases after their weights, and no o_proj or MLP bias', () => {
    const names = paramShapes(configs[0].dims)
      .map((s) => s.name)
      .filter((n) => n.startsWith('model.layers.0.self_attn'));
    expect(names).toEqual([
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.q_proj.bias',
      'model.layers.0.self_attn.k_proj.weight',
      'model.layers.0.self_attn.k_proj.bias',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.v_proj.bias',
      'model.layers.0.self_attn.o_proj.weight',
    ]);
    expect(paramShapes(configs[0].dims).find((s) => s.name === 'model.layers.1.self_attn.k_proj.bias')?.shape).toEqual([
      4,
    ]);
  });

  it.each(configs)(
    'backward matches finite differences on every bias entry and sampled entries elsewhere: $name',
    ({ dims, B, T }) => {
      const rng = new Rng(29);
      const params = initParams(dims, rng, { std: 0.4, dtype: 'f64' });
      const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 5 + 2) % dims.vocabSize);
      const W = rand(rng, [B, T, dims.vocabSize]);
      const loss = () => weightedSum(modelForward(dims, params, tokens, B, T).logits.data, W.data);
      const { cache } = modelForward(dims, params, tokens, B, T);
      const grads = modelBackward(dims, params, cache, W);
      for (const { name } of paramShapes(dims)) {
        const x = params[name].data as Float64Array;
        const all = name.endsWith('.bias');
        const idx = all
          ? Array.from({ length: x.length }, (_, i) => i)
          : [...new Set(Array.from({ length: 3 }, () => rng.int(x.length)))];
        if (all)
          expect(
            Math.max(...Array.from(grads[name].data, Math.abs)),
            `${name} gradient is not all zero`,
          ).toBeGreaterThan(1e-6);
        expectGrad(name, grads[name].data, loss, x, idx);
      }
    },
  );

  it('with zero biases it computes exactly what the Llama layout computes', () => {
    const withBias = configs[0].dims;
    const { qkvBias: _, ...llama } = withBias;
    const params = initParams(withBias, new Rng(4), { dtype: 'f64' });
    for (const [name, t] of Object.entries(params)) if (name.endsWith('.bias')) t.data.fill(0);
    const llamaParams = Object.fromEntries(Object.entries(params).filter(([n]) => !n.endsWith('.bias')));
    const tokens = Uint32Array.from([1, 2, 3, 4, 5, 6]);
    const a = modelForward(withBias, params, tokens, 2, 3).logits.data;
    const b = modelForward(llama, llamaParams, tokens, 2, 3).logits.data;
    expect(Array.from(a)).toEqual(Array.from(b));
  });
});
