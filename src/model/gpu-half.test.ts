// The GPU model with half-precision weights (bf16 and f16 storage, f32 arithmetic) against the CPU reference run on
// the same weights rounded as the GPU stores them (src/reference/half-weights.ts): a LoRA policy on a half base
// (logits and adapter gradients), a frozen half reference (logits, no gradients, no optimizer step), greedy
// generation equal to the CPU policy's tokens, the bytes saved, and the round trips (download, reset from the
// policy, half checkpoint bits uploaded as they are), and half-precision rollouts of a policy trained in f32
// (rolloutDtype: the sampler on the rounded weights, training on the masters). Odd widths (d_ff 11, vocab 13) put rows across 32-bit words. Rollouts with a half KV cache (kvDtype) against the CPU twin and the f32 cache.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arenaSize, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { compareArrays } from '../reference/compare';
import { roundModelWeights } from '../reference/half-weights';
import { mergeLoraAdapters } from '../reference/lora';
import { modelBackward, modelForward } from '../reference/model';
import { loraShapes, LORA_TARGETS, type LoraSpec } from '../core/lora-layout';
import { paramShapes } from '../core/model-shapes';
import {
  bf16BitsToF32,
  halfBitsToF32,
  storedWeightBytes,
  toHalfBits,
  UNIT_ROUNDOFF,
  type HalfDtype,
} from '../core/half';
import { Rng } from '../core/random';
import { host } from '../core/host-tensor';
import { modelConfigToJson, decodeCheckpointHalf, type ParamArrays } from '../io/checkpoint';
import { writeSafetensors, type SafetensorsTensorInput } from '../io/safetensors';
import type { ModelConfig } from '../schema/model-config';
import { GpuModel, layerVectorArenas } from './gpu-model';
import { CpuPolicy, GpuPolicy } from './policy';
import {
  hostParams,
  randomAdapters,
  randomBaseParams,
  runModel,
  LEFT_PADDED_PROMPTS,
  worstGap,
} from '../testing/gpu-model-harness';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

const CONFIG: ModelConfig = {
  vocabSize: 13,
  dModel: 12,
  nLayers: 2,
  nHeads: 3,
  nKvHeads: 1,
  dFF: 11,
  ropeTheta: 10000,
  normEps: 1e-6,
  tiedEmbeddings: true,
  qkvBias: true,
  contextLength: 24,
};
const B = 2;
const T = 5;
const DTYPES: HalfDtype[] = ['bf16', 'f16'];
const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % CONFIG.vocabSize);
const positions = Uint32Array.from({ length: B * T }, (_, i) => i % T);

const baseParams = (seed: number): ParamArrays => randomBaseParams(CONFIG, seed);
const adaptersOf = (spec: LoraSpec, seed: number): ParamArrays => randomAdapters(CONFIG, spec, seed);
/** One forward (and, given dLogits, backward) on the GPU of the file's batch. */
const run = (model: GpuModel, dLogits?: Float32Array) => runModel(ctx, model, { B, T, tokens, positions }, dLogits);

