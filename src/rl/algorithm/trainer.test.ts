// The trainer on the real GPU path (Dawn): every preset runs, the metric stream is complete, finite and
// consistent (clip extremes around their means, terminated lengths in order, num_tokens, each record's place in its
// rollout step), one update per batch gives rho = 1 exactly and no clipping while several do not, the same seed gives
// the same metrics, a saved state resumes exactly, held-out evaluation runs at step 0 (not again on resume) and every
// eval_every steps, the CPU learner agrees with the GPU learner, and the optimal token baseline scores sum pi^2 alike on both.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { encodeExample } from '../learners/sft';
import { PRESET_NAMES, resolveConfig, type PresetName, type RLConfig } from '../../schema/config';
import { OBJECTIVE_METRICS } from '../../reference/objective';
import type { StepRecord } from '../../schema/stream';
import { Trainer, type TrainerBackend } from './trainer';
import { runToEnd } from '../../testing/run-to-end';
import { decodeTrainerState, encodeTrainerState } from './trainer-state';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);

beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

/** A small GRPO-family setting on the copy warm start: 2 prompts x 4 completions. */
function small(preset: PresetName, over: Partial<RLConfig> = {}): RLConfig {
  return resolveConfig(preset, {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 2,
    num_generations: 4,
    steps: 3,
    eval_every: 0,
    seed: 7,
    ...over,
  });
}

/** A record whose metrics read as plain numbers. */
type PlainRecord = Omit<StepRecord, 'metrics'> & { metrics: Record<string, number> };

/** Every record of a run; metrics read as plain numbers (each test states which metrics it expects). */
const runAll = async (config: RLConfig, backend: TrainerBackend = { kind: 'webgpu', ctx }) =>
  (await runToEnd({
    config,
    init: { config: warm.ck.config, params: warm.ck.params },
    tokenizer: warm.tok,
    backend,
  })) as unknown as PlainRecord[];

/** Metrics that measure time, which differ run to run. */
const timed = (k: string) => k === 'step_time' || k.startsWith('timing_s/') || k.startsWith('perf/');

/** Records grouped by rollout step, in order. */
const byStep = <R extends Pick<StepRecord, 'step'>>(records: R[]) =>
  [...new Set(records.map((r) => r.step))].map((s) => records.filter((r) => r.step === s));

/** Checks across a record's metrics that hold whatever the run does. */
function expectConsistent(label: string, m: Record<string, number>): void {
  // The per-sequence extremes bracket the token means (f32 on the GPU: an ulp of slack where all sequences tie).
  expect(m['clip_ratio/low_min'], label).toBeLessThanOrEqual(m['clip_ratio/low_mean'] + 1e-6);
  expect(m['clip_ratio/high_max'], label).toBeGreaterThanOrEqual(m['clip_ratio/high_mean'] - 1e-6);
  expect(m['clip_ratio/low_min'], label).toBeGreaterThanOrEqual(0);
  expect(m['clip_ratio/high_max'], label).toBeLessThanOrEqual(1);
  const [lo, mean, hi] = ['min', 'mean', 'max'].map((k) => m[`completions/${k}_terminated_length`]);
  if (m['completions/clipped_ratio'] < 1) {
    expect(lo, label).toBeGreaterThan(0);
    expect(lo, label).toBeLessThanOrEqual(mean);
    expect(mean, label).toBeLessThanOrEqual(hi);
    expect(hi, label).toBeLessThanOrEqual(m['completions/max_length']);
  } else {
    expect([lo, mean, hi], label).toEqual([0, 0, 0]);
  }
}
const untimed = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !timed(k)));

