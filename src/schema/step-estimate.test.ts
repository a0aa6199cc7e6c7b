// The step estimate's counts against hand counts on a model small enough to count by hand (C = 4, F = 6, V = 10, one
// layer, 2 query heads and 1 key/value head of dim 2), and its seconds as the roofline sums them. No timing.

import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS, parameterCount, type ModelConfig } from './model-config';
import { resolveConfig } from './config';
import {
  assumedThroughput,
  attentionMacsPerToken,
  causalAttentionMacs,
  estimateStepSeconds,
  layerMatmulMacsPerToken,
  GPU_CALIBRATION,
  loraMacsPerToken,
  stepWork,
  type StepPhase,
} from './step-estimate';

const TINY: ModelConfig = {
  vocabSize: 10,
  contextLength: 64,
  nLayers: 1,
  nHeads: 2,
  nKvHeads: 1,
  dModel: 4,
  dFF: 6,
  ropeTheta: 10_000,
  normEps: 1e-5,
  tiedEmbeddings: true,
};

/** 1 prompt x 2 completions of 3 tokens after 2 prompt tokens: N = 2, P = 2, S = 3, T = 5. */
const config = (o: Record<string, unknown> = {}) =>
  resolveConfig(null, {
    task: 'copy',
    train_batch_size: 1,
    num_generations: 2,
    max_completion_length: 3,
    beta: 0,
    ...o,
  });
const flops = (o: Record<string, unknown> = {}) => {
  const w = stepWork(config(o), TINY, { promptTokens: 2 });
  return Object.fromEntries(w.phases.map((p) => [p.phase, p.flops])) as Record<StepPhase, number>;
};

describe('step work', () => {
  it('counts a layer, attention and the parameters by hand', () => {
    // q 4x4, k 2x4, v 2x4, o 4x4, gate 6x4, up 6x4, down 4x6: 16 + 8 + 8 + 16 + 24 + 24 + 24.
    expect(layerMatmulMacsPerToken(TINY)).toBe(120);
    // q.k and p.v over 3 keys for 2 heads of dim 2: 2 x 4 x 3.
    expect(attentionMacsPerToken(TINY, 3)).toBe(24);
    // 1 + 2 + 3 + 4 + 5 = 15 keys over the causal row of 5.
    expect(causalAttentionMacs(TINY, 5)).toBe(2 * 4 * 15);
    // rank 2 on q_proj (4 in, 4 out) and down_proj (6 in, 4 out): 2 x 8 + 2 x 10.
    expect(loraMacsPerToken(TINY, 2, ['q_proj', 'down_proj'])).toBe(36);
    // Embedding 40, the layer's two norms 8 and projections 120, the final norm 4 (tied head).
    expect(parameterCount(TINY)).toBe(172);
  });

  it('counts rollouts: a prefill with the head on its last position, then S - 1 decode steps', () => {
    // Prefill: 2 rows x (2 tokens x 120 + causal(2) = 2x4x3 + head 40) x 2 = 4 x 304 = 1216.
    // Decode over 3 keys: 4 x (120 + 24 + 40) = 736; over 4 keys: 4 x (120 + 32 + 40) = 768.
    expect(flops().gen).toBe(1216 + 736 + 768);
  });

  it('counts the update: forward, twice its products backward, the head on completion tokens', () => {
    // Layers forward: 4 x (5 x 120 + causal(5) 120) = 2880; head forward 2 x 2 x 3 x 40 = 480.
    // Backward: data 2400 + weights 2400 + attention 2 x 2 x 2 x 120 = 960; head data + weights 960.
    const f = flops();
    expect(f.update_actor).toBe(2880 + 480 + 2400 + 2400 + 960 + 960);
    // One update per batch: its own forward is pi_old, nothing is scored.
    expect(f.old_log_prob).toBe(0);
    // AdamW: 12 operations per parameter.
    expect(f.optimizer).toBe(12 * 172);
  });

  it('scores with the reference under a KL, and the old policy too when the ratio is not 1', () => {
    // One forward over every row: 4 x (600 + 120 + 3 x 40) = 3360.
    expect(flops({ beta: 0.04 }).old_log_prob).toBe(3360);
    const two = flops({ beta: 0.04, num_iterations: 2 });
    expect(two.old_log_prob).toBe(2 * 3360);
    expect(two.update_actor).toBe(2 * flops().update_actor);
    expect(two.optimizer).toBe(2 * 12 * 172);
  });

  it('gradient accumulation: the same products in a forward per micro-batch, one AdamW step a minibatch', () => {
    const whole = stepWork(config({ beta: 0.04 }), TINY, { promptTokens: 2 });
    const micro = stepWork(config({ beta: 0.04, gradient_accumulation_steps: 2 }), TINY, { promptTokens: 2 });
    const by = (w: typeof whole) => Object.fromEntries(w.phases.map((p) => [p.phase, p]));
    const [a, b] = [by(whole), by(micro)];
    for (const phase of ['old_log_prob', 'update_actor', 'optimizer']) expect(b[phase].flops).toBe(a[phase].flops);
    expect(b.update_actor.submits).toBe(2 * a.update_actor.submits);
    expect(b.old_log_prob.submits).toBe(2 * a.old_log_prob.submits);
    expect(b.optimizer.dispatches).toBe(a.optimizer.dispatches);
    expect(b.update_actor.detail).toMatch(/1 minibatch\(es\) of 2 micro-batches/);
  });

  it('under LoRA trains only the adapters and adds their products', () => {
    // rank 1 on q_proj: 8 multiply-adds a token, 8 trained values.
    const f = flops({ lora_rank: 1, lora_targets: 'q_proj' });
    // Forward 4 x (5 x 128 + 120) = 3040, head 480; backward: base data 2400, adapters 2 x 2 x 2 x 5 x 8 = 320,
    // attention 960; head data only 480.
    expect(f.update_actor).toBe(3040 + 480 + 2400 + 320 + 960 + 480);
    expect(f.optimizer).toBe(12 * 8);
    // Gradient checkpointing recomputes the layers' forward once more, but for the down product (4 x 6 multiply-adds
    // a token, 2 x 2 x 5 x 24 = 480), whose output the backward does not read.
    expect(flops({ lora_rank: 1, lora_targets: 'q_proj', gradient_checkpointing: true }).update_actor).toBe(
      3040 + 480 + 2400 + 320 + 960 + 480 + 3040 - 480,
    );
    // With down adapted (rank 1: 6 + 4 multiply-adds a token), its B product (4) is skipped too, its x A^T is not.
    const down = { lora_rank: 1, lora_targets: 'down_proj' };
    expect(flops({ ...down, gradient_checkpointing: true }).update_actor - flops(down).update_actor).toBe(
      2 * 2 * (5 * (120 + 10) + 120) - 2 * 2 * 5 * (24 + 4),
    );
  });

  it('a merged LoRA rollout: the sampler runs no adapter product, the merge once per rollout, the update unchanged', () => {
    const phase = (o: Record<string, unknown>) =>
      Object.fromEntries(
        stepWork(config(o), TINY, { promptTokens: 2 }).phases.map((p) => [p.phase, p]),
      ) as unknown as Record<StepPhase, { flops: number; bytes: number; dispatches: number }>;
    const lora = { lora_rank: 1, lora_targets: 'q_proj' };
    const unmerged = phase(lora);
    const merged = phase({ ...lora, rollout_merge_lora: true });
    const full = phase({});
    // q_proj is (4, 4): the merge is 2 x rank x 16 flops, and 2 dispatches (copy, product) with an f32 copy.
    expect(merged.gen.flops).toBe(full.gen.flops + 2 * 16);
    expect(merged.gen.dispatches).toBe(full.gen.dispatches + 2);
    expect(unmerged.gen.dispatches).toBeGreaterThan(merged.gen.dispatches);
    expect(merged.update_actor).toEqual(unmerged.update_actor);
    // A half copy: rounded from an f32 scratch, one dispatch more, and read at 2 bytes a value.
    const half = phase({ ...lora, rollout_merge_lora: true, rollout_dtype: 'bf16' });
    expect(half.gen.dispatches).toBe(merged.gen.dispatches + 1);
    expect(half.gen.bytes).toBeLessThan(merged.gen.bytes + 16 * 2 * 4);
  });

  it('turns work into seconds as the longer of arithmetic and traffic, plus launches', () => {
    const work = stepWork(config(), TINY, { promptTokens: 2 });
    const t = { flopsPerSecond: 1e3, bytesPerSecond: 1e12, submitSeconds: 0, dispatchSeconds: 0, source: 'test' };
    const e = estimateStepSeconds(work, t);
    expect(e.seconds).toBeCloseTo(work.flops / 1e3, 9);
    expect(e.phases.every((p) => p.bound === 'compute' || p.seconds === 0)).toBe(true);
    const slowMemory = estimateStepSeconds(work, { ...t, flopsPerSecond: 1e15, bytesPerSecond: 1 });
    expect(slowMemory.seconds).toBeCloseTo(work.bytes, 6);
    const launches = estimateStepSeconds(work, { ...t, flopsPerSecond: 1e15, submitSeconds: 1 });
    const submits = work.phases.reduce((s, p) => s + p.submits, 0);
    // The rollout's command buffers: the prefill's, and one for its 2 decode steps (each its own before 2026-12-07).
    expect(work.phases[0].submits).toBe(2);
    expect(work.phases[0].unbatchedSubmits).toBe(3);
    expect(launches.seconds).toBeCloseTo(submits + work.flops / 1e15, 6);
  });
});

