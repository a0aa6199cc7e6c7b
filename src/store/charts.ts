// Which metric goes on which chart: the fixed charts of the lab (reward with its std band, entropy, clip ratios,
// KL beside the exact KL, lengths, fractions, losses, grad norm, learning rate, sampler mismatch, throughput,
// step time) and one chart per remaining metric family, so every metric the trainer reports is drawn exactly
// once, including ones added later. Also the chart rows the components draw. Pure; no React.

import type { MetricTable } from './metric-table';
import { decimate, makeGrid, positiveOnly, smooth } from './series';

export interface ChartSpec {
  id: string;
  title: string;
  /** Metrics drawn, in legend order (only those the runs report are drawn). */
  metrics: string[];
  /** Draw mean ± std as a band around `mean` (reward ± reward_std). */
  band?: { mean: string; std: string };
  /** Log scale: 'on' by default, 'off' by default but offered, or not offered (values cross zero). */
  log: 'on' | 'off' | 'never';
  /** What to read from the chart, one line. */
  hint: string;
  /** Metrics matched by prefix (for the catch-all charts). */
  prefix?: string;
}

/** The lab's fixed charts, in page order. */
export const CHART_SPECS: readonly ChartSpec[] = [
  { id: 'reward', title: 'Reward and accuracy', metrics: ['reward', 'accuracy'], band: { mean: 'reward', std: 'reward_std' }, log: 'never', hint: 'mean reward of the sampled completions (band: ± its std across the batch) and the fraction judged correct' },
  { id: 'entropy', title: 'Entropy', metrics: ['entropy'], log: 'off', hint: 'mean full-vocabulary entropy H_t of pi_theta over completion tokens (nats); a collapse to ~0 ends exploration' },
  { id: 'clip', title: 'Clip ratio', metrics: ['clip_ratio/low_mean', 'clip_ratio/high_mean', 'clip_ratio/region_mean', 'cispo_clip_ratio'], log: 'off', hint: 'fraction of tokens whose ratio was clipped below (A < 0) or above (A > 0); exactly 0 with one update per batch' },
  { id: 'kl', title: 'KL', metrics: ['kl', 'kl/exact', 'approx_kl'], log: 'off', hint: 'the chosen estimator of KL(pi_theta || pi_ref) beside the exact full-vocabulary KL; approx_kl is to pi_old' },
  { id: 'lengths', title: 'Completion length', metrics: ['completions/mean_length', 'completions/min_length', 'completions/max_length', 'completions/mean_terminated_length'], log: 'never', hint: 'tokens per completion, EOS included' },
  { id: 'fractions', title: 'Clipped and zero-signal fractions', metrics: ['completions/clipped_ratio', 'frac_reward_zero_std', 'dynamic_sampling/filtered_frac'], log: 'never', hint: 'completions cut at L_max; groups whose rewards are all equal (no GRPO signal); groups dropped by dynamic sampling' },
  { id: 'loss', title: 'Loss', metrics: ['policy_loss', 'value_loss', 'vf_explained_var'], log: 'never', hint: 'the aggregated policy loss (and the critic\'s value loss and explained variance for PPO)' },
  { id: 'grad', title: 'Gradient norm', metrics: ['grad_norm'], log: 'on', hint: 'global gradient norm before clipping to max_grad_norm' },
  { id: 'lr', title: 'Learning rate and entropy coefficient', metrics: ['learning_rate', 'entropy_coef'], log: 'off', hint: 'the schedule in effect and the (adaptive) entropy bonus alpha' },
  { id: 'sampling', title: 'Sampler vs trainer log-prob gap', metrics: ['sampling/logp_diff/mean', 'sampling/logp_diff/max'], log: 'off', hint: '|log pi_old - log pi_sampler|: 0 when the sampler and the trainer agree bit for bit' },
  { id: 'throughput', title: 'Throughput', metrics: ['perf/rollout_tokens_per_s', 'perf/train_tokens_per_s'], log: 'on', hint: 'completion tokens sampled, and tokens trained on, per second' },
  { id: 'time', title: 'Step time', metrics: ['perf/step_ms'], log: 'on', hint: 'wall time of one optimizer step (ms)' },
];

const FIXED = new Set(CHART_SPECS.flatMap((c) => c.metrics).concat(CHART_SPECS.flatMap((c) => (c.band ? [c.band.std] : []))));

/** The family of a metric not on a fixed chart: its first path segment ("rewards/accuracy/mean" -> "rewards"). */
export function family(name: string): string {
  const i = name.indexOf('/');
  return i < 0 ? name : name.slice(0, i);
}

