// Registry of the verifiable environments: names, factories, and the union alphabet for the tokenizer.
// Not a place for task logic (each task has its own file) or for curriculum policy (that lives in src/rl/).

import { addition, multiplication } from './arithmetic';
import { bandit } from './bandit';
import { copy, reverse } from './copy';
import { count } from './count';
import { countdown } from './countdown';
import { knightsKnaves } from './knights-knaves';
import { parity } from './parity';
import { sort } from './sort';
import type { Task, TaskFactory } from './task';

export type { Check, DifficultyRange, MetaValue, RewardWeights, Split, Task, TaskFactory, TaskItem, Verdict, VerdictParts } from './task';
export { HELDOUT_MODULUS, hashString, splitOfKey } from './task';
export { evaluateExpression, parseExpression, Rational } from './expression';
export { judgeCountdown, solveCountdown } from './countdown';
export { banditArmRewards } from './bandit';
export { solveKnightsKnaves, statementHolds } from './knights-knaves';

/** Every task name, in picker order (simplest first). */
export const taskNames = ['bandit', 'copy', 'reverse', 'sort', 'parity', 'count', 'addition', 'multiplication', 'countdown', 'knights_knaves'] as const;

/** A registered task name. */
export type TaskName = (typeof taskNames)[number];

/** Factories by name (difficulty not yet chosen): descriptions and difficulty ranges for the UI. */
export const taskFactories: Readonly<Record<TaskName, TaskFactory>> = {
  bandit,
  copy,
  reverse,
  sort,
  parity,
  count,
  addition,
  multiplication,
  countdown,
  knights_knaves: knightsKnaves,
};

/** True if `name` is a registered task name. */
export function isTaskName(name: string): name is TaskName {
  return (taskNames as readonly string[]).includes(name);
}

/**
 * The task `name` at `difficulty` (default: the task's default difficulty).
 * Throws Error for an unknown name and RangeError for a difficulty outside the task's integer range.
 */
export function getTask(name: string, difficulty?: number): Task {
  if (!isTaskName(name)) throw new Error(`unknown task "${name}"; known tasks: ${taskNames.join(', ')}`);
  return taskFactories[name].create(difficulty);
}

/**
 * Every character any task uses in prompts or correct completions, sorted by code point (all printable
 * ASCII). A character vocabulary that covers this covers every task; the lab's char tokenizer covers all of
 * printable ASCII, so adding a task never shifts token ids.
 */
export const TASK_ALPHABET: string = [...new Set(taskNames.flatMap((n) => [...taskFactories[n].alphabet]))]
  .sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0))
  .join('');
