// The lab's rules, derived from the store's state and written once: may a run start, continue, step, pause,
// reset or resume; which step a run is at; which backend and runs are shown. The run controls render from these
// and the store's actions check the same ones, so a button and its action never disagree. Pure functions of the
// state; no React, no side effects.

import { cpuRefusal } from '../schema/cpu-limit';
import type { ExportKind } from '../engine/lab-engine';
import type { BackendKind, RunHeader } from '../schema/run-types';
import { lessonById, renderNarration, smoothedLatestOf, type Lesson, type LessonRunResult } from '../lessons';
import { smooth } from './series';
import { MODEL_PRESETS } from '../schema/model-config';
import { CHARTS, type ChartId } from '../schema/metrics';
import { sameConfig } from './config-diff';
import type { LabState } from './index';
import { lessonRunResults } from './lesson-results';
import { rolloutKey } from './slices/inspector';
import { NO_PROGRESS, type LessonProgress } from './slices/lessons';

/** The saved header of the engine's current run, if it has been listed yet. */
export function currentRun(s: LabState): RunHeader | undefined {
  return s.progress.runId === null ? undefined : s.runs.find((r) => r.id === s.progress.runId);
}

/**
 * A run's reward as the charts draw it at its last point: the reward column of the records the page holds,
 * smoothed at the charts' weight by the charts' own smooth (as the narration's smoothedLatestOf is), its last
 * finite value; undefined while the page holds no records of the run (the runs list asks for them).
 */
export function chartReward(s: Pick<LabState, 'views' | 'smoothing'>, runId: string): number | undefined {
  const column = s.views[runId]?.table.column('reward');
  if (!column) return undefined;
  const smoothed = smooth(column, s.smoothing);
  for (let i = smoothed.length - 1; i >= 0; i--) if (Number.isFinite(smoothed[i])) return smoothed[i];
  return undefined;
}

/** The engine's current run is doing something (loading, training, or finishing a step before it pauses). */
export function isBusy(s: LabState): boolean {
  const st = s.progress.status;
  return st === 'running' || st === 'pausing' || st === 'loading';
}

/** The engine can take a run on the selected backend (the CPU backend needs only the worker's answer). */
export function engineReady(s: LabState): boolean {
  return s.backend === 'cpu' ? !['idle', 'starting'].includes(s.gpuStatus) : s.gpuStatus === 'ready';
}

/**
 * The current run is paused and its config equals the edited one, or it is a paused seed of a seed queue (its seed
 * differs from the edited config's): Start continues it (and the queue) instead of starting anew.
 */
export function canContinue(s: LabState): boolean {
  if (s.progress.status === 'paused' && s.progress.seedQueue) return true;
  const current = currentRun(s);
  return (
    s.progress.status === 'paused' && !!current && s.check.config !== null && sameConfig(current.config, s.check.config)
  );
}

/**
 * Why Start (and Step, and Run over seeds) cannot run now, or null when they can. While a lesson is open its own
 * Run is the one control that starts anything ('lesson'): the lesson asks for a prediction first and names its runs.
 */
export type StartBlocker = 'lesson' | EngineStartBlocker;

/** Why the engine cannot take a new run from the edited config now (a lesson's own launches ask only this). */
export type EngineStartBlocker = 'busy' | 'engine' | 'config';

export function engineStartBlocker(s: LabState): EngineStartBlocker | null {
  if (isBusy(s)) return 'busy';
  if (!engineReady(s)) return 'engine';
  if (s.check.config === null) return 'config';
  return null;
}

export function startBlocker(s: LabState): StartBlocker | null {
  if (s.lesson !== null) return 'lesson';
  return engineStartBlocker(s);
}

/** Start (continue the current run, or a new run from the edited config) is possible. */
export function canStart(s: LabState): boolean {
  return startBlocker(s) === null;
}

/** Step (one rollout step, then pause) is possible: a start that pauses after one step, under the same rule. */
export function canStep(s: LabState): boolean {
  return canStart(s);
}

/** Pause is possible: the current run is training. */
export function canPause(s: LabState): boolean {
  return s.progress.status === 'running';
}

/** Reset (drop the trainer; the run stays saved) is possible: there is a current run. */
export function canReset(s: LabState): boolean {
  return s.progress.runId !== null;
}

/** The current run stopped on its own (failed, or interrupted by a reload or a lost device) and can resume. */
export function canResumeCurrent(s: LabState): boolean {
  return s.progress.runId !== null && (s.progress.status === 'interrupted' || s.progress.status === 'failed');
}