describe.each(DTYPES)('GPU model with %s weights', (dtype) => {
  it('LoRA on a half base: logits and adapter gradients equal the CPU reference on the rounded base', async () => {
    const spec: LoraSpec = { rank: 3, alpha: 7, targets: LORA_TARGETS };
    const params = baseParams(3);
    const adapters = adaptersOf(spec, 4);
    const model = GpuModel.create(ctx, CONFIG, params, B, 2, { spec, adapters }, { weightDtype: dtype });
    expect(model.weightDtype).toBe(dtype);
    expect(model.params.get('model.layers.0.mlp.down_proj.weight')!.dtype).toBe(dtype);
    expect(model.params.get('model.norm.weight')!.dtype).toBe('f32');
    const rng = new Rng(9);
    const dLogits = Float32Array.from({ length: B * T * CONFIG.vocabSize }, () => rng.uniform(-1, 1));
    const got = await run(model, dLogits);
    const shapes = loraShapes(CONFIG, spec);
    const lora = { spec, adapters: hostParams(adapters, shapes) };
    const refParams = hostParams(roundModelWeights(CONFIG, params, dtype), paramShapes(CONFIG));
    const ref = modelForward(CONFIG, refParams, tokens, B, T, lora);
    const want = modelBackward(CONFIG, refParams, ref.cache, host(Float64Array.from(dLogits), [B, T, 13]), lora);
    const c = compareArrays(got.logits, ref.logits.data, { atol: 1e-5, rtol: 1e-4 });
    expect(c.pass, `logits: ${c.summary}`).toBe(true);
    expect(Object.keys(got.grads).sort()).toEqual(shapes.map((s) => s.name).sort());
    for (const { name } of shapes) {
      // The GPU's f32 backward against the f64 twin: an element near cancellation (0.0052 of a gradient whose
      // terms are ~1) carries the f32 sums' absolute error, up to 1.5e-5 at the f16 seed; atol 3e-5 covers it.
      const g = compareArrays(got.grads[name], want[name].data, { atol: 3e-5, rtol: 1e-4 });
      expect(g.pass, `${name}: ${g.summary}`).toBe(true);
    }
    // The merged download: the stored base (widened exactly on the GPU) plus s B A, against the twin's merge.
    const merged = await model.download();
    const rounded = roundModelWeights(CONFIG, params, dtype);
    const name = 'model.layers.1.self_attn.q_proj.weight';
    const base = await model.downloadBase();
    expect(base[name]).toEqual(rounded[name]);
    expect(compareArrays(merged[name], base[name], { atol: 0, rtol: 0 }).pass).toBe(false);
    for (const [n, w] of Object.entries(mergeLoraAdapters(CONFIG, spec, rounded, adapters))) {
      const m = compareArrays(merged[n], w, { atol: 1e-6, rtol: 1e-6 });
      expect(m.pass, `merge ${n}: ${m.summary}`).toBe(true);
    }
    model.destroy();
  });

  it('a frozen half reference: logits of the twin on the rounded weights, near the f32 model, no gradients', async () => {
    const params = baseParams(5);
    const ref = GpuModel.create(ctx, CONFIG, params, B, 1, undefined, { weightDtype: dtype, frozen: true });
    const full = GpuModel.create(ctx, CONFIG, params, B, 1);
    const got = await run(ref);
    const f32 = await run(full);
    const twin = modelForward(
      CONFIG,
      hostParams(roundModelWeights(CONFIG, params, dtype), paramShapes(CONFIG)),
      tokens,
      B,
      T,
    );
    const c = compareArrays(got.logits, twin.logits.data, { atol: 1e-5, rtol: 1e-4 });
    expect(c.pass, `vs twin: ${c.summary}`).toBe(true);
    // Half vs f32: the weights moved by up to u relatively; the logits (magnitude ~1 here) by a few u per layer.
    // Documented tolerance: atol = 8 u (L + 1), u the format's unit roundoff; and they must differ (storage is half).
    const tol = 8 * UNIT_ROUNDOFF[dtype] * (CONFIG.nLayers + 1);
    const d = compareArrays(got.logits, f32.logits, { atol: tol, rtol: 0 });
    expect(d.pass, `half vs f32 (atol ${tol}): ${d.summary}`).toBe(true);
    expect(d.maxAbsError).toBeGreaterThan(0);
    expect(ref.grads.size).toBe(0);
    const rec = ctx.recorder('no step');
    expect(() => ref.optimizerStep(rec, { lr: 1e-3, weightDecay: 0 })).toThrow(/frozen/);
    rec.submit();
    // A reset from the policy (f32 values) stores them rounded; half bits from a checkpoint go up as they are.
    const other = baseParams(6);
    ref.uploadBase(other);
    expect(await ref.downloadBase()).toEqual(roundModelWeights(CONFIG, other, dtype));
    const bits = Object.fromEntries(
      Object.entries(other).map(([k, v]) => [k, { dtype: 'bf16' as const, bits: toHalfBits(v, 'bf16') }]),
    );
    const fromBits = GpuModel.create(ctx, CONFIG, bits, B, 1, undefined, { weightDtype: dtype, frozen: true });
    // Every tensor arrives as bf16; the vectors (gains, biases) are stored f32 (the bits widened exactly), the
    // matrices in the model's dtype (bf16 as they are; f16 converted from bf16 with one rounding).
    const asBf16 = Object.fromEntries(Object.entries(bits).map(([k, v]) => [k, bf16BitsToF32(v.bits)]));
    expect(await fromBits.downloadBase()).toEqual(roundModelWeights(CONFIG, asBf16, dtype));
    for (const m of [ref, full, fromBits]) m.destroy();
  });

  it('greedy generation equals the CPU policy on the rounded weights, token for token', async () => {
    const params = baseParams(7);
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj', 'down_proj'] };
    const adapters = adaptersOf(spec, 8);
    const gpuPolicy = GpuPolicy.create(ctx, CONFIG, params, 4, { spec, adapters }, { weightDtype: dtype });
    const cpuPolicy = new CpuPolicy(CONFIG, roundModelWeights(CONFIG, params, dtype), { spec, adapters });
    const prompts = LEFT_PADDED_PROMPTS;
    const opts = { maxNewTokens: 10, sampler: { temperature: 1, greedy: true, seed: 1 }, eosId: 2, padId: 0 };
    const a = await gpuPolicy.generate(prompts, opts);
    const b = await cpuPolicy.generate(prompts, opts);
    expect(Array.from(a.tokens)).toEqual(Array.from(b.tokens));
    expect(Array.from(a.lengths)).toEqual(Array.from(b.lengths));
    gpuPolicy.destroy();
  });
});

