// Stale rollouts on the GPU: the ring of weight snapshots of a GpuPolicy samples with the snapshot of its version,
// puts the live weights back exactly, and reads its snapshots back for a saved state from which a new ring (a
// resumed run's) samples with the same weights. The CPU ring and the trainer's exact resume: staleness.test.ts.

import { describe, expect, it } from 'vitest';
import { GpuPolicy } from '../../model/policy';
import { MODEL_PRESETS } from '../../schema/model-config';
import { useNodeDevice } from '../../testing/test-device';
import { createStaleSampler } from './staleness';
import { fixtureParams } from './trainer-state.fixture';

const gpu = useNodeDevice();

describe('stale rollouts: the ring of snapshots (GPU)', () => {
  it('samples with its version, restores the live weights, and a ring made from its saved snapshots samples alike', async () => {
    const config = MODEL_PRESETS.nano;
    const params = fixtureParams(config, 5);
    const policy = GpuPolicy.create(gpu.ctx, config, params, 1);
    const c = { max_staleness: 1, weight_sync_steps: 2 };
    const ring = createStaleSampler(policy, c)!;
    // "Optimizer steps": the live weights become version-stamped values; a sync every 2 steps.
    const stamped = (step: number) =>
      Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Float32Array.from(v, (_, i) => step + i * 1e-3)]));
    for (let step = 1; step <= 5; step++) {
      policy.model.uploadBase(stamped(step));
      ring.afterOptimizerStep(step);
    }
    // After step 5: model version 2 (synced at step 4), the sampler one version behind (synced at step 2).
    const name = Object.keys(params)[1];
    const seen = await ring.withSamplerWeights(5, async () => (await policy.model.downloadBase())[name]);
    expect(seen).toEqual(stamped(2)[name]);
    expect((await policy.model.downloadBase())[name]).toEqual(stamped(5)[name]);

    const saved = await ring.snapshots();
    expect(saved.map((s) => s.version)).toEqual([1, 2]);
    expect(saved[1].params[name]).toEqual(stamped(4)[name]);
    ring.destroy();

    // A resumed run: new live weights, a ring from the saved snapshots; it samples version 1 at step 5 as before.
    const again = createStaleSampler(policy, c, 5, saved)!;
    const seenAgain = await again.withSamplerWeights(5, async () => (await policy.model.downloadBase())[name]);
    expect(seenAgain).toEqual(stamped(2)[name]);
    expect(() => createStaleSampler(policy, c, 5, [{ version: 2, params: {} }])).toThrow(/saved snapshot has no/);
    again.destroy();
    policy.destroy();
  });
});
