// Divergence: a step whose metrics are not finite (NaN or Inf) means the policy's numbers blew up, and nothing
// trained after it is worth keeping. The one check the lab engine and the CLI both apply to the scalars they already
// read back (a StepRecord's metrics), and the check of weights about to be saved. Pure; it never reads the GPU.

import { orderMetricNames } from '../../schema/metrics';
import type { StepRecord } from '../../schema/stream';

/** The first non-finite metric of a rollout step's records. */
export interface Divergence {
  metric: string;
  value: number;
  /** Rollout step of the record. */
  step: number;
  optimizerStep: number;
}

/** The metrics of a record that are NaN or +-Inf, in catalog order. */
export function nonFiniteMetrics(metrics: Readonly<Record<string, number>>): [string, number][] {
  const bad = Object.keys(metrics).filter((k) => !Number.isFinite(metrics[k]));
  return orderMetricNames(bad).map((k) => [k, metrics[k]]);
}

/** The first non-finite metric (catalog order) of the first record (optimizer-step order) that has one; null when all are finite. */
export function firstNonFinite(
  records: readonly Pick<StepRecord, 'step' | 'optimizerStep' | 'metrics'>[],
): Divergence | null {
  for (const r of records) {
    const bad = nonFiniteMetrics(r.metrics);
    if (bad.length) return { metric: bad[0][0], value: bad[0][1], step: r.step, optimizerStep: r.optimizerStep };
  }
  return null;
}

/** One sentence naming the metric, its value and the step, for messages. */
export function divergenceText(d: Divergence): string {
  return `the run diverged: ${d.metric} = ${d.value} at step ${d.step} (optimizer step ${d.optimizerStep})`;
}

/** The first tensor of a set of named weights holding a NaN or Inf (null when every value is finite). */
export function firstNonFiniteTensor(arrays: Readonly<Record<string, ArrayLike<number>>>): string | null {
  for (const [name, a] of Object.entries(arrays)) {
    for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) return name;
  }
  return null;
}
