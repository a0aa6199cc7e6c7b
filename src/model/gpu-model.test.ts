// The GPU model as a whole: PyTorch parity (logits, loss, every gradient), KV-cache decoding against the full
// forward (with left-padded rows of different lengths), GPU rollouts (greedy = argmax of the full forward,
// same seed = same tokens, sampler log-probs = trainer log-probs, one readback per batch), and the fused decode
// products' sampler log-probs equal to the trainer's bit for bit, untuned and tuned.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsSince, type GpuContext, type Tensor } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import { ChunkedHead } from '../kernels/head-chunked';
import { fixtureLossInputs, parityError, parityFixtureFrom } from '../reference/fixture';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { generate, leftPad } from './generate';
import { GpuModel } from './gpu-model';
import { readSafetensors } from '../io/safetensors';
import { configFromJson } from '../io/checkpoint';
import { realModelConfig } from '../io/real-models.fixture';
import { setMatmulTuning, type MatmulTuning } from '../kernels/matmul';
import { LEFT_PADDED_PROMPTS, randomAdapters } from '../testing/gpu-model-harness';
import { LORA_TARGETS, type LoraSpec } from '../core/lora-layout';
import { rolloutSubmits } from '../schema/step-estimate';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

const u32 = (data: Uint32Array, label: string) => ctx.fromArray<'u32'>(data, [data.length], { dtype: 'u32', label });

