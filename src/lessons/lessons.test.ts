// The lessons: every catalog file is listed, every lesson is well formed (ids, questions, narration placeholders
// naming real runs and catalog metrics, highlighted charts), and every lesson's check observes its phenomenon on
// seed 0 at the lesson's own step budget, through the real trainer on Dawn (SwiftShader in CI). The 5-seed
// verdicts come from `npm run lessons -- --check`.

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ASSETS } from '../engine/node-assets';
import { useNodeDevice } from '../testing/test-device';
import { validateConfig } from '../rl/config';
import { CHARTS, metricSpec } from '../schema/metrics';
import { LESSONS, lessonById, renderNarration } from './index';
import { narrationPlaceholders } from './narration';
import { lessonsTable } from './table';
import { lessonRunConfig } from './results';
import { runLesson } from './run';

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
 * Lessons checked here at fewer steps than their own, where seed 0 shows the phenomenon well before the end (the
 * learning rate is constant, so the first n steps of the lesson's run are exactly a run of n steps; `npm run lessons
 * -- --check` checks 5 seeds at the lesson's own steps). first-run, seed 0, the last 15 steps' mean reward over the
 * first 15's (the check asks +0.1): +0.15 at 50 steps, +0.26 at 100, +0.34 at 150; so 100 steps, at 2.6 times the
 * threshold, and a third of the lesson's run less in CI.
 */
const CI_STEPS: Readonly<Record<string, number>> = { 'first-run': 100 };

describe('every lesson shows its phenomenon on seed 0 (the budget CI affords: each lesson at its own steps or CI_STEPS, one seed)', () => {
  const gpu = useNodeDevice();
  // A limit, not a measurement: first-run's steps take minutes on SwiftShader, past the suite's 2-minute default.
  const LESSON_RUN_LIMIT_MS = 20 * 60_000;
  it('runs no lesson past its own steps', () => {
    for (const [id, steps] of Object.entries(CI_STEPS)) expect(steps).toBeLessThan(lessonById(id)?.steps ?? 0);
  });
  it.each(LESSONS.map((l) => [l.id, l] as const))(
    '%s',
    async (_id, lesson) => {
      const steps = CI_STEPS[lesson.id] ?? lesson.steps;
      const o = await runLesson(
        { ...lesson, steps },
        { seed: 0, backend: { kind: 'webgpu', ctx: gpu.ctx }, assets: PUBLIC_ASSETS },
      );
      expect(o.verdict.observed, o.verdict.summary).toBe(true);
    },
    LESSON_RUN_LIMIT_MS,
  );
});