describe.each(DTYPES)('half-precision rollouts of a policy trained in f32 (rolloutDtype %s)', (dtype) => {
  const prompts = LEFT_PADDED_PROMPTS;
  const opts = { maxNewTokens: 10, sampler: { temperature: 1, seed: 3 }, eosId: 2, padId: 0, checkEvery: 0 };
  const S = opts.maxNewTokens;
  const V = CONFIG.vocabSize;
  /** log softmax of the f32 model's logits at each sampled completion token (0 past a row's end), as (R, S). */
  const scoreF32 = (weights: ParamArrays, completion: Uint32Array, mask: Float32Array) => {
    const out = new Float32Array(prompts.length * S);
    prompts.forEach((p, r) => {
      const n = mask.subarray(r * S, (r + 1) * S).reduce((a, m) => a + m, 0);
      const seq = Uint32Array.from([...p, ...completion.subarray(r * S, r * S + n)]);
      const { logits } = modelForward(CONFIG, hostParams(weights, paramShapes(CONFIG)), seq, 1, seq.length);
      for (let s = 0; s < n; s++) {
        const row = Array.from(logits.data.subarray((p.length - 1 + s) * V, (p.length + s) * V));
        const max = Math.max(...row);
        const lse = max + Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
        out[r * S + s] = row[seq[p.length + s]] - lse;
      }
    });
    return out;
  };

  it('the sampler reads the weights rounded (the CPU twin on the rounded matrices), training reads the f32 masters, and the copy follows each optimizer step', async () => {
    const params = baseParams(21);
    const gpuPolicy = GpuPolicy.create(ctx, CONFIG, params, 4, undefined, { rolloutDtype: dtype });
    const model = gpuPolicy.model;
    expect(model.rolloutDtype).toBe(dtype);
    expect(model.params.get('model.layers.0.mlp.up_proj.weight')!.dtype).toBe('f32');
    const check = async (weights: ParamArrays) => {
      const got = await gpuPolicy.generate(prompts, opts);
      const twin = await new CpuPolicy(CONFIG, weights, undefined, { rolloutDtype: dtype }).generate(prompts, opts);
      expect(Array.from(got.tokens)).toEqual(Array.from(twin.tokens));
      expect(worstGap(got.logprobs, twin.logprobs)).toBeLessThan(1e-4);
      // The same tokens scored by the f32 model (what the learner computes as log pi_old): off by the rounding only.
      const gap = worstGap(got.logprobs, scoreF32(weights, got.tokens, got.mask));
      expect(gap).toBeGreaterThan(0);
      expect(gap).toBeLessThan(64 * UNIT_ROUNDOFF[dtype] * (CONFIG.nLayers + 1));
      // The training forward reads the f32 masters: the twin's logits on the unrounded weights.
      const train = await run(model);
      const ref = modelForward(CONFIG, hostParams(weights, paramShapes(CONFIG)), tokens, B, T);
      const c = compareArrays(train.logits, ref.logits.data, { atol: 1e-5, rtol: 1e-4 });
      expect(c.pass, `training forward vs f32 twin: ${c.summary}`).toBe(true);
    };
    await check(params);
    // One supervised step moves the masters; the next rollout samples from them rounded, not from the old copy.
    const batch = {
      B,
      T,
      tokens,
      targets: tokens.map((t) => (t + 1) % CONFIG.vocabSize),
      mask: new Float32Array(B * T).fill(1),
    };
    await gpuPolicy.sftStep(batch, { lr: 3e-2, weightDecay: 0, readLoss: false });
    const stepped = await model.downloadBase();
    const embed = 'model.embed_tokens.weight';
    expect(compareArrays(stepped[embed], params[embed], { atol: 0, rtol: 0 }).pass).toBe(false);
    await check(stepped);
    gpuPolicy.destroy();
  });

  it('is refused for a frozen model and under LoRA, where weightDtype sets the storage', () => {
    const params = baseParams(22);
    expect(() => GpuModel.create(ctx, CONFIG, params, B, 1, undefined, { frozen: true, rolloutDtype: dtype })).toThrow(
      /rolloutDtype .* is for a model trained in full/,
    );
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj'] };
    expect(
      () => new CpuPolicy(CONFIG, params, { spec, adapters: adaptersOf(spec, 1) }, { rolloutDtype: dtype }),
    ).toThrow(/is for a model trained in full/);
  });
});

