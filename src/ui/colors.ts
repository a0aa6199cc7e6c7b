// The charts' colours: one per metric on a chart, one per run in an overlay (with a dash per metric so the
// metrics of one run stay apart), shared by the metric charts, the pass@k chart and the runs panel's diff table.

export const METRIC_COLORS = ['#3b5bdb', '#e8590c', '#2b8a3e', '#ae3ec9', '#c92a2a', '#1098ad', '#5c940d', '#862e9c'];
export const RUN_COLORS = ['#3b5bdb', '#e8590c', '#2b8a3e', '#ae3ec9', '#c92a2a', '#1098ad'];
const DASHES = ['', '6 3', '2 3', '10 3 2 3'];

export const metricColor = (metricIndex: number) => METRIC_COLORS[metricIndex % METRIC_COLORS.length];
export const runColor = (runIndex: number) => RUN_COLORS[runIndex % RUN_COLORS.length];

/** A series' stroke: alone, each metric its colour; overlaid, each run its colour and each metric its dash. */
export function seriesStroke(
  overlay: boolean,
  runIndex: number,
  metricIndex: number,
): { color: string; dash: string | undefined } {
  return overlay
    ? { color: runColor(runIndex), dash: DASHES[metricIndex % DASHES.length] || undefined }
    : { color: metricColor(metricIndex), dash: undefined };
}
