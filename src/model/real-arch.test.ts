// Real architectures on the GPU. First the new attention features at small widths, against the CPU reference:
// every gradient of a Qwen3-style model (q/k norm, head dim != dModel / nHeads, q/k/v biases, Llama 3 scaled
// RoPE), with and without LoRA, and KV-cache generation. Then, for SmolLM2-135M, Qwen2.5-0.5B, Qwen3-0.6B and
// Llama-3.2-1B at their exact widths, head dims and vocabularies (1-2 layers, random BF16 weights, a synthetic
// byte-level BPE tokenizer of the real size; real-arch-folder.ts builds each folder in memory): the folder loads,
// GPU greedy generation equals the CPU reference token for token, and two GRPO steps with LoRA give finite metrics.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import { crossEntropyBackward as crossEntropyBackwardTwin } from '../reference/cross-entropy';
import { parityError } from '../reference/fixture';
import { modelBackward, modelForward } from '../reference/model';
import { host } from '../core/host-tensor';
import { loraShapes, type LoraSpec } from '../core/lora-layout';
import { paramShapes } from '../core/model-shapes';
import { Rng } from '../core/random';
import { resolveConfig } from '../schema/config';
import { encodePrompt } from '../rl/learners/sft';
import { Trainer } from '../rl/algorithm/trainer';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { GpuModel } from './gpu-model';
import { loadHfFolder } from '../io/hf-folder';
import { GpuPolicy } from './policy';
import { buildRealArchFolder } from '../io/real-arch-folder';
import type { RealModelName } from '../io/real-models.fixture';
import { folderReader } from '../io/tiny-hf';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

function randomArrays(shapes: { name: string; shape: number[] }[], rng: Rng, std: number): ParamArrays {
  return Object.fromEntries(
    shapes.map(({ name, shape }) => {
      const n = shape.reduce((a, b) => a * b, 1);
      const gain = shape.length === 1 && name.endsWith('norm.weight');
      return [name, Float32Array.from({ length: n }, () => (gain ? 1 : 0) + (gain ? 0.1 : std) * rng.normal())];
    }),
  );
}

const toHost = (arrays: ParamArrays, shapes: { name: string; shape: number[] }[]) =>
  Object.fromEntries(shapes.map(({ name, shape }) => [name, host(Float64Array.from(arrays[name]), shape)]));

