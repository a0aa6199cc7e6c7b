// What the page draws of a run's distributions over time, from its metric table and evaluations: a histogram's
// steps x bins grid of shares (a heatmap's cells, adjacent steps merged to fit a width), the held-out solve-rate
// histograms of the starting and the latest evaluation, and the inspector's all-groups view sorted by reward.
// Pure; no React. Not the histograms' bins (src/schema/histograms.ts) nor the drawing (src/ui/Heatmap.tsx).

import type { CompletionSummary, EvalRecord, GroupSummary } from '../schema/stream';
import { HISTOGRAMS, binLabel, type HistogramId } from '../schema/histograms';
import type { MetricTable } from './metric-table';

/** A heatmap's data: `values[row][column]`, rows bottom to top, columns left to right. */
export interface HeatmapGrid {
  /** One label per row (a bin: "[0.1, 0.2)"), bottom row first. */
  rows: string[];
  /** Each column's x (its last rollout step). */
  columns: number[];
  /** Each column's first rollout step (equal to `columns` when no steps were merged). */
  firstSteps: number[];
  /** Share of the column's counts in each row, in [0, 1]; NaN for a column with no counts. */
  values: number[][];
  /** Counts per column (what the shares divide by). */
  totals: number[];
}

/**
 * A histogram of a run over its rollout steps as shares: column = rollout step (at most `maxColumns`: adjacent
 * steps summed, so a long run keeps its shape), row = bin, value = the bin's share of the column's counts.
 */
export function histogramGrid(table: MetricTable, id: HistogramId, maxColumns: number): HeatmapGrid {
  const edges = HISTOGRAMS[id].edges;
  const K = edges.length - 1;
  const steps = table.histograms().filter(([, h]) => h[id]?.length === K);
  const per = Math.max(1, Math.ceil(steps.length / Math.max(1, maxColumns)));
  const columns: number[] = [];
  const firstSteps: number[] = [];
  const counts: number[][] = [];
  for (let i = 0; i < steps.length; i += per) {
    const chunk = steps.slice(i, i + per);
    const sum = new Array<number>(K).fill(0);
    for (const [, h] of chunk) h[id]!.forEach((c, b) => (sum[b] += c));
    firstSteps.push(chunk[0][0]);
    columns.push(chunk[chunk.length - 1][0]);
    counts.push(sum);
  }
  const totals = counts.map((c) => c.reduce((a, b) => a + b, 0));
  const values = Array.from({ length: K }, (_, b) => counts.map((c, j) => (totals[j] > 0 ? c[b] / totals[j] : NaN)));
  return { rows: Array.from({ length: K }, (_, b) => binLabel(edges, b)), columns, firstSteps, values, totals };
}

/** A held-out solve-rate histogram: how many prompts exactly c of n samples solved, c = 0..n. */
export interface SolveRates {
  step: number;
  /** counts[c]: prompts solved by exactly c of their samples. */
  counts: number[];
}

/** The solve-rate histograms to draw: the starting policy's (the first evaluation) and the latest, where they have one. */
export function solveRates(evals: readonly EvalRecord[]): SolveRates[] {
  const withCounts = evals.filter((e) => e.solvedBy && e.solvedBy.length > 0);
  if (!withCounts.length) return [];
  const first = withCounts[0];
  const last = withCounts[withCounts.length - 1];
  return (first === last ? [first] : [first, last]).map((e) => ({ step: e.step, counts: e.solvedBy! }));
}

/** A group of the all-groups view: its completions sorted by reward (highest first), and how many pass. */
export interface SortedGroup extends GroupSummary {
  passed: number;
}

/** Every group with its completions sorted by reward, highest first (ties keep sampling order). */
export function groupsByReward(batch: readonly GroupSummary[]): SortedGroup[] {
  return batch.map((g) => ({
    ...g,
    completions: [...g.completions].sort((a: CompletionSummary, b: CompletionSummary) => b.reward - a.reward),
    passed: g.completions.filter((c) => c.passed).length,
  }));
}
