// What the charts draw: debiased EMA smoothing, decimation onto a shared grid that keeps means and spikes (whole
// or fractional rollout steps), the metric table's in-place growth and rewrites on resume, every metric on
// exactly one chart (the catalog's, else its family's), runs with different update counts aligned on the
// rollout-step axis, and a 10,000-step run of 30 metrics decimated to at most the points asked for.
import { describe, expect, it } from 'vitest';
import { packRows } from '../schema/metric-batch';
import type { MetricRow } from '../schema/run-types';
import { CHARTS, METRICS, metricSpec } from '../schema/metrics';
import { resolveConfig, RL_FIELDS } from '../schema/config';
import {
  chartData,
  chartHelp,
  chartQuietness,
  chartsFor,
  metricHelp,
  OPTIMIZER_STEP_KEY,
  STARTING_CHARTS,
} from './charts';
import { LESSONS } from '../lessons';
import { MetricTable } from './metric-table';
import { bucketOf, decimate, makeGrid, positiveOnly, smooth } from './series';

function table(n: number, f: (i: number) => Record<string, number>, start = 1): MetricTable {
  const t = new MetricTable();
  t.append(
    packRows(
      Array.from({ length: n }, (_, i) => ({
        step: i + start,
        optimizerStep: i + start,
        epoch: 0,
        minibatch: 0,
        metrics: f(i + start),
      })),
    ),
  );
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
    const width = g.start[1] - g.start[0];
    expect(width).toBe(25); // a whole number of steps per bucket: every bucket holds the same count
    const d = decimate(g, xs, v);
    expect(d.max[bucketOf(g, 5001)]).toBe(100); // the spike survives in the envelope
    const first = Array.from(v.subarray(0, width));
    expect(d.mean[0]).toBeCloseTo(first.reduce((a, x) => a + x, 0) / width, 12);
    expect([d.min[0], d.max[0]]).toEqual([0, 1]);
    expect(g.x[g.buckets - 1]).toBe(n);
  });
  it('keeps fractional x (optimizer steps as sub-ticks) apart when they fit, and buckets by whole sub-ticks when not', () => {
    const halves = Float64Array.from({ length: 8 }, (_, i) => (i + 1) / 2); // 0.5, 1, ..., 4
    const wholes = Float64Array.from([1, 2, 3, 4]);
    const g = makeGrid([halves, wholes], 100);
    expect(Array.from(g.x)).toEqual(Array.from(halves)); // the union of both runs' x, each its own bucket
    expect(Array.from(decimate(g, wholes, wholes).mean)).toEqual([NaN, 1, NaN, 2, NaN, 3, NaN, 4]);
    const many = Float64Array.from({ length: 3000 }, (_, i) => (i + 1) / 3); // 1000 rollout steps x 3 updates
    const coarse = makeGrid([many], 300);
    expect(coarse.buckets).toBeLessThanOrEqual(300);
    const counts = decimate(coarse, many, new Float64Array(many.length).fill(1));
    expect(counts.mean.every((m) => m === 1)).toBe(true); // every bucket got points
    const perBucket = new Map<number, number>();
    for (const x of many) perBucket.set(bucketOf(coarse, x), (perBucket.get(bucketOf(coarse, x)) ?? 0) + 1);
    expect(new Set([...perBucket.values()].slice(0, -1)).size).toBe(1); // whole sub-ticks per bucket (the last may be short)
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
    expect(Array.from(t.optimizerStep)).toEqual([1, 2, 3]);
    expect(Array.from(t.x)).toEqual([1, 2, 3]);
    expect(Array.from(t.column('reward')!)).toEqual([1, 2, 30]);
    expect(Number.isNaN(t.last('kl'))).toBe(true);
  });
});

/** A run of `steps` rollout steps with `updates` optimizer steps each; reward = its rollout step. */
function run(steps: number, updates: number): MetricTable {
  const rows: MetricRow[] = [];
  for (let step = 1; step <= steps; step++) {
    for (let update = 0; update < updates; update++)
      rows.push({
        step,
        optimizerStep: rows.length + 1,
        epoch: update,
        minibatch: 0,
        update,
        updates,
        metrics: { reward: step, reward_std: 0 },
      });
  }
  const t = new MetricTable();
  t.append(packRows(rows));
  return t;
}

