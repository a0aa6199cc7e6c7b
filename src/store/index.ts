// The lab's one zustand store, built from typed slices: the GPU, the self-test, the config being edited, the
// current run, the metric tables of the runs on the charts, the rollout inspector, and the saved runs. Actions
// are callable outside React (the engine client feeds responses in through `handleResponse`); components
// select single fields. UI state (smoothing, overlay, inspector choices) never reaches the worker.

import { create } from 'zustand';
import type { ExportFile, ExportKind } from '../engine/lab-engine';
import type { MetricBatch } from '../engine/metric-batch';
import type { BackendKind, RunHeader, RunProgress } from '../engine/types';
import type { AdapterReport } from '../gpu/adapter';
import type { CaseResult } from '../kernels/verify';
import { configFromUrlParams, isPresetName, resolveConfig, type PresetName, type RLConfig, type RLField } from '../rl/config';
import type { EvalRecord, GroupRecord } from '../rl/stream';
import { EngineClient } from '../worker/client';
import { assertNever, type Request, type Response, type TokenTexts } from '../worker/protocol';
import { checkDraft, sameValue, switchPreset, type DraftCheck } from './config-diff';
import type { ColorQuantity } from './explain';
import { MetricTable } from './metric-table';

// ---------------------------------------------------------------------------------------------------------
// Slices

export interface GpuSlice {
  gpuStatus: 'idle' | 'starting' | 'ready' | 'unavailable' | 'error';
  adapter: AdapterReport | null;
  /** The matmul autotune's choice for the adapter, in words (null before the device is ready). */
  tuning: string | null;
  /** The last error or the reason WebGPU is unavailable, shown as is. */
  gpuMessage: string | null;
}

export interface SelfTestSlice {
  selftestRunning: boolean;
  selftestResults: CaseResult[];
  selftestTotal: number;
  selftestSummary: { passed: number; failed: number; ms: number } | null;
}

/** A shipped warm-start checkpoint (public/checkpoints/manifest.json). */
export interface WarmStart {
  /** The `checkpoint` value that selects it. */
  name: string;
  task: string;
  difficulty: number;
  accuracy: number;
}

export interface ConfigSlice {
  preset: PresetName | null;
  /** The config being edited; fields may hold raw values that do not validate yet. */
  draft: Record<string, unknown>;
  check: DraftCheck;
  backend: BackendKind;
  /** Why the link's config could not be used (the page then shows the defaults). */
  urlError: string | null;
  warmStarts: WarmStart[];
}

/** A run's records on the page. `version` changes whenever the table grows. */
export interface RunView {
  table: MetricTable;
  version: number;
  evals: EvalRecord[];
  rolloutSteps: number[];
}

export interface RunSlice {
  progress: RunProgress;
}

export interface ChartsSlice {
  views: Record<string, RunView>;
  /** The run the charts and the inspector show first (the live run, or one opened from the list). */
  viewRunId: string | null;
  /** Other runs drawn on the same charts. */
  overlay: string[];
  /** EMA weight in [0, 0.99]. */
  smoothing: number;
  /** Log scale by chart id (absent: the chart's default). */
  logScale: Record<string, boolean>;
}

export interface InspectorSlice {
  /** Rollout step shown (null: the latest of the viewed run). */
  inspectStep: number | null;
  /** Sampled groups by `${runId}@${step}`. */
  rollouts: Record<string, { groups: GroupRecord[]; texts: TokenTexts }>;
  colorBy: ColorQuantity;
}

export interface Notice {
  id: number;
  level: 'warning' | 'error';
  message: string;
}

export interface RunsSlice {
  runs: RunHeader[];
  storage: { usage: number; quota: number } | null;
  persistent: boolean;
  notices: Notice[];
  importError: string | null;
  lastImported: RunHeader | null;
  /** Files to download (the page saves them and clears this). */
  downloads: { id: number; files: ExportFile[] } | null;
}

