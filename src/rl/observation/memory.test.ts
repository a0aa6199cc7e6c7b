// The RL run's memory plan (memory.ts): the shapes it takes from the config's knobs, SmolLM2-135M's plan at the
// default batch (printed: docs/models.md quotes it), and the trainer refusing an over-large run before it allocates
// anything, with the knobs to change in the message. No GPU: the trainer is refused before it would touch one.

import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../gpu';
import { MODEL_PRESETS, parameterCount, type ModelConfig } from '../../schema/model-config';
import { MemoryPlanError, describePlan } from '../../model/memory-plan';
import { formatBytes } from '../../core/format';
import { paramShapes } from '../../core/model-shapes';
import { QWEN25_05B, SMOLLM2_135M } from '../../io/real-models.fixture';
import { buildCharTokenizerJson, loadCharTokenizer } from '../../io/tokenizer';
import { DEFAULT_CONFIG, derive, resolveConfig, type RLConfig } from '../../schema/config';
import { RL_MEMORY_KNOBS, rlMemoryPlan, rlMemoryShape, rlResolvedMemoryPlan } from './memory';
import { Trainer } from '../algorithm/trainer';

const GiB = 2 ** 30;
/** A large GPU's per-buffer limits. */
const BIG = { maxBufferSize: 64 * GiB, maxStorageBufferBindingSize: 64 * GiB };

/** A stand-in for a device that has only limits: the plan is checked before the trainer touches anything else. */
function deviceWithLimits(limits: { maxBufferSize: number; maxStorageBufferBindingSize: number }): GpuContext {
  return { device: { limits } } as unknown as GpuContext;
}

/** A tokenizer is needed to build a trainer; which one does not matter to the refusal. */
const TOKENIZER = loadCharTokenizer(buildCharTokenizerJson());

