// The LabEngine with the real trainer on the CPU backend, an in-memory runs store and the shipped copy warm
// start: runs step, pause, persist (the step-0 evaluation included) and export; resume continues exactly where a
// saved state left off; a full quota keeps training, says so, and leaves saved runs intact; a lost device
// interrupts; bad imports are refused; a diverging run (NaN metrics or weights) goes back to its last finite saved
// state and pauses; alerts warn or pause.
import { describe, expect, it, vi } from 'vitest';
import { decodeCheckpoint, encodeCheckpoint } from '../io/checkpoint';
import { MODEL_PRESETS } from '../schema/model-config';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { resolveConfig, type RLConfig } from '../schema/config';
import { learningRate } from '../rl/learners/sft';
import { decodeTrainerState } from '../rl/algorithm/trainer-state';
import { chartOf } from '../schema/metrics';
import { parseRunFile, RunFileError } from '../io/run-files';
import { withUpdateIndex } from '../schema/metric-batch';
import { nodeRewardSandbox } from '../cli/reward-sandbox';
import { LabEngine, type LabEngineDeps } from './lab-engine';
import { MemoryRunStore } from './run-store';
import { PUBLIC_ASSETS } from './node-assets';
import { createTrainer, type TrainerFactory } from './run-session';
import { defaultRunName, type EngineEvent } from '../schema/run-types';
import type { CompileRecord, GpuContext } from '../gpu';

const assets = PUBLIC_ASSETS;

/** The smallest real experiment: GRPO on copy from its warm start, 2 prompts x 4 completions. */
function tinyConfig(over: Partial<RLConfig> = {}): RLConfig {
  return resolveConfig('grpo', {
    task: 'copy',
    difficulty: 3,
    checkpoint: 'copy',
    train_batch_size: 2,
    num_generations: 4,
    steps: 4,
    eval_every: 2,
    eval_items: 2,
    eval_num_generations: 2,
    num_iterations: 2,
    ...over,
  });
}

function makeEngine(store = new MemoryRunStore(), over: Partial<LabEngineDeps> = {}) {
  const events: EngineEvent[] = [];
  const engine = new LabEngine({
    store,
    assets,
    gpu: async () => {
      throw new Error('no GPU in this test');
    },
    emit: (e) => events.push(e),
    // Saves by steps only (save_every, pause, end): a slow machine must not add wall-clock autosaves.
    autosaveMs: Number.POSITIVE_INFINITY,
    ...over,
  });
  return { engine, events, store };
}

/** A stand-in device for scripted trainers (which never touch it): it tells `listeners` of compiles. */
function fakeDevice(listeners: ((r: CompileRecord) => void)[] = []): GpuContext {
  return {
    onCompiled: (l: (r: CompileRecord) => void) => {
      listeners.push(l);
      return () => listeners.splice(listeners.indexOf(l), 1);
    },
  } as unknown as GpuContext;
}

const recordsOf = (events: EngineEvent[]) => events.flatMap((e) => (e.type === 'records' ? e.records : []));
const notices = (events: EngineEvent[]) => events.flatMap((e) => (e.type === 'notice' ? [e.message] : []));