function randomModel(config: ModelConfig, seed: number, std = 0.3): ParamArrays {
  const p = initParams(config, new Rng(seed), { std });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** Full (non-cached) forward of one batch; returns logits (B*T*V). */
async function fullLogits(
  model: GpuModel,
  rows: readonly (readonly number[])[],
  padId = 0,
): Promise<{ logits: Float32Array; P: number }> {
  const pad = leftPad(rows, padId);
  const inp = {
    tokens: u32(pad.tokens, 'tokens'),
    positions: u32(pad.positions, 'positions'),
    kvStart: u32(pad.kvStart, 'kvStart'),
  };
  const rec = ctx.recorder('full-forward');
  const ws = model.forward(rec, pad.R, pad.P, inp);
  const all = ctx.tensor([pad.R, pad.P, model.config.vocabSize], { label: 'logits' });
  model.logitsOf(rec, ws, all);
  rec.submit();
  const logits = (await ctx.read(all)) as Float32Array;
  all.destroy();
  for (const t of Object.values(inp)) t.destroy();
  return { logits, P: pad.P };
}

/**
 * The largest |sampler log-prob - trainer log-prob| over a rollout's completion tokens: the trainer's path is a
 * training forward of each prompt + completion and the chunked head (a small budget: several row chunks) at
 * temperature tau, as the trainer recomputes pi_old.
 */
async function samplerVsTrainer(
  model: GpuModel,
  prompts: readonly (readonly number[])[],
  out: { rows: number; tokens: Uint32Array; lengths: ArrayLike<number>; logprobs: Float32Array },
  maxNew: number,
  temperature: number,
  padId = 0,
): Promise<number> {
  let worst = 0;
  for (let r = 0; r < out.rows; r++) {
    const completion = Array.from(out.tokens.subarray(r * maxNew, r * maxNew + out.lengths[r]));
    const seq = [...prompts[r], ...completion];
    const pad = leftPad([seq], padId);
    const inp = { tokens: u32(pad.tokens, 't'), positions: u32(pad.positions, 'p') };
    const targets = u32(
      Uint32Array.from({ length: seq.length }, (_, i) => seq[i + 1] ?? 0),
      'targets',
    );
    const lp: Tensor = ctx.tensor([seq.length]);
    const ent: Tensor = ctx.tensor([seq.length]);
    const rec = ctx.recorder('logprobs');
    const head = new ChunkedHead(ctx, {
      dModel: model.config.dModel,
      vocabSize: model.config.vocabSize,
      maxRows: seq.length,
      reference: false,
      budgetBytes: 3 * 2 * 4 * model.config.vocabSize,
    });
    const ws = model.forward(rec, 1, seq.length, inp);
    head.forward(rec, {
      policy: { h: ws.nf, W: model.headWeightTensor },
      targets,
      logp: lp,
      entropy: ent,
      temperature,
    });
    rec.submit();
    head.destroy();
    const got = await ctx.read(lp);
    for (let s = 0; s < completion.length; s++)
      worst = Math.max(worst, Math.abs(got[prompts[r].length - 1 + s] - out.logprobs[r * maxNew + s]));
    for (const t of [inp.tokens, inp.positions, targets, lp, ent]) t.destroy();
  }
  return worst;
}

describe('GPU model vs PyTorch (public/fixtures/llama-parity.safetensors)', () => {
  it('logits, loss and every parameter gradient match within 1e-4 relative', async () => {
    const file = readSafetensors(
      new Uint8Array(readFileSync(new URL('../../public/fixtures/llama-parity.safetensors', import.meta.url))),
      { copy: true },
    );
    const fx = parityFixtureFrom(file.tensors, file.metadata);
    const config: ModelConfig = { ...fx.dims, contextLength: 16 };
    const params = Object.fromEntries(Object.entries(fx.params).map(([k, v]) => [k, Float32Array.from(v.data)]));
    const model = GpuModel.create(ctx, config, params);
    const { B, T } = fx;
    const positions = Uint32Array.from({ length: B * T }, (_, i) => i % T);
    const inp = { tokens: u32(Uint32Array.from(fx.tokens), 'tokens'), positions: u32(positions, 'positions') };
    const { targets, mask } = fixtureLossInputs(fx);
    const gTargets = u32(targets, 'targets');
    const gMask = ctx.fromArray(mask, [B * T], { label: 'mask' });
    const loss = ctx.tensor([1], { label: 'loss' });
    const dLogits = ctx.tensor([B, T, config.vocabSize], { label: 'dLogits' });
    const rec = ctx.recorder('parity step');
    const ws = model.forward(rec, B, T, inp);
    const logits = ctx.tensor([B, T, config.vocabSize], { label: 'logits' });
    model.logitsOf(rec, ws, logits);
    crossEntropyForward(rec, loss, logits.reshape2d(), gTargets, gMask);
    crossEntropyBackward(rec, dLogits.reshape2d(), logits.reshape2d(), gTargets, gMask);
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, dLogits);
    model.backward(rec, ws, inp);
    rec.submit();
    const [logitsV, lossV] = await ctx.readMany([logits, loss]);
    const grads = await model.downloadGrads();
    const errors: Record<string, number> = {
      logits: parityError(logitsV, fx.expected.logits),
      loss: parityError(lossV, [fx.expected.loss]),
    };
    for (const [name, want] of Object.entries(fx.expected.grads))
      errors[`grad ${name}`] = parityError(grads[name], want);
    const worst = Object.entries(errors).sort((a, b) => b[1] - a[1]);
    console.log(
      `GPU parity (max|got-want|/max|want|): logits ${errors.logits.toExponential(2)}, loss ${errors.loss.toExponential(2)}, worst ${worst[0][0]} ${worst[0][1].toExponential(2)}`,
    );
    for (const [name, e] of worst) expect(e, name).toBeLessThan(1e-4);
    model.destroy();
  });
});

