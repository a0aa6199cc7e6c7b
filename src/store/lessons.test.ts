// The lessons slice without a DOM, on fresh stores with a fake engine and a map for storage: ?lesson=<id> opens a
// lesson (an unknown id names the known ones), the answer comes before Run, the runs go one after the other as
// named runs at one seed, the narration quotes the runs' latest values, the verdict is the lesson's check over the
// page's metric tables, another seed reruns, progress outlives the store and bad stored progress is ignored, and
// the page's records rebuild exactly what the headless runner collects.
import { beforeEach, describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import { rowOf, type RunProgress } from '../schema/run-types';
import type { AdapterReport } from '../gpu/adapter';
import { FIRST_LESSON, LESSONS, lessonById, narrationNumber, type Lesson } from '../lessons';
import { smooth } from './series';
import { collectRun, lessonRunConfig } from '../lessons/results';
import type { EvalRecord, StepRecord } from '../schema/stream';
import type { Response } from '../worker/protocol';
import { createLabStore, IDLE_PROGRESS, LESSON_PROGRESS_KEY } from './index';
import { fakeEngine, settle } from './fake-engine.fixture';
import { viewRecords } from './lesson-results';
import {
  chartRunIds,
  shownRunId,
  highlightedCharts,
  lessonInterruptedRun,
  lessonChartTitles,
  lessonNarration,
  lessonProgressOf,
  lessonRunBlocker,
  lessonRunStates,
  startBlocker,
} from './selectors';
import { MetricTable } from './metric-table';
import { LESSON_SESSION_KEY, parseLessonProgress, parseLessonSession } from './slices/lessons';
import type { RunHeader } from '../schema/run-types';
import { statusLineOf } from './status-line';

const clipZero = lessonById('clip-zero')!;
const [runA, runB] = clipZero.runs;

/** A Storage over a Map. */
function memoryStorage(init: Record<string, string> = {}) {
  const m = new Map(Object.entries(init));
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), map: m };
}

/** A store whose engine records the requests it gets; `respond` plays the worker. */
function lab(storage = memoryStorage()) {
  const engine = fakeEngine();
  const store = createLabStore({ storage, connect: engine.connect });
  return { store, s: store.getState, storage, ...engine };
}

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

const progress = (p: Partial<RunProgress>): Response => ({ type: 'progress', progress: { ...IDLE_PROGRESS, ...p } });

/** The records of `steps` rollout steps of `updates` optimizer steps each, with this clip ratio per step. */
function records(steps: number, updates: number, clip: (step: number) => number): StepRecord[] {
  const out: StepRecord[] = [];
  for (let step = 1; step <= steps; step++) {
    for (let u = 0; u < updates; u++) {
      out.push({
        kind: 'step',
        step,
        optimizerStep: (step - 1) * updates + u + 1,
        update: u,
        updates,
        epoch: u,
        minibatch: 0,
        metrics: { 'clip_ratio/region_mean': u === updates - 1 ? clip(step) : 0, approx_kl: 0.01 * step },
      });
    }
  }
  return out;
}

const metricsOf = (runId: string, rs: StepRecord[]): Response => ({
  type: 'metrics',
  runId,
  batch: packRows(rs.map(rowOf)),
});

/** An opened, answered clip-zero lesson on a ready engine. */
function answered() {
  const l = lab();
  l.s().startEngine();
  l.respond(READY);
  l.s().initConfig('?lesson=clip-zero');
  l.s().answerLesson(0);
  return l;
}

/** What the page sends when `lesson` is open with the device ready: its first run, to be prepared before Run. */
const prepareOf = (lesson: Lesson) => ({
  type: 'prepare',
  config: lessonRunConfig(lesson, lesson.runs[0], 0),
  backend: 'webgpu',
});

let l: ReturnType<typeof lab>;
beforeEach(() => {
  l = lab();
});