describe('LabEngine (CPU backend, real trainer)', () => {
  it('steps, pauses with a saved state, runs to the end, and exports what it stored', async () => {
    const { engine, events, store } = makeEngine();
    const h = await engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    expect(engine.progress().status).toBe('paused');
    engine.stepOnce();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 1, savedStep: 1 });
    const recs = recordsOf(events);
    expect(recs.length).toBe(2); // num_iterations 2, one minibatch
    expect(recs[1].groups?.length).toBeGreaterThan(0);
    // The run keeps W_0 (weight tracking): its evaluation before training runs at W_0 after the first step, so the
    // first step's records come without waiting for it, and the second step's first record carries it.
    expect(recs.some((r) => r.initialEval)).toBe(false);
    for (const r of recs) expect(Number.isFinite(r.metrics.reward)).toBe(true);
    expect((await store.getState(h.id))?.step).toBe(1);

    engine.start();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'done', step: 4, savedStep: 4 });
    const all = recordsOf(events);
    expect(all.map((r) => r.optimizerStep)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(all.filter((r) => r.eval).map((r) => r.eval!.step)).toEqual([2, 4]);
    expect(all.filter((r) => r.initialEval).map((r) => [r.step, r.update, r.initialEval!.step])).toEqual([[2, 0, 0]]);

    const stored = await store.readRecords(h.id);
    expect(stored.rows.length).toBe(8);
    expect(stored.evals.map((e) => e.step)).toEqual([0, 2, 4]);
    expect(stored.rolloutSteps).toEqual([1, 2, 3, 4]);
    expect((await store.getRun(h.id))?.status).toBe('done');

    const [csv] = await engine.runs.export(h.id, 'metrics-csv');
    const [jsonl] = await engine.runs.export(h.id, 'metrics-jsonl');
    const [rollouts] = await engine.runs.export(h.id, 'rollouts-jsonl');
    const fromCsv = parseRunFile(csv.name, csv.data as string);
    const fromJsonl = parseRunFile(jsonl.name, jsonl.data as string);
    // Files always carry each row's index within its rollout step; rows stored without one get it on the way out.
    const exported = withUpdateIndex(stored.rows);
    expect(fromCsv.rows).toEqual(exported);
    expect(fromJsonl.rows).toEqual(exported);
    expect(fromJsonl.evals).toEqual(stored.evals);
    expect(fromCsv.evals).toEqual(stored.evals);
    expect(fromJsonl.header.config).toEqual(h.config);
    const fromRollouts = parseRunFile(rollouts.name, rollouts.data as string);
    expect(fromRollouts.rollouts.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(fromRollouts.rollouts[0].groups[0].completions[0].tokens.logpOld).toEqual(
      (await store.readRollouts(h.id, 1))!.groups[0].completions[0].tokens.logpOld,
    );

    const files = await engine.runs.export(h.id, 'checkpoint');
    expect(files.map((f) => f.name.split('/').pop())).toEqual([
      'model.safetensors',
      'config.json',
      'generation_config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'special_tokens_map.json',
    ]);
    const ck = decodeCheckpoint(files[0].data as Uint8Array, files[1].data as string);
    expect(ck.config.dModel).toBe(48);

    const imported = await engine.runs.import(jsonl.name, jsonl.data as string);
    expect(imported.id).not.toBe(h.id);
    expect((await store.readRecords(imported.id)).rows).toEqual(exported);
    // A TRL log imports beside it as a run from TRL, with nothing to resume.
    const trl = await engine.runs.import(
      'trainer_state.json',
      JSON.stringify({ global_step: 1, log_history: [{ step: 1, epoch: 0.5, reward: 0.5, kl: 0.01 }] }),
    );
    expect([trl.status, trl.origin?.trainer, trl.savedStep]).toEqual(['imported', 'trl', 0]);
    expect((await store.readRecords(trl.id)).rows.map((r) => r.metrics)).toEqual([{ reward: 0.5, kl: 0.01 }]);
    expect(() => engine.start()).toThrow(/all its 4 steps/);
  });

  it('trains a supervised (sft) run through the same session, step by step, evaluated on the trainer schedule', async () => {
    const { engine, events, store } = makeEngine();
    const config = tinyConfig({ steps: 3, eval_every: 3 });
    const h = await engine.create({ config, preset: 'grpo', backend: 'cpu', name: 'sft', mode: 'sft' });
    expect((await store.getRun(h.id))?.mode).toBe('sft');
    engine.stepOnce();
    await engine.idle();
    // One supervised optimizer step per session step; no rollouts, so no resume point is saved.
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 1, savedStep: 0 });
    const first = recordsOf(events);
    expect(first.map((r) => [r.step, r.optimizerStep, r.updates])).toEqual([[1, 1, 1]]);
    expect(first[0].groups).toBeUndefined();
    expect(first[0].initialEval?.step).toBe(0);
    expect(first[0].metrics.loss).toBeGreaterThan(0);
    // No warmup: sft.ts's cosine decay from the peak over the run's 3 steps.
    expect(first[0].metrics.learning_rate).toBeCloseTo(
      learningRate(1, { lr: config.learning_rate, warmup: 0, steps: 3 }),
      12,
    );

    engine.start();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'done', step: 3, savedStep: 0 });
    const all = recordsOf(events);
    expect(all.map((r) => r.step)).toEqual([1, 2, 3]);
    for (const r of all) expect(Number.isFinite(r.metrics.loss)).toBe(true);
    expect(all.filter((r) => r.eval).map((r) => r.eval!.step)).toEqual([3]);
    const stored = await store.readRecords(h.id);
    expect(stored.evals.map((e) => e.step)).toEqual([0, 3]);
    expect(stored.evals[1].passAtK.length).toBe(config.eval_num_generations);
    // The policy it trained downloads like any run's.
    const files = await engine.runs.export(h.id, 'checkpoint');
    expect(files[0].name).toMatch(/model\.safetensors$/);
    // Once another run is open, the supervised run has nothing saved to download, and says why.
    await engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    await expect(engine.runs.export(h.id, 'checkpoint')).rejects.toThrow(
      /supervised run, which keeps no saved checkpoint/,
    );
  });

  it('resumes a run interrupted after its saved state exactly as if it had not stopped', async () => {
    const straight = makeEngine();
    await straight.engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    straight.engine.start();
    await straight.engine.idle();
    const want = recordsOf(straight.events).map((r) => r.metrics);

    const store = new MemoryRunStore();
    const first = makeEngine(store);
    const h = await first.engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    first.engine.stepOnce();
    await first.engine.idle();
    first.engine.stepOnce(); // saved after each single step: state at step 2
    await first.engine.idle();
    // A third step runs but the page closes before its state is saved: the header says running.
    await store.putHeader({ ...(await store.getRun(h.id))!, status: 'running', step: 3 });

    const second = makeEngine(store);
    await second.engine.runs.recover();
    expect((await store.getRun(h.id))?.status).toBe('interrupted');
    const records = await second.engine.resume(h.id);
    expect(records.rows.length).toBe(4);
    second.engine.start();
    await second.engine.idle();
    const got = [...recordsOf(first.events), ...recordsOf(second.events)].map((r) => r.metrics);
    expect(got.length).toBe(want.length);
    // Timing metrics (the catalog's time and throughput charts) differ run to run; everything the algorithm computes must match exactly.
    const timed = (k: string) => chartOf(k) === 'time' || chartOf(k) === 'throughput';
    const strip = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !timed(k)));
    expect(got.map(strip)).toEqual(want.map(strip));
    expect((await store.readRecords(h.id)).rows.length).toBe(8);
  });

  it('keeps training when storage is full, says so once, and never loses what was saved', async () => {
    const store = new MemoryRunStore();
    const { engine, events } = makeEngine(store);
    const other = await engine.create({ config: tinyConfig({ steps: 1 }), preset: 'grpo', backend: 'cpu' });
    engine.start();
    await engine.idle();
    const otherRows = (await store.readRecords(other.id)).rows;
    const h = await engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    engine.stepOnce();
    await engine.idle();
    const savedBefore = await store.readRecords(h.id);
    store.quotaBytes = 1; // no room for anything more
    engine.start();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'done', step: 4 });
    expect(recordsOf(events).filter((r) => r.step > 1).length).toBe(6); // the page still got every step
    const full = notices(events).filter((m) => m.startsWith('Storage is full'));
    expect(full.length).toBe(1);
    expect((await store.readRecords(h.id)).rows).toEqual(savedBefore.rows);
    expect((await store.getState(h.id))?.step).toBe(1);
    expect((await store.readRecords(other.id)).rows).toEqual(otherRows);
  });

  it('interrupts the run when the device is lost, and refuses malformed imports without touching the store', async () => {
    const { engine, store } = makeEngine();
    const h = await engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    const before = await store.listRuns();
    await expect(engine.runs.import('bad.jsonl', '{"type":"run"}\n')).rejects.toBeInstanceOf(RunFileError);
    await expect(engine.runs.import('bad.csv', 'step,reward\n1,2\n')).rejects.toThrow(/bad\.csv: line 1/);
    expect(await store.listRuns()).toEqual(before);
    // Device loss only concerns WebGPU runs; a CPU run keeps going.
    await engine.deviceLost('GPU device lost (unknown): test');
    expect(engine.progress().status).toBe('paused');
    expect(h.backend).toBe('cpu');
  });
});

