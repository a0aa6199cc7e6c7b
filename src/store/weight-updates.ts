// What the weight-update view draws, from a run's metric table and evaluations: the heatmap grid (rows = weights
// in model order, columns = the rollout steps that measured them, values = weights/<matrix>/rel_update and
// rank1_share), its logarithmic colour scale, each matrix's latest rank-1 share, and the held-out accuracy of the
// rank-1 update beside the full update's. Pure; no React, no drawing (src/ui/WeightUpdates.tsx draws).

import type { EvalRecord } from '../schema/stream';
import { compareWeightNames } from '../schema/weight-names';
import type { MetricTable } from './metric-table';

const REL_UPDATE = /^weights\/([^/]+)\/rel_update$/;

export interface WeightUpdateGrid {
  /** Weight names (embed, layers.0.q, ...) in model order: the heatmap's rows. */
  rows: string[];
  /** The rollout steps that measured the weights, ascending: the heatmap's columns. */
  steps: number[];
  /** rel_update by row then column (rows x steps); NaN where a step did not report it. */
  rel: Float64Array;
  /** rank1_share in the same layout; NaN for a norm's gain (a vector has none). */
  share: Float64Array;
  /** log10 of the smallest and largest positive rel_update: the colour scale's ends; null when there is none. */
  logRange: { min: number; max: number } | null;
}

/** The heatmap of a run's weight updates (empty rows and steps when the run measured none). */
export function weightUpdateGrid(table: MetricTable): WeightUpdateGrid {
  const rows = table.names
    .map((n) => REL_UPDATE.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .sort(compareWeightNames);
  const relCols = rows.map((r) => table.column(`weights/${r}/rel_update`)!);
  const shareCols = rows.map((r) => table.column(`weights/${r}/rank1_share`));
  // A rollout step's metrics repeat on each of its optimizer steps: its column reads the last of them.
  const lastRow = new Map<number, number>();
  const step = table.step;
  for (let i = 0; i < table.length; i++) if (relCols.some((c) => Number.isFinite(c[i]))) lastRow.set(step[i], i);
  const steps = [...lastRow.keys()].sort((a, b) => a - b);
  const rel = new Float64Array(rows.length * steps.length).fill(NaN);
  const share = new Float64Array(rows.length * steps.length).fill(NaN);
  let min = Infinity;
  let max = -Infinity;
  rows.forEach((_, r) => {
    steps.forEach((s, c) => {
      const i = lastRow.get(s)!;
      const v = relCols[r][i];
      rel[r * steps.length + c] = v;
      share[r * steps.length + c] = shareCols[r]?.[i] ?? NaN;
      if (v > 0 && Number.isFinite(v)) {
        min = Math.min(min, Math.log10(v));
        max = Math.max(max, Math.log10(v));
      }
    });
  });
  return { rows, steps, rel, share, logRange: min <= max ? { min, max } : null };
}

/**
 * Where a rel_update value sits on the grid's colour scale, in [0, 1] (logarithmic: updates span decades); NaN for
 * a missing value, 0 for 0 and when every value is the same.
 */
export function heatPosition(value: number, logRange: WeightUpdateGrid['logRange']): number {
  if (!Number.isFinite(value)) return NaN;
  if (!logRange || value <= 0) return 0;
  const span = logRange.max - logRange.min;
  if (span <= 0) return 1;
  return Math.min(1, Math.max(0, (Math.log10(value) - logRange.min) / span));
}

/** Each row's last measured rank-1 share (NaN for a vector or a row never measured). */
export function latestShares(grid: WeightUpdateGrid): number[] {
  const S = grid.steps.length;
  return grid.rows.map((_, r) => {
    for (let c = S - 1; c >= 0; c--) if (Number.isFinite(grid.share[r * S + c])) return grid.share[r * S + c];
    return NaN;
  });
}

/** One evaluation's held-out greedy accuracy with the full update and with every matrix's rank-1 update. */
export interface Rank1Accuracy {
  step: number;
  full: number;
  rank1: number;
}

/** The evaluations that ran the rank-1 comparison (rank1_eval; after step 0), in step order. */
export function rank1Accuracies(evals: readonly EvalRecord[]): Rank1Accuracy[] {
  return evals.filter((e) => e.rank1).map((e) => ({ step: e.step, full: e.accuracy, rank1: e.rank1!.accuracy }));
}
