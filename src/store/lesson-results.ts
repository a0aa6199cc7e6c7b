// A lesson's runs as its check sees them, rebuilt from what the page holds: each run's metric table, evaluations
// and cached sampled groups turned back into the trainer's step records, then gathered by the lessons layer's own
// collectRun (lessons/results.ts), so the page and the headless runner (cli/lesson-run.ts) hand a check the same LessonRunResult. Pure
// functions of store data; no React, no engine.

import { collectRun, lessonRunConfig } from '../lessons/results';
import type { Lesson, LessonRunResult } from '../lessons';
import type { GroupRecord, StepRecord } from '../schema/stream';
import type { RunView } from './slices/charts';

/**
 * A run's step records from its view: one per table row (one optimizer step), with its index among its rollout
 * step's rows (update of updates; epoch and minibatch follow from it, epoch-major), the evaluations on the last
 * record of their step (step 0 on the first record), and the sampled groups of a step where the page has them.
 */
export function viewRecords(
  view: RunView,
  numMinibatches: number,
  groupsAt: (step: number) => GroupRecord[] | undefined,
): StepRecord[] {
  const t = view.table;
  const names = t.names;
  const columns = names.map((name) => t.column(name)!);
  const steps = t.step;
  const out: StepRecord[] = [];
  for (let first = 0; first < t.length; ) {
    let end = first;
    while (end < t.length && steps[end] === steps[first]) end++;
    for (let row = first; row < end; row++) {
      const metrics: Record<string, number> = {};
      names.forEach((name, c) => {
        const v = columns[c][row];
        if (!Number.isNaN(v)) metrics[name] = v;
      });
      const update = row - first;
      out.push({
        kind: 'step',
        step: steps[row],
        optimizerStep: t.optimizerStep[row],
        update,
        updates: end - first,
        epoch: Math.floor(update / numMinibatches),
        minibatch: update % numMinibatches,
        metrics,
      });
    }
    const groups = groupsAt(steps[first]);
    if (groups) out[end - 1].groups = groups;
    first = end;
  }
  for (const e of view.evals) {
    if (e.step === 0) {
      if (out[0]) out[0].initialEval = e;
      continue;
    }
    const last = out.findLast((r) => r.step === e.step);
    if (last) last.eval = e;
  }
  return out;
}

/** Where a lesson's runs are on the page: the engine's run id of each run launched so far (by run key), and the seed. */
export interface LessonRunsOnPage {
  seed: number;
  runIds: Readonly<Record<string, string>>;
}

/** The results of the lesson's runs launched so far, in the lesson's order, from their views on the page. */
export function lessonRunResults(
  lesson: Lesson,
  on: LessonRunsOnPage,
  views: Readonly<Record<string, RunView>>,
  groupsAt: (runId: string, step: number) => GroupRecord[] | undefined,
): LessonRunResult[] {
  const out: LessonRunResult[] = [];
  for (const run of lesson.runs) {
    const runId = on.runIds[run.key];
    const view = runId === undefined ? undefined : views[runId];
    if (!view) continue;
    const config = lessonRunConfig(lesson, run, on.seed);
    out.push(
      collectRun(
        run,
        config,
        viewRecords(view, config.num_minibatches, (step) => groupsAt(runId, step)),
      ),
    );
  }
  return out;
}
