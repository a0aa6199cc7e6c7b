// A generic heatmap: rows x columns of values drawn as coloured cells on one canvas (cheap for hundreds of columns,
// no element per cell), row labels on the left as wide as the widest (never cut), column ticks at round steps below
// (store/axes.ts) kept inside the canvas's width, and the hovered cell's text underneath.
// Knows nothing of what the rows are (histogram bins, layers, ...): the caller passes labels, values and the text
// of a cell. Colour: a sequential scale from the page background to dark blue, on the square root of value / max
// so small shares stay visible. Not the data (store/dynamics.ts builds a histogram's grid).
import { useEffect, useRef, useState } from 'react';
import { columnTicks } from '../store/axes';

export interface HeatmapProps {
  /** One label per row, bottom row first. */
  rows: readonly string[];
  /** Each column's x value (ticks show a few of them). */
  columns: readonly number[];
  /** values[row][column]; NaN draws nothing. */
  values: readonly (readonly number[])[];
  /** The value drawn darkest (default: the largest finite value). */
  max?: number;
  /** The x axis's name ("rollout step"). */
  xLabel: string;
  /** The hovered cell's description. */
  cellText: (row: number, column: number) => string;
  /** Canvas height in CSS pixels. */
  height?: number;
  testId?: string;
}

/** Colour stops from empty to full (light to dark). */
const STOPS: [number, number, number][] = [
  [247, 251, 255],
  [198, 219, 239],
  [107, 174, 214],
  [33, 113, 181],
  [8, 48, 107],
];

/** The colour at t in [0, 1] of a ramp of RGB stops, linearly between neighbouring stops (shared by every heatmap). */
export function rampColor(stops: readonly (readonly [number, number, number])[], t: number): string {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const c = stops[i].map((a, k) => Math.round(a + f * (stops[i + 1][k] - a)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** The colour of t in [0, 1] on this heatmap's scale. */
export function heatColor(t: number): string {
  return rampColor(STOPS, t);
}

export function Heatmap({ rows, columns, values, max, xLabel, cellText, height = 150, testId }: HeatmapProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<[number, number] | null>(null);
  let top = 0;
  for (const r of values) for (const v of r) if (Number.isFinite(v) && v > top) top = v;
  const scaleMax = max ?? top;
  useEffect(() => {
    const c = canvas.current;
    if (!c) return;
    const draw = () => {
      const dpr = typeof devicePixelRatio === 'number' ? devicePixelRatio : 1;
      const w = c.clientWidth;
      const h = c.clientHeight;
      c.width = Math.max(1, Math.round(w * dpr));
      c.height = Math.max(1, Math.round(h * dpr));
      const g = c.getContext('2d');
      if (!g) return;
      g.scale(dpr, dpr);
      g.clearRect(0, 0, w, h);
      const R = rows.length;
      const C = columns.length;
      if (!R || !C || !(scaleMax > 0)) return;
      const cw = w / C;
      const rh = h / R;
      for (let r = 0; r < R; r++) {
        for (let col = 0; col < C; col++) {
          const v = values[r]?.[col];
          if (v === undefined || !Number.isFinite(v) || v <= 0) continue;
          g.fillStyle = heatColor(Math.sqrt(v / scaleMax));
          // Row 0 at the bottom; cells overlap by a hair so no seams show between them.
          g.fillRect(col * cw, h - (r + 1) * rh, cw + 0.5, rh + 0.5);
        }
      }
    };
    draw();
    // A resized canvas is drawn again at its new size rather than stretched.
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(draw);
    observer?.observe(c);
    return () => observer?.disconnect();
  }, [rows, columns, values, scaleMax]);
  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const col = Math.floor(((e.clientX - box.left) / box.width) * columns.length);
    const row = rows.length - 1 - Math.floor(((e.clientY - box.top) / box.height) * rows.length);
    setHover(col >= 0 && col < columns.length && row >= 0 && row < rows.length ? [row, col] : null);
  };
  // Every row labelled when they fit (about 10 px each), else every other one.
  const labelEvery = height / Math.max(1, rows.length) >= 10 ? 1 : 2;
  return (
    <div className="heatmap" data-testid={testId} data-rows={rows.length} data-columns={columns.length}>
      <div className="heatmap-body" style={{ height }}>
        <div className="heatmap-rows" aria-hidden="true">
          {[...rows].reverse().map((label, i) => (
            <span key={label} style={{ height: height / rows.length }}>
              {(rows.length - 1 - i) % labelEvery === 0 ? label : ''}
            </span>
          ))}
        </div>
        <canvas
          ref={canvas}
          className="heatmap-canvas"
          style={{ height }}
          onMouseMove={onMove}
          onMouseLeave={() => setHover(null)}
        />
      </div>
      <div className="heatmap-ticks">
        {columnTicks(columns, 5).map(({ index, label }) => {
          // At the tick's column; the label's anchor slides from its left end (at the canvas's left edge) to its
          // right end (at the right edge), so a label near an edge stays inside the chart instead of being cut.
          const at = ((index + 0.5) / Math.max(1, columns.length)) * 100;
          return (
            <span key={index} style={{ left: `${at}%`, transform: `translateX(-${at}%)` }}>
              {label}
            </span>
          );
        })}
      </div>
      <div className="heatmap-hover hint small" data-testid={testId ? `${testId}-hover` : undefined}>
        {hover ? cellText(hover[0], hover[1]) : `${xLabel} →; hover a cell`}
      </div>
    </div>
  );
}
