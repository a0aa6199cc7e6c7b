// What a lesson is: one phenomenon of RL for language models made to happen on the lab's small models. A lesson is
// data in one file of src/lessons/catalog/ (docs/lessons.md says how to add one): the question the learner
// answers before running, the run or paired runs (configs over shipped warm starts; pairs share a seed), a step
// budget, narration bound to live values, what to look at, and a check over the runs' metrics that decides whether
// the phenomenon appeared this time. Not the runner (run.ts) and not the page (store/slices/lessons.ts).

import type { PresetName, RLConfig } from '../schema/config';
import type { EvalRecord, GroupRecord, Metrics, TokenPlane } from '../schema/stream';
import type { ChartId } from '../schema/metrics';

/** One run of a lesson: a preset and the knobs it changes, over a shipped warm start (`checkpoint`). */
export interface LessonRun {
  /** Key used in narration placeholders ({b:entropy}) and check values: a short identifier, e.g. 'a', 'grpo'. */
  key: string;
  /** What this run is, named by what differs ("one update per batch"); the run's name on the page. */
  label: string;
  preset: PresetName;
  /** Config fields over the preset; `seed` and `steps` are set by the lesson (pairs share the seed). */
  overrides: Partial<RLConfig>;
  /**
   * 'rl' (the default): the trainer. 'sft': supervised fine-tuning on the task's demonstrations from the same warm
   * start instead (the run session's mode 'sft', src/engine/supervised-trainer.ts), `steps` optimizer steps of
   * train_batch_size x num_generations demonstrations at learning_rate, evaluated on the trainer's schedule; its
   * steps carry only loss and learning_rate (no rollouts, so no sampled groups).
   */
  mode?: 'rl' | 'sft';
}

/** The prediction asked before running: choices with one right answer. */
export interface LessonQuestion {
  prompt: string;
  choices: readonly string[];
  /** Index of the right choice. */
  answer: number;
  /** Why it is right, shown once the learner has answered. */
  why: string;
}

/** What a run produced, as the check sees it. */
export interface LessonRunResult {
  key: string;
  label: string;
  config: RLConfig;
  /** Per rollout step (index i is step i + 1): the metrics of its last optimizer step. */
  steps: Metrics[];
  /** Every optimizer step's metrics, in order. */
  updates: Metrics[];
  /** Held-out evaluations in step order (step 0 is before training, when evaluated). */
  evals: EvalRecord[];
  /** Per rollout step: the sampled groups kept for the inspector (empty where none were kept). */
  groups: GroupRecord[][];
}

/** The check's verdict, with the numbers it was decided on. */
export interface LessonVerdict {
  observed: boolean;
  /** The measured values the verdict rests on (name -> value), shown to the learner. */
  values: Record<string, number>;
  /** One sentence with the numbers: what was seen. */
  summary: string;
}

export interface LessonCheck {
  /** The claim in words, e.g. "run a's clip_ratio/region_mean is exactly 0 at every step; run b's is > 0 on most". */
  claim: string;
  evaluate(runs: readonly LessonRunResult[]): LessonVerdict;
  /** Why the phenomenon can fail to appear in a given run (shown when it did not). */
  whyNot: string;
}

export interface Lesson {
  /** URL id (?lesson=<id>), kebab-case. */
  id: string;
  title: string;
  /** Where the claim comes from, in words (papers, issue threads), shown in the lesson. */
  source: string;
  question: LessonQuestion;
  /** One run, or paired runs sharing a seed. */
  runs: readonly LessonRun[];
  /** Rollout steps per run. */
  steps: number;
  /** What to look at before the numbers arrive. */
  look: string;
  /**
   * Sentences bound to live values: {metric} is the first run's latest value, {key:metric} a named run's, e.g.
   * "clip_ratio/region_mean is {a:clip_ratio/region_mean}". Shown while and after the runs go.
   */
  narration: readonly string[];
  /**
   * Charts and inspector planes to highlight; `passAtK`: the held-out pass@k chart too (a lesson whose `look` names
   * pass@k must set it, so its "look here" reaches it).
   */
  highlight: { charts: readonly ChartId[]; planes: readonly TokenPlane[]; passAtK?: boolean };
  check: LessonCheck;
  /** The closing explanation, shown after the check. */
  explain: string;
  /** What to try next: one knob. */
  next: string;
}

/** The seed a lesson's runs share when the learner has not asked for another. */
export const LESSON_DEFAULT_SEED = 0;

/** A run's config fields over its preset, with the lesson's step budget (the seed is the caller's). */
export function lessonRunOverrides(lesson: Pick<Lesson, 'steps'>, run: LessonRun): Partial<RLConfig> {
  return { ...run.overrides, steps: lesson.steps };
}
