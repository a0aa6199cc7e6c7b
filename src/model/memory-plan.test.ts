// The memory plan (memory-plan.ts): its parts for SmolLM2-135M's and Qwen2.5-0.5B's real configs, how each part
// scales with the shape it depends on, the largest buffer, the refusals (per-buffer limit, budget) naming the
// knobs to change, and the issue's targets for real models with half-precision frozen weights and per-layer
// recomputation (printed beside their f32 figures). Pure arithmetic: no device.

import { describe, expect, it } from 'vitest';
import { parameterCount } from '../schema/model-config';
import { HEAD_SCRATCH_BYTES } from '../kernels/head-chunked';
import { QWEN25_05B, SMOLLM2_135M } from '../io/real-models.fixture';
import {
  MemoryPlanError,
  assertPlanFits,
  checkModelFitsDevice,
  describePlan,
  planMemory,
  weightBytes,
  type MemoryShape,
} from './memory-plan';

const KNOBS = {
  rolloutRows: 'ROLLOUT',
  trainRows: 'MINIBATCH',
  completionTokens: 'COMPLETION',
  model: 'MODEL',
  weightTracking: 'TRACKING',
};
const GiB = 2 ** 30;
/** A large GPU's limits (no budget). */
const BIG = { maxBufferSize: 64 * GiB, maxStorageBufferBindingSize: 64 * GiB };
/** WebGPU's default limits. */
const DEFAULT_LIMITS = { maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 };

const SHAPE: MemoryShape = {
  rolloutRows: 16,
  promptTokens: 32,
  completionTokens: 96,
  trainRows: 16,
  reference: false,
  critic: false,
};

const part = (plan: ReturnType<typeof planMemory>, name: string) => plan.parts.find((p) => p.part === name)!.bytes;