describe('the attention features of real architectures on the GPU equal the CPU reference', () => {
  const qwen3Like: ModelConfig = {
    vocabSize: 37,
    contextLength: 40_960,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    headDim: 12, // not dModel / nHeads = 5
    dModel: 20,
    dFF: 24,
    ropeTheta: 1_000_000,
    normEps: 1e-6,
    tiedEmbeddings: true,
    qkNorm: true,
  };
  const cases: { name: string; config: ModelConfig; lora: LoraSpec | null }[] = [
    {
      name: 'Qwen3 layout (q/k norm, head dim 12 with dModel 20), every weight trained',
      config: qwen3Like,
      lora: null,
    },
    {
      name: 'q/k norm + q/k/v biases + Llama 3 scaled RoPE, untied, LoRA on every projection',
      config: {
        ...qwen3Like,
        tiedEmbeddings: false,
        qkvBias: true,
        headDim: 16,
        ropeScaling: { ropeType: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 8, originalMaxPositions: 64 },
      },
      lora: {
        rank: 3,
        alpha: 6,
        targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
      },
    },
  ];

  it.each(cases)('cross-entropy gradients: $name', async ({ config, lora }) => {
    const rng = new Rng(17);
    const shapes = paramShapes(config);
    const params = randomArrays(shapes, rng, 0.3);
    const adapters = lora ? randomArrays(loraShapes(config, lora), rng, 0.2) : null;
    const [B, T, V] = [2, 23, config.vocabSize];
    const tokens = Uint32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % V);
    const targets = Uint32Array.from({ length: B * T }, (_, i) => (i * 11 + 1) % V);
    const positions = Uint32Array.from({ length: B * T }, (_, i) => i % T);
    const mask = Float32Array.from({ length: B * T }, (_, i) => (i % 4 === 3 ? 0 : 1));
    // CPU reference in f64.
    const hostParams = toHost(params, shapes);
    const hostLora =
      lora && adapters ? { spec: lora, adapters: toHost(adapters, loraShapes(config, lora)) } : undefined;
    const { logits, cache } = modelForward(config, hostParams, tokens, B, T, hostLora);
    const dLogits = host(new Float64Array(B * T * V), [B * T, V]);
    crossEntropyBackwardTwin(dLogits, host(logits.data, [B * T, V]), targets, mask);
    const grads = modelBackward(config, hostParams, cache, host(dLogits.data, [B, T, V]), hostLora);
    const want = Object.fromEntries(Object.entries(grads).map(([n, g]) => [n, g.data]));
    // The GPU: one batch with explicit positions.
    const model = GpuModel.create(ctx, config, params, B, 1, lora && adapters ? { spec: lora, adapters } : undefined);
    const u32 = (d: Uint32Array) => ctx.fromArray<'u32'>(d, [d.length], { dtype: 'u32' });
    const inp = { tokens: u32(tokens), positions: u32(positions) };
    const gTargets = u32(targets);
    const gMask = ctx.fromArray(mask, [B * T]);
    const loss = ctx.tensor([1]);
    const gDLogits = ctx.tensor([B, T, V]);
    const gLogits = ctx.tensor([B, T, V]);
    const rec = ctx.recorder('real-arch backward');
    const ws = model.forward(rec, B, T, inp);
    model.logitsOf(rec, ws, gLogits);
    crossEntropyForward(rec, loss, gLogits.reshape2d(), gTargets, gMask);
    crossEntropyBackward(rec, gDLogits.reshape2d(), gLogits.reshape2d(), gTargets, gMask);
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, gDLogits);
    model.backward(rec, ws, inp);
    rec.submit();
    const got = await model.downloadGrads();
    model.destroy();
    for (const t of [inp.tokens, inp.positions, gTargets, gMask, loss, gDLogits, gLogits]) t.destroy();
    const trained = lora ? loraShapes(config, lora).map((s) => s.name) : shapes.map((s) => s.name);
    expect(Object.keys(got).sort()).toEqual([...trained].sort());
    if (!lora) expect(trained.filter((n) => n.endsWith('_norm.weight'))).toHaveLength(4);
    for (const name of trained) {
      expect(Math.max(...Array.from(want[name], Math.abs)), `${name}: reference gradient is zero`).toBeGreaterThan(0);
      expect(parityError(got[name], want[name]), name).toBeLessThan(1e-4);
    }
  });

  it('KV-cache greedy generation through q/k norm and scaled RoPE equals the CPU reference', async () => {
    const config = cases[1].config;
    const params = randomArrays(paramShapes(config), new Rng(4), 0.5);
    const prompts = [
      [1, 2, 3, 4, 5],
      [7, 8],
      [9, 10, 11, 12, 13, 14, 15],
    ];
    const gpu = GpuPolicy.create(ctx, config, params, prompts.length);
    const S = 6;
    const got = await gpu.generate(prompts, {
      maxNewTokens: S,
      sampler: { temperature: 1, greedy: true, seed: 0 },
      eosId: config.vocabSize + 1, // never sampled: every row runs the full length
      padId: 0,
    });
    gpu.destroy();
    const want = referenceGreedy(config, params, prompts, S);
    expect(Array.from(got.tokens)).toEqual(want.flat());
  });
});

/** Greedy decoding with the CPU reference (full forward per step, each prompt alone), f32 parameters. */
function referenceGreedy(
  config: ModelConfig,
  params: ParamArrays,
  prompts: readonly (readonly number[])[],
  steps: number,
): number[][] {
  const p = Object.fromEntries(paramShapes(config).map(({ name, shape }) => [name, host(params[name], shape)]));
  const V = config.vocabSize;
  return prompts.map((prompt) => {
    const seq = [...prompt];
    const out: number[] = [];
    for (let s = 0; s < steps; s++) {
      const { logits } = modelForward(config, p, Uint32Array.from(seq), 1, seq.length);
      const last = logits.data.subarray((seq.length - 1) * V, seq.length * V);
      let best = 0;
      for (let v = 1; v < V; v++) if (last[v] > last[best]) best = v;
      out.push(best);
      seq.push(best);
    }
    return out;
  });
}

/**
 * Checks that `tokens` (S per prompt) are the CPU reference's greedy continuation, with one forward per prompt over
 * prompt + tokens (teacher forcing): each token must be the argmax at the position before it. Equivalent to
 * comparing against the reference's own greedy decoding token for token, at a fraction of its cost.
 */
function expectGreedyUnderReference(
  config: ModelConfig,
  params: ParamArrays,
  prompts: readonly (readonly number[])[],
  tokens: readonly number[],
  S: number,
): void {
  const p = Object.fromEntries(paramShapes(config).map(({ name, shape }) => [name, host(params[name], shape)]));
  const V = config.vocabSize;
  prompts.forEach((prompt, r) => {
    const generated = tokens.slice(r * S, (r + 1) * S);
    const seq = [...prompt, ...generated];
    const { logits } = modelForward(config, p, Uint32Array.from(seq), 1, seq.length);
    const argmax = generated.map((_, s) => {
      const row = logits.data.subarray((prompt.length - 1 + s) * V, (prompt.length + s) * V);
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      return best;
    });
    expect(generated, `row ${r}: GPU greedy tokens vs the reference's argmax at each position`).toEqual(argmax);
  });
}

