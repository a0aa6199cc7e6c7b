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

/** The shared x grid of some series: bucket b covers [x0 + b w, x0 + (b + 1) w). */
export interface Grid {
  x0: number;
  width: number;
  buckets: number;
  /** The x each bucket is drawn at: the largest x any series has in it (its last step). */
  x: Float64Array;
}

/** A grid over the union of these x ranges with at most `maxPoints` buckets (width 1 when they fit). */
export function makeGrid(xs: readonly ArrayLike<number>[], maxPoints: number): Grid {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (!x.length) continue;
    lo = Math.min(lo, x[0]);
    hi = Math.max(hi, x[x.length - 1]);
  }
  if (!Number.isFinite(lo)) return { x0: 0, width: 1, buckets: 0, x: new Float64Array(0) };
  const span = hi - lo + 1;
  const width = Math.max(1, Math.ceil(span / Math.max(1, maxPoints)));
  const buckets = Math.ceil(span / width);
  const x = new Float64Array(buckets).fill(NaN);
  for (const xv of xs) {
    for (let i = 0; i < xv.length; i++) {
      const b = Math.floor((xv[i] - lo) / width);
      if (!(x[b] >= xv[i])) x[b] = xv[i];
    }
  }
  return { x0: lo, width, buckets, x };
}

/** One series (x increasing) onto a grid. */
export function decimate(grid: Grid, x: ArrayLike<number>, values: ArrayLike<number>): Decimated {
  const n = grid.buckets;
  const sum = new Float64Array(n);
  const cnt = new Float64Array(n);
  const min = new Float64Array(n).fill(NaN);
  const max = new Float64Array(n).fill(NaN);
  for (let i = 0; i < x.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    const b = Math.floor((x[i] - grid.x0) / grid.width);
    if (b < 0 || b >= n) continue;
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
