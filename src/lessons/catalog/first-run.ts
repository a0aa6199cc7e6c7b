// Lesson first-run: the experiment the page opens on. GRPO on the copy warm start ("copy:abc=" -> "abc"), long
// enough for the reward to climb visibly, with held-out accuracy measured before training (step 0) and after, so
// "did RL help?" has an answer. The page's default experiment (LAB_DEFAULT in store/slices/config.ts) is this run.
// Addition was tried first: its 2-digit warm start barely moves in 150 steps at any temperature and learning rate.

import type { Lesson, LessonRunResult } from '../lesson';
import { firstLast, narrationNumber, runOf, series } from '../narration';

/** Steps at each end of the run whose mean rewards the check compares. */
const WINDOW = 15;
/** How much the last window's mean reward must exceed the first's. */
const MIN_GAIN = 0.1;

/** Greedy held-out accuracy of the first and the last evaluation (step 0 and the end when the run evaluated both). */
function heldOut(run: LessonRunResult): {
  start?: { step: number; accuracy: number };
  end?: { step: number; accuracy: number };
} {
  const first = run.evals[0];
  const last = run.evals[run.evals.length - 1];
  return { start: first, end: last !== first ? last : undefined };
}

const percent = (x: number) => `${Math.round(x * 100)}%`;

export const firstRun: Lesson = {
  id: 'first-run',
  title: 'Your first RL run',
  source:
    'GRPO (DeepSeekMath, Shao et al. 2024) on a small model that already half-knows the task (a supervised warm start that copies a 3-letter string right about half the time): sample a group of answers per prompt, reward the right ones, and push the policy toward the answers that beat their group (docs/algorithms.md#advantage-estimators).',
  question: {
    prompt:
      'The model is asked to copy a short string ("copy:abc=" -> "abc") and starts from a warm start that gets it right about half the time. RL rewards only right answers: it never shows the model a solution. After 150 steps, what happens to the training reward and to accuracy on held-out strings it never trains on?',
    choices: [
      'Nothing: without solutions to copy, the model cannot learn',
      'The reward rises, but held-out accuracy stays where it was (it only memorizes the training prompts)',
      'The reward rises, and held-out accuracy rises with it',
    ],
    answer: 2,
    why: 'Sampling finds right answers the model already gives sometimes; the group baseline makes those completions the ones whose probability goes up. What gets reinforced is a way of answering, not a list of prompts, so accuracy on held-out problems rises too.',
  },
  runs: [
    {
      key: 'a',
      label: 'GRPO from the copy warm start',
      preset: 'grpo',
      overrides: {
        // 4 prompts x 8 completions keeps a step cheap; temperature 0.7 makes most groups mix right and wrong answers.
        task: 'copy',
        difficulty: 3,
        checkpoint: 'copy',
        temperature: 0.7,
        learning_rate: 1e-3,
        train_batch_size: 4,
        eval_every: 50,
        eval_items: 64,
        eval_num_generations: 4,
      },
    },
  ],
  steps: 150,
  look: 'Watch the Reward and accuracy chart climb, and compare the held-out pass@k curve at step 0 (before training) with the last one.',
  narration: [
    'The reward is {a:reward} now; training accuracy (sampled answers that are right) is {a:accuracy}.',
    'Each step samples a group of answers per prompt; reward_std is {a:reward_std}: where a group mixes right and wrong answers there is a signal to learn from.',
  ],
  highlight: { charts: ['reward', 'entropy'], planes: ['advantage'], passAtK: true },
  check: {
    claim: `the mean reward of the last ${WINDOW} steps is at least ${MIN_GAIN} above the mean of the first ${WINDOW}`,
    evaluate(runs) {
      const a = runOf(runs, 'a');
      const { first, last } = firstLast(series(a, 'reward'), WINDOW);
      const { start, end } = heldOut(a);
      const observed = last >= first + MIN_GAIN;
      const values: Record<string, number> = {
        [`reward, first ${WINDOW} steps`]: first,
        [`reward, last ${WINDOW} steps`]: last,
      };
      if (start) values[`held-out accuracy, step ${start.step}`] = start.accuracy;
      if (end) values[`held-out accuracy, step ${end.step}`] = end.accuracy;
      const heldOutText =
        start && end
          ? ` Held-out greedy accuracy went from ${percent(start.accuracy)} at step ${start.step} to ${percent(end.accuracy)} at step ${end.step}.`
          : '';
      return {
        observed,
        values,
        summary: `The mean reward went from ${narrationNumber(first)} over the first ${WINDOW} steps to ${narrationNumber(last)} over the last ${WINDOW}.${heldOutText}`,
      };
    },
    whyNot:
      'RL can only reinforce right answers it samples: a seed whose early batches hold few groups with both right and wrong answers gives little signal, and a learning rate too small for the step budget moves the policy too slowly to show within 150 steps.',
  },
  explain:
    'No solution was ever shown: the only signal was which of the sampled answers were right. GRPO compares each answer with the others of its group, so a right answer among wrong ones gets a positive advantage and becomes more likely, a wrong one among right ones less. Held-out accuracy (problems never trained on) is the test that this is learning a skill rather than memorizing prompts.',
  next: "Set temperature to 0.3: the group's answers agree more often, fewer groups mix right and wrong, and the reward climbs more slowly.",
};