/**
 * The charts to draw for these metric names: the fixed charts that have at least one of them, then one chart per
 * family of the rest. Every name lands on exactly one chart.
 */
export function chartsFor(names: readonly string[]): ChartSpec[] {
  const have = new Set(names);
  const out = CHART_SPECS.filter((c) => c.metrics.some((m) => have.has(m)));
  const rest = new Map<string, string[]>();
  for (const n of [...have].sort()) {
    if (FIXED.has(n)) continue;
    const f = family(n);
    rest.set(f, [...(rest.get(f) ?? []), n]);
  }
  for (const [f, metrics] of rest) {
    out.push({
      id: `family-${f.replace(/[^A-Za-z0-9_-]/g, '_')}`,
      title: f === 'timing_s' ? 'Time per phase (s)' : f === 'rewards' ? 'Reward functions' : f.replace(/_/g, ' '),
      metrics,
      prefix: f,
      log: f === 'timing_s' ? 'on' : 'off',
      hint: f === 'timing_s' ? 'seconds spent in each phase of a step' : `every ${f}/... metric the trainer reports`,
    });
  }
  return out;
}

/** A run as the charts see it. */
export interface ChartRun {
  id: string;
  label: string;
  table: MetricTable;
}

/** One chart's data: rows for recharts, the series keys drawn, and the primary run's last raw values. */
export interface ChartData {
  rows: Record<string, number | null | [number, number]>[];
  series: { key: string; runId: string; runIndex: number; runLabel: string; metric: string }[];
  /** Key of the band series per run (value [lo, hi]), when the chart has a band. */
  bands: { key: string; runId: string; runIndex: number; runLabel: string }[];
  /** Runs drawn (more than one: an overlay). */
  runCount: number;
  /** Last finite raw value of each metric of the first run. */
  last: Record<string, number>;
  /** Rows of the first run before decimation. */
  rawPoints: number;
  /** Drawn on a log scale (values <= 0 left out). */
  log: boolean;
}

/** Key of a run's metric in chart rows. */
export const seriesKey = (runIndex: number, metric: string) => `r${runIndex}:${metric}`;

/**
 * The rows a chart draws for these runs: each metric smoothed (weight `smoothing`) at full resolution, then
 * decimated onto a shared grid of at most `maxPoints` buckets (the bucket mean). Log scale drops values <= 0.
 */
export function chartData(spec: ChartSpec, runs: readonly ChartRun[], o: { smoothing: number; maxPoints: number; log: boolean }): ChartData {
  const grid = makeGrid(runs.map((r) => r.table.x), o.maxPoints);
  const rows: ChartData['rows'] = Array.from(grid.x, (x) => ({ x }));
  const series: ChartData['series'] = [];
  const bands: ChartData['bands'] = [];
  runs.forEach((run, ri) => {
    for (const metric of spec.metrics) {
      const col = run.table.column(metric);
      if (!col) continue;
      let v = smooth(col, o.smoothing);
      if (o.log) v = positiveOnly(v);
      const d = decimate(grid, run.table.x, v);
      const key = seriesKey(ri, metric);
      series.push({ key, runId: run.id, runIndex: ri, runLabel: run.label, metric });
      for (let b = 0; b < rows.length; b++) rows[b][key] = Number.isFinite(d.mean[b]) ? d.mean[b] : null;
    }
    if (spec.band) {
      const mean = run.table.column(spec.band.mean);
      const std = run.table.column(spec.band.std);
      if (mean && std) {
        const m = smooth(mean, o.smoothing);
        const s = smooth(std, o.smoothing);
        const lo = new Float64Array(m.length);
        const hi = new Float64Array(m.length);
        for (let i = 0; i < m.length; i++) {
          lo[i] = m[i] - s[i];
          hi[i] = m[i] + s[i];
        }
        const dl = decimate(grid, run.table.x, lo);
        const dh = decimate(grid, run.table.x, hi);
        const key = seriesKey(ri, `${spec.band.mean}±${spec.band.std}`);
        bands.push({ key, runId: run.id, runIndex: ri, runLabel: run.label });
        for (let b = 0; b < rows.length; b++) rows[b][key] = Number.isFinite(dl.mean[b]) && Number.isFinite(dh.mean[b]) ? [dl.mean[b], dh.mean[b]] : null;
      }
    }
  });
  const last: Record<string, number> = {};
  const first = runs[0];
  if (first) for (const m of spec.metrics) if (first.table.column(m)) last[m] = first.table.last(m);
  return { rows, series, bands, last, rawPoints: first ? first.table.length : 0, log: o.log, runCount: runs.length };
}
