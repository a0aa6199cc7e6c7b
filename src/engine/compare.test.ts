// The LabEngine's objective A/B with the real trainer on the CPU backend (the objective's CPU twin) and the shipped
// copy warm start: refused before a step and while the run trains, answered between steps with both sides over the
// whole batch, training refused while a comparison runs, and the run trains on afterwards.
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import { LabEngine } from './lab-engine';
import { PUBLIC_ASSETS } from './node-assets';
import { MemoryRunStore } from './run-store';

const config = (preset: 'grpo' | 'dr_grpo') =>
  resolveConfig(preset, {
    task: 'copy',
    difficulty: 3,
    checkpoint: 'copy',
    train_batch_size: 2,
    num_generations: 4,
    steps: 3,
    eval_every: 0,
    num_iterations: 2,
    temperature: 1,
  });

describe('LabEngine.compareObjectives (CPU backend, real trainer)', () => {
  it('compares between steps only, and the run trains on', async () => {
    const engine = new LabEngine({
      store: new MemoryRunStore(),
      assets: PUBLIC_ASSETS,
      gpu: async () => {
        throw new Error('no GPU in this test');
      },
      emit: () => undefined,
    });
    await expect(engine.compareObjectives(config('dr_grpo'), 'latest')).rejects.toThrow(/no run is loaded/);
    const h = await engine.create({ config: config('grpo'), preset: 'grpo', backend: 'cpu' });
    await expect(engine.compareObjectives(config('dr_grpo'), 'latest')).rejects.toThrow(/no step has run yet/);

    engine.stepOnce();
    await expect(engine.compareObjectives(config('dr_grpo'), 'latest')).rejects.toThrow(
      /the run is training: pause it/,
    );
    await engine.idle();

    const asked = engine.compareObjectives(config('dr_grpo'), 'latest');
    expect(() => engine.stepOnce()).toThrow(/an objective comparison is running/);
    const { runId, comparison } = await asked;
    expect(runId).toBe(h.id);
    expect(comparison.step).toBe(1);
    expect(comparison.rows.length).toBe(8);
    expect(comparison.a.config.loss_agg_mode).toBe('seq-mean-token-mean');
    expect(comparison.b.config.loss_agg_mode).toBe('seq-mean-token-sum-norm');
    expect(comparison.a.dLogp.length).toBe(8 * comparison.S);

    engine.stepOnce();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 2 });
  });
});
