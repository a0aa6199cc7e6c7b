// Runs a lesson headless: each of its runs through the same trainer the lab uses (src/rl/trainer.ts), from the
// policy its config names (loadStartPolicy), with the lesson's seed and step budget, then evaluates its check.
// A run in mode 'sft' fine-tunes the same start on demonstrations instead (src/rl/sft.ts) and is evaluated the way
// the trainer evaluates. Used by `npm run lessons` and the lessons test. Not the page's path (the store launches
// lesson runs through the worker engine) and not the lessons themselves (catalog/).

import { loadStartPolicy, type AssetLoader } from '../engine/start-policy';
import { taskOf, type RLConfig } from '../rl/config';
import { trainSft } from '../rl/sft';
import type { StepRecord } from '../rl/stream';
import { Trainer, type TrainerBackend } from '../rl/trainer';
import { loadLearnedReward } from '../engine/learned-reward';
import type { Lesson, LessonRun, LessonRunResult, LessonVerdict } from './lesson';
import { collectRun, lessonRunConfig } from './results';

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
    const learnedReward =
      config.reward_model !== null ? await loadLearnedReward(config, opts.assets, { policy: start.init.config, padId: start.tokenizer.padId, backend: opts.backend }) : undefined;
    const trainer = await Trainer.create({ config, init: start.init, tokenizer: start.tokenizer, backend: opts.backend, learnedReward });
    let result: LessonRunResult;
    try {
      result = run.mode === 'sft' ? await supervisedRun(run, config, trainer) : collectRun(run, config, await allRecords(trainer));
    } finally {
      trainer.destroy();
    }
    runs.push(result);
    opts.onRun?.(result);
  }
  return { lesson, seed: opts.seed, runs, verdict: lesson.check.evaluate(runs) };
}

/** Every record of the trainer's remaining steps. */
async function allRecords(trainer: Trainer): Promise<StepRecord[]> {
  const out: StepRecord[] = [];
  for await (const r of trainer.run()) out.push(r);
  return out;
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
  return { key: run.key, label: run.label, config, steps: [], updates: [], evals: [{ ...evaluation, step: config.steps }], groups: [] };
}
