// The GPU model with LoRA adapters against the CPU reference (src/reference/lora.ts, model.ts): logits and every
// adapter gradient at awkward shapes (GQA 3:1, Qwen2 biases, widths 12 and 10, ranks 1 and 3), the first forward
// equal to the base model exactly (B = 0), the merged weights' logits equal to the adapted model's, KV-cache rollouts
// of left-padded prompts through the adapters equal to the merged model's, the backward without any of the base's
// gradient work (dispatches counted), an optimizer step that moves the adapters only, and rollouts that read the
// adapters merged into the sampler's copy (rollout_merge_lora). Runs on the machine's WebGPU adapter through Dawn.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsSince, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { embeddingBackward } from '../kernels/embedding';
import { compareArrays } from '../reference/compare';
import { mergeLoraAdapters } from '../reference/lora';
import { roundModelWeights } from '../reference/half-weights';
import { initLoraAdapters, loraShapes, LORA_TARGETS, type LoraSpec } from '../core/lora-layout';
import { modelBackward, modelForward } from '../reference/model';
import { paramShapes } from '../core/model-shapes';
import { Rng } from '../core/random';
import { host } from '../core/host-tensor';
import { UNIT_ROUNDOFF, type WeightDtype } from '../core/half';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { generate } from './generate';
import { GpuModel } from './gpu-model';
import { CpuPolicy } from './policy';
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
  dFF: 10,
  ropeTheta: 10000,
  normEps: 1e-6,
  tiedEmbeddings: false,
  qkvBias: true,
  contextLength: 16,
};
const B = 2;
const T = 5;
const u32 = (data: Uint32Array, label: string) => ctx.fromArray<'u32'>(data, [data.length], { dtype: 'u32', label });
const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % CONFIG.vocabSize);
const positions = Uint32Array.from({ length: B * T }, (_, i) => i % T);

const baseParams = (seed: number): ParamArrays => randomBaseParams(CONFIG, seed);
const trainedAdapters = (spec: LoraSpec, seed: number): ParamArrays => randomAdapters(CONFIG, spec, seed);
/** One forward (and, given dLogits, backward) on the GPU of the file's batch. */
const run = (model: GpuModel, dLogits?: Float32Array) => runModel(ctx, model, { B, T, tokens, positions }, dLogits);

