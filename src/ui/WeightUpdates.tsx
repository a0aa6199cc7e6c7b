// Which weights RL moves, for the viewed run: a heatmap of ||W - W_0|| / ||W_0|| (rows = layer.matrix in model
// order, columns = the steps that measured it, colour on a log scale) drawn on a canvas, each matrix's latest
// rank-1 share beside its row, and the held-out accuracy of the rank-1 update beside the full update's. Reads the
// store only (src/store/weight-updates.ts shapes the data). Its own small drawing code; not the metric charts.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useLab } from '../store';
import { rampColor } from './Heatmap';
import { fmt } from '../store/format';
import {
  heatPosition,
  latestShares,
  rank1Accuracies,
  weightUpdateGrid,
  type WeightUpdateGrid,
} from '../store/weight-updates';
import { runView, shownRunId } from '../store/selectors';

/** Height of one heatmap row in CSS pixels (the labels and shares beside it share it). */
const ROW_PX = 13;
/** Canvas pixels per column: a few per step, so a short run's cells stay wide and a long run's still fit. */
const COL_PX = 8;

/** Viridis at five stops: dark blue (least moved) to yellow (most), readable in light and dark themes. */
const RAMP: readonly (readonly [number, number, number])[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/** The ramp's colour at t in [0, 1]; a missing value is transparent (the panel shows through). */
function heatColor(t: number): string {
  return Number.isFinite(t) ? rampColor(RAMP, t) : 'transparent';
}

const RAMP_CSS = `linear-gradient(to right, ${RAMP.map((_, i) => heatColor(i / (RAMP.length - 1))).join(', ')})`;

function drawHeatmap(canvas: HTMLCanvasElement, grid: WeightUpdateGrid): void {
  const S = grid.steps.length;
  canvas.width = Math.max(1, S * COL_PX);
  canvas.height = Math.max(1, grid.rows.length * ROW_PX);
  const g = canvas.getContext('2d');
  if (!g) return;
  g.clearRect(0, 0, canvas.width, canvas.height);
  grid.rows.forEach((_, r) => {
    for (let c = 0; c < S; c++) {
      g.fillStyle = heatColor(heatPosition(grid.rel[r * S + c], grid.logRange));
      // One pixel of gap between rows keeps them apart when many look alike.
      g.fillRect(c * COL_PX, r * ROW_PX, COL_PX, ROW_PX - 1);
    }
  });
}

export function WeightUpdates() {
  const view = useLab((s) => runView(s, shownRunId(s)));
  const table = view?.table;
  const version = view?.version;
  const grid = useMemo(() => (table ? weightUpdateGrid(table) : null), [table, version]);
  const shares = useMemo(() => (grid ? latestShares(grid) : []), [grid]);
  const accuracies = useMemo(() => rank1Accuracies(view?.evals ?? []), [view?.evals]);
  // A LoRA run's base does not move (only its adapters train), so the run measures nothing here.
  const loraRank = useLab((s) => s.runs.find((r) => r.id === shownRunId(s))?.config.lora_rank ?? 0);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<{ row: number; col: number } | null>(null);
  useEffect(() => {
    if (canvas.current && grid) drawHeatmap(canvas.current, grid);
  }, [grid]);
  const rows = grid?.rows.length ?? 0;
  const steps = grid?.steps ?? [];
  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const col = Math.floor(((e.clientX - box.left) / box.width) * steps.length);
    const row = Math.floor((e.clientY - box.top) / ROW_PX);
    setHover(row >= 0 && row < rows && col >= 0 && col < steps.length ? { row, col } : null);
  };
  const hovered =
    grid && hover
      ? {
          name: grid.rows[hover.row],
          step: steps[hover.col],
          rel: grid.rel[hover.row * steps.length + hover.col],
          share: grid.share[hover.row * steps.length + hover.col],
        }
      : null;
  return (
    <section
      className="panel"
      aria-labelledby="weights-title"
      data-testid="weight-updates"
      data-rows={rows}
      data-steps={steps.length}
      data-rank1-evals={accuracies.length}
    >
      <h2 id="weights-title">Which weights move</h2>
      {(!grid || rows === 0) && loraRank > 0 ? (
        <p className="hint" data-testid="weight-updates-lora">
          This run trains LoRA adapters (<code>lora_rank</code> {loraRank}) on a frozen base: no base weight moves, so
          nothing is measured here. Its update to each adapted matrix is s B A, of rank at most {loraRank}.
        </p>
      ) : !grid || rows === 0 ? (
        <p className="hint">
          Every <code>weight_stats_every</code> steps the run measures how far each weight matrix moved from its start,
          ||W − W_0|| / ||W_0||, and how much of that move is one direction (the rank-1 share). The heatmap fills in at
          the first such step.
        </p>
      ) : (
        <>
          <p className="hint">
            Colour: ||W − W_0|| / ||W_0|| per matrix and step, log scale. Right: the latest share of the update in its
            top singular direction, σ₁² / ||W − W_0||² (1: the whole update is one outer product u vᵀ).
          </p>
          <div
            style={{
              display: 'grid',
              gridTemplateColumns: 'max-content minmax(120px, 1fr) 110px',
              columnGap: 8,
              alignItems: 'start',
            }}
          >
            <div
              style={{
                fontFamily: 'ui-monospace, monospace',
                fontSize: 11,
                lineHeight: `${ROW_PX}px`,
                textAlign: 'right',
              }}
            >
              {grid.rows.map((name) => (
                <div key={name}>{name}</div>
              ))}
            </div>
            <canvas
              ref={canvas}
              data-testid="weight-heatmap"
              aria-label={`heatmap of relative weight updates: ${rows} matrices by ${steps.length} steps`}
              style={{
                width: '100%',
                height: rows * ROW_PX,
                imageRendering: 'pixelated',
                border: '1px solid var(--border)',
                boxSizing: 'content-box',
              }}
              onMouseMove={onMove}
              onMouseLeave={() => setHover(null)}
            />
            <div style={{ fontSize: 11, lineHeight: `${ROW_PX}px` }} data-testid="rank1-shares">
              {shares.map((s, r) => (
                <div
                  key={grid.rows[r]}
                  title={
                    Number.isFinite(s)
                      ? `rank-1 share of ${grid.rows[r]}: ${fmt(s)}`
                      : `${grid.rows[r]} is a vector: its update is rank 1`
                  }
                  style={{ display: 'flex', alignItems: 'center', gap: 4 }}
                >
                  <span
                    style={{
                      display: 'inline-block',
                      height: ROW_PX - 4,
                      width: Number.isFinite(s) ? `${Math.round(s * 60)}px` : 0,
                      background: 'var(--accent, #3b5bdb)',
                      opacity: 0.7,
                    }}
                  />
                  <span>{Number.isFinite(s) ? s.toFixed(2) : '—'}</span>
                </div>
              ))}
            </div>
            <span />
            <div style={{ display: 'flex', justifyContent: 'space-between', fontSize: 11, color: 'var(--muted)' }}>
              <span>step {steps[0]}</span>
              <span>step {steps[steps.length - 1]}</span>
            </div>
            <span style={{ fontSize: 11, color: 'var(--muted)' }}>rank-1 share</span>
          </div>
          <div
            style={{ display: 'flex', alignItems: 'center', gap: 6, fontSize: 11, marginTop: 6 }}
            data-testid="weight-scale"
          >
            <span>{grid.logRange ? fmt(10 ** grid.logRange.min) : '0'}</span>
            <span style={{ display: 'inline-block', width: 160, height: 10, background: RAMP_CSS }} />
            <span>{grid.logRange ? fmt(10 ** grid.logRange.max) : '0'}</span>
            <span style={{ color: 'var(--muted)', marginLeft: 8 }}>
              {hovered
                ? `${hovered.name} at step ${hovered.step}: ||W − W_0|| / ||W_0|| = ${fmt(hovered.rel)}${Number.isFinite(hovered.share) ? `, rank-1 share ${fmt(hovered.share)}` : ''}`
                : 'hover a cell for its values'}
            </span>
          </div>
        </>
      )}
      {accuracies.length > 0 && (
        <table className="results" data-testid="rank1-accuracy" style={{ marginTop: 10 }}>
          <caption style={{ textAlign: 'left', fontSize: 13, fontWeight: 600 }}>
            Held-out greedy accuracy: full update vs each matrix's rank-1 update
          </caption>
          <thead>
            <tr>
              <th>step</th>
              <th>full W</th>
              <th>W_0 + σ₁ u₁ v₁ᵀ</th>
            </tr>
          </thead>
          <tbody>
            {accuracies.map((a) => (
              <tr key={a.step}>
                <td>{a.step}</td>
                <td>{(a.full * 100).toFixed(0)}%</td>
                <td>{(a.rank1 * 100).toFixed(0)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {accuracies.length > 0 && (
        <p className="hint" style={{ marginTop: 4 }}>
          Close numbers: one direction per matrix carries what the run learned. Lower on the right: the rest of the
          update matters.
        </p>
      )}
    </section>
  );
}
