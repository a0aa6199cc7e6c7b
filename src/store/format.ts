// Every number and label format of the page in one place: metric values (four significant digits), axis ticks,
// clock times, byte sizes, benchmark timings, and the adapter's one-line description. Pure functions; the
// panels import them from here (the adapter's description is schema/adapter-text.ts's, passed through).

export { describeAdapter } from '../schema/adapter-text';
export { formatBytes } from '../core/format';

/** Four significant digits, without trailing noise. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(3);
  return String(Number(x.toPrecision(4)));
}

/** Axis labels: short enough for a narrow axis (3e-4, 0.25, 1.2k). */
export function fmtTick(v: number): string {
  if (!Number.isFinite(v)) return '';
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a < 1e-3) return v.toExponential(0);
  if (a >= 1e4) return `${Number((v / 1000).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

/** A measurement in a benchmark table: whole numbers from 1000, one decimal from 100, else `digits` (empty when missing). */
export function fmtMeasure(x: number | undefined, digits = 2): string {
  if (x === undefined || !Number.isFinite(x)) return '';
  const a = Math.abs(x);
  if (a >= 1000) return x.toFixed(0);
  if (a >= 100) return x.toFixed(1);
  if (a >= 1 || a === 0) return x.toFixed(digits);
  return x.toPrecision(digits + 1);
}

/** 75 s -> "1:15", 3725 s -> "1:02:05"; "—" when unknown. */
export function clock(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** Seconds per step and tokens per second of the status line: "1.25 s/step · 42.5 tokens/s". */
export function throughput(meanStepMs: number, tokensPerSec: number): string {
  return `${(meanStepMs / 1000).toFixed(meanStepMs < 10_000 ? 2 : 1)} s/step · ${tokensPerSec.toFixed(tokensPerSec < 100 ? 1 : 0)} tokens/s`;
}
