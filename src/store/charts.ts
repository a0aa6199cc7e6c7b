// Which metric goes on which chart, read from the metric catalog (src/schema/metrics.ts): each metric the
// catalog knows on its chart, in the catalog's chart order, and one chart per family for names it lacks, so every
// metric the trainer reports is drawn exactly once, including ones added later. Also the hover texts (the
// catalog's doc, formula and healthy range), the rows a chart draws, and which of its metrics a run's config turns
// off (the catalog's quiet conditions). A seed group draws as one line per metric, the per-step median or IQM
// across its seeds, with a bootstrap band (seed-bands.ts). Pure; no React.

import {
  CHARTS,
  METRICS,
  metricSpec,
  type ChartFamily,
  type ChartQuiet,
  type KnobCondition,
  type MetricSpec,
} from '../schema/metrics';
import { showValue } from './config-diff';
import type { MetricTable } from './metric-table';
import { seedBands, type SeedStatistic } from './seed-bands';
import { decimate, makeGrid, positiveOnly, smooth } from './series';

/** The x axis of every metric chart. */
export const X_AXIS_LABEL = 'rollout step';

export interface ChartSpec {
  id: string;
  title: string;
  /** The y axis label: what the chart's values count (the catalog's CHARTS[].y). */
  y: string;
  /** Metrics drawn as lines, in legend order (only those the runs report are drawn). */
  metrics: string[];
  /** Draw mean ± std as a band around `mean` (reward ± reward_std); `std` is not drawn as a line. */
  band?: { mean: string; std: string };
  /** Log scale: 'on' by default, 'off' by default but offered, or not offered (values cross zero). */
  log: 'on' | 'off' | 'never';
  /** A line under the title (the catalog's CHARTS[].note). */
  note?: string;
  /** Metrics drawn as areas stacked in this order (the catalog's CHARTS[].stack, those the runs report). */
  stack?: string[];
}

/** The family of a metric the catalog lacks: its first path segment ("rewards/accuracy/mean" -> "rewards"). */
export function family(name: string): string {
  const i = name.indexOf('/');
  return i < 0 ? name : name.slice(0, i);
}

/** Position of a metric's catalog entry (legend order within a chart). */
const CATALOG_ORDER = new Map<MetricSpec, number>(METRICS.map((m, i) => [m, i]));

function byCatalogOrder(a: { name: string; spec: MetricSpec }, b: { name: string; spec: MetricSpec }): number {
  return CATALOG_ORDER.get(a.spec)! - CATALOG_ORDER.get(b.spec)! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The charts to draw for these metric names: the catalog's charts that have at least one of them (CHARTS order,
 * metrics in catalog order), then one chart per family of the names the catalog lacks. Every name lands on
 * exactly one chart; a band's std is drawn as the band when its mean is there, else as a line.
 */
export function chartsFor(names: readonly string[]): ChartSpec[] {
  const onChart = new Map<string, { name: string; spec: MetricSpec }[]>();
  const unknown = new Map<string, string[]>();
  for (const name of [...new Set(names)].sort()) {
    const spec = metricSpec(name);
    if (spec) onChart.set(spec.chart, [...(onChart.get(spec.chart) ?? []), { name, spec }]);
    else unknown.set(family(name), [...(unknown.get(family(name)) ?? []), name]);
  }
  const out: ChartSpec[] = [];
  for (const c of CHARTS) {
    const entries = onChart.get(c.id);
    if (!entries) continue;
    const metrics = entries.sort(byCatalogOrder).map((e) => e.name);
    const band = 'band' in c && metrics.includes(c.band.mean) && metrics.includes(c.band.std) ? c.band : undefined;
    const note = 'note' in c ? c.note : undefined;
    const stack = 'stack' in c ? c.stack.filter((m) => metrics.includes(m)) : [];
    out.push({
      id: c.id,
      title: c.title,
      y: c.y,
      log: c.log,
      metrics: band ? metrics.filter((m) => m !== band.std) : metrics,
      ...(band && { band }),
      ...(note && { note }),
      ...(stack.length > 0 && { stack }),
    });
  }
  // A family's chart is titled by its path prefix ("loss/*"), never like a catalog chart ("Loss"): two charts
  // with one title read as the same chart.
  for (const [f, metrics] of unknown) {
    out.push({
      id: `family-${f.replace(/[^A-Za-z0-9_-]/g, '_')}`,
      title: `${f}/* (not in the metric catalog)`,
      y: 'value',
      log: 'off',
      metrics,
    });
  }
  return out;
}