describe('memory plan', () => {
  it("counts the real models' weights: SmolLM2-135M 134,515,008 parameters, Qwen2.5-0.5B 494,005,120 without biases", () => {
    expect(parameterCount(SMOLLM2_135M)).toBe(134_515_008);
    expect(weightBytes(SMOLLM2_135M).total).toBe(4 * 134_515_008);
    expect(weightBytes(SMOLLM2_135M).largest).toEqual({ name: 'model.embed_tokens.weight', bytes: 4 * 49_152 * 576 });
    expect(weightBytes(QWEN25_05B).total).toBe(4 * parameterCount(QWEN25_05B));
    expect(weightBytes(QWEN25_05B).largest.bytes).toBe(4 * 151_936 * 896);
  });

  it('has gradients equal to the weights and AdamW state twice them, for the policy alone', () => {
    const plan = planMemory(SMOLLM2_135M, SHAPE, KNOBS, BIG);
    const w = weightBytes(SMOLLM2_135M).total;
    expect(part(plan, 'weights')).toBe(w);
    expect(part(plan, 'gradients')).toBe(w);
    expect(part(plan, 'adamw')).toBe(2 * w);
    expect(plan.peakBytes).toBe(plan.parts.reduce((a, p) => a + p.bytes, 0));
    expect(plan.problems).toEqual([]);
  });

  it('adds a reference (weights only: frozen, no gradients, no AdamW) and a critic (an untied head, with AdamW)', () => {
    const w = weightBytes(SMOLLM2_135M).total;
    const head = 4 * 49_152 * 576;
    const ref = planMemory(SMOLLM2_135M, { ...SHAPE, reference: true }, KNOBS, BIG);
    expect(part(ref, 'weights')).toBe(2 * w);
    expect(part(ref, 'gradients')).toBe(w);
    expect(part(ref, 'adamw')).toBe(2 * w);
    // Stored half: the reference's weights (the policy's are trained, f32), and apart from them the KV cache.
    const half = planMemory(SMOLLM2_135M, { ...SHAPE, reference: true, storageBytes: 2 }, KNOBS, BIG);
    expect(part(half, 'weights')).toBe(w + w / 2);
    expect(part(half, 'kvCache')).toBe(part(ref, 'kvCache'));
    const kv = planMemory(SMOLLM2_135M, { ...SHAPE, reference: true, kvCacheBytes: 2 }, KNOBS, BIG);
    expect(part(kv, 'kvCache')).toBe(part(ref, 'kvCache') / 2);
    const critic = planMemory(SMOLLM2_135M, { ...SHAPE, critic: true }, KNOBS, BIG);
    expect(part(critic, 'weights')).toBe(2 * w + head);
    expect(part(critic, 'adamw')).toBe(2 * (2 * w + head));
  });

  it('sizes the KV cache as 2 x layers x rows x (prompt + completion) x kv width, and it scales with the rows', () => {
    const plan = planMemory(SMOLLM2_135M, SHAPE, KNOBS, BIG);
    expect(part(plan, 'kvCache')).toBe(4 * 2 * 30 * 16 * 128 * 192);
    const twice = planMemory(SMOLLM2_135M, { ...SHAPE, rolloutRows: 32 }, KNOBS, BIG);
    expect(part(twice, 'kvCache')).toBe(2 * part(plan, 'kvCache'));
  });

  it("holds no (rows, T, V) logits: the LM head's scratch stays within its budget whatever the minibatch", () => {
    const plan = planMemory(QWEN25_05B, SHAPE, KNOBS, BIG);
    const chunk = plan.buffers.find((b) => b.name === 'LM head chunk')!;
    expect(chunk.bytes).toBeLessThanOrEqual(HEAD_SCRATCH_BYTES);
    const more = planMemory(QWEN25_05B, { ...SHAPE, trainRows: 256 }, KNOBS, BIG);
    expect(part(more, 'head')).toBe(part(plan, 'head'));
    expect(more.buffers.find((b) => b.name === 'LM head chunk')!.bytes).toBe(chunk.bytes);
    expect(plan.largest.name).toBe('model.embed_tokens.weight (and its gradient and moments)');
    // Only a decode step's logits, (rows, V), grow with the vocabulary and the rows sampled at once.
    const rows = planMemory(QWEN25_05B, { ...SHAPE, rolloutRows: 32 }, KNOBS, BIG);
    expect(part(rows, 'head') - part(plan, 'head')).toBe(4 * 16 * (151_936 + 3 * 896 + 1));
  });

  it('keeps one layer of activations in a forward-only or recomputing workspace', () => {
    const plan = planMemory(SMOLLM2_135M, SHAPE, KNOBS, BIG);
    const again = planMemory(SMOLLM2_135M, { ...SHAPE, recompute: true }, KNOBS, BIG);
    expect(part(again, 'activations')).toBeLessThan(part(plan, 'activations') / 4);
    expect(part(again, 'weights')).toBe(part(plan, 'weights'));
  });

  it('refuses a buffer over the per-buffer limit, naming the limit and the knobs that shrink it', () => {
    const plan = planMemory(QWEN25_05B, { ...SHAPE, rolloutRows: 256 }, KNOBS, DEFAULT_LIMITS);
    expect(plan.problems.some((p) => p.startsWith('LM head'))).toBe(false);
    const sampled = plan.problems.find((p) => p.startsWith('sampled logits'))!;
    expect(sampled).toMatch(
      /256 sequences x 151936 vocabulary x 4 B = 148\.4 MiB in one buffer, more than this device's 128 MiB \(maxStorageBufferBindingSize\); lower ROLLOUT/,
    );
    expect(plan.problems.some((p) => p.startsWith('model.embed_tokens.weight') && p.includes('lower MODEL'))).toBe(
      true,
    );
    expect(() => assertPlanFits(plan)).toThrow(MemoryPlanError);
    expect(() => assertPlanFits(plan)).toThrow(/the run does not fit this device's memory:\n {2}model\.embed_tokens/);
  });

  it('refuses a peak over the budget, naming the two largest parts and their knobs', () => {
    const fits = planMemory(SMOLLM2_135M, SHAPE, KNOBS, { ...BIG, budgetBytes: 64 * GiB });
    expect(fits.problems).toEqual([]);
    const tight = planMemory(SMOLLM2_135M, SHAPE, KNOBS, { ...BIG, budgetBytes: 2 * GiB });
    expect(tight.peakBytes).toBeGreaterThan(2 * GiB);
    expect(tight.problems).toHaveLength(1);
    expect(tight.problems[0]).toMatch(
      /^the run needs [\d.]+ GiB at its peak, more than the budget of 2 GiB; the largest parts are /,
    );
    expect(tight.problems[0]).toMatch(/lower .*(MINIBATCH|MODEL)/);
  });

  it('checks a model before upload: its largest tensor and one position of logits per sequence', () => {
    expect(() => checkModelFitsDevice(SMOLLM2_135M, 64, DEFAULT_LIMITS)).not.toThrow();
    expect(() => checkModelFitsDevice(QWEN25_05B, 64, DEFAULT_LIMITS)).toThrow(
      /model\.embed_tokens\.weight needs 519\.3 MiB in one buffer, more than this device's per-buffer limit of 128 MiB/,
    );
    expect(() => checkModelFitsDevice(SMOLLM2_135M, 1024, DEFAULT_LIMITS)).toThrow(
      /the logits of 1024 sequences x 49152 vocabulary need 192 MiB/,
    );
  });

  it('describes itself in lines: one per part, the peak, the largest buffer, the verdict', () => {
    const lines = describePlan(planMemory(SMOLLM2_135M, SHAPE, KNOBS, { ...BIG, budgetBytes: 64 * GiB }));
    expect(lines).toHaveLength(9);
    expect(lines[0]).toMatch(/^weights +513\.1 MiB {2}policy: 513\.1 MiB$/);
    expect(lines[6]).toMatch(/^peak +[\d.]+ GiB of a 64 GiB budget$/);
    expect(lines[8]).toBe('fits');
  });

  it('says "fits" only against a budget: without one, that the peak was not checked', () => {
    const lines = describePlan(planMemory(SMOLLM2_135M, SHAPE, KNOBS, BIG));
    expect(lines[6]).toMatch(/^peak +[\d.]+ GiB$/);
    expect(lines[8]).toMatch(
      /^every buffer is within the per-buffer limit; the peak of [\d.]+ GiB was not checked against the device's memory \(no budget was set/,
    );
  });

  describe("the issue's targets: 8 prompts x 8 completions, a 64-token prompt, 256 new tokens, a reference (GRPO's beta), per-layer recomputation", () => {
    const lora = {
      rank: 16,
      alpha: 32,
      targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const,
    };
    const target = (name: string, model: typeof SMOLLM2_135M, trainRows: number, withLora: boolean, GiBs: number) =>
      it(`${name}: at most ${GiBs} GiB with bf16 frozen weights and a bf16 KV cache`, () => {
        const shape: MemoryShape = {
          rolloutRows: 64,
          promptTokens: 64,
          completionTokens: 256,
          trainRows,
          reference: true,
          critic: false,
          lora: withLora ? { ...lora, targets: [...lora.targets] } : null,
          recompute: true,
        };
        const bf16 = planMemory(model, { ...shape, storageBytes: 2, kvCacheBytes: 2 }, KNOBS, BIG);
        const f32 = planMemory(model, shape, KNOBS, BIG);
        const kvF32 = planMemory(model, { ...shape, storageBytes: 2 }, KNOBS, BIG);
        const kept = planMemory(model, { ...shape, storageBytes: 2, kvCacheBytes: 2, recompute: false }, KNOBS, BIG);
        const gib = (b: number) => `${(b / GiB).toFixed(2)} GiB`;
        console.log(
          `${name}, minibatch ${trainRows}: bf16 ${gib(bf16.peakBytes)}, f32 ${gib(f32.peakBytes)}, bf16 weights with an f32 KV cache ${gib(kvF32.peakBytes)}, bf16 without recomputation ${gib(kept.peakBytes)}\n  ${describePlan(bf16).join('\n  ')}`,
        );
        expect(bf16.peakBytes).toBeLessThanOrEqual(GiBs * GiB);
        expect(f32.peakBytes).toBeGreaterThan(bf16.peakBytes);
      });
    target('SmolLM2-135M GRPO with LoRA r=16 (every projection)', SMOLLM2_135M, 4, true, 1.5);
    target('SmolLM2-135M GRPO, full fine-tuning', SMOLLM2_135M, 1, false, 3);
    target('Qwen2.5-0.5B GRPO with LoRA r=16 (every projection)', QWEN25_05B, 2, true, 3);
  });
});