describe('memory plan of an RL run', () => {
  it('takes the rollout rows, lengths and minibatch from the config', () => {
    const c = resolveConfig('grpo', {
      train_batch_size: 4,
      num_generations: 8,
      num_minibatches: 2,
      eval_items: 10,
      eval_num_generations: 4,
    });
    const d = derive(c);
    expect(rlMemoryShape(c)).toEqual({
      rolloutRows: 40, // evaluation: 10 prompts x 4 samples, more than the 32 a step samples
      promptTokens: d.maxPromptTokens,
      completionTokens: d.maxCompletionLength,
      trainRows: 16,
      reference: c.beta > 0,
      critic: false,
      startWeights: true, // weight_stats_every 10 by default
      rank1Backup: c.rank1_eval && c.eval_every > 0,
    });
    expect(rlMemoryShape({ ...c, eval_items: 0 }).rolloutRows).toBe(32);
    // Gradient accumulation: a training forward holds a micro-batch, minibatch / gradient_accumulation_steps rows.
    expect(rlMemoryShape({ ...c, gradient_accumulation_steps: 4 }).trainRows).toBe(4);
    const untracked = rlMemoryShape({ ...c, weight_stats_every: 0, rank1_eval: false });
    expect([untracked.startWeights, untracked.rank1Backup]).toEqual([false, false]);
    expect(rlMemoryShape(resolveConfig('ppo', {})).critic).toBe(true);
    expect(rlMemoryShape({ ...c, gradient_checkpointing: true }).recompute).toBe(true);
    // Frozen weights stored half: the reference's weights take half the bytes.
    const f32 = rlMemoryPlan(c, SMOLLM2_135M, BIG);
    const half = rlMemoryPlan(c, SMOLLM2_135M, BIG, 2);
    const weights = (p: typeof f32) => p.parts.find((x) => x.part === 'weights')!.bytes;
    expect(weights(f32) - weights(half)).toBe(2 * parameterCount(SMOLLM2_135M));
    // A half sampler copy (rollout_dtype): 2 bytes for each value of the policy's matrices (the gains stay f32).
    const copy = rlMemoryPlan({ ...c, rollout_dtype: 'bf16' }, SMOLLM2_135M, BIG);
    const matrixValues = paramShapes(SMOLLM2_135M)
      .filter((p) => p.shape.length === 2)
      .reduce((n, p) => n + p.shape[0] * p.shape[1], 0);
    expect(weights(copy) - weights(f32)).toBe(2 * matrixValues);
    // A merged LoRA copy (rollout_merge_lora): each adapted matrix at rollout_dtype's width, and where that is half
    // an f32 scratch of each distinct adapted shape (SmolLM2-135M: q/o 576 x 576, k/v 192 x 576, gate/up 1536 x 576,
    // down 576 x 1536).
    const lora = { ...c, lora_rank: 8 };
    const unmerged = weights(rlMemoryPlan(lora, SMOLLM2_135M, BIG));
    const adaptedPerLayer = 2 * 576 * 576 + 2 * 192 * 576 + 3 * 1536 * 576;
    const L = SMOLLM2_135M.nLayers;
    expect(weights(rlMemoryPlan({ ...lora, rollout_merge_lora: true }, SMOLLM2_135M, BIG)) - unmerged).toBe(
      4 * L * adaptedPerLayer,
    );
    const scratch = 4 * (576 * 576 + 192 * 576 + 1536 * 576 + 576 * 1536);
    const halfMerged = rlMemoryPlan({ ...lora, rollout_merge_lora: true, rollout_dtype: 'bf16' }, SMOLLM2_135M, BIG);
    expect(weights(halfMerged) - unmerged).toBe(2 * L * adaptedPerLayer + scratch);
    expect(halfMerged.parts.find((x) => x.part === 'weights')!.detail).toMatch(/the sampler's merged LoRA copy/);
  });

  it("under LoRA the reference reads the policy's frozen base, unless reference resets make it a model of its own", () => {
    const c = resolveConfig('grpo', { beta: 0.04, lora_rank: 8, weight_stats_every: 0, rank1_eval: false });
    expect(derive(c).referenceIsBase).toBe(true);
    const weightsOf = (x: RLConfig) => rlMemoryPlan(x, SMOLLM2_135M, BIG).parts.find((p) => p.part === 'weights')!;
    const shared = weightsOf(c);
    expect(shared.detail).toMatch(/^policy: [\d.]+ MiB \(the reference reads the policy's frozen base\)/);
    const resets = { ...c, ref_model_sync_steps: 10 };
    expect(derive(resets).referenceIsBase).toBe(false);
    const copied = weightsOf(resets);
    expect(copied.detail).toMatch(/^policy \+ reference: /);
    expect(copied.bytes - shared.bytes).toBe(4 * parameterCount(SMOLLM2_135M));
    // A policy trained in full moves: its reference is always a copy.
    expect(derive({ ...c, lora_rank: 0 }).referenceIsBase).toBe(false);
  });

  describe("the issue's targets through the RL config: weight_dtype bf16 stores the frozen weights and the KV cache half", () => {
    // 8 prompts x 8 completions, a 64-token prompt (BOS + one 63-character prompt of the prompts task), 256 new
    // tokens, a reference (beta), gradient_checkpointing; the figures are memory-plan.test.ts's, except that under LoRA
    // the reference reads the policy's frozen base (derive().referenceIsBase) instead of holding a copy.
    const prompt = 'x'.repeat(63);
    const config = (extra: Partial<RLConfig>) =>
      resolveConfig('grpo', {
        task: 'prompts',
        prompts: [`{"prompt": "${prompt}", "answer": "1"}`, '{"prompt": "y", "answer": "2"}'].join('\n'),
        train_batch_size: 8,
        num_generations: 8,
        max_completion_length: 256,
        beta: 0.04,
        gradient_checkpointing: true,
        weight_stats_every: 0,
        rank1_eval: false,
        eval_items: 0,
        weight_dtype: 'bf16',
        ...extra,
      });
    const lora = { lora_rank: 16, lora_alpha: 32 };
    // Each as minibatches of its training rows (extra) and as one minibatch of micro-batches of those rows
    // (accumulated): the same plan, since a training forward holds one micro-batch either way.
    const cases: {
      name: string;
      model: ModelConfig;
      extra: Partial<RLConfig>;
      accumulated: Partial<RLConfig>;
      gib: number;
    }[] = [
      {
        name: 'SmolLM2-135M, LoRA r=16, minibatch 4',
        model: SMOLLM2_135M,
        extra: { ...lora, num_minibatches: 16 },
        accumulated: { ...lora, gradient_accumulation_steps: 16 },
        // memory-plan.test.ts's 1.43 less the reference's copy of the base: under LoRA it reads the policy's base.
        gib: 1.18,
      },
      {
        name: 'SmolLM2-135M, full fine-tuning, minibatch 1',
        model: SMOLLM2_135M,
        extra: { num_minibatches: 64 },
        accumulated: { gradient_accumulation_steps: 64 },
        gib: 2.96,
      },
      {
        name: 'Qwen2.5-0.5B, LoRA r=16, minibatch 2',
        model: QWEN25_05B,
        extra: { ...lora, num_minibatches: 32 },
        accumulated: { ...lora, gradient_accumulation_steps: 32 },
        // 2.82 with a copy of the base for the reference.
        gib: 1.9,
      },
    ];
    it.each(cases)('$name: $gib GiB, the KV cache at 2 bytes a value', ({ model, extra, accumulated, gib }) => {
      // A checkpoint's config is checked against its own context when loaded, not the presets' here.
      const c = config({ ...extra, checkpoint: 'models/real' });
      const shape = rlMemoryShape(c);
      expect([shape.rolloutRows, shape.promptTokens, shape.completionTokens]).toEqual([64, 64, 256]);
      const { weightDtype, plan } = rlResolvedMemoryPlan(c, model, BIG);
      expect(weightDtype).toBe('bf16');
      const kv = plan.parts.find((p) => p.part === 'kvCache')!;
      expect(kv.bytes).toBe(2 * 2 * model.nLayers * 64 * (64 + 256) * model.nKvHeads * (model.dModel / model.nHeads));
      expect(kv.detail).toMatch(/x 2 B$/);
      expect(Number((plan.peakBytes / GiB).toFixed(2))).toBe(gib);
      // f32 storage (weight_dtype f32): the frozen weights and the cache at 4 bytes.
      const f32 = rlResolvedMemoryPlan({ ...c, weight_dtype: 'f32' }, model, BIG).plan;
      expect(f32.parts.find((p) => p.part === 'kvCache')!.bytes).toBe(2 * kv.bytes);
      // 'auto' stores f32 where that fits the budget, else bf16 (and the plan it is checked against is bf16's).
      const budget = { ...BIG, budgetBytes: plan.peakBytes };
      expect(f32.peakBytes).toBeGreaterThan(budget.budgetBytes);
      const auto = rlResolvedMemoryPlan({ ...c, weight_dtype: 'auto' }, model, budget);
      expect([auto.weightDtype, auto.plan.peakBytes, auto.plan.problems]).toEqual(['bf16', plan.peakBytes, []]);
      // The same rows as micro-batches of one minibatch: the same plan, part by part.
      const acc = rlResolvedMemoryPlan(config({ ...accumulated, checkpoint: 'models/real' }), model, BIG).plan;
      expect(rlMemoryShape(config({ ...accumulated, checkpoint: 'models/real' })).trainRows).toBe(shape.trainRows);
      expect(acc.parts).toEqual(plan.parts);
      expect(acc.peakBytes).toBe(plan.peakBytes);
    });
  });

  it("prints SmolLM2-135M's plan at the default batch, which fits a 24 GiB budget", () => {
    const c = resolveConfig('grpo', {});
    const plan = rlMemoryPlan(c, SMOLLM2_135M, { ...BIG, budgetBytes: 24 * GiB });
    const s = rlMemoryShape(c);
    console.log(
      `SmolLM2-135M, default config (task ${c.task}, train_batch_size ${c.train_batch_size} x num_generations ${c.num_generations}, ` +
        `prompt ${s.promptTokens} + completion ${s.completionTokens} tokens, ${c.num_minibatches} minibatch, beta ${c.beta}):\n  ${describePlan(plan).join('\n  ')}`,
    );
    expect(plan.problems).toEqual([]);
    // No logits of the training batch: the LM head runs in row chunks, so the largest buffer is a weight.
    expect(plan.largest.name).toBe('model.embed_tokens.weight (and its gradient and moments)');
  });

  it("refuses Qwen2.5-0.5B's default run on WebGPU's default per-buffer limits for its embedding only, naming the knob", () => {
    const plan = rlMemoryPlan(resolveConfig('grpo', {}), QWEN25_05B, {
      maxBufferSize: 256 * 2 ** 20,
      maxStorageBufferBindingSize: 128 * 2 ** 20,
    });
    expect(plan.problems).toHaveLength(1);
    expect(plan.problems[0]).toMatch(/^model\.embed_tokens\.weight .* 519\.3 MiB in one buffer/);
    expect(plan.problems[0]).toContain(`lower ${RL_MEMORY_KNOBS.model}`);
  });

  it('refuses an over-large run in the trainer before allocating, with the knob to change', async () => {
    const config = { ...DEFAULT_CONFIG, train_batch_size: 64, num_generations: 16 };
    const model = { ...MODEL_PRESETS.nano, vocabSize: 151_936 };
    const small = deviceWithLimits({ maxBufferSize: 256 * 2 ** 20, maxStorageBufferBindingSize: 128 * 2 ** 20 });
    const create = () =>
      Trainer.create({
        config,
        init: { config: model, params: {} },
        tokenizer: TOKENIZER,
        backend: { kind: 'webgpu', ctx: small },
      });
    await expect(create()).rejects.toThrow(MemoryPlanError);
    await expect(create()).rejects.toThrow(
      /sampled logits: 1024 sequences x 151936 vocabulary .*lower train_batch_size x num_generations/,
    );
    // With the per-buffer limits met, a budget still refuses the peak.
    const big = deviceWithLimits(BIG);
    const budget = 1 * GiB;
    await expect(
      Trainer.create({
        config,
        init: { config: model, params: {} },
        tokenizer: TOKENIZER,
        backend: { kind: 'webgpu', ctx: big },
        memoryBudgetBytes: budget,
      }),
    ).rejects.toThrow(new RegExp(`more than the budget of ${formatBytes(budget)}`));
  });
});