/** A saved run that is not the current one can resume from its saved state (imported and finished runs cannot). */
export function canResumeRun(s: LabState, h: RunHeader): boolean {
  return !isCurrentRun(s, h.id) && h.status !== 'imported' && h.status !== 'done';
}

/** Every export of a run, in the order the runs list offers them. */
export const EXPORT_KINDS: readonly ExportKind[] = ['metrics-csv', 'metrics-jsonl', 'rollouts-jsonl', 'checkpoint'];

/**
 * The exports a run offers. An imported run has metrics (and evaluations) only: no sampled groups to write and no
 * trainer state to save, so only its metrics exports. A checkpoint needs a saved trainer state, or the current run
 * (whose trainer the engine holds, or saves when paused).
 */
export function runExports(s: LabState, h: RunHeader): ExportKind[] {
  if (h.status === 'imported') return ['metrics-csv', 'metrics-jsonl'];
  return EXPORT_KINDS.filter((k) => k !== 'checkpoint' || h.savedStep > 0 || isCurrentRun(s, h.id));
}

/** What the Start button does, in words. */
export function startLabel(s: LabState): 'Continue' | 'Start new run' | 'Start' {
  return canContinue(s) ? 'Continue' : s.progress.status === 'paused' ? 'Start new run' : 'Start';
}

/** This run is the engine's current run. */
export function isCurrentRun(s: LabState, runId: string): boolean {
  return s.progress.runId === runId;
}

/** A run's rollout step: live from the engine's progress for the current run, else the saved header's. */
export function runStep(s: LabState, h: RunHeader): number {
  return isCurrentRun(s, h.id) ? s.progress.step : h.step;
}

/** The saved header of the run the charts show (null: none, or not in the runs list yet); the status line is about it. */
export function viewedRun(s: Pick<LabState, 'viewRunId' | 'runs'>): RunHeader | null {
  return s.viewRunId ? (s.runs.find((h) => h.id === s.viewRunId) ?? null) : null;
}

/** The backend the page is about: the current run's, else the selected one. */
export function activeBackend(s: LabState): BackendKind {
  return s.progress.runId ? s.progress.backend : s.backend;
}

/** Why the CPU backend cannot run the edited model (null: it can, or the backend is WebGPU). Warm starts are nano models. */
export function cpuBackendRefusal(s: LabState): string | null {
  if (s.backend !== 'cpu' || s.draft.checkpoint !== null) return null;
  const preset = MODEL_PRESETS[s.draft.model as keyof typeof MODEL_PRESETS];
  return preset ? cpuRefusal(preset) : null;
}

/**
 * The runs on the charts, each only once its records are on the page: while a lesson is open, exactly the lesson's
 * runs (in the lesson's order; none before its Run), so the axes fit their steps and no earlier run is drawn beside
 * them; else the viewed run then the overlaid ones (the person's overlay, untouched by a lesson).
 */
export function chartRunIds(s: LabState): string[] {
  const ids = s.lesson ? lessonRunIds(s) : [s.viewRunId, ...s.overlay];
  return ids.filter((id): id is string => !!id && !!s.views[id]);
}

/**
 * The run the single-run views (the distributions, the weight updates, the solve rates, the inspector) show: the
 * first run on the charts, so they never draw a run the charts leave out (an earlier run while a lesson is open and
 * has none of its own yet); null when the charts show none.
 */
export function shownRunId(s: LabState): string | null {
  return (s.lesson ? lessonRunIds(s).find((id) => !!s.views[id]) : s.viewRunId) ?? null;
}

/** A run's records on the page, if loaded (undefined for no run). */
export function runView(s: LabState, runId: string | null): LabState['views'][string] | undefined {
  return runId ? s.views[runId] : undefined;
}

/** The engine's run ids of the open lesson's runs launched so far, in the lesson's order. */
export function lessonRunIds(s: Pick<LabState, 'lesson'>): string[] {
  const l = s.lesson;
  const lesson = l && lessonById(l.lessonId);
  if (!lesson) return [];
  return lesson.runs.flatMap((r) => (l.runIds[r.key] === undefined ? [] : [l.runIds[r.key]]));
}

/** The open lesson, if any. */
export function openedLesson(s: LabState): Lesson | undefined {
  return s.lesson ? lessonById(s.lesson.lessonId) : undefined;
}