describe('GPU model with LoRA', () => {
  it.each([
    { name: 'every projection, r=3 alpha=7', spec: { rank: 3, alpha: 7, targets: LORA_TARGETS } as LoraSpec },
    {
      name: 'k/o/up, r=1 alpha=16',
      spec: { rank: 1, alpha: 16, targets: ['k_proj', 'o_proj', 'up_proj'] } as LoraSpec,
    },
  ])('logits and adapter gradients equal the CPU reference; only adapters have gradients: $name', async ({ spec }) => {
    const params = baseParams(3);
    const adapters = trainedAdapters(spec, 4);
    const model = GpuModel.create(ctx, CONFIG, params, B, 2, { spec, adapters });
    const rng = new Rng(9);
    const dLogits = Float32Array.from({ length: B * T * CONFIG.vocabSize }, () => rng.uniform(-1, 1));
    const got = await run(model, dLogits);
    const shapes = loraShapes(CONFIG, spec);
    const lora = { spec, adapters: hostParams(adapters, shapes) };
    const refParams = hostParams(params, paramShapes(CONFIG));
    const ref = modelForward(CONFIG, refParams, tokens, B, T, lora);
    const want = modelBackward(
      CONFIG,
      refParams,
      ref.cache,
      host(Float64Array.from(dLogits), [B, T, CONFIG.vocabSize]),
      lora,
    );
    const c = compareArrays(got.logits, ref.logits.data, { atol: 1e-5, rtol: 1e-4 });
    expect(c.pass, `logits: ${c.summary}`).toBe(true);
    expect(Object.keys(got.grads).sort()).toEqual(shapes.map((s) => s.name).sort());
    for (const { name } of shapes) {
      const g = compareArrays(got.grads[name], want[name].data, { atol: 1e-5, rtol: 1e-4 });
      expect(g.pass, `${name}: ${g.summary}`).toBe(true);
    }
    model.destroy();
  });

  it('with B = 0 at init the first forward is the base model exactly; the merged weights reproduce a trained adapter', async () => {
    const params = baseParams(5);
    const spec: LoraSpec = { rank: 4, alpha: 8, targets: LORA_TARGETS };
    const base = GpuModel.create(ctx, CONFIG, params, B);
    const fresh = GpuModel.create(ctx, CONFIG, params, B, 2, {
      spec,
      adapters: initLoraAdapters(CONFIG, spec, new Rng(1)),
    });
    const baseLogits = (await run(base)).logits;
    expect(Array.from((await run(fresh)).logits)).toEqual(Array.from(baseLogits));

    const adapters = trainedAdapters(spec, 6);
    const trained = GpuModel.create(ctx, CONFIG, params, B, 2, { spec, adapters });
    const adaptedLogits = (await run(trained)).logits;
    // The GPU's merge against its twin, then the merged model against the adapted one.
    const mergedParams = await trained.download();
    for (const [name, want] of Object.entries(mergeLoraAdapters(CONFIG, spec, params, adapters))) {
      const c = compareArrays(mergedParams[name], want, { atol: 1e-6, rtol: 1e-6 });
      expect(c.pass, `merge ${name}: ${c.summary}`).toBe(true);
    }
    const merged = GpuModel.create(ctx, CONFIG, mergedParams, B);
    const c = compareArrays((await run(merged)).logits, adaptedLogits, { atol: 1e-5, rtol: 0 });
    expect(c.pass, `merged vs adapted: ${c.summary}`).toBe(true);
    // The adapters moved the model, so the comparison above is between two different ways to compute it.
    expect(compareArrays(adaptedLogits, baseLogits, { atol: 1e-3, rtol: 0 }).pass).toBe(false);
    for (const m of [base, fresh, trained, merged]) m.destroy();
  });

  it("KV-cache rollouts (prefill, then one token per step) through the adapters equal the merged model's", async () => {
    const spec: LoraSpec = { rank: 3, alpha: 6, targets: LORA_TARGETS };
    const adapted = GpuModel.create(ctx, CONFIG, baseParams(8), 4, 2, { spec, adapters: trainedAdapters(spec, 9) });
    const merged = GpuModel.create(ctx, CONFIG, await adapted.download(), 4);
    // Left-padded prompts of different lengths; sampled at temperature 1 with one seed, so both draw the same tokens.
    const prompts = LEFT_PADDED_PROMPTS;
    const opts = { maxNewTokens: 6, sampler: { temperature: 1, seed: 4 }, eosId: 2, padId: 0 };
    const a = await generate(adapted, prompts, opts);
    const m = await generate(merged, prompts, opts);
    expect(Array.from(a.tokens)).toEqual(Array.from(m.tokens));
    const c = compareArrays(a.logprobs, m.logprobs, { atol: 1e-5, rtol: 0 });
    expect(c.pass, `log-probs: ${c.summary}`).toBe(true);
    adapted.destroy();
    merged.destroy();
  });

  it("frozenView: the policy's base with the adapters off, no copy: the base model's logits bit for bit, and destroying it leaves the policy whole", async () => {
    const params = baseParams(13);
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: LORA_TARGETS };
    const policy = GpuModel.create(ctx, CONFIG, params, B, 2, { spec, adapters: trainedAdapters(spec, 14) });
    const reference = GpuModel.create(ctx, CONFIG, params, B, 1, undefined, { frozen: true });
    const before = (await run(policy)).logits;
    const view = policy.frozenView();
    expect(view.frozen).toBe(true);
    expect(view.lora).toBeNull();
    expect(view.params.get('model.layers.0.mlp.up_proj.weight')).toBe(
      policy.params.get('model.layers.0.mlp.up_proj.weight'),
    );
    expect(Array.from((await run(view)).logits)).toEqual(Array.from((await run(reference)).logits));
    view.destroy();
    expect(Array.from((await run(policy)).logits)).toEqual(Array.from(before));
    policy.destroy();
    reference.destroy();
  });

  it("records none of the base's gradient work: its weight-gradient matmuls, bias and embedding gradients are skipped", async () => {
    const params = baseParams(12);
    const inp = { tokens: u32(tokens, 'tokens'), positions: u32(positions, 'positions') };
    const dLogits = ctx.tensor([B, T, CONFIG.vocabSize], { label: 'dLogits' });
    /** Dispatches of one backward (after its forward, which is not counted). */
    const backwardDispatches = (model: GpuModel) => {
      const fwd = ctx.recorder('forward');
      const ws = model.forward(fwd, B, T, inp);
      fwd.submit();
      const rec = ctx.recorder('backward');
      model.headBackwardOf(rec, ws, dLogits);
      model.backward(rec, ws, inp);
      const n = rec.dispatchCount;
      rec.submit();
      return n;
    };
    const full = GpuModel.create(ctx, CONFIG, params, B);
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj', 'up_proj'] };
    const adapted = GpuModel.create(ctx, CONFIG, params, B, 2, {
      spec,
      adapters: initLoraAdapters(CONFIG, spec, new Rng(3)),
    });
    // The embedding's backward, on its own, for the count it drops.
    const emb = ctx.recorder('embedding');
    const g = ctx.tensor([CONFIG.vocabSize, CONFIG.dModel], { label: 'dE' });
    embeddingBackward(emb, g, ctx.tensor([B, T, CONFIG.dModel], { label: 'dx' }), inp.tokens);
    const embedding = emb.dispatchCount;
    emb.submit();
    const L = CONFIG.nLayers;
    // Dropped: the head's and 7 weight gradients per layer, 3 bias gradients per layer (Qwen2), the embedding's.
    // Added: 4 matmuls per adapted projection.
    const dropped = 1 + 7 * L + 3 * L + embedding;
    const added = 4 * L * spec.targets.length;
    expect(backwardDispatches(adapted)).toBe(backwardDispatches(full) - dropped + added);
    for (const m of [full, adapted]) m.destroy();
    for (const t of [dLogits, g, ...Object.values(inp)]) t.destroy();
  });

  it('an optimizer step moves the adapters and leaves every base weight as it was', async () => {
    const params = baseParams(7);
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj', 'down_proj'] };
    const adapters = initLoraAdapters(CONFIG, spec, new Rng(2));
    const model = GpuModel.create(ctx, CONFIG, params, B, 2, { spec, adapters });
    const rng = new Rng(11);
    await run(
      model,
      Float32Array.from({ length: B * T * CONFIG.vocabSize }, () => rng.uniform(-1, 1)),
    );
    const rec = ctx.recorder('step');
    model.optimizerStep(rec, { lr: 1e-2, weightDecay: 0.1, maxGradNorm: 1 });
    rec.submit();
    const after = await model.downloadBase();
    for (const [name, a] of Object.entries(params)) expect(Array.from(after[name]), name).toEqual(Array.from(a));
    const moved = await model.downloadAdapters();
    for (const { name } of loraShapes(CONFIG, spec))
      expect(Array.from(moved[name]), name).not.toEqual(Array.from(adapters[name]));
    const state = await model.downloadOptimizerState();
    expect(Object.keys(state.m).sort()).toEqual(
      loraShapes(CONFIG, spec)
        .map((s) => s.name)
        .sort(),
    );
    model.destroy();
  });
});

