// The CLI's speedrun line at the end of a run: the readout of src/schema/speedrun.ts over the run folder's whole
// metrics.jsonl (a resumed run's earlier steps included), one point per rollout step from its reward and step_time.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { speedrunOf, speedrunText, type SpeedrunPoint } from '../schema/speedrun';

/** The per-step points of a metrics.jsonl's text: the rows that carry a reward (one per rollout step). */
export function speedrunPointsOfJsonl(text: string): SpeedrunPoint[] {
  const points: SpeedrunPoint[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as Record<string, unknown>;
    if (typeof row.step === 'number' && typeof row.reward === 'number')
      points.push({
        step: row.step,
        reward: row.reward,
        seconds: typeof row.step_time === 'number' ? row.step_time : Number.NaN,
      });
  }
  return points;
}

/** The speedrun line of the run in `folder` (its metrics.jsonl) for a target (null: none). */
export function speedrunLineOfFolder(folder: string, target: number | null): string {
  const text = readFileSync(join(folder, 'metrics.jsonl'), 'utf8');
  return speedrunText(speedrunOf(speedrunPointsOfJsonl(text), target));
}
