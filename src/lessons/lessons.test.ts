// The lessons: every catalog file is listed, every lesson is well formed (ids, questions, narration placeholders
// naming real runs and catalog metrics, highlighted charts), and a chosen sample of the lessons (CI_SAMPLE) shows its
// phenomenon on seed 0 at the lesson's own step budget, through the real trainer on Dawn (SwiftShader in CI). Every
// lesson's check, on 5 seeds, is `npm run lessons -- --check` (docs/tests.md, "Tiers").

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ASSETS } from '../engine/node-assets';
import { useNodeDevice } from '../testing/test-device';
import { validateConfig } from '../schema/config';
import { CHARTS, metricSpec } from '../schema/metrics';
import { LESSONS, lessonById, renderNarration } from './index';
import type { Lesson } from './lesson';
import { narrationPlaceholders } from './narration';
import { lessonsTable } from './table';
import { lessonRunConfig } from './results';
import { runLesson } from '../cli/lesson-run';

describe('the lesson catalog', () => {
  it('lists every file of catalog/ once, with unique kebab-case ids', () => {
    const files = readdirSync(new URL('./catalog/', import.meta.url)).filter((f) => f.endsWith('.ts'));
    expect(files.map((f) => f.replace(/\.ts$/, '')).sort()).toEqual(LESSONS.map((l) => l.id).sort());
    expect(new Set(LESSONS.map((l) => l.id)).size).toBe(LESSONS.length);
    for (const l of LESSONS) expect(l.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it.each(LESSONS.map((l) => [l.id, l] as const))('%s is well formed', (_id, l) => {
    expect(lessonById(l.id)).toBe(l);
    expect(l.question.choices.length).toBeGreaterThanOrEqual(2);
    expect(l.question.answer).toBeGreaterThanOrEqual(0);
    expect(l.question.answer).toBeLessThan(l.question.choices.length);
    expect(l.runs.length).toBeGreaterThanOrEqual(1);
    expect(new Set(l.runs.map((r) => r.key)).size).toBe(l.runs.length);
    expect(new Set(l.runs.map((r) => r.label)).size).toBe(l.runs.length);
    for (const r of l.runs) expect(() => validateConfig(lessonRunConfig(l, r, 0))).not.toThrow();
    for (const [key, metric] of narrationPlaceholders(l)) {
      expect(
        l.runs.map((r) => r.key),
        `narration names run ${key}`,
      ).toContain(key);
      expect(metricSpec(metric), `narration names metric ${metric}`).toBeDefined();
    }
    const chartIds: string[] = CHARTS.map((c) => c.id);
    for (const c of l.highlight.charts) expect(chartIds).toContain(c);
    // Every chart the lesson's text names has its "look here": the pass@k chart too.
    if (/pass@k/.test(l.look)) expect(l.highlight.passAtK, `${l.id} names pass@k`).toBe(true);
    for (const text of [l.title, l.source, l.look, l.explain, l.next, l.check.claim, l.check.whyNot])
      expect(text.trim().length).toBeGreaterThan(0);
  });

  it('narration prints live values and "…" for values not there yet', () => {
    const l = lessonById('clip-zero')!;
    expect(
      renderNarration('{a:clip_ratio/region_mean} and {b:approx_kl}', l, { a: { 'clip_ratio/region_mean': 0 } }),
    ).toBe('0 and …');
    expect(renderNarration('{reward}', l, { a: { reward: 0.123456 } })).toBe('0.123');
  });
});

describe('docs/lessons.md', () => {
  it("docs/lessons.md carries the lessons' table as LESSONS writes it (paste lessonsTable()'s output when it differs)", () => {
    const text = readFileSync(new URL('../../docs/lessons.md', import.meta.url), 'utf8');
    const list = text.slice(text.indexOf('## The lessons'));
    expect(list).toContain(lessonsTable());
  });
});

/**
 * The lessons whose checks the GPU tier runs, chosen rather than drawn:
 * - together they run every preset, run mode, sampler precision, reward source and teacher the catalog uses (PPO's
 *   critic: critic-vs-group; REINFORCE++: kl-estimators; Dr. GRPO: length-bias; SFT: rl-vs-sft; a bf16 sampler:
 *   sampler-mismatch; a learned reward: learned-reward; a distillation teacher: distill-vs-rl), which the first test
 *   below holds as the catalog grows;
 * - they hold each kind of check: exact facts at every step (sampler-mismatch, kl-estimators, length-bias), a
 *   statistic held over a run (critic-vs-group), two runs compared on held-out pass@k (rl-vs-sft) and a trend over
 *   the run against another run's (learned-reward).
 * The others are checked elsewhere: clip-zero and reward-hacking run to their verdict on seed 0 in the browser tier
 * (e2e/lessons.spec.ts); first-run's phenomenon, GRPO from the copy warm start raising accuracy, is
 * src/rl/algorithm/learning.test.ts's; entropy-collapse, dead-groups and weak-vs-strong-prior are GRPO runs with checks of the
 * kinds above. All of them, on 5 seeds, are `npm run lessons -- --check`.
 */
const CI_SAMPLE: readonly string[] = [
  'sampler-mismatch',
  'kl-estimators',
  'length-bias',
  'critic-vs-group',
  'rl-vs-sft',
  'learned-reward',
  'distill-vs-rl',
];

/** What kinds of run a lesson makes: each run's preset, mode, sampler precision, reward source and teacher. */
function runKinds(lessons: readonly Lesson[]): string[] {
  const kinds = lessons.flatMap((l) =>
    l.runs.flatMap((r) => {
      const c = lessonRunConfig(l, r, 0);
      return [
        `preset ${r.preset}`,
        `mode ${r.mode ?? 'rl'}`,
        `sampler ${c.rollout_dtype}`,
        `reward ${c.reward_model ? 'learned' : 'functions'}`,
        `teacher ${c.teacher === null ? 'none' : 'checkpoint'}`,
      ];
    }),
  );
  return [...new Set(kinds)].sort();
}

describe('a sample of the lessons shows its phenomenon on seed 0 (CI_SAMPLE, each at its own steps; all of them on 5 seeds: npm run lessons -- --check)', () => {
  const gpu = useNodeDevice();
  // A limit, not a measurement: a lesson's runs take minutes on SwiftShader, past the suite's 2-minute default.
  const LESSON_RUN_LIMIT_MS = 20 * 60_000;
  const sample = CI_SAMPLE.map((id) => lessonById(id));

  it('samples known lessons that together run every kind of run in the catalog', () => {
    expect(sample.every((l) => l !== undefined)).toBe(true);
    expect(new Set(CI_SAMPLE).size).toBe(CI_SAMPLE.length);
    expect(runKinds(sample as Lesson[])).toEqual(runKinds(LESSONS));
  });
  it.each(sample.filter((l) => l !== undefined).map((l) => [l.id, l] as const))(
    '%s',
    async (_id, lesson) => {
      const o = await runLesson(lesson, { seed: 0, backend: { kind: 'webgpu', ctx: gpu.ctx }, assets: PUBLIC_ASSETS });
      expect(o.verdict.observed, o.verdict.summary).toBe(true);
    },
    LESSON_RUN_LIMIT_MS,
  );
});