/** How many charts are drawn, empty, before a run has data (so the layout does not jump when training starts). */
const STARTING_CHART_COUNT = 6;

/** The first catalog charts with the plain (non-template) metrics the catalog puts on them. */
export const STARTING_CHARTS: readonly ChartSpec[] = chartsFor(
  METRICS.filter((m) => !m.name.includes('<')).map((m) => m.name),
).filter((c) => CHARTS.slice(0, STARTING_CHART_COUNT).some((k) => k.id === c.id));

/** A metric's hover text: what it measures, its formula and its healthy range (from the catalog). */
export function metricHelp(name: string): string {
  const spec = metricSpec(name);
  if (!spec) return `${name}: not in the metric catalog`;
  return `${name}: ${spec.doc}\n${spec.formula}\nhealthy: ${spec.healthy}`;
}

/** A chart's hover text: one line per metric it draws (the band's std included). */
export function chartHelp(spec: ChartSpec): string {
  const names = spec.band ? [...spec.metrics, spec.band.std] : spec.metrics;
  return [
    `${spec.title} (${spec.y}) over ${X_AXIS_LABEL}s; optimizer steps are sub-ticks`,
    ...names.map((n) => `${n}: ${metricSpec(n)?.doc ?? 'not in the metric catalog'}`),
  ].join('\n');
}

/** A run as the charts see it. */
export interface ChartRun {
  id: string;
  label: string;
  table: MetricTable;
  /**
   * A seed group drawn as its statistic across seeds: every seed's table (`table` is one of them, for the tooltip's
   * optimizer step and the last values). Absent: the run's own lines.
   */
  seeds?: MetricTable[];
}

/** A config as the catalog's conditions read it: knob name to value. */
export type KnobValues = Readonly<Record<string, unknown>>;

function holds(c: KnobCondition, config: KnobValues): boolean {
  const v = config[c.knob] ?? null;
  return 'is' in c ? c.is.some((x) => x === v) : !c.not.some((x) => x === v);
}

/** A knob's value as a chart note names it: "beta = 0", "entropy_target unset". */
function knobText(knob: string, v: unknown): string {
  return v === null ? `${knob} unset` : `${knob} = ${showValue(v)}`;
}

/** What a chart says about metrics that carry no signal in the runs drawn (CHARTS[].quiet). */
export interface ChartQuietness {
  /** Every metric of the chart is quiet in every run: the chart shows `notes` instead of a plot. */
  whole: boolean;
  /** One line per quiet part and run: "kl, kl/exact off in this run: beta = 0 (no reference model ...)". */
  notes: string[];
}

/**
 * Which of a chart's metrics say nothing in these runs, read from the catalog's quiet conditions and each run's
 * config: "off in this run: curriculum = fixed (...)". With several runs each line names its run.
 */