describe.each(DTYPES)('rollouts with a %s KV cache', (dtype) => {
  // HD 4 (GQA 3:1, either attention path) and HD 6 (not a multiple of 4: the lanes path), f32 weights, so the cache
  // is the only half storage. Prompts of odd lengths, left-padded.
  const configs: [string, ModelConfig][] = [
    ['HD 4, 3 query heads on 1 kv head', CONFIG],
    ['HD 6, 2 query heads on 1 kv head', { ...CONFIG, nHeads: 2, qkvBias: false }],
  ];
  const prompts = [
    [1, 5, 6, 7],
    [1, 9],
    [1, 3, 4, 5, 6, 7, 8],
    [1, 9, 4],
  ];
  const opts = { maxNewTokens: 9, sampler: { temperature: 1, seed: 11 }, eosId: 2, padId: 0, checkEvery: 0 };

  it.each(configs)(
    '%s: samples equal the CPU policy with rounded keys and values; log-probs near the f32 cache',
    async (_, config) => {
      const params = randomBaseParams(config, 12);
      const half = GpuPolicy.create(ctx, config, params, 4, undefined, { kvDtype: dtype });
      const f32 = GpuPolicy.create(ctx, config, params, 4);
      const cache = half.model.createKvCache(4, 16);
      expect(cache.k[0].dtype).toBe(dtype);
      expect(cache.k[0].byteLength).toBe(f32.model.createKvCache(4, 16).k[0].byteLength / 2);
      const twin = new CpuPolicy(config, params, undefined, { kvDtype: dtype });
      const a = await half.generate(prompts, opts);
      const b = await twin.generate(prompts, opts);
      const c = await f32.generate(prompts, opts);
      // GPU vs twin: the same stored values, so the same tokens (a seeded draw) and log-probs to f32 rounding.
      expect(Array.from(a.tokens)).toEqual(Array.from(b.tokens));
      const lp = compareArrays(a.logprobs, b.logprobs, { atol: 1e-5, rtol: 1e-4 });
      expect(lp.pass, `GPU vs twin log-probs: ${lp.summary}`).toBe(true);
      // Half vs f32 cache, at the positions whose context (every earlier token and this one) is the same in both: K and
      // V moved by up to u relatively; as for half weights above, the logits (magnitude ~1) move by at most 8 u (L + 1),
      // and a log-softmax moves by at most twice its inputs' largest move, so |d logp| <= 16 u (L + 1).
      const tol = 16 * UNIT_ROUNDOFF[dtype] * (config.nLayers + 1);
      const S = opts.maxNewTokens;
      let worst = 0;
      let compared = 0;
      for (let r = 0; r < prompts.length; r++) {
        for (let s = 0; s < S && a.mask[r * S + s] && c.mask[r * S + s]; s++) {
          if (a.tokens[r * S + s] !== c.tokens[r * S + s]) break;
          worst = Math.max(worst, Math.abs(a.logprobs[r * S + s] - c.logprobs[r * S + s]));
          compared++;
        }
      }
      console.log(
        `${dtype} KV cache vs f32, ${config.nHeads}/${config.nKvHeads} heads: worst |d logp| ${worst.toExponential(2)} over ${compared} tokens (tolerance ${tol.toFixed(3)})`,
      );
      expect(compared).toBeGreaterThanOrEqual(prompts.length * 3);
      expect(worst).toBeLessThanOrEqual(tol);
      expect(worst).toBeGreaterThan(0); // the cache is stored half
      for (const t of [...cache.k, ...cache.v]) t.destroy();
      half.destroy();
      f32.destroy();
    },
  );
});

