// Registry of the verifiable environments: names, factories, and the union alphabet for the tokenizer.
// Not a place for task logic (each task has its own file) or for curriculum policy (that lives in src/rl/).

import { addition, multiplication } from './arithmetic';
import { bandit } from './bandit';
import { copy, reverse } from './copy';
import { count } from './count';
import { countdown } from './countdown';
import { knightsKnaves } from './knights-knaves';
import { parity } from './parity';
import { PROMPT_LIST_TASK, promptListTask } from './prompt-list';
import { thinkFormat } from './think-format';
import { sort } from './sort';
import { spellBackward } from './spell-backward';
import { wordProblems } from './word-problems';
import type { Task, TaskFactory } from './task';

export type {
  Check,
  DifficultyRange,
  MetaValue,
  RewardWeights,
  Split,
  Task,
  TaskFactory,
  TaskItem,
  Verdict,
  VerdictParts,
} from './task';
export { HELDOUT_MODULUS, hashString, splitOfKey } from './task';
export { evaluateExpression, parseExpression, Rational } from './expression';
export { judgeCountdown, solveCountdown } from './countdown';
export { banditArmRewards } from './bandit';
export { solveKnightsKnaves, statementHolds } from './knights-knaves';
export { PROMPT_LIST_TASK, PromptListError, answerMatches, parsePromptList, promptListTask } from './prompt-list';
export { lastNumber } from './word-problems';
export { SPELL_BACKWARD_QUESTION, spellBackwardScore } from './spell-backward';
export { THINK_BUDGET, thinkFormat, thinkFormatTask } from './think-format';

/** Every task name, in picker order (simplest first). */
export const taskNames = [
  'bandit',
  'copy',
  'reverse',
  'spell_backward',
  'sort',
  'parity',
  'count',
  'addition',
  'multiplication',
  'word_problems',
  'countdown',
  'knights_knaves',
] as const;

/** A registered task name. */
export type TaskName = (typeof taskNames)[number];

/** Factories by name (difficulty not yet chosen): descriptions and difficulty ranges for the UI. */
export const taskFactories: Readonly<Record<TaskName, TaskFactory>> = {
  bandit,
  copy,
  reverse,
  spell_backward: spellBackward,
  sort,
  parity,
  count,
  addition,
  multiplication,
  word_problems: wordProblems,
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

/** Every value a config's `task` may take: the registry's tasks, and `prompts` (the person's own prompt list). */
export const taskChoices = [...taskNames, PROMPT_LIST_TASK] as const;
export type TaskChoice = (typeof taskChoices)[number];

/** How completions are written: the task's own way, or R1's <think>...</think><answer>...</answer> around it. */
export const ANSWER_FORMATS = ['plain', 'think'] as const;
export type AnswerFormat = (typeof ANSWER_FORMATS)[number];

/** The last prompt list read, so a config checked on every keystroke parses its list once. */
let lastList: { text: string; factory: TaskFactory } | null = null;

/**
 * The task factory a config's task fields describe: the registry's task, or the prompt list (`prompts`: its
 * text), in the answer format asked for. Throws PromptListError for a malformed list, Error for `prompts` without
 * one or an unknown name.
 */
export function taskFactoryFor(task: string, prompts: string | null, answerFormat: AnswerFormat): TaskFactory {
  let factory: TaskFactory;
  if (task === PROMPT_LIST_TASK) {
    if (prompts === null)
      throw new Error(
        'task "prompts" trains on your own prompt list, and none is given (the prompts field: JSONL or CSV text)',
      );
    if (lastList?.text !== prompts) lastList = { text: prompts, factory: promptListTask(prompts) };
    factory = lastList.factory;
  } else if (isTaskName(task)) factory = taskFactories[task];
  else throw new Error(`unknown task "${task}"; known tasks: ${taskChoices.join(', ')}`);
  return answerFormat === 'think' ? thinkFormat(factory) : factory;
}
