// GRPO with LoRA on a half-precision base (weight_dtype bf16 and f16, the reference model half too), on the real GPU
// path (Dawn): two steps with finite metrics that move the adapters, the base held as the rounded warm start, the
// CPU learner (the twins on the rounded weights) agreeing with the GPU learner; and weight_dtype auto keeps the toy
// run in f32 (its seeded outputs unchanged); rollout_dtype bf16 (the sampler on bf16 weights beside an f32 learner),
// where the GPU and the CPU twins sample the same tokens and report the same sampler gap; and rollout_merge_lora (the
// sampler on the adapters merged into a copy): with an f32 copy the run trains the same adapters as unmerged, the
// sampler off by float rounding only; with a bf16 copy the GPU and the CPU twins agree on the samples and the gap;
// and the reference under LoRA, which reads the policy's frozen base (no copy): the same run, metric for metric, as
// with a reference of its own.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { roundModelWeights } from '../../reference/half-weights';
import { resolveConfig, type RLConfig } from '../../schema/config';
import { Trainer } from '../algorithm/trainer';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
const init = { config: warm.ck.config, params: warm.ck.params };
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

function halfLora(over: Partial<RLConfig>): RLConfig {
  return resolveConfig('grpo', {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 2,
    num_generations: 8,
    temperature: 1,
    steps: 2,
    eval_every: 0,
    seed: 7,
    learning_rate: 1e-2,
    lora_rank: 4,
    lora_alpha: 8,
    beta: 0.05,
    ...over,
  });
}

const timed = (k: string) => k === 'step_time' || k.startsWith('timing_s/') || k.startsWith('perf/');