describe('KV-cache decoding', () => {
  const config: ModelConfig = {
    vocabSize: 23,
    contextLength: 24,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    dModel: 16,
    dFF: 24,
    ropeTheta: 10000,
    normEps: 1e-5,
    tiedEmbeddings: true,
  };

  it('gives the logits of the full forward at every position, for left-padded rows of different lengths', async () => {
    const model = GpuModel.create(ctx, config, randomModel(config, 11));
    const rng = new Rng(5);
    const seqs = [9, 6, 11].map((n) => Array.from({ length: n }, () => 1 + rng.int(config.vocabSize - 1)));
    const promptLens = [4, 2, 7];
    // Reference: each row alone, unpadded, full forward.
    const refs = [];
    for (const s of seqs) refs.push((await fullLogits(model, [s])).logits);
    // Cached: prefill the prompts (left-padded), then feed the rest one token per step (teacher forcing).
    const R = seqs.length;
    const V = config.vocabSize;
    const pad = leftPad(
      seqs.map((s, r) => s.slice(0, promptLens[r])),
      0,
    );
    const steps = Math.max(...seqs.map((s, r) => s.length - promptLens[r]));
    const kv = model.createKvCache(R, pad.P + steps);
    const kvStart = u32(pad.kvStart, 'kvStart');
    const head = {
      x: ctx.tensor([R, config.dModel]),
      nf: ctx.tensor([R, config.dModel]),
      rstd: ctx.tensor([R]),
      logits: ctx.tensor([R, V], { label: 'logits' }),
    };
    let worst = 0;
    let compared = 0;
    for (let s = 0; s <= steps; s++) {
      const prefill = s === 0;
      const T = prefill ? pad.P : 1;
      const tokens = prefill ? pad.tokens : Uint32Array.from(seqs, (q, r) => q[promptLens[r] + s - 1] ?? 0);
      const positions = prefill ? pad.positions : Uint32Array.from(pad.kvStart, (st) => pad.P + s - 1 - st);
      const last = prefill
        ? Uint32Array.from({ length: R }, (_, r) => r * T + T - 1)
        : Uint32Array.from({ length: R }, (_, r) => r);
      const inp = { tokens: u32(tokens, 'tokens'), positions: u32(positions, 'positions'), kvStart };
      const lastT = u32(last, 'last');
      const rec = ctx.recorder('decode');
      model.decodeForward(rec, model.workspaceFor(R, T), kv, prefill ? 0 : pad.P + s - 1, inp, lastT, head);
      rec.submit();
      const got = (await ctx.read(head.logits)) as Float32Array;
      for (let r = 0; r < R; r++) {
        const position = promptLens[r] - 1 + s; // index in the row of the token whose next-token logits these are
        if (position >= seqs[r].length) continue;
        const want = refs[r].subarray(position * V, (position + 1) * V);
        worst = Math.max(worst, parityError(got.subarray(r * V, (r + 1) * V), want));
        compared++;
      }
      for (const t of [inp.tokens, inp.positions, lastT]) t.destroy();
    }
    console.log(
      `KV-cache vs full forward: worst relative error ${worst.toExponential(2)} over ${compared} positions in ${steps + 1} steps`,
    );
    // Every position from each prompt's last token to the row's end was compared.
    expect(compared).toBe(seqs.reduce((n, q, r) => n + q.length - promptLens[r] + 1, 0));
    expect(worst).toBeLessThan(1e-5);
    model.destroy();
  });
});