/**
 * SmolLM2-135M runs in every slow-tier run. The three vocabularies of 128k-152k tokens take minutes each on a
 * software adapter (SwiftShader on two cores), so they run when REAL_ARCH_TESTS=all is set (and show as skipped
 * otherwise); their features are covered at small widths above in every run.
 */
const ALL_ARCHS = process.env.REAL_ARCH_TESTS === 'all';

describe('random folders at real widths, head dims and vocabularies', () => {
  const archs: { name: RealModelName; layers: number; always: boolean }[] = [
    { name: 'smollm2-135m', layers: 2, always: true },
    { name: 'qwen2.5-0.5b', layers: 1, always: false },
    { name: 'qwen3-0.6b', layers: 1, always: false },
    { name: 'llama-3.2-1b', layers: 1, always: false },
  ];

  const title =
    '$name ($layers layers): loads, GPU greedy = CPU reference, two GRPO steps with LoRA give finite metrics';
  const check = async ({ name, layers }: { name: RealModelName; layers: number }) => {
    const t0 = performance.now();
    const built = buildRealArchFolder(name, { layers });
    const { ck, tokenizer } = await loadHfFolder(folderReader(built.files));
    const tLoad = performance.now();
    const log = (what: string, since: number) =>
      console.log(`${name} x${layers}: ${what} ${((performance.now() - since) / 1000).toFixed(1)} s`);
    log('build + load', t0);
    expect(ck.config).toEqual(built.config);
    expect(ck.config.nLayers).toBe(layers);
    expect(tokenizer.vocabSize).toBeLessThanOrEqual(ck.config.vocabSize);
    // BF16 on disk: the loader's f32 copy is exactly the rounded weights.
    const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    for (const [tensor, data] of Object.entries(built.params))
      expect(bytes(ck.params[tensor]).equals(bytes(data)), `${tensor} differs from what was written`).toBe(true);

    // Greedy generation: GPU (KV cache, LoRA adapters at B = 0 so no base gradients are allocated) vs the CPU.
    const prompts = ['addition:12+34=', 'sort:5281='].map((p) => encodePrompt(tokenizer, p));
    const S = 4;
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj', 'v_proj'] };
    const zeroAdapters = Object.fromEntries(
      loraShapes(ck.config, spec).map(({ name: n, shape }) => [n, new Float32Array(shape[0] * shape[1])]),
    );
    const gpu = GpuPolicy.create(ctx, ck.config, ck.params, prompts.length, { spec, adapters: zeroAdapters });
    const got = await gpu.generate(prompts, {
      maxNewTokens: S,
      sampler: { temperature: 1, greedy: true, seed: 0 },
      eosId: ck.config.vocabSize + 1,
      padId: tokenizer.padId,
    });
    gpu.destroy();
    expectGreedyUnderReference(ck.config, ck.params, prompts, Array.from(got.tokens), S);
    const tGenerate = performance.now();
    log('greedy parity (GPU and CPU)', tLoad);

    // Two GRPO steps with LoRA through the trainer.
    const config = resolveConfig('grpo', {
      task: 'addition',
      difficulty: 1,
      train_batch_size: 2,
      num_generations: 2,
      steps: 2,
      eval_every: 0,
      seed: 3,
      max_completion_length: 4,
      beta: 0,
      lora_rank: 4,
      entropy_coef: 0.01,
    });
    const trainer = await Trainer.create({
      config,
      init: { config: ck.config, params: ck.params },
      tokenizer,
      backend: { kind: 'webgpu', ctx },
    });
    const records = [];
    for await (const r of trainer.run()) records.push(r);
    trainer.destroy();
    expect(records.length).toBeGreaterThanOrEqual(2);
    for (const r of records) {
      expect(Number.isFinite(r.metrics.loss), `loss ${r.metrics.loss}`).toBe(true);
      expect(Number.isFinite(r.metrics.grad_norm), `grad_norm ${r.metrics.grad_norm}`).toBe(true);
    }
    const tEnd = performance.now();
    console.log(
      `${name} x${layers} layers: build+load ${((tLoad - t0) / 1000).toFixed(1)} s, greedy parity ${((tGenerate - tLoad) / 1000).toFixed(1)} s, 2 GRPO steps with LoRA ${((tEnd - tGenerate) / 1000).toFixed(1)} s`,
    );
  };
  it.each(archs.filter((a) => a.always))(title, check, 600_000);
  it.runIf(ALL_ARCHS).each(archs.filter((a) => !a.always))(title, check, 1_800_000);
});
