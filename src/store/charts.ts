// Which metric goes on which chart, read from the metric catalog (src/schema/metrics.ts): each metric the
// catalog knows on its chart, in the catalog's chart order, and one chart per family for names it lacks, so every
// metric the trainer reports is drawn exactly once, including ones added later. Also the hover texts (the
// catalog's doc, formula and healthy range), the rows a chart draws, and which of its metrics a run's config turns
// off (the catalog's quiet conditions) and the lessons that explain a chart's note. A seed group draws as one line
// per metric, the per-step median or IQM across its seeds, with a bootstrap band (seed-bands.ts). Each chart's axes
// (round ticks, the catalog's value range) come from axes.ts. Pure; no React.

import {
  CHARTS,
  METRICS,
  metricRange,
  metricSpec,
  type ChartFamily,
  type ChartQuiet,
  type KnobCondition,
  type MetricSpec,
} from '../schema/metrics';
import { stepAxis, valueAxis, type Axis, type Extent, type ValueRange } from './axes';
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
  /** The lesson that answers the note's question (the catalog's CHARTS[].noteLesson). */
  noteLesson?: string;
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
    const noteLesson = 'noteLesson' in c ? c.noteLesson : undefined;
    const stack = 'stack' in c ? c.stack.filter((m) => metrics.includes(m)) : [];
    out.push({
      id: c.id,
      title: c.title,
      y: c.y,
      log: c.log,
      metrics: band ? metrics.filter((m) => m !== band.std) : metrics,
      ...(band && { band }),
      ...(note && { note }),
      ...(noteLesson && { noteLesson }),
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
  /** The lessons that show why the quiet parts are quiet (the catalog's ChartQuiet.lesson), each once. */
  lessons: string[];
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
  const lessons = new Set<string>();
  let whole = runs.length > 0 && quiet.length > 0;
  for (const run of runs) {
    const silenced = new Set<string>();
    for (const q of quiet) {
      if (!q.when.every((c) => holds(c, run.config))) continue;
      const names = q.metrics ? drawn.filter((m) => q.metrics!.includes(metricSpec(m)?.name ?? m)) : drawn;
      if (q.metrics && !names.length) continue;
      names.forEach((m) => silenced.add(m));
      if (q.lesson) lessons.add(q.lesson);
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
  return { whole, notes, lessons: [...lessons] };
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
   * The catalog's parts of one whole are drawn as stacked areas: one run alone. Overlaid runs (or a seed group's
   * statistics, which need not add up to 1) draw them as lines: stacks of several runs on one axis cover each other.
   */
  stacked: boolean;
  /** The x axis: the rollout steps drawn, labelled at round steps (axes.ts stepAxis). */
  xAxis: Axis;
  /**
   * The y axis (axes.ts valueAxis): round ticks enclosing the values, held inside the catalog's range of the
   * chart's metrics where only a band leaves it (`clamped`: something drawn reaches past the domain and is cut
   * at the plot's edge). A flat series gets +-10% around it, so float noise is not stretched over the height; a
   * stacked chart's parts make one whole: always [0, 1].
   */
  yAxis: Axis & { clamped: boolean };
}

/** Most labelled steps on the x axis, and values on the y axis (a chart is about 330 x 150 px of plot). */
export const X_TICKS = 7;
export const Y_TICKS = 6;

/** The finite values under these keys of the rows (a band's [lo, hi] counts both ends). */
export function rowsExtent(rows: ChartData['rows'], keys: readonly string[]): Extent | null {
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
  return lo <= hi ? { lo, hi } : null;
}

/**
 * The values a chart's metrics can take together (the union of their catalog ranges); a side is unbounded when
 * any metric is unbounded there or the catalog gives it no range.
 */
export function chartRange(metrics: readonly string[]): ValueRange | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const m of metrics) {
    const r = metricRange(m);
    if (!r) return undefined;
    lo = Math.min(lo, r[0]);
    hi = Math.max(hi, r[1]);
  }
  return lo <= hi ? [lo, hi] : undefined;
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
  const xs = rowsExtent(rows, ['x']);
  // Parts of one whole stack only for a single run (an overlay draws them as lines): then the axis is [0, 1].
  const stacked = !!spec.stack && runs.length === 1 && !first?.seeds;
  return {
    rows,
    series,
    bands,
    seedGroups,
    last,
    rawPoints: first ? first.table.length : 0,
    log: o.log,
    runCount: runs.length,
    stacked,
    xAxis: stepAxis(xs?.lo ?? 0, xs?.hi ?? 1, X_TICKS),
    yAxis: valueAxis({
      lines: rowsExtent(
        rows,
        series.map((d) => d.key),
      ),
      bands: rowsExtent(
        rows,
        bands.map((d) => d.key),
      ),
      range: chartRange(spec.metrics),
      log: o.log,
      stacked,
      maxTicks: Y_TICKS,
    }),
  };
}
