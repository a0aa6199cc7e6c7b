// The alerts slice: the warning signs the engine found in each run's metrics (src/rl/observation/alerts.ts), kept per run so
// the charts mark the step where each fired; each is also shown as a notice. Not the detection (the engine's).

import type { Alert } from '../../rl/observation/alerts';
import type { LabSlice } from '../slice';

export interface AlertsState {
  /** Alerts by run id, in the order they fired. */
  alerts: Record<string, Alert[]>;
}

export interface AlertsActions {
  /** An alert of a run: kept for its chart, and shown as a warning. */
  addAlert(runId: string, alert: Alert): void;
  /** Drops a run's alerts after `step` (its records after it were dropped: a rewind, a resume). */
  forgetAlertsAfter(runId: string, step: number): void;
}

export type AlertsSlice = AlertsState & AlertsActions;

/** The alerts of a chart: those on one of its metrics. */
export function alertsOn(alerts: readonly Alert[] | undefined, metrics: readonly string[]): Alert[] {
  return (alerts ?? []).filter((a) => metrics.includes(a.metric));
}

export const alertsSlice: LabSlice<AlertsSlice> = () => (set, get) => ({
  alerts: {},

  addAlert(runId, alert) {
    const all = get().alerts;
    set({ alerts: { ...all, [runId]: [...(all[runId] ?? []), alert] } });
    get().addNotice('warning', alert.message);
  },

  forgetAlertsAfter(runId, step) {
    const all = get().alerts;
    const kept = (all[runId] ?? []).filter((a) => a.step <= step);
    if (kept.length !== (all[runId] ?? []).length) set({ alerts: { ...all, [runId]: kept } });
  },
});
