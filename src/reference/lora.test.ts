// LoRA on the reference model: every adapter entry's gradient against central finite differences (with the
// input-gradient path through lower layers exercised), the adapted model starting exactly at the base (B = 0),
// merged weights W + s B A reproducing the adapted model, PEFT's initialization bound, and the target parser.

import { describe, expect, it } from 'vitest';
import { compareArrays } from './compare';
import { numericalGradient, weightedSum } from './finite-diff';
import { mergeLoraAdapters } from './lora';
import {
  initLoraAdapters,
  loraScale,
  loraShapes,
  parseLoraTargets,
  LORA_TARGETS,
  type LoraSpec,
} from '../core/lora-layout';
import { modelBackward, modelForward } from './model';
import { initParams, type ModelDims, type ModelParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { host, numel, type HostTensor } from '../core/host-tensor';

const DIMS: { name: string; dims: ModelDims; B: number; T: number; spec: LoraSpec }[] = [
  {
    name: 'Qwen2 layout, GQA NH=4 NKV=2 HD=2, tied, every projection, r=3 alpha=5, B=2 T=3',
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
    spec: { rank: 3, alpha: 5, targets: LORA_TARGETS },
  },
  {
    name: 'Llama layout, MQA NH=2 NKV=1 HD=4, untied, q/v/down, r=1 alpha=2, B=1 T=5',
    dims: {
      vocabSize: 7,
      dModel: 8,
      nLayers: 2,
      nHeads: 2,
      nKvHeads: 1,
      dFF: 9,
      ropeTheta: 100,
      normEps: 1e-6,
      tiedEmbeddings: false,
    },
    B: 1,
    T: 5,
    spec: { rank: 1, alpha: 2, targets: ['q_proj', 'v_proj', 'down_proj'] },
  },
];

function rand(rng: Rng, shape: readonly number[]): HostTensor<Float64Array> {
  return host(
    Float64Array.from({ length: numel(shape) }, () => rng.uniform(-1, 1)),
    shape,
  );
}

/** Adapters with every entry random (B nonzero too, so the gradients of A are not trivially zero). */
function randomAdapters(dims: ModelDims, spec: LoraSpec, rng: Rng): ModelParams {
  return Object.fromEntries(
    loraShapes(dims, spec).map(({ name, shape }) => [
      name,
      host(
        Float64Array.from({ length: numel(shape) }, () => 0.5 * rng.normal()),
        shape,
      ),
    ]),
  );
}

const f32 = (p: ModelParams) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
const hostOf = (arrays: Record<string, Float32Array>, like: ModelParams) =>
  Object.fromEntries(
    Object.entries(arrays).map(([k, v]) => [k, host(Float64Array.from(v), like[k]?.shape ?? [v.length])]),
  );

describe('LoRA on the reference model', () => {
  it.each(DIMS)('adapter gradients match central finite differences on every entry: $name', ({ dims, B, T, spec }) => {
    const rng = new Rng(41);
    const params = initParams(dims, rng, { std: 0.4, dtype: 'f64' });
    const adapters = randomAdapters(dims, spec, rng);
    const lora = { spec, adapters };
    const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 5 + 2) % dims.vocabSize);
    const W = rand(rng, [B, T, dims.vocabSize]);
    const loss = () => weightedSum(modelForward(dims, params, tokens, B, T, lora).logits.data, W.data);
    const { cache } = modelForward(dims, params, tokens, B, T, lora);
    const grads = modelBackward(dims, params, cache, W, lora);
    for (const { name } of loraShapes(dims, spec)) {
      const x = adapters[name].data as Float64Array;
      const num = numericalGradient(loss, x, 1e-6);
      const c = compareArrays(Array.from(grads[name].data), Array.from(num), { atol: 1e-6, rtol: 1e-5 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    // The input-gradient path (dX += s dY B A) reaches the base weights below: layer 0's q_proj gradient.
    const wq = 'model.layers.0.self_attn.q_proj.weight';
    const idx = [0, 3, 7, 11];
    const num = numericalGradient(loss, params[wq].data as Float64Array, 1e-6, idx);
    const c = compareArrays(
      idx.map((i) => grads[wq].data[i]),
      idx.map((i) => num[i]),
      { atol: 1e-6, rtol: 1e-5 },
    );
    expect(c.pass, `${wq}: ${c.summary}`).toBe(true);
  });

  it('starts exactly at the base model: B = 0 at init, A uniform in +-1/sqrt(in)', () => {
    const { dims, spec } = DIMS[0];
    const rng = new Rng(5);
    const params = initParams(dims, rng, { std: 0.3 });
    const adapters = initLoraAdapters(dims, spec, new Rng(6));
    for (const { name, shape } of loraShapes(dims, spec)) {
      const a = adapters[name];
      if (name.endsWith('lora_B.weight'))
        expect(
          a.every((v) => v === 0),
          name,
        ).toBe(true);
      else {
        expect(
          a.some((v) => v !== 0),
          name,
        ).toBe(true);
        expect(Math.max(...a.map(Math.abs)), name).toBeLessThanOrEqual(1 / Math.sqrt(shape[1]));
      }
    }
    const tokens = Uint32Array.from({ length: 6 }, (_, i) => (3 * i + 1) % dims.vocabSize);
    const base = modelForward(dims, params, tokens, 2, 3).logits.data;
    const adapted = modelForward(dims, params, tokens, 2, 3, {
      spec,
      adapters: Object.fromEntries(
        loraShapes(dims, spec).map(({ name, shape }) => [name, host(adapters[name], shape)]),
      ),
    }).logits.data;
    expect(Array.from(adapted)).toEqual(Array.from(base));
  });

  it.each(DIMS)("merged weights W + s B A give the adapted model's logits: $name", ({ dims, B, T, spec }) => {
    const rng = new Rng(77);
    const params = initParams(dims, rng, { std: 0.4, dtype: 'f64' });
    const adapters = randomAdapters(dims, spec, rng);
    const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 3 + 1) % dims.vocabSize);
    const adapted = modelForward(dims, params, tokens, B, T, { spec, adapters }).logits.data;
    const merged = hostOf(mergeLoraAdapters(dims, spec, f32(params), f32(adapters)), params);
    const plain = modelForward(dims, merged, tokens, B, T).logits.data;
    const c = compareArrays(Array.from(plain), Array.from(adapted), { atol: 1e-5, rtol: 1e-5 });
    expect(c.pass, c.summary).toBe(true);
    // The adapters do change the model here (the comparison is not between two copies of the base).
    const base = modelForward(dims, params, tokens, B, T).logits.data;
    expect(compareArrays(Array.from(base), Array.from(adapted), { atol: 1e-3, rtol: 0 }).pass).toBe(false);
  });

  it('names and shapes adapters as PEFT does: A (r, in), B (out, r); s = alpha / r', () => {
    const { dims, spec } = DIMS[1];
    expect(loraShapes(dims, spec).slice(0, 6)).toEqual([
      { name: 'model.layers.0.self_attn.q_proj.lora_A.weight', shape: [1, 8] },
      { name: 'model.layers.0.self_attn.q_proj.lora_B.weight', shape: [8, 1] },
      { name: 'model.layers.0.self_attn.v_proj.lora_A.weight', shape: [1, 8] },
      { name: 'model.layers.0.self_attn.v_proj.lora_B.weight', shape: [4, 1] },
      { name: 'model.layers.0.mlp.down_proj.lora_A.weight', shape: [1, 9] },
      { name: 'model.layers.0.mlp.down_proj.lora_B.weight', shape: [8, 1] },
    ]);
    expect(loraScale({ rank: 8, alpha: 16, targets: ['q_proj'] })).toBe(2);
    expect(() => loraScale({ rank: 0, alpha: 16, targets: ['q_proj'] })).toThrow(/rank must be at least 1/);
  });

  it("parses target lists in the model's order, refusing unknown names", () => {
    expect(parseLoraTargets(null)).toEqual([...LORA_TARGETS]);
    expect(parseLoraTargets(' v_proj, q_proj,v_proj ')).toEqual(['q_proj', 'v_proj']);
    expect(() => parseLoraTargets('q_proj,qkv_proj')).toThrow(
      /"qkv_proj" is not a projection; the projections are q_proj, k_proj/,
    );
    expect(() => parseLoraTargets(' , ')).toThrow(/lists no projection/);
  });
});
