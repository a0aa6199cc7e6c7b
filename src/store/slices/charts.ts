// The charts slice: each run's records on the page (its metric table, evaluations and rollout steps), which run
// the charts and the inspector show, the runs overlaid on it, and the chart settings (smoothing, log scales).
// Chart settings never reach the worker; showing a saved run asks the worker for its records.

import type { MetricBatch } from '../../schema/metric-batch';
import type { EvalRecord } from '../../schema/stream';
import { MetricTable } from '../metric-table';
import { lessonRunIds } from '../selectors';
import type { LabSlice } from '../slice';

/** A run's records on the page. `version` changes whenever the table grows (the table grows in place). */
export interface RunView {
  table: MetricTable;
  version: number;
  evals: EvalRecord[];
  rolloutSteps: number[];
}

export interface ChartsState {
  views: Record<string, RunView>;
  /** The run the charts and the inspector show first (the live run, or one opened from the list). */
  viewRunId: string | null;
  /** Other runs drawn on the same charts. */
  overlay: string[];
  /** EMA weight in [0, 0.99]. */
  smoothing: number;
  /** Log scale by chart id (absent: the chart's default). */
  logScale: Record<string, boolean>;
  /** Names of an imported log beyond those charted that the person picked to chart, by run. */
  pickedMetrics: Record<string, string[]>;
}

export interface ChartsActions {
  /** Shows a run on the charts and in the inspector (at its latest step), no longer as an overlay. */
  showRun(runId: string): void;
  /** Shows the engine's new current run, whose records will stream in. */
  followRun(runId: string): void;
  /** Shows a saved run and asks the worker for its records. */
  openRun(runId: string): void;
  toggleOverlay(runId: string): void;
  /** Asks the worker for a saved run's records without showing it (a lesson's runs after a reload). */
  loadRunRecords(runId: string): void;
  /** Charts one more of an imported log's uncharted names (origin.uncharted) and shows that run. */
  chartMetric(runId: string, name: string): void;
  setSmoothing(w: number): void;
  setLogScale(chartId: string, on: boolean): void;
  appendMetrics(runId: string, batch: MetricBatch): void;
  /** Adds evaluations (a newer one of the same step replaces the older). */
  mergeEvals(runId: string, evals: EvalRecord[]): void;
  /** A saved run's records, replacing what the page had for it. */
  replaceRunData(runId: string, batch: MetricBatch, evals: EvalRecord[], rolloutSteps: number[]): void;
  addRolloutStep(runId: string, step: number): void;
  /** Drops a deleted run from the charts. */
  forgetRun(runId: string): void;
}

export type ChartsSlice = ChartsState & ChartsActions;

function emptyView(): RunView {
  return { table: new MetricTable(), version: 0, evals: [], rolloutSteps: [] };
}

export const chartsSlice: LabSlice<ChartsSlice> =
  ({ link }) =>
  (set, get) => {
    /** Replaces one run's view. */
    const putView = (runId: string, view: RunView) => set({ views: { ...get().views, [runId]: view } });
    const viewOf = (runId: string) => get().views[runId] ?? emptyView();
    /** Asks the worker for a saved run's records, with the names picked for it. */
    const loadRun = (runId: string) => {
      const metrics = get().pickedMetrics[runId];
      link.send(metrics?.length ? { type: 'load-run', runId, metrics } : { type: 'load-run', runId });
    };
    /**
     * Opening or overlaying a run from the list while a lesson owns the charts (they show exactly its runs) is
     * leaving the lesson: it closes, so the charts show what was asked for. The lesson's own runs keep it open.
     */
    const leaveLessonFor = (runId: string) => {
      const s = get();
      if (s.lesson && !lessonRunIds(s).includes(runId)) s.closeLesson();
    };
    return {
      views: {},
      viewRunId: null,
      overlay: [],
      smoothing: 0.6,
      logScale: {},
      pickedMetrics: {},

      showRun(runId) {
        set({ viewRunId: runId, overlay: get().overlay.filter((id) => id !== runId) });
        get().setInspectStep(null);
      },

      followRun(runId) {
        get().showRun(runId);
        if (!get().views[runId]) putView(runId, emptyView());
      },

      openRun(runId) {
        leaveLessonFor(runId);
        get().showRun(runId);
        loadRun(runId);
      },

      loadRunRecords(runId) {
        loadRun(runId);
      },

      chartMetric(runId, name) {
        const picked = get().pickedMetrics[runId] ?? [];
        const n = name.trim();
        if (n && !picked.includes(n)) set({ pickedMetrics: { ...get().pickedMetrics, [runId]: [...picked, n] } });
        get().openRun(runId);
      },

      toggleOverlay(runId) {
        const { overlay, views } = get();
        if (overlay.includes(runId)) {
          set({ overlay: overlay.filter((id) => id !== runId) });
          return;
        }
        leaveLessonFor(runId);
        set({ overlay: [...overlay, runId] });
        // The live run's view is complete already; any other is loaded (again) from storage.
        if (!views[runId] || runId !== get().progress.runId) loadRun(runId);
      },

      setSmoothing(w) {
        set({ smoothing: Math.min(0.99, Math.max(0, w)) });
      },

      setLogScale(chartId, on) {
        set({ logScale: { ...get().logScale, [chartId]: on } });
      },

      appendMetrics(runId, batch) {
        const v = viewOf(runId);
        v.table.append(batch);
        putView(runId, { ...v, version: v.version + 1 });
      },

      mergeEvals(runId, evals) {
        const v = viewOf(runId);
        const merged = [...v.evals.filter((e) => !evals.some((x) => x.step === e.step)), ...evals].sort(
          (a, b) => a.step - b.step,
        );
        putView(runId, { ...v, evals: merged });
      },

      replaceRunData(runId, batch, evals, rolloutSteps) {
        const table = new MetricTable();
        table.append(batch);
        putView(runId, { table, version: 1, evals, rolloutSteps });
      },

      addRolloutStep(runId, step) {
        const v = get().views[runId];
        if (v && !v.rolloutSteps.includes(step))
          putView(runId, { ...v, rolloutSteps: [...v.rolloutSteps, step].sort((a, b) => a - b) });
      },

      forgetRun(runId) {
        const { views, overlay, viewRunId } = get();
        const { [runId]: _, ...rest } = views;
        const { [runId]: __, ...picked } = get().pickedMetrics;
        set({
          views: rest,
          pickedMetrics: picked,
          overlay: overlay.filter((id) => id !== runId),
          viewRunId: viewRunId === runId ? null : viewRunId,
        });
      },
    };
  };
