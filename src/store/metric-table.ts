// A run's metrics on the page: growable columns (one Float64Array per metric, NaN where a step did not report
// it) indexed by optimizer step, appended to in place as batches arrive. Pure data, no React; the store wraps
// each table with a version number so components re-render when it grows.

import type { MetricBatch } from '../engine/metric-batch';

export class MetricTable {
  private cap = 0;
  private n = 0;
  /** Optimizer step of each row (the charts' x). */
  private xs = new Float64Array(0);
  /** Rollout step of each row. */
  private steps = new Float64Array(0);
  private readonly cols = new Map<string, Float64Array>();

  get length(): number {
    return this.n;
  }

  /** Metric names, sorted. */
  get names(): string[] {
    return [...this.cols.keys()].sort();
  }

  /** Optimizer steps (length `length`). */
  get x(): Float64Array {
    return this.xs.subarray(0, this.n);
  }

  /** Rollout steps (length `length`). */
  get step(): Float64Array {
    return this.steps.subarray(0, this.n);
  }

  /** One metric's column (NaN where not reported), or null when the run never reported it. */
  column(name: string): Float64Array | null {
    const c = this.cols.get(name);
    return c ? c.subarray(0, this.n) : null;
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
    const resize = (a: Float64Array, fill: number) => {
      const b = new Float64Array(cap).fill(fill);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.xs = resize(this.xs, NaN);
    this.steps = resize(this.steps, NaN);
    for (const [k, c] of this.cols) this.cols.set(k, resize(c, NaN));
    this.cap = cap;
  }

  /**
   * Appends a batch. Rows at or before an existing optimizer step replace the table from there on (a run that
   * resumed from an earlier saved state rewrites its tail), so x stays strictly increasing.
   */
  append(b: MetricBatch): void {
    const rows = b.step.length;
    if (!rows) return;
    const first = b.optimizerStep[0];
    if (this.n > 0 && first <= this.xs[this.n - 1]) {
      let keep = this.n;
      while (keep > 0 && this.xs[keep - 1] >= first) keep--;
      this.n = keep;
      for (const c of this.cols.values()) c.fill(NaN, keep);
    }
    this.grow(this.n + rows);
    for (const name of b.names) if (!this.cols.has(name)) this.cols.set(name, new Float64Array(this.cap).fill(NaN));
    const K = b.names.length;
    for (let i = 0; i < rows; i++) {
      const at = this.n + i;
      this.xs[at] = b.optimizerStep[i];
      this.steps[at] = b.step[i];
      for (let j = 0; j < K; j++) this.cols.get(b.names[j])![at] = b.values[i * K + j];
    }
    this.n += rows;
  }
}