describe('LabEngine.prepare', () => {
  /** A step's records without their wall times (the rest is a function of the config and the seed). */
  const untimed = (events: EngineEvent[]) =>
    recordsOf(events).map((r) => ({
      ...r,
      metrics: Object.fromEntries(
        Object.entries(r.metrics).filter(([k]) => !/^(perf\/|timing_s\/|step_time$)/.test(k)),
      ),
    }));

  it("a prepared run is the created run's own: its first step trained ahead, the same records, one trainer", async () => {
    const fresh = makeEngine();
    await fresh.engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    fresh.engine.stepOnce();
    await fresh.engine.idle();

    const stepsRun: number[] = [];
    const counting: TrainerFactory = async (o) => {
      const t = await createTrainer(o);
      return {
        ...t,
        get step() {
          return t.step;
        },
        runStep: () => (stepsRun.push(t.step), t.runStep()),
      };
    };
    const ahead = makeEngine(new MemoryRunStore(), { createTrainer: counting });
    ahead.engine.prepare({ config: tinyConfig(), backend: 'cpu' });
    // The device counts as busy from now until the first step is over (the worker's matmul tune waits).
    expect(ahead.engine.trainerIdle()).toBe(false);
    // The first step starts with the prepared trainer, before any run exists.
    await vi.waitFor(() => expect(stepsRun).toEqual([0]));
    const h = await ahead.engine.create({ config: tinyConfig(), preset: 'grpo', backend: 'cpu' });
    ahead.engine.stepOnce();
    await ahead.engine.idle();
    expect(stepsRun).toEqual([0]);
    expect(untimed(ahead.events)).toEqual(untimed(fresh.events));
    // Stored as any run's first step, and training goes on from it.
    expect((await ahead.store.readRecords(h.id)).rows.length).toBe(2);
    expect(ahead.engine.progress()).toMatchObject({ status: 'paused', step: 1, savedStep: 1 });
    ahead.engine.stepOnce();
    await ahead.engine.idle();
    expect(stepsRun).toEqual([0, 1]);
    // The step-0 evaluation (at W_0, after the first step) comes with the second step, as in a run not prepared.
    expect(recordsOf(ahead.events).find((r) => r.initialEval)?.step).toBe(2);
  });

  it('a run of another config discards the prepared one and trains its own from step 0 (scripted trainer)', async () => {
    const made: number[] = [];
    const destroyed: number[] = [];
    const scripted: TrainerFactory = async (o) => {
      const id = made.push(o.config.seed);
      let step = 0;
      return {
        get step() {
          return step;
        },
        async runStep() {
          step++;
          const metrics = { reward: o.config.seed };
          return [{ kind: 'step', step, optimizerStep: step, update: 0, updates: 1, epoch: 0, minibatch: 0, metrics }];
        },
        evaluate: async () => ({ step, items: 0, accuracy: 0, reward: 0, passAtK: [] }),
        saveStateBytes: async () => Uint8Array.of(step),
        exportCheckpoint: async () => {
          throw new Error('not used');
        },
        destroy: () => void destroyed.push(id),
      };
    };
    const { engine, events } = makeEngine(new MemoryRunStore(), { createTrainer: scripted });
    const config = (seed: number) => tinyConfig({ seed, checkpoint: null });
    engine.prepare({ config: config(1), backend: 'cpu' });
    await engine.create({ config: config(2), preset: 'grpo', backend: 'cpu' });
    engine.stepOnce();
    await engine.idle();
    expect(made).toEqual([1, 2]);
    // The prepared trainer goes (first: run 2's own ends only when its run does).
    await vi.waitFor(() => expect(destroyed[0]).toBe(1));
    expect(recordsOf(events).map((r) => [r.step, r.metrics.reward])).toEqual([[1, 2]]);
    // A reward_fn is never run before Run is pressed: no trainer is made for it.
    const other = makeEngine(new MemoryRunStore(), { createTrainer: scripted });
    other.engine.prepare({ config: tinyConfig({ reward_fn: '(p, c) => c.length' }), backend: 'cpu' });
    expect(other.engine.trainerIdle()).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(made).toEqual([1, 2]);
  });
});

