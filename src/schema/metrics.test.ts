// The metric catalog's invariants (unique names, charts that exist, former names that do not shadow current ones,
// no empty text), its lookups, and docs/metrics.md being exactly what `npm run docs:metrics` writes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRICS_DOC_PATH, renderMetricsDoc } from './metrics-doc';
import {
  CHARTS,
  METRICS,
  chartOf,
  currentMetricName,
  metricSpec,
  orderMetricNames,
  type MetricName,
  type MetricSpec,
  type Metrics,
} from './metrics';

const specs: readonly MetricSpec[] = METRICS;

describe('metric catalog', () => {
  it('names each metric once', () => {
    const names = specs.map((m) => m.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('puts every metric on a chart that exists, and every band on its own chart', () => {
    const ids = new Set<string>(CHARTS.map((c) => c.id));
    for (const m of specs) expect(ids.has(m.chart), `${m.name}: chart ${m.chart}`).toBe(true);
    for (const c of CHARTS) {
      if (!('band' in c)) continue;
      expect(chartOf(c.band.mean), `${c.id} band mean`).toBe(c.id);
      expect(chartOf(c.band.std), `${c.id} band std`).toBe(c.id);
    }
  });

  it('draws a metric in nats only on an axis in nats, and nothing else there (a share on a KL axis misreads)', () => {
    const axis = new Map<string, string>(CHARTS.map((c) => [c.id, c.y]));
    for (const m of specs) {
      const y = axis.get(m.chart) ?? '';
      if (y === 'nats') expect(m.unit, `${m.name} on ${m.chart}`).toBe('nats');
      if (m.unit === 'nats') expect(y, `${m.name} on ${m.chart}`).toMatch(/\bnats\b/);
    }
  });

  it('gives every metric a doc, a formula, a healthy range and what its moves mean', () => {
    for (const m of specs) {
      for (const field of ['doc', 'formula', 'healthy', 'moves'] as const)
        expect(m[field].trim(), `${m.name}.${field}`).not.toBe('');
      if (m.when !== undefined) expect(m.when.trim(), `${m.name}.when`).not.toBe('');
    }
  });

  it('keeps former names unique, distinct from current names, and mapped to the metric that replaced them', () => {
    const current = new Set(specs.map((m) => m.name));
    const former = specs.flatMap((m) => (m.formerly ?? []).map((f) => ({ ...f, now: m.name })));
    const names = former.map((f) => f.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    for (const f of former) {
      expect(current.has(f.name), `${f.name} is still a current name`).toBe(false);
      expect(f.scale === undefined || (Number.isFinite(f.scale) && f.scale > 0), `${f.name}: scale ${f.scale}`).toBe(
        true,
      );
      expect(currentMetricName(f.name)).toEqual({ name: f.now, scale: f.scale ?? 1 });
    }
  });

  it('finds specs by exact name, by template instance (one path segment per placeholder), never by a former name', () => {
    expect(metricSpec('reward')?.name).toBe('reward');
    expect(metricSpec('rewards/format/mean')?.name).toBe('rewards/<fn>/mean');
    expect(metricSpec('timing_s/gen')?.name).toBe('timing_s/<phase>');
    expect(metricSpec('rewards/a/b/mean')).toBeUndefined();
    expect(metricSpec('rewards//mean')).toBeUndefined();
    expect(metricSpec('timing_s/step')).toBeUndefined(); // step_time's former name, though it fits timing_s/<phase>
    expect(metricSpec('no_such_metric')).toBeUndefined();
    expect(chartOf('clip_ratio/high_max')).toBe('clip');
    expect(chartOf('no_such_metric')).toBeUndefined();
  });

  it('maps former names with their scale and leaves other names alone', () => {
    expect(currentMetricName('perf/step_ms')).toEqual({ name: 'step_time', scale: 0.001 });
    expect(currentMetricName('sampling/logp_diff/max')).toEqual({
      name: 'sampling/sampling_logp_difference/max',
      scale: 1,
    });
    expect(currentMetricName('reward')).toEqual({ name: 'reward', scale: 1 });
    expect(currentMetricName('custom/thing')).toEqual({ name: 'custom/thing', scale: 1 });
  });

  it("orders names by catalog entry, a template's instances by name, unknown names last", () => {
    const names = [
      'zeta',
      'timing_s/gen',
      'rewards/format/mean',
      'entropy',
      'alpha',
      'rewards/accuracy/mean',
      'reward',
      'timing_s/adv',
      'reward',
    ];
    expect(orderMetricNames(names)).toEqual([
      'reward',
      'entropy',
      'rewards/accuracy/mean',
      'rewards/format/mean',
      'timing_s/adv',
      'timing_s/gen',
      'alpha',
      'zeta',
    ]);
  });

  it('types names and records by the catalog', () => {
    const m: Metrics = { reward: 1, 'rewards/format/mean': 0.5, 'timing_s/gen': 0.1 };
    const asRecord: Record<string, number> = m;
    const fn: string = 'accuracy';
    m[`rewards/${fn}/std`] = 0;
    expect(asRecord.reward).toBe(1);
    const template: MetricName = 'timing_s/update_actor';
    expect(metricSpec(template)?.chart).toBe('time');
    // @ts-expect-error: a former name is not a MetricName
    const former: MetricName = 'perf/step_ms';
    expect(metricSpec(former)).toBeUndefined();
    // @ts-expect-error: nor a key of Metrics
    expect(m['no_such_metric']).toBeUndefined();
  });
});

describe('docs/metrics.md', () => {
  it('is what `npm run docs:metrics` writes from the catalog', () => {
    const path = new URL(`../../${METRICS_DOC_PATH}`, import.meta.url);
    const onDisk = readFileSync(path, 'utf8');
    expect(
      onDisk === renderMetricsDoc(),
      `${METRICS_DOC_PATH} is out of date: run \`npm run docs:metrics\` and commit the result`,
    ).toBe(true);
  });

  it('has a section for every metric', () => {
    const doc = renderMetricsDoc();
    for (const m of specs) expect(doc).toContain(`### \`${m.name}\``);
  });
});
