// The ticks and ranges of the metric charts' axes, chosen here rather than by the chart library: round steps
// (1, 2 or 5 times a power of ten), log axes on whole decades (or on 1-2-5 values when the data span less than
// about a decade), a value axis held inside the metric's catalog range (a reward in [0, 1] stays on a [0, 1] axis
// when only its mean ± std band strays outside), and the room a tick label needs so none is cut at the chart's
// edge. Pure numbers in, numbers out; the labels are format.ts's fmtTick. No React.

import { fmtTick } from './format';

/** An axis: the range it shows and the values it labels (inside that range, increasing). */
export interface Axis {
  domain: [number, number];
  ticks: number[];
}

/** The lowest and highest finite value of something drawn. */
export interface Extent {
  lo: number;
  hi: number;
}

/** The mantissas of round steps and log ticks. */
const MANTISSAS = [1, 2, 5] as const;

/** Drops float noise from k * step (0.1 * 3 = 0.30000000000000004 -> 0.3). */
function clean(v: number): number {
  return v === 0 ? 0 : Number(v.toPrecision(12));
}

/** Tolerance for "a multiple of step lies on lo": a tick at the domain's very edge counts as inside. */
const EDGE = 1e-9;

/** The multiples of `step` within [lo, hi], edges included. */
export function multiplesIn(lo: number, hi: number, step: number): number[] {
  const first = Math.ceil(lo / step - EDGE);
  const last = Math.floor(hi / step + EDGE);
  const out: number[] = [];
  for (let k = first; k <= last; k++) out.push(clean(k * step));
  return out;
}

/** Round steps from small to large, starting about a decade below `from`. */
function* roundSteps(from: number): Generator<number> {
  let e = Math.floor(Math.log10(from)) - 1;
  for (;;) {
    for (const m of MANTISSAS) yield clean(m * 10 ** e);
    e++;
  }
}

/**
 * The smallest round step (1, 2 or 5 times a power of ten, and at least `minStep`) whose multiples count at most
 * `maxTicks`: inside [lo, hi] ('inside'), or from the one at or below lo to the one at or above hi ('enclose').
 */
export function niceStep(lo: number, hi: number, maxTicks: number, mode: 'inside' | 'enclose', minStep = 0): number {
  const span = hi - lo;
  const start = Math.max(span > 0 ? span / Math.max(1, maxTicks) : Math.abs(hi) || 1, minStep, Number.MIN_VALUE);
  for (const step of roundSteps(start)) {
    if (step < minStep) continue;
    const count =
      mode === 'inside'
        ? Math.floor(hi / step + EDGE) - Math.ceil(lo / step - EDGE) + 1
        : Math.ceil(hi / step - EDGE) - Math.floor(lo / step + EDGE) + 1;
    if (count <= maxTicks) return step;
  }
  throw new Error('unreachable: a large enough step has one tick');
}

/** A span this small beside the values' size is float noise (smoothing 3 gives 2.9999999999999996), not a move. */
function isFlat(lo: number, hi: number): boolean {
  return hi - lo <= 1e-9 * Math.max(1e-12, Math.abs((lo + hi) / 2));
}

/**
 * A linear value axis over [lo, hi]: the domain runs from the round tick at or below lo to the one at or above hi,
 * at most `maxTicks` ticks. Values that are (nearly) constant get +-10% around them (+-1 around 0), so a flat
 * line is drawn flat in the middle rather than float noise stretched over the whole height.
 */
export function linearAxis(lo: number, hi: number, maxTicks: number): Axis {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return linearAxis(0, 1, maxTicks);
  if (isFlat(lo, hi)) {
    const mid = (lo + hi) / 2;
    const pad = mid === 0 ? 1 : Math.abs(mid) * 0.1;
    return linearAxis(mid - pad, mid + pad, maxTicks);
  }
  const step = niceStep(lo, hi, maxTicks, 'enclose');
  const domain: [number, number] = [
    clean(Math.floor(lo / step + EDGE) * step),
    clean(Math.ceil(hi / step - EDGE) * step),
  ];
  return { domain, ticks: multiplesIn(domain[0], domain[1], step) };
}

/**
 * The x axis of rollout steps: exactly the steps drawn (no empty margin), ticks at round whole steps inside them.
 * One step alone is shown between its neighbours.
 */
export function stepAxis(lo: number, hi: number, maxTicks: number): Axis {
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) return stepAxis(0, 1, maxTicks);
  if (hi - lo < 1) {
    const mid = Math.round((lo + hi) / 2);
    return stepAxis(Math.min(lo, mid - 1), Math.max(hi, mid + 1), maxTicks);
  }
  const step = niceStep(lo, hi, maxTicks, 'inside', 1);
  return { domain: [lo, hi], ticks: multiplesIn(lo, hi, step) };
}

/** The 1-2-5 values (1, 2, 5, 10, 20, ...) from the one at or below lo to the one at or above hi (0 < lo <= hi). */
function roundValuesAround(lo: number, hi: number): number[] {
  const values: number[] = [];
  for (let e = Math.floor(Math.log10(lo)) - 1; !(values[values.length - 1] >= hi * (1 - EDGE)); e++)
    for (const m of MANTISSAS) values.push(clean(m * 10 ** e));
  let first = 0;
  while (values[first + 1] <= lo * (1 + EDGE)) first++;
  let last = values.length - 1;
  while (values[last - 1] >= hi * (1 - EDGE)) last--;
  return values.slice(first, last + 1);
}

/**
 * A log axis over the positive [lo, hi]: when the 1-2-5 values around the data are at most `maxTicks`, those
 * (500, 1000, 2000 for throughputs of 800 to 1,200); else whole decades, every second or third one when they are
 * too many, so labels never crowd. Ticks on a log axis are spaced by ratio, so a 1-2-5 step is at least log10(2)
 * of the span apart and a decade step a whole one.
 */
