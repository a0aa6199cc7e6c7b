// Stale rollouts on the CPU twins: the version arithmetic (TRL's model versions, one per weight sync), the ring of
// snapshots (the sampler reads exactly the snapshot of its version and the live weights come back bit for bit), and
// the trainer under max_staleness: deterministic under a seed, every batch as stale as the knobs allow, the mismatch
// diagnostics measured, the first batch (sampled at W_0 either way) equal to an on-policy run's, and a saved state
// that resumes exactly (it keeps the snapshots).

import { describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import { CpuPolicy } from '../../model/policy';
import { resolveConfig, type RLConfig } from '../../schema/config';
import { runToEnd } from '../../testing/run-to-end';
import { createStaleSampler, modelVersion, samplerVersion, snapshotSlots } from './staleness';
import { MODEL_PRESETS } from '../../schema/model-config';
import { fixtureParams } from './trainer-state.fixture';
import { metricSpec } from '../../schema/metrics';

describe('stale rollouts: versions', () => {
  it('counts a version per weight sync and samples max_staleness versions behind', () => {
    const c = { max_staleness: 2, weight_sync_steps: 3 };
    expect([0, 2, 3, 5, 6, 9, 17].map((t) => modelVersion(t, c))).toEqual([0, 0, 1, 1, 2, 3, 5]);
    expect(samplerVersion(0, c)).toEqual({ version: 0, stepsBehind: 0, versionsBehind: 0 });
    expect(samplerVersion(7, c)).toEqual({ version: 0, stepsBehind: 7, versionsBehind: 2 });
    expect(samplerVersion(9, c)).toEqual({ version: 1, stepsBehind: 6, versionsBehind: 2 });
    expect(samplerVersion(11, c)).toEqual({ version: 1, stepsBehind: 8, versionsBehind: 2 });
    // On-policy: no snapshots; weight_sync_steps alone keeps the last synced version.
    expect(snapshotSlots({ max_staleness: 0, weight_sync_steps: 1 })).toBe(0);
    expect(snapshotSlots({ max_staleness: 0, weight_sync_steps: 4 })).toBe(1);
    expect(samplerVersion(5, { max_staleness: 0, weight_sync_steps: 4 })).toEqual({
      version: 1,
      stepsBehind: 1,
      versionsBehind: 0,
    });
    expect(snapshotSlots(c)).toBe(3);
  });
});

describe('stale rollouts: the ring of snapshots (CPU)', () => {
  it('samples with the snapshot of its version and puts the live weights back exactly', async () => {
    const config = MODEL_PRESETS.nano;
    const policy = new CpuPolicy(config, fixtureParams(config, 3));
    const c = { max_staleness: 2, weight_sync_steps: 1 };
    const ring = createStaleSampler(policy, c)!;
    const name = Object.keys(policy.params)[0];
    const w = policy.params[name].data;
    const at = (step: number) => Float32Array.from(w, (_, i) => step * 1000 + i);
    const copies: Float32Array[] = [Float32Array.from(w)];
    for (let step = 1; step <= 5; step++) {
      w.set(at(step)); // an "optimizer step"
      copies.push(Float32Array.from(w));
      ring.afterOptimizerStep(step);
      const seen = await ring.withSamplerWeights(step, async () => Float32Array.from(w));
      expect(seen).toEqual(copies[Math.max(0, step - 2)]);
      expect(w).toEqual(copies[step]);
    }
    // Restored even when the sampling throws.
    await expect(
      ring.withSamplerWeights(5, async () => {
        throw new Error('sampling failed');
      }),
    ).rejects.toThrow('sampling failed');
    expect(w).toEqual(copies[5]);
    ring.destroy();
  });

  it('is not made for an on-policy run', () => {
    const config = MODEL_PRESETS.nano;
    const policy = new CpuPolicy(config, fixtureParams(config, 3));
    expect(createStaleSampler(policy, { max_staleness: 0, weight_sync_steps: 1 })).toBeNull();
  });
});

const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
const small = (over: Partial<RLConfig> = {}) =>
  resolveConfig('grpo', {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 2,
    num_generations: 4,
    steps: 3,
    eval_every: 0,
    seed: 11,
    learning_rate: 3e-3,
    ...over,
  });
/** A record's metrics without its wall times and throughputs, which differ from run to run. */
const timeless = (m: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(m).filter(([k]) => !/^(perf\/|timing_s\/|step_time$)/.test(k) && metricSpec(k)?.unit !== 'tokens/s'),
  );
const run = (config: RLConfig) =>
  runToEnd({
    config,
    init: { config: warm.ck.config, params: warm.ck.params },
    tokenizer: warm.tok,
    backend: { kind: 'cpu' },
  });

describe('stale rollouts: the trainer (CPU learner)', () => {
  it('samples each batch max_staleness steps behind, deterministically, and measures the mismatch', async () => {
    const config = small({ max_staleness: 2, rollout_is_mode: 'token_truncate', rollout_is_clip_max: 2 });
    const [a, b, fresh] = [await run(config), await run(config), await run(small({ num_iterations: 2, steps: 1 }))];
    expect(a.map((r) => timeless(r.metrics))).toEqual(b.map((r) => timeless(r.metrics)));
    expect(a.map((r) => r.metrics['off_policy/steps_behind'])).toEqual([0, 1, 2]);
    expect(a.map((r) => r.metrics['off_policy/versions_behind'])).toEqual([0, 1, 2]);
    for (const r of a) for (const [k, v] of Object.entries(r.metrics)) expect(Number.isFinite(v), k).toBe(true);
    // Step 1 samples at W_0 (the learner has not moved): the sampler is the learner, up to float rounding.
    expect(a[0].metrics['mismatch_kl/mean']).toBeLessThan(1e-9);
    // Later batches come from weights 1 and 2 steps old.
    expect(a[2].metrics['mismatch_kl/mean']).toBeGreaterThan(1e-6);
    // chi2_token is a sample estimate of E_mu[rho^2] - 1: away from 0, of either sign on a small batch.
    expect(Math.abs(a[2].metrics['rollout_corr/chi2_token'] ?? 0)).toBeGreaterThan(1e-6);
    // Its first batch is an on-policy run's first batch (the same W_0, the same RNG).
    expect(a[0].metrics.reward).toBe(fresh[0].metrics.reward);
    expect(a[0].metrics['completions/mean_length']).toBe(fresh[0].metrics['completions/mean_length']);
  }, 120_000);

  it('resumes exactly: the saved state keeps the sampler snapshots; a state without them is refused by name', async () => {
    const { Trainer } = await import('./trainer');
    const { decodeTrainerState, encodeTrainerState } = await import('./trainer-state');
    const config = small({ max_staleness: 2, weight_sync_steps: 2, steps: 5 });
    const opts = {
      config,
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'cpu' as const },
    };
    const straight = await run(config);
    const first = await Trainer.create(opts);
    const records = [];
    for (let i = 0; i < 3; i++) records.push(...(await first.runStep()));
    const state = decodeTrainerState(encodeTrainerState(await first.saveState()));
    first.destroy();
    // After 3 optimizer steps, 1 weight sync: versions 0 and 1 are what the sampler may still read.
    expect(state.stale?.map((s) => s.version)).toEqual([0, 1]);
    const resumed = await Trainer.create({ ...opts, resume: state });
    for (let i = 0; i < 2; i++) records.push(...(await resumed.runStep()));
    resumed.destroy();
    expect(records.map((r) => r.metrics['off_policy/steps_behind'])).toEqual([0, 1, 2, 3, 4]);
    expect(records.map((r) => timeless(r.metrics))).toEqual(straight.map((r) => timeless(r.metrics)));

    // A state saved before snapshots were kept: the trainer and the file reader name what is missing.
    const { stale: _kept, ...bare } = state;
    await expect(Trainer.create({ ...opts, resume: bare })).rejects.toThrow(/keeps no sampler snapshots/);
    expect(() => decodeTrainerState(encodeTrainerState(bare))).toThrow(/stale_v0: missing \(max_staleness 2/);
  }, 120_000);
});