describe('trainer: every preset', () => {
  for (const preset of PRESET_NAMES) {
    it(`${preset} runs 3 steps with a complete, finite metric stream`, async () => {
      const config = small(preset);
      const records = await runAll(config);
      const perBatch = config.num_iterations * config.num_minibatches;
      expect(records.length).toBe(3 * perBatch);
      expect(records.map((r) => r.optimizerStep)).toEqual(records.map((_, i) => i + 1));
      for (const r of records) {
        for (const [k, v] of Object.entries(r.metrics))
          expect(Number.isFinite(v), `${preset} step ${r.step}: ${k} = ${v}`).toBe(true);
        for (const k of [
          'reward',
          'reward_std',
          'accuracy',
          'frac_reward_zero_std',
          'entropy',
          'kl',
          'clip_ratio/low_mean',
          'clip_ratio/high_mean',
          'clip_ratio/region_mean',
          'policy_loss',
          'grad_norm',
          'learning_rate',
          'approx_kl',
          'completions/mean_length',
          'completions/clipped_ratio',
          'completions/min_terminated_length',
          'completions/mean_terminated_length',
          'completions/max_terminated_length',
          'num_tokens',
          'step_time',
          'timing_s/gen',
          'timing_s/update_actor',
          'rewards/accuracy/mean',
          ...OBJECTIVE_METRICS,
        ]) {
          expect(r.metrics, `${preset}: ${k}`).toHaveProperty([k]);
        }
        for (const k of ['timing_s/step', 'perf/step_ms', 'sampling/logp_diff/mean'])
          expect(r.metrics, `${preset}: ${k}`).not.toHaveProperty([k]);
        expectConsistent(`${preset} step ${r.step} update ${r.update}`, r.metrics);
        if (preset === 'ppo')
          for (const k of ['value_loss', 'vf_explained_var', 'critic/grad_norm']) expect(r.metrics).toHaveProperty([k]);
        if (preset === 'dapo') expect(r.metrics).toHaveProperty(['dynamic_sampling/filtered_frac']);
      }
      const last = records[records.length - 1];
      expect(last.groups?.length).toBe(2);
      for (const g of last.groups!) {
        expect(g.completions.length).toBe(config.num_generations);
        for (const c of g.completions) {
          for (const [name, plane] of Object.entries(c.tokens)) {
            if (name === 'value' && preset !== 'ppo') continue;
            expect(plane.length, `${preset} ${name}`).toBe(c.length);
            for (const v of Array.from(plane as ArrayLike<number>)) expect(Number.isFinite(v)).toBe(true);
          }
        }
      }
      // Per rollout step: its records are updates 0..updates-1 in order, and num_tokens (one value per rollout step)
      // grows by the prompt (BOS included) and completion tokens it sampled. Every group is inspected here (2 of 2),
      // so the groups give the exact count; dynamic sampling also counts the groups it dropped.
      let tokens = 0;
      for (const batch of byStep(records)) {
        expect(batch.map((r) => [r.update, r.updates])).toEqual(batch.map((_, i) => [i, perBatch]));
        expect(new Set(batch.map((r) => r.metrics.num_tokens)).size).toBe(1);
        const grown = batch[0].metrics.num_tokens - tokens;
        const groups = batch[batch.length - 1].groups!;
        expect(groups.length).toBe(config.train_batch_size);
        const sampled = groups.reduce(
          (a, g) =>
            a + g.completions.reduce((b, c) => b + encodeExample(warm.tok, g.prompt, '').prompt.length + c.length, 0),
          0,
        );
        expect(grown).toBeGreaterThan(0);
        if (config.dynamic_sampling) expect(grown).toBeGreaterThanOrEqual(sampled);
        else expect(grown).toBe(sampled);
        tokens += grown;
      }
    });
  }
});

