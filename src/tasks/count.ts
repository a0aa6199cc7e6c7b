// Counting: how many times one letter occurs in a string over a-d ("count b:abcab=" -> "2").
// Difficulty is the string length. The answer is a plain decimal count (0 allowed).

import { defineTask, exactMatch, naturalFormat, randomString, type TaskFactory } from './task';

/** Letters of the counting task's strings. */
export const COUNT_LETTERS = 'abcd';

interface CountProblem {
  letter: string;
  text: string;
}

function countOf(p: CountProblem): string {
  return String([...p.text].filter((c) => c === p.letter).length);
}

/** Counting task (difficulty: string length, 2..24, default 8). */
export const count: TaskFactory = defineTask<CountProblem>({
  name: 'count',
  description: 'Count one letter in a string of a-d: "count b:abcab=" -> "2".',
  difficulty: { min: 2, max: 24, default: 8, meaning: 'string length' },
  alphabet: `count :=${COUNT_LETTERS}0123456789`,
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: ['positions'],
  disjointSplits: true,
  maxPromptLength: (n) => n + 9,
  maxCompletionLength: () => 4,
  draw: (rng, n) => ({
    letter: COUNT_LETTERS[rng.int(COUNT_LETTERS.length)] ?? 'a',
    text: randomString(rng, COUNT_LETTERS, n),
  }),
  render: (p) => `count ${p.letter}:${p.text}=`,
  parse(prompt) {
    const m = /^count ([a-d]):([a-d]{1,64})=$/.exec(prompt);
    return m?.[1] !== undefined && m[2] !== undefined ? { letter: m[1], text: m[2] } : null;
  },
  key: (p) => `${p.letter}:${p.text}`,
  solve: countOf,
  completionLimit: () => 4,
  check: (p, completion) => exactMatch(countOf(p), completion, naturalFormat(completion), 'right'),
});
