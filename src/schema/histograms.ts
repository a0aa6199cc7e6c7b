// The distributions a rollout step records beside its scalar metrics (StepRecord.histograms): each histogram's
// fixed bin edges, declared once here so the trainer that fills them, the heatmaps that draw them and the exports
// that carry them agree, and the one counting rule. A leaf module (no imports). Not the heatmap (src/ui/Heatmap.tsx)
// and not the scalar metric catalog (metrics.ts).

/** One histogram of a rollout step: what it counts and its bin edges. */
export interface HistogramSpec {
  /** What one count is ("loss tokens"). */
  counts: string;
  /** The unit of the binned value. */
  unit: string;
  /** What it shows, one sentence (a heatmap's hover text). */
  doc: string;
  /**
   * Increasing bin edges e_0 < ... < e_K: K bins, bin k = [e_k, e_{k+1}). The end bins are open: values below e_0
   * count in the first, values at or above e_K in the last (e_0 and e_K only bound the drawing).
   */
  edges: readonly number[];
}

export const HISTOGRAMS = {
  entropy: {
    counts: 'loss tokens',
    unit: 'nats',
    doc: "Per-token entropy H of the sampling distribution (softmax(logits / tau), the rollout's pi_old) over the step's loss tokens: the whole distribution behind the mean entropy. Collapse shows as mass piling into the lowest bins; the few high-entropy 'forking' tokens sit in the upper rows.",
    // Finer near 0, where a confident policy puts most tokens; ln 99 = 4.6 is the uniform distribution over this lab's vocabulary.
    edges: [0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 4, 5],
  },
  advantage: {
    counts: 'loss tokens',
    unit: 'advantage',
    doc: "Advantage A of the step's loss tokens: how the batch's learning signal is spread. The middle bin [-0.05, 0.05) holds the zero advantages of groups with all-equal rewards; GRPO's group-normalized advantages reach about +-(G - 1) / sqrt(G).",
    edges: [-3, -2.5, -2, -1.5, -1, -0.75, -0.5, -0.25, -0.05, 0.05, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3],
  },
} as const satisfies Record<string, HistogramSpec>;

export type HistogramId = keyof typeof HISTOGRAMS;

export const HISTOGRAM_IDS = Object.keys(HISTOGRAMS) as HistogramId[];

/** A rollout step's histograms: counts per bin (length = edges - 1), by histogram id; absent when not recorded. */
export type StepHistograms = { [K in HistogramId]?: number[] };

/** The bin of `value` under `edges` (see HistogramSpec.edges: the end bins are open). NaN has no bin: -1. */
export function binOf(edges: readonly number[], value: number): number {
  if (Number.isNaN(value)) return -1;
  const last = edges.length - 2;
  // Binary search for the last edge <= value, clamped to the end bins.
  let lo = 0;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (edges[mid] <= value) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Counts per bin of the values whose `include` is nonzero (all values without it); NaN values are not counted.
 * The result has edges.length - 1 entries, all 0 for no values.
 */
export function histogramCounts(
  edges: readonly number[],
  values: ArrayLike<number>,
  include?: ArrayLike<number>,
): number[] {
  if (edges.length < 2) throw new Error(`a histogram needs at least 2 edges, got ${edges.length}`);
  const counts = new Array<number>(edges.length - 1).fill(0);
  for (let i = 0; i < values.length; i++) {
    if (include && !include[i]) continue;
    const b = binOf(edges, values[i]);
    if (b >= 0) counts[b]++;
  }
  return counts;
}

/** A bin's label for axes and tooltips: "[0.1, 0.2)", the open end bins as "< 0.01"-style bounds ("≥ 4"). */
export function binLabel(edges: readonly number[], bin: number): string {
  const K = edges.length - 1;
  if (bin === K - 1) return `≥ ${edges[K - 1]}`;
  if (bin === 0 && edges[0] < 0) return `< ${edges[1]}`;
  return `[${edges[bin]}, ${edges[bin + 1]})`;
}