export function chartQuietness(
  spec: ChartSpec,
  runs: readonly { label: string; config: KnobValues }[],
): ChartQuietness {
  const family = CHARTS.find((c) => c.id === spec.id) as ChartFamily | undefined;
  const quiet: readonly ChartQuiet[] = family?.quiet ?? [];
  const drawn = spec.band ? [...spec.metrics, spec.band.std] : spec.metrics;
  // One line per quiet part, naming the runs it holds in ("this run", "every run", or their labels).
  const parts = new Map<string, string[]>();
  let whole = runs.length > 0 && quiet.length > 0;
  for (const run of runs) {
    const silenced = new Set<string>();
    for (const q of quiet) {
      if (!q.when.every((c) => holds(c, run.config))) continue;
      const names = q.metrics ? drawn.filter((m) => q.metrics!.includes(metricSpec(m)?.name ?? m)) : drawn;
      if (q.metrics && !names.length) continue;
      names.forEach((m) => silenced.add(m));
      const subject = q.metrics ? `${names.join(', ')} ` : '';
      const state = q.kind === 'off' ? 'off' : 'always 0';
      const knobs = q.when.map((c) => knobText(c.knob, run.config[c.knob] ?? null)).join(', ');
      const key = JSON.stringify([subject, state, knobs, q.why]);
      parts.set(key, [...(parts.get(key) ?? []), run.label]);
    }
    if (!drawn.every((m) => silenced.has(m))) whole = false;
  }
  const notes = [...parts].map(([key, labels]) => {
    const [subject, state, knobs, why] = JSON.parse(key) as string[];
    const where = runs.length === 1 ? 'this run' : labels.length === runs.length ? 'every run' : labels.join(', ');
    return `${subject}${state} in ${where}: ${knobs} (${why})`;
  });
  return { whole, notes };
}

/** Key of the first run's optimizer step in chart rows (for tooltips). */
export const OPTIMIZER_STEP_KEY = 'optimizerStep';

/** One chart's data: rows for recharts, the series keys drawn, and the primary run's last raw values. */
export interface ChartData {
  /** One row per grid bucket: `x`, the first run's last optimizer step in it (OPTIMIZER_STEP_KEY), each series. */
  rows: Record<string, number | null | [number, number]>[];
  series: { key: string; runId: string; runIndex: number; runLabel: string; metric: string }[];
  /**
   * Key of each band series (value [lo, hi]): per run the chart's mean ± std band, when the chart has one; per seed
   * group and metric (`metric` set) the bootstrap band of the statistic across seeds.
   */
  bands: { key: string; runId: string; runIndex: number; runLabel: string; metric?: string }[];
  /** Per seed group drawn: its statistic and how many seeds the drawn points have (fewest and most). */
  seedGroups: { runIndex: number; statistic: SeedStatistic; seeds: number; minSeeds: number; maxSeeds: number }[];
  /** Runs drawn (more than one: an overlay). */
  runCount: number;
  /** Last finite raw value of each metric of the first run. */
  last: Record<string, number>;
  /** Rows of the first run before decimation. */
  rawPoints: number;
  /** Drawn on a log scale (values <= 0 left out). */
  log: boolean;
  /**
   * A linear axis's range when the drawn values are (nearly) constant, centred on them; null lets the axis choose.
   * Without it an axis stretches float noise in a flat series (smoothing 3 gives 2.9999999999999996) over its whole
   * height, and a constant curve looks like it jumps. A stacked chart's parts make one whole: always [0, 1].
   */
  yDomain: [number, number] | null;
}

/** See ChartData.yDomain: a span below 1e-9 of the values' size is float noise, so the axis shows +-10% around them. */
export function flatDomain(rows: ChartData['rows'], keys: readonly string[], log: boolean): [number, number] | null {
  if (log) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of rows) {
    for (const k of keys) {
      const v = row[k];
      if (v === null || v === undefined) continue;
      for (const y of Array.isArray(v) ? v : [v]) {
        if (!Number.isFinite(y)) continue;
        lo = Math.min(lo, y);
        hi = Math.max(hi, y);
      }
    }
  }
  if (!Number.isFinite(lo)) return null;
  const mid = (lo + hi) / 2;
  if (hi - lo > 1e-9 * Math.max(1e-12, Math.abs(mid))) return null;
  const pad = mid === 0 ? 1 : Math.abs(mid) * 0.1;
  return [mid - pad, mid + pad];
}

/** Key of a run's metric in chart rows. */
export const seriesKey = (runIndex: number, metric: string) => `r${runIndex}:${metric}`;