describe('opening a lesson', () => {
  it('?lesson=<id> opens it with the other page parameters, and colours the inspector by its first plane', () => {
    l.s().initConfig('?lesson=clip-zero');
    expect(l.s().lesson).toMatchObject({ lessonId: 'clip-zero', seed: 0, phase: 'ready' });
    expect(l.s().urlError).toBeNull();
    expect(l.s().colorBy).toBe('ratio');
    expect(highlightedCharts(l.s())).toEqual(['clip', 'kl']);
    l.s().closeLesson();
    expect([l.s().lesson, highlightedCharts(l.s())]).toEqual([null, []]);
  });

  it('an unknown id leaves the page as it was and names the known lessons', () => {
    l.s().initConfig('?lesson=clip-one');
    expect(l.s().lesson).toBeNull();
    expect(l.s().notices.map((n) => n.message)).toEqual([
      `There is no lesson "clip-one". The lessons are: ${LESSONS.map((x) => x.id).join(', ')}.`,
    ]);
    expect(l.s().notices[0].message).toContain('clip-zero');
  });

  it('a huge or odd id is not echoed: a clipped, escaped form is named as unknown', () => {
    const huge = `${'x'.repeat(60)}"<b>\n${'y'.repeat(2_000_000)}`;
    l.s().initConfig(`?lesson=${encodeURIComponent(huge)}`);
    expect(l.s().lesson).toBeNull();
    const [message] = l.s().notices.map((n) => n.message);
    expect(message.length).toBeLessThan(400);
    expect(message).toContain(`There is no lesson ${JSON.stringify('x'.repeat(40))}... (${huge.length} characters).`);
    expect(message).not.toContain('<b>');
    l.s().initConfig(`?lesson=${encodeURIComponent('a"\nb')}`);
    expect(l.s().notices.map((n) => n.message)[1]).toContain('There is no lesson "a\\"\\nb".');
  });
});

describe('the page with no link', () => {
  it("opens on the first lesson's question; a link to a config or to a lesson opens that instead", () => {
    l.s().initConfig('');
    expect(l.s().lesson).toMatchObject({ lessonId: FIRST_LESSON.id, phase: 'ready' });
    expect(lessonRunBlocker(l.s())).toBe('answer');
    const config = lab();
    config.s().initConfig('?preset=grpo&seed=3');
    expect(config.s().lesson).toBeNull();
    const other = lab();
    other.s().initConfig('?lesson=clip-zero');
    expect(other.s().lesson?.lessonId).toBe('clip-zero');
  });

  it("names the charts a lesson points at by their titles, in the lesson's order", () => {
    expect(lessonChartTitles(clipZero)).toEqual([
      { id: 'clip', title: 'Clip ratio' },
      { id: 'kl', title: expect.any(String) },
    ]);
    for (const lesson of LESSONS)
      expect(lessonChartTitles(lesson)).toHaveLength(
        lesson.highlight.charts.length + (lesson.highlight.passAtK ? 1 : 0),
      );
    expect(lessonChartTitles(FIRST_LESSON).at(-1)).toEqual({ id: 'pass-at-k', title: 'Held-out pass@k' });
  });
});

describe('one control runs while a lesson is open', () => {
  it("Start, Step and Run over seeds send nothing and say why; the lesson's Run starts its run; closing gives Start back", () => {
    const { s, sent } = answered();
    expect(startBlocker(s())).toBe('lesson');
    s().startRun();
    s().stepRun();
    s().startSeedGroup();
    expect(sent).toEqual([{ type: 'init' }, prepareOf(clipZero)]);
    s().startLesson();
    expect(sent.at(-1)).toMatchObject({ type: 'configure', name: runA.label, then: 'start' });
    s().closeLesson();
    expect(startBlocker(s())).toBeNull();
    s().startRun();
    expect(sent.at(-1)).toMatchObject({ type: 'configure', then: 'start' });
    expect(sent.at(-1)).not.toHaveProperty('name');
  });
});

describe('the answer', () => {
  it('comes before Run, is kept once given, and is stored', () => {
    const { s, sent, respond, storage } = lab();
    s().startEngine();
    respond(READY);
    s().openLesson('clip-zero');
    expect(lessonRunBlocker(s())).toBe('answer');
    s().startLesson();
    expect(sent).toEqual([{ type: 'init' }, prepareOf(clipZero)]);
    s().answerLesson(7); // not a choice
    expect(lessonProgressOf(s(), 'clip-zero').answer).toBeNull();
    s().answerLesson(2);
    s().answerLesson(0); // a prediction is not changed afterwards
    expect(lessonProgressOf(s(), 'clip-zero')).toEqual({ answer: 2, completed: false, observed: false });
    expect(JSON.parse(storage.map.get(LESSON_PROGRESS_KEY)!)).toEqual({
      'clip-zero': { answer: 2, completed: false, observed: false },
    });
    expect(lessonRunBlocker(s())).toBeNull();
  });

  it('Run waits for the engine and for a run that is training', () => {
    const { s, respond } = lab();
    s().openLesson('clip-zero');
    s().answerLesson(0);
    expect(lessonRunBlocker(s())).toBe('engine');
    s().startEngine();
    respond(READY);
    respond(progress({ runId: 'other', name: 'mine', status: 'running' }));
    expect(lessonRunBlocker(s())).toBe('busy');
  });

  it("a lesson's supervised run is launched on the page as a run in mode sft", () => {
    const { s, sent, respond } = lab();
    s().startEngine();
    respond(READY);
    s().openLesson('rl-vs-sft');
    s().answerLesson(0);
    expect(lessonRunBlocker(s())).toBeNull();
    s().startLesson();
    const lesson = lessonById('rl-vs-sft')!;
    const sft = lesson.runs.find((r) => r.mode === 'sft')!;
    expect(sent.at(-1)).toEqual({
      type: 'configure',
      config: lessonRunConfig(lesson, sft, 0),
      preset: sft.preset,
      backend: 'webgpu',
      then: 'start',
      name: sft.label,
      mode: 'sft',
    });
  });
});