describe('LabEngine device loss (scripted trainer)', () => {
  /** A trainer whose steps wait for the test to release them, and which fails once the device is lost. */
  function scripted() {
    const created: { resume?: Uint8Array; backend: string }[] = [];
    let lost = false;
    const factory: NonNullable<LabEngineDeps['createTrainer']> = async (o) => {
      created.push({ resume: o.resume, backend: o.backend.kind });
      let step = o.resume ? o.resume[0] : 0;
      return {
        get step() {
          return step;
        },
        async runStep() {
          await new Promise((r) => setTimeout(r, 5));
          if (lost) throw new Error('mapAsync: device lost');
          step++;
          return [
            {
              kind: 'step',
              step,
              optimizerStep: step,
              update: 0,
              updates: 1,
              epoch: 0,
              minibatch: 0,
              metrics: { reward: step },
            },
          ];
        },
        evaluate: async () => ({ step, items: 0, accuracy: 0, reward: 0, passAtK: [] }),
        saveStateBytes: async () => Uint8Array.of(step),
        exportCheckpoint: async () => {
          throw new Error('not used');
        },
        destroy: () => undefined,
      };
    };
    return { factory, created, loseDevice: () => (lost = true), restore: () => (lost = false) };
  }

  it('stops the run as interrupted with the reason, and resumes from the saved state on a new device', async () => {
    const s = scripted();
    const store = new MemoryRunStore();
    // Only the trainer is scripted; states are saved through the real store (a checkpoint is needed to resume).
    const { engine, events } = makeEngine(store, { createTrainer: s.factory, gpu: async () => fakeDevice() });
    const h = await engine.create({
      config: tinyConfig({ steps: 50, checkpoint: null }),
      preset: 'grpo',
      backend: 'webgpu',
    });
    // Save a resumable state by hand at step 0 -> the engine's own saves need exportCheckpoint, which this fake lacks.
    const real = await freshCheckpoint();
    await store.putState(
      { ...(await store.getRun(h.id))!, savedStep: 0 },
      { runId: h.id, step: 0, state: Uint8Array.of(0), ...real },
    );
    engine.start();
    while (engine.progress().step < 3) await new Promise((r) => setTimeout(r, 5));
    s.loseDevice();
    await engine.deviceLost('GPU device lost (unknown): the driver was reset');
    await engine.idle();
    const p = engine.progress();
    expect(p.status).toBe('interrupted');
    expect(p.message).toMatch(/the driver was reset\. Resume continues from the last saved state/);
    expect((await store.getRun(h.id))?.status).toBe('interrupted');
    expect(events.some((e) => e.type === 'progress' && e.progress.status === 'interrupted')).toBe(true);

    s.restore();
    const records = await engine.resume(h.id);
    expect(records.rows).toEqual([]); // steps after the saved state (step 0) are dropped
    expect(s.created.at(-1)).toEqual({ resume: Uint8Array.of(0), backend: 'webgpu' });
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 0 });
  });
});

async function freshCheckpoint(): Promise<{ safetensors: Uint8Array; configJson: string; tokenizerJson: string }> {
  const ck = encodeCheckpoint(await freshCheckpointObject());
  return {
    safetensors: ck.safetensors,
    configJson: ck.configJson,
    tokenizerJson: await assets.text('tokenizers/char/tokenizer.json'),
  };
}

describe('LabEngine reset (scripted trainer)', () => {
  it('reset while training stops after the step in progress, releases the trainer and keeps the run saved', async () => {
    let destroyed = 0;
    let step = 0;
    const { engine, store } = makeEngine(new MemoryRunStore(), {
      createTrainer: async () => ({
        get step() {
          return step;
        },
        async runStep() {
          await new Promise((r) => setTimeout(r, 5));
          step++;
          return [
            {
              kind: 'step',
              step,
              optimizerStep: step,
              update: 0,
              updates: 1,
              epoch: 0,
              minibatch: 0,
              metrics: { reward: step },
            },
          ];
        },
        evaluate: async () => ({ step, items: 0, accuracy: 0, reward: 0, passAtK: [] }),
        saveStateBytes: async () => Uint8Array.of(step),
        exportCheckpoint: freshCheckpointObject,
        destroy: () => void destroyed++,
      }),
    });
    const h = await engine.create({
      config: tinyConfig({ steps: 1000, checkpoint: null }),
      preset: 'grpo',
      backend: 'cpu',
    });
    engine.start();
    while (engine.progress().step < 2) await new Promise((r) => setTimeout(r, 2));
    engine.reset();
    await engine.idle();
    expect(engine.progress().status).toBe('idle');
    expect(destroyed).toBe(1);
    const saved = (await store.getRun(h.id))!;
    expect(saved.status).toBe('paused');
    expect(saved.savedStep).toBe(saved.step);
    expect((await store.readRecords(h.id)).rows.length).toBe(saved.step);
    expect(() => engine.start()).toThrow(/no run to train/);
  });
});

describe('LabEngine trainerIdle (scripted trainer)', () => {
  it('is true only while no loaded run could train on: none, or the current one finished', async () => {
    let step = 0;
    const { engine } = makeEngine(new MemoryRunStore(), {
      createTrainer: async () => ({
        get step() {
          return step;
        },
        get done() {
          return step >= 2;
        },
        async runStep() {
          await new Promise((r) => setTimeout(r, 5));
          step++;
          const metrics = { reward: step };
          return [{ kind: 'step', step, optimizerStep: step, update: 0, updates: 1, epoch: 0, minibatch: 0, metrics }];
        },
        evaluate: async () => ({ step, items: 0, accuracy: 0, reward: 0, passAtK: [] }),
        saveStateBytes: async () => Uint8Array.of(step),
        exportCheckpoint: freshCheckpointObject,
        destroy: () => undefined,
      }),
    });
    expect(engine.trainerIdle()).toBe(true);
    const created = engine.create({
      config: tinyConfig({ steps: 2, checkpoint: null }),
      preset: 'grpo',
      backend: 'cpu',
    });
    expect(engine.trainerIdle()).toBe(false); // loading
    await created;
    expect(engine.trainerIdle()).toBe(false); // paused at step 0: Start would train it
    engine.stepOnce();
    expect(engine.trainerIdle()).toBe(false);
    await engine.idle();
    expect([engine.progress().status, engine.trainerIdle()]).toEqual(['paused', false]);
    engine.start();
    await engine.idle();
    expect([engine.progress().status, engine.trainerIdle()]).toEqual(['done', true]);
    engine.reset();
    expect([engine.progress().status, engine.trainerIdle()]).toEqual(['idle', true]);
  });
});

/** A fresh nano policy as a checkpoint (for scripted trainers, which have no policy of their own). */
async function freshCheckpointObject() {
  const init = initParams(MODEL_PRESETS.nano, new Rng(1), { std: 0.02 });
  const params = Object.fromEntries(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v.data)]));
  return { config: MODEL_PRESETS.nano, params, metadata: {}, special: { bosId: 1, eosId: 2, padId: 0 } };
}

