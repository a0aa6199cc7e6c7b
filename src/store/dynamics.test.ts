// The page's side of the distributions: histograms travel from metric rows through a packed batch into a run's
// metric table (a resumed run's rewrite drops the old tail's), a histogram's heatmap grid (shares per step, long
// runs merged to fit), the solve-rate histograms of the first and latest evaluation, and the all-groups view sorted
// by reward.

import { describe, expect, it } from 'vitest';
import { packRows, unpackBatch } from '../schema/metric-batch';
import type { MetricRow } from '../schema/run-types';
import type { GroupSummary } from '../schema/stream';
import { HISTOGRAMS } from '../schema/histograms';
import { groupsByReward, histogramGrid, solveRates } from './dynamics';
import { MetricTable } from './metric-table';

const K = HISTOGRAMS.entropy.edges.length - 1;
/** An entropy histogram with `n` tokens in bin `b`. */
const oneBin = (b: number, n: number) => Array.from({ length: K }, (_, i) => (i === b ? n : 0));

/** Rows of rollout steps 1..steps, two optimizer steps each, the last carrying an entropy histogram with `step` tokens in bin step % K. */
function rows(steps: number, from = 1): MetricRow[] {
  return Array.from({ length: steps }, (_, i) => i + from).flatMap((step) => [
    { step, optimizerStep: 2 * step - 1, epoch: 0, minibatch: 0, metrics: { reward: step } },
    {
      step,
      optimizerStep: 2 * step,
      epoch: 1,
      minibatch: 0,
      metrics: { reward: step },
      histograms: { entropy: oneBin(step % K, step) },
    },
  ]);
}

describe('histograms through batches and tables', () => {
  it("a packed batch carries each row's histograms and unpacks them onto the same rows", () => {
    const r = rows(3);
    const back = unpackBatch(packRows(r));
    expect(back.map((x) => x.histograms)).toEqual(r.map((x) => x.histograms));
  });

  it('a table keeps them by rollout step, and a rewrite from an earlier step drops the old tail', () => {
    const t = new MetricTable();
    t.append(packRows(rows(4)));
    expect(t.histograms().map(([s]) => s)).toEqual([1, 2, 3, 4]);
    // Resumed from step 2: steps 3.. are written again, with step 3 having a different histogram and no step 4.
    t.append(
      packRows([
        {
          step: 3,
          optimizerStep: 5,
          epoch: 0,
          minibatch: 0,
          metrics: { reward: 0 },
          histograms: { entropy: oneBin(0, 9) },
        },
      ]),
    );
    expect(t.histograms()).toEqual([
      [1, { entropy: oneBin(1, 1) }],
      [2, { entropy: oneBin(2, 2) }],
      [3, { entropy: oneBin(0, 9) }],
    ]);
  });
});

describe('histogramGrid', () => {
  it('one column per step, each a share of its counts', () => {
    const t = new MetricTable();
    t.append(
      packRows([
        {
          step: 1,
          optimizerStep: 1,
          epoch: 0,
          minibatch: 0,
          metrics: {},
          histograms: { entropy: [3, 1, ...new Array(K - 2).fill(0)] },
        },
        {
          step: 2,
          optimizerStep: 2,
          epoch: 0,
          minibatch: 0,
          metrics: {},
          histograms: { entropy: new Array(K).fill(0) },
        },
      ]),
    );
    const g = histogramGrid(t, 'entropy', 100);
    expect(g.columns).toEqual([1, 2]);
    expect(g.rows).toHaveLength(K);
    expect(g.rows[0]).toBe('[0, 0.01)');
    expect(g.values[0][0]).toBe(0.75);
    expect(g.values[1][0]).toBe(0.25);
    // A step with no tokens has no shares (NaN draws nothing), not a division by zero.
    expect(g.values.map((r) => r[1]).every(Number.isNaN)).toBe(true);
    expect(g.totals).toEqual([4, 0]);
  });

  it('merges adjacent steps to fit the columns, summing their counts', () => {
    const t = new MetricTable();
    t.append(packRows(rows(10)));
    const g = histogramGrid(t, 'entropy', 4);
    // ceil(10 / 4) = 3 steps per column: 1-3, 4-6, 7-9, 10.
    expect(g.firstSteps).toEqual([1, 4, 7, 10]);
    expect(g.columns).toEqual([3, 6, 9, 10]);
    expect(g.totals).toEqual([1 + 2 + 3, 4 + 5 + 6, 7 + 8 + 9, 10]);
    for (let c = 0; c < g.columns.length; c++) expect(g.values.reduce((a, r) => a + r[c], 0)).toBeCloseTo(1, 12);
  });

  it('is empty for a run without histograms, and skips the histogram it lacks', () => {
    const t = new MetricTable();
    t.append(packRows([{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 1 } }]));
    expect(histogramGrid(t, 'entropy', 10).columns).toEqual([]);
    t.append(packRows(rows(1, 2)));
    expect(histogramGrid(t, 'advantage', 10).columns).toEqual([]);
  });
});

describe('solveRates', () => {
  const ev = (step: number, solvedBy?: number[]) => ({
    step,
    items: 4,
    accuracy: 0,
    reward: 0,
    passAtK: [0],
    ...(solvedBy && { solvedBy }),
  });
  it('the first and the latest evaluation that kept solve rates', () => {
    expect(solveRates([ev(0, [4, 0]), ev(50, [2, 2]), ev(100, [0, 4])])).toEqual([
      { step: 0, counts: [4, 0] },
      { step: 100, counts: [0, 4] },
    ]);
  });
  it('one histogram for one evaluation, none for evaluations without them', () => {
    expect(solveRates([ev(0, [3, 1])])).toEqual([{ step: 0, counts: [3, 1] }]);
    expect(solveRates([ev(0), ev(10)])).toEqual([]);
    expect(solveRates([])).toEqual([]);
  });
});

describe('groupsByReward', () => {
  const c = (reward: number, passed: boolean, text = String(reward)) => ({
    text,
    length: 2,
    finished: true,
    reward,
    passed,
    advantage: reward - 0.5,
    masked: false,
  });
  it("sorts each group's completions by reward, highest first, ties in sampling order, and counts the passes", () => {
    const batch: GroupSummary[] = [
      {
        index: 0,
        prompt: 'p',
        answer: 'a',
        completions: [c(0, false, 'x'), c(1, true), c(0, false, 'y'), c(0.1, false)],
      },
    ];
    const [g] = groupsByReward(batch);
    expect(g.completions.map((x) => x.text)).toEqual(['1', '0.1', 'x', 'y']);
    expect(g.passed).toBe(1);
    // The input is left as it was.
    expect(batch[0].completions[0].text).toBe('x');
  });
});