describe('a BF16 or F16 checkpoint stays half from the file to the GPU', () => {
  /** model.safetensors with every tensor in `dtype` (as real checkpoints ship), and its config.json. */
  function halfCheckpoint(params: ParamArrays, dtype: 'BF16' | 'F16') {
    const tensors = new Map<string, SafetensorsTensorInput>();
    for (const { name, shape } of paramShapes(CONFIG)) tensors.set(name, { dtype, shape, data: params[name] });
    const special = { bosId: 1, eosId: 2, padId: 0 };
    return {
      bytes: writeSafetensors(tensors, { format: 'pt' }),
      json: JSON.stringify(modelConfigToJson(CONFIG, special)),
    };
  }

  it.each([
    ['BF16', 'bf16'],
    ['F16', 'bf16'],
    ['BF16', 'f16'],
  ] as const)('%s file -> %s storage: half bits on the host, one conversion at most', async (fileDtype, storage) => {
    const params = baseParams(11);
    const file = halfCheckpoint(params, fileDtype);
    const ck = decodeCheckpointHalf(file.bytes, file.json);
    const fileHalf = fileDtype === 'BF16' ? 'bf16' : 'f16';
    for (const { name } of paramShapes(CONFIG)) {
      const w = ck.weights[name];
      expect(w instanceof Float32Array, name).toBe(false); // no f32 copy on the host
      expect((w as { dtype: string }).dtype).toBe(fileHalf);
    }
    const model = GpuModel.create(ctx, CONFIG, ck.weights, B, 1, undefined, { weightDtype: storage, frozen: true });
    const matrix = 'model.layers.0.mlp.up_proj.weight';
    const stored = (await ctx.read(model.params.get(matrix)!)) as Uint16Array;
    const fileBits = (ck.weights[matrix] as { bits: Uint16Array }).bits;
    if (fileHalf === storage) expect(stored).toEqual(fileBits); // uploaded as it is
    // Widened: the file's values (vectors exactly, in f32) with the matrices rounded once more where formats differ.
    const widened = Object.fromEntries(
      Object.entries(ck.weights).map(([k, v]) => [k, halfBitsToF32((v as { bits: Uint16Array }).bits, fileHalf)]),
    );
    expect(await model.downloadBase()).toEqual(roundModelWeights(CONFIG, widened, storage));
    model.destroy();
  });

  it('refuses a non-finite half weight, naming the tensor and the index', () => {
    const params = baseParams(12);
    params['model.layers.1.self_attn.o_proj.weight'][5] = Number.POSITIVE_INFINITY;
    const file = halfCheckpoint(params, 'BF16');
    expect(() => decodeCheckpointHalf(file.bytes, file.json)).toThrow(
      /tensor model\.layers\.1\.self_attn\.o_proj\.weight holds Infinity at index 5/,
    );
  });
});

describe('half weight storage in bytes', () => {
  it('a frozen bf16 model holds its matrices in half the bytes, as storedWeightBytes counts', () => {
    const shapes = paramShapes(CONFIG);
    const params = baseParams(1);
    const measure = (make: () => GpuModel) => {
      const before = ctx.tensorBytes().live;
      const m = make();
      // Each buffer once: a layer's norm gain and q/k/v biases share one arena (layerVectorArenas).
      const weights = [...new Set([...m.params.values()].map((t) => t.buffer))].reduce((n, b) => n + b.size, 0);
      const live = ctx.tensorBytes().live - before;
      m.destroy();
      return { weights, live };
    };
    const f32 = measure(() => GpuModel.create(ctx, CONFIG, params, B, 1, undefined, { frozen: true }));
    const bf16 = measure(() =>
      GpuModel.create(ctx, CONFIG, params, B, 1, undefined, { weightDtype: 'bf16', frozen: true }),
    );
    // The arenas' vectors are f32 at either width, each view aligned for binding.
    const grouped = layerVectorArenas(CONFIG);
    expect(grouped.length).toBe(CONFIG.nLayers);
    const inArenas = new Set(grouped.flat());
    const arenaBytes = grouped.reduce((n, names) => {
      const elems = arenaSize(
        ctx,
        names.map((name) => shapes.find((s) => s.name === name)!.shape),
      );
      return n + Math.max(16, Math.ceil((4 * elems) / 16) * 16);
    }, 0);
    const alone = shapes.filter((s) => !inArenas.has(s.name));
    expect(f32.weights).toBe(storedWeightBytes(alone, 'f32') + arenaBytes);
    expect(bf16.weights).toBe(storedWeightBytes(alone, 'bf16') + arenaBytes);
    // The matrices themselves (the arenas hold f32 vectors at either width).
    expect(bf16.weights - arenaBytes).toBeLessThan(0.6 * (f32.weights - arenaBytes));
    // A frozen model has no gradients at either width: everything else it holds is the same, so the whole saving is
    // the weights'.
    expect(bf16.live - bf16.weights).toBe(f32.live - f32.weights);
  });
});