export function logAxis(lo: number, hi: number, maxTicks: number): Axis {
  if (!(lo > 0 && Number.isFinite(lo) && Number.isFinite(hi) && hi >= lo)) return { domain: [1, 10], ticks: [1, 10] };
  if (isFlat(lo, hi)) return logAxis(lo / 1.5, hi * 1.5, maxTicks);
  const round = roundValuesAround(lo, hi);
  if (round.length <= maxTicks) return { domain: [round[0], round[round.length - 1]], ticks: round };
  const eLo = Math.floor(Math.log10(lo) + EDGE);
  const eHi = Math.ceil(Math.log10(hi) - EDGE);
  // Every `every`-th decade, at exponents that are multiples of it, the domain widened to the outer ones.
  let every = 1;
  while (Math.ceil(eHi / every) - Math.floor(eLo / every) + 1 > maxTicks) every++;
  const first = Math.floor(eLo / every) * every;
  const last = Math.ceil(eHi / every) * every;
  const ticks: number[] = [];
  for (let e = first; e <= last; e += every) ticks.push(clean(10 ** e));
  return { domain: [ticks[0], ticks[ticks.length - 1]], ticks };
}

/** The smallest extent holding all of these (null when none has a value). */
export function unionExtent(...extents: (Extent | null)[]): Extent | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const e of extents) {
    if (!e) continue;
    lo = Math.min(lo, e.lo);
    hi = Math.max(hi, e.hi);
  }
  return lo <= hi ? { lo, hi } : null;
}

/** The range of values a chart's metrics can take (the catalog's); either end may be infinite (unbounded). */
export type ValueRange = readonly [number, number];

/**
 * A chart's value axis. `lines` are the metrics' own values, `bands` what is drawn around them (mean ± std, a
 * bootstrap band). The axis fits both, then is held inside `range` on each side the lines stay within: a band of
 * reward ± reward_std reaching -0.55 for a reward in [0, 1] does not stretch the axis below 0, while a reward that
 * really goes negative (overlong shaping) is shown. On a log axis only positive values count. `stacked`: parts of
 * one whole, always [0, 1].
 */
export function valueAxis(o: {
  lines: Extent | null;
  bands?: Extent | null;
  range?: ValueRange;
  log: boolean;
  stacked?: boolean;
  maxTicks: number;
}): Axis & { clamped: boolean } {
  if (o.stacked) return { ...linearAxis(0, 1, o.maxTicks), clamped: true };
  const all = unionExtent(o.lines, o.bands ?? null);
  if (!all) return { ...(o.log ? logAxis(1, 10, o.maxTicks) : linearAxis(0, 1, o.maxTicks)), clamped: false };
  const [rangeLo, rangeHi] = o.range ?? [-Infinity, Infinity];
  const holdLo = !o.lines || o.lines.lo >= rangeLo;
  const holdHi = !o.lines || o.lines.hi <= rangeHi;
  let lo = holdLo ? Math.max(all.lo, rangeLo) : all.lo;
  let hi = holdHi ? Math.min(all.hi, rangeHi) : all.hi;
  if (lo > hi) [lo, hi] = [hi, lo];
  const axis = o.log ? logAxis(lo, hi, o.maxTicks) : linearAxis(lo, hi, o.maxTicks);
  // The round domain may pass the range (a flat 0 fraction: [-1, 1]); cut it there, unless that leaves no span.
  const dLo = holdLo && rangeLo > axis.domain[0] && rangeLo < axis.domain[1] ? rangeLo : axis.domain[0];
  const dHi = holdHi && rangeHi < axis.domain[1] && rangeHi > dLo ? rangeHi : axis.domain[1];
  const ticks = axis.ticks.filter((t) => t >= dLo - EDGE * Math.abs(dLo) && t <= dHi + EDGE * Math.abs(dHi));
  return { domain: [dLo, dHi], ticks, clamped: dLo > all.lo || dHi < all.hi };
}

/** Average width of a digit of the 11 px axis font, in pixels (a little wide, so estimates err toward room). */
const DIGIT_PX = 7;

/** How far a label centred on the chart's last x tick reaches past it, in pixels: the right margin it needs. */
export function tickLabelOverhang(tick: number | undefined): number {
  return tick === undefined ? 0 : Math.ceil((fmtTick(tick).length * DIGIT_PX) / 2);
}

/** The y axis width that fits its widest tick label, the tick mark and the rotated axis title beside them. */
export function valueAxisWidth(ticks: readonly number[]): number {
  const widest = Math.max(1, ...ticks.map((t) => fmtTick(t).length));
  const TITLE_PX = 18;
  const TICK_MARK_PX = 10;
  return TITLE_PX + TICK_MARK_PX + widest * DIGIT_PX;
}

/**
 * The labelled columns of a heatmap whose columns are increasing steps (each the last step of its column): for
 * each round step (stepAxis's) the column holding it, labelled with that step, so a heatmap of 150 steps reads
 * 20, 40, ... 140 rather than 1, 38, 75, 113, 150.
 */
export function columnTicks(columns: readonly number[], maxTicks: number): { index: number; label: number }[] {
  if (columns.length === 0) return [];
  if (columns.length === 1) return [{ index: 0, label: columns[0] }];
  const out: { index: number; label: number }[] = [];
  let c = 0;
  for (const step of stepAxis(columns[0], columns[columns.length - 1], maxTicks).ticks) {
    while (c < columns.length - 1 && columns[c] < step) c++;
    if (out[out.length - 1]?.index !== c) out.push({ index: c, label: step });
  }
  return out;
}