// Merged LoRA rollouts (GpuModelOptions.rolloutMergeLora, the rollout_merge_lora knob): the sampler reads each adapted
// matrix merged with its adapter, W + s B A, from a copy refreshed before each rollout. With an f32 base and copy the
// rollout equals, bit for bit, the rollout of a model loaded from download()'s merged weights (the same merge,
// dispatch for dispatch) and follows the adapters when they change; with a half base, a half copy or both it equals
// the CPU twin (CpuPolicy with rolloutMergeLora: the merged matrices rounded to the copy's dtype) and stays within
// the rounding of the unmerged sampler; a decode step runs the dispatches of a model trained in full; training
// forwards still run through the adapters.
const MERGE_SPEC: LoraSpec = { rank: 4, alpha: 8, targets: LORA_TARGETS };
const MERGE_OPTS = { maxNewTokens: 8, sampler: { temperature: 1, seed: 4 }, eosId: 2, padId: 0, checkEvery: 0 };

/** Dispatches of a short rollout by phase: the prefill (the merge included) and the decode steps. */
async function rolloutDispatches(model: GpuModel): Promise<{ prefill: number; decode: number }> {
  const before = ctx.counts.snapshot();
  await generate(model, LEFT_PADDED_PROMPTS, {
    ...MERGE_OPTS,
    maxNewTokens: 3,
    sampler: { temperature: 1, greedy: true, seed: 0 },
    eosId: 99,
  });
  const c = countsSince(before, ctx.counts.snapshot());
  model.destroy();
  return { prefill: c.phases['rollout.prefill'].dispatches, decode: c.phases['rollout.decode'].dispatches };
}