describe('trainer: off-policy sanity', () => {
  it('one update per batch: the ratio is exactly 1 and nothing clips; the sampler agrees with the trainer exactly', async () => {
    const records = await runAll(small('grpo'));
    for (const r of records) {
      expect(r.metrics['clip_ratio/region_mean']).toBe(0);
      expect([r.metrics['clip_ratio/low_min'], r.metrics['clip_ratio/high_max']]).toEqual([0, 0]);
      expect(r.metrics.approx_kl).toBe(0);
      expect(r.metrics['sampling/sampling_logp_difference/max']).toBe(0);
      for (const g of r.groups ?? [])
        for (const c of g.completions) for (let t = 0; t < c.length; t++) expect(c.tokens.ratio[t]).toBe(1);
    }
  });

  it('several updates per batch: later updates are off-policy, so ratios move and some tokens clip', async () => {
    // 4 groups of 8, so that batches carry signal (a batch whose groups all tie has A = 0 and nothing moves).
    const config = small('grpo', {
      train_batch_size: 4,
      num_generations: 8,
      num_iterations: 2,
      num_minibatches: 2,
      learning_rate: 1e-2,
      epsilon: 0.02,
    });
    const records = await runAll(config);
    expect(records.some((r) => r.metrics.reward_std > 0)).toBe(true);
    const later = records.filter((r) => r.epoch > 0 || r.minibatch > 0);
    expect(later.length).toBe(3 * 3);
    expect(later.some((r) => r.metrics['clip_ratio/region_mean'] > 0)).toBe(true);
    // Sequences clip unevenly, so somewhere a per-sequence extreme leaves its token mean.
    for (const r of later) expectConsistent(`step ${r.step} update ${r.update}`, r.metrics);
    const m = later.map((r) => r.metrics);
    expect(
      m.some(
        (x) =>
          x['clip_ratio/high_max'] > x['clip_ratio/high_mean'] || x['clip_ratio/low_min'] < x['clip_ratio/low_mean'],
      ),
    ).toBe(true);
    expect(later.some((r) => r.metrics.approx_kl > 0)).toBe(true);
    const ratios = records
      .flatMap((r) => r.groups ?? [])
      .flatMap((g) => g.completions.flatMap((c) => Array.from(c.tokens.ratio)));
    expect(ratios.some((x) => x !== 1)).toBe(true);
  });
});

describe('trainer: determinism and resume', () => {
  it('the same seed and config give identical metrics on the same device', async () => {
    const config = small('ppo', { steps: 2 });
    const a = await runAll(config);
    const b = await runAll(config);
    expect(a.map((r) => untimed(r.metrics))).toEqual(b.map((r) => untimed(r.metrics)));
    const c = await runAll({ ...config, seed: 8 });
    expect(c.map((r) => untimed(r.metrics))).not.toEqual(a.map((r) => untimed(r.metrics)));
  });

  it('a saved state (policy, reference, critic, moments, RNG, counters) resumes exactly', async () => {
    const config = small('ppo', { steps: 3, beta: 0.05 });
    const straight = await runAll(config);
    const init = { config: warm.ck.config, params: warm.ck.params };
    const first = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    await first.runStep();
    await first.runStep();
    const bytes = encodeTrainerState(await first.saveState());
    first.destroy();
    const resumed = await Trainer.create({
      config,
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      resume: decodeTrainerState(bytes),
    });
    expect(resumed.step).toBe(2);
    expect(resumed.numTokens).toBe(byStep(straight)[1][0].metrics.num_tokens);
    const third = await resumed.runStep();
    resumed.destroy();
    expect(third.map((r) => untimed(r.metrics))).toEqual(straight.slice(2).map((r) => untimed(r.metrics)));
    // num_tokens continues from the saved count, exactly as the straight run's third step.
    expect(third.map((r) => r.metrics.num_tokens)).toEqual(byStep(straight)[2].map((r) => r.metrics.num_tokens));
    expect(third[0].metrics.num_tokens).toBeGreaterThan(byStep(straight)[1][0].metrics.num_tokens ?? Infinity);
    expect(() => decodeTrainerState(new Uint8Array(16))).toThrow();
  });
});

