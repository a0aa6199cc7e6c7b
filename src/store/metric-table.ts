// A run's metrics on the page: growable columns (one Float64Array per metric, NaN where a step did not report
// it), one row per optimizer step, appended to in place as batches arrive. The charts' x is the rollout step with
// optimizer steps as sub-ticks (metric-batch.ts chartX); the optimizer step stays beside it for tooltips. Beside
// the columns, each rollout step's histograms (entropy, advantage) by step, for the heatmaps. Pure data, no React;
// the store wraps each table with a version number so components re-render when it grows.

import type { MetricBatch } from '../schema/metric-batch';
import type { StepHistograms } from '../schema/stream';

export class MetricTable {
  private cap = 0;
  private n = 0;
  /** Each row's place on the charts' x axis (rollout steps, fractional within a step). */
  private xs = new Float64Array(0);
  /** Rollout step of each row. */
  private steps = new Float64Array(0);
  /** Optimizer step of each row (strictly increasing: a rewrite on resume keeps it so). */
  private optimizerSteps = new Float64Array(0);
  private readonly cols = new Map<string, Float64Array>();
  /** Histograms by rollout step, in step order. */
  private readonly hists = new Map<number, StepHistograms>();

  get length(): number {
    return this.n;
  }

  /** Metric names, sorted. */
  get names(): string[] {
    return [...this.cols.keys()].sort();
  }

  /** The charts' x of each row (length `length`). */
  get x(): Float64Array {
    return this.xs.subarray(0, this.n);
  }

  /** Rollout steps (length `length`). */
  get step(): Float64Array {
    return this.steps.subarray(0, this.n);
  }

  /** Optimizer steps (length `length`). */
  get optimizerStep(): Float64Array {
    return this.optimizerSteps.subarray(0, this.n);
  }

  /** One metric's column (NaN where not reported), or null when the run never reported it. */
  column(name: string): Float64Array | null {
    const c = this.cols.get(name);
    return c ? c.subarray(0, this.n) : null;
  }

  /** The rollout steps that recorded histograms, ascending, with their histograms. */
  histograms(): [number, StepHistograms][] {
    return [...this.hists].sort((a, b) => a[0] - b[0]);
  }

  /** The last finite value of a metric, or NaN. */
  last(name: string): number {
    const c = this.cols.get(name);
    if (!c) return NaN;
    for (let i = this.n - 1; i >= 0; i--) if (!Number.isNaN(c[i])) return c[i];
    return NaN;
  }

  private grow(need: number): void {
    if (need <= this.cap) return;
    const cap = Math.max(need, this.cap * 2, 64);
    const resize = (a: Float64Array) => {
      const b = new Float64Array(cap).fill(NaN);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.xs = resize(this.xs);
    this.steps = resize(this.steps);
    this.optimizerSteps = resize(this.optimizerSteps);
    for (const [k, c] of this.cols) this.cols.set(k, resize(c));
    this.cap = cap;
  }

  /**
   * Appends a batch. Rows at or before an existing optimizer step replace the table from there on (a run that
   * resumed from an earlier saved state rewrites its tail), so optimizer steps stay strictly increasing.
   */
  append(b: MetricBatch): void {
    const rows = b.step.length;
    if (!rows) return;
    const first = b.optimizerStep[0];
    if (this.n > 0 && first <= this.optimizerSteps[this.n - 1]) {
      let keep = this.n;
      while (keep > 0 && this.optimizerSteps[keep - 1] >= first) keep--;
      this.n = keep;
      for (const c of this.cols.values()) c.fill(NaN, keep);
      for (const step of [...this.hists.keys()]) if (step >= b.step[0]) this.hists.delete(step);
    }
    for (const h of b.histograms ?? []) this.hists.set(b.step[h.row], h.counts);
    this.grow(this.n + rows);
    for (const name of b.names) if (!this.cols.has(name)) this.cols.set(name, new Float64Array(this.cap).fill(NaN));
    const K = b.names.length;
    for (let i = 0; i < rows; i++) {
      const at = this.n + i;
      this.xs[at] = b.x[i];
      this.steps[at] = b.step[i];
      this.optimizerSteps[at] = b.optimizerStep[i];
      for (let j = 0; j < K; j++) this.cols.get(b.names[j])![at] = b.values[i * K + j];
    }
    this.n += rows;
  }
}
