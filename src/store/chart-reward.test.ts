// The runs list's reward is the charts' smoothed reward at the run's last point (issue 39, finding 5), not the raw
// last step; undefined until the page holds the run's records.
import { describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import { MetricTable } from './metric-table';
import { chartReward } from './selectors';
import { smooth } from './series';
import type { RunView } from './slices/charts';

const REWARDS = [0.1, 0.9, 0.2, 0.8, 0.05];

function view(rewards: number[]): RunView {
  const table = new MetricTable();
  table.append(
    packRows(
      rewards.map((reward, i) => ({ step: i + 1, optimizerStep: i + 1, epoch: 0, minibatch: 0, metrics: { reward } })),
    ),
  );
  return { table, version: 1, evals: [], rolloutSteps: [] };
}

describe('chartReward', () => {
  it("is the last point of the reward the charts smooth, at the charts' weight", () => {
    const views = { a: view(REWARDS) };
    const expected = smooth(REWARDS, 0.6);
    expect(chartReward({ views, smoothing: 0.6 }, 'a')).toBeCloseTo(expected[expected.length - 1], 12);
    expect(chartReward({ views, smoothing: 0.6 }, 'a')).not.toBeCloseTo(0.05, 3);
    // No smoothing: the raw last step.
    expect(chartReward({ views, smoothing: 0 }, 'a')).toBe(0.05);
  });

  it('is undefined while the page holds no records of the run', () => {
    expect(chartReward({ views: {}, smoothing: 0.6 }, 'a')).toBeUndefined();
  });
});
