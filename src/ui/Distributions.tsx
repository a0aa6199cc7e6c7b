// Distributions over time of the viewed run: a recorded histogram (entropy, advantage) as a heatmap of rollout steps
// x bins, colour = the bin's share of the step's tokens; and the held-out solve-rate histogram (how many prompts 0,
// 1, ..., n of their samples solve) of the starting and the latest evaluation, beside the pass@k chart. Each redraws
// through the render queue and only near the viewport, like the metric charts. Data from store/dynamics.ts.
import { memo, useMemo, useRef } from 'react';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { useLab } from '../store';
import { histogramGrid, solveRates } from '../store/dynamics';
import { fmt } from '../store/format';
import { HISTOGRAMS, type HistogramId } from '../store/schema';
import { metricColor } from './colors';
import { Heatmap } from './Heatmap';
import { useNearViewport, useStaggered } from './render-queue';

/** Columns of a heatmap at most (adjacent steps are summed past it). */
const MAX_COLUMNS = 200;

const TITLES: Record<HistogramId, string> = {
  entropy: 'Entropy distribution over steps',
  advantage: 'Advantage distribution over steps',
};

/** One recorded histogram of the viewed run as a heatmap over its rollout steps. */
export const HistogramHeatmap = memo(function HistogramHeatmap({ id }: { id: HistogramId }) {
  const view = useLab((s) => (s.viewRunId ? s.views[s.viewRunId] : undefined));
  const version = view?.version ?? 0;
  const grid = useMemo(() => (view ? histogramGrid(view.table, id, MAX_COLUMNS) : null), [view?.table, version, id]);
  const ref = useRef<HTMLElement>(null);
  const near = useNearViewport(ref);
  const drawn = useStaggered(`heatmap-${id}`, grid, near, 1000);
  const spec = HISTOGRAMS[id];
  const steps = grid?.columns.length ?? 0;
  return (
    <figure ref={ref} className="chart" data-testid={`heatmap-${id}`} data-steps={steps} hidden={!steps}>
      <figcaption>
        <span className="chart-title" title={spec.doc}>
          {TITLES[id]}
        </span>
        <span className="hint small">
          share of {spec.counts} ({spec.unit})
        </span>
      </figcaption>
      {drawn && drawn.columns.length > 0 ? (
        <Heatmap
          rows={drawn.rows}
          columns={drawn.columns}
          values={drawn.values}
          xLabel="rollout step"
          testId={`heatmap-${id}-cells`}
          cellText={(r, c) => {
            const steps =
              drawn.firstSteps[c] === drawn.columns[c]
                ? `step ${drawn.columns[c]}`
                : `steps ${drawn.firstSteps[c]}-${drawn.columns[c]}`;
            return `${steps}: ${drawn.rows[r]} holds ${fmt(drawn.values[r][c] * 100)}% of ${drawn.totals[c]} ${spec.counts}`;
          }}
        />
      ) : (
        <div className="plot-placeholder" />
      )}
    </figure>
  );
});

/** The held-out solve-rate histogram of the viewed run: its first evaluation (before training) and its latest. */
export function SolveRateChart() {
  const evals = useLab((s) => (s.viewRunId ? s.views[s.viewRunId]?.evals : undefined));
  const sets = useMemo(() => solveRates(evals ?? []), [evals]);
  const ref = useRef<HTMLElement>(null);
  const near = useNearViewport(ref);
  const drawn = useStaggered('chart-solve-rate', sets, near);
  if (!sets.length) return <figure ref={ref} className="chart" hidden data-testid="chart-solve-rate" data-evals={0} />;
  const shown = drawn ?? [];
  const n = Math.max(0, ...shown.map((s) => s.counts.length - 1));
  const key = (step: number) => (step === 0 ? 'step 0 (before training)' : `step ${step}`);
  const rows = Array.from({ length: n + 1 }, (_, c) =>
    Object.fromEntries([['c', c], ...shown.map((s) => [key(s.step), s.counts[c] ?? 0])]),
  );
  const last = sets[sets.length - 1];
  return (
    <figure
      ref={ref}
      className="chart"
      data-testid="chart-solve-rate"
      data-evals={sets.length}
      data-last={JSON.stringify(last.counts)}
    >
      <figcaption>
        <span
          className="chart-title"
          title="How many held-out prompts exactly c of their n samples solve (a sample passes when the verifier judges it correct and it ended with EOS). Mass moving right from 0: RL finds answers it could not; mass moving only from the middle to n: it sharpens what it could already do."
        >
          Held-out solve rate
        </span>
        <span className="hint small">prompts by samples solved</span>
      </figcaption>
      {!drawn ? (
        <div className="plot-placeholder" />
      ) : (
        <BarChart
          responsive
          data={rows}
          style={{ width: '100%', height: 176 }}
          margin={{ top: 4, right: 8, bottom: 4, left: 0 }}
        >
          <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
          <XAxis
            dataKey="c"
            tick={{ fontSize: 11 }}
            label={{
              value: `samples solved, of ${n}`,
              position: 'insideBottom',
              offset: 0,
              style: { fontSize: 11, fill: 'var(--muted)' },
            }}
            height={30}
          />
          <YAxis allowDecimals={false} tick={{ fontSize: 11 }} width={40} />
          <Tooltip
            formatter={(v, name) => [`${v} prompts`, String(name)]}
            labelFormatter={(c) => `solved by ${c} of ${n}`}
            contentStyle={{ fontSize: 12 }}
            isAnimationActive={false}
          />
          {shown.map((s, i) => (
            <Bar key={s.step} dataKey={key(s.step)} fill={metricColor(i)} fillOpacity={0.8} isAnimationActive={false} />
          ))}
        </BarChart>
      )}
      <div className="chart-legend">
        {shown.map((s, i) => (
          <span key={s.step} style={{ color: metricColor(i) }}>
            ■ {key(s.step)}
          </span>
        ))}
      </div>
    </figure>
  );
}
