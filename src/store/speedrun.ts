// The speedrun readout of a run on the page (src/schema/speedrun.ts) from its metric table: one point per rollout
// step from the rows that carry a reward, with that step's step_time. Shown in the status line of the run the line
// is about, once the run has a 100-step rolling mean or a finish line (speedrun_target).

import { SPEEDRUN_WINDOW, speedrunOf, speedrunText, type SpeedrunPoint } from '../schema/speedrun';
import type { LabState } from './index';
import type { MetricTable } from './metric-table';

/** The table's per-step points: its rows with a finite reward, with the step_time of the same row. */
export function speedrunPointsOfTable(table: MetricTable): SpeedrunPoint[] {
  const reward = table.column('reward');
  if (!reward) return [];
  const time = table.column('step_time');
  const steps = table.step;
  const points: SpeedrunPoint[] = [];
  for (let i = 0; i < reward.length; i++)
    if (Number.isFinite(reward[i])) points.push({ step: steps[i], reward: reward[i], seconds: time ? time[i] : NaN });
  return points;
}

/** The speedrun line of run `runId`, or null when it has neither a rolling mean yet nor a finish line. */
export function speedrunLineOf(s: Pick<LabState, 'views' | 'runs'>, runId: string | null): string | null {
  if (!runId) return null;
  const view = s.views[runId];
  const header = s.runs.find((h) => h.id === runId);
  if (!view || !header || header.mode === 'sft') return null;
  const target = header.config.speedrun_target ?? null;
  const readout = speedrunOf(speedrunPointsOfTable(view.table), target);
  if (target === null && readout.steps < SPEEDRUN_WINDOW) return null;
  return speedrunText(readout);
}
