// The weight-update view's data: heatmap rows in model order whatever order the metrics arrive in, one column per
// measured rollout step (its last optimizer step's values), NaN holes kept, a logarithmic colour scale, each
// matrix's latest rank-1 share, and the rank-1 evaluations beside the full ones.

import { describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import type { EvalRecord } from '../schema/stream';
import { compareWeightNames } from '../schema/weight-names';
import { MetricTable } from './metric-table';
import { heatPosition, latestShares, rank1Accuracies, weightUpdateGrid } from './weight-updates';

/** Rows of (step, optimizerStep, metrics). */
function table(rows: [number, number, Record<string, number>][]): MetricTable {
  const t = new MetricTable();
  t.append(
    packRows(rows.map(([step, optimizerStep, metrics]) => ({ step, optimizerStep, epoch: 0, minibatch: 0, metrics }))),
  );
  return t;
}

describe('weight-update heatmap data', () => {
  it('orders rows as the model, takes one column per measured step, and keeps holes as NaN', () => {
    const t = table([
      [1, 1, { reward: 0.1 }],
      [
        2,
        2,
        {
          'weights/norm/rel_update': 1e-4,
          'weights/layers.1.q/rel_update': 1e-2,
          'weights/layers.1.q/rank1_share': 0.5,
          'weights/embed/rel_update': 1e-3,
          'weights/layers.0.down/rel_update': 2e-3,
          'weights/layers.0.down/rank1_share': 0.9,
        },
      ],
      [
        2,
        3,
        {
          'weights/norm/rel_update': 1e-4,
          'weights/layers.1.q/rel_update': 1e-2,
          'weights/layers.1.q/rank1_share': 0.5,
          'weights/embed/rel_update': 1e-3,
          'weights/layers.0.down/rel_update': 2e-3,
          'weights/layers.0.down/rank1_share': 0.9,
        },
      ],
      [3, 4, { reward: 0.2 }],
      [
        4,
        5,
        {
          'weights/norm/rel_update': 1e-3,
          'weights/layers.1.q/rel_update': 1e-1,
          'weights/layers.1.q/rank1_share': 0.25,
          'weights/embed/rel_update': 1e-2,
        },
      ],
    ]);
    const g = weightUpdateGrid(t);
    expect(g.rows).toEqual(['embed', 'layers.0.down', 'layers.1.q', 'norm']);
    expect(g.steps).toEqual([2, 4]);
    expect(Array.from(g.rel)).toEqual([1e-3, 1e-2, 2e-3, NaN, 1e-2, 1e-1, 1e-4, 1e-3]);
    expect(Array.from(g.share)).toEqual([NaN, NaN, 0.9, NaN, 0.5, 0.25, NaN, NaN]);
    expect(g.logRange!.min).toBeCloseTo(-4, 12);
    expect(g.logRange!.max).toBeCloseTo(-1, 12);
    expect(latestShares(g)).toEqual([NaN, 0.9, 0.25, NaN]);
  });

  it('is empty for a run without weight statistics', () => {
    const g = weightUpdateGrid(table([[1, 1, { reward: 0.5 }]]));
    expect(g.rows).toEqual([]);
    expect(g.steps).toEqual([]);
    expect(g.logRange).toBeNull();
  });

  it('places values on a logarithmic scale', () => {
    const range = { min: -4, max: -1 };
    expect(heatPosition(1e-4, range)).toBe(0);
    expect(heatPosition(1e-1, range)).toBe(1);
    expect(heatPosition(10 ** -2.5, range)).toBeCloseTo(0.5, 12);
    expect(heatPosition(1, range)).toBe(1);
    expect(heatPosition(0, range)).toBe(0);
    expect(heatPosition(NaN, range)).toBeNaN();
    expect(heatPosition(1e-3, { min: -3, max: -3 })).toBe(1);
  });

  it('sorts weight names in model order, unknown names last', () => {
    const names = ['head', 'layers.10.q', 'zzz', 'norm', 'layers.2.attn_norm', 'layers.2.down', 'embed', 'layers.2.q'];
    expect([...names].sort(compareWeightNames)).toEqual([
      'embed',
      'layers.2.attn_norm',
      'layers.2.q',
      'layers.2.down',
      'layers.10.q',
      'norm',
      'head',
      'zzz',
    ]);
  });

  it('lists the evaluations that ran the rank-1 comparison', () => {
    const evals: EvalRecord[] = [
      { step: 0, items: 4, accuracy: 0.5, reward: 0.5, passAtK: [0.5] },
      { step: 10, items: 4, accuracy: 0.75, reward: 0.75, passAtK: [0.75], rank1: { accuracy: 0.5, reward: 0.5 } },
    ];
    expect(rank1Accuracies(evals)).toEqual([{ step: 10, full: 0.75, rank1: 0.5 }]);
  });
});
