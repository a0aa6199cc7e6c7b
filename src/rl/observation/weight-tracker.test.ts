// The weight tracker in the trainer, on the GPU path (Dawn) and the CPU twins: the weights/* metrics of a real run
// against the trained weights (relative update recomputed on the host, rank-1 share against an exact SVD of the
// update within 1e-3), on the steps weight_stats_every names only; the rank-1 evaluation sets every matrix to
// W_0 + sigma_1 u_1 v_1^T and restores it bit for bit, so a run with it trains exactly as a run without it; a
// resumed run measures against the run's start, not the resume point; the CPU tracker agrees with the GPU's.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { CpuPolicy, GpuPolicy, type Policy } from '../../model/policy';
import { paramShapes } from '../../core/model-shapes';
import { squaredSingularValues } from '../../reference/jacobi';
import { resolveConfig, type RLConfig } from '../../schema/config';
import type { StepRecord } from '../../schema/stream';
import { Trainer, type TrainerBackend } from '../algorithm/trainer';
import { decodeTrainerState, encodeTrainerState } from '../algorithm/trainer-state';
import { createWeightTracker, weightMetricName } from './weight-tracker';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
const init = { config: warm.ck.config, params: warm.ck.params };

beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

/** 2 prompts x 4 completions on copy; seed 1 gives groups with unequal rewards from step 1, so every weight moves. */
function small(over: Partial<RLConfig> = {}): RLConfig {
  return resolveConfig('grpo', {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 2,
    num_generations: 4,
    steps: 2,
    eval_every: 0,
    seed: 1,
    learning_rate: 3e-3,
    ...over,
  });
}

/** Runs `steps` rollout steps and returns the records and the final parameters. */
async function run(config: RLConfig, backend: TrainerBackend = { kind: 'webgpu', ctx }) {
  const t = await Trainer.create({ config, init, tokenizer: warm.tok, backend });
  const records: StepRecord[] = [];
  try {
    while (!t.done) records.push(...(await t.runStep()));
    return { records, params: await t.learner.policy.download() };
  } finally {
    t.destroy();
  }
}

const weightsOf = (r: StepRecord) =>
  Object.fromEntries(Object.entries(r.metrics).filter(([k]) => k.startsWith('weights/')));
const untimed = (r: StepRecord) =>
  Object.fromEntries(
    Object.entries(r.metrics).filter(
      ([k]) => k !== 'step_time' && !k.startsWith('timing_s/') && !k.startsWith('perf/'),
    ),
  );

