// Live charts of every metric of the stream (recharts): each metric on its catalog chart (store/charts.ts), the
// viewed run and any overlaid runs on the same axes against the rollout step (optimizer steps as sub-ticks, so
// runs with different update counts align), EMA smoothing, log scale where it helps, hover tooltips with the
// catalog's doc, formula and healthy range, and decimation to a few hundred points so a 10,000-step run draws as
// fast as a short one. Axes are chosen by store/axes.ts: round ticks, log decades, the catalog's value range.
// Plots redraw one per task (render-queue.ts) and only near the viewport; each chart
// carries its latest values in data-last for tests. Under a title: the catalog's note and the metrics a run's config
// turns off, with a link to the lesson that explains them; the charts off in every run drawn are folded into one
// line naming them (and their knobs when opened) instead of plotting flat lines. Parts of one whole stack for one
// run and are lines in an overlay (stacks of several runs cover each other). The charts an open lesson
// points at are outlined and labelled. A dashed vertical line marks each step where an alert of the viewed run fired
// on one of the chart's metrics (steps listed in data-alerts). A seed group drawn as a band is one line per metric, the
// median or IQM across its seeds, inside its 95% bootstrap band (data-seed-bands counts those bands).
import { Fragment, memo, useEffect, useMemo, useRef, type ReactNode } from 'react';
import { Area, CartesianGrid, ComposedChart, Line, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import { useShallow } from 'zustand/react/shallow';
import type { Alert } from '../rl/observation/alerts';
import { alertsOn, BAND_LEVEL, BOOTSTRAP_RESAMPLES, lessonById, useLab } from '../store';
import { tickLabelOverhang, valueAxisWidth } from '../store/axes';
import {
  OPTIMIZER_STEP_KEY,
  STARTING_CHARTS,
  X_AXIS_LABEL,
  chartData,
  chartHelp,
  chartQuietness,
  chartsFor,
  metricHelp,
  type ChartData,
  type ChartQuietness,
  type ChartRun,
  type ChartSpec,
} from '../store/charts';
import { fmt, fmtTick } from '../store/format';
import { savedRunNames } from '../store/run-names';
import type { SeedStatistic } from '../store/seed-bands';
import { chartEntries, groupMembers, seedGroupLabel } from '../store/seed-groups';
import { HISTOGRAM_IDS, type HistogramId } from '../store/schema';
import { markStartup, startupMarked } from '../store/startup';
import { chartRunIds, highlightedCharts } from '../store/selectors';
import { ChartFrame, ChartLegend, PLOT_STYLE, PlotOrPlaceholder, plotBox, useDeferredPlot } from './ChartFrame';
import { runColor, seriesStroke } from './colors';
import { HistogramHeatmap, SolveRateChart } from './Distributions';
import { PassAtKChart } from './PassAtKChart';

/** Each recorded histogram's heatmap follows the chart of its scalar summary (the rest go after the charts). */
const HEATMAP_AFTER: Record<string, HistogramId> = { groups: 'advantage', entropy: 'entropy' };

/** The seed bands' coverage in percent. */
const BAND_PERCENT = BAND_LEVEL * 100;

/** Points per chart after decimation. */
const MAX_POINTS = 300;

/** A chart redraws at most this often while metrics stream in (each redraw is a task of its own). */
const REDRAW_MS = 1000;

function tooltipValue(v: unknown): string {
  if (Array.isArray(v)) return `${fmt(v[0] as number)} – ${fmt(v[1] as number)}`;
  return typeof v === 'number' ? fmt(v) : String(v);
}

/** The tooltip's heading: the rollout step of the point, and the first run's optimizer step there. */
function tooltipLabel(x: unknown, payload: readonly { payload?: Record<string, unknown> }[]): string {
  const opt = payload[0]?.payload?.[OPTIMIZER_STEP_KEY];
  return `${X_AXIS_LABEL} ${Math.ceil(Number(x))}${typeof opt === 'number' ? ` · optimizer step ${opt}` : ''}`;
}

/** The statistics across seeds, as the page names them. */
const STATISTIC_NAMES: Record<SeedStatistic, string> = { median: 'median', iqm: 'IQM' };

/** A chart in one sentence: the first run's latest value of each metric, and how many steps it has. */
export function chartSummary(data: ChartData): string {
  const values = Object.entries(data.last).map(([metric, v]) => `${metric} ${fmt(v)}`);
  if (!values.length) return 'No values yet.';
  const runs = data.runCount > 1 ? `, ${data.runCount} runs drawn` : '';
  return `Latest: ${values.join(', ')} (${data.rawPoints} points${runs}).`;
}

/** The plot itself: the expensive part, rendered through the render queue. */
const Plot = memo(function Plot({ spec, data, marks }: { spec: ChartSpec; data: ChartData; marks: readonly Alert[] }) {
  // Everything drawn comes from `data` (it may lag the live runs by a task or two).
  const overlay = data.runCount > 1;
  return (
    <ComposedChart
      {...plotBox(186)}
      data={data.rows}
      // Room on the right for half of the last step's label, centred on the plot's edge.
      margin={{ top: 4, right: Math.max(8, tickLabelOverhang(data.xAxis.ticks.at(-1)) + 2), bottom: 4, left: 4 }}
    >
      <CartesianGrid {...PLOT_STYLE.grid} />
      <XAxis
        dataKey="x"
        type="number"
        domain={data.xAxis.domain}
        ticks={data.xAxis.ticks}
        tick={PLOT_STYLE.tick}
        interval={0}
        height={34}
        label={{ value: X_AXIS_LABEL, position: 'insideBottom', offset: 0, style: PLOT_STYLE.axisLabel }}
      />
      <YAxis
        scale={data.log ? 'log' : 'linear'}
        domain={data.yAxis.domain}
        ticks={data.yAxis.ticks}
        allowDataOverflow
        tick={PLOT_STYLE.tick}
        interval={0}
        width={valueAxisWidth(data.yAxis.ticks)}
        tickFormatter={fmtTick}
        label={{
          value: spec.y,
          angle: -90,
          position: 'insideLeft',
          style: { ...PLOT_STYLE.axisLabel, textAnchor: 'middle' },
        }}
      />
      <Tooltip
        formatter={(v, name) => [tooltipValue(v), String(name)]}
        labelFormatter={tooltipLabel}
        {...PLOT_STYLE.tooltip}
      />
      {data.bands.map((b) => (
        <Area
          key={b.key}
          dataKey={b.key}
          name={`${overlay ? `${b.runLabel}: ` : ''}${b.metric ? `${b.metric}: ${Math.round(BAND_PERCENT)}% band across seeds` : `${spec.band!.mean} ± ${spec.band!.std}`}`}
          stroke="none"
          fill={seriesStroke(overlay, b.runIndex, b.metric ? spec.metrics.indexOf(b.metric) : 0).color}
          fillOpacity={b.metric ? 0.22 : 0.15}
          isAnimationActive={false}
          connectNulls
        />
      ))}
      {data.series.map((s) => {
        const stroke = seriesStroke(overlay, s.runIndex, spec.metrics.indexOf(s.metric));
        const group = data.seedGroups.find((g) => g.runIndex === s.runIndex);
        // Parts of one whole (the group outcomes) stack for one run, so the areas' heights add up to 1; in an overlay
        // they are lines (stacks of several runs on one axis cover each other), and a seed group's statistics of the
        // parts need not add up to 1, so they are lines in their bands.
        if (data.stacked && spec.stack?.includes(s.metric) && !group) {
          return (
            <Area
              key={s.key}
              dataKey={s.key}
              name={overlay ? `${s.runLabel}: ${s.metric}` : s.metric}
              stackId={`run${s.runIndex}`}
              type="linear"
              stroke={stroke.color}
              strokeDasharray={stroke.dash}
              fill={stroke.color}
              fillOpacity={0.45}
              isAnimationActive={false}
              connectNulls
            />
          );
        }
        return (
          <Line
            key={s.key}
            dataKey={s.key}
            name={`${overlay ? `${s.runLabel}: ` : ''}${s.metric}${group ? ` (${STATISTIC_NAMES[group.statistic]} of ${group.seeds} seeds)` : ''}`}
            stroke={stroke.color}
            strokeDasharray={stroke.dash}
            dot={false}
            strokeWidth={1.6}
            isAnimationActive={false}
            connectNulls
          />
        );
      })}
      {[...new Set(marks.map((m) => m.step))].map((step) => (
        // Left of the line: an alert fires at the newest step, the right edge of the chart.
        <ReferenceLine
          key={step}
          x={step}
          stroke="var(--fail)"
          strokeDasharray="4 3"
          label={{
            value: `⚠ ${marks
              .filter((m) => m.step === step)
              .map((m) => m.title)
              .join(', ')}`,
            position: 'insideTopRight',
            fontSize: 10,
            fill: 'var(--fail)',
          }}
        />
      ))}
    </ComposedChart>
  );
});

/** The path prefix every drawn metric shares ("completions/"), written once so a long legend fits its row. */
function sharedPrefix(metrics: readonly string[]): string {
  const first = metrics[0]?.split('/')[0];
  return metrics.length > 1 && first !== undefined && metrics.every((m) => m.startsWith(`${first}/`))
    ? `${first}/`
    : '';
}

/** A dash pattern as legend text. */
const DASH_GLYPH: Record<string, string> = { '': '━', '6 3': '╍', '2 3': '┅', '10 3 2 3': '━·' };

/**
 * The series drawn, as a light HTML legend (cheaper than recharts' own). Alone: each metric in its colour. In an
 * overlay the runs' colours are named once above the charts, so each metric is listed once with its dash.
 */
function LegendRow({ spec, data }: { spec: ChartSpec; data: ChartData }) {
  const overlay = data.runCount > 1;
  const metrics = [...new Set(data.series.map((s) => s.metric))];
  const prefix = sharedPrefix(metrics);
  const group = data.seedGroups[0];
  const entries = metrics.map((metric) => {
    const stroke = seriesStroke(overlay, 0, spec.metrics.indexOf(metric));
    return {
      key: metric,
      glyph: DASH_GLYPH[stroke.dash ?? ''] ?? '━',
      label: metric.slice(prefix.length),
      color: overlay ? undefined : stroke.color,
      title: metricHelp(metric),
    };
  });
  return (
    <ChartLegend entries={entries}>
      {group && (
        // What a group's line and band are, said once and short (the legend shares the chart's height); the hover
        // text adds how many seeds the steps have when they differ (a seed that ended early, or a value not reported).
        <span
          className="legend-prefix"
          data-testid="seed-band-legend"
          title={`each line: the ${STATISTIC_NAMES[group.statistic]} across ${group.seeds} seeds at each step, in its ${Math.round(BAND_PERCENT)}% percentile-bootstrap band over the seeds${group.minSeeds < group.maxSeeds ? `; steps have ${group.minSeeds} to ${group.maxSeeds} seeds with a value` : ''}`}
        >
          {STATISTIC_NAMES[group.statistic]}, {group.seeds} seeds, {Math.round(BAND_PERCENT)}% band:
        </span>
      )}
      {prefix && <span className="legend-prefix">{prefix}</span>}
    </ChartLegend>
  );
}

/**
 * Opens a lesson in the lessons panel and brings it into view (a chart's note links the lesson that explains it).
 */
function useOpenLesson(): (id: string) => void {
  const openLesson = useLab((s) => s.openLesson);
  return (id) => {
    openLesson(id);
    requestAnimationFrame(() =>
      document.querySelector('[data-testid=lessons-panel]')?.scrollIntoView({ block: 'start', behavior: 'smooth' }),
    );
  };
}

/** A link that opens the lesson explaining what a chart shows (or why it shows nothing). */
function LessonLink({ id, testId, children }: { id: string; testId: string; children?: ReactNode }) {
  const open = useOpenLesson();
  const lesson = lessonById(id);
  if (!lesson) return null;
  return (
    <button
      type="button"
      className="link chart-lesson"
      data-testid={testId}
      data-lesson={id}
      title={`Open the lesson: ${lesson.title}`}
      onClick={() => open(id)}
    >
      {children ?? lesson.title}
    </button>
  );
}

/**
 * One chart. The figure and its data attributes follow the metric tables at once (cheap); the plot is redrawn
 * through the render queue, one chart per task, and only while it is near the viewport.
 */
const MetricChart = memo(function MetricChart({
  spec,
  runs,
  smoothing,
  statistic,
  log,
  versions,
  highlighted,
  alerts,
  quiet,
}: {
  spec: ChartSpec;
  runs: ChartRun[];
  smoothing: number;
  statistic: SeedStatistic;
  log: boolean;
  versions: string;
  highlighted: boolean;
  alerts: readonly Alert[] | undefined;
  quiet: ChartQuietness;
}) {
  const setLogScale = useLab((s) => s.setLogScale);
  // `versions` changes whenever a table grows; the tables themselves are mutated in place.
  const data = useMemo(
    () => chartData(spec, runs, { smoothing, maxPoints: MAX_POINTS, log, statistic }),
    [spec, runs, smoothing, log, statistic, versions],
  );
  const { ref, drawn } = useDeferredPlot(`chart-${spec.id}`, data, REDRAW_MS);
  const finite = Object.values(data.last).every((v) => Number.isFinite(v));
  // Time to first step ends when a plot has drawn a point (after React committed it) once this page's engine has sent
  // metrics: a reload draws its restored run's points before any step, and those do not end it.
  useEffect(() => {
    if (drawn && drawn.rawPoints > 0 && startupMarked('first-metrics')) markStartup('first-point');
  }, [drawn]);
  const marks = useMemo(
    () => alertsOn(alerts, spec.band ? [...spec.metrics, spec.band.std] : spec.metrics),
    [alerts, spec],
  );
  // The question the chart raises most (the catalog's note), then which of its metrics this run's config silences,
  // and the lessons that explain them.
  const notes = [...(spec.note ? [spec.note] : []), ...quiet.notes];
  const lessons = [...new Set([...(spec.noteLesson ? [spec.noteLesson] : []), ...quiet.lessons])];
  return (
    <ChartFrame
      frameRef={ref}
      className={['chart', highlighted && 'highlighted', notes.length > 0 && 'has-notes'].filter(Boolean).join(' ')}
      data-testid={`chart-${spec.id}`}
      data-highlighted={highlighted}
      data-metrics={spec.metrics.join(',')}
      data-points={data.rawPoints}
      data-drawn={drawn ? drawn.rawPoints : 0}
      data-runs={runs.length}
      data-last={JSON.stringify(data.last)}
      data-finite={finite}
      data-log={log}
      data-alerts={marks.map((m) => m.step).join(',')}
      data-seed-bands={data.bands.filter((b) => b.metric).length}
      data-seeds={data.seedGroups
        .map((g) => (g.minSeeds === g.maxSeeds ? g.maxSeeds : `${g.minSeeds}-${g.maxSeeds}`))
        .join(',')}
      title={
        <>
          {spec.title}
          {highlighted && <span className="lesson-tag"> · lesson: look here</span>}
        </>
      }
      help={chartHelp(spec)}
      caption={
        <>
          {lessons.map((id) => (
            <LessonLink key={id} id={id} testId={`chart-lesson-${spec.id}`}>
              why? lesson
            </LessonLink>
          ))}
          {spec.log !== 'never' && (
            <label className="log-toggle">
              <input type="checkbox" checked={log} onChange={(e) => setLogScale(spec.id, e.target.checked)} /> log
            </label>
          )}
        </>
      }
    >
      {notes.length > 0 && (
        <div className="chart-notes" title={notes.join('\n')}>
          {notes.map((n) => (
            <p key={n} className="chart-note">
              {n}
            </p>
          ))}
        </div>
      )}
      {/* For assistive technology: the chart as one named image, its latest values as the description. */}
      <div
        role="img"
        aria-label={`${spec.title} chart`}
        aria-describedby={`chart-summary-${spec.id}`}
        data-testid="chart-figure"
      >
        <PlotOrPlaceholder drawn={drawn}>
          {(shown) => <Plot spec={spec} data={shown} marks={marks} />}
        </PlotOrPlaceholder>
      </div>
      <p className="sr-only" id={`chart-summary-${spec.id}`} data-testid="chart-summary">
        {chartSummary(data)}
      </p>
      {drawn && <LegendRow spec={spec} data={drawn} />}
    </ChartFrame>
  );
});

/**
 * The charts with nothing to show in the runs drawn (every metric off, or 0 by construction, in every run), folded
 * into one line naming them, each with the lesson that explains it where there is one; opened, it lists which
 * knobs turned each off. A flat line at 0 on an axis of its own reads as a measurement, and a box per chart saying
 * so fills the page.
 */
function OffCharts({
  specs,
  quiet,
  highlighted,
  runCount,
}: {
  specs: readonly ChartSpec[];
  quiet: ReadonlyMap<string, ChartQuietness>;
  highlighted: readonly string[];
  runCount: number;
}) {
  if (specs.length === 0) return null;
  return (
    <details className="charts-off" data-testid="charts-off" data-charts={specs.map((s) => s.id).join(',')}>
      <summary>
        <span className="charts-off-head">Nothing to show in {runCount > 1 ? 'these runs' : 'this run'}:</span>{' '}
        {specs.map((spec, i) => {
          const q = quiet.get(spec.id)!;
          return (
            <span
              key={spec.id}
              className={highlighted.includes(spec.id) ? 'chart-off-name highlighted' : 'chart-off-name'}
              data-testid={`chart-${spec.id}`}
              data-off
              data-highlighted={highlighted.includes(spec.id)}
              title={q.notes.join('\n')}
            >
              {i > 0 && ' · '}
              {spec.title}
              {q.lessons.map((id) => (
                <Fragment key={id}>
                  {' ('}
                  {/* The lesson's own title asks about another chart (clip-zero on the KL chart): the link says why. */}
                  <LessonLink id={id} testId={`chart-off-lesson-${spec.id}`}>
                    why? a lesson shows it
                  </LessonLink>
                  {')'}
                </Fragment>
              ))}
            </span>
          );
        })}
      </summary>
      <ul>
        {specs.map((spec) => (
          <li key={spec.id} data-testid={`chart-off-${spec.id}`}>
            <b>{spec.title}</b>:{' '}
            <span className="chart-off" data-testid="chart-off">
              {quiet.get(spec.id)!.notes.join('; ')}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}

export function Charts() {
  const views = useLab((s) => s.views);
  const ids = useLab(useShallow(chartRunIds));
  const runs = useLab((s) => s.runs);
  const groupViews = useLab((s) => s.seedGroupView);
  const statistic = useLab((s) => s.seedStatistic);
  const setStatistic = useLab((s) => s.setSeedStatistic);
  const smoothing = useLab((s) => s.smoothing);
  const setSmoothing = useLab((s) => s.setSmoothing);
  const logScale = useLab((s) => s.logScale);
  const highlighted = useLab(highlightedCharts);
  const alerts = useLab((s) => (ids[0] === undefined ? undefined : s.alerts[ids[0]]));
  // The charts' runs change only when the set of runs, a label or a table object changes (tables grow in
  // place; `versions` says when), not on every store update that touches `views`.
  const idsKey = ids.join(',');
  // A seed group drawn as a band is one entry holding its runs whose records are here.
  const loadedKey = Object.keys(views).join(',');
  const entries = useMemo(
    () => chartEntries(ids, runs, groupViews, (id) => !!views[id]),
    [idsKey, runs, groupViews, loadedKey],
  );
  const drawnHeaders = useMemo(() => entries.flatMap((e) => runs.filter((r) => r.id === e.id)), [entries, runs]);
  const labels = useMemo(() => {
    // Each run's name among all the saved runs: the same in the runs list and the status line, whatever is drawn.
    const named = new Map(savedRunNames(runs));
    for (const e of entries) if (e.groupId) named.set(e.id, seedGroupLabel(groupMembers(runs, e.groupId)));
    return named;
  }, [drawnHeaders, entries, runs]);
  const next: ChartRun[] = entries.map((e) => ({
    id: e.id,
    label: labels.get(e.id) ?? e.id,
    table: views[e.id].table,
    ...(e.members && { seeds: e.members.map((m) => views[m].table) }),
  }));
  const prev = useRef<ChartRun[]>([]);
  const sameSeeds = (a: ChartRun['seeds'], b: ChartRun['seeds']) =>
    a === b || (!!a && !!b && a.length === b.length && a.every((t, i) => t === b[i]));
  const same =
    next.length === prev.current.length &&
    next.every(
      (r, i) =>
        r.id === prev.current[i].id &&
        r.label === prev.current[i].label &&
        r.table === prev.current[i].table &&
        sameSeeds(r.seeds, prev.current[i].seeds),
    );
  if (!same) prev.current = next;
  const chartRuns = prev.current;
  const grouped = chartRuns.some((r) => r.seeds);
  const versions = entries
    .flatMap((e) => e.members ?? [e.id])
    .map((id) => views[id].version)
    .join(',');
  const names = useMemo(
    () => [...new Set(chartRuns.flatMap((r) => (r.seeds ?? [r.table]).flatMap((t) => t.names)))].sort(),
    [chartRuns, versions],
  );
  const namesKey = names.join('|');
  // Before any run has data, the main charts are drawn empty: the layout does not jump when training starts,
  // and the chart library's first-use cost is paid while the page is idle rather than during the first step.
  const specs = useMemo(() => (namesKey ? chartsFor(namesKey.split('|')) : STARTING_CHARTS), [namesKey]);
  // What each chart says about metrics the runs' configs silence; recomputed only when a config or label changes.
  const quietRuns = drawnHeaders.map((h) => ({ label: labels.get(h.id) ?? h.name, config: h.config }));
  const quietKey = JSON.stringify(quietRuns);
  const quiet = useMemo(
    () => new Map(specs.map((spec) => [spec.id, chartQuietness(spec, quietRuns)])),
    [specs, quietKey],
  );
  const drawnSpecs = specs.filter((spec) => !quiet.get(spec.id)!.whole);
  const offSpecs = specs.filter((spec) => quiet.get(spec.id)!.whole);
  return (
    <section className="panel charts" aria-labelledby="charts-title" data-testid="charts" data-runs={ids.length}>
      <div className="charts-head">
        <h2 id="charts-title">Metrics</h2>
        <label className="smoothing">
          smoothing
          <input
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            data-testid="smoothing"
            onChange={(e) => setSmoothing(Number(e.target.value))}
          />
          <span>{smoothing.toFixed(2)}</span>
        </label>
        {grouped && (
          <label
            className="smoothing"
            title={`each seed group's line is this statistic of its seeds at each step; its band is the ${Math.round(BAND_PERCENT)}% percentile bootstrap of it over the seeds (${BOOTSTRAP_RESAMPLES} resamples)`}
          >
            across seeds
            <select
              value={statistic}
              data-testid="seed-statistic"
              onChange={(e) => setStatistic(e.target.value as SeedStatistic)}
            >
              <option value="median">median</option>
              <option value="iqm">IQM (interquartile mean)</option>
            </select>
          </label>
        )}
        {chartRuns.length > 1 && (
          <span className="legend-runs" data-testid="overlay-legend">
            {chartRuns.map((r, i) => (
              <span key={r.id} style={{ color: runColor(i) }}>
                ■ {r.label}{' '}
              </span>
            ))}
          </span>
        )}
      </div>
      {!namesKey && <p className="hint">The charts fill in with the first step of a run; or open a saved run below.</p>}
      <OffCharts
        specs={offSpecs}
        quiet={quiet}
        highlighted={highlighted as readonly string[]}
        runCount={drawnHeaders.length}
      />
      <div className="chart-grid">
        {drawnSpecs.map((spec) => (
          <Fragment key={spec.id}>
            <MetricChart
              spec={spec}
              runs={chartRuns}
              smoothing={smoothing}
              statistic={statistic}
              log={logScale[spec.id] ?? spec.log === 'on'}
              versions={versions}
              highlighted={(highlighted as readonly string[]).includes(spec.id)}
              alerts={alerts}
              quiet={quiet.get(spec.id)!}
            />
            {HEATMAP_AFTER[spec.id] && <HistogramHeatmap id={HEATMAP_AFTER[spec.id]} />}
          </Fragment>
        ))}
        {HISTOGRAM_IDS.filter((id) => !drawnSpecs.some((spec) => HEATMAP_AFTER[spec.id] === id)).map((id) => (
          <HistogramHeatmap key={id} id={id} />
        ))}
        <PassAtKChart runIds={ids} />
        <SolveRateChart />
      </div>
    </section>
  );
}