/** Every value of a set of named arrays is finite. */
const allFinite = (arrays: Record<string, ArrayLike<number>>) =>
  Object.values(arrays).every((a) => Array.from(a).every(Number.isFinite));

describe('LabEngine divergence (CPU backend, real trainer)', () => {
  it('keeps no non-finite update: pauses naming the metric and step, back at the last saved state, which stays finite', async () => {
    const { engine, events, store } = makeEngine();
    // learning_rate 1 with weight_decay 10 blows the weights up within a few steps.
    const h = await engine.create({
      config: tinyConfig({ num_iterations: 1, learning_rate: 1, weight_decay: 10, steps: 30, eval_every: 0 }),
      preset: 'grpo',
      backend: 'cpu',
    });
    engine.stepOnce();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 1, savedStep: 1 });
    engine.start();
    await engine.idle();

    const p = engine.progress();
    expect(p).toMatchObject({ status: 'paused', step: 1, savedStep: 1, phase: { kind: 'paused', by: 'divergence' } });
    const m =
      /^The run diverged: (\S+) = (NaN|-?Infinity) at step (\d+) \(optimizer step \d+\)\. The update was not kept: the run is paused at its last saved state, step 1/.exec(
        p.message ?? '',
      );
    expect(m, p.message).not.toBeNull();
    expect(Number(m![3])).toBeGreaterThan(1);
    expect(notices(events)).toContain(p.message);
    // The diverged step was never shown; the page got the run's records back as of the saved state.
    for (const r of recordsOf(events))
      expect(Object.values(r.metrics).every(Number.isFinite), `step ${r.step}`).toBe(true);
    const replaced = events.filter((e) => e.type === 'run-data');
    expect(replaced.length).toBe(1);
    expect(replaced[0].type === 'run-data' && replaced[0].records.rows.map((r) => r.step)).toEqual([1]);
    const rows = (await store.readRecords(h.id)).rows;
    expect(rows.map((r) => r.step)).toEqual([1]);
    expect(await store.getRun(h.id)).toMatchObject({
      status: 'paused',
      step: 1,
      savedStep: 1,
      lastMetrics: rows[0].metrics,
    });

    const saved = (await store.getState(h.id))!;
    expect(saved.step).toBe(1);
    const state = decodeTrainerState(saved.state);
    expect(
      allFinite(state.learner.policy) &&
        allFinite(state.learner.policyOptimizer.m) &&
        allFinite(state.learner.policyOptimizer.v),
    ).toBe(true);
    expect(allFinite(decodeCheckpoint(saved.safetensors, saved.configJson).params)).toBe(true);
    const files = await engine.runs.export(h.id, 'checkpoint');
    expect(files[0].name).toMatch(/-step1\/model\.safetensors$/);
    expect(allFinite(decodeCheckpoint(files[0].data as Uint8Array, files[1].data as string).params)).toBe(true);

    // Start continues from the saved state: the next step is step 2 again.
    engine.stepOnce();
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 2, savedStep: 2 });
    expect(engine.progress().message).toBeUndefined();
  });
});

/**
 * A trainer that reports `metricsAt(step)` for each step and whose policy is a fresh nano model, or, from step
 * `nanFrom` on, one with a NaN weight (an update that blew up after its metrics were computed).
 */
function scriptedTrainer(metricsAt: (step: number) => Record<string, number>, nanFrom = Infinity) {
  const created: (number | null)[] = [];
  const factory: TrainerFactory = async (o) => {
    let step = o.resume ? o.resume[0] : 0;
    created.push(o.resume ? o.resume[0] : null);
    return {
      get step() {
        return step;
      },
      async runStep() {
        step++;
        return [
          {
            kind: 'step',
            step,
            optimizerStep: step,
            update: 0,
            updates: 1,
            epoch: 0,
            minibatch: 0,
            metrics: metricsAt(step),
          },
        ];
      },
      evaluate: async () => ({ step, items: 0, accuracy: 0, reward: 0, passAtK: [] }),
      saveStateBytes: async () => Uint8Array.of(step),
      exportCheckpoint: async () => {
        const ck = await freshCheckpointObject();
        if (step >= nanFrom) Object.values(ck.params)[0][0] = NaN;
        return ck;
      },
      destroy: () => undefined,
    };
  };
  return { factory, created };
}

describe('LabEngine divergence and alerts (scripted trainer)', () => {
  it('never saves non-finite weights: a save that finds them rewinds to the last saved state', async () => {
    const t = scriptedTrainer((step) => ({ reward: step }), 2);
    const { engine, store } = makeEngine(new MemoryRunStore(), { createTrainer: t.factory });
    const h = await engine.create({
      config: tinyConfig({ steps: 10, checkpoint: null }),
      preset: 'grpo',
      backend: 'cpu',
    });
    engine.stepOnce();
    await engine.idle();
    engine.stepOnce();
    await engine.idle();
    const p = engine.progress();
    expect(p).toMatchObject({ status: 'paused', step: 1, savedStep: 1 });
    expect(p.message).toMatch(
      /^The run diverged: the policy's weights became non-finite \(\S+\) in the updates of step 2, though the step's metrics were finite\. .*step 1 \(step 2 after it is dropped\)/,
    );
    expect(t.created).toEqual([null, 1]); // a new trainer from the state saved at step 1
    expect((await store.getState(h.id))?.step).toBe(1);
    expect((await store.readRecords(h.id)).rows.map((r) => r.step)).toEqual([1]);
  });

  it('reports an alert at the step it fired, and pauses there (state saved) when alert_action is pause', async () => {
    const collapsed = (step: number) => ({ reward: 0.1 * step, entropy: 0.01 });
    for (const action of ['warn', 'pause'] as const) {
      const t = scriptedTrainer(collapsed);
      const { engine, events, store } = makeEngine(new MemoryRunStore(), { createTrainer: t.factory });
      const h = await engine.create({
        config: tinyConfig({ steps: 6, checkpoint: null, alert_action: action }),
        preset: 'grpo',
        backend: 'cpu',
      });
      engine.start();
      await engine.idle();
      const alerts = events.flatMap((e) => (e.type === 'alert' ? [e] : []));
      expect(alerts.map((e) => [e.runId, e.alert.metric, e.alert.step])).toEqual([[h.id, 'entropy', 3]]);
      expect(alerts[0].alert.message).toMatch(
        /entropy collapse: entropy = 0\.01, at or below 0\.05 for 3 steps.*Lesson: entropy-collapse\.$/,
      );
      // The alert comes after the records of the step it marks.
      const recordsOf3 = events.findIndex((e) => e.type === 'records' && e.records[0].step === 3);
      expect(events.indexOf(alerts[0])).toBeGreaterThan(recordsOf3);
      if (action === 'warn') {
        expect(engine.progress()).toMatchObject({ status: 'done', step: 6 });
      } else {
        expect(engine.progress()).toMatchObject({ status: 'paused', step: 3, savedStep: 3 });
        expect(engine.progress().message).toBe(`Paused by an alert (alert_action pause). ${alerts[0].alert.message}`);
        expect(engine.progress().phase).toEqual({ kind: 'paused', by: 'alert' });
        expect((await store.getState(h.id))?.step).toBe(3);
      }
    }
  });
});

