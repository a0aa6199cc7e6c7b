// The prompts an exported experiment trains and evaluates on, drawn from the lab's own task at the config's
// difficulty and seed, in the rows TRL (datasets-style JSONL: prompt, answer) and verl (data_source, prompt as chat
// messages, reward_model.ground_truth) read; under multi-teacher distillation each row names its teacher in TRL's
// teacher_id column. Plain text out; not the verifiers (the reward modules are in render.ts).

import { derive, taskOf, type RLConfig } from '../schema/config';
import { teacherIdFor } from '../schema/distillation';
import { Rng } from '../core/random';
import type { Split, TaskItem } from '../tasks';

/** Training prompts written at most: the run's steps * train_batch_size, capped so a long run's export stays small. */
export const MAX_TRAIN_ROWS = 50_000;

/** The seed offsets of the two splits, so train and held-out draws are independent streams of the config's seed. */
const SPLIT_SEED: Readonly<Record<Split, number>> = { train: 0, heldout: 0x5eed };

/** How many rows each split of the export has: the run's prompts (capped), and eval_items held-out prompts. */
export function rowCounts(c: RLConfig): Record<Split, number> {
  return { train: Math.min(c.steps * c.train_batch_size, MAX_TRAIN_ROWS), heldout: c.eval_items };
}

/** `n` items of a split of the config's task at its difficulty, deterministic in the config's seed. */
export function exportItems(c: RLConfig, split: Split, n: number): TaskItem[] {
  const task = taskOf(c, derive(c).difficulty);
  const rng = new Rng((c.seed + SPLIT_SEED[split]) >>> 0);
  return Array.from({ length: n }, () => task.sample(rng, split));
}

/**
 * Each item's teacher under multi-teacher distillation (`teachers`): its prompt's teacher_id, or the default
 * teacher's id ('teacher') for a prompt with none; null for every item without teachers.
 */
export function exportTeacherIdOf(c: RLConfig): (item: TaskItem) => string | null {
  if (c.teachers === null) return () => null;
  const task = taskOf(c, derive(c).difficulty);
  return (item) => teacherIdFor(task.teacherId(item), c);
}

/**
 * The datasets-style JSONL row TRL and OpenRLHF read: the prompt and the canonical answer (the reward's label), and
 * the row's teacher under multi-teacher distillation in TRL's `teacher_id` column (its AsyncDistillationTrainer
 * routes each row to the teacher_server_urls entry it names).
 */
export function plainRow(
  item: TaskItem,
  teacherId: string | null = null,
): { prompt: string; answer: string; teacher_id?: string } {
  return teacherId === null
    ? { prompt: item.prompt, answer: item.answer }
    : { prompt: item.prompt, answer: item.answer, teacher_id: teacherId };
}

/** verl's row layout (RLHFDataset): data_source, prompt as chat messages, reward_model.ground_truth; extra_info carries the prompt text for the reward function. */
export function verlRow(c: RLConfig, item: TaskItem, split: Split, index: number) {
  return {
    data_source: `rl-lab/${c.task}`,
    prompt: [{ role: 'user', content: item.prompt }],
    ability: c.task,
    reward_model: { style: 'rule', ground_truth: item.answer },
    extra_info: { split, index, prompt: item.prompt },
  };
}

/** Rows as JSONL text (one JSON object per line, newline-terminated). */
export function jsonl(rows: readonly unknown[]): string {
  return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
}
