// One run, three drivers: the page's LabEngine, `npm run train` and the lesson runner all drive a RunSession, so the
// same config gives the same outcome through each (CPU backend, the shipped copy warm start, in process):
// - a diverging config stops at the same step, naming the same metric, back at the same saved step, with the same
//   records kept;
// - an alerting config raises the same alerts in the same order;
// - a run stopped after its second step and resumed reaches the same step-4 metrics as the lesson runner's
//   uninterrupted run;
// - a seed group (seed-group-run.ts) gives each seed's run the same records from the page's queue and from
//   `npm run train -- --seeds`;
// - a supervised run (mode 'sft', no RL trainer behind it) gives the same records and weights through the page's
//   engine as sft.ts's own loop on the start policy (`npm run train -- --sft`, a session of the same mode on the
//   GPU, is checked against that loop in src/cli/train-sft.test.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Lesson } from '../lessons/lesson';
import { runLesson } from '../cli/lesson-run';
import { configWarnings, resolveConfig, type RLConfig } from '../schema/config';
import { decodeTrainerState } from '../rl/algorithm/trainer-state';
import type { Metrics } from '../schema/stream';
import { decodeCheckpoint } from '../io/checkpoint';
import { CpuPolicy } from '../model/policy';
import { taskOf } from '../schema/config';
import { trainSft } from '../rl/learners/sft';
import { LabEngine } from './lab-engine';
import { loadStartPolicy } from './start-policy';
import { supervisedOptions } from './supervised-trainer';
import { trainInProcess as cli } from '../testing/train-in-process';
import { PUBLIC_ASSETS } from './node-assets';
import { MemoryRunStore } from './run-store';
import type { EngineEvent } from '../schema/run-types';

/** The knobs every driver gets: GRPO on copy from its warm start, 2 prompts x 4 completions, saved every step. */
const KNOBS = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'copy',
  train_batch_size: 2,
  num_generations: 4,
  num_iterations: 1,
  eval_every: 0,
  save_every: 1,
  seed: 0,
} as const;
/** learning_rate 1 with weight_decay 10 blows the weights up within a few steps. */
const DIVERGING = { ...KNOBS, learning_rate: 1, weight_decay: 10, steps: 30 } as const;
const PLAIN = { ...KNOBS, steps: 4 } as const;
/** Two seeds of two steps each. */
const SEEDED = { ...KNOBS, steps: 2, seed: 5 } as const;
/** A fresh model on copy: every group fails alike, which the alerts catch (4 steps: past the longest alert window, 3). */
const ALERTING = { ...KNOBS, checkpoint: null, steps: 4 } as const;

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'rl-lab-drivers-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const config = (knobs: Partial<RLConfig>) => resolveConfig('grpo', knobs);

function engine() {
  const events: EngineEvent[] = [];
  const store = new MemoryRunStore();
  const e = new LabEngine({
    store,
    assets: PUBLIC_ASSETS,
    gpu: () => Promise.reject(new Error('no GPU in this test')),
    emit: (x) => events.push(x),
  });
  return { engine: e, events, store };
}

/** The CLI's flags for a config's knobs. */
const flags = (knobs: Record<string, string | number | null>) =>
  Object.entries(knobs).flatMap(([k, v]) => [`--${k}`, String(v)]);

/** A one-run lesson of the given knobs (its check observes nothing; the runner's records are what is compared). */
function lessonOf(knobs: Partial<RLConfig> & { steps: number }): Lesson {
  const { steps, ...overrides } = knobs;
  return {
    id: 'drivers',
    title: 'drivers',
    source: 'test',
    question: { prompt: '', choices: [], answer: 0, why: '' },
    runs: [{ key: 'a', label: 'A', preset: 'grpo', overrides }],
    steps,
    look: '',
    narration: [],
    highlight: { charts: [], planes: [] },
    check: { claim: '', whyNot: '', evaluate: () => ({ observed: false, values: {}, summary: '' }) },
    explain: '',
    next: '',
  };
}

const jsonl = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, number>);

/** A metric row without its wall times (which differ from run to run), keyed as the CLI's metrics.jsonl. */
const timeless = (row: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(row).filter(([k]) => !/^(perf\/|timing_s\/|step_time$)/.test(k)));

/** "The run diverged: entropy = NaN at step 5 (optimizer step 5)" of a message. */
const firstSentence = (m: string) => m.split('. ')[0];