describe('LabEngine progress: phase and pace (scripted trainer, injected clock)', () => {
  it("names the run's phase, and paces it by the recent steps without the session's first (compiling) step", async () => {
    // Step times as the issue saw them: the first step compiles the kernels and evaluates step 0 (16.9 s), then < 1 s.
    const stepMs = [16_900, 700, 800, 900, 1000];
    let clock = 0;
    // A device whose pipelines compile during the steps: three in the first step, 300 ms apart, one in the second.
    const compiled: ((r: CompileRecord) => void)[] = [];
    const compile = () => {
      for (const l of compiled) l({ pipeline: 'k.main', family: 'k', ms: 300, wgslChars: 1 });
    };
    const device = fakeDevice(compiled);
    const t = scriptedTrainer(() => ({ reward: 0.5, entropy: 1 }));
    const factory: TrainerFactory = async (o) => {
      const trainer = await t.factory(o);
      const runStep = trainer.runStep.bind(trainer);
      trainer.runStep = async () => {
        const compiles = trainer.step === 0 ? 3 : trainer.step === 1 ? 1 : 0;
        for (let i = 0; i < compiles; i++) {
          clock += 300;
          compile();
        }
        clock += stepMs[trainer.step] - 300 * compiles;
        return runStep();
      };
      return trainer;
    };
    const { engine, events } = makeEngine(new MemoryRunStore(), {
      createTrainer: factory,
      now: () => clock,
      gpu: async () => device,
    });
    const progressSince = (from: number) =>
      events.slice(from).flatMap((e) => (e.type === 'progress' ? [e.progress] : []));
    await engine.create({ config: tinyConfig({ steps: 5, checkpoint: null }), preset: 'grpo', backend: 'webgpu' });
    expect(progressSince(0)[0].phase).toEqual({ kind: 'loading' });
    expect(engine.progress().phase).toEqual({ kind: 'paused', by: 'person' });

    let from = events.length;
    engine.stepOnce();
    await engine.idle();
    // While the first step runs: evaluating step 0 (eval_every 2) and compiling, each kernel counted as it compiles;
    // after it, no pace (no ETA) yet.
    expect(progressSince(from).map((p) => p.phase)).toEqual([
      ...[0, 1, 2, 3].map((n) => ({ kind: 'warming-up', evaluatesStep0: true, kernelsCompiled: n })),
      { kind: 'training' }, // the step's own progress, before the pause
      { kind: 'paused', by: 'person' },
    ]);
    expect(engine.progress()).toMatchObject({
      step: 1,
      lastStepMs: 16_900,
      paceMs: 0,
      phase: { kind: 'paused', by: 'person' },
    });

    from = events.length;
    engine.stepOnce();
    await engine.idle();
    // A kernel compiled after the first step is not announced: the phase is training.
    expect(progressSince(from).map((p) => p.phase.kind)).toEqual(['training', 'training', 'paused']);
    expect(engine.progress()).toMatchObject({ step: 2, lastStepMs: 700, paceMs: 700 });

    engine.start();
    await engine.idle();
    // The median of 700, 800, 900, 1000: the 16.9 s first step is not in it.
    expect(engine.progress()).toMatchObject({ status: 'done', step: 5, paceMs: 850, phase: { kind: 'done' } });
  });
});

describe('LabEngine with a reward_fn (CPU backend, real trainer, Node sandbox)', () => {
  it('scores with the function, and pauses the run with its message when a batch loops past the time limit', async () => {
    const rewardSandbox: LabEngineDeps['rewardSandbox'] = (source) => nodeRewardSandbox(source, { timeLimitMs: 300 });
    const { engine, events, store } = makeEngine(new MemoryRunStore(), { rewardSandbox });
    await engine.create({
      config: tinyConfig({ steps: 2, eval_every: 0, reward_fn: '(p, c) => c.length' }),
      preset: 'grpo',
      backend: 'cpu',
    });
    engine.stepOnce();
    await engine.idle();
    expect(recordsOf(events).every((r) => Number.isFinite(r.metrics['rewards/user/mean']))).toBe(true);
    engine.reset();

    const h = await engine.create({
      config: tinyConfig({ steps: 2, eval_every: 0, reward_fn: '(p, c) => { for (;;) {} }' }),
      preset: 'grpo',
      backend: 'cpu',
    });
    engine.start();
    await engine.idle();
    const saved = (await store.getRun(h.id))!;
    expect(saved.status).toBe('paused');
    expect(saved.step).toBe(0);
    expect(saved.message).toMatch(
      /^reward_fn did not finish a batch of 8 completions within 0.3 s \(an endless loop\?\), so its sandbox was stopped\. The run is paused at step 0/,
    );
    expect(notices(events).some((n) => n.startsWith('reward_fn did not finish'))).toBe(true);
    engine.reset();
  });

  it('creates no run for a reward_fn that does not compile, and says where it fails', async () => {
    const rewardSandbox: LabEngineDeps['rewardSandbox'] = (source) => nodeRewardSandbox(source);
    const { engine, store } = makeEngine(new MemoryRunStore(), { rewardSandbox });
    const refused = engine.create({
      config: tinyConfig({ steps: 1, eval_every: 0, reward_fn: '(p, c) => c.length +' }),
      preset: 'grpo',
      backend: 'cpu',
    });
    await expect(refused).rejects.toThrow(/^reward_fn does not compile \(line 1, column 21: the function ends early\)/);
    await expect(refused).rejects.toMatchObject({ at: { line: 1, column: 21, atEnd: true } });
    expect(await store.listRuns()).toEqual([]);
    expect(engine.progress().status).toBe('idle');
  });
});

