// A lesson's runs as its check reads them: the config of one run at a seed, and a run's step records gathered into
// a LessonRunResult. Pure functions of the config and the records, shared by the headless runner (run.ts) and the
// page (store/lesson-results.ts), so both hand a check the same thing; no trainer, no engine, no GPU.

import { resolveConfig, type RLConfig } from '../schema/config';
import { evalsOf, type StepRecord } from '../schema/stream';
import { lessonRunOverrides, type Lesson, type LessonRun, type LessonRunResult } from './lesson';

/** The config of one run of a lesson at `seed`: the preset, the run's knobs, the lesson's seed and step budget. */
export function lessonRunConfig(lesson: Lesson, run: LessonRun, seed: number): RLConfig {
  return resolveConfig(run.preset, { ...lessonRunOverrides(lesson, run), seed });
}

/** A run's records gathered the way checks read them. */
export function collectRun(run: LessonRun, config: RLConfig, records: readonly StepRecord[]): LessonRunResult {
  const out: LessonRunResult = {
    key: run.key,
    label: run.label,
    config,
    steps: [],
    updates: [],
    evals: [],
    groups: [],
  };
  for (const r of records) {
    out.updates.push(r.metrics);
    out.evals.push(...evalsOf(r));
    if (r.update === r.updates - 1) {
      out.steps.push(r.metrics);
      out.groups.push(r.groups ?? []);
    }
  }
  return out;
}