describe('rollouts on the GPU', () => {
  const config: ModelConfig = {
    vocabSize: 19,
    contextLength: 32,
    nLayers: 2,
    nHeads: 2,
    nKvHeads: 1,
    dModel: 16,
    dFF: 32,
    ropeTheta: 10000,
    normEps: 1e-5,
    tiedEmbeddings: true,
  };
  const eosId = 2;
  const padId = 0;
  const prompts = LEFT_PADDED_PROMPTS;

  it('greedy decoding equals the argmax of the full forward at every step', async () => {
    const model = GpuModel.create(ctx, config, randomModel(config, 3));
    const out = await generate(model, prompts, {
      maxNewTokens: 10,
      sampler: { temperature: 1, greedy: true, seed: 1 },
      eosId,
      padId,
    });
    for (let r = 0; r < prompts.length; r++) {
      const completion = Array.from(out.tokens.subarray(r * 10, r * 10 + out.lengths[r]));
      const { logits, P } = await fullLogits(model, [[...prompts[r], ...completion]]);
      const V = config.vocabSize;
      for (let s = 0; s < completion.length; s++) {
        const row = logits.subarray((prompts[r].length - 1 + s) * V, (prompts[r].length + s) * V);
        const argmax = row.indexOf(Math.max(...row));
        expect(completion[s], `row ${r} step ${s} (P=${P})`).toBe(argmax);
      }
    }
    model.destroy();
  });

  it("same seed gives the same tokens; sampler log-probs equal the trainer's; one readback per batch", async () => {
    const model = GpuModel.create(ctx, config, randomModel(config, 4));
    const opts = { maxNewTokens: 12, sampler: { temperature: 0.9, topP: 0.95, seed: 77 }, eosId, padId, checkEvery: 0 };
    const a = await generate(model, prompts, opts);
    const b = await generate(model, prompts, opts);
    const c = await generate(model, prompts, { ...opts, sampler: { ...opts.sampler, seed: 78 } });
    expect(Array.from(a.tokens)).toEqual(Array.from(b.tokens));
    expect(Array.from(a.tokens)).not.toEqual(Array.from(c.tokens));
    expect(a.readbacks).toBe(1);
    // Mask and lengths agree; EOS ends a row; padding after the end.
    for (let r = 0; r < a.rows; r++) {
      const n = a.lengths[r];
      for (let s = 0; s < 12; s++) expect(a.mask[r * 12 + s]).toBe(s < n ? 1 : 0);
      if (a.finished[r]) expect(a.tokens[r * 12 + n - 1]).toBe(eosId);
      for (let s = n; s < 12; s++) expect(a.tokens[r * 12 + s]).toBe(padId);
    }
    // pi_old from the sampler equals log softmax(logits / tau) of the training forward at those tokens.
    const worst = await samplerVsTrainer(model, prompts, a, 12, 0.9);
    console.log(`sampler vs trainer log-prob: max |diff| ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(1e-5);
    model.destroy();
  });

  it('several decode steps per submit: the same rollout bit for bit, the submits counted per phase', async () => {
    const model = GpuModel.create(ctx, config, randomModel(config, 6));
    const S = 20;
    const opts = { maxNewTokens: S, sampler: { temperature: 1, seed: 9 }, eosId: config.vocabSize + 1, padId };
    const run = async (stepsPerSubmit: number, checkEvery = 0) => {
      const before = ctx.counts.snapshot();
      const out = await generate(model, prompts, { ...opts, stepsPerSubmit, checkEvery });
      const { phases } = countsSince(before, ctx.counts.snapshot());
      const phase = (k: string) => ({ submits: phases[k]?.submits, steps: phases[k]?.steps });
      return { out, prefill: phase('rollout.prefill'), decode: phase('rollout.decode') };
    };
    const one = await run(1);
    expect(one.prefill).toEqual({ submits: 1, steps: 1 });
    expect(one.decode).toEqual({ submits: S - 1, steps: S - 1 });
    expect(rolloutSubmits(S, 1)).toBe(S);
    // Decode steps 1..19: a submit after steps 2, 5, 8, ... (every 3rd token step, the prefill counted) and the last.
    for (const [k, submits] of [
      [3, 7],
      [8, 3],
      [32, 1],
    ] as const) {
      const batched = await run(k);
      expect(batched.prefill).toEqual({ submits: 1, steps: 1 });
      expect(batched.decode, `${k} steps per submit`).toEqual({ submits, steps: S - 1 });
      expect(rolloutSubmits(S, k), "the step estimate's count").toBe(1 + submits);
      for (const key of ['tokens', 'logprobs', 'entropies', 'mask', 'lengths'] as const)
        expect(Array.from(batched.out[key]), `${key} at ${k} steps per submit`).toEqual(Array.from(one.out[key]));
    }
    // An early stop reads after a submit: with most ids ending a row, both stop at the same check.
    const ending = { ...opts, eosId, eosIds: [2, 3, 4, 5, 6, 7, 8, 9], checkEvery: 4 };
    const early1 = await generate(model, prompts, { ...ending, stepsPerSubmit: 1 });
    const early8 = await generate(model, prompts, { ...ending, stepsPerSubmit: 8 });
    expect(early1.steps).toBeLessThan(S);
    expect(early8.steps).toBe(early1.steps);
    expect(early8.readbacks).toBe(early1.readbacks);
    expect(Array.from(early8.tokens)).toEqual(Array.from(early1.tokens));
    // The bench's hook after the prefill: awaited once, with the prefill submitted and no decode step yet; the
    // rollout is the same.
    const seen: { prefill: number; decode: number }[] = [];
    const before = ctx.counts.snapshot();
    const hooked = await generate(model, prompts, {
      ...opts,
      stepsPerSubmit: 8,
      afterPrefill: async () => {
        const { phases } = countsSince(before, ctx.counts.snapshot());
        seen.push({ prefill: phases['rollout.prefill']?.submits ?? 0, decode: phases['rollout.decode']?.steps ?? 0 });
        await ctx.flush();
      },
    });
    expect(seen).toEqual([{ prefill: 1, decode: 0 }]);
    expect(Array.from(hooked.tokens)).toEqual(Array.from(one.out.tokens));
    await expect(generate(model, prompts, { ...opts, stepsPerSubmit: 0 })).rejects.toThrow(
      /stepsPerSubmit must be a whole number of 1 or more, got 0/,
    );
    model.destroy();
  });

  it('refuses prompts that do not fit the context, with the numbers', async () => {
    const model = GpuModel.create(ctx, config, randomModel(config, 5));
    await expect(
      generate(model, [[1, 2, 3]], { maxNewTokens: 30, sampler: { temperature: 1, seed: 1 }, eosId, padId }),
    ).rejects.toThrow(/prompt length 3 \+ maxNewTokens 30 exceeds the model's context length 32/);
    model.destroy();
  });
});

describe("the fused decode products equal the trainer's forward, bit for bit", () => {
  // A decode step runs q/k/v and gate/up as fused products with their norms folded in (projection.wgsl); the
  // trainer's forward runs rmsnorm and one matmul per product. The sampler's log-probs must equal the trainer's
  // exactly (one update per batch gives a ratio of exactly 1), so the fused products must sum along K in the order
  // of the variant the trainer's matmul runs: untuned that is blocked (one k at a time), tuned for a CPU adapter
  // vec4 (4 k per dot product). Summed in vec4's order under blocked, the copy warm start's widths were 1.4e-6 off.
  const copyJson = JSON.parse(
    readFileSync(new URL('../../public/checkpoints/copy/config.json', import.meta.url), 'utf8'),
  ) as Parameters<typeof configFromJson>[0];
  const smollm = realModelConfig('smollm2-135m').config;
  const models: { name: string; config: ModelConfig; std: number }[] = [
    { name: 'the copy warm start (d 48, ff 128)', config: configFromJson(copyJson).config, std: 0.3 },
    {
      name: 'SmolLM2-135M widths, one layer (d 576, ff 1536, head dim 64)',
      config: { ...smollm, nLayers: 1, vocabSize: 99, contextLength: 32 },
      std: 0.05,
    },
  ];
  const tunings: { name: string; tuning: MatmulTuning | null }[] = [
    { name: 'untuned (blocked)', tuning: null },
    { name: 'tuned vec4 (a CPU adapter)', tuning: { NT: 'vec4', NN: 'vec4', TN: 'vec4' } },
  ];
  const prompts = [
    [1, 5, 6, 7],
    [1, 9],
    [1, 3, 4, 5, 6, 7, 8],
  ];
  // With LoRA on every projection (trained adapters, B nonzero) the decode step's adapted products add the
  // adapters' deltas in their epilogues (q/k/v, gate/up, o and down): those too must equal the trainer's
  // loraForward, the delta summed along the rank in the order of the trainer's xa B^T product.
  const loras: { name: string; spec: LoraSpec | null }[] = [
    { name: '', spec: null },
    { name: ', LoRA r=8 on all 7 projections', spec: { rank: 8, alpha: 16, targets: LORA_TARGETS } },
  ];
  for (const m of models)
    for (const t of tunings)
      for (const lo of loras)
        it(`${m.name}, ${t.name}${lo.name}`, async () => {
          setMatmulTuning(ctx.device, t.tuning);
          const lora = lo.spec ? { spec: lo.spec, adapters: randomAdapters(m.config, lo.spec, 3) } : undefined;
          const model = GpuModel.create(ctx, m.config, randomModel(m.config, 11, m.std), 64, 2, lora);
          try {
            const before = ctx.counts.snapshot();
            const maxNewTokens = 8;
            const out = await generate(model, prompts, {
              maxNewTokens,
              sampler: { temperature: 0.9, seed: 5 },
              eosId: 2,
              padId: 0,
              checkEvery: 0,
            });
            const kernels = Object.keys(countsSince(before, ctx.counts.snapshot()).kernels);
            // Both fused products ran (so the comparison below covers them).
            const fused = lo.spec
              ? ['projection_qkv_lora', 'projection_pair', 'projection_gate_up_lora', 'projection_add_lora']
              : ['projection_gate_up', 'projection_qkv'];
            expect(kernels.filter((k) => k.startsWith('projection.')).sort()).toEqual(
              expect.arrayContaining(fused.map((f) => expect.stringMatching(new RegExp(`^projection\\.${f}\\.`)))),
            );
            const worst = await samplerVsTrainer(model, prompts, out, maxNewTokens, 0.9);
            expect(worst).toBe(0);
          } finally {
            model.destroy();
            setMatmulTuning(ctx.device, null);
          }
        });
});