describe('LabEngine saved runs: names and objective A/B after a reload (CPU backend, real trainer)', () => {
  it("renames a run, and opens a finished run's saved state to compare objectives on a fresh batch", async () => {
    const store = new MemoryRunStore();
    const first = makeEngine(store);
    const h = await first.engine.create({
      config: tinyConfig({ steps: 1, eval_every: 0 }),
      preset: 'grpo',
      backend: 'cpu',
    });
    first.engine.start();
    await first.engine.idle();
    expect((await store.getRun(h.id))!.status).toBe('done');
    first.engine.reset();

    // A new engine on the same store: the page after a reload.
    const { engine } = makeEngine(store);
    await expect(engine.runs.rename(h.id, 'line\nbreak')).rejects.toThrow(/one line of text/);
    expect((await engine.runs.rename(h.id, '  my baseline ')).name).toBe('my baseline');
    expect((await store.getRun(h.id))!.name).toBe('my baseline');
    await expect(engine.resume(h.id)).rejects.toThrow(/has done all its 1 steps/);
    const records = await engine.openSaved(h.id);
    expect(records.rows.length).toBeGreaterThan(0);
    expect(engine.progress()).toMatchObject({ runId: h.id, status: 'done', step: 1 });
    expect(() => engine.start()).toThrow(/has done all its 1 steps/);
    const b = resolveConfig('dapo', { ...tinyConfig({ steps: 1, eval_every: 0 }) });
    const { runId, comparison } = await engine.compareObjectives({ ...b, task: 'copy' }, 'fresh');
    expect(runId).toBe(h.id);
    expect(comparison.source).toBe('fresh');
    expect(comparison.rows.length).toBe(8);
    // Nothing of the saved run changed.
    expect((await store.getRun(h.id))!).toMatchObject({ status: 'done', step: 1, name: 'my baseline' });
    expect((await engine.runs.rename(h.id, '')).name).toBe(defaultRunName(h.config, 'grpo'));
    engine.reset();
  });
});

