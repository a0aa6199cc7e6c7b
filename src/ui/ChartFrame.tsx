// The frame every chart of the metrics grid shares (the metric charts in Charts.tsx, the distributions in
// Distributions.tsx, pass@k in PassAtKChart.tsx): the figure with its class, test id and data attributes; a caption
// line with the title, its hover text and what follows it; the plot drawn through the render queue only near the
// viewport, with a placeholder of its height until then; a legend of coloured glyphs; and the styling the recharts
// plots share (grid, ticks, tooltip). What a chart plots and its data attributes stay with the chart.
import type { ComponentPropsWithoutRef, ReactNode, RefObject } from 'react';
import { useRef } from 'react';
import { useNearViewport, useStaggered } from './render-queue';

/** A recharts plot's box: the figure's full width, `height` CSS pixels tall, following the figure's size. */
export function plotBox(height: number): { responsive: true; style: { width: string; height: number } } {
  return { responsive: true, style: { width: '100%', height } };
}

/** The styling every recharts plot shares: its grid, tick labels, axis names and hover tooltip. */
export const PLOT_STYLE = {
  /** Dashed, in the border colour. */
  grid: { strokeDasharray: '3 3', stroke: 'var(--border)' },
  tick: { fontSize: 11 },
  axisLabel: { fontSize: 11, fill: 'var(--muted)' },
  /** Small text, no animation. */
  tooltip: { contentStyle: { fontSize: 12 }, isAnimationActive: false },
} as const;

/**
 * A chart's plot, deferred: `value` is drawn through the render queue (one chart per task, at most every
 * `minIntervalMs`) and only while the figure holding `ref` is near the viewport. `drawn` is the value last drawn,
 * undefined until the first draw.
 */
export function useDeferredPlot<T>(
  key: string,
  value: T,
  minIntervalMs = 0,
): { ref: RefObject<HTMLElement | null>; drawn: T | undefined } {
  const ref = useRef<HTMLElement>(null);
  const near = useNearViewport(ref);
  const drawn = useStaggered(key, value, near, minIntervalMs);
  return { ref, drawn };
}

export interface ChartFrameProps extends Omit<ComponentPropsWithoutRef<'figure'>, 'title'> {
  /** The figure's ref (useDeferredPlot's), which tells the render queue whether it is near the viewport. */
  frameRef: RefObject<HTMLElement | null>;
  /**
   * The title in the caption line, and its hover text (what the chart shows and how it is computed). Without one,
   * the figure is bare (no caption): a chart with nothing to show yet, rendered hidden by the same component so
   * its element, the one the viewport observer watches, stays when the chart fills in.
   */
  title?: ReactNode;
  help?: string;
  /** What follows the title in the caption line: a hint, toggles, links. */
  caption?: ReactNode;
}

/** A chart's figure: class "chart" (or `className`), the caption line, then `children` (the plot, a legend, notes). */
export function ChartFrame({
  frameRef,
  title,
  help,
  caption,
  className = 'chart',
  children,
  ...figure
}: ChartFrameProps) {
  return (
    <figure ref={frameRef} className={className} {...figure}>
      {title !== undefined && (
        <figcaption>
          <span className="chart-title" title={help}>
            {title}
          </span>
          {caption}
        </figcaption>
      )}
      {children}
    </figure>
  );
}

/** The plot of `drawn` once there is one to draw, else a placeholder that holds the plot's height. */
export function PlotOrPlaceholder<T>({
  drawn,
  children,
}: {
  drawn: T | undefined | null | false;
  children: (drawn: T) => ReactNode;
}) {
  return drawn ? children(drawn) : <div className="plot-placeholder" />;
}

/** One series in a chart's legend: a glyph for its stroke and its name, in its colour where it has one. */
export interface LegendEntry {
  key: string | number;
  glyph: string;
  label: string;
  color?: string;
  title?: string;
}

/**
 * A chart's legend row (light HTML, cheaper than recharts' own); `children` go before the entries. The glyph and
 * its space are one text node: split apart, a glyph from a fallback font shifts the name after it by a pixel.
 */
export function ChartLegend({ entries, children }: { entries: readonly LegendEntry[]; children?: ReactNode }) {
  return (
    <div className="chart-legend">
      {children}
      {entries.map((e) => (
        <span key={e.key} style={e.color === undefined ? undefined : { color: e.color }} title={e.title}>
          {`${e.glyph} `}
          {e.label}
        </span>
      ))}
    </div>
  );
}
