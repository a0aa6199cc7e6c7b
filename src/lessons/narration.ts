// Narration bound to live values and the small statistics lesson checks share. A placeholder {metric} reads the
// first run's latest value, {key:metric} a named run's; values print with 3 significant digits, and a value not
// there yet prints as "…". Pure functions over LessonRunResult-like data, used by the page and the headless runner.

import type { EvalRecord, Metrics } from '../schema/stream';
import type { Lesson, LessonRunResult } from './lesson';

/** Latest metrics per run key (what the page has so far). */
export type LatestMetrics = Readonly<Record<string, Metrics | undefined>>;

const PLACEHOLDER = /\{(?:([A-Za-z0-9_-]+):)?([A-Za-z0-9_/<>.-]+)\}/g;

/** A number as narration prints it: 3 significant digits, integers as they are, exact 0 as 0. */
export function narrationNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  return Number(v.toPrecision(3)).toString();
}

/** `text` with its placeholders replaced by the runs' latest values. */
export function renderNarration(text: string, lesson: Pick<Lesson, 'runs'>, latest: LatestMetrics): string {
  return text.replace(PLACEHOLDER, (whole, key: string | undefined, metric: string) => {
    const runKey = key ?? lesson.runs[0]?.key;
    if (key !== undefined && !lesson.runs.some((r) => r.key === key)) return whole;
    const v = (latest[runKey] as Record<string, number> | undefined)?.[metric];
    return v === undefined ? '…' : narrationNumber(v);
  });
}

/** Every placeholder of a lesson's narration, as [run key, metric] (the lessons test checks each names a real run). */
export function narrationPlaceholders(lesson: Pick<Lesson, 'runs' | 'narration'>): [string, string][] {
  const out: [string, string][] = [];
  for (const text of lesson.narration) {
    for (const m of text.matchAll(PLACEHOLDER)) out.push([m[1] ?? lesson.runs[0]?.key ?? '', m[2]]);
  }
  return out;
}

/** The latest metrics of each run of a result set. */
export function latestOf(runs: readonly LessonRunResult[]): Record<string, Metrics | undefined> {
  return Object.fromEntries(runs.map((r) => [r.key, r.steps[r.steps.length - 1]]));
}

/**
 * The latest metrics of each run, each the debiased exponential moving average of its values over the rollout
 * steps with weight `smoothing` (TensorBoard's, as the page's charts draw them: src/store/series.ts smooth), so a
 * narration quotes the value the chart shows rather than the noisy last step. `smooth` is the charts' function.
 */
export function smoothedLatestOf(
  runs: readonly LessonRunResult[],
  smoothing: number,
  smooth: (values: ArrayLike<number>, weight: number) => ArrayLike<number>,
): Record<string, Metrics | undefined> {
  return Object.fromEntries(
    runs.map((r) => {
      const last = r.steps[r.steps.length - 1];
      if (!last) return [r.key, undefined];
      const out: Record<string, number> = {};
      for (const metric of Object.keys(last)) {
        const ys = smooth(series(r, metric), smoothing);
        out[metric] = ys[ys.length - 1];
      }
      return [r.key, out as Metrics];
    }),
  );
}

/** The values of `metric` over a run's rollout steps (missing values skipped). */
export function series(run: LessonRunResult, metric: string): number[] {
  const out: number[] = [];
  for (const m of run.steps) {
    const v = (m as Record<string, number | undefined>)[metric];
    if (v !== undefined) out.push(v);
  }
  return out;
}

/** Mean of `xs` (NaN for none). */
export function meanOf(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Mean of the first and of the last `n` values of a series. */
export function firstLast(xs: readonly number[], n: number): { first: number; last: number } {
  return { first: meanOf(xs.slice(0, n)), last: meanOf(xs.slice(-n)) };
}

/** The run of `runs` with `key` (throws naming the lesson's keys when absent: a lesson file's mistake). */
export function runOf(runs: readonly LessonRunResult[], key: string): LessonRunResult {
  const r = runs.find((x) => x.key === key);
  if (!r) throw new Error(`no run "${key}" in this lesson (runs: ${runs.map((x) => x.key).join(', ')})`);
  return r;
}

/** A run's last held-out evaluation (throws when it has none: a lesson whose run never reaches an evaluation). */
export function finalEval(run: LessonRunResult): EvalRecord {
  const e = run.evals[run.evals.length - 1];
  if (!e) throw new Error(`run "${run.key}" has no held-out evaluation (its eval_every never reaches a step)`);
  return e;
}