describe('LabEngine seed groups (scripted trainer)', () => {
  /** The scripted trainer, except that the run at `failingSeed` throws in its second step. */
  function seededFactory(failingSeed: number | null) {
    const t = scriptedTrainer((step) => ({ reward: step }));
    const factory: TrainerFactory = async (o) => {
      const trainer = await t.factory(o);
      if (o.config.seed !== failingSeed) return trainer;
      return {
        ...trainer,
        get step() {
          return trainer.step;
        },
        runStep: async () => (trainer.step >= 1 ? Promise.reject(new Error('scripted failure')) : trainer.runStep()),
      };
    };
    return factory;
  }

  it('runs seed s, s+1, s+2 one after the other as named runs of one group; a failed seed is named and the others go on', async () => {
    const { engine, events, store } = makeEngine(new MemoryRunStore(), { createTrainer: seededFactory(6) });
    await engine.startSeeds({
      config: tinyConfig({ steps: 3, checkpoint: null, seed: 5 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 3,
    });
    await engine.idle();
    const runs = (await store.listRuns()).sort((a, b) => a.seedGroup!.index - b.seedGroup!.index);
    expect(runs.map((h) => [h.config.seed, h.status, h.step, h.seedGroup!.index, h.seedGroup!.size])).toEqual([
      [5, 'done', 3, 0, 3],
      [6, 'failed', 1, 1, 3],
      [7, 'done', 3, 2, 3],
    ]);
    expect(new Set(runs.map((h) => h.seedGroup!.id)).size).toBe(1);
    expect(runs.map((h) => h.name)).toEqual([
      'GRPO (DeepSeekMath) · copy 3 · seed 5',
      'GRPO (DeepSeekMath) · copy 3 · seed 6',
      'GRPO (DeepSeekMath) · copy 3 · seed 7',
    ]);
    expect(notices(events)).toEqual([
      'Seed 6 of the seed group failed: scripted failure. The other seed goes on.',
      'The seed group finished with 2 of 3 seeds trained; not trained: seed 6 (failed: scripted failure).',
    ]);
    // While the queue went on, each run's progress said where in the group it was; after it, nothing.
    const queued = events.flatMap((e) =>
      e.type === 'progress' && e.progress.seedQueue
        ? [[e.progress.seedQueue.index, e.progress.seedQueue.failedSeeds.join(',')]]
        : [],
    );
    expect(new Set(queued.map((q) => JSON.stringify(q)))).toEqual(new Set(['[0,""]', '[1,""]', '[2,"6"]']));
    expect(engine.progress().seedQueue).toBeUndefined();
    expect(engine.progress()).toMatchObject({ status: 'done', step: 3, name: runs[2].name });
    // One run hands over to the next with no idle moment between them (the page would offer Start in it).
    expect(events.some((e) => e.type === 'progress' && e.progress.status === 'idle')).toBe(false);
  });

  it('goes on past a seed whose run cannot start, and names it', async () => {
    const t = scriptedTrainer((step) => ({ reward: step }));
    const factory: TrainerFactory = (o) =>
      o.config.seed === 0 ? Promise.reject(new Error('no trainer for seed 0')) : t.factory(o);
    const { engine, events, store } = makeEngine(new MemoryRunStore(), { createTrainer: factory });
    await engine.startSeeds({
      config: tinyConfig({ steps: 2, checkpoint: null, seed: 0 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 2,
    });
    await engine.idle();
    expect((await store.listRuns()).map((h) => [h.config.seed, h.status, h.seedGroup?.index])).toEqual([
      [1, 'done', 1],
    ]);
    expect(notices(events)).toEqual([
      'Seed 0 of the seed group could not start: no trainer for seed 0. The other seed goes on.',
      'The seed group finished with 1 of 2 seeds trained; not trained: seed 0 (could not start: no trainer for seed 0).',
    ]);
  });

  it('a seed interrupted by a lost device is named, and the next seed trains on a new device', async () => {
    const t = scriptedTrainer((step) => ({ reward: step }));
    let lost = false;
    const factory: TrainerFactory = async (o) => {
      const trainer = await t.factory(o);
      const runStep = async () => {
        await new Promise((r) => setTimeout(r, 5));
        if (lost && o.config.seed === 0) throw new Error('mapAsync: device lost');
        return trainer.runStep();
      };
      return {
        ...trainer,
        get step() {
          return trainer.step;
        },
        runStep,
      };
    };
    const { engine, events, store } = makeEngine(new MemoryRunStore(), {
      createTrainer: factory,
      gpu: async () => fakeDevice(),
    });
    await engine.startSeeds({
      config: tinyConfig({ steps: 50, checkpoint: null, seed: 0 }),
      preset: 'grpo',
      backend: 'webgpu',
      seeds: 2,
    });
    while (engine.progress().step < 2) await new Promise((r) => setTimeout(r, 5));
    lost = true;
    await engine.deviceLost('GPU device lost (unknown): the driver was reset');
    await engine.idle();
    expect((await store.listRuns()).map((h) => [h.config.seed, h.status]).sort()).toEqual([
      [0, 'interrupted'],
      [1, 'done'],
    ]);
    expect(notices(events)[0]).toMatch(
      /^Seed 0 of the seed group was interrupted: GPU device lost \(unknown\): the driver was reset\. Resume continues from the last saved state.*\. The other seed goes on\.$/,
    );
  });

  it("Step takes one step: at a seed's last step the next seed's run is created and waits, paused", async () => {
    const { engine, store } = makeEngine(new MemoryRunStore(), { createTrainer: seededFactory(null) });
    await engine.startSeeds({
      config: tinyConfig({ steps: 1, checkpoint: null, seed: 3 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 2,
    });
    await engine.idle();
    // Started freely, both seeds ran; a second group is then stepped through.
    expect((await store.listRuns()).map((h) => h.status)).toEqual(['done', 'done']);
    await engine.startSeeds({
      config: tinyConfig({ steps: 2, checkpoint: null, seed: 20 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 2,
    });
    engine.pause(); // after its first step
    await engine.idle();
    expect(engine.progress()).toMatchObject({ status: 'paused', step: 1, name: expect.stringMatching(/seed 20$/) });
    engine.stepOnce(); // seed 20's last step
    await engine.idle();
    expect(engine.progress()).toMatchObject({
      status: 'paused',
      step: 0,
      name: expect.stringMatching(/seed 21$/),
      seedQueue: { index: 1, size: 2 },
    });
    expect(
      (await store.listRuns())
        .filter((h) => h.config.seed >= 20)
        .map((h) => [h.config.seed, h.status])
        .sort(),
    ).toEqual([
      [20, 'done'],
      [21, 'paused'],
    ]);
  });

  it('pause holds the queue at the current seed and start continues it; reset drops the seeds not run', async () => {
    let pauseAtFirstStep = true;
    const { engine, events, store } = makeEngine(new MemoryRunStore(), {
      createTrainer: seededFactory(null),
      emit: (e) => {
        events.push(e);
        if (e.type === 'records' && pauseAtFirstStep) {
          pauseAtFirstStep = false;
          engine.pause();
        }
      },
    });
    await engine.startSeeds({
      config: tinyConfig({ steps: 2, checkpoint: null, seed: 0 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 3,
    });
    await engine.idle();
    expect(engine.progress()).toMatchObject({
      status: 'paused',
      step: 1,
      seedQueue: { index: 0, size: 3, failedSeeds: [] },
    });
    expect((await store.listRuns()).length).toBe(1);

    engine.start();
    await engine.idle();
    // Seed 0 ran to its end and the queue went on with seed 1 and 2, trained to the end.
    expect((await store.listRuns()).map((h) => [h.config.seed, h.status]).sort()).toEqual([
      [0, 'done'],
      [1, 'done'],
      [2, 'done'],
    ]);

    pauseAtFirstStep = true;
    await engine.startSeeds({
      config: tinyConfig({ steps: 2, checkpoint: null, seed: 10 }),
      preset: 'grpo',
      backend: 'cpu',
      seeds: 3,
    });
    await engine.idle();
    engine.reset();
    expect(notices(events)).toContain('The seed group stopped: seeds 11, 12 were not run.');
    expect(engine.progress()).toMatchObject({ status: 'idle' });
    expect((await store.listRuns()).filter((h) => h.config.seed >= 10).map((h) => [h.config.seed, h.status])).toEqual([
      [10, 'paused'],
    ]);
    await expect(
      engine.startSeeds({ config: tinyConfig({ checkpoint: null }), preset: 'grpo', backend: 'cpu', seeds: 11 }),
    ).rejects.toThrow('a seed group has 2 to 10 seeds (got 11)');
  });
});
