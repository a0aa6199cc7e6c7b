// Parity of a bit string ("par:1011=" -> "1": an odd number of ones, else "0"). Difficulty is the length.
// A classic hard-for-transformers probe: one flipped bit flips the answer, so there is no partial credit.

import { defineTask, exactMatch, randomString, show, type TaskFactory } from './task';

/** Parity task (difficulty: number of bits, 4..32, default 8). */
export const parity: TaskFactory = defineTask<string>({
  name: 'parity',
  description: 'Parity of a bit string: "par:1011=" -> "1" (odd number of ones), else "0".',
  difficulty: { min: 4, max: 32, default: 8, meaning: 'number of bits' },
  alphabet: 'par:=01',
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: ['positions'],
  disjointSplits: true,
  maxPromptLength: (n) => n + 5,
  maxCompletionLength: () => 4,
  draw: (rng, n) => randomString(rng, '01', n),
  render: (bits) => `par:${bits}=`,
  parse: (prompt) => /^par:([01]{1,64})=$/.exec(prompt)?.[1] ?? null,
  key: (bits) => bits,
  solve: (bits) => String([...bits].filter((b) => b === '1').length % 2),
  completionLimit: () => 4,
  check(bits, completion) {
    const expected = String([...bits].filter((b) => b === '1').length % 2);
    const ok = completion === '0' || completion === '1';
    return exactMatch(expected, completion, { ok, why: `not "0" or "1": ${show(completion)}` });
  },
});