describe("a lesson's runs", () => {
  it('go one after the other as named runs at one seed; narration quotes them; the check decides over their tables', () => {
    const { s, sent, respond, storage } = answered();
    s().startLesson();
    expect(lessonRunBlocker(s())).toBe('running');
    const configA = lessonRunConfig(clipZero, runA, 0);
    expect(sent.at(-1)).toEqual({
      type: 'configure',
      config: configA,
      preset: runA.preset,
      backend: 'webgpu',
      then: 'start',
      name: runA.label,
    });
    expect(s().check.config).toEqual(configA); // the config panel shows what runs
    expect(lessonNarration(s())[0]).toContain('clip_ratio/region_mean is … and approx_kl is …');

    respond(progress({ runId: 'ra', name: runA.label, status: 'running', step: 0, totalSteps: 8 }));
    respond(
      metricsOf(
        'ra',
        records(8, 1, () => 0),
      ),
    );
    respond(progress({ runId: 'ra', name: runA.label, status: 'running', step: 8, totalSteps: 8 }));
    // The narration quotes what the chart shows: the value smoothed with the chart's weight, not the raw last step.
    const klSeries = Array.from({ length: 8 }, (_, i) => 0.01 * (i + 1));
    const shownKl = narrationNumber(smooth(klSeries, s().smoothing).at(-1)!);
    expect(s().smoothing).toBeGreaterThan(0);
    expect(shownKl).not.toBe('0.08');
    expect(lessonNarration(s())[0]).toContain(`clip_ratio/region_mean is 0 and approx_kl is ${shownKl}`);
    s().setSmoothing(0);
    expect(lessonNarration(s())[0]).toContain('clip_ratio/region_mean is 0 and approx_kl is 0.08');
    expect(lessonRunStates(s()).map((r) => [r.state, r.step])).toEqual([
      ['training', 8],
      ['waiting', 0],
    ]);
    expect(sent).toHaveLength(3); // init, the prepared first run, run a

    respond(progress({ runId: 'ra', name: runA.label, status: 'done', step: 8, totalSteps: 8 }));
    expect(sent.at(-1)).toEqual({
      type: 'configure',
      config: lessonRunConfig(clipZero, runB, 0),
      preset: runB.preset,
      backend: 'webgpu',
      then: 'start',
      name: runB.label,
    });
    // The finished run is still the engine's until the next one reports: nothing is taken for run b yet.
    respond(progress({ runId: 'ra', name: runA.label, status: 'done', step: 8, totalSteps: 8 }));
    expect(s().lesson?.runIds).toEqual({ a: 'ra' });
    respond(progress({ runId: 'rb', name: runB.label, status: 'loading' }));
    // Both runs on the charts (the lesson's view), the person's overlay untouched.
    expect([s().viewRunId, s().overlay, chartRunIds(s())]).toEqual(['rb', [], ['ra', 'rb']]);
    respond(
      metricsOf(
        'rb',
        records(8, 2, (step) => (step % 4 === 1 ? 0 : 0.05)),
      ),
    );
    expect(lessonNarration(s())[1]).toContain('clip_ratio/region_mean is 0.05, approx_kl 0.08');
    expect(s().lesson?.verdict).toBeNull();
    respond(progress({ runId: 'rb', name: runB.label, status: 'done', step: 8, totalSteps: 8 }));

    expect(s().lesson).toMatchObject({ phase: 'done', runIds: { a: 'ra', b: 'rb' } });
    expect(s().lesson?.verdict).toEqual({
      observed: true,
      values: { 'a: largest clip ratio': 0, 'b: steps with clipping': 6, 'b: steps': 8 },
      summary:
        'One update per batch: the largest clip ratio over 8 steps was 0. Two updates: the clip fired on 6 of 8 steps.',
    });
    expect(lessonRunStates(s()).map((r) => r.state)).toEqual(['done', 'done']);
    expect(lessonProgressOf(s(), 'clip-zero')).toEqual({ answer: 0, completed: true, observed: true });

    // Another seed: the same runs at seed 1; a verdict that does not observe keeps "observed" from before.
    s().rerunLessonWithAnotherSeed();
    expect(s().lesson).toMatchObject({ seed: 1, phase: 'running', runIds: {}, verdict: null });
    expect(chartRunIds(s())).toEqual([]); // the first go's runs leave the charts
    expect(sent.at(-1)).toMatchObject({ type: 'configure', config: { ...configA, seed: 1 }, name: runA.label });
    respond(progress({ runId: 'ra1', name: runA.label, status: 'running' }));
    respond(
      metricsOf(
        'ra1',
        records(8, 1, (step) => (step === 3 ? 0.01 : 0)),
      ),
    );
    respond(progress({ runId: 'ra1', name: runA.label, status: 'done', step: 8 }));
    respond(progress({ runId: 'rb1', name: runB.label, status: 'running' }));
    respond(
      metricsOf(
        'rb1',
        records(8, 2, () => 0.1),
      ),
    );
    respond(progress({ runId: 'rb1', name: runB.label, status: 'done', step: 8 }));
    expect(s().lesson?.verdict).toMatchObject({ observed: false, values: { 'a: largest clip ratio': 0.01 } });
    expect(lessonProgressOf(s(), 'clip-zero')).toEqual({ answer: 0, completed: true, observed: true });

    // Progress outlives the store.
    const again = lab(storage);
    expect(lessonProgressOf(again.s(), 'clip-zero')).toEqual({ answer: 0, completed: true, observed: true });
  });

  it('stop when another run takes the engine, when a run fails, or when the engine refuses one', async () => {
    const { s, respond, fail } = answered();
    s().startLesson();
    respond(progress({ runId: 'x', name: 'grpo · copy 3 · seed 5', status: 'running' }));
    expect(s().lesson).toMatchObject({
      phase: 'stopped',
      stopReason: expect.stringMatching(/^Another run \("grpo · copy 3 · seed 5"\) took the engine/),
    });
    respond(progress({ runId: 'x', name: 'grpo · copy 3 · seed 5', status: 'done' }));

    s().startLesson();
    respond(progress({ runId: 'ra', name: runA.label, status: 'running' }));
    respond(progress({ runId: 'ra', name: runA.label, status: 'failed', message: 'device lost' }));
    expect(s().lesson).toMatchObject({
      phase: 'stopped',
      stopReason: `"${runA.label}" failed: device lost. Run the lesson again.`,
    });
    expect(lessonRunStates(s()).map((r) => r.state)).toEqual(['stopped', 'waiting']);

    s().startLesson();
    fail('configure', 'checkpoint copy: not found');
    await settle();
    expect(s().lesson).toMatchObject({
      phase: 'stopped',
      stopReason: "The engine refused the lesson's run: checkpoint copy: not found",
    });
    expect(s().notices.at(-1)?.message).toBe('checkpoint copy: not found');
  });
});

