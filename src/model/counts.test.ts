// The counted proxies of speed at a real architecture (SmolLM2-135M's widths, head dim and vocabulary, random BF16
// weights, 1-2 layers; real-arch-folder.ts): dispatches per decode step and per layer, submits and readbacks per
// rollout, bytes a decode step moves against the bytes of the weights it reads, and the dispatches, submits,
// readbacks and pipelines of a GRPO step with LoRA. They hold on every adapter, so the exact counts are asserted:
// a change that adds a dispatch, a submit, a readback or a pipeline fails here, and one that removes some updates
// the numbers (docs/benchmarks/counts.md keeps them before and after each change).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arenaSize, countsSince, type CountsSnapshot, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { loraShapes, type LoraSpec } from '../core/lora-layout';
import { resolveConfig } from '../schema/config';
import { Trainer } from '../rl/algorithm/trainer';
import { encodePrompt } from '../rl/learners/sft';
import { loadHfFolder } from '../io/hf-folder';
import { buildRealArchFolder } from '../io/real-arch-folder';
import { folderReader } from '../io/tiny-hf';
import type { ModelConfig } from '../schema/model-config';
import type { ParamArrays } from '../io/checkpoint';
import type { Tokenizer } from '../io/tokenizer';
import { decodeStepCounts, type DecodeStepCounts } from './counts';
import { GpuModel } from './gpu-model';
import { paramShapes } from '../core/model-shapes';
import { decodeDispatches } from '../schema/step-estimate';

let ctx: GpuContext;
let config: ModelConfig;
let params: ParamArrays;
let tokenizer: Tokenizer;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
  const built = buildRealArchFolder('smollm2-135m', { layers: 2 });
  const loaded = await loadHfFolder(folderReader(built.files));
  config = loaded.ck.config;
  params = loaded.ck.params;
  tokenizer = loaded.tokenizer;
}, 120_000);
afterAll(() => ctx?.destroy());

const ALL_TARGETS: LoraSpec['targets'] = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

describe('counted proxies at SmolLM2-135M widths', () => {
  it('a decode step: dispatches per layer and fixed, token steps batched per submit, one readback per rollout', async () => {
    const prompts = ['addition:12+34=', 'sort:5281='].map((p) => encodePrompt(tokenizer, p));
    const plain = await decodeStepCounts(ctx, config, params, prompts, null);
    const spec: LoraSpec = { rank: 4, alpha: 8, targets: ALL_TARGETS };
    const adapters = Object.fromEntries(
      loraShapes(config, spec).map(({ name, shape }) => [name, new Float32Array(shape[0] * shape[1])]),
    );
    const lora = await decodeStepCounts(ctx, config, params, prompts, { spec, adapters });
    // Merged into the sampler's copy (rollout_merge_lora), the adapters add no dispatch to a decode step.
    const merged = await decodeStepCounts(ctx, config, params, prompts, { spec, adapters }, { rolloutMergeLora: true });
    expect({ perLayer: merged.dispatchesPerLayer, fixed: merged.dispatchesFixed }).toEqual({
      perLayer: plain.dispatchesPerLayer,
      fixed: plain.dispatchesFixed,
    });
    expect(merged.submitsPerRollout).toBe(plain.submitsPerRollout);
    console.log('decode counts', JSON.stringify({ plain, lora, merged }));
    const want: Record<'plain' | 'lora', DecodeStepCounts> = {
      plain: EXPECTED_DECODE_PLAIN,
      lora: EXPECTED_DECODE_LORA,
    };
    expect({ plain, lora }).toEqual(want);
    // The step estimate counts the decode step's dispatches as the engine dispatches them.
    for (const [counted, estimated] of [
      [plain, decodeDispatches(null)],
      [lora, decodeDispatches(spec)],
    ] as const)
      expect({ perLayer: counted.dispatchesPerLayer, fixed: counted.dispatchesFixed }).toEqual(estimated);
  }, 600_000);

  it('a GRPO step with LoRA: dispatches and submits per phase, readbacks, pipelines compiled', async () => {
    // A fresh device, so the pipelines counted are every one the run compiles.
    const own = await acquireNodeDevice();
    try {
      const run = resolveConfig('grpo', {
        task: 'addition',
        difficulty: 1,
        train_batch_size: 2,
        num_generations: 2,
        steps: 2,
        eval_every: 0,
        seed: 3,
        max_completion_length: 4,
        beta: 0.04,
        lora_rank: 4,
        weight_stats_every: 0,
      });
      const trainer = await Trainer.create({
        config: run,
        init: { config, params },
        tokenizer,
        backend: { kind: 'webgpu', ctx: own },
      });
      const marks: CountsSnapshot[] = [own.counts.snapshot()];
      try {
        for await (const _ of trainer.run()) marks.push(own.counts.snapshot());
      } finally {
        trainer.destroy();
      }
      expect(marks.length).toBe(3);
      const first = countsSince(marks[0], marks[1]);
      const second = countsSince(marks[1], marks[2]);
      const summary = {
        pipelinesFirstStep: first.pipelines,
        pipelinesSecondStep: second.pipelines,
        secondStep: {
          dispatches: second.dispatches,
          submits: second.submits,
          readbacks: second.readbacks,
          phases: Object.fromEntries(
            Object.entries(second.phases).map(([k, v]) => [
              k,
              { dispatches: v.dispatches, submits: v.submits, steps: v.steps, bindGroups: v.bindGroups },
            ]),
          ),
          optimizerDispatches: Object.entries(second.kernels)
            .filter(([k]) => k.startsWith('optimizer.'))
            .reduce((s, [, v]) => s + v.dispatches, 0),
        },
      };
      console.log('GRPO step counts', JSON.stringify(summary));
      expect(summary).toEqual(EXPECTED_GRPO);
    } finally {
      own.destroy();
    }
  }, 600_000);

  it("a full fine-tune's optimizer step: a fixed number of dispatches over every parameter", async () => {
    // SmolLM2's embedding and two layers trained in full: 20 tensors, 35.6M f32 parameters, in one packed group
    // wherever a storage binding holds 142 MB (SwiftShader's 1 GiB, most GPUs'); two on a 128 MiB binding.
    const model = GpuModel.create(ctx, config, params, 2, 1);
    try {
      const shapes = paramShapes(config).map((p) => p.shape);
      const bytes = 4 * arenaSize(ctx, shapes);
      const oneGroup = bytes <= ctx.device.limits.maxStorageBufferBindingSize;
      const rec = ctx.recorder('rl.update');
      model.zeroGrads(rec);
      const fills = rec.dispatchCount;
      model.optimizerStep(rec, { lr: 1e-5, weightDecay: 0.01, maxGradNorm: 1 });
      const counted = { tensors: shapes.length, fills, optimizer: rec.dispatchCount - fills };
      rec.submit();
      await ctx.flush();
      console.log('full fine-tune optimizer counts', JSON.stringify({ ...counted, bytes, oneGroup }));
      // One fill zeroes every gradient; the norm's partial sums, its finalize, the clip factor and one AdamW (42 and
      // 20 fills before the parameters were packed: a partial-sum and an AdamW dispatch per tensor).
      if (oneGroup) expect(counted).toEqual({ tensors: 20, fills: 1, optimizer: 4 });
      else expect(counted).toEqual({ tensors: 20, fills: 2, optimizer: 6 });
    } finally {
      model.destroy();
    }
  }, 600_000);
});

