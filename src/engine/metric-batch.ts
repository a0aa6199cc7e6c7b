// Metric rows packed as columns of typed arrays, so a batch of optimizer steps crosses the worker boundary as a
// few transferred buffers instead of thousands of small objects. Pure data; the worker decides when to send.

import type { MetricRow } from './types';

/** Rows of metrics as columns. `values` is row-major: values[row * names.length + col]; NaN = not reported. */
export interface MetricBatch {
  names: string[];
  step: Float64Array;
  optimizerStep: Float64Array;
  epoch: Float64Array;
  minibatch: Float64Array;
  values: Float64Array;
}

/** Packs rows into columns; metric names are the union over the rows, sorted. */
export function packRows(rows: readonly MetricRow[]): MetricBatch {
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
  rows.forEach((r, i) => {
    step[i] = r.step;
    optimizerStep[i] = r.optimizerStep;
    epoch[i] = r.epoch;
    minibatch[i] = r.minibatch;
    for (const k in r.metrics) {
      const v = r.metrics[k];
      values[i * K + col.get(k)!] = typeof v === 'number' ? v : NaN;
    }
  });
  return { names, step, optimizerStep, epoch, minibatch, values };
}

/** The rows of a batch (NaN cells are left out of each row's metrics). */
export function unpackBatch(b: MetricBatch): MetricRow[] {
  const K = b.names.length;
  const rows: MetricRow[] = [];
  for (let i = 0; i < b.step.length; i++) {
    const metrics: Record<string, number> = {};
    for (let j = 0; j < K; j++) {
      const v = b.values[i * K + j];
      if (!Number.isNaN(v)) metrics[b.names[j]] = v;
    }
    rows.push({ step: b.step[i], optimizerStep: b.optimizerStep[i], epoch: b.epoch[i], minibatch: b.minibatch[i], metrics });
  }
  return rows;
}

/** Number of rows in a batch. */
export function batchLength(b: MetricBatch): number {
  return b.step.length;
}

/** The buffers to transfer with a batch. */
export function batchTransfer(b: MetricBatch): ArrayBuffer[] {
  return [b.step, b.optimizerStep, b.epoch, b.minibatch, b.values].map((a) => a.buffer as ArrayBuffer);
}
