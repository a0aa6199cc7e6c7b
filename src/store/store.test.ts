// The store without a DOM, each test on a fresh store with a fake engine: a shared link's config is read back
// exactly (or refused with a message and the defaults), edits validate per field, a preset switch keeps the
// experiment, the worker's messages land in the right slices, the run controls' rules (selectors) decide both
// the buttons and what the actions send, stores share nothing, and config diffs name exactly the differing fields.
import { beforeEach, describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import type { RunHeader, RunProgress } from '../schema/run-types';
import type { AdapterReport } from '../gpu/adapter';
import { configToUrlParams, resolveConfig } from '../schema/config';
import { pageHubSources } from '../schema/hub-origins';
import { TEST_HOOKS_GLOBAL, type Response } from '../worker/protocol';
import { configDiff, differsFromPreset, switchPreset } from './config-diff';
import { ALERT_RULES } from '../rl/observation/alerts';
import { alertsOn, createLabStore, IDLE_PROGRESS, LAB_DEFAULT, type LabStore } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';
import {
  canContinue,
  canPause,
  canResumeRun,
  canStart,
  canStep,
  chartRunIds,
  isBusy,
  runExports,
  runStep,
  startBlocker,
  startLabel,
} from './selectors';
import { statusLineOf } from './status-line';

/** A store whose engine records the requests it gets; `respond` plays the worker. */
function labWithFakeEngine() {
  const engine = fakeEngine();
  const store = createLabStore({ connect: engine.connect });
  return { store, ...engine };
}

let useLab: LabStore;
beforeEach(() => {
  useLab = labWithFakeEngine().store;
});

const progress = (p: Partial<RunProgress>): RunProgress => ({ ...IDLE_PROGRESS, ...p });

/** The worker's answer once it has a device. */
const READY: Response = {
  type: 'ready',
  report: {
    runtime: 'browser',
    vendor: 'google',
    architecture: 'swiftshader',
    device: '',
    description: '',
    isFallbackAdapter: true,
    features: [],
    limits: {} as AdapterReport['limits'],
  },
};

function header(id: string, config: RunHeader['config'], p: Partial<RunHeader> = {}): RunHeader {
  return {
    id,
    name: id,
    createdAt: 0,
    updatedAt: 0,
    config,
    preset: 'grpo',
    backend: 'webgpu',
    status: 'paused',
    step: 3,
    savedStep: 3,
    elapsedMs: 0,
    adapter: '',
    lastMetrics: {},
    ...p,
  };
}

describe('config slice', () => {
  it('reads a shared link back to the same config and preset', () => {
    const c = resolveConfig('dapo', {
      task: 'sort',
      difficulty: 4,
      seed: 123,
      num_iterations: 2,
      reward_weights: { accuracy: 0.8, format: 0.2 },
    });
    useLab.getState().initConfig(`?${configToUrlParams(c, 'dapo')}`);
    const s = useLab.getState();
    expect(s.urlError).toBeNull();
    expect(s.preset).toBe('dapo');
    expect(s.check.config).toEqual(c);
  });

  it('names every problem of a bad link and shows the defaults when nothing of it is good', () => {
    useLab.getState().initConfig('?preset=grpoo&temperature=hot&lr=3');
    const s = useLab.getState();
    expect(s.urlError).toMatch(/preset: must be one of/);
    expect(s.urlError).toMatch(/temperature: must be a number/);
    expect(s.urlError).toMatch(/did you mean learning_rate/);
    expect(s.preset).toBeNull();
    expect(s.check.config).toEqual(resolveConfig(null));
  });

  it('keeps the good fields of a partly bad link and names the bad ones', () => {
    useLab.getState().initConfig('?preset=dapo&seed=7&task=sort&beta=abc');
    const s = useLab.getState();
    expect(s.preset).toBe('dapo');
    expect(s.check.config).toEqual(resolveConfig('dapo', { seed: 7, task: 'sort' }));
    expect(s.urlError).toBe(
      'The link\'s config is used except for what is named below.\nbeta: must be a number in [0, 10], got "abc"',
    );
  });

  it('summarizes a link with many bad fields: five problems, a count of the rest', () => {
    const params = new URLSearchParams('seed=4');
    for (let i = 0; i < 900; i++) params.set(`unknown_${i}`, '1');
    useLab.getState().initConfig(`?${params}`);
    const s = useLab.getState();
    expect(s.check.config?.seed).toBe(4);
    expect(s.urlError!.split('\n')).toEqual([
      "The link's config is used except for what is named below.",
      ...Array.from({ length: 5 }, (_, i) => `unknown field unknown_${i}`),
      'and 895 more problems',
    ]);
  });

  it('quotes a 10,000-character bad value cut, with no unbroken run longer than a line', () => {
    useLab.getState().initConfig(`?temperature=${'7'.repeat(10_000)}`);
    const { urlError } = useLab.getState();
    expect(urlError).toContain(
      `temperature: must be a number in (0, 100], got "${'7'.repeat(80)}"... (10000 characters)`,
    );
    expect(urlError!.length).toBeLessThan(400);
    expect(Math.max(...urlError!.split(/\s+/).map((w) => w.length))).toBeLessThanOrEqual(90);
  });

  it("stops naming a link's field once the person edits it, and closes when nothing is left", () => {
    useLab.getState().initConfig('?preset=dapo&beta=abc&temperature=hot&nope=1');
    const s = () => useLab.getState();
    expect(s().urlError).toMatch(/^beta: must be a number/m);
    s().setField('beta', 0.01);
    expect(s().urlError).not.toMatch(/beta: /);
    expect(s().urlError).toMatch(/temperature: must be a number/);
    // A field the link did not get wrong leaves the notice as it is.
    const before = s().urlError;
    s().setField('seed', 3);
    expect(s().urlError).toBe(before);
    s().setField('temperature', 0.9);
    // An unknown field is no field to edit: the notice still names it.
    expect(s().urlError).toBe("The link's config is used except for what is named below.\nunknown field nope");
    s().dismissUrlError();
    expect(s().urlError).toBeNull();
    useLab.getState().initConfig('?preset=dapo&beta=abc');
    s().setField('beta', 0.02);
    expect(s().urlError).toBeNull();
    // A field the link's cross-field check left at the preset's value (teachers against the prompt list's ids).
    const prompts = '{"prompt": "ab", "answer": "ab", "teacher_id": "rev"}';
    useLab.getState().initConfig(`?${new URLSearchParams({ task: 'prompts', prompts, teachers: 'self=copy' })}`);
    expect(s().urlError).toMatch(/\(teachers stay at the preset's values\)/);
    s().setField('teachers', { self: 'copy', rev: 'reverse' });
    expect(s().urlError).toBeNull();
  });

  it('closes the link notice', () => {
    useLab.getState().initConfig('?nope=1');
    expect(useLab.getState().urlError).toMatch(/unknown field nope/);
    useLab.getState().dismissUrlError();
    expect(useLab.getState().urlError).toBeNull();
  });

  it('holds back a checkpoint on another origin until the person confirms it, a hub origin only', () => {
    const site = 'https://lab.example/rl/';
    const hub = 'https://huggingface.co/org/name/resolve/main';
    const lab = labWithFakeEngine().store;
    lab.getState().initConfig(`?preset=grpo&seed=5&checkpoint=${encodeURIComponent(hub)}`, site);
    const held = lab.getState();
    expect(held.linkCheckpoint).toEqual({ checkpoint: hub, origin: 'https://huggingface.co', reachable: true });
    expect(held.draft.checkpoint).toBeNull();
    expect(held.check.config).toEqual(resolveConfig('grpo', { seed: 5 }));
    held.confirmLinkCheckpoint();
    expect(lab.getState().draft.checkpoint).toBe(hub);
    expect(lab.getState().linkCheckpoint).toBeNull();
    // Another site: held back, and not confirmable, since the page's CSP would refuse the connection.
    for (const url of ['http://169.254.169.254/latest/ck', 'https://elsewhere.example/ck', '//elsewhere.example/ck']) {
      const other = labWithFakeEngine().store;
      other.getState().initConfig(`?preset=grpo&seed=5&checkpoint=${encodeURIComponent(url)}`, site);
      expect(other.getState().linkCheckpoint).toEqual({
        checkpoint: url,
        origin: new URL(url, site).origin,
        reachable: false,
      });
      other.getState().confirmLinkCheckpoint();
      expect(other.getState().draft.checkpoint).toBeNull();
    }
    useLab.getState().initConfig('?checkpoint=https%3A%2F%2Fhuggingface.co%2Fck', site);
    useLab.getState().refuseLinkCheckpoint();
    expect(useLab.getState().linkCheckpoint).toBeNull();
    expect(useLab.getState().draft.checkpoint).toBeNull();
  });

  it("checks a link's origin against the list its CSP was built with", () => {
    const lab = labWithFakeEngine().store;
    expect(lab.getState().hubOrigins).toEqual(pageHubSources());
    lab.setState({ hubOrigins: [...pageHubSources(), 'http://127.0.0.1:4311'] });
    lab
      .getState()
      .initConfig(
        `?checkpoint=${encodeURIComponent('http://127.0.0.1:4311/org/n/resolve/main')}`,
        'https://lab.example/',
      );
    expect(lab.getState().linkCheckpoint?.reachable).toBe(true);
    lab.getState().initConfig(`?checkpoint=${encodeURIComponent('http://127.0.0.1:4312/ck')}`, 'https://lab.example/');
    expect(lab.getState().linkCheckpoint?.reachable).toBe(false);
  });

  it("uses a shipped checkpoint or one on the page's own origin without asking", () => {
    const site = 'https://lab.example/rl/';
    for (const ck of ['addition', 'https://lab.example/rl/my-ck', 'runs/mine']) {
      const lab = labWithFakeEngine().store;
      lab.getState().initConfig(`?checkpoint=${encodeURIComponent(ck)}`, site);
      expect(lab.getState().linkCheckpoint).toBeNull();
      expect(lab.getState().draft.checkpoint).toBe(ck);
    }
  });

  it('holds back a data: URL checkpoint, shown by its scheme', () => {
    useLab
      .getState()
      .initConfig(
        `?checkpoint=${encodeURIComponent('data:application/octet-stream;base64,AAAA')}`,
        'https://lab.example/',
      );
    expect(useLab.getState().linkCheckpoint?.origin).toBe('data: URL');
  });

  it("ignores the page's own parameters and an empty query", () => {
    useLab.getState().initConfig('?bench');
    expect(useLab.getState().urlError).toBeNull();
    expect(useLab.getState().preset).toBe(LAB_DEFAULT.preset);
  });

  it('validates edits per field and recovers when fixed', () => {
    const { setField } = useLab.getState();
    setField('temperature', 'hot');
    expect(useLab.getState().check.fieldErrors.temperature).toMatch(/must be a number/);
    expect(useLab.getState().check.config).toBeNull();
    setField('epsilon_high', 0.1);
    setField('temperature', 0.7);
    expect(useLab.getState().check.fieldErrors.epsilon_high).toMatch(/must be >= epsilon/);
    setField('epsilon_high', null);
    expect(useLab.getState().check.config?.temperature).toBe(0.7);
  });

  it('switching preset takes the algorithm knobs and keeps the experiment', () => {
    const { setField, applyPreset } = useLab.getState();
    setField('seed', 9);
    setField('train_batch_size', 2);
    setField('num_iterations', 3);
    applyPreset('dapo');
    const c = useLab.getState().check.config!;
    expect(c).toMatchObject({
      seed: 9,
      train_batch_size: 2,
      task: LAB_DEFAULT.overrides.task,
      checkpoint: LAB_DEFAULT.overrides.checkpoint,
      temperature: LAB_DEFAULT.overrides.temperature,
      epsilon_high: 0.28,
      dynamic_sampling: true,
      beta: 0,
    });
    expect(c.num_iterations).toBe(1); // an algorithm knob: the preset's (default) value
    expect(switchPreset({ ...resolveConfig('grpo'), dynamic_sampling: true }, 'grpo').dynamic_sampling).toBe(false);
  });

  it('marks the fields that differ from the preset', () => {
    const d = differsFromPreset({ ...resolveConfig('grpo'), seed: 3, beta: 0.04 }, 'grpo');
    expect([...d]).toEqual(['seed']);
  });

  it('picks the warm start of a task when the task changes', () => {
    useLab.setState({ warmStarts: [{ name: 'copy', task: 'copy', difficulty: 5, accuracy: 0.3 }] });
    useLab.getState().setTask('copy');
    expect(useLab.getState().check.config).toMatchObject({ task: 'copy', checkpoint: 'copy', difficulty: 5 });
    useLab.getState().setTask('countdown');
    expect(useLab.getState().check.config).toMatchObject({ task: 'countdown', checkpoint: null, difficulty: null });
  });
});

describe('worker messages', () => {
  it('follow a new run: its view, its metrics, its groups and evaluations', () => {
    const h = useLab.getState().handleResponse;
    h({ type: 'progress', progress: progress({ runId: 'r1', status: 'running', step: 0, totalSteps: 5 }) });
    expect(useLab.getState().viewRunId).toBe('r1');
    h({
      type: 'metrics',
      runId: 'r1',
      batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.5 } }]),
    });
    h({
      type: 'metrics',
      runId: 'r1',
      batch: packRows([{ step: 2, optimizerStep: 2, epoch: 0, minibatch: 0, metrics: { reward: 0.75 } }]),
    });
    const v = useLab.getState().views.r1;
    expect(v.version).toBe(2);
    expect(Array.from(v.table.column('reward')!)).toEqual([0.5, 0.75]);
    h({ type: 'rollouts', runId: 'r1', step: 2, groups: [], texts: [] });
    expect(useLab.getState().views.r1.rolloutSteps).toEqual([2]);
    expect(useLab.getState().rollouts['r1@2']).toBeDefined();
    // Every group of a step in brief arrives with its sampled groups; a step's histograms arrive with its rows.
    const batch = [
      {
        index: 0,
        prompt: 'p',
        answer: 'a',
        completions: [{ text: 'a', length: 2, finished: true, reward: 1, passed: true, advantage: 0.5, masked: false }],
      },
    ];
    h({ type: 'rollouts', runId: 'r1', step: 3, groups: [], texts: [], batch });
    expect(useLab.getState().rollouts['r1@3'].batch).toEqual(batch);
    h({
      type: 'metrics',
      runId: 'r1',
      batch: packRows([
        { step: 3, optimizerStep: 3, epoch: 0, minibatch: 0, metrics: { reward: 1 }, histograms: { entropy: [1, 2] } },
      ]),
    });
    expect(useLab.getState().views.r1.table.histograms()).toEqual([[3, { entropy: [1, 2] }]]);
    h({ type: 'evals', runId: 'r1', evals: [{ step: 2, items: 2, accuracy: 0.5, reward: 0.5, passAtK: [0.5, 1] }] });
    expect(useLab.getState().views.r1.evals).toHaveLength(1);
    // The evaluation before training joins the series at step 0, so held-out accuracy reads from before RL.
    h({ type: 'evals', runId: 'r1', evals: [{ step: 0, items: 2, accuracy: 0, reward: 0.25, passAtK: [0, 0.5] }] });
    expect(useLab.getState().views.r1.evals.map((e) => [e.step, e.accuracy])).toEqual([
      [0, 0],
      [2, 0.5],
    ]);
    // A saved run's records replace what the page had for it.
    h({
      type: 'run-data',
      runId: 'r1',
      batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.1 } }]),
      evals: [],
      rolloutSteps: [1],
    });
    expect(useLab.getState().views.r1.table.length).toBe(1);
    expect(useLab.getState().views.r1.rolloutSteps).toEqual([1]);
  });

  it('keep errors where they belong: imports in the runs panel, the rest as notices; no WebGPU selects the CPU', async () => {
    const lab = labWithFakeEngine();
    useLab = lab.store;
    useLab.getState().startEngine();
    const h = useLab.getState().handleResponse;
    useLab.getState().importFile('bad.csv', 'nope');
    lab.fail('import', 'bad.csv: line 1: nope');
    await settle();
    expect(useLab.getState().importError).toBe('bad.csv: line 1: nope');
    expect(useLab.getState().notices).toHaveLength(0);
    h({ type: 'notice', level: 'error', message: 'Storage is full: ...' });
    h({ type: 'error', message: 'GPU device lost', fatal: true });
    expect(useLab.getState().notices.map((n) => n.message)).toEqual(['Storage is full: ...', 'GPU device lost']);
    expect(useLab.getState().gpuStatus).toBe('error');
    h({ type: 'unavailable', message: 'no navigator.gpu' });
    expect(useLab.getState().backend).toBe('cpu');
  });

  it('keep each alert for its run and chart, show it as a warning, and drop it with the steps it was on', () => {
    const h = useLab.getState().handleResponse;
    const [rule] = ALERT_RULES.filter((r) => r.metric === 'entropy');
    const alert = { ...rule, step: 3, value: 0.01, message: 'Alert at step 3, entropy collapse: ...' };
    h({ type: 'alert', runId: 'r1', alert });
    expect(useLab.getState().alerts.r1).toEqual([alert]);
    expect(useLab.getState().notices.map((n) => [n.level, n.message])).toEqual([['warning', alert.message]]);
    expect(alertsOn(useLab.getState().alerts.r1, ['entropy'])).toEqual([alert]);
    expect(alertsOn(useLab.getState().alerts.r1, ['reward'])).toEqual([]);
    // The run went back to step 1 (a rewind): its records replace the page's, and the alert of step 3 goes.
    h({
      type: 'run-data',
      runId: 'r1',
      batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { entropy: 0.5 } }]),
      evals: [],
      rolloutSteps: [1],
    });
    expect(useLab.getState().alerts.r1).toEqual([]);
  });
});

