// The alert detector over synthetic metric rows: each catalog alert fires on the step its condition has held for its
// duration, once, and again only after it cleared; a step counts with its worst optimizer step; a gap in the steps
// starts the history afresh; the message names the metric, value, threshold, cause, knob and lesson. Also the
// divergence check the engine and the CLI share.

import { describe, expect, it } from 'vitest';
import { METRICS, type MetricSpec } from '../../schema/metrics';
import { ALERT_RULES, alertsAt, stepExtremes, watchStep, type Alert, type StepExtremes } from './alerts';
import { divergenceText, firstNonFinite, firstNonFiniteTensor, nonFiniteMetrics } from './divergence';

/** A healthy rollout step's metrics (every alert quiet), with `over` replacing some. */
function healthy(step: number, over: Record<string, number> = {}): Record<string, number> {
  return {
    reward: 0.3 + 0.01 * step,
    entropy: 0.8,
    'clip_ratio/region_mean': 0.02,
    approx_kl: 0.01,
    'completions/clipped_ratio': 0,
    frac_reward_zero_std: 0.4,
    ...over,
  };
}

/** Feeds one record per rollout step through watchStep; returns the alerts by step they fired at. */
function run(rows: Record<string, number>[], firstStep = 1): Alert[][] {
  let history: StepExtremes[] = [];
  return rows.map((metrics, i) => {
    const w = watchStep(history, [{ step: firstStep + i, metrics }]);
    history = w.history;
    return w.alerts;
  });
}

const fired = (alerts: Alert[][]) => alerts.flatMap((list, i) => list.map((a) => `${i + 1}:${a.metric}`));

describe('alerts', () => {
  it('come from the catalog: one rule per metric with an alert entry, each complete', () => {
    const withAlert = (METRICS as readonly MetricSpec[]).filter((m) => m.alert).map((m) => m.name);
    expect(ALERT_RULES.map((r) => r.metric)).toEqual(withAlert);
    expect(withAlert).toEqual(
      expect.arrayContaining([
        'entropy',
        'approx_kl',
        'clip_ratio/region_mean',
        'frac_reward_zero_std',
        'completions/clipped_ratio',
        'reward',
      ]),
    );
    for (const r of ALERT_RULES) {
      expect(r.steps, r.metric).toBeGreaterThanOrEqual(1);
      expect(Number.isFinite(r.threshold), r.metric).toBe(true);
      expect(r.cause.trim() && r.knob.trim() && r.title.trim(), r.metric).toBeTruthy();
    }
  });

  it('stay quiet on a healthy run', () => {
    expect(fired(run(Array.from({ length: 30 }, (_, i) => healthy(i + 1))))).toEqual([]);
  });

  it('fire entropy collapse on the third low step, once while it lasts, and again after it cleared', () => {
    const rows = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((s) =>
      healthy(s, { entropy: [3, 4, 5, 6, 8, 9, 10].includes(s) ? 0.01 : 0.8 }),
    );
    expect(fired(run(rows))).toEqual(['5:entropy', '10:entropy']);
  });

  it('fire every group zero-signal after five steps at 1, not at 0.99', () => {
    expect(fired(run([1, 2, 3, 4, 5, 6].map((s) => healthy(s, { frac_reward_zero_std: 1 }))))).toEqual([
      '5:frac_reward_zero_std',
    ]);
    expect(fired(run([1, 2, 3, 4, 5, 6].map((s) => healthy(s, { frac_reward_zero_std: 0.99 }))))).toEqual([]);
  });

  it('fire lengths pinned at the cap, clip explosion and ratio explosion at their thresholds', () => {
    expect(fired(run([1, 2, 3].map((s) => healthy(s, { 'completions/clipped_ratio': 0.95 }))))).toEqual([
      '3:completions/clipped_ratio',
    ]);
    expect(fired(run([1, 2].map((s) => healthy(s, { 'clip_ratio/region_mean': 0.5 }))))).toEqual([
      '2:clip_ratio/region_mean',
    ]);
    expect(fired(run([healthy(1), healthy(2, { approx_kl: 0.8 })]))).toEqual(['2:approx_kl']);
  });

  it('fire reward stuck when the reward has not moved for ten steps', () => {
    const rows = Array.from({ length: 12 }, (_, i) => healthy(i + 1, { reward: i < 2 ? 0.1 * i : 0.5 }));
    expect(fired(run(rows))).toEqual(['12:reward']); // steps 3-12 at 0.5
  });

  it('count a rollout step with its worst optimizer step', () => {
    // approx_kl is 0 on the first update of a batch and large on the second: the step counts with the large one.
    const records = [
      { step: 4, metrics: healthy(4, { approx_kl: 0, entropy: 0.9 }) },
      { step: 4, metrics: healthy(4, { approx_kl: 0.7, entropy: 0.02 }) },
    ];
    const s = stepExtremes(records);
    expect(s.high.approx_kl).toBe(0.7);
    expect(s.low.entropy).toBe(0.02);
    expect(alertsAt([s]).map((a) => [a.metric, a.value, a.step])).toEqual([['approx_kl', 0.7, 4]]);
  });

  it('start afresh after a gap in the steps (a resume or a rewind)', () => {
    let history: StepExtremes[] = [];
    for (const step of [1, 2])
      history = watchStep(history, [{ step, metrics: healthy(step, { entropy: 0.01 }) }]).history;
    const after = watchStep(history, [{ step: 7, metrics: healthy(7, { entropy: 0.01 }) }]);
    expect(after.history.map((h) => h.step)).toEqual([7]);
    expect(after.alerts).toEqual([]);
  });

  it('say what fired, its value, its threshold, the likely cause, the knob and the lesson', () => {
    const [a] = run([1, 2, 3].map((s) => healthy(s, { entropy: 0.012345 })))[2];
    expect(a).toMatchObject({
      metric: 'entropy',
      step: 3,
      value: 0.012345,
      threshold: 0.05,
      lesson: 'entropy-collapse',
    });
    expect(a.message).toMatch(
      /^Alert at step 3, entropy collapse: entropy = 0\.0123, at or below 0\.05 for 3 steps\. /,
    );
    expect(a.message).toContain(a.cause);
    expect(a.message).toContain(`What usually helps: ${a.knob}`);
    expect(a.message).toMatch(/Lesson: entropy-collapse\.$/);
  });
});

describe('divergence', () => {
  it('names the first non-finite metric (catalog order) of the first record that has one', () => {
    const records: { step: number; optimizerStep: number; metrics: Record<string, number> }[] = [
      { step: 3, optimizerStep: 5, metrics: { reward: 0.5, entropy: 0.7 } },
      { step: 3, optimizerStep: 6, metrics: { reward: 0.5, grad_norm: Infinity, entropy: NaN } },
    ];
    const d = firstNonFinite(records);
    expect(d).toEqual({ metric: 'entropy', value: NaN, step: 3, optimizerStep: 6 });
    expect(divergenceText(d!)).toBe('the run diverged: entropy = NaN at step 3 (optimizer step 6)');
    expect(nonFiniteMetrics(records[1].metrics)).toEqual([
      ['entropy', NaN],
      ['grad_norm', Infinity],
    ]);
    expect(firstNonFinite([records[0]])).toBeNull();
  });

  it('finds a non-finite weight', () => {
    expect(firstNonFiniteTensor({ a: Float32Array.of(1, 2), b: Float32Array.of(0, -Infinity) })).toBe('b');
    expect(firstNonFiniteTensor({ a: Float32Array.of(1, 2) })).toBeNull();
  });
});