describe('stored progress', () => {
  it('is read entry by entry: bad text, bad entries and answers that are not a choice are left out', () => {
    expect(parseLessonProgress(null)).toEqual({});
    expect(parseLessonProgress('{not json')).toEqual({});
    expect(parseLessonProgress('[1,2]')).toEqual({});
    expect(parseLessonProgress('"clip-zero"')).toEqual({});
    const text = JSON.stringify({
      'clip-zero': { answer: 9, completed: true, observed: false },
      'some-later-lesson': { answer: 1, completed: false, observed: false },
      broken: { answer: 0, completed: 'yes', observed: false },
      worse: null,
    });
    expect(parseLessonProgress(text)).toEqual({
      'clip-zero': { answer: null, completed: true, observed: false },
      'some-later-lesson': { answer: 1, completed: false, observed: false },
    });
    const l2 = lab(memoryStorage({ [LESSON_PROGRESS_KEY]: '{"clip-zero": 3' }));
    expect(l2.s().lessonProgress).toEqual({});
  });

  it('a storage that refuses to be read or written leaves the progress on the page', () => {
    const refusing = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    const { s } = lab(refusing as unknown as ReturnType<typeof memoryStorage>);
    s().openLesson('clip-zero');
    s().answerLesson(1);
    expect(lessonProgressOf(s(), 'clip-zero').answer).toBe(1);
  });
});