export interface Actions {
  startEngine(): void;
  runSelfTest(filter?: string): void;
  handleResponse(r: Response): void;
  /** Reads the config from a URL query (a shared link); a bad one leaves the defaults and a message. */
  initConfig(search: string): void;
  loadWarmStarts(): Promise<void>;
  setField(field: RLField, value: unknown): void;
  applyPreset(preset: PresetName | null): void;
  setTask(task: string): void;
  setBackend(b: BackendKind): void;
  /** Continues the current paused run with an unchanged config, else starts a new run from the config. */
  startRun(): void;
  pauseRun(): void;
  stepRun(): void;
  resetRun(): void;
  resumeRun(runId: string): void;
  openRun(runId: string): void;
  toggleOverlay(runId: string): void;
  setSmoothing(w: number): void;
  setLogScale(chartId: string, on: boolean): void;
  setInspectStep(step: number | null): void;
  setColorBy(q: ColorQuantity): void;
  requestRollouts(runId: string, step: number): void;
  deleteRun(runId: string): void;
  exportRun(runId: string, kind: ExportKind): void;
  importFile(fileName: string, text: string): void;
  dismissNotice(id: number): void;
  clearDownloads(): void;
  addNotice(level: Notice['level'], message: string): void;
}

export type LabState = GpuSlice & SelfTestSlice & ConfigSlice & RunSlice & ChartsSlice & InspectorSlice & RunsSlice & Actions;

// ---------------------------------------------------------------------------------------------------------

/** The lab's starting experiment: GRPO on two-digit addition from its warm start. */
export const LAB_DEFAULT = { preset: 'grpo' as PresetName, overrides: { task: 'addition', difficulty: 2, checkpoint: 'addition' } };

export const IDLE_PROGRESS: RunProgress = { runId: null, name: '', status: 'idle', step: 0, totalSteps: 0, elapsedMs: 0, lastStepMs: 0, meanStepMs: 0, tokensPerSec: 0, backend: 'webgpu', savedStep: 0 };

/** Page parameters that are not config fields. */
export const PAGE_PARAMS = ['selftest', 'bench'] as const;

const MAX_ROLLOUT_ENTRIES = 48;

let client: EngineClient | null = null;
let noticeId = 0;
let downloadId = 0;

function send(r: Request): void {
  client?.send(r);
}

function emptyView(): RunView {
  return { table: new MetricTable(), version: 0, evals: [], rolloutSteps: [] };
}

function viewFrom(batch: MetricBatch, evals: EvalRecord[], rolloutSteps: number[]): RunView {
  const table = new MetricTable();
  table.append(batch);
  return { table, version: 1, evals, rolloutSteps };
}

const defaultDraft = (): Record<string, unknown> => ({ ...resolveConfig(LAB_DEFAULT.preset, LAB_DEFAULT.overrides) });