describe.each(['bf16', 'f16'] as const)('GRPO with LoRA on a %s base', (dtype) => {
  it('two steps: finite metrics, adapters move, the base is the rounded warm start (bf16: the CPU twin agrees)', async () => {
    const config = halfLora({ weight_dtype: dtype, lora_targets: 'q_proj,v_proj,down_proj' });
    const run = async (backend: { kind: 'cpu' } | { kind: 'webgpu'; ctx: GpuContext }) => {
      const t = await Trainer.create({ config, init, tokenizer: warm.tok, backend });
      const records = [...(await t.runStep()), ...(await t.runStep())];
      const state = await t.saveState();
      const adapters = (await t.exportLoraAdapters())!.adapters;
      t.destroy();
      return { records, state, adapters };
    };
    const gpu = await run({ kind: 'webgpu', ctx });
    expect(gpu.records.length).toBe(2);
    for (const r of gpu.records)
      for (const [k, v] of Object.entries(r.metrics))
        if (typeof v === 'number') expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
    expect(gpu.records[0].metrics.grad_norm).toBeGreaterThan(0);
    const rounded = roundModelWeights(init.config, init.params, dtype);
    for (const [name, a] of Object.entries(rounded))
      expect(Array.from(gpu.state.learner.policy[name]), name).toEqual(Array.from(a));
    expect(Object.values(gpu.adapters).some((a) => a.some((x) => x !== 0))).toBe(true);

    // The CPU twin (minutes of the suite's time on two cores) once: bf16; f16 is the same path with another rounding.
    if (dtype !== 'bf16') return;
    const cpu = await run({ kind: 'cpu' });
    gpu.records.forEach((r, i) => {
      for (const [k, v] of Object.entries(r.metrics)) {
        if (timed(k) || typeof v !== 'number') continue;
        const w = cpu.records[i].metrics[k as keyof typeof r.metrics] as number;
        expect(Math.abs(w - v), `${k}: cpu ${w} gpu ${v}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(v)));
      }
    });
    for (const [name, g] of Object.entries(gpu.adapters)) {
      const worst = g.reduce((m, x, i) => Math.max(m, Math.abs(x - cpu.adapters[name][i])), 0);
      expect(worst, name).toBeLessThan(1e-4);
    }
  });
});

describe('weight_dtype auto', () => {
  it('keeps a toy LoRA run in f32: the base is the warm start bit for bit', async () => {
    const t = await Trainer.create({
      config: halfLora({ steps: 1 }),
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
    });
    await t.runStep();
    const state = await t.saveState();
    for (const [name, a] of Object.entries(init.params))
      expect(Array.from(state.learner.policy[name]), name).toEqual(Array.from(a));
    t.destroy();
  });
});

describe('rollout_dtype bf16: the sampler reads bf16 weights, the learner trains f32', () => {
  it('one GRPO step on the GPU and on the CPU twins: the same samples, and the same non-zero sampler gap', async () => {
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      train_batch_size: 2,
      num_generations: 2,
      temperature: 1,
      steps: 1,
      eval_every: 0,
      seed: 3,
      rollout_dtype: 'bf16',
    });
    const step = async (backend: { kind: 'cpu' } | { kind: 'webgpu'; ctx: GpuContext }) => {
      const t = await Trainer.create({ config, init, tokenizer: warm.tok, backend });
      const [record] = await t.runStep();
      t.destroy();
      return record.metrics;
    };
    const gpu = await step({ kind: 'webgpu', ctx });
    const cpu = await step({ kind: 'cpu' });
    const gap = (m: typeof gpu) => m['sampling/sampling_logp_difference/mean'] ?? Number.NaN;
    expect(gap(gpu)).toBeGreaterThan(1e-4);
    expect(Math.abs(gap(cpu) - gap(gpu))).toBeLessThan(1e-2 * gap(gpu));
    expect(cpu.reward).toBe(gpu.reward);
    expect(cpu['completions/mean_length']).toBe(gpu['completions/mean_length']);
    // The ratio is still exactly 1 (one update per batch: pi_old is the learner's own forward), so nothing clips.
    expect(gpu['clip_ratio/region_mean']).toBe(0);
  });
});

describe('rollout_merge_lora: the sampler reads W + s B A from a copy', () => {
  const config = (over: Partial<RLConfig>) =>
    resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      train_batch_size: 2,
      num_generations: 4,
      temperature: 1,
      steps: 2,
      eval_every: 0,
      seed: 5,
      lora_rank: 4,
      weight_stats_every: 0,
      ...over,
    });
  const run = async (
    c: RLConfig,
    backend: { kind: 'cpu' } | { kind: 'webgpu'; ctx: GpuContext } = { kind: 'webgpu', ctx },
  ) => {
    const t = await Trainer.create({ config: c, init, tokenizer: warm.tok, backend });
    const metrics = [];
    for (let i = 0; i < c.steps; i++) metrics.push((await t.runStep())[0].metrics);
    const adapters = (await t.exportLoraAdapters())!.adapters;
    t.destroy();
    return { metrics, adapters };
  };

  it('f32 copy: the same samples and adapters as the unmerged run; the sampler gap is float rounding, not 0', async () => {
    const merged = await run(config({ rollout_merge_lora: true }));
    const unmerged = await run(config({}));
    const gap = (m: Record<string, number>) => m['sampling/sampling_logp_difference/max'] ?? Number.NaN;
    for (const [i, m] of merged.metrics.entries()) {
      expect(m.reward, `step ${i + 1}`).toBe(unmerged.metrics[i].reward);
      expect(m['completions/mean_length']).toBe(unmerged.metrics[i]['completions/mean_length']);
      expect(gap(unmerged.metrics[i])).toBe(0);
      expect(gap(m)).toBeLessThan(1e-4);
    }
    // After the first update the adapters are non-zero, so the merged sampler computes differently from the learner.
    expect(gap(merged.metrics[1])).toBeGreaterThan(0);
    expect(Object.values(merged.adapters).some((a) => a.some((x) => x !== 0))).toBe(true);
    for (const [name, a] of Object.entries(unmerged.adapters))
      expect(Array.from(merged.adapters[name]), name).toEqual(Array.from(a));
  });

  it('bf16 copy: the GPU and the CPU twins sample the same tokens and report the same non-zero gap', async () => {
    const c = config({ rollout_merge_lora: true, rollout_dtype: 'bf16', steps: 1 });
    const gpu = (await run(c)).metrics[0];
    const cpu = (await run(c, { kind: 'cpu' })).metrics[0];
    const gap = (m: typeof gpu) => m['sampling/sampling_logp_difference/mean'] ?? Number.NaN;
    expect(gap(gpu)).toBeGreaterThan(1e-4);
    expect(Math.abs(gap(cpu) - gap(gpu))).toBeLessThan(1e-2 * gap(gpu));
    expect(cpu.reward).toBe(gpu.reward);
    expect(cpu['completions/mean_length']).toBe(gpu['completions/mean_length']);
  });
});

describe("under LoRA the reference reads the policy's frozen base", () => {
  it.each(['f32', 'bf16'] as const)(
    '%s base: two steps equal, metric for metric, the run whose reference holds a copy (reference resets after the run)',
    async (dtype) => {
      const run = async (over: Partial<RLConfig>) => {
        const t = await Trainer.create({
          config: halfLora({ weight_dtype: dtype, ...over }),
          init,
          tokenizer: warm.tok,
          backend: { kind: 'webgpu', ctx },
        });
        const records = [...(await t.runStep()), ...(await t.runStep())];
        const adapters = (await t.exportLoraAdapters())!.adapters;
        t.destroy();
        return { metrics: records.map((r) => r.metrics), adapters };
      };
      // ref_model_sync_steps beyond the run: never reset, but a model of its own (derive().referenceIsBase false).
      const copy = await run({ ref_model_sync_steps: 1000 });
      const shared = await run({});
      for (const [i, m] of shared.metrics.entries()) {
        const want = copy.metrics[i] as Record<string, unknown>;
        for (const [k, v] of Object.entries(m)) if (!timed(k)) expect(v, `step ${i + 1} ${k}`).toEqual(want[k]);
      }
      expect(shared.metrics[1].kl).toBeGreaterThan(0);
      for (const [name, a] of Object.entries(copy.adapters))
        expect(Array.from(shared.adapters[name]), name).toEqual(Array.from(a));
    },
  );
});