describe("the page's records", () => {
  it('rebuild what the headless runner collects: steps, updates and evaluations', () => {
    const rs = records(3, 2, (step) => step / 10);
    const e0: EvalRecord = { step: 0, items: 2, accuracy: 0.25, reward: 0.25, passAtK: [0.25] };
    const e2: EvalRecord = { step: 2, items: 2, accuracy: 0.5, reward: 0.5, passAtK: [0.5] };
    rs[0].initialEval = e0;
    rs[3].eval = e2;
    const table = new MetricTable();
    table.append(packRows(rs.map(rowOf)));
    const rebuilt = viewRecords({ table, version: 1, evals: [e0, e2], rolloutSteps: [] }, 1, () => undefined);
    const config = lessonRunConfig(clipZero, runB, 0);
    expect(collectRun(runB, config, rebuilt)).toEqual(collectRun(runB, config, rs));
    expect(rebuilt.map((r) => [r.update, r.updates, r.epoch])).toEqual(rs.map((r) => [r.update, r.updates, r.epoch]));
  });
});

/** A saved run's header as the worker lists it. */
const savedRun = (id: string, name: string, status: RunHeader['status'], step: number): RunHeader => ({
  id,
  name,
  createdAt: 0,
  updatedAt: 0,
  config: lessonRunConfig(clipZero, runA, 0),
  preset: runA.preset,
  backend: 'webgpu',
  status,
  step,
  savedStep: step,
  elapsedMs: 0,
  adapter: '',
  lastMetrics: {},
});

describe('a lesson owns its view', () => {
  it("shows exactly its runs while open (none before its Run); the person's overlay comes back when it closes", () => {
    const { s, respond } = answered();
    s().closeLesson();
    respond({
      type: 'runs',
      runs: [savedRun('old1', 'grpo · long run', 'done', 150), savedRun('old2', 'grpo · another', 'done', 150)],
      storage: null,
      persistent: false,
    });
    respond(
      metricsOf(
        'old1',
        records(150, 1, () => 0),
      ),
    );
    respond(
      metricsOf(
        'old2',
        records(150, 1, () => 0),
      ),
    );
    s().showRun('old1');
    s().toggleOverlay('old2');
    expect(chartRunIds(s())).toEqual(['old1', 'old2']);
    expect(shownRunId(s())).toBe('old1');
    s().openLesson('clip-zero');
    expect(chartRunIds(s())).toEqual([]);
    // The single-run views (distributions, weight updates, inspector) show none of the earlier runs either.
    expect(shownRunId(s())).toBeNull();
    s().startLesson();
    respond(progress({ runId: 'ra', name: runA.label, status: 'running', step: 1, totalSteps: 8 }));
    respond(
      metricsOf(
        'ra',
        records(1, 1, () => 0),
      ),
    );
    expect(chartRunIds(s())).toEqual(['ra']);
    expect(shownRunId(s())).toBe('ra');
    expect(s().overlay).toEqual(['old2']);
    s().closeLesson();
    expect(chartRunIds(s())).toEqual(['ra', 'old2']);
  });

  it('opening or overlaying a run of its own keeps the lesson; any other run from the list closes it and is shown', () => {
    const { s, respond } = answered();
    respond({
      type: 'runs',
      runs: [savedRun('old1', 'grpo · long run', 'done', 150), savedRun('old2', 'grpo · another', 'done', 150)],
      storage: null,
      persistent: false,
    });
    s().startLesson();
    respond(progress({ runId: 'ra', name: runA.label, status: 'running', step: 1, totalSteps: 8 }));
    s().openRun('ra');
    expect(s().lesson?.lessonId).toBe('clip-zero');
    s().openRun('old1');
    expect(s().lesson).toBeNull();
    expect(s().viewRunId).toBe('old1');

    s().openLesson('clip-zero');
    expect(s().lesson?.lessonId).toBe('clip-zero');
    s().toggleOverlay('old2');
    expect(s().lesson).toBeNull();
    expect(s().overlay).toContain('old2');
  });
});

