// Text of every task, for training a small tokenizer: prompts and correct answers drawn from each task at each of
// its difficulties, deterministically. Not a training set for the model (tasks sample their own items).

import { Rng } from '../reference/random';
import { getTask, taskFactories, taskNames } from './index';

/**
 * `perDifficulty` prompts and answers of every task at every difficulty of its range (both splits), in a fixed
 * order for a seed: the corpus the tiny Hugging Face models' BPE merges are learned from.
 */
export function taskCorpus(perDifficulty = 8, seed = 0): string[] {
  const rng = new Rng(seed);
  const texts: string[] = [];
  for (const name of taskNames) {
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