describe('merged LoRA rollouts (rolloutMergeLora)', () => {
  it("f32: the rollout is the merged model's bit for bit, follows the adapters when they change, and training still runs through them", async () => {
    const base = baseParams(31);
    const adapters = trainedAdapters(MERGE_SPEC, 32);
    const model = GpuModel.create(ctx, CONFIG, base, 4, 2, { spec: MERGE_SPEC, adapters }, { rolloutMergeLora: true });
    const unmergedModel = GpuModel.create(ctx, CONFIG, base, 4, 2, { spec: MERGE_SPEC, adapters });
    for (const step of [0, 1]) {
      if (step === 1) {
        // The adapters move (as an optimizer step moves them): the next rollout merges the new ones.
        const moved = trainedAdapters(MERGE_SPEC, 33);
        for (const [name, data] of Object.entries(moved)) {
          ctx.upload(model.adapters.get(name)!, data);
          ctx.upload(unmergedModel.adapters.get(name)!, data);
        }
      }
      const merged = GpuModel.create(ctx, CONFIG, await model.download(), 4);
      const got = await generate(model, LEFT_PADDED_PROMPTS, MERGE_OPTS);
      const want = await generate(merged, LEFT_PADDED_PROMPTS, MERGE_OPTS);
      expect(Array.from(got.tokens), `step ${step}`).toEqual(Array.from(want.tokens));
      expect(Array.from(got.logprobs), `step ${step}`).toEqual(Array.from(want.logprobs));
      // Against the adapters' own products: the same sampler up to float rounding.
      const unmerged = await generate(unmergedModel, LEFT_PADDED_PROMPTS, MERGE_OPTS);
      expect(Array.from(got.tokens)).toEqual(Array.from(unmerged.tokens));
      expect(worstGap(got.logprobs, unmerged.logprobs)).toBeLessThan(1e-4);
      merged.destroy();
    }
    // The training forward is the adapted model's, not the merged copy's.
    const a = await run(model);
    const b = await run(unmergedModel);
    expect(Array.from(a.logits)).toEqual(Array.from(b.logits));
    model.destroy();
    unmergedModel.destroy();
  });

  it('a decode step runs no adapter product: the dispatches of a model trained in full, the merge once per rollout', async () => {
    const base = baseParams(41);
    const adapters = trainedAdapters(MERGE_SPEC, 42);
    const lora = { spec: MERGE_SPEC, adapters };
    const merged = await rolloutDispatches(GpuModel.create(ctx, CONFIG, base, 4, 2, lora, { rolloutMergeLora: true }));
    const full = await rolloutDispatches(GpuModel.create(ctx, CONFIG, base, 4));
    const unmerged = await rolloutDispatches(GpuModel.create(ctx, CONFIG, base, 4, 2, lora));
    expect(merged.decode).toBeGreaterThan(0);
    expect(merged.decode).toBe(full.decode);
    expect(unmerged.decode).toBeGreaterThan(merged.decode);
    // The merge: per adapted matrix one copy of W and one s B A product, once per rollout, before the prefill.
    expect(merged.prefill - full.prefill).toBe(2 * CONFIG.nLayers * MERGE_SPEC.targets.length);
  });

  const HALF_CASES: { weightDtype: WeightDtype; rolloutDtype: WeightDtype }[] = [
    { weightDtype: 'bf16', rolloutDtype: 'f32' },
    { weightDtype: 'f32', rolloutDtype: 'bf16' },
    { weightDtype: 'bf16', rolloutDtype: 'bf16' },
    { weightDtype: 'f16', rolloutDtype: 'f16' },
  ];
  it.each(HALF_CASES)(
    'base $weightDtype, merged copy $rolloutDtype: the CPU twin on the merged matrices rounded; the unmerged sampler within the rounding',
    async ({ weightDtype, rolloutDtype }) => {
      const base = baseParams(51);
      const adapters = trainedAdapters(MERGE_SPEC, 52);
      const lora = { spec: MERGE_SPEC, adapters };
      const model = GpuModel.create(ctx, CONFIG, base, 4, 2, lora, {
        weightDtype,
        rolloutDtype,
        rolloutMergeLora: true,
      });
      const got = await generate(model, LEFT_PADDED_PROMPTS, MERGE_OPTS);
      const stored = roundModelWeights(CONFIG, base, weightDtype);
      const twin = await new CpuPolicy(CONFIG, stored, lora, { rolloutDtype, rolloutMergeLora: true }).generate(
        LEFT_PADDED_PROMPTS,
        MERGE_OPTS,
      );
      expect(Array.from(got.tokens)).toEqual(Array.from(twin.tokens));
      expect(worstGap(got.logprobs, twin.logprobs)).toBeLessThan(1e-4);
      // The adapters' own products on the same stored base: apart by the copy's rounding only.
      const unmergedModel = GpuModel.create(ctx, CONFIG, base, 4, 2, lora, { weightDtype });
      const unmerged = await generate(unmergedModel, LEFT_PADDED_PROMPTS, MERGE_OPTS);
      const bound = 64 * UNIT_ROUNDOFF[rolloutDtype] * (CONFIG.nLayers + 1);
      const sameTokens = got.tokens.every((t, i) => t === unmerged.tokens[i]);
      if (sameTokens) expect(worstGap(got.logprobs, unmerged.logprobs)).toBeLessThan(Math.max(bound, 1e-5));
      if (rolloutDtype !== 'f32') expect(worstGap(got.logprobs, unmerged.logprobs)).toBeGreaterThan(0);
      model.destroy();
      unmergedModel.destroy();
    },
  );

  it('is refused without adapters, and a half copy under LoRA only merged', () => {
    const base = baseParams(61);
    expect(() => GpuModel.create(ctx, CONFIG, base, 4, 2, undefined, { rolloutMergeLora: true })).toThrow(
      /rolloutMergeLora merges LoRA adapters/,
    );
    const lora = { spec: MERGE_SPEC, adapters: trainedAdapters(MERGE_SPEC, 62) };
    expect(() => GpuModel.create(ctx, CONFIG, base, 4, 2, lora, { rolloutDtype: 'bf16' })).toThrow(/rolloutMergeLora/);
    expect(() => new CpuPolicy(CONFIG, base, lora, { rolloutDtype: 'bf16' })).toThrow(/merged LoRA rollout/);
  });
});