describe('a reload mid-lesson', () => {
  it('finds the run interrupted, offers Resume, and the resumed run finishes the narration and the verdict', () => {
    const { s, respond, storage, sent } = answered();
    s().startLesson();
    respond(progress({ runId: 'ra', name: runA.label, status: 'running', step: 3, totalSteps: 8 }));
    expect(parseLessonSession(storage.map.get(LESSON_SESSION_KEY) ?? null, 'clip-zero')).toMatchObject({
      phase: 'interrupted',
      runIds: { a: 'ra' },
    });

    // The reload: a new store on the same storage; the worker lists the run as interrupted at step 3.
    const again = lab(storage);
    const t = again.s;
    t().startEngine();
    again.respond(READY);
    t().initConfig('?lesson=clip-zero');
    expect(t().lesson).toMatchObject({ phase: 'interrupted', runIds: { a: 'ra' }, current: 0 });
    expect(lessonInterruptedRun(t())).toBeNull(); // the runs list has not come yet
    again.respond({
      type: 'runs',
      runs: [savedRun('ra', runA.label, 'interrupted', 3)],
      storage: null,
      persistent: false,
    });
    expect(lessonInterruptedRun(t())).toMatchObject({ label: runA.label, steps: 8, header: { step: 3 } });
    expect(statusLineOf(t()).phase).toBe(
      `the lesson's run "${runA.label}" was interrupted at step 3 by a reload: Resume it in the lesson`,
    );
    t().loadLessonRuns();
    expect(again.sent.at(-1)).toEqual({ type: 'load-run', runId: 'ra' });
    expect(lessonRunStates(t()).map((r) => [r.state, r.step])).toEqual([
      ['stopped', 3],
      ['waiting', 0],
    ]);

    t().resumeLesson();
    expect(again.sent.at(-1)).toEqual({ type: 'resume', runId: 'ra' });
    expect(t().lesson?.phase).toBe('running');
    // The engine's state from before the resume is not a stop; the resumed run is followed to its end.
    again.respond(progress({ runId: 'ra', name: runA.label, status: 'interrupted', step: 3, totalSteps: 8 }));
    expect(t().lesson?.phase).toBe('running');
    again.respond(progress({ runId: 'ra', name: runA.label, status: 'loading', step: 3, totalSteps: 8 }));
    again.respond(
      metricsOf(
        'ra',
        records(8, 1, () => 0),
      ),
    );
    again.respond(progress({ runId: 'ra', name: runA.label, status: 'done', step: 8, totalSteps: 8 }));
    expect(again.sent.at(-1)).toMatchObject({ type: 'configure', name: runB.label });
    again.respond(progress({ runId: 'rb', name: runB.label, status: 'running', step: 1, totalSteps: 8 }));
    again.respond(
      metricsOf(
        'rb',
        records(8, 2, () => 0.05),
      ),
    );
    again.respond(progress({ runId: 'rb', name: runB.label, status: 'done', step: 8, totalSteps: 8 }));
    expect(t().lesson?.phase).toBe('done');
    expect(t().lesson?.verdict?.observed).toBe(true);
    expect(lessonNarration(t()).join(' ')).not.toContain('…');
    expect(sent.length).toBeGreaterThan(0);

    // A second reload keeps the verdict.
    const third = lab(storage);
    third.s().initConfig('?lesson=clip-zero');
    expect(third.s().lesson).toMatchObject({ phase: 'done', verdict: { observed: true } });
  });

  it('a stored session is read field by field: another lesson, bad JSON or bad fields give none', () => {
    expect(parseLessonSession('{', 'clip-zero')).toBeNull();
    expect(parseLessonSession(JSON.stringify({ lessonId: 'first-run', phase: 'done' }), 'clip-zero')).toBeNull();
    const ok = { lessonId: 'clip-zero', seed: 0, phase: 'running', runIds: { a: 'ra', z: 7 }, current: 0 };
    expect(parseLessonSession(JSON.stringify(ok), 'clip-zero')).toMatchObject({
      phase: 'interrupted',
      runIds: { a: 'ra' },
    });
    expect(parseLessonSession(JSON.stringify({ ...ok, current: 5 }), 'clip-zero')).toBeNull();
    expect(parseLessonSession(JSON.stringify({ ...ok, runIds: {} }), 'clip-zero')).toMatchObject({ phase: 'ready' });
    expect(parseLessonSession(JSON.stringify({ ...ok, phase: 'done', verdict: 3 }), 'clip-zero')).toMatchObject({
      phase: 'stopped',
      verdict: null,
    });
  });
});
