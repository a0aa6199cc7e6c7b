// Turning metric columns into what a chart draws: TensorBoard's debiased exponential smoothing, and decimation
// onto a shared grid of at most a few hundred buckets (mean, min and max per bucket, so spikes stay visible), so
// a 10,000-step run, or several overlaid, draws as fast as a short one. Pure functions over typed arrays.

/**
 * Exponential moving average with TensorBoard's debiasing: s_t = w s_{t-1} + (1 - w) x_t, divided by
 * 1 - w^k (k = finite values seen). NaN inputs stay NaN and do not move the average. w = 0: the raw values.
 */
export function smooth(values: ArrayLike<number>, weight: number): Float64Array {
  const out = new Float64Array(values.length);
  if (!(weight > 0)) {
    for (let i = 0; i < values.length; i++) out[i] = values[i];
    return out;
  }
  const w = Math.min(weight, 0.999);
  let acc = 0;
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) {
      out[i] = v;
      continue;
    }
    acc = w * acc + (1 - w) * v;
    k++;
    out[i] = acc / (1 - w ** k);
  }
  return out;
}

/** A series on the shared grid: per bucket the mean of its finite values, and their min and max (NaN if none). */
export interface Decimated {
  mean: Float64Array;
  min: Float64Array;
  max: Float64Array;
}

/**
 * The shared x grid of some series: bucket b covers [start[b], start[b + 1]) (the last one reaches to the end).
 * x is in rollout steps and may be fractional (optimizer steps are sub-ticks), so buckets are not assumed to be
 * whole numbers.
 */
export interface Grid {
  buckets: number;
  /** Where each bucket starts, increasing. */
  start: Float64Array;
  /** The x each bucket is drawn at: the largest x any series has in it. */
  x: Float64Array;
}

/** The distinct values of these series, sorted, or null when there are more than `limit`. */
function distinctUpTo(xs: readonly ArrayLike<number>[], limit: number): Float64Array | null {
  const seen = new Set<number>();
  for (const x of xs) {
    for (let i = 0; i < x.length; i++) {
      seen.add(x[i]);
      if (seen.size > limit) return null;
    }
  }
  return Float64Array.from(seen).sort();
}

/** The smallest positive gap between neighbouring values of any one series (1 when there is none). */
function finestSpacing(xs: readonly ArrayLike<number>[]): number {
  let r = Infinity;
  for (const x of xs) {
    for (let i = 1; i < x.length; i++) {
      const d = Math.abs(x[i] - x[i - 1]);
      if (d > 0 && d < r) r = d;
    }
  }
  return Number.isFinite(r) ? r : 1;
}

/**
 * A grid over the union of these x ranges with at most `maxPoints` buckets: one bucket per distinct x when they
 * fit (nothing is averaged), else equal buckets whose width is a whole multiple of the series' finest spacing (so
 * each bucket holds the same number of points and a periodic series does not alias).
 */
export function makeGrid(xs: readonly ArrayLike<number>[], maxPoints: number): Grid {
  const limit = Math.max(1, maxPoints);
  const exact = distinctUpTo(xs, limit);
  if (exact) return { buckets: exact.length, start: exact, x: exact.slice() };
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs)
    for (let i = 0; i < x.length; i++) {
      if (x[i] < lo) lo = x[i];
      if (x[i] > hi) hi = x[i];
    }
  const r = finestSpacing(xs);
  const width = r * Math.ceil((hi - lo + r) / (r * limit));
  const buckets = Math.min(limit, Math.ceil((hi - lo + r) / width));
  const start = Float64Array.from({ length: buckets }, (_, b) => lo + b * width);
  const grid = { buckets, start, x: new Float64Array(buckets).fill(NaN) };
  for (const xv of xs) {
    for (let i = 0; i < xv.length; i++) {
      const b = bucketOf(grid, xv[i]);
      if (!(grid.x[b] >= xv[i])) grid.x[b] = xv[i];
    }
  }
  return grid;
}

/** The bucket holding x: the last one starting at or before it (-1 before the first). */
export function bucketOf(grid: Grid, x: number): number {
  let lo = 0;
  let hi = grid.buckets - 1;
  if (!(x >= grid.start[0])) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (grid.start[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** One series onto a grid (any order of x). */
export function decimate(grid: Grid, x: ArrayLike<number>, values: ArrayLike<number>): Decimated {
  const n = grid.buckets;
  const sum = new Float64Array(n);
  const cnt = new Float64Array(n);
  const min = new Float64Array(n).fill(NaN);
  const max = new Float64Array(n).fill(NaN);
  for (let i = 0; i < x.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    const b = bucketOf(grid, x[i]);
    if (b < 0) continue;
    sum[b] += v;
    cnt[b]++;
    if (!(min[b] <= v)) min[b] = v;
    if (!(max[b] >= v)) max[b] = v;
  }
  const mean = new Float64Array(n);
  for (let b = 0; b < n; b++) mean[b] = cnt[b] ? sum[b] / cnt[b] : NaN;
  return { mean, min, max };
}

/** For a log-scale axis: values that are not > 0 become NaN (not drawn) instead of breaking the scale. */
export function positiveOnly(a: Float64Array): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] > 0 ? a[i] : NaN;
  return out;
}
