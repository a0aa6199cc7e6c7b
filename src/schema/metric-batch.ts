// Metric rows packed as columns of typed arrays, so a batch of optimizer steps crosses the worker boundary as a
// few transferred buffers instead of thousands of small objects. Also where a row lands on the charts' x axis
// (the rollout step, its optimizer steps as sub-ticks). Pure data; the worker decides when to send.

import type { StepHistograms } from './stream';
import type { MetricRow } from './run-types';

/** Rows of metrics as columns. `values` is row-major: values[row * names.length + col]; NaN = not reported. */
export interface MetricBatch {
  names: string[];
  step: Float64Array;
  optimizerStep: Float64Array;
  epoch: Float64Array;
  minibatch: Float64Array;
  /** MetricRow.update per row (NaN: the row did not record it). */
  update: Float64Array;
  /** MetricRow.updates per row (NaN: the row did not record it). */
  updates: Float64Array;
  /** Each row's place on the charts' x axis (see chartX). */
  x: Float64Array;
  values: Float64Array;
  /** The rows that carry their rollout step's histograms (MetricRow.histograms), by row index; few and small, so plain data. */
  histograms: { row: number; counts: StepHistograms }[];
}

/**
 * A row's place on the charts' x axis, in rollout steps: step - 1 + (update + 1) / updates, so the optimizer steps
 * of rollout step s spread over (s - 1, s] and the last one sits on s. Runs with different numbers of updates per
 * rollout step then line up step for step. A row without update/updates sits on its rollout step (the optimizer
 * steps of one rollout step overlap there, which is all such a row can say).
 */
export function chartX(row: Pick<MetricRow, 'step' | 'update' | 'updates'>): number {
  const { step, update, updates } = row;
  if (update === undefined || updates === undefined || !(updates > 0)) return step;
  return step - 1 + (update + 1) / updates;
}

/**
 * The rows with `update` (index of the optimizer step within its rollout step) and `updates` (how many) filled in
 * where missing, by grouping the rows by rollout step in optimizer-step order: rows recorded or exported before
 * the trainer kept them. Rows that have them keep theirs.
 */
export function withUpdateIndex(rows: readonly MetricRow[]): MetricRow[] {
  const byStep = new Map<number, MetricRow[]>();
  for (const r of [...rows].sort((a, b) => a.optimizerStep - b.optimizerStep)) {
    const group = byStep.get(r.step);
    if (group) group.push(r);
    else byStep.set(r.step, [r]);
  }
  const filled = new Map<MetricRow, MetricRow>();
  for (const group of byStep.values()) {
    group.forEach((r, i) => filled.set(r, { ...r, update: r.update ?? i, updates: r.updates ?? group.length }));
  }
  return rows.map((r) => filled.get(r)!);
}

/**
 * Packs rows into columns; metric names are the union over the rows, sorted. Rows stored before records kept
 * update/updates get them from their rollout step's rows (withUpdateIndex), so old runs draw on the same axis.
 */
export function packRows(recorded: readonly MetricRow[]): MetricBatch {
  const rows = withUpdateIndex(recorded);
  const nameSet = new Set<string>();
  for (const r of rows) for (const k in r.metrics) nameSet.add(k);
  const names = [...nameSet].sort();
  const col = new Map(names.map((n, i) => [n, i]));
  const n = rows.length;
  const K = names.length;
  const values = new Float64Array(n * K).fill(NaN);
  const step = new Float64Array(n);
  const optimizerStep = new Float64Array(n);
  const epoch = new Float64Array(n);
  const minibatch = new Float64Array(n);
  const update = new Float64Array(n);
  const updates = new Float64Array(n);
  const x = new Float64Array(n);
  const histograms: MetricBatch['histograms'] = [];
  rows.forEach((r, i) => {
    if (r.histograms) histograms.push({ row: i, counts: r.histograms });
    step[i] = r.step;
    optimizerStep[i] = r.optimizerStep;
    epoch[i] = r.epoch;
    minibatch[i] = r.minibatch;
    update[i] = r.update ?? NaN;
    updates[i] = r.updates ?? NaN;
    x[i] = chartX(r);
    for (const k in r.metrics) {
      const v = r.metrics[k];
      values[i * K + col.get(k)!] = typeof v === 'number' ? v : NaN;
    }
  });
  return { names, step, optimizerStep, epoch, minibatch, update, updates, x, values, histograms };
}

/** The rows of a batch (NaN cells are left out of each row's metrics; update/updates only where recorded). */
export function unpackBatch(b: MetricBatch): MetricRow[] {
  const K = b.names.length;
  const rows: MetricRow[] = [];
  for (let i = 0; i < b.step.length; i++) {
    const metrics: Record<string, number> = {};
    for (let j = 0; j < K; j++) {
      const v = b.values[i * K + j];
      if (!Number.isNaN(v)) metrics[b.names[j]] = v;
    }
    const row: MetricRow = {
      step: b.step[i],
      optimizerStep: b.optimizerStep[i],
      epoch: b.epoch[i],
      minibatch: b.minibatch[i],
      metrics,
    };
    if (!Number.isNaN(b.update[i])) row.update = b.update[i];
    if (!Number.isNaN(b.updates[i])) row.updates = b.updates[i];
    rows.push(row);
  }
  for (const h of b.histograms) rows[h.row].histograms = h.counts;
  return rows;
}

/** Number of rows in a batch. */
export function batchLength(b: MetricBatch): number {
  return b.step.length;
}

/** The buffers to transfer with a batch. */
export function batchTransfer(b: MetricBatch): ArrayBuffer[] {
  return [b.step, b.optimizerStep, b.epoch, b.minibatch, b.update, b.updates, b.x, b.values].map(
    (a) => a.buffer as ArrayBuffer,
  );
}
