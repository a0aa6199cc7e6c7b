// What the charts draw: debiased EMA smoothing, decimation onto a shared grid that keeps means and spikes, the
// metric table's in-place growth and rewrites on resume, every metric on exactly one chart, and a 10,000-step
// run turned into chart rows fast enough to redraw while training.
import { describe, expect, it } from 'vitest';
import { packRows } from '../engine/metric-batch';
import { chartData, chartsFor, CHART_SPECS } from './charts';
import { MetricTable } from './metric-table';
import { decimate, makeGrid, positiveOnly, smooth } from './series';

function table(n: number, f: (i: number) => Record<string, number>, start = 1): MetricTable {
  const t = new MetricTable();
  t.append(packRows(Array.from({ length: n }, (_, i) => ({ step: i + start, optimizerStep: i + start, epoch: 0, minibatch: 0, metrics: f(i + start) }))));
  return t;
}

describe('smoothing', () => {
  it('is the raw series at weight 0 and a debiased EMA otherwise (a constant stays constant)', () => {
    expect(Array.from(smooth([1, 2, 3], 0))).toEqual([1, 2, 3]);
    const c = smooth([5, 5, 5, 5], 0.9);
    for (const v of c) expect(v).toBeCloseTo(5, 12);
    const s = smooth([0, 10], 0.5);
    expect(s[0]).toBe(0);
    expect(s[1]).toBeCloseTo((0.5 * 0 * 0.5 + 0.5 * 10) / (1 - 0.25), 12); // (w(1-w)x0 + (1-w)x1) / (1 - w^2)
  });
  it('skips NaN without moving the average', () => {
    const s = smooth([1, NaN, 1], 0.8);
    expect(s[0]).toBeCloseTo(1, 12);
    expect(Number.isNaN(s[1])).toBe(true);
    expect(s[2]).toBeCloseTo(1, 12);
  });
});

describe('decimation', () => {
  it('keeps every point when they fit, and bucket means with min/max envelopes when they do not', () => {
    const x = Float64Array.from({ length: 10 }, (_, i) => i + 1);
    const small = makeGrid([x], 100);
    expect(small.buckets).toBe(10);
    expect(Array.from(decimate(small, x, x).mean)).toEqual(Array.from(x));

    const n = 10_000;
    const xs = Float64Array.from({ length: n }, (_, i) => i + 1);
    const v = Float64Array.from({ length: n }, (_, i) => (i === 5000 ? 100 : i % 2));
    const g = makeGrid([xs], 400);
    expect(g.buckets).toBeLessThanOrEqual(400);
    const d = decimate(g, xs, v);
    const b = Math.floor((5001 - g.x0) / g.width);
    expect(d.max[b]).toBe(100); // the spike survives in the envelope
    const first = Array.from(v.subarray(0, g.width));
    expect(d.mean[0]).toBeCloseTo(first.reduce((a, x) => a + x, 0) / g.width, 12);
    expect([d.min[0], d.max[0]]).toEqual([0, 1]);
    expect(g.x[g.buckets - 1]).toBe(n);
  });
  it('puts runs of different lengths on one grid', () => {
    const a = Float64Array.from({ length: 50 }, (_, i) => i + 1);
    const b = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
    const g = makeGrid([a, b], 100);
    const da = decimate(g, a, a);
    expect(Number.isNaN(da.mean[g.buckets - 1])).toBe(true); // run a ends early
    expect(Number.isFinite(decimate(g, b, b).mean[g.buckets - 1])).toBe(true);
  });
  it('drops values <= 0 for a log axis', () => {
    expect(Array.from(positiveOnly(Float64Array.from([1, 0, -1, 2])))).toEqual([1, NaN, NaN, 2]);
  });
});

describe('metric table', () => {
  it('grows in place, adds columns for new metrics, and rewrites its tail when a run resumes earlier', () => {
    const t = table(3, (i) => ({ reward: i }));
    t.append(packRows([{ step: 4, optimizerStep: 4, epoch: 0, minibatch: 0, metrics: { reward: 4, kl: 0.5 } }]));
    expect(t.length).toBe(4);
    expect(Array.from(t.column('kl')!)).toEqual([NaN, NaN, NaN, 0.5]);
    expect(t.last('reward')).toBe(4);
    t.append(packRows([{ step: 3, optimizerStep: 3, epoch: 0, minibatch: 0, metrics: { reward: 30 } }]));
    expect(Array.from(t.x)).toEqual([1, 2, 3]);
    expect(Array.from(t.column('reward')!)).toEqual([1, 2, 30]);
    expect(Number.isNaN(t.last('kl'))).toBe(true);
  });
});

