// Sort: sort a short string of digits ascending ("sort:31412=" -> "11234"); repeats allowed, difficulty is
// the length. Not a comparison-sort benchmark: the point is a task whose answer is a permutation of the input.

import { defineTask, exactMatch, randomString, show, type TaskFactory } from './task';

const DIGITS = '0123456789';

function sorted(s: string): string {
  return [...s].sort().join('');
}

/** Sort task (difficulty: number of digits, 2..16, default 5). */
export const sort: TaskFactory = defineTask<string>({
  name: 'sort',
  description: 'Sort digits ascending: "sort:31412=" -> "11234".',
  difficulty: { min: 2, max: 16, default: 5, meaning: 'number of digits' },
  alphabet: `sort:=${DIGITS}`,
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: ['positions', 'permutation'],
  disjointSplits: true,
  maxPromptLength: (n) => n + 6,
  maxCompletionLength: (n) => 2 * n + 2,
  draw: (rng, n) => randomString(rng, DIGITS, n),
  render: (s) => `sort:${s}=`,
  parse: (prompt) => /^sort:([0-9]{1,64})=$/.exec(prompt)?.[1] ?? null,
  key: (s) => s,
  solve: (s) => sorted(s),
  completionLimit: (s) => 2 * s.length + 2,
  check(s, completion) {
    const format = !/^[0-9]+$/.test(completion)
      ? { ok: false, why: `not digits: ${show(completion)}` }
      : completion.length !== s.length
        ? { ok: false, why: `wrong length: ${completion.length} digits, expected ${s.length}` }
        : { ok: true, why: '' };
    const c = exactMatch(sorted(s), completion, format);
    // Informational: right multiset of digits, whatever the order.
    const permutation = sorted(completion) === sorted(s) ? 1 : 0;
    return { ...c, extra: { ...c.extra, permutation } };
  },
});
