// Copy and reverse: echo a short string over the letters a-f, as is ("copy:abcab=" -> "abcab") or reversed
// ("rev:abcab=" -> "bacba"). Difficulty is the string length. Two tasks in one file because they differ only
// in the prompt word and the transform; neither needs any arithmetic.

import { defineTask, exactMatch, randomString, show, type TaskFactory } from './task';

/** The letters strings are drawn from. */
export const COPY_LETTERS = 'abcdef';

function lettersTask(
  name: 'copy' | 'reverse',
  word: string,
  transform: (s: string) => string,
  description: string,
): TaskFactory {
  const head = `${word}:`;
  const pattern = new RegExp(`^${word}:([${COPY_LETTERS}]{1,64})=$`);
  return defineTask<string>({
    name,
    description,
    difficulty: { min: 2, max: 16, default: 5, meaning: 'string length' },
    alphabet: `${head}=${COPY_LETTERS}`,
    weights: { accuracy: 0.9, format: 0.1 },
    extraRewards: ['positions'],
    disjointSplits: true,
    maxPromptLength: (n) => head.length + n + 1,
    maxCompletionLength: (n) => 2 * n + 2,
    draw: (rng, n) => randomString(rng, COPY_LETTERS, n),
    render: (s) => `${head}${s}=`,
    parse: (prompt) => pattern.exec(prompt)?.[1] ?? null,
    key: (s) => s,
    solve: (s) => transform(s),
    completionLimit: (s) => 2 * s.length + 2,
    check(s, completion) {
      const letters = new RegExp(`^[${COPY_LETTERS}]+$`).test(completion);
      const format = !letters
        ? { ok: false, why: `not letters ${COPY_LETTERS[0]}-${COPY_LETTERS.at(-1)}: ${show(completion)}` }
        : completion.length !== s.length
          ? { ok: false, why: `wrong length: ${completion.length} letters, expected ${s.length}` }
          : { ok: true, why: '' };
      return exactMatch(transform(s), completion, format);
    },
  });
}

/** Copy task (difficulty: string length, 2..16, default 5). */
export const copy: TaskFactory = lettersTask(
  'copy',
  'copy',
  (s) => s,
  'Copy a string of letters a-f: "copy:abcab=" -> "abcab".',
);

/** Reverse task (difficulty: string length, 2..16, default 5). */
export const reverse: TaskFactory = lettersTask(
  'reverse',
  'rev',
  (s) => [...s].reverse().join(''),
  'Reverse a string of letters a-f: "rev:abcab=" -> "bacba".',
);