export const useLab = create<LabState>()((set, get) => ({
  gpuStatus: 'idle',
  adapter: null,
  tuning: null,
  gpuMessage: null,
  selftestRunning: false,
  selftestResults: [],
  selftestTotal: 0,
  selftestSummary: null,

  preset: LAB_DEFAULT.preset,
  draft: defaultDraft(),
  check: checkDraft(defaultDraft()),
  backend: 'webgpu',
  urlError: null,
  warmStarts: [],

  progress: IDLE_PROGRESS,

  views: {},
  viewRunId: null,
  overlay: [],
  smoothing: 0.6,
  logScale: {},

  inspectStep: null,
  rollouts: {},
  colorBy: 'advantage',

  runs: [],
  storage: null,
  persistent: false,
  notices: [],
  importError: null,
  lastImported: null,
  downloads: null,

  startEngine() {
    if (client) return;
    set({ gpuStatus: 'starting', gpuMessage: null });
    client = new EngineClient((r) => get().handleResponse(r));
    client.send({ type: 'init' });
  },

  runSelfTest(filter) {
    if (!client || get().gpuStatus !== 'ready' || get().selftestRunning) return;
    set({ selftestRunning: true, selftestResults: [], selftestSummary: null, selftestTotal: 0 });
    client.send({ type: 'selftest', filter });
  },

  initConfig(search) {
    const params = new URLSearchParams(search);
    for (const p of PAGE_PARAMS) params.delete(p);
    if ([...params.keys()].length === 0) return;
    try {
      const config = configFromUrlParams(params);
      const p = params.get('preset');
      const preset = p !== null && isPresetName(p) ? p : null;
      set({ draft: { ...config }, check: checkDraft(config), preset, urlError: null });
    } catch (e) {
      set({ urlError: `The link's config could not be used, so the page shows the defaults instead. ${e instanceof Error ? e.message : String(e)}` });
    }
  },

  async loadWarmStarts() {
    try {
      const r = await fetch(`${import.meta.env.BASE_URL}checkpoints/manifest.json`);
      if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
      const m = (await r.json()) as { checkpoints?: { task: string; difficulty: number; path: string; heldout_greedy_accuracy: number }[] };
      const warmStarts = (m.checkpoints ?? []).map((c) => ({ name: c.path.replace(/^checkpoints\//, ''), task: c.task, difficulty: c.difficulty, accuracy: c.heldout_greedy_accuracy }));
      set({ warmStarts });
    } catch (e) {
      get().addNotice('warning', `The list of warm-start checkpoints could not be read (${e instanceof Error ? e.message : String(e)}); fresh models still work.`);
    }
  },

  setField(field, value) {
    const draft = { ...get().draft, [field]: value };
    set({ draft, check: checkDraft(draft) });
  },

  applyPreset(preset) {
    const draft = switchPreset(get().draft, preset);
    set({ preset, draft, check: checkDraft(draft) });
  },

  setTask(task) {
    const ws = get().warmStarts.find((w) => w.task === task);
    const draft = { ...get().draft, task, checkpoint: ws ? ws.name : null, difficulty: ws ? ws.difficulty : null };
    set({ draft, check: checkDraft(draft) });
  },

  setBackend(backend) {
    set({ backend });
  },

  startRun() {
    const { progress, check, preset, backend, runs } = get();
    if (progress.status === 'running' || progress.status === 'loading' || progress.status === 'pausing') return;
    const current = runs.find((r) => r.id === progress.runId);
    if (progress.status === 'paused' && current && check.config && sameConfig(current.config, check.config)) {
      send({ type: 'start' });
      return;
    }
    if (!check.config) {
      get().addNotice('error', `The config has errors; fix the marked fields first. ${[...Object.entries(check.fieldErrors).map(([k, v]) => `${k}: ${v}`), ...check.otherErrors].join('; ')}`);
      return;
    }
    send({ type: 'configure', config: check.config, preset, backend, then: 'start' });
  },

  pauseRun() {
    send({ type: 'pause' });
  },

  stepRun() {
    const { progress, check, preset, backend, runs } = get();
    const current = runs.find((r) => r.id === progress.runId);
    if (progress.status === 'paused' && current && check.config && sameConfig(current.config, check.config)) send({ type: 'step' });
    else if (check.config && (progress.status === 'idle' || progress.status === 'paused' || progress.status === 'done' || progress.status === 'failed' || progress.status === 'interrupted')) {
      send({ type: 'configure', config: check.config, preset, backend, then: 'step' });
    }
  },

  resetRun() {
    send({ type: 'reset' });
  },

  resumeRun(runId) {
    const h = get().runs.find((r) => r.id === runId);
    if (h) set({ draft: { ...h.config }, check: checkDraft(h.config), preset: h.preset, backend: h.backend });
    set({ viewRunId: runId });
    send({ type: 'resume', runId });
  },

  openRun(runId) {
    set({ viewRunId: runId, inspectStep: null, overlay: get().overlay.filter((id) => id !== runId) });
    send({ type: 'load-run', runId });
  },

  toggleOverlay(runId) {
    const { overlay, views } = get();
    if (overlay.includes(runId)) {
      set({ overlay: overlay.filter((id) => id !== runId) });
      return;
    }
    set({ overlay: [...overlay, runId] });
    if (!views[runId] || runId !== get().progress.runId) send({ type: 'load-run', runId });
  },

  setSmoothing(w) {
    set({ smoothing: Math.min(0.99, Math.max(0, w)) });
  },

  setLogScale(chartId, on) {
    set({ logScale: { ...get().logScale, [chartId]: on } });
  },

  setInspectStep(step) {
    set({ inspectStep: step });
  },

  setColorBy(colorBy) {
    set({ colorBy });
  },

  requestRollouts(runId, step) {
    if (get().rollouts[`${runId}@${step}`]) return;
    send({ type: 'load-rollouts', runId, step });
  },

  deleteRun(runId) {
    send({ type: 'delete-run', runId });
    const { views, overlay, viewRunId } = get();
    const { [runId]: _, ...rest } = views;
    set({ views: rest, overlay: overlay.filter((id) => id !== runId), viewRunId: viewRunId === runId ? null : viewRunId });
  },

  exportRun(runId, kind) {
    send({ type: 'export', runId, kind });
  },

  importFile(fileName, text) {
    set({ importError: null });
    send({ type: 'import', fileName, text });
  },

  dismissNotice(id) {
    set({ notices: get().notices.filter((n) => n.id !== id) });
  },

  clearDownloads() {
    set({ downloads: null });
  },

  addNotice(level, message) {
    const notices = [...get().notices, { id: ++noticeId, level, message }];
    set({ notices: notices.slice(-8) });
  },

  handleResponse(r) {
    switch (r.type) {
      case 'ready':
        return set({ gpuStatus: 'ready', adapter: r.report, tuning: r.tuning ?? null, gpuMessage: null });
      case 'unavailable':
        // Without WebGPU the CPU backend is the only one; the page says so and labels it slow.
        return set({ gpuStatus: 'unavailable', gpuMessage: r.message, backend: 'cpu' });
      case 'selftest-case':
        return set((s) => ({ selftestResults: [...s.selftestResults, r.result], selftestTotal: r.total }));
      case 'selftest-done':
        return set({ selftestRunning: false, selftestSummary: { passed: r.passed, failed: r.failed, ms: r.ms } });
      case 'progress': {
        const p = r.progress;
        const s = get();
        const patch: Partial<LabState> = { progress: p };
        if (p.runId && p.runId !== s.progress.runId) {
          // A new current run: the charts and the inspector follow it.
          patch.viewRunId = p.runId;
          patch.inspectStep = null;
          patch.overlay = s.overlay.filter((id) => id !== p.runId);
          if (!s.views[p.runId]) patch.views = { ...s.views, [p.runId]: emptyView() };
        }
        return set(patch);
      }
      case 'metrics': {
        const v = get().views[r.runId] ?? emptyView();
        v.table.append(r.batch);
        return set({ views: { ...get().views, [r.runId]: { ...v, version: v.version + 1 } } });
      }
      case 'rollouts': {
        const key = `${r.runId}@${r.step}`;
        const entries = Object.entries(get().rollouts).filter(([k]) => k !== key);
        const rollouts = Object.fromEntries([...entries.slice(-(MAX_ROLLOUT_ENTRIES - 1)), [key, { groups: r.groups, texts: r.texts }]]);
        const v = get().views[r.runId];
        const views = v && !v.rolloutSteps.includes(r.step) ? { ...get().views, [r.runId]: { ...v, rolloutSteps: [...v.rolloutSteps, r.step].sort((a, b) => a - b) } } : get().views;
        return set({ rollouts, views });
      }
      case 'evals': {
        const v = get().views[r.runId] ?? emptyView();
        const evals = [...v.evals.filter((e) => !r.evals.some((x) => x.step === e.step)), ...r.evals].sort((a, b) => a.step - b.step);
        return set({ views: { ...get().views, [r.runId]: { ...v, evals } } });
      }
      case 'run-data':
        return set({ views: { ...get().views, [r.runId]: viewFrom(r.batch, r.evals, r.rolloutSteps) } });
      case 'runs':
        return set({ runs: r.runs, storage: r.storage, persistent: r.persistent });
      case 'export-ready':
        return set({ downloads: { id: ++downloadId, files: r.files } });
      case 'imported':
        return set({ lastImported: r.header, importError: null });
      case 'notice':
        return get().addNotice(r.level, r.message);
      case 'error':
        if (r.request === 'import') return set({ importError: r.message });
        if (r.request === 'selftest') set({ selftestRunning: false });
        if (r.fatal) set({ gpuStatus: 'error', gpuMessage: r.message, selftestRunning: false });
        return get().addNotice('error', r.message);
      default:
        return assertNever(r);
    }
  },
}));

/** Two configs are the same experiment. */
export function sameConfig(a: RLConfig, b: RLConfig): boolean {
  return (Object.keys(a) as RLField[]).every((k) => sameValue(a[k], b[k]));
}
