// The page's speedrun line from a run's metric table: hidden before a 100-step mean unless a finish line is set, the
// step and seconds once the rolling reward reaches it, nothing for a supervised run.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../schema/config';
import { packRows } from '../schema/metric-batch';
import type { RunHeader } from '../schema/run-types';
import { MetricTable } from './metric-table';
import { speedrunLineOf } from './speedrun';

function state(steps: number, target: number | null, mode?: 'sft') {
  const table = new MetricTable();
  table.append(
    packRows(
      Array.from({ length: steps }, (_, i) => ({
        step: i + 1,
        optimizerStep: i + 1,
        epoch: 0,
        minibatch: 0,
        metrics: { reward: (i + 1) / 200, step_time: 0.5 },
      })),
    ),
  );
  const header = { id: 'r', config: { ...DEFAULT_CONFIG, speedrun_target: target }, ...(mode && { mode }) };
  return { views: { r: { table, version: 1, evals: [], rolloutSteps: [] } }, runs: [header as unknown as RunHeader] };
}

describe('speedrunLineOf', () => {
  it('says nothing before a 100-step mean without a finish line, and counts the steps with one', () => {
    expect(speedrunLineOf(state(50, null), 'r')).toBeNull();
    expect(speedrunLineOf(state(50, 0.5), 'r')).toBe('speedrun: no 100-step rolling reward yet (50 of 100 steps)');
  });

  it('gives the step and the training seconds at which the rolling reward reached the target', () => {
    expect(speedrunLineOf(state(200, 0.5), 'r')).toBe(
      'speedrun: the 100-step rolling reward reached 0.5 at step 150, after 75.0 s of training (best 0.752 at step 200)',
    );
    expect(speedrunLineOf(state(200, 0.5, 'sft'), 'r')).toBeNull();
    expect(speedrunLineOf(state(200, 0.5), null)).toBeNull();
  });
});