describe('weight tracker in the trainer', () => {
  it('names every parameter of the Llama layout', () => {
    expect(paramShapes(init.config).map((p) => weightMetricName(p.name))).toEqual([
      'embed',
      ...Array.from({ length: init.config.nLayers }, (_, i) =>
        ['attn_norm', 'q', 'k', 'v', 'o', 'mlp_norm', 'gate', 'up', 'down'].map((p) => `layers.${i}.${p}`),
      ).flat(),
      'norm',
      ...(init.config.tiedEmbeddings ? [] : ['head']),
    ]);
    expect(() => weightMetricName('model.layers.0.mlp.other.weight')).toThrow(/not a parameter/);
  });

  it('measures on the steps weight_stats_every names, and the numbers are those of the trained weights', async () => {
    const config = small({ steps: 3, weight_stats_every: 2 });
    const { records } = await run(config);
    const measured = [...new Set(records.filter((r) => Object.keys(weightsOf(r)).length).map((r) => r.step))];
    expect(measured).toEqual([2]);
    // Step 3 trained on after the measurement; compare with a run that stops at step 2.
    const two = await run({ ...config, steps: 2 });
    const m = weightsOf(two.records.at(-1)!);
    expect(m).toEqual(weightsOf(records.find((r) => r.step === 2)!));
    for (const { name, shape } of paramShapes(init.config)) {
      const short = weightMetricName(name);
      const w = two.params[name];
      const w0 = init.params[name];
      const d = Float64Array.from(w, (x, i) => x - w0[i]);
      const deltaSq = d.reduce((a, x) => a + x * x, 0);
      const startSq = w0.reduce((a, x) => a + x * x, 0);
      expect(deltaSq, `${name} moved`).toBeGreaterThan(0);
      expect(m[`weights/${short}/rel_update`], short).toBeCloseTo(Math.sqrt(deltaSq / startSq), 6);
      if (shape.length === 1) {
        expect(`weights/${short}/rank1_share` in m, short).toBe(false);
        continue;
      }
      const sv = squaredSingularValues(d, shape[0], shape[1]);
      const exact = sv[0] / sv.reduce((a, b) => a + b, 0);
      expect(Math.abs(m[`weights/${short}/rank1_share`] - exact), `${short}: exact share ${exact}`).toBeLessThan(1e-3);
    }
  });

  it('the rank-1 weights are W_0 + u v^T while the callback runs, and the exact weights come back bit for bit', async () => {
    const { params } = await run(small());
    const policy = GpuPolicy.create(ctx, init.config, params);
    const tracker = createWeightTracker(policy, init.params);
    try {
      const inside = await tracker.withRank1(() => policy.download());
      const after = await policy.download();
      for (const { name, shape } of paramShapes(init.config)) {
        expect(Array.from(after[name]), `${name} restored`).toEqual(Array.from(params[name]));
        if (shape.length === 1) {
          expect(Array.from(inside[name]), `${name}: a vector keeps its value`).toEqual(Array.from(params[name]));
          continue;
        }
        // inside - W_0 is rank 1 with the top singular value of W - W_0.
        const [R, C] = shape;
        const d = Float64Array.from(params[name], (x, i) => x - init.params[name][i]);
        const r1 = Float64Array.from(inside[name], (x, i) => x - init.params[name][i]);
        const sv = squaredSingularValues(r1, R, C);
        const exact = squaredSingularValues(d, R, C);
        expect(sv[0] / exact[0], name).toBeCloseTo(1, 2);
        expect(sv.slice(1).reduce((a, b) => a + b, 0) / sv[0], `${name}: rank 1`).toBeLessThan(1e-4);
      }
      expect(tracker.bytes).toBeGreaterThan(4 * Object.values(init.params).reduce((a, p) => a + p.length, 0) - 1);
    } finally {
      tracker.destroy();
      policy.destroy();
    }
  });

  it('withStart: every weight is W_0 while the callback runs (GPU and CPU), and the exact weights come back, also after a throw', async () => {
    const { params } = await run(small());
    const gpu = GpuPolicy.create(ctx, init.config, params);
    const cpu = new CpuPolicy(init.config, params);
    for (const policy of [gpu, cpu] as Policy[]) {
      const tracker = createWeightTracker(policy, init.params);
      try {
        const inside = await tracker.withStart(() => policy.download());
        await expect(tracker.withStart(() => Promise.reject(new Error('inside')))).rejects.toThrow('inside');
        const after = await policy.download();
        for (const { name } of paramShapes(init.config)) {
          expect(Array.from(inside[name]), `${policy.backend} ${name} at W_0`).toEqual(Array.from(init.params[name]));
          expect(Array.from(after[name]), `${policy.backend} ${name} restored`).toEqual(Array.from(params[name]));
        }
      } finally {
        tracker.destroy();
        policy.destroy();
      }
    }
  });

  it('the rank-1 evaluation is reported beside the full one and leaves training bit-identical', async () => {
    const over = { steps: 2, eval_every: 1, eval_items: 6, eval_num_generations: 2, weight_stats_every: 1 };
    const withRank1 = await run(small({ ...over, rank1_eval: true }));
    const without = await run(small({ ...over, rank1_eval: false }));
    for (const [name, p] of Object.entries(withRank1.params))
      expect(Array.from(p), name).toEqual(Array.from(without.params[name]));
    expect(withRank1.records.map(untimed)).toEqual(without.records.map(untimed));
    const evals = withRank1.records.flatMap((r) => [r.initialEval, r.eval]).filter((e) => e !== undefined);
    expect(evals.map((e) => e.step)).toEqual([0, 1, 2]);
    expect(evals[0].rank1, 'nothing to compare at step 0').toBeUndefined();
    for (const e of evals.slice(1)) {
      expect(e.rank1!.accuracy).toBeGreaterThanOrEqual(0);
      expect(e.rank1!.accuracy).toBeLessThanOrEqual(1);
      expect(Number.isFinite(e.rank1!.reward)).toBe(true);
    }
    const plain = without.records.flatMap((r) => [r.initialEval, r.eval]).filter((e) => e !== undefined);
    expect(plain.map((e) => ({ ...e }))).toEqual(evals.map(({ rank1: _, ...e }) => e));
  });

  it('a resumed run measures against the run start, as the straight run does', async () => {
    const config = small({ steps: 2, weight_stats_every: 1 });
    const straight = await run(config);
    const first = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    await first.runStep();
    const state = decodeTrainerState(encodeTrainerState(await first.saveState()));
    first.destroy();
    expect(Object.keys(state.start ?? {}).sort()).toEqual(Object.keys(init.params).sort());
    // The resumed trainer is handed the saved weights as its init, as the lab does.
    const resumed = await Trainer.create({
      config,
      init: { config: init.config, params: state.learner.policy },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      resume: state,
    });
    const second = await resumed.runStep();
    resumed.destroy();
    expect(second.map(weightsOf)).toEqual(straight.records.filter((r) => r.step === 2).map(weightsOf));
  });

  it('the CPU tracker agrees with the GPU tracker', async () => {
    const { params } = await run(small());
    const gpuPolicy = GpuPolicy.create(ctx, init.config, params);
    const gpu = createWeightTracker(gpuPolicy, init.params);
    const cpuConfig = small({ weight_stats_every: 1, steps: 1 });
    const cpuTrainer = await Trainer.create({
      config: cpuConfig,
      init: { config: init.config, params },
      tokenizer: warm.tok,
      backend: { kind: 'cpu' },
    });
    try {
      const cpu = createWeightTracker(cpuTrainer.learner.policy, init.params);
      const [g, c] = [await gpu.measure(), await cpu.measure()];
      expect(Object.keys(c).sort()).toEqual(Object.keys(g).sort());
      for (const k of Object.keys(g))
        expect(Math.abs((c as Record<string, number>)[k] - (g as Record<string, number>)[k]), k).toBeLessThan(1e-4);
      cpu.destroy();
    } finally {
      gpu.destroy();
      gpuPolicy.destroy();
      cpuTrainer.destroy();
    }
  });
});
