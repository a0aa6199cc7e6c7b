// Statistics across the seeds of a seed group, per step, for the charts: the median or the interquartile mean (IQM)
// of the seeds' values, and a 95% percentile-bootstrap band of that statistic over seeds. Pure functions over plain
// arrays; the resamples come from a fixed-seed RNG, so the same values always give the same band. Not the charts'
// smoothing and decimation (series.ts), which run on each seed's series before these.

import { Rng } from '../core/random';

/** The per-step statistic across seeds: the median, or the mean of the middle half (IQM, robust to one odd seed). */
export type SeedStatistic = 'median' | 'iqm';

/** Resamples of the seeds per step; fixed, so a band is reproducible. */
export const BOOTSTRAP_RESAMPLES = 500;

/** The band's coverage: the 2.5th and 97.5th percentiles of the resampled statistic. */
export const BAND_LEVEL = 0.95;

/** The seed of the resampling RNG (the plan for n seeds uses BOOTSTRAP_SEED + n). */
export const BOOTSTRAP_SEED = 0x5eed;

/**
 * The statistic as weights on the sorted values (both are L-statistics: sum_i w_i x_(i)). Median: the middle value,
 * or the mean of the two middle ones. IQM: each sorted value holds 1/n of the mass; the weight of a value is the
 * share of its mass inside the middle half [1/4, 3/4], so n = 3 gives (1/6, 2/3, 1/6), n = 2 the mean, n = 4 the
 * mean of the middle two.
 */
export function orderWeights(n: number, statistic: SeedStatistic): Float64Array {
  const w = new Float64Array(n);
  if (n === 0) return w;
  if (statistic === 'median') {
    if (n % 2) w[(n - 1) / 2] = 1;
    else w[n / 2 - 1] = w[n / 2] = 0.5;
    return w;
  }
  for (let i = 0; i < n; i++) {
    const overlap = Math.min((i + 1) / n, 0.75) - Math.max(i / n, 0.25);
    w[i] = Math.max(0, overlap) * 2;
  }
  return w;
}

/** The statistic of these values (NaN for none; non-finite values must be left out by the caller). */
export function seedStatistic(values: readonly number[], statistic: SeedStatistic): number {
  if (!values.length) return NaN;
  const sorted = Float64Array.from(values).sort();
  const w = orderWeights(sorted.length, statistic);
  let s = 0;
  for (let i = 0; i < sorted.length; i++) s += w[i] * sorted[i];
  return s;
}

/**
 * The bootstrap for n seeds, done once: each resample draws n ranks with replacement; sorted, its statistic is a
 * fixed weighting of the sample's sorted values. Identical weightings are merged with a count, so a band costs a few
 * dot products per step (10 distinct resamples for 3 seeds) instead of sorting every resample.
 */
interface BootstrapPlan {
  /** Distinct weightings of the sorted sample, n each, concatenated. */
  coef: Float64Array;
  /** How many of the resamples gave each weighting. */
  count: Uint32Array;
  resamples: number;
}

const plans = new Map<string, BootstrapPlan>();

function planFor(n: number, statistic: SeedStatistic, resamples: number): BootstrapPlan {
  const key = `${n}|${statistic}|${resamples}`;
  const known = plans.get(key);
  if (known) return known;
  const rng = new Rng(BOOTSTRAP_SEED + n);
  const w = orderWeights(n, statistic);
  const index = new Map<string, number>();
  const coefs: Float64Array[] = [];
  const counts: number[] = [];
  const ranks = new Uint32Array(n);
  for (let b = 0; b < resamples; b++) {
    for (let j = 0; j < n; j++) ranks[j] = rng.int(n);
    ranks.sort();
    const k = ranks.join(',');
    const at = index.get(k);
    if (at !== undefined) {
      counts[at]++;
      continue;
    }
    const c = new Float64Array(n);
    for (let j = 0; j < n; j++) c[ranks[j]] += w[j];
    index.set(k, coefs.length);
    coefs.push(c);
    counts.push(1);
  }
  const coef = new Float64Array(coefs.length * n);
  coefs.forEach((c, u) => coef.set(c, u * n));
  const plan = { coef, count: Uint32Array.from(counts), resamples };
  plans.set(key, plan);
  return plan;
}