describe('the engine, the CLI and the lesson runner drive one run the same way', () => {
  it('a diverging config: the same step, metric, saved state and records from each', async () => {
    // The page's engine: pauses at its last saved state with the message.
    const { engine: e, store } = engine();
    const h = await e.create({ config: config(DIVERGING), preset: 'grpo', backend: 'cpu' });
    e.start();
    await e.idle();
    const p = e.progress();
    expect(p.status).toBe('paused');
    const engineMessage = p.message ?? '';
    expect(engineMessage).toMatch(/^The run diverged: \S+ = (NaN|-?Infinity) at step \d+/);
    const engineSaved = p.savedStep;
    const engineRows = (await store.readRecords(h.id)).rows.map((r) => r.step);

    // The CLI: exits with the same message, its logs and saved pair at the same step.
    const out = tempDir();
    const run = await cli([...flags({ ...DIVERGING, preset: 'grpo' }), '--backend', 'cpu', '--quiet', '--out', out]);
    expect(run.error).not.toBeNull();
    expect(firstSentence(run.error!.message)).toBe(firstSentence(engineMessage));
    expect(run.error!.message).toContain(`the run stopped at its last saved state, step ${engineSaved}`);
    expect([...new Set(jsonl(join(out, 'metrics.jsonl')).map((r) => r.step))]).toEqual([...new Set(engineRows)]);
    expect(decodeTrainerState(new Uint8Array(readFileSync(join(out, 'trainer_state.safetensors')))).meta.step).toBe(
      engineSaved,
    );

    // The lesson runner: stops with the same message.
    const stopped = await runLesson(lessonOf(DIVERGING), {
      seed: 0,
      backend: { kind: 'cpu' },
      assets: PUBLIC_ASSETS,
    }).then(
      () => null,
      (x: Error) => x,
    );
    expect(stopped).not.toBeNull();
    expect(firstSentence(stopped!.message)).toBe(firstSentence(engineMessage));
    expect((stopped as Error & { savedStep?: number }).savedStep).toBe(engineSaved);
  });

  it('an alerting config: the same alerts, in the same order, from each', async () => {
    const { engine: e, events } = engine();
    await e.create({ config: config(ALERTING), preset: 'grpo', backend: 'cpu' });
    e.start();
    await e.idle();
    const engineAlerts = events.flatMap((x) => (x.type === 'alert' ? [x.alert.message] : []));
    // A fresh model fails every completion: the all-equal-groups alert fires, so the comparison says something.
    expect(engineAlerts.length).toBeGreaterThan(0);

    const run = await cli([
      ...flags({ ...ALERTING, checkpoint: 'null', preset: 'grpo' }),
      '--backend',
      'cpu',
      '--quiet',
      '--out',
      tempDir(),
    ]);
    expect(run.error).toBeNull();
    const configNotes = new Set(configWarnings(config(ALERTING)));
    const cliAlerts = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('warning: '))
      .map((l) => l.slice('warning: '.length))
      .filter((l) => !configNotes.has(l));
    expect(cliAlerts).toEqual(engineAlerts);

    const lessonAlerts: string[] = [];
    await runLesson(lessonOf(ALERTING), {
      seed: 0,
      backend: { kind: 'cpu' },
      assets: PUBLIC_ASSETS,
      onAlert: (_r, a) => lessonAlerts.push(a.message),
    });
    expect(lessonAlerts).toEqual(engineAlerts);
  });

  it('stopped after step 2 and resumed: the same step-4 metrics as an uninterrupted run', async () => {
    // The lesson runner's uninterrupted run.
    let uninterrupted: Metrics | null = null;
    await runLesson(lessonOf(PLAIN), {
      seed: 0,
      backend: { kind: 'cpu' },
      assets: PUBLIC_ASSETS,
      onRun: (r) => (uninterrupted = r.steps[r.steps.length - 1]),
    });
    expect(uninterrupted).not.toBeNull();

    // The engine: two steps, then the engine goes away (a closed tab); a new one resumes the saved run to the end.
    const first = engine();
    const h = await first.engine.create({ config: config(PLAIN), preset: 'grpo', backend: 'cpu' });
    first.engine.stepOnce();
    await first.engine.idle();
    first.engine.stepOnce();
    await first.engine.idle();
    expect(first.engine.progress()).toMatchObject({ step: 2, savedStep: 2 });
    const second = new LabEngine({
      store: first.store,
      assets: PUBLIC_ASSETS,
      gpu: () => Promise.reject(new Error('no GPU')),
      emit: () => undefined,
    });
    await second.runs.recover();
    await second.resume(h.id);
    second.start();
    await second.idle();
    expect(second.progress()).toMatchObject({ status: 'done', step: 4 });
    const engineLast = (await first.store.readRecords(h.id)).rows.at(-1)!.metrics;

    // The CLI: a run of 2 steps, then --resume to 4.
    const out = tempDir();
    expect(
      (await cli([...flags({ ...PLAIN, steps: 2, preset: 'grpo' }), '--backend', 'cpu', '--quiet', '--out', out]))
        .error,
    ).toBeNull();
    const resumed = await cli([
      '--resume',
      join(out, 'trainer_state.safetensors'),
      '--steps',
      '4',
      '--backend',
      'cpu',
      '--quiet',
    ]);
    expect(resumed.error).toBeNull();
    const cliLast = jsonl(join(out, 'metrics.jsonl')).at(-1)!;

    for (const k of ['reward', 'entropy', 'kl', 'grad_norm', 'loss'] as const) {
      expect(engineLast[k], k).toBe(uninterrupted![k]);
      expect(cliLast[k], k).toBe(uninterrupted![k]);
    }
  });

  it("a seed group: each seed's run has the same records from the page's queue and from the CLI", async () => {
    const { engine: e, store } = engine();
    await e.startSeeds({ config: config(SEEDED), preset: 'grpo', backend: 'cpu', seeds: 2 });
    await e.idle();
    const runs = (await store.listRuns()).sort((a, b) => a.seedGroup!.index - b.seedGroup!.index);
    expect(runs.map((h) => [h.config.seed, h.status, h.seedGroup?.index, h.seedGroup?.size])).toEqual([
      [5, 'done', 0, 2],
      [6, 'done', 1, 2],
    ]);

    const out = tempDir();
    const run = await cli([
      ...flags({ ...SEEDED, preset: 'grpo' }),
      '--seeds',
      '2',
      '--backend',
      'cpu',
      '--quiet',
      '--out',
      out,
    ]);
    expect(run.error).toBeNull();
    expect(run.code).toBe(0);
    for (const h of runs) {
      const rows = (await store.readRecords(h.id)).rows.map((r) =>
        timeless({
          step: r.step,
          optimizer_step: r.optimizerStep,
          update: r.update,
          updates: r.updates,
          epoch: r.epoch,
          minibatch: r.minibatch,
          ...r.metrics,
        }),
      );
      const lines = jsonl(join(out, `seed-${h.config.seed}`, 'metrics.jsonl')).map(timeless);
      expect(rows.length).toBe(SEEDED.steps);
      expect(lines).toEqual(rows);
    }
    // The two seeds trained differently (the comparison is not of two copies of one run).
    const seedRows = (seed: number) => jsonl(join(out, `seed-${seed}`, 'metrics.jsonl')).map(timeless);
    expect(seedRows(5)).not.toEqual(seedRows(6));
  });

  it("a supervised run: the engine's records and weights equal sft.ts's own loop on the start policy", async () => {
    const sft = config({ ...KNOBS, steps: 3 });
    const { engine: e, store } = engine();
    const h = await e.create({ config: sft, preset: 'grpo', backend: 'cpu', mode: 'sft' });
    e.start();
    await e.idle();
    expect(e.progress()).toMatchObject({ status: 'done', step: 3 });
    const rows = (await store.readRecords(h.id)).rows.map((r) => [r.step, r.metrics.loss, r.metrics.learning_rate]);
    const files = await e.runs.export(h.id, 'checkpoint');

    // The loop itself: sft.ts on the start policy, a CPU policy of its weights.
    const start = await loadStartPolicy(sft, PUBLIC_ASSETS);
    const policy = new CpuPolicy(start.init.config, start.init.params);
    const direct: (number | undefined)[][] = [];
    for await (const p of trainSft(policy, taskOf(sft), start.tokenizer, supervisedOptions(sft)))
      direct.push([p.step, p.loss, p.lr]);
    expect(rows).toEqual(direct);
    const file = (name: string) => files.find((f) => f.name.endsWith(`/${name}`))!.data;
    const engineWeights = decodeCheckpoint(file('model.safetensors') as Uint8Array, file('config.json') as string);
    expect(engineWeights.params).toEqual(await policy.download());
  });
});
