// Distributions over time of the viewed run: a recorded histogram (entropy, advantage) as a heatmap of rollout steps
// x bins, colour = the bin's share of the step's tokens; and the held-out solve-rate histogram (how many prompts 0,
// 1, ..., n of their samples solve) of the starting and the latest evaluation, beside the pass@k chart. Each redraws
// through the render queue and only near the viewport, like the metric charts. Data from store/dynamics.ts.
import { memo, useMemo } from 'react';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { useLab } from '../store';
import { histogramGrid, solveRates } from '../store/dynamics';
import { fmt } from '../store/format';
import { HISTOGRAMS, type HistogramId } from '../store/schema';
import { ChartFrame, ChartLegend, PLOT_STYLE, PlotOrPlaceholder, plotBox, useDeferredPlot } from './ChartFrame';
import { metricColor } from './colors';
import { Heatmap } from './Heatmap';
import { evalStepLabel } from './PassAtKChart';
import { runView, shownRunId } from '../store/selectors';

/** Columns of a heatmap at most (adjacent steps are summed past it). */
const MAX_COLUMNS = 200;

const TITLES: Record<HistogramId, string> = {
  entropy: 'Entropy distribution over steps',
  advantage: 'Advantage distribution over steps',
};

/** One recorded histogram of the viewed run as a heatmap over its rollout steps. */
export const HistogramHeatmap = memo(function HistogramHeatmap({ id }: { id: HistogramId }) {
  const view = useLab((s) => runView(s, shownRunId(s)));
  const version = view?.version ?? 0;
  const grid = useMemo(() => (view ? histogramGrid(view.table, id, MAX_COLUMNS) : null), [view?.table, version, id]);
  const { ref, drawn } = useDeferredPlot(`heatmap-${id}`, grid, 1000);
  const spec = HISTOGRAMS[id];
  const steps = grid?.columns.length ?? 0;
  return (
    <ChartFrame
      frameRef={ref}
      data-testid={`heatmap-${id}`}
      data-steps={steps}
      hidden={!steps}
      title={TITLES[id]}
      help={spec.doc}
      caption={
        <span className="hint small">
          share of {spec.counts} ({spec.unit})
        </span>
      }
    >
      <PlotOrPlaceholder drawn={drawn?.columns.length ? drawn : undefined}>
        {(shown) => (
          <Heatmap
            rows={shown.rows}
            columns={shown.columns}
            values={shown.values}
            xLabel="rollout step"
            testId={`heatmap-${id}-cells`}
            cellText={(r, c) => {
              const steps =
                shown.firstSteps[c] === shown.columns[c]
                  ? `step ${shown.columns[c]}`
                  : `steps ${shown.firstSteps[c]}-${shown.columns[c]}`;
              return `${steps}: ${shown.rows[r]} holds ${fmt(shown.values[r][c] * 100)}% of ${shown.totals[c]} ${spec.counts}`;
            }}
          />
        )}
      </PlotOrPlaceholder>
    </ChartFrame>
  );
});

/** The held-out solve-rate histogram of the viewed run: its first evaluation (before training) and its latest. */
export function SolveRateChart() {
  const evals = useLab((s) => runView(s, shownRunId(s))?.evals);
  const sets = useMemo(() => solveRates(evals ?? []), [evals]);
  const { ref, drawn } = useDeferredPlot('chart-solve-rate', sets);
  if (!sets.length) return <ChartFrame frameRef={ref} hidden data-testid="chart-solve-rate" data-evals={0} />;
  const shown = drawn ?? [];
  const n = Math.max(0, ...shown.map((s) => s.counts.length - 1));
  const rows = Array.from({ length: n + 1 }, (_, c) =>
    Object.fromEntries([['c', c], ...shown.map((s) => [evalStepLabel(s.step), s.counts[c] ?? 0])]),
  );
  const last = sets[sets.length - 1];
  return (
    <ChartFrame
      frameRef={ref}
      data-testid="chart-solve-rate"
      data-evals={sets.length}
      data-last={JSON.stringify(last.counts)}
      title="Held-out solve rate"
      help="How many held-out prompts exactly c of their n samples solve (a sample passes when the verifier judges it correct and it ended with EOS). Mass moving right from 0: RL finds answers it could not; mass moving only from the middle to n: it sharpens what it could already do."
      caption={<span className="hint small">prompts by samples solved</span>}
    >
      <PlotOrPlaceholder drawn={drawn}>
        {() => (
          <BarChart {...plotBox(176)} data={rows} margin={{ top: 4, right: 8, bottom: 4, left: 0 }}>
            <CartesianGrid {...PLOT_STYLE.grid} />
            <XAxis
              dataKey="c"
              tick={PLOT_STYLE.tick}
              label={{
                value: `samples solved, of ${n}`,
                position: 'insideBottom',
                offset: 0,
                style: PLOT_STYLE.axisLabel,
              }}
              height={30}
            />
            <YAxis allowDecimals={false} tick={PLOT_STYLE.tick} width={40} />
            <Tooltip
              formatter={(v, name) => [`${v} prompts`, String(name)]}
              labelFormatter={(c) => `solved by ${c} of ${n}`}
              {...PLOT_STYLE.tooltip}
            />
            {shown.map((s, i) => (
              <Bar
                key={s.step}
                dataKey={evalStepLabel(s.step)}
                fill={metricColor(i)}
                fillOpacity={0.8}
                isAnimationActive={false}
              />
            ))}
          </BarChart>
        )}
      </PlotOrPlaceholder>
      <ChartLegend
        entries={shown.map((s, i) => ({
          key: s.step,
          glyph: '■',
          label: evalStepLabel(s.step),
          color: metricColor(i),
        }))}
      />
    </ChartFrame>
  );
}