describe("a GPU's default figures", () => {
  it("reproduce the H100's GRPO steps of BENCHMARKS.md (8 x 8 copy completions) within 1.25x, as fitted", () => {
    // step_time in seconds, from docs/benchmarks/nvidia.md's H100 sections ("GRPO step of the RL trainer").
    const H100 = { nano: [48, 0.2334], micro: [48, 0.2672], small: [64, 0.4252], base: [64, 0.8105] } as const;
    for (const [preset, [tokens, seconds]] of Object.entries(H100)) {
      const config = resolveConfig('grpo', {
        model: preset,
        task: 'copy',
        train_batch_size: 8,
        num_generations: 8,
        max_completion_length: tokens,
        eval_every: 0,
      });
      const model = MODEL_PRESETS[preset as keyof typeof H100];
      // Measured when each decode step was its own submit: the estimate of that engine is what was fitted.
      const asMeasured = stepWork(config, model, { decodeStepsPerSubmit: 1 });
      const ratio = estimateStepSeconds(asMeasured, assumedThroughput(false)).seconds / seconds;
      expect(ratio, preset).toBeGreaterThan(0.8);
      expect(ratio, preset).toBeLessThan(1.25);
      // Today's engine shares a command buffer among 8 decode steps: the estimate counts fewer submits, and its
      // range reaches up to the unbatched estimate, since no GPU has measured the gain yet.
      const today = estimateStepSeconds(stepWork(config, model), assumedThroughput(false));
      expect(today.seconds, preset).toBeLessThan(ratio * seconds);
      expect(today.range[1], preset).toBeCloseTo(ratio * seconds * GPU_CALIBRATION.spread[1], 9);
      expect(today.range[0], preset).toBeCloseTo(today.seconds * GPU_CALIBRATION.spread[0], 9);
    }
  });
});