describe('charts', () => {
  const trainerNames = [
    'reward', 'reward_std', 'accuracy', 'frac_reward_zero_std', 'difficulty', 'dynamic_sampling/filtered_frac', 'rewards/accuracy/mean', 'rewards/accuracy/std',
    'completions/mean_length', 'completions/min_length', 'completions/max_length', 'completions/clipped_ratio', 'completions/mean_terminated_length',
    'completions/loss_tokens', 'entropy', 'kl', 'kl/exact', 'approx_kl', 'clip_ratio/low_mean', 'clip_ratio/high_mean', 'clip_ratio/region_mean',
    'cispo_clip_ratio', 'policy_loss', 'value_loss', 'vf_explained_var', 'grad_norm', 'learning_rate', 'entropy_coef', 'sampling/logp_diff/mean',
    'sampling/logp_diff/max', 'perf/step_ms', 'perf/rollout_tokens_per_s', 'perf/train_tokens_per_s', 'timing_s/gen', 'timing_s/update', 'loss',
    'token_selection/entropy_kept_frac',
  ];
  it('draws every metric on exactly one chart (reward_std as the reward band)', () => {
    const specs = chartsFor(trainerNames);
    const drawn = specs.flatMap((s) => s.metrics.filter((m) => trainerNames.includes(m)));
    const counts = new Map<string, number>();
    for (const m of drawn) counts.set(m, (counts.get(m) ?? 0) + 1);
    for (const m of trainerNames.filter((n) => n !== 'reward_std')) expect(counts.get(m), m).toBe(1);
    expect(specs.find((s) => s.id === 'reward')!.band).toEqual({ mean: 'reward', std: 'reward_std' });
    expect(new Set(specs.map((s) => s.id)).size).toBe(specs.length);
    expect(specs.map((s) => s.id)).toContain('family-timing_s');
    expect(chartsFor(['reward']).map((s) => s.id)).toEqual(['reward']);
  });

  it('overlays runs on a shared grid with a std band, and reports the first run\'s last raw values', () => {
    const a = table(20, (i) => ({ reward: i / 20, reward_std: 0.1, accuracy: 0.5 }));
    const b = table(10, (i) => ({ reward: 1 - i / 10, reward_std: 0.2, accuracy: 0.25 }));
    const spec = CHART_SPECS.find((s) => s.id === 'reward')!;
    const d = chartData(spec, [{ id: 'a', label: 'A', table: a }, { id: 'b', label: 'B', table: b }], { smoothing: 0, maxPoints: 100, log: false });
    expect(d.rows).toHaveLength(20);
    expect(d.series.map((s) => s.key)).toEqual(['r0:reward', 'r0:accuracy', 'r1:reward', 'r1:accuracy']);
    expect(d.rows[4]['r0:reward']).toBeCloseTo(5 / 20, 12);
    expect(d.rows[15]['r1:reward']).toBeNull();
    const band = d.rows[0][d.bands[1].key] as [number, number];
    expect(band[0]).toBeCloseTo(0.9 - 0.2, 12);
    expect(band[1]).toBeCloseTo(0.9 + 0.2, 12);
    expect(d.last).toEqual({ reward: 1, accuracy: 0.5 });
    expect(d.runCount).toBe(2);
  });

  it('turns a 10,000-step run of 30 metrics into chart rows in well under a frame budget per chart', () => {
    const names = Array.from({ length: 30 }, (_, j) => (j === 0 ? 'reward' : `m${j}`));
    const t = table(10_000, (i) => Object.fromEntries(names.map((n, j) => [n, Math.sin(i / (j + 1))])));
    const specs = chartsFor(t.names);
    const t0 = performance.now();
    let rows = 0;
    for (const spec of specs) rows = Math.max(rows, chartData(spec, [{ id: 'a', label: 'A', table: t }], { smoothing: 0.6, maxPoints: 400, log: false }).rows.length);
    const ms = performance.now() - t0;
    expect(rows).toBeLessThanOrEqual(400);
    expect(ms).toBeLessThan(500); // all charts of the run; ~10-30 ms on a 2-core CI machine
  });
});
