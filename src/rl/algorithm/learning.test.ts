// Proof that RL learns, in CI: from the shipped copy warm start, GRPO and PPO (with its critic) each raise held-out
// greedy accuracy (100 held-out prompts, the same before and after) within a budget this CPU-only machine
// affords. Runs are deterministic on a given device, so the numbers in docs/training.md are what this test measures.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { resolveConfig, type PresetName, type RLConfig } from '../../schema/config';
import { Trainer } from './trainer';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);

beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

async function learn(
  preset: PresetName,
  over: Partial<RLConfig>,
): Promise<{ before: number; after: number; steps: number }> {
  const config = resolveConfig(preset, {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 8,
    num_generations: 8,
    temperature: 0.7,
    learning_rate: 1e-3,
    eval_every: 0,
    eval_items: 100,
    eval_num_generations: 4,
    seed: 0,
    ...over,
  });
  const t = await Trainer.create({
    config,
    init: { config: warm.ck.config, params: warm.ck.params },
    tokenizer: warm.tok,
    backend: { kind: 'webgpu', ctx },
  });
  try {
    const before = (await t.evaluate()).accuracy;
    for await (const r of t.run()) for (const v of Object.values(r.metrics)) expect(Number.isFinite(v)).toBe(true);
    const after = (await t.evaluate()).accuracy;
    console.log(
      `${preset}: held-out greedy accuracy ${(before * 100).toFixed(0)}% -> ${(after * 100).toFixed(0)}% in ${config.steps} steps`,
    );
    return { before, after, steps: t.step };
  } finally {
    t.destroy();
  }
}

describe('RL learns from the copy warm start (held-out greedy accuracy, n = 100)', () => {
  it('GRPO raises it by at least 10 points in 20 steps of 8 x 8 completions', { timeout: 300_000 }, async () => {
    const r = await learn('grpo', { steps: 20, reward_weights: { accuracy: 1 } });
    expect(r.after - r.before).toBeGreaterThanOrEqual(0.1);
  });

  it('PPO with its critic raises it by at least 10 points in 20 steps of 8 x 8 completions', {
    timeout: 300_000,
  }, async () => {
    const r = await learn('ppo', { steps: 20 });
    expect(r.after - r.before).toBeGreaterThanOrEqual(0.1);
  });
});