describe('run controls', () => {
  it("a browser test's autosave hook reaches the worker's init; anything but a positive number is ignored", () => {
    const g = globalThis as Record<string, unknown>;
    try {
      g[TEST_HOOKS_GLOBAL] = { autosaveMs: Infinity };
      const a = labWithFakeEngine();
      a.store.getState().startEngine();
      expect(a.sent).toEqual([{ type: 'init', hooks: { autosaveMs: Infinity } }]);
      g[TEST_HOOKS_GLOBAL] = { autosaveMs: '1; alert(1)' };
      const b = labWithFakeEngine();
      b.store.getState().startEngine();
      expect(b.sent).toEqual([{ type: 'init' }]);
    } finally {
      delete g[TEST_HOOKS_GLOBAL];
    }
  });

  it('start a new run only once the engine is ready and the config is valid', () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    expect(startBlocker(s())).toBe('engine');
    s().startEngine();
    s().startEngine(); // once per store
    expect(sent).toEqual([{ type: 'init' }]);
    expect(s().gpuStatus).toBe('starting');
    s().startRun();
    expect(sent).toHaveLength(1); // not ready: nothing sent, as the disabled button says
    respond(READY);
    expect([canStart(s()), canStep(s()), startLabel(s())]).toEqual([true, true, 'Start']);
    s().startRun();
    expect(sent[1]).toEqual({
      type: 'configure',
      config: s().check.config,
      preset: 'grpo',
      backend: 'webgpu',
      then: 'start',
    });
    s().setField('temperature', 'hot');
    expect(startBlocker(s())).toBe('config');
    s().startRun();
    s().stepRun();
    expect(sent).toHaveLength(2);
    expect(s().notices[0].message).toMatch(
      /^The config has errors; fix the marked fields first\. temperature: must be a number/,
    );
  });

  it('continue the paused run while its config is the edited one, and start a new run once it is not', () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    respond({ type: 'unavailable', message: 'no WebGPU' }); // the CPU backend is ready as soon as the worker answers
    respond({
      type: 'runs',
      runs: [header('r1', s().check.config!, { backend: 'cpu' })],
      storage: null,
      persistent: false,
    });
    respond({
      type: 'progress',
      progress: progress({ runId: 'r1', status: 'paused', step: 3, totalSteps: 10, backend: 'cpu' }),
    });
    expect([canContinue(s()), startLabel(s()), canStart(s())]).toEqual([true, 'Continue', true]);
    s().startRun();
    s().stepRun();
    expect(sent.slice(1)).toEqual([{ type: 'start' }, { type: 'step' }]);
    s().setField('seed', 7);
    expect([canContinue(s()), startLabel(s())]).toEqual([false, 'Start new run']);
    s().stepRun();
    expect(sent[3]).toMatchObject({ type: 'configure', then: 'step', backend: 'cpu', config: { seed: 7 } });
    s().setField('seed', s().runs[0].config.seed);
    expect(canContinue(s())).toBe(true); // the same experiment again
  });

  it('block start and step while the run is busy, and pause only a running run', () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    respond(READY);
    for (const status of ['loading', 'running', 'pausing'] as const) {
      respond({ type: 'progress', progress: progress({ runId: 'r1', status }) });
      expect([isBusy(s()), canStart(s()), canStep(s()), startBlocker(s())]).toEqual([true, false, false, 'busy']);
      expect(canPause(s())).toBe(status === 'running');
      s().startRun();
      s().stepRun();
      s().pauseRun();
    }
    expect(sent).toEqual([{ type: 'init' }, { type: 'pause' }]);
    expect(s().notices).toEqual([]);
  });

  it("show the current run's live step in the runs list, and offer resume for other unfinished runs only", () => {
    const { store, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    const config = s().check.config!;
    const live = header('live', config, { status: 'running', step: 2 });
    const done = header('done', config, { status: 'done', step: 9 });
    const interrupted = header('int', config, { status: 'interrupted', step: 4 });
    respond({ type: 'runs', runs: [live, done, interrupted], storage: null, persistent: false });
    respond({ type: 'progress', progress: progress({ runId: 'live', status: 'running', step: 5 }) });
    expect([runStep(s(), live), runStep(s(), done), runStep(s(), interrupted)]).toEqual([5, 9, 4]);
    expect([canResumeRun(s(), live), canResumeRun(s(), done), canResumeRun(s(), interrupted)]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('offer each run only the exports it can give: an imported run its metrics, a run without saved state no checkpoint', () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    const config = s().check.config!;
    const live = header('live', config, { status: 'running', step: 2, savedStep: 0 });
    const paused = header('paused', config, { status: 'paused', savedStep: 3 });
    const fresh = header('fresh', config, { status: 'interrupted', savedStep: 0 });
    const trl = header('trl', config, {
      status: 'imported',
      savedStep: 0,
      preset: null,
      origin: { trainer: 'trl', file: 'trainer_state.json', uncatalogued: [] },
    });
    respond({ type: 'runs', runs: [live, paused, fresh, trl], storage: null, persistent: false });
    respond({ type: 'progress', progress: progress({ runId: 'live', status: 'running', step: 2 }) });
    expect(runExports(s(), live)).toEqual(['metrics-csv', 'metrics-jsonl', 'rollouts-jsonl', 'checkpoint']);
    expect(runExports(s(), paused)).toEqual(['metrics-csv', 'metrics-jsonl', 'rollouts-jsonl', 'checkpoint']);
    expect(runExports(s(), fresh)).toEqual(['metrics-csv', 'metrics-jsonl', 'rollouts-jsonl']);
    expect(runExports(s(), trl)).toEqual(['metrics-csv', 'metrics-jsonl']);
    expect(canResumeRun(s(), trl)).toBe(false);
    // The action follows the same rule: what a run does not offer is not asked of the engine.
    sent.length = 0;
    s().exportRun('trl', 'checkpoint');
    s().exportRun('trl', 'rollouts-jsonl');
    s().exportRun('fresh', 'checkpoint');
    s().exportRun('trl', 'metrics-csv');
    expect(sent).toEqual([{ type: 'export', runId: 'trl', kind: 'metrics-csv' }]);
    expect(s().notices.map((n) => n.message)).toEqual([
      '"trl" has no checkpoint export: an imported run has its metrics only.',
      '"trl" has no rollouts-jsonl export: an imported run has its metrics only.',
      '"fresh" has no checkpoint export: no trainer state is saved yet.',
    ]);
  });

  it("a name picked from an imported log's uncharted ones is asked for whenever that run is loaded", () => {
    const { store, sent } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    s().chartMetric('trl', '  custom/s40_b ');
    expect([s().viewRunId, sent.at(-1)]).toEqual([
      'trl',
      { type: 'load-run', runId: 'trl', metrics: ['custom/s40_b'] },
    ]);
    s().chartMetric('trl', 'custom/s40_b');
    s().chartMetric('trl', '');
    s().chartMetric('trl', 'custom/s7_a');
    expect(sent.at(-1)).toEqual({ type: 'load-run', runId: 'trl', metrics: ['custom/s40_b', 'custom/s7_a'] });
    s().openRun('other');
    s().toggleOverlay('trl');
    expect(sent.at(-1)).toEqual({ type: 'load-run', runId: 'trl', metrics: ['custom/s40_b', 'custom/s7_a'] });
    s().forgetRun('trl');
    expect(s().pickedMetrics).toEqual({});
  });

  it('make the status line follow the viewed run: a saved run or a seed group drawn is named, not "no run yet"', () => {
    const { store, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    respond(READY);
    const config = s().check.config!;
    const done = header('done', config, { status: 'done', step: 150, lastMetrics: { reward: 0.55 } });
    const member = header('g1', config, { status: 'done', step: 8, seedGroup: { id: 'G', index: 1, size: 3 } });
    const first = header('g0', config, { status: 'done', step: 8, seedGroup: { id: 'G', index: 0, size: 3 } });
    respond({ type: 'runs', runs: [done, member, first], storage: null, persistent: false });
    expect(statusLineOf(s()).phase).toBe('no run yet: pick a preset and press Start');
    s().openRun('done');
    expect(statusLineOf(s())).toMatchObject({
      about: 'viewed',
      name: 'done',
      details: ['finished at step 150', 'last reward 0.55'],
    });
    s().openSeedGroup('G');
    expect(statusLineOf(s())).toMatchObject({
      about: 'viewed',
      details: ['finished at step 8', 'seed group: run 1 of 3'],
    });
    // A run starts: the charts follow it and the line is the live run's; opening a saved run again names both.
    respond({
      type: 'progress',
      progress: progress({
        runId: 'live',
        name: 'live',
        status: 'running',
        step: 3,
        totalSteps: 20,
        phase: { kind: 'training' },
      }),
    });
    expect(statusLineOf(s())).toMatchObject({ about: 'live', name: 'live', phase: 'training step 4 of 20' });
    s().openRun('done');
    expect(statusLineOf(s())).toMatchObject({
      about: 'viewed',
      name: 'done',
      live: 'live run live: training step 4 of 20',
    });
  });

  it('chart the viewed run and the overlaid runs whose records are on the page', () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    s().startEngine();
    respond({ type: 'progress', progress: progress({ runId: 'a', status: 'running' }) });
    s().toggleOverlay('b');
    expect(sent.at(-1)).toEqual({ type: 'load-run', runId: 'b' });
    expect(chartRunIds(s())).toEqual(['a']); // b's records have not arrived
    respond({ type: 'run-data', runId: 'b', batch: packRows([]), evals: [], rolloutSteps: [] });
    expect(chartRunIds(s())).toEqual(['a', 'b']);
    s().openRun('b');
    expect([s().viewRunId, s().overlay]).toEqual(['b', []]);
    s().deleteRun('b');
    expect(sent.at(-1)).toEqual({ type: 'delete-run', runId: 'b' });
    expect([s().viewRunId, chartRunIds(s())]).toEqual([null, []]);
  });
});

describe('stores', () => {
  it('share nothing: each has its own engine, notices and export ids', async () => {
    const a = labWithFakeEngine();
    const b = labWithFakeEngine();
    a.store.getState().startEngine();
    expect([a.sent.length, b.sent.length]).toEqual([1, 0]);
    a.store.getState().addNotice('warning', 'one');
    a.store.getState().addNotice('warning', 'two');
    b.store.getState().addNotice('warning', 'three');
    expect(a.store.getState().notices.map((n) => n.id)).toEqual([1, 2]);
    expect(b.store.getState().notices.map((n) => n.id)).toEqual([1]);
    a.store.getState().exportRun('r', 'metrics-csv');
    a.reply('export', { type: 'export-ready', runId: 'r', kind: 'metrics-csv', files: [] });
    a.store.getState().exportRun('r', 'metrics-csv');
    a.reply('export', { type: 'export-ready', runId: 'r', kind: 'metrics-csv', files: [] });
    await settle();
    expect(a.store.getState().downloads?.id).toBe(2);
    expect(b.store.getState().downloads).toBeNull();
    for (let i = 0; i < 10; i++) a.store.getState().addNotice('error', `n${i}`);
    expect(a.store.getState().notices.map((n) => n.message)).toEqual(['n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9']); // the last 8
  });
});

describe('config diff', () => {
  it('lists exactly the differing fields, in panel order, with the preset when presets differ', () => {
    const a = resolveConfig('grpo', { seed: 1 });
    const b = resolveConfig('grpo', { seed: 2, num_iterations: 2 });
    const c = resolveConfig('dr_grpo', { seed: 1 });
    expect(
      configDiff([
        { config: a, preset: 'grpo' },
        { config: b, preset: 'grpo' },
      ]).map((r) => r.field),
    ).toEqual(['num_iterations', 'seed']);
    expect(
      configDiff([
        { config: a, preset: 'grpo' },
        { config: a, preset: 'grpo' },
      ]),
    ).toEqual([]);
    const rows = configDiff([
      { config: a, preset: 'grpo' },
      { config: c, preset: 'dr_grpo' },
    ]);
    expect(rows[0]).toEqual({ field: 'preset', values: ['grpo', 'dr_grpo'] });
    expect(rows.map((r) => r.field)).toEqual(['preset', 'adv_estimator', 'loss_agg_mode', 'beta']);
    expect(configDiff([{ config: a, preset: 'grpo' }])).toEqual([]);
  });
});
