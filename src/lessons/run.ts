// Runs a lesson headless: each of its runs as a RunSession (src/engine/run-session.ts), the driver the lab and the
// CLI use, from the policy its config names, with the lesson's seed and step budget, then evaluates its check. A run
// that diverges stops the lesson with the session's message; alerts go to `onAlert`.
// A run in mode 'sft' fine-tunes the same start on demonstrations instead (src/rl/sft.ts) and is evaluated the way
// the trainer evaluates. Used by `npm run lessons` and the lessons test. Not the page's path (the store launches
// lesson runs through the worker engine) and not the lessons themselves (catalog/).

import type { AssetLoader } from '../engine/start-policy';
import { NO_SINK, RunSession } from '../engine/run-session';
import type { Alert } from '../rl/alerts';
import { taskOf, type RLConfig } from '../rl/config';
import { trainSft } from '../rl/sft';
import type { StepRecord } from '../rl/stream';
import type { Trainer, TrainerBackend } from '../rl/trainer';
import type { Lesson, LessonRun, LessonRunResult, LessonVerdict } from './lesson';
import { collectRun, lessonRunConfig } from './results';

export interface LessonRunOptions {
  seed: number;
  backend: TrainerBackend;
  assets: AssetLoader;
  /** Called after each run with its result (progress for the CLI). */
  onRun?: (result: LessonRunResult) => void;
  /** Called with each alert a run raises (src/rl/alerts.ts), as the page draws them and the train CLI prints them. */
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
      { config, backend: backend.kind, divergence: 'stop' },
      {
        assets: opts.assets,
        sink: NO_SINK,
        device: async () => (backend.kind === 'webgpu' ? backend.ctx : Promise.reject(new Error('no device'))),
      },
    );
    let result: LessonRunResult;
    try {
      if (run.mode === 'sft') result = await supervisedRun(run, config, session.trainer.trainer!);
      else {
        const records: StepRecord[] = [];
        await session.trainToEnd({
          onStep: (o) => {
            records.push(...o.records);
            for (const a of o.alerts) opts.onAlert?.(run, a);
          },
        });
        result = collectRun(run, config, records);
      }
    } finally {
      session.destroy();
    }
    runs.push(result);
    opts.onRun?.(result);
  }
  return { lesson, seed: opts.seed, runs, verdict: lesson.check.evaluate(runs) };
}

/**
 * A run in mode 'sft': `config.steps` supervised steps on the task's demonstrations, each of train_batch_size x
 * num_generations sequences (as many as an RL step samples), peak learning_rate without warmup (sft.ts decays it to a
 * tenth over the run), with the config's weight decay and gradient clip, on the trainer's policy; then the
 * trainer's held-out evaluation, recorded at step `config.steps`.
 */
async function supervisedRun(run: LessonRun, config: RLConfig, trainer: Trainer): Promise<LessonRunResult> {
  const task = taskOf(config);
  const sft = trainSft(trainer.learner.policy, task, trainer.tokenizer, {
    steps: config.steps,
    batchSize: config.train_batch_size * config.num_generations,
    lr: config.learning_rate,
    warmup: 0,
    weightDecay: config.weight_decay,
    maxGradNorm: config.max_grad_norm > 0 ? config.max_grad_norm : undefined,
    seed: config.seed,
    logEvery: config.steps,
  });
  for await (const _progress of sft) {
    // Only the last step logs; the loss is not a lesson metric.
  }
  const evaluation = await trainer.evaluate();
  return {
    key: run.key,
    label: run.label,
    config,
    steps: [],
    updates: [],
    evals: [{ ...evaluation, step: config.steps }],
    groups: [],
  };
}
