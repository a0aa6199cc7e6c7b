// The task a config trains on, from its task fields together (task, prompts, answer_format, difficulty): one place
// for the trainer, validation, derived values, exports and lessons, so a prompt list or the think format is never
// missed by one of them. Not the tasks themselves (src/tasks/).

import { taskFactoryFor, type Task, type TaskFactory } from '../../tasks';
import type { RLConfig } from './schema';

/** The fields of a config that choose its task. */
export type TaskFields = Pick<RLConfig, 'task' | 'prompts' | 'answer_format'>;

/** The config's task factory. Throws PromptListError for a malformed prompt list, Error for `prompts` without one. */
export function taskFactoryOf(c: TaskFields): TaskFactory {
  return taskFactoryFor(c.task, c.prompts, c.answer_format);
}

/** The config's task at `difficulty` (default: the config's own, else the task's default). */
export function taskOf(
  c: TaskFields & Pick<RLConfig, 'difficulty'>,
  difficulty: number | undefined = c.difficulty ?? undefined,
): Task {
  return taskFactoryOf(c).create(difficulty);
}
