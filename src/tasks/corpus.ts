// Text of every task, for training a small tokenizer: prompts and correct answers drawn from each task at each of
// its difficulties, deterministically. Not a training set for the model (tasks sample their own items).

import { Rng } from '../core/random';
import { getTask, taskFactories, type TaskName } from './index';

/**
 * The tasks whose text the shipped tiny models' merges were learned from. A fixed list, so that adding a task does
 * not change the committed tokenizers (their test rebuilds them and compares bytes); byte-level BPE still encodes
 * any later task's text.
 */
export const CORPUS_TASKS: readonly TaskName[] = [
  'bandit',
  'copy',
  'reverse',
  'sort',
  'parity',
  'count',
  'addition',
  'multiplication',
  'countdown',
];

/**
 * `perDifficulty` prompts and answers of each of `names` at every difficulty of its range (both splits), in a fixed
 * order for a seed: the corpus the tiny Hugging Face models' BPE merges are learned from.
 */
export function taskCorpus(perDifficulty = 8, seed = 0, names: readonly TaskName[] = CORPUS_TASKS): string[] {
  const rng = new Rng(seed);
  const texts: string[] = [];
  for (const name of names) {
    const { min, max } = getTask(name).difficultyRange;
    for (let d = min; d <= max; d++) {
      const task = taskFactories[name].create(d);
      for (let i = 0; i < perDifficulty; i++) {
        const item = task.sample(rng, i % 2 === 0 ? 'train' : 'heldout');
        texts.push(item.prompt, item.answer);
      }
    }
  }
  return texts;
}