describe('trainer: held-out evaluation', () => {
  it('evaluates step 0 before training when it keeps no W_0, and after the first step at W_0 when it does: the same evaluation; a saved state keeps it pending', async () => {
    const config = small('grpo', {
      steps: 2,
      num_iterations: 2,
      eval_every: 2,
      eval_items: 4,
      eval_num_generations: 2,
    });
    const init = { config: warm.ck.config, params: warm.ck.params };
    // No weight tracking, so no W_0 to go back to: the evaluation runs before training, on the first record.
    const untracked = await runAll({ ...config, weight_stats_every: 0, rank1_eval: false });
    const before = untracked.filter((r) => r.initialEval);
    expect(before).toHaveLength(1);
    expect(before[0]).toBe(untracked[0]);
    expect(before[0].initialEval).toMatchObject({ step: 0, items: 4 });
    expect(before[0].initialEval!.passAtK).toHaveLength(2);
    // W_0 kept (weight_stats_every's default): the same evaluation, at W_0 after step 1, on step 2's first record.
    const records = await runAll(config);
    const initial = records.filter((r) => r.initialEval);
    expect(initial).toHaveLength(1);
    expect(initial[0]).toBe(records.find((r) => r.step === 2));
    expect(initial[0].initialEval).toEqual(before[0].initialEval);
    expect(records.filter((r) => r.eval).map((r) => r.eval!.step)).toEqual([2]);
    // Evaluation has its own RNG and puts W back exactly: the training stream is the one without evaluations.
    const unevaluated = await runAll({ ...config, eval_every: 0 });
    expect(records.map((r) => untimed(r.metrics))).toEqual(unevaluated.map((r) => untimed(r.metrics)));

    // A state saved after step 1 carries the pending evaluation; the resumed run's next step runs it at W_0.
    const first = await Trainer.create({ config, init, tokenizer: warm.tok, backend: { kind: 'webgpu', ctx } });
    expect((await first.runStep()).some((r) => r.initialEval)).toBe(false);
    const state = await first.saveState();
    expect(state.meta.initialEvalPending).toBe(true);
    const bytes = encodeTrainerState(state);
    first.destroy();
    const resumed = await Trainer.create({
      config,
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      resume: decodeTrainerState(bytes),
    });
    const second = await resumed.runStep();
    expect(second[0].initialEval).toEqual(before[0].initialEval);
    expect(second[second.length - 1].eval?.step).toBe(2);
    // Once run, nothing is pending: a state saved now has no flag, and its resumed run evaluates no step 0.
    expect((await resumed.saveState()).meta.initialEvalPending).toBeUndefined();
    resumed.destroy();
  });

  it('a resumed run does not re-evaluate step 0 once it has run', async () => {
    const config = small('grpo', { steps: 3, eval_every: 0, weight_stats_every: 0, rank1_eval: false });
    const init = { config: warm.ck.config, params: warm.ck.params };
    const run = await Trainer.create({
      config: { ...config, eval_every: 2, eval_items: 4, eval_num_generations: 2 },
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
    });
    expect((await run.runStep())[0].initialEval?.step).toBe(0);
    const bytes = encodeTrainerState(await run.saveState());
    run.destroy();
    const resumed = await Trainer.create({
      config: { ...config, eval_every: 2, eval_items: 4, eval_num_generations: 2 },
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
      resume: decodeTrainerState(bytes),
    });
    const second = await resumed.runStep();
    resumed.destroy();
    expect(second.some((r) => r.initialEval)).toBe(false);
    expect(second[second.length - 1].eval?.step).toBe(2);
  });

  it('does not evaluate at all when eval_every is 0', async () => {
    const records = await runAll(small('grpo', { steps: 1 }));
    expect(records.some((r) => r.initialEval || r.eval)).toBe(false);
  });
});

