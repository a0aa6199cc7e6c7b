// The metric catalog against the trainer itself: every preset (plus one run with evaluation, overlong shaping and
// two passes per batch, so the conditional metrics appear) runs on the CPU learner, and the names it emits must be
// exactly the catalog's: no emitted name the catalog lacks, no catalog entry nothing emits, every metric without a
// `when` in every record, and every per-rollout metric the same on each optimizer step of its rollout step.

import { beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../cli/files';
import { METRICS, metricSpec, type MetricSpec } from './metrics';
import { PRESET_NAMES, resolveConfig, type PresetName, type RLConfig } from './config';
import type { StepRecord } from './stream';
import { runToEnd } from '../testing/run-to-end';

const warm = await loadCheckpointDir(new URL('../../public/checkpoints/copy', import.meta.url).pathname);

/** The smallest setting on the copy warm start: 2 prompts x 4 completions. */
function small(preset: PresetName, over: Partial<RLConfig> = {}): RLConfig {
  return resolveConfig(preset, {
    task: 'copy',
    difficulty: 3,
    train_batch_size: 2,
    num_generations: 4,
    steps: 1,
    eval_every: 0,
    seed: 7,
    ...over,
  });
}

const RUNS: { label: string; config: RLConfig }[] = [
  ...PRESET_NAMES.map((preset) => ({ label: preset, config: small(preset) })),
  {
    label: 'grpo with evaluation, overlong shaping, weight statistics and num_iterations 2',
    config: small('grpo', {
      steps: 2,
      eval_every: 1,
      eval_items: 2,
      eval_num_generations: 2,
      overlong_buffer_enable: true,
      num_iterations: 2,
      weight_stats_every: 1,
    }),
  },
  {
    label: 'grpo with stale rollouts (max_staleness 1), so the staleness and mismatch metrics appear',
    config: small('grpo', { steps: 2, max_staleness: 1 }),
  },
  // The distillation metrics, from the teacher that needs no second model: the policy with the demonstration.
  { label: 'grpo with self-distillation', config: small('grpo', { self_distill: true }) },
  // Multi-teacher distillation's per-teacher metric: a prompt list whose rows name teacher a, scored by the warm start.
  {
    label: 'grpo with teachers by teacher_id',
    config: small('grpo', {
      task: 'prompts',
      prompts:
        '{"prompt": "ab", "answer": "ab", "teacher_id": "a"}\n{"prompt": "cd", "answer": "cd", "teacher_id": "a"}',
      teachers: { a: 'copy' },
      difficulty: null,
    }),
  },
];

const records = (config: RLConfig) => {
  const init = { config: warm.ck.config, params: warm.ck.params };
  const teachers = Object.fromEntries(Object.keys(config.teachers ?? {}).map((id) => [id, { ...init, source: id }]));
  return runToEnd({ config, init, tokenizer: warm.tok, backend: { kind: 'cpu' }, teachers });
};

describe('metric catalog: the names the trainer emits', () => {
  const runs: { label: string; records: StepRecord[] }[] = [];
  const specs: readonly MetricSpec[] = METRICS;

  beforeAll(async () => {
    for (const run of RUNS) runs.push({ label: run.label, records: await records(run.config) });
  }, 600_000);

  const emitted = () => new Set(runs.flatMap((r) => r.records.flatMap((rec) => Object.keys(rec.metrics))));

  it('are all in the catalog', () => {
    const unknown = [...emitted()].filter((n) => !metricSpec(n)).sort();
    expect(unknown, 'emitted but not in src/schema/metrics.ts (add them to METRICS)').toEqual([]);
  });

  it('cover every catalog entry (a template by at least one instance)', () => {
    const names = [...emitted()];
    const unused = specs.filter((m) => !names.some((n) => metricSpec(n) === m)).map((m) => m.name);
    expect(unused, 'in the catalog but emitted by no run').toEqual([]);
  });

  it('include every metric without a `when` in every record', () => {
    const always = specs.filter((m) => m.when === undefined && !m.name.includes('<')).map((m) => m.name);
    const missing: string[] = [];
    for (const run of runs) {
      for (const rec of run.records) {
        for (const name of always)
          if (!(name in rec.metrics)) missing.push(`${run.label}, optimizer step ${rec.optimizerStep}: ${name}`);
      }
    }
    expect(missing, 'absent from records although the catalog gives no `when`').toEqual([]);
  });

  it('repeat each per-rollout metric unchanged on the optimizer steps of its rollout step', () => {
    const changed: string[] = [];
    for (const run of runs) {
      const byStep = new Map<number, StepRecord[]>();
      for (const r of run.records) byStep.set(r.step, [...(byStep.get(r.step) ?? []), r]);
      for (const [step, recs] of byStep) {
        for (const [name, value] of Object.entries(recs[0].metrics)) {
          if (metricSpec(name)?.per !== 'rollout') continue;
          if (recs.some((r) => !Object.is((r.metrics as Record<string, number>)[name], value)))
            changed.push(`${run.label}, step ${step}: ${name}`);
        }
      }
    }
    expect(
      runs.some((r) => r.records.length > new Set(r.records.map((x) => x.step)).size),
      'some run has several optimizer steps per rollout step',
    ).toBe(true);
    expect(changed, "per 'rollout' in the catalog, but the value differs between optimizer steps").toEqual([]);
  });
});
