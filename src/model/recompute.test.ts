// Per-layer activation recomputation (GpuModel's 'recompute' workspaces, the gradient_checkpointing knob): one
// forward and backward of a full model and of a LoRA model (Qwen2 biases, GQA) gives exactly the gradients of the
// model that keeps every layer's activations (the recomputed forward is the same dispatches on the same inputs, less
// the layer's output, which the forward kept), while the workspace holds fewer bytes; and a frozen model's forward-only workspace gives the same hidden states as a
// training one. Runs on the machine's WebGPU adapter through Dawn; a missing adapter fails the suite.

import { describe, expect, it } from 'vitest';
import { loraShapes, type LoraSpec } from '../core/lora-layout';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { useNodeDevice } from '../testing/test-device';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { GpuModel, type GpuModelOptions, type LoraInit } from './gpu-model';

const gpu = useNodeDevice();

const CONFIG: ModelConfig = {
  vocabSize: 29,
  dModel: 12,
  nLayers: 3,
  nHeads: 3,
  nKvHeads: 1,
  dFF: 20,
  ropeTheta: 10000,
  normEps: 1e-6,
  tiedEmbeddings: true,
  qkvBias: true,
  contextLength: 16,
};
const B = 3;
const T = 7;

function params(): ParamArrays {
  const p = initParams(CONFIG, new Rng(4), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** One forward and backward from fixed dLogits; the gradients, the final hidden states and the workspace's bytes. */
async function step(opts: GpuModelOptions, lora?: LoraInit) {
  const { ctx } = gpu;
  const rng = new Rng(9);
  const u32 = (d: Uint32Array) => ctx.fromArray<'u32'>(d, [d.length], { dtype: 'u32' });
  const inp = {
    tokens: u32(Uint32Array.from({ length: B * T }, () => rng.int(CONFIG.vocabSize))),
    positions: u32(Uint32Array.from({ length: B * T }, (_, i) => i % T)),
  };
  const dLogits = ctx.fromArray(
    Float32Array.from({ length: B * T * CONFIG.vocabSize }, () => rng.normal()),
    [B, T, CONFIG.vocabSize],
  );
  const before = ctx.tensorBytes().live;
  const model = GpuModel.create(ctx, CONFIG, params(), B, 1, lora, opts);
  const modelBytes = ctx.tensorBytes().live - before;
  const rec = ctx.recorder('recompute');
  const ws = model.forward(rec, B, T, inp);
  const forwardDispatches = rec.dispatchCount;
  const wsBytes = ctx.tensorBytes().live - before - modelBytes;
  if (!opts.frozen) {
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, dLogits);
    model.backward(rec, ws, inp);
  }
  const dispatches = rec.dispatchCount;
  rec.submit();
  const hidden = (await ctx.read(ws.nf)) as Float32Array;
  const grads = await model.downloadGrads();
  model.destroy();
  for (const t of [inp.tokens, inp.positions, dLogits]) t.destroy();
  return { grads, hidden, wsBytes, forwardDispatches, dispatches };
}

describe('per-layer activation recomputation', () => {
  it('gives exactly the gradients of the kept activations, full model and LoRA, in fewer bytes', async () => {
    const spec: LoraSpec = { rank: 2, alpha: 4, targets: ['q_proj', 'v_proj', 'down_proj'] };
    // B nonzero too (as after some training), so every adapter has a gradient.
    const lora = () => {
      const rng = new Rng(3);
      const adapters = Object.fromEntries(
        loraShapes(CONFIG, spec).map(({ name, shape }) => [
          name,
          Float32Array.from({ length: shape[0] * shape[1] }, () => 0.4 * rng.normal()),
        ]),
      );
      return { spec, adapters };
    };
    for (const [label, make] of [
      ['full', () => undefined],
      ['LoRA', lora],
    ] as const) {
      const kept = await step({}, make());
      const again = await step({ recompute: true }, make());
      expect(Object.keys(again.grads).sort(), label).toEqual(Object.keys(kept.grads).sort());
      for (const [name, g] of Object.entries(kept.grads)) {
        expect(
          g.some((x) => x !== 0),
          `${label} ${name} has a gradient`,
        ).toBe(true);
        expect(Array.from(again.grads[name]), `${label} ${name}`).toEqual(Array.from(g));
      }
      expect(again.wsBytes, label).toBeLessThan(kept.wsBytes);
      // The recompute runs each layer's forward but its output: not the residual copy and the down product (nor,
      // with down adapted, its y += s xa B^T; its x A^T stays, the backward reads xa). The forward's fixed part is
      // the embedding and the final norm.
      const skipped = label === 'LoRA' ? 3 : 2;
      expect(again.dispatches - kept.dispatches, label).toBe(kept.forwardDispatches - 2 - CONFIG.nLayers * skipped);
    }
  });

  it("a frozen model has no gradients and its forward-only workspace gives the training workspace's hidden states", async () => {
    const kept = await step({});
    const frozen = await step({ frozen: true });
    expect(Object.keys(frozen.grads)).toEqual([]);
    expect(Array.from(frozen.hidden)).toEqual(Array.from(kept.hidden));
    expect(frozen.wsBytes).toBeLessThan(kept.wsBytes / 2);
  });
});
