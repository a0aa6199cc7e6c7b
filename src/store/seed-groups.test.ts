// Seed groups on the page, on a fresh store with a fake engine: the runs list gathers a group's runs into one row
// (older runs without a group stay rows of their own), the charts draw a group in band mode as one entry and seed by
// seed as its runs, a group's label, and the seeds slice: what "Run over seeds" sends, opening a group loads its
// runs' records, "every seed" overlays them, and Start continues a paused seed queue.
import { describe, expect, it } from 'vitest';
import type { RunHeader, RunProgress } from '../schema/run-types';
import { resolveConfig } from '../schema/config';
import { createLabStore, IDLE_PROGRESS } from './index';
import { fakeEngine } from './fake-engine.fixture';
import { canContinue, chartRunIds, startLabel } from './selectors';
import { chartEntries, runsListRows, seedGroupLabel } from './seed-groups';
import { packRows } from '../schema/metric-batch';

function run(
  id: string,
  seed: number,
  group?: { id: string; index: number; size: number },
  p: Partial<RunHeader> = {},
): RunHeader {
  return {
    id,
    name: `GRPO · copy 3 · seed ${seed}`,
    createdAt: 0,
    updatedAt: 0,
    config: resolveConfig('grpo', { seed }),
    preset: 'grpo',
    backend: 'webgpu',
    status: 'done',
    step: 2,
    savedStep: 2,
    elapsedMs: 0,
    adapter: '',
    lastMetrics: {},
    ...(group && { seedGroup: group }),
    ...p,
  };
}

/** Newest first, as the worker lists them: a group of three (seeds 4-6) between two runs trained alone. */
const RUNS: RunHeader[] = [
  run('late', 9),
  run('g2', 6, { id: 'G', index: 2, size: 3 }),
  run('g1', 5, { id: 'G', index: 1, size: 3 }, { status: 'failed' }),
  run('g0', 4, { id: 'G', index: 0, size: 3 }),
  run('early', 1),
];

describe('seed groups in the runs list and on the charts', () => {
  it('gathers a group into one row at its newest run, its runs in seed order; other runs stay as they were', () => {
    const rows = runsListRows(RUNS);
    expect(
      rows.map((r) => (r.kind === 'run' ? r.run.id : `${r.groupId}:${r.members.map((m) => m.id).join(',')}`)),
    ).toEqual(['late', 'G:g0,g1,g2', 'early']);
    expect(seedGroupLabel(RUNS.slice(1, 4))).toBe('GRPO · copy 3 · seeds 4-6');
    expect(seedGroupLabel([RUNS[1], RUNS[3]])).toBe('GRPO · copy 3 · seeds 4, 6');
  });

  it('draws a group in band mode as one entry of its loaded runs, and seed by seed as its runs', () => {
    const loaded = (id: string) => id !== 'g1';
    expect(chartEntries(['g2', 'early', 'g0'], RUNS, {}, loaded)).toEqual([
      { id: 'g2', members: ['g0', 'g2'], groupId: 'G' },
      { id: 'early' },
    ]);
    expect(chartEntries(['g2', 'early', 'g0'], RUNS, { G: 'seeds' }, loaded)).toEqual([
      { id: 'g2' },
      { id: 'early' },
      { id: 'g0' },
    ]);
  });
});

function labWithFakeEngine() {
  const { connect, sent, respond } = fakeEngine();
  const store = createLabStore({ connect, storage: null });
  store.getState().startEngine();
  respond({
    type: 'ready',
    report: {
      runtime: 'browser',
      vendor: '',
      architecture: '',
      device: '',
      description: '',
      isFallbackAdapter: true,
      features: [],
      limits: {} as never,
    },
  });
  return { store, sent, respond };
}

describe('the seeds slice', () => {
  it('runs the edited config over the chosen number of seeds (kept within 2..10)', () => {
    const { store, sent } = labWithFakeEngine();
    const s = store.getState;
    s().setSeedCount(40);
    expect(s().seedCount).toBe(10);
    s().setSeedCount(1);
    expect(s().seedCount).toBe(2);
    s().setSeedCount(3);
    expect(s().startSeedGroup()).toBe(true);
    expect(sent.at(-1)).toEqual({
      type: 'start-seeds',
      config: s().check.config,
      preset: s().preset,
      backend: 'webgpu',
      seeds: 3,
    });
  });

  it("opens a group with its runs' records loaded, overlays every seed on request, and continues a paused queue", () => {
    const { store, sent, respond } = labWithFakeEngine();
    const s = store.getState;
    respond({ type: 'runs', runs: RUNS, storage: null, persistent: false });
    s().openSeedGroup('G');
    expect(s().viewRunId).toBe('g0');
    expect(
      sent
        .filter((r) => r.type === 'load-run')
        .map((r) => r.type === 'load-run' && r.runId)
        .sort(),
    ).toEqual(['g0', 'g1', 'g2']);
    for (const id of ['g0', 'g1', 'g2'])
      respond({
        type: 'run-data',
        runId: id,
        batch: packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.5 } }]),
        evals: [],
        rolloutSteps: [],
      });
    const st = s();
    expect(chartEntries(chartRunIds(st), st.runs, st.seedGroupView, (id) => !!st.views[id])).toEqual([
      { id: 'g0', members: ['g0', 'g1', 'g2'], groupId: 'G' },
    ]);

    s().setSeedGroupView('G', 'seeds');
    expect(s().overlay).toEqual(['g1', 'g2']);
    expect(chartRunIds(s())).toEqual(['g0', 'g1', 'g2']);

    // A seed of a queue, paused: Start continues it (and the queue), though its seed is not the edited config's.
    const paused: RunProgress = {
      ...IDLE_PROGRESS,
      runId: 'g1',
      name: RUNS[2].name,
      status: 'paused',
      seedQueue: { groupId: 'G', index: 1, size: 3, failedSeeds: [] },
    };
    respond({ type: 'progress', progress: paused });
    expect(canContinue(s())).toBe(true);
    expect(startLabel(s())).toBe('Continue');
    s().startRun();
    expect(sent.at(-1)).toEqual({ type: 'start' });
    respond({ type: 'progress', progress: { ...paused, seedQueue: undefined } });
    expect(canContinue(s())).toBe(false);
  });
});