describe('the rollout-step axis', () => {
  it('aligns a run with two updates per step with a run with one: the same rollout step at the same x', () => {
    const two = run(3, 2);
    const one = run(3, 1);
    expect(Array.from(two.x)).toEqual([0.5, 1, 1.5, 2, 2.5, 3]);
    const spec = chartsFor(['reward']).find((c) => c.metrics.includes('reward'))!;
    const d = chartData(
      spec,
      [
        { id: 'two', label: 'two', table: two },
        { id: 'one', label: 'one', table: one },
      ],
      { smoothing: 0, maxPoints: 100, log: false },
    );
    for (const row of d.rows) {
      const x = row.x as number;
      expect(row['r0:reward']).toBe(Math.ceil(x)); // run "two" at every sub-tick
      expect(row['r1:reward']).toBe(Number.isInteger(x) ? x : null); // run "one" on the whole steps only
    }
    expect(d.rows.map((r) => r[OPTIMIZER_STEP_KEY])).toEqual([1, 2, 3, 4, 5, 6]); // the first run's optimizer step, for the tooltip
    expect(d.rawPoints).toBe(6);
  });
});

describe('charts', () => {
  const trainerNames = [
    'reward',
    'reward_std',
    'accuracy',
    'frac_reward_zero_std',
    'difficulty',
    'dynamic_sampling/filtered_frac',
    'rewards/accuracy/mean',
    'rewards/accuracy/std',
    'completions/mean_length',
    'completions/min_length',
    'completions/max_length',
    'completions/clipped_ratio',
    'completions/mean_terminated_length',
    'completions/loss_tokens',
    'entropy',
    'kl',
    'kl/exact',
    'approx_kl',
    'clip_ratio/low_mean',
    'clip_ratio/high_mean',
    'clip_ratio/region_mean',
    'cispo_clip_ratio',
    'policy_loss',
    'value_loss',
    'vf_explained_var',
    'grad_norm',
    'learning_rate',
    'entropy_coef',
    'sampling/logp_diff/mean',
    'sampling/logp_diff/max',
    'perf/step_ms',
    'perf/rollout_tokens_per_s',
    'perf/train_tokens_per_s',
    'timing_s/gen',
    'timing_s/update',
    'loss',
    'token_selection/entropy_kept_frac',
    'made_up/never_catalogued',
  ];
  const banded = CHARTS.flatMap((c) => ('band' in c ? [c.band] : []));

  it("draws every metric on exactly one chart: the catalog's when it has one, its family's when not", () => {
    const specs = chartsFor(trainerNames);
    const bandStds = new Set(specs.flatMap((s) => (s.band ? [s.band.std] : [])));
    const drawn = specs.flatMap((s) => s.metrics);
    for (const m of trainerNames) expect(drawn.filter((d) => d === m).length + (bandStds.has(m) ? 1 : 0), m).toBe(1);
    expect(new Set(specs.map((s) => s.id)).size).toBe(specs.length);
    for (const s of specs)
      for (const m of s.metrics) expect(s.id, m).toBe(metricSpec(m)?.chart ?? `family-${m.split('/')[0]}`);
    // Catalog charts first, in the catalog's order; then the families.
    const catalogIds = specs.map((s) => s.id).filter((id) => !id.startsWith('family-'));
    expect(catalogIds).toEqual(CHARTS.map((c) => c.id).filter((id) => catalogIds.includes(id)));
    expect(specs.findIndex((s) => s.id.startsWith('family-'))).toBe(catalogIds.length);
    expect(specs.find((s) => s.id === 'family-made_up')).toMatchObject({
      title: 'made_up/* (not in the metric catalog)',
      y: 'value',
      metrics: ['made_up/never_catalogued'],
    });
  });

  it('never gives two charts one title, whatever the case, families included', () => {
    const titles = chartsFor([...trainerNames, 'loss/value_avg', 'kl_loss/x', 'critic_extra/y']).map((s) =>
      s.title.toLowerCase(),
    );
    expect(new Set(titles).size).toBe(titles.length);
    expect(new Set(CHARTS.map((c) => c.title.toLowerCase())).size).toBe(CHARTS.length);
  });

  it('draws a catalog band (mean ± std) when both are reported, and the std as a line when its mean is not', () => {
    for (const band of banded) {
      const chart = metricSpec(band.mean)!.chart;
      const withMean = chartsFor([band.mean, band.std]).find((s) => s.id === chart)!;
      expect(withMean.band).toEqual(band);
      expect(withMean.metrics).not.toContain(band.std);
      expect(chartsFor([band.std]).flatMap((s) => s.metrics)).toEqual([band.std]);
    }
  });

  it("puts template names on their template's chart and orders each chart by the catalog", () => {
    const template = METRICS.find((m) => m.name.includes('<'))!;
    const name = template.name.replace(/<[a-z]+>/g, 'x');
    expect(metricSpec(name)).toBe(template);
    expect(metricSpec(template.name.replace(/<[a-z]+>/g, 'x/y'))).toBeUndefined(); // a template segment is one path segment
    expect(chartsFor([name]).map((s) => s.id)).toEqual([template.chart]);
    const plain = METRICS.filter((m) => !m.name.includes('<'));
    for (const c of chartsFor(plain.map((m) => m.name).reverse())) {
      const order = c.metrics.map((m) => plain.findIndex((p) => p.name === m));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
  });

  it("labels axes and hovers from the catalog: the y unit, each metric's doc, formula and healthy range", () => {
    for (const s of chartsFor(trainerNames)) {
      const c = CHARTS.find((k) => k.id === s.id);
      expect(s.y).toBe(c ? c.y : 'value');
      expect(s.log).toBe(c ? c.log : 'off');
    }
    const m = METRICS[0];
    expect(metricHelp(m.name)).toBe(`${m.name}: ${m.doc}\n${m.formula}\nhealthy: ${m.healthy}`);
    expect(metricHelp('made_up/x')).toBe('made_up/x: not in the metric catalog');
    const spec = chartsFor([m.name])[0];
    expect(chartHelp(spec)).toContain(`${m.name}: ${m.doc}`);
    expect(STARTING_CHARTS.every((s) => CHARTS.slice(0, 6).some((c) => c.id === s.id))).toBe(true);
  });

  it("overlays runs on a shared grid with a std band, and reports the first run's last raw values", () => {
    const band = banded[0];
    const a = table(20, (i) => ({ [band.mean]: i / 20, [band.std]: 0.1 }));
    const b = table(10, (i) => ({ [band.mean]: 1 - i / 10, [band.std]: 0.2 }));
    const spec = chartsFor([band.mean, band.std]).find((s) => s.band)!;
    const d = chartData(
      spec,
      [
        { id: 'a', label: 'A', table: a },
        { id: 'b', label: 'B', table: b },
      ],
      { smoothing: 0, maxPoints: 100, log: false },
    );
    expect(d.rows).toHaveLength(20);
    expect(d.series.map((s) => s.key)).toEqual([`r0:${band.mean}`, `r1:${band.mean}`]);
    expect(d.rows[4][`r0:${band.mean}`]).toBeCloseTo(5 / 20, 12);
    expect(d.rows[15][`r1:${band.mean}`]).toBeNull();
    const lohi = d.rows[0][d.bands[1].key] as [number, number];
    expect(lohi[0]).toBeCloseTo(0.9 - 0.2, 12);
    expect(lohi[1]).toBeCloseTo(0.9 + 0.2, 12);
    expect(d.last).toEqual({ [band.mean]: 1 });
    expect(d.runCount).toBe(2);
  });

  it('decimates a 10,000-step run of 30 metrics to at most the points asked for, on every chart', () => {
    const names = Array.from({ length: 30 }, (_, j) => (j === 0 ? 'reward' : `m${j}`));
    const t = table(10_000, (i) => Object.fromEntries(names.map((n, j) => [n, Math.sin(i / (j + 1))])));
    const specs = chartsFor(t.names);
    expect(specs.flatMap((s) => s.metrics).sort()).toEqual([...names].sort());
    for (const spec of specs) {
      const d = chartData(spec, [{ id: 'a', label: 'A', table: t }], { smoothing: 0.6, maxPoints: 400, log: false });
      expect(d.rows.length).toBeLessThanOrEqual(400);
      expect(d.rawPoints).toBe(10_000);
    }
  });
});

describe("a chart's axes", () => {
  const only = (name: string) => chartsFor([name]).find((c) => c.metrics.includes(name))!;
  const one = (t: MetricTable, spec: ReturnType<typeof only>, o: { smoothing?: number; log?: boolean } = {}) =>
    chartData(spec, [{ id: 'a', label: 'A', table: t }], { smoothing: o.smoothing ?? 0, maxPoints: 300, log: !!o.log });

  it('draws a flat series flat (smoothing 3 gives 2.9999999999999996): about +-10% around it', () => {
    const d = one(
      table(20, () => ({ difficulty: 3 })),
      only('difficulty'),
      { smoothing: 0.6 },
    );
    expect(d.yAxis.domain[0]).toBeLessThanOrEqual(2.7);
    expect(d.yAxis.domain[1]).toBeGreaterThanOrEqual(3.3);
    expect(d.yAxis.domain[1] - d.yAxis.domain[0]).toBeLessThan(1);
  });

  it('labels the rollout steps at round numbers inside the steps drawn', () => {
    const d = one(
      table(141, (i) => ({ difficulty: i })),
      only('difficulty'),
    );
    expect(d.xAxis.domain).toEqual([1, 141]);
    expect(d.xAxis.ticks).toEqual([20, 40, 60, 80, 100, 120, 140]);
  });

  it("keeps a reward in [0, 1] on a [0, 1]-bounded axis when its ± std band strays outside (the catalog's range)", () => {
    const t = table(50, (i) => ({ reward: 0.2 + i / 100, reward_std: 0.5 }));
    const d = one(t, chartsFor(['reward', 'reward_std'])[0]);
    expect(d.yAxis.domain).toEqual([0, 1]);
    expect(d.yAxis.clamped).toBe(true);
    // A reward that really goes below 0 (overlong shaping) is shown.
    const neg = one(
      table(50, (i) => ({ reward: -0.3 + i / 100, reward_std: 0.1 })),
      chartsFor(['reward', 'reward_std'])[0],
    );
    expect(neg.yAxis.domain[0]).toBeLessThanOrEqual(-0.4);
  });

  it('draws a log chart on decades or 1-2-5 values of the positive values only', () => {
    const t = table(30, (i) => ({ 'perf/rollout_tokens_per_s': 800 + 10 * i, 'perf/train_tokens_per_s': 0 }));
    const d = one(t, only('perf/rollout_tokens_per_s'), { log: true });
    expect(d.yAxis).toEqual({ domain: [500, 2000], ticks: [500, 1000, 2000], clamped: false });
  });

  it('stacks the parts of one whole for one run on [0, 1], and draws them as lines (no stack) in an overlay', () => {
    const parts = (i: number) => ({
      'groups/all_fail_frac': 0.5 - i / 100,
      'groups/mixed_frac': 0.3,
      'groups/all_pass_frac': 0.2 + i / 100,
    });
    const spec = chartsFor(Object.keys(parts(0)))[0];
    expect(spec.stack).toHaveLength(3);
    const alone = one(table(20, parts), spec);
    expect(alone.yAxis.domain).toEqual([0, 1]);
    expect(alone.stacked).toBe(true);
    const both = chartData(
      spec,
      [
        { id: 'a', label: 'A', table: table(20, parts) },
        { id: 'b', label: 'B', table: table(20, parts) },
      ],
      { smoothing: 0, maxPoints: 300, log: false },
    );
    expect(both.stacked).toBe(false);
    expect(both.yAxis.domain[0]).toBeGreaterThanOrEqual(0);
    expect(both.yAxis.domain[1]).toBeLessThanOrEqual(1);
  });
});

describe('charts whose feature is off', () => {
  const allNames = METRICS.filter((m) => !m.name.includes('<')).map((m) => m.name);
  const chart = (id: string) => chartsFor(allNames).find((c) => c.id === id)!;
  const run = (label: string, config: object) => ({ label, config: config as Record<string, unknown> });

  it('name the knobs and their values instead of drawing a flat line: curriculum fixed, no critic, no token selection', () => {
    const grpo = resolveConfig('grpo', { curriculum: 'fixed' });
    expect(chartQuietness(chart('curriculum'), [run('a', grpo)])).toEqual({
      whole: true,
      notes: ['off in this run: curriculum = fixed (every step samples the configured difficulty)'],
      lessons: [],
    });
    expect(chartQuietness(chart('critic'), [run('a', grpo)]).notes).toEqual([
      'off in this run: adv_estimator = grpo (only GAE, the ppo preset, trains a critic)',
    ]);
    expect(chartQuietness(chart('selection'), [run('a', grpo)]).whole).toBe(true);
    expect(chartQuietness(chart('selection'), [run('a', { ...grpo, top_entropy_quantile: 0.2 })])).toEqual({
      whole: false,
      notes: [],
      lessons: [],
    });
    expect(chartQuietness(chart('critic'), [run('a', resolveConfig('ppo'))])).toEqual({
      whole: false,
      notes: [],
      lessons: [],
    });
  });

  it('say why clip ratios are always 0 with one update per batch, link the lesson, and leave them drawn with several', () => {
    const one = resolveConfig('grpo', { num_iterations: 1, num_minibatches: 1 });
    const q = chartQuietness(chart('clip'), [run('a', one)]);
    expect(q.whole).toBe(true);
    expect(q.lessons).toEqual(['clip-zero']);
    expect(q.notes[0]).toBe(
      'always 0 in this run: num_iterations = 1, num_minibatches = 1 (one update per batch, so every ratio rho = pi_theta / pi_old is 1 and nothing can clip)',
    );
    expect(chartQuietness(chart('clip'), [run('a', { ...one, num_iterations: 2 })])).toEqual({
      whole: false,
      notes: [],
      lessons: [],
    });
  });

  it('note the quiet metrics of a chart that still draws others (beta 0: kl off, approx_kl still measured)', () => {
    const c = resolveConfig('grpo', { beta: 0, num_iterations: 2 });
    expect(chartQuietness(chart('kl'), [run('a', c)])).toEqual({
      whole: false,
      notes: [
        'kl, kl/exact off in this run: beta = 0 (no reference model to measure against)',
        'distill/reverse_kl off in this run: teacher unset, teachers unset, self_distill = false (no teacher to distill from)',
      ],
      lessons: [],
    });
    // With one update per batch approx_kl is 0 too: every metric of the chart is quiet.
    expect(chartQuietness(chart('kl'), [run('a', { ...c, num_iterations: 1, num_minibatches: 1 })]).whole).toBe(true);
    // A null knob reads "unset".
    expect(
      chartQuietness(chart('lr'), [run('a', resolveConfig('grpo', { entropy_coef: 0, entropy_target: null }))]).notes,
    ).toEqual(['entropy_coef off in this run: entropy_coef = 0, entropy_target unset (no entropy bonus)']);
  });

  it('in an overlay, name the run it is off in, and draw the chart while any run has it on', () => {
    const fixed = resolveConfig('grpo', { curriculum: 'fixed' });
    const adaptive = resolveConfig('grpo', { curriculum: 'adaptive' });
    expect(
      chartQuietness(chart('curriculum'), [
        run('grpo · curriculum fixed', fixed),
        run('grpo · curriculum adaptive', adaptive),
      ]),
    ).toEqual({
      whole: false,
      notes: ['off in grpo · curriculum fixed: curriculum = fixed (every step samples the configured difficulty)'],
      lessons: [],
    });
    // Off in every run for the same reason: said once.
    expect(chartQuietness(chart('curriculum'), [run('x', fixed), run('y', fixed)])).toEqual({
      whole: true,
      notes: ['off in every run: curriculum = fixed (every step samples the configured difficulty)'],
      lessons: [],
    });
    expect(chartQuietness(chart('curriculum'), [])).toEqual({ whole: false, notes: [], lessons: [] });
  });

  it("link lessons that exist: the clip ratio's and approx_kl's 0 to clip-zero, the zero-signal and loss notes to dead-groups", () => {
    const ids = new Set(LESSONS.map((l) => l.id));
    for (const c of CHARTS) {
      if ('noteLesson' in c) expect(ids.has(c.noteLesson), `${c.id}: ${c.noteLesson}`).toBe(true);
      for (const q of 'quiet' in c ? c.quiet : [])
        if ('lesson' in q) expect(ids.has(q.lesson), `${c.id}: ${q.lesson}`).toBe(true);
    }
    expect(chart('fractions').noteLesson).toBe('dead-groups');
    expect(chart('loss').noteLesson).toBe('dead-groups');
    const one = resolveConfig('grpo', { num_iterations: 1, num_minibatches: 1, beta: 0.04 });
    expect(chartQuietness(chart('kl'), [run('a', one)]).lessons).toEqual(['clip-zero']);
  });

  it('read only knobs the config has, with values those knobs can take, and metrics on their own chart', () => {
    const fields = RL_FIELDS as Record<
      string,
      { kind: string; values?: readonly string[]; nullable?: boolean; min?: number; max?: number }
    >;
    for (const c of CHARTS) {
      for (const q of 'quiet' in c ? c.quiet : []) {
        for (const m of 'metrics' in q ? q.metrics : []) expect(metricSpec(m)?.chart, `${c.id}: ${m}`).toBe(c.id);
        for (const cond of q.when) {
          const f = fields[cond.knob];
          expect(f, `${c.id}: ${cond.knob}`).toBeDefined();
          for (const v of 'is' in cond ? cond.is : cond.not) {
            if (v === null)
              expect(f.nullable || f.kind === 'string' || f.kind === 'names', `${cond.knob} null`).toBe(true);
            else if (f.kind === 'enum') expect(f.values, `${cond.knob} ${v}`).toContain(v);
            else expect(typeof v, `${cond.knob} ${v}`).toBe(f.kind);
          }
        }
      }
    }
  });
});