describe('trainer: CPU learner', () => {
  it('agrees with the GPU learner on a PPO step with a reference model, exact KL in the loss and a critic', async () => {
    const config = small('ppo', {
      steps: 2,
      beta: 0.05,
      kl_placement: 'in_loss',
      kl_estimator: 'exact',
      adv_estimator: 'gae',
    });
    const gpu = await runAll(config);
    const cpu = await runAll(config, { kind: 'cpu' });
    expect(cpu.length).toBe(gpu.length);
    cpu.forEach((r, i) => {
      for (const [k, v] of Object.entries(untimed(gpu[i].metrics))) {
        const w = r.metrics[k];
        expect(Math.abs(w - v), `${k}: cpu ${w} gpu ${v}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(v)));
      }
    });
  });
});

describe('trainer: gradient accumulation', () => {
  it('micro-batches (scored and updated one at a time) give the optimizer steps of whole minibatches', async () => {
    // PPO with a critic and the KL in the loss, two minibatches of 4 rows and two epochs: pi_old is scored micro-batch
    // by micro-batch, every update after the first is off-policy (ratios clip), and each takes one step either way.
    const base = small('ppo', { steps: 1, beta: 0.05, kl_placement: 'in_loss', num_minibatches: 2, num_iterations: 2 });
    const whole = await runAll(base);
    const micro = await runAll({ ...base, gradient_accumulation_steps: 2 });
    expect(micro.map((r) => [r.epoch, r.minibatch])).toEqual(whole.map((r) => [r.epoch, r.minibatch]));
    expect(Math.max(...whole.map((r) => r.metrics['clip_ratio/region_mean']))).toBeGreaterThan(0);
    // f32 summation order, compounded over four AdamW steps (Adam's step is sign-like: lr g / (|g| + eps)).
    micro.forEach((r, i) => {
      for (const [k, v] of Object.entries(untimed(whole[i].metrics))) {
        const w = r.metrics[k];
        expect(Math.abs(w - v), `update ${i} ${k}: micro ${w} whole ${v}`).toBeLessThanOrEqual(
          1e-4 * Math.max(1, Math.abs(v)),
        );
      }
    });
  });
});

describe('trainer: optimal_token_baseline', () => {
  it('scores sum pi^2 before the update, on the GPU as on the CPU learner, and gives each position its own baseline', async () => {
    // 4 groups of 8, so that some group's rewards differ (a group that ties has A ~ 0 at every position).
    const config = small('grpo', {
      steps: 1,
      train_batch_size: 4,
      num_generations: 8,
      adv_estimator: 'optimal_token_baseline',
    });
    const gpu = await runAll(config);
    const cpu = await runAll(config, { kind: 'cpu' });
    expect(cpu.length).toBe(gpu.length);
    let varies = false;
    cpu.forEach((r, i) => {
      expect(gpu[i].metrics['timing_s/old_log_prob'], 'the policy is scored before the update').toBeGreaterThan(0);
      for (const [k, v] of Object.entries(untimed(gpu[i].metrics))) {
        expect(Number.isFinite(v), k).toBe(true);
        const w = r.metrics[k];
        expect(Math.abs(w - v), `${k}: cpu ${w} gpu ${v}`).toBeLessThanOrEqual(1e-3 * Math.max(1, Math.abs(v)));
      }
      (gpu[i].groups ?? []).forEach((g, gi) =>
        g.completions.forEach((c, ci) => {
          const a = Array.from(c.tokens.advantage);
          const b = Array.from(r.groups![gi].completions[ci].tokens.advantage);
          for (let t = 0; t < a.length; t++) expect(Math.abs(a[t] - b[t]), `advantage ${t}`).toBeLessThanOrEqual(1e-3);
          if (a.some((x) => Math.abs(x - a[0]) > 1e-4)) varies = true;
        }),
      );
    });
    expect(varies, 'some completion has advantages that differ by position').toBe(true);
  });
});

describe('trainer: validation', () => {
  it('refuses an invalid config naming the field, before allocating anything', async () => {
    const bad = { ...small('grpo'), num_generations: 1 };
    await expect(
      Trainer.create({
        config: bad,
        init: { config: warm.ck.config, params: warm.ck.params },
        tokenizer: warm.tok,
        backend: { kind: 'cpu' },
      }),
    ).rejects.toThrow(
      /num_generations: adv_estimator 'grpo' compares the completions of a group and needs num_generations >= 2/,
    );
  });
});
