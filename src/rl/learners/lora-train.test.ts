// GRPO with LoRA on the copy warm start, on the real GPU path (Dawn): a step trains the adapters only (the base
// weights stay bit-identical, the merged checkpoint moves) with a finite loss, a saved state (base, adapters, their
// AdamW moments) resumes exactly, and the CPU learner (the twins) agrees with the GPU learner under LoRA.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { loraShapes, LORA_TARGETS } from '../../core/lora-layout';
import { checkConfig, resolveConfig, type RLConfig } from '../../schema/config';
import { Trainer } from '../algorithm/trainer';
import { decodeTrainerState, encodeTrainerState, TrainerStateError } from '../algorithm/trainer-state';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
const init = { config: warm.ck.config, params: warm.ck.params };
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

function lora(over: Partial<RLConfig> = {}): RLConfig {
  return resolveConfig('grpo', {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 4,
    num_generations: 8,
    temperature: 1,
    steps: 3,
    eval_every: 0,
    seed: 7,
    learning_rate: 1e-2,
    lora_rank: 4,
    lora_alpha: 8,
    ...over,
  });
}

const timed = (k: string) => k === 'step_time' || k.startsWith('timing_s/') || k.startsWith('perf/');
const untimed = (m: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !timed(k)));

describe('GRPO with LoRA', () => {
  it('one step moves only the adapters, with a finite loss; the checkpoint holds the merged weights', async () => {
    const config = lora({ lora_targets: 'q_proj,v_proj,down_proj' });
    const t = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    const records = await t.runStep();
    expect(records.length).toBe(1);
    const loss = records[0].metrics.loss;
    expect(Number.isFinite(loss), `loss ${loss}`).toBe(true);
    // Mixed groups, so there is a gradient for the adapters to follow.
    expect(records[0].metrics.grad_norm).toBeGreaterThan(0);
    const state = await t.saveState();
    for (const [name, a] of Object.entries(warm.ck.params))
      expect(Array.from(state.learner.policy[name]), name).toEqual(Array.from(a));
    const shapes = loraShapes(warm.ck.config, t.lora!);
    expect(Object.keys(state.learner.lora!).sort()).toEqual(shapes.map((s) => s.name).sort());
    expect(Object.keys(state.learner.policyOptimizer.m).sort()).toEqual(shapes.map((s) => s.name).sort());
    // B starts at zero; after the step (Adam moves every entry with a gradient) the B matrices are nonzero.
    const movedB = shapes.filter(
      (s) => s.name.endsWith('lora_B.weight') && state.learner.lora![s.name].some((v) => v !== 0),
    );
    expect(movedB.length).toBeGreaterThan(0);
    const merged = (await t.exportCheckpoint()).params;
    expect(Array.from(merged['model.layers.0.self_attn.q_proj.weight'])).not.toEqual(
      Array.from(warm.ck.params['model.layers.0.self_attn.q_proj.weight']),
    );
    expect(Array.from(merged['model.layers.0.self_attn.k_proj.weight'])).toEqual(
      Array.from(warm.ck.params['model.layers.0.self_attn.k_proj.weight']),
    );
    expect((await t.exportLoraAdapters())?.spec).toEqual({
      rank: 4,
      alpha: 8,
      targets: ['q_proj', 'v_proj', 'down_proj'],
    });
    t.destroy();
  });

  it('a saved state (base, adapters, their moments, RNG) resumes exactly; a state without its adapters is refused', async () => {
    const config = lora({ steps: 2, beta: 0.05 });
    const straight = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    const all = [...(await straight.runStep()), ...(await straight.runStep())];
    const straightAdapters = (await straight.exportLoraAdapters())!.adapters;
    straight.destroy();

    const first = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    await first.runStep();
    const saved = await first.saveState();
    first.destroy();
    const bytes = encodeTrainerState(saved);
    const resumed = await Trainer.create({
      config,
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      resume: decodeTrainerState(bytes),
    });
    const second = await resumed.runStep();
    expect(second.map((r) => untimed(r.metrics))).toEqual(all.slice(1).map((r) => untimed(r.metrics)));
    const resumedAdapters = (await resumed.exportLoraAdapters())!.adapters;
    for (const name of Object.keys(straightAdapters))
      expect(Array.from(resumedAdapters[name]), name).toEqual(Array.from(straightAdapters[name]));
    resumed.destroy();

    const { lora: _dropped, ...withoutAdapters } = saved.learner;
    expect(() => decodeTrainerState(encodeTrainerState({ ...saved, learner: withoutAdapters }))).toThrow(
      TrainerStateError,
    );
    expect(() => decodeTrainerState(encodeTrainerState({ ...saved, learner: withoutAdapters }))).toThrow(
      /lora: missing/,
    );
  });

  it('the CPU learner agrees with the GPU learner under LoRA, with a reference model and the KL in the loss', async () => {
    const config = lora({ steps: 2, beta: 0.05, lora_targets: 'k_proj,o_proj,gate_proj' });
    const run = async (backend: { kind: 'cpu' } | { kind: 'webgpu'; ctx: GpuContext }) => {
      const t = await Trainer.create({ config, init, tokenizer: warm.tok, backend });
      const records = [...(await t.runStep()), ...(await t.runStep())];
      const adapters = (await t.exportLoraAdapters())!.adapters;
      t.destroy();
      return { records, adapters };
    };
    const gpu = await run({ kind: 'webgpu', ctx });
    const cpu = await run({ kind: 'cpu' });
    expect(cpu.records.length).toBe(gpu.records.length);
    cpu.records.forEach((r, i) => {
      for (const [k, v] of Object.entries(untimed(gpu.records[i].metrics))) {
        const w = r.metrics[k as keyof typeof r.metrics] as number;
        expect(Math.abs(w - v!), `${k}: cpu ${w} gpu ${v}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(v!)));
      }
    });
    for (const [name, g] of Object.entries(gpu.adapters)) {
      const worst = g.reduce((m, x, i) => Math.max(m, Math.abs(x - cpu.adapters[name][i])), 0);
      expect(worst, name).toBeLessThan(1e-4);
    }
  });

  it('validates the knobs, naming the field and the rule', async () => {
    expect(checkConfig({ ...lora(), lora_targets: 'q_proj,qkv' }).errors).toEqual([
      `lora_targets: "qkv" is not a projection; the projections are ${LORA_TARGETS.join(', ')}`,
    ]);
    expect(checkConfig({ ...lora(), lora_rank: -1 }).errors).toEqual(['lora_rank: must be in [0, 1024], got -1']);
    expect(checkConfig({ ...lora(), lora_alpha: 0 }).errors).toEqual(['lora_alpha: must be in (0, 100000], got 0']);
    expect(checkConfig({ ...lora({ lora_rank: 0, lora_alpha: 32 }) }).warnings).toContain(
      'lora_alpha: ignored while lora_rank is 0 (LoRA is off)',
    );
  });
});