/**
 * The rows a chart draws for these runs: each metric smoothed (weight `smoothing`) at full resolution, then
 * decimated onto a shared grid of at most `maxPoints` buckets (the bucket mean). Log scale drops values <= 0.
 */
export function chartData(
  spec: ChartSpec,
  runs: readonly ChartRun[],
  o: { smoothing: number; maxPoints: number; log: boolean; statistic?: SeedStatistic },
): ChartData {
  const grid = makeGrid(
    runs.flatMap((r) => (r.seeds ? r.seeds.map((t) => t.x) : [r.table.x])),
    o.maxPoints,
  );
  const rows: ChartData['rows'] = Array.from(grid.x, (x) => ({ x }));
  const series: ChartData['series'] = [];
  const bands: ChartData['bands'] = [];
  const seedGroups: ChartData['seedGroups'] = [];
  const statistic = o.statistic ?? 'median';
  /** A column smoothed at full resolution (log scale: values <= 0 dropped), then onto the grid. */
  const onGrid = (table: MetricTable, col: Float64Array) => {
    let v = smooth(col, o.smoothing);
    if (o.log) v = positiveOnly(v);
    return decimate(grid, table.x, v);
  };
  const first = runs[0];
  if (first) {
    const opt = decimate(grid, first.table.x, first.table.optimizerStep).max;
    for (let b = 0; b < rows.length; b++) rows[b][OPTIMIZER_STEP_KEY] = Number.isFinite(opt[b]) ? opt[b] : null;
  }
  runs.forEach((run, ri) => {
    if (run.seeds) {
      // Each seed smoothed and put on the grid alone, then per point the statistic across the seeds that have it.
      // The catalog's mean ± std band (spread within a batch) is not drawn for a group: its band is across seeds.
      let minSeeds = Infinity;
      let maxSeeds = 0;
      for (const metric of spec.metrics) {
        const perSeed = run.seeds.flatMap((t) => {
          const col = t.column(metric);
          return col ? [onGrid(t, col).mean] : [];
        });
        if (!perSeed.length) continue;
        const b = seedBands(perSeed, statistic);
        const key = seriesKey(ri, metric);
        const bandKey = seriesKey(ri, `${metric}~seeds`);
        series.push({ key, runId: run.id, runIndex: ri, runLabel: run.label, metric });
        bands.push({ key: bandKey, runId: run.id, runIndex: ri, runLabel: run.label, metric });
        for (let p = 0; p < rows.length; p++) {
          rows[p][key] = Number.isFinite(b.stat[p]) ? b.stat[p] : null;
          rows[p][bandKey] = Number.isFinite(b.lo[p]) && Number.isFinite(b.hi[p]) ? [b.lo[p], b.hi[p]] : null;
          if (b.seeds[p] > 0) {
            minSeeds = Math.min(minSeeds, b.seeds[p]);
            maxSeeds = Math.max(maxSeeds, b.seeds[p]);
          }
        }
      }
      seedGroups.push({
        runIndex: ri,
        statistic,
        seeds: run.seeds.length,
        minSeeds: maxSeeds ? minSeeds : 0,
        maxSeeds,
      });
      return;
    }
    for (const metric of spec.metrics) {
      const col = run.table.column(metric);
      if (!col) continue;
      const d = onGrid(run.table, col);
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
        for (let b = 0; b < rows.length; b++)
          rows[b][key] = Number.isFinite(dl.mean[b]) && Number.isFinite(dh.mean[b]) ? [dl.mean[b], dh.mean[b]] : null;
      }
    }
  });
  const last: Record<string, number> = {};
  if (first) for (const m of spec.metrics) if (first.table.column(m)) last[m] = first.table.last(m);
  return {
    rows,
    series,
    bands,
    seedGroups,
    last,
    rawPoints: first ? first.table.length : 0,
    log: o.log,
    runCount: runs.length,
    yDomain: spec.stack
      ? [0, 1]
      : flatDomain(
          rows,
          [...series, ...bands].map((d) => d.key),
          o.log,
        ),
  };
}
