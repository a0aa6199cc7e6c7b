// Runs a lesson headless: each of its runs through the same trainer the lab uses (src/rl/trainer.ts), from the
// policy its config names (loadStartPolicy), with the lesson's seed and step budget, then evaluates its check.
// Used by `npm run lessons` and the lessons test. Not the page's path (the store launches lesson runs through the
// worker engine) and not the lessons themselves (catalog/).

import { loadStartPolicy, type AssetLoader } from '../engine/start-policy';
import { resolveConfig, type RLConfig } from '../rl/config';
import { evalsOf, type StepRecord } from '../rl/stream';
import { Trainer, type TrainerBackend } from '../rl/trainer';
import { lessonRunOverrides, type Lesson, type LessonRun, type LessonRunResult, type LessonVerdict } from './lesson';

/** The config of one run of a lesson at `seed`: the preset, the run's knobs, the lesson's seed and step budget. */
export function lessonRunConfig(lesson: Lesson, run: LessonRun, seed: number): RLConfig {
  return resolveConfig(run.preset, { ...lessonRunOverrides(lesson, run), seed });
}

/** A run's records gathered the way checks read them. */
export function collectRun(run: LessonRun, config: RLConfig, records: readonly StepRecord[]): LessonRunResult {
  const out: LessonRunResult = { key: run.key, label: run.label, config, steps: [], updates: [], evals: [], groups: [] };
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

export interface LessonRunOptions {
  seed: number;
  backend: TrainerBackend;
  assets: AssetLoader;
  /** Called after each run with its result (progress for the CLI). */
  onRun?: (result: LessonRunResult) => void;
}

export interface LessonOutcome {
  lesson: Lesson;
  seed: number;
  runs: LessonRunResult[];
  verdict: LessonVerdict;
}

/** Runs every run of `lesson` at `opts.seed` and evaluates its check. */
export async function runLesson(lesson: Lesson, opts: LessonRunOptions): Promise<LessonOutcome> {
  const runs: LessonRunResult[] = [];
  for (const run of lesson.runs) {
    const config = lessonRunConfig(lesson, run, opts.seed);
    const start = await loadStartPolicy(config, opts.assets);
    const trainer = await Trainer.create({ config, init: start.init, tokenizer: start.tokenizer, backend: opts.backend });
    const records: StepRecord[] = [];
    try {
      for await (const r of trainer.run()) records.push(r);
    } finally {
      trainer.destroy();
    }
    const result = collectRun(run, config, records);
    runs.push(result);
    opts.onRun?.(result);
  }
  return { lesson, seed: opts.seed, runs, verdict: lesson.check.evaluate(runs) };
}