// Today's counts (docs/benchmarks/counts.md has their history). SmolLM2's seven projections per layer, LoRA on all.
// A forward-only layer accumulates the residual stream in place (no copies); the last layer's output is copied
// into xOut once, which the fixed part counts. A decode layer: q/k/v as one product with the input norm folded in,
// RoPE and the two cache writes as one dispatch, attention, the o product, gate/up as one product with the
// post-attention norm folded in and SwiGLU in its epilogue, the down product: 6 (12 with the norms and products
// apart; the fused products sum in the trainer's matmul order: gpu-model.ts, projectionSumOrder).
const EXPECTED_DECODE_PLAIN: DecodeStepCounts = {
  dispatchesPerLayer: 6,
  dispatchesFixed: 7,
  // The prefill's submit and one for the 3 decode steps (up to 8 share a command buffer; 4 before they did).
  submitsPerRollout: 2,
  readbacksPerRollout: 1,
  tokenSteps: 4,
  bytesOverWeights: 1.008,
  // The decode cursor (src/kernels/decode.ts) keeps RoPE with the cache writes, attention, the sampler and
  // decode_finish the same dispatch every step: no bind group is made after a rollout's first decode step (2 per
  // layer and 2 outside them before the cursor; 1 outside them while decode_finish took its column as a parameter).
  bindGroupsPerDecodeStep: { perLayer: 0, fixed: 0 },
};
const EXPECTED_DECODE_LORA: DecodeStepCounts = {
  ...EXPECTED_DECODE_PLAIN,
  // Each adapted product adds its adapters' delta y += s xa B^T in its own epilogue, after its x A^T: q/k/v's three
  // x A^T as one product with the input norm folded in, then q/k/v with the deltas (projection_qkv_lora); gate/up's
  // two x A^T as one pair with the post-attention norm folded in, then gate/up with the deltas and SwiGLU; o's and
  // down's x A^T, then each product accumulating into the residual with its delta (projection_add_lora): 10 (21
  // with the deltas as products of their own, 26 with the fused products off, 29 before RoPE and the cache writes
  // were one).
  dispatchesPerLayer: 10,
  bytesOverWeights: 1.008,
};
const EXPECTED_GRPO = {
  // rope_decode_kv and projection_qkv compiled, decode_kv_write no longer; the LoRA epilogues' four entry points
  // (projection_qkv_lora, the pair, projection_gate_up_lora, projection_add_lora) compiled too (33 before them).
  pipelinesFirstStep: 37,
  pipelinesSecondStep: 0,
  secondStep: {
    dispatches: 376,
    // 6 before the decode steps shared a command buffer.
    submits: 4,
    readbacks: 3,
    // Bind groups made in the second step (the others were cached from the first): the rollout's and the update's
    // tensors are made afresh each step, so most of theirs are new; decode steps after a rollout's first make none.
    phases: {
      'rollout.prefill': { dispatches: 59, submits: 1, steps: 1, bindGroups: 58 },
      'rollout.decode': { dispatches: 81, submits: 1, steps: 3, bindGroups: 25 },
      'rl.score': { dispatches: 32, submits: 1, steps: 1, bindGroups: 1 },
      'rl.update': { dispatches: 204, submits: 1, steps: 1, bindGroups: 151 },
    },
    // The 28 adapter tensors (2 layers x 7 targets x A, B) packed in arenas: the norm's partial sums, its finalize,
    // the clip factor and one AdamW (and one fill zeroes every gradient).
    optimizerDispatches: 4,
  },
};
