// Alerts: warning signs in a run's metrics (entropy collapse, ratio explosion, every group zero-signal, lengths
// pinned at the cap, reward stuck), read from the `alert` entries of the metric catalog (src/schema/metrics.ts),
// which hold each threshold, direction, duration, likely cause, knob and lesson. Pure functions over the metric
// rows of consecutive rollout steps; the lab engine and the CLI call watchStep once per rollout step. Not the
// divergence check (divergence.ts), which stops a run rather than warning.

import { METRICS, type MetricSpec } from '../../schema/metrics';
import type { StepRecord } from '../../schema/stream';
import type { Alert, AlertRule } from '../../schema/run-types';

export type { Alert, AlertRule } from '../../schema/run-types';

/** Every alert of the metric catalog, in catalog order. */
export const ALERT_RULES: readonly AlertRule[] = (METRICS as readonly MetricSpec[]).flatMap((m) =>
  m.alert ? [{ metric: m.name, ...m.alert }] : [],
);

/** A rollout step as the alerts see it: each finite metric's lowest and highest value over its optimizer steps. */
export interface StepExtremes {
  step: number;
  low: Record<string, number>;
  high: Record<string, number>;
}

/** The extremes of one rollout step's records (all of the same step). NaN and Inf are left out (divergence.ts owns them). */
export function stepExtremes(records: readonly Pick<StepRecord, 'step' | 'metrics'>[]): StepExtremes {
  const out: StepExtremes = { step: records[0]?.step ?? 0, low: {}, high: {} };
  for (const r of records) {
    for (const [k, v] of Object.entries(r.metrics)) {
      if (!Number.isFinite(v)) continue;
      out.low[k] = Math.min(out.low[k] ?? Infinity, v);
      out.high[k] = Math.max(out.high[k] ?? -Infinity, v);
    }
  }
  return out;
}

/** The value a step counts with under a rule: its worst one (the highest for 'high', the lowest for 'low'). */
function extremeOf(s: StepExtremes, rule: AlertRule): number | undefined {
  return rule.direction === 'low' ? s.low[rule.metric] : s.high[rule.metric];
}

/** Whether the rule's condition holds on the `rule.steps` steps of history ending at index `end`. */
function holdsEnding(history: readonly StepExtremes[], end: number, rule: AlertRule): boolean {
  const start = end - rule.steps + 1;
  if (start < 0) return false;
  const values: number[] = [];
  for (let i = start; i <= end; i++) {
    const v = extremeOf(history[i], rule);
    if (v === undefined) return false;
    values.push(v);
  }
  if (rule.direction === 'flat') return Math.max(...values) - Math.min(...values) <= rule.threshold;
  return values.every((v) => (rule.direction === 'high' ? v >= rule.threshold : v <= rule.threshold));
}

const short = (v: number) => String(Number(v.toPrecision(3)));

function alertMessage(rule: AlertRule, step: number, value: number): string {
  const what =
    rule.direction === 'flat'
      ? `${rule.metric} stayed at ${short(value)} for ${rule.steps} steps (moved by at most ${rule.threshold})`
      : `${rule.metric} = ${short(value)}, ${rule.direction === 'high' ? 'at or above' : 'at or below'} ${rule.threshold} for ${rule.steps} step${rule.steps === 1 ? '' : 's'}`;
  const lesson = rule.lesson ? ` Lesson: ${rule.lesson}.` : '';
  return `Alert at step ${step}, ${rule.title}: ${what}. ${rule.cause} What usually helps: ${rule.knob}${lesson}`;
}

/**
 * The alerts that fire at the last step of `history` (consecutive rollout steps, oldest first): a condition fires
 * on the step where it has held for exactly its `steps` steps, so it fires once and again only after it cleared.
 */
export function alertsAt(history: readonly StepExtremes[], rules: readonly AlertRule[] = ALERT_RULES): Alert[] {
  const end = history.length - 1;
  if (end < 0) return [];
  const out: Alert[] = [];
  for (const rule of rules) {
    if (!holdsEnding(history, end, rule) || holdsEnding(history, end - 1, rule)) continue;
    const last = history[end];
    const value = extremeOf(last, rule)!;
    out.push({ ...rule, step: last.step, value, message: alertMessage(rule, last.step, value) });
  }
  return out;
}

/**
 * One rollout step watched: the history with this step's extremes (started afresh when the step does not follow
 * the last one, as after a resume or a rewind; trimmed to what the rules need) and the alerts that fire at it.
 */
export function watchStep(
  history: readonly StepExtremes[],
  records: readonly Pick<StepRecord, 'step' | 'metrics'>[],
  rules: readonly AlertRule[] = ALERT_RULES,
): { history: StepExtremes[]; alerts: Alert[] } {
  if (!records.length) return { history: [...history], alerts: [] };
  const now = stepExtremes(records);
  const prev = history[history.length - 1];
  // The longest duration, and one step before it (to tell a new streak from an old one).
  const keep = Math.max(1, ...rules.map((r) => r.steps)) + 1;
  const next = [...(prev && prev.step === now.step - 1 ? history : []), now].slice(-keep);
  return { history: next, alerts: alertsAt(next, rules) };
}