/** One step across seeds: how many seeds have it, their statistic, and the band (NaN with fewer than 2 seeds). */
export interface SeedBand {
  seeds: number;
  stat: number;
  lo: number;
  hi: number;
}

/**
 * The statistic of these finite values and its percentile-bootstrap band: the resampled statistics' 2.5th and
 * 97.5th percentiles (BAND_LEVEL), widened to hold the statistic itself where skewed seeds put it outside. One
 * value has no band (a resample of one seed is that seed), so lo and hi are NaN then.
 */
export function bootstrapBand(
  values: readonly number[],
  statistic: SeedStatistic,
  resamples = BOOTSTRAP_RESAMPLES,
): SeedBand {
  const n = values.length;
  const sorted = Float64Array.from(values).sort();
  const stat = seedStatistic(values, statistic);
  if (n < 2) return { seeds: n, stat, lo: NaN, hi: NaN };
  const plan = planFor(n, statistic, resamples);
  // Each distinct weighting's statistic, repeated as often as it was drawn, sorted (a typed array sorts natively).
  const t = new Float64Array(plan.resamples);
  let filled = 0;
  for (let u = 0; u < plan.count.length; u++) {
    let v = 0;
    for (let i = 0; i < n; i++) v += plan.coef[u * n + i] * sorted[i];
    t.fill(v, filled, filled + plan.count[u]);
    filled += plan.count[u];
  }
  t.sort();
  // The k-th smallest and k-th largest resampled statistic.
  const k = Math.max(1, Math.ceil(((1 - BAND_LEVEL) / 2) * plan.resamples));
  return { seeds: n, stat, lo: Math.min(t[k - 1], stat), hi: Math.max(t[plan.resamples - k], stat) };
}

/** A statistic across seeds at each point of a shared grid. */
export interface SeedBandSeries {
  /** Seeds with a finite value at each point (a seed that has not reached a step yet, or never will, is left out). */
  seeds: Uint8Array;
  stat: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
}

/** Bands already computed, by statistic and sorted values: a live chart recomputes only the steps that changed. */
const bandCache = new Map<string, SeedBand>();
const BAND_CACHE_LIMIT = 50_000;

/**
 * Per point of a grid, the statistic across seeds and its band, from each seed's series on that grid (the same
 * length each, NaN where a seed has no value). Runs of different lengths: each point uses the seeds that have it
 * (`seeds` says how many); points no seed has are NaN.
 */
export function seedBands(series: readonly ArrayLike<number>[], statistic: SeedStatistic): SeedBandSeries {
  const length = series.reduce((m, s) => Math.max(m, s.length), 0);
  const out: SeedBandSeries = {
    seeds: new Uint8Array(length),
    stat: new Float64Array(length).fill(NaN),
    lo: new Float64Array(length).fill(NaN),
    hi: new Float64Array(length).fill(NaN),
  };
  const values: number[] = [];
  for (let p = 0; p < length; p++) {
    values.length = 0;
    for (const s of series) {
      const v = p < s.length ? s[p] : NaN;
      if (Number.isFinite(v)) values.push(v);
    }
    if (!values.length) continue;
    values.sort((a, b) => a - b);
    const key = `${statistic}|${values.join(',')}`;
    let band = bandCache.get(key);
    if (!band) {
      band = bootstrapBand(values, statistic);
      if (bandCache.size >= BAND_CACHE_LIMIT) bandCache.clear();
      bandCache.set(key, band);
    }
    out.seeds[p] = band.seeds;
    out.stat[p] = band.stat;
    out.lo[p] = band.lo;
    out.hi[p] = band.hi;
  }
  return out;
}
