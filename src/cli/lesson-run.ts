// Runs a lesson headless: each of its runs as a RunSession (src/engine/run-session.ts), the driver the lab and the
// CLI use, from the policy its config names, with the lesson's seed and step budget, then evaluates its check. A run
// that diverges stops the lesson with the session's message; alerts go to `onAlert`.
// A run in mode 'sft' is a session in that mode: it fine-tunes the same start on demonstrations instead
// (src/engine/supervised-trainer.ts), evaluated the way the trainer evaluates. Used by `npm run lessons` and the
// lessons test. Not the page's path (the store launches lesson runs through the worker engine, in the same modes)
// and not the lessons themselves (catalog/).

import type { AssetLoader } from '../engine/start-policy';
import { NO_SINK, RunSession } from '../engine/run-session';
import type { Alert } from '../rl/observation/alerts';
import type { StepRecord } from '../schema/stream';
import type { TrainerBackend } from '../rl/algorithm/trainer';
import type { Lesson, LessonRun, LessonRunResult, LessonVerdict } from '../lessons/lesson';
import { collectRun, lessonRunConfig } from '../lessons/results';

export interface LessonRunOptions {
  seed: number;
  backend: TrainerBackend;
  assets: AssetLoader;
  /** Called after each run with its result (progress for the CLI). */
  onRun?: (result: LessonRunResult) => void;
  /** Called with each alert a run raises (src/rl/observation/alerts.ts), as the page draws them and the train CLI prints them. */
  onAlert?: (run: LessonRun, alert: Alert) => void;
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
    const backend = opts.backend;
    const session = await RunSession.open(
      { config, backend: backend.kind, divergence: 'stop', mode: run.mode ?? 'rl' },
      {
        assets: opts.assets,
        sink: NO_SINK,
        device: async () => (backend.kind === 'webgpu' ? backend.ctx : Promise.reject(new Error('no device'))),
      },
    );
    let result: LessonRunResult;
    try {
      const records: StepRecord[] = [];
      await session.trainToEnd({
        onStep: (o) => {
          records.push(...o.records);
          for (const a of o.alerts) opts.onAlert?.(run, a);
        },
      });
      result = collectRun(run, config, records);
    } finally {
      session.destroy();
    }
    runs.push(result);
    opts.onRun?.(result);
  }
  return { lesson, seed: opts.seed, runs, verdict: lesson.check.evaluate(runs) };
}
