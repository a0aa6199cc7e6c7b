// The held-out evaluation: pass@k over k (unbiased estimate from eval_num_generations samples per prompt) at
// chosen evaluation steps of the viewed run, the last evaluation of each overlaid run, and greedy accuracy by
// step. Does RL discover new answers (pass@k rises for large k) or only sharpen (pass@1 rises, pass@k flat)?
import { useMemo, useRef, useState } from 'react';
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import { useLab } from '../store';
import { linearAxis } from '../store/axes';
import { fmt } from '../store/format';
import { savedRunNames } from '../store/run-names';
import { openedLesson } from '../store/selectors';
import type { EvalRecord } from '../store/schema';
import { ChartFrame, ChartLegend, PLOT_STYLE, PlotOrPlaceholder, plotBox, useDeferredPlot } from './ChartFrame';
import { metricColor, runColor } from './colors';

/** pass@k is a fraction: the axis is [0, 1] at round steps (0, 0.2, ... 1). */
const PASS_TICKS = linearAxis(0, 1, 6).ticks;

const NO_EVALS: EvalRecord[] = [];

/** An evaluation's name: step 0 is the policy before any training (the trainer evaluates it first). */
export function evalStepLabel(step: number): string {
  return step === 0 ? 'step 0 (before training)' : `step ${step}`;
}

/** Default steps to draw: the first and the last evaluation, and up to two between. */
function defaultSteps(evals: readonly EvalRecord[]): number[] {
  if (evals.length <= 4) return evals.map((e) => e.step);
  const idx = [0, Math.round((evals.length - 1) / 3), Math.round((2 * (evals.length - 1)) / 3), evals.length - 1];
  return [...new Set(idx.map((i) => evals[i].step))];
}

export function PassAtKChart({ runIds }: { runIds: string[] }) {
  const views = useLab((s) => s.views);
  const runs = useLab((s) => s.runs);
  const labels = savedRunNames(runs);
  // An open lesson that asks to compare pass@k outlines this chart as it does its other charts.
  const highlighted = useLab((s) => !!openedLesson(s)?.highlight.passAtK);
  const [chosen, setChosen] = useState<number[] | null>(null);
  const primary = (runIds[0] ? views[runIds[0]]?.evals : undefined) ?? NO_EVALS;
  const steps = chosen?.filter((s) => primary.some((e) => e.step === s)) ?? defaultSteps(primary);
  const evalsKey = runIds.map((id) => views[id]?.evals);
  const prevEvals = useRef<(EvalRecord[] | undefined)[]>([]);
  if (evalsKey.length !== prevEvals.current.length || evalsKey.some((e, i) => e !== prevEvals.current[i]))
    prevEvals.current = evalsKey;
  const stableEvals = prevEvals.current;
  const curves = useMemo(() => {
    const out: { key: string; label: string; color: string; dash?: string; passAtK: number[] }[] = [];
    steps.forEach((s, i) => {
      const e = primary.find((x) => x.step === s);
      if (e) out.push({ key: `p${s}`, label: evalStepLabel(s), color: metricColor(i), passAtK: e.passAtK });
    });
    runIds.slice(1).forEach((id, j) => {
      const ev = stableEvals[j + 1] ?? [];
      const e = ev[ev.length - 1];
      const name = labels.get(id) ?? id;
      if (e)
        out.push({
          key: `o${j}`,
          label: `${name}: step ${e.step}`,
          color: runColor(j + 1),
          dash: '6 3',
          passAtK: e.passAtK,
        });
    });
    return out;
  }, [stableEvals, steps.join(','), runIds.join(','), labels]);
  const { ref, drawn } = useDeferredPlot('chart-pass-at-k', curves);
  if (!primary.length && curves.length === 0)
    return <ChartFrame frameRef={ref} className="chart wide" hidden data-testid="chart-pass-at-k" data-evals={0} />;
  const shown = drawn ?? [];
  const K = Math.max(0, ...shown.map((c) => c.passAtK.length));
  const rows = Array.from({ length: K }, (_, k) =>
    Object.fromEntries([['k', k + 1], ...shown.map((c) => [c.key, c.passAtK[k] ?? null])]),
  );
  const last = primary[primary.length - 1];
  return (
    <ChartFrame
      frameRef={ref}
      className={`chart wide${highlighted ? ' highlighted' : ''}`}
      data-highlighted={highlighted}
      data-testid="chart-pass-at-k"
      data-evals={primary.length}
      data-last={JSON.stringify(last?.passAtK ?? [])}
      data-finite={!!last && last.passAtK.every(Number.isFinite)}
      title="Held-out pass@k"
      help="unbiased pass@k = 1 - C(n-c, k)/C(n, k) on held-out prompts, n = eval_num_generations samples each"
      caption={
        <span className="eval-steps">
          {primary.map((e) => (
            <label key={e.step}>
              <input
                type="checkbox"
                checked={steps.includes(e.step)}
                onChange={(ev) =>
                  setChosen(
                    ev.target.checked ? [...steps, e.step].sort((a, b) => a - b) : steps.filter((s) => s !== e.step),
                  )
                }
              />
              {e.step}
            </label>
          ))}
        </span>
      }
    >
      <PlotOrPlaceholder drawn={drawn}>
        {() => (
          <LineChart {...plotBox(170)} data={rows} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid {...PLOT_STYLE.grid} />
            <XAxis
              dataKey="k"
              type="number"
              scale="log"
              domain={[1, Math.max(2, K)]}
              ticks={rows.map((r) => r.k as number).filter((k) => (k & (k - 1)) === 0 || k === K)}
              tick={PLOT_STYLE.tick}
            />
            <YAxis
              domain={[0, 1]}
              ticks={PASS_TICKS}
              interval={0}
              tick={PLOT_STYLE.tick}
              width={40}
              tickFormatter={(v: number) => fmt(v)}
            />
            <Tooltip
              formatter={(v, name) => [fmt(Number(v)), String(name)]}
              labelFormatter={(k) => `k = ${k}`}
              {...PLOT_STYLE.tooltip}
            />
            {shown.map((c) => (
              <Line
                key={c.key}
                dataKey={c.key}
                name={c.label}
                stroke={c.color}
                strokeDasharray={c.dash}
                dot
                isAnimationActive={false}
                connectNulls
              />
            ))}
          </LineChart>
        )}
      </PlotOrPlaceholder>
      <ChartLegend entries={shown.map((c) => ({ key: c.key, glyph: '━', label: c.label, color: c.color }))} />
      {primary.length > 0 && (
        <p className="hint" data-testid="eval-accuracy">
          greedy held-out accuracy:{' '}
          {primary.map((e) => `${evalStepLabel(e.step)}: ${(e.accuracy * 100).toFixed(0)}%`).join(' · ')}
        </p>
      )}
    </ChartFrame>
  );
}