/** What the learner has done in a lesson (nothing yet: NO_PROGRESS). */
export function lessonProgressOf(s: LabState, lessonId: string): LessonProgress {
  return s.lessonProgress[lessonId] ?? NO_PROGRESS;
}

/** Why the open lesson's runs cannot start now: no lesson, not answered yet, its runs going, or the engine's reasons. */
export type LessonRunBlocker = 'closed' | 'answer' | 'running' | 'busy' | 'engine';

export function lessonRunBlocker(s: LabState): LessonRunBlocker | null {
  const lesson = openedLesson(s);
  if (!lesson) return 'closed';
  if (lessonProgressOf(s, lesson.id).answer === null) return 'answer';
  if (s.lesson!.phase === 'running') return 'running';
  if (isBusy(s)) return 'busy';
  if (!engineReady(s)) return 'engine';
  return null;
}

/** The open lesson's runs launched so far, as its check sees them (from the page's metric tables). */
export function lessonResults(s: LabState): LessonRunResult[] {
  const lesson = openedLesson(s);
  if (!lesson) return [];
  return lessonRunResults(lesson, s.lesson!, s.views, (runId, step) => s.rollouts[rolloutKey(runId, step)]?.groups);
}

/**
 * The open lesson's narration with the runs' latest values in place ("…" where a value is not there yet): each the
 * value the charts show, smoothed as they are (the chart's smoothing weight), not the noisy last step.
 */
export function lessonNarration(s: LabState): string[] {
  const lesson = openedLesson(s);
  if (!lesson) return [];
  const latest = smoothedLatestOf(lessonResults(s), s.smoothing, smooth);
  return lesson.narration.map((text) => renderNarration(text, lesson, latest));
}

/** Where one run of the open lesson stands: waiting its turn, training (at a step of the lesson's steps), done, or stopped. */
export interface LessonRunState {
  key: string;
  label: string;
  state: 'waiting' | 'training' | 'done' | 'stopped';
  step: number;
  steps: number;
}

export function lessonRunStates(s: LabState): LessonRunState[] {
  const lesson = openedLesson(s);
  const l = s.lesson;
  if (!lesson || !l) return [];
  return lesson.runs.map((run, i) => {
    const runId = l.runIds[run.key];
    const live = runId !== undefined && s.progress.runId === runId;
    const state: LessonRunState['state'] =
      l.phase === 'ready' || i > l.current
        ? 'waiting'
        : l.phase === 'done' || i < l.current
          ? 'done'
          : l.phase === 'stopped' || l.phase === 'interrupted'
            ? 'stopped'
            : 'training';
    const saved = runId === undefined ? undefined : s.runs.find((h) => h.id === runId);
    const step = state === 'done' ? lesson.steps : live ? s.progress.step : (saved?.step ?? 0);
    return { key: run.key, label: run.label, state, step, steps: lesson.steps };
  });
}

/** The open lesson's interrupted run (a reload stopped it), with its saved header, or null. */
export function lessonInterruptedRun(s: LabState): { label: string; header: RunHeader; steps: number } | null {
  const lesson = openedLesson(s);
  const l = s.lesson;
  if (!lesson || l?.phase !== 'interrupted') return null;
  const run = lesson.runs[l.current];
  const header = s.runs.find((h) => h.id === l.runIds[run.key]);
  return header ? { label: run.label, header, steps: lesson.steps } : null;
}

const NO_CHARTS: readonly ChartId[] = [];

/** The test id suffix of the held-out pass@k chart (chart-pass-at-k), which a lesson may point at beside CHARTS. */
export const PASS_AT_K_CHART = 'pass-at-k';

/** The charts a lesson points at, with their titles, in the lesson's order (unknown ids left out), then pass@k. */
export function lessonChartTitles(lesson: Lesson): { id: ChartId | typeof PASS_AT_K_CHART; title: string }[] {
  const charts: { id: ChartId | typeof PASS_AT_K_CHART; title: string }[] = lesson.highlight.charts.flatMap((id) => {
    const chart = CHARTS.find((c) => c.id === id);
    return chart ? [{ id, title: chart.title }] : [];
  });
  if (lesson.highlight.passAtK) charts.push({ id: PASS_AT_K_CHART, title: 'Held-out pass@k' });
  return charts;
}

/** The charts the open lesson asks the learner to look at (the same array while the lesson stays open). */
export function highlightedCharts(s: LabState): readonly ChartId[] {
  return openedLesson(s)?.highlight.charts ?? NO_CHARTS;
}
