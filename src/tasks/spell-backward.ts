// reasoning-gym's spell_backward (open-thought/reasoning-gym 49b0713, reasoning_gym/algorithmic/spell_backward.py):
// spell a word backward, with its question text as the prompt ("Spell this word backward (example: sun = nus): ace"
// -> "eca"; its "->" is "=" here, since "<" and ">" stay out of the lab's character vocabulary, where they would
// spell special tokens such as <eos>), words of 3 to `difficulty` letters from a fixed sample of its word list (spell-backward-words.ts). The
// task the RLHF book's policy-gradient code trains on by default; besides the lab's accuracy (exact) and format
// (letters only) it scores `correctness`, reasoning-gym's graded score_answer, which the book averages as
// avg_correctness.

import { defineTask, show, type TaskFactory } from './task';
import { SPELL_BACKWARD_WORDS } from './spell-backward-words';

/** reasoning-gym's question before the word, its "->" written "=" (see the header). */
export const SPELL_BACKWARD_QUESTION = 'Spell this word backward (example: sun = nus): ';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const PROMPT = /^Spell this word backward \(example: sun = nus\): ([a-z]{3,10})$/;

/** The word list by length: WORDS_BY_LENGTH[n] holds the words of n letters. */
const WORDS_BY_LENGTH: readonly (readonly string[])[] = (() => {
  const byLength: string[][] = Array.from({ length: 11 }, () => []);
  for (const w of SPELL_BACKWARD_WORDS.split(' ')) byLength[w.length].push(w);
  return byLength;
})();

/** WORDS_UP_TO[n]: the words of 3 up to n letters, in list order. */
const WORDS_UP_TO: readonly (readonly string[])[] = WORDS_BY_LENGTH.map((_, n) =>
  WORDS_BY_LENGTH.slice(3, n + 1).flat(),
);

/**
 * reasoning-gym's SpellBackwardDataset.score_answer (49b0713): 1 for the reversed word (case-insensitive); otherwise
 * 1/len(expected) for each position where the answer's letter equals the expected one (positions past the answer's
 * end count nothing), minus 0.2 when that sum is exactly 1.0 (the answer holds the whole expected word and goes on).
 * The sum is accumulated as there, in double precision, so ten matches of 1/10 sum to 0.9999999999999999 and keep it.
 */
export function spellBackwardScore(expected: string, answer: string): number {
  const e = expected.toLowerCase();
  const a = answer.toLowerCase();
  if (e === a) return 1;
  let reward = 0;
  for (let i = 0; i < e.length; i++) {
    if (i >= a.length) break;
    if (e[i] === a[i]) reward += 1 / e.length;
  }
  return reward === 1 ? reward - 0.2 : reward;
}

/** spell_backward (difficulty: the longest word, 3..10 letters; reasoning-gym's default range is 3-10). */
export const spellBackward: TaskFactory = defineTask<string>({
  name: 'spell_backward',
  description: `reasoning-gym's spell_backward: "${SPELL_BACKWARD_QUESTION}ace" -> "eca" (words of 3 to 10 letters).`,
  difficulty: { min: 3, max: 10, default: 5, meaning: 'longest word (letters); words of 3 up to this many' },
  alphabet: `${SPELL_BACKWARD_QUESTION}${LETTERS}`,
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: ['correctness'],
  disjointSplits: true,
  maxPromptLength: (n) => SPELL_BACKWARD_QUESTION.length + n,
  maxCompletionLength: (n) => n + 2,
  draw: (rng, n) => WORDS_UP_TO[n][rng.int(WORDS_UP_TO[n].length)],
  render: (w) => `${SPELL_BACKWARD_QUESTION}${w}`,
  parse: (prompt) => PROMPT.exec(prompt)?.[1] ?? null,
  key: (w) => w,
  solve: (w) => [...w].reverse().join(''),
  completionLimit: (w) => w.length + 2,
  check(w, completion) {
    const expected = [...w].reverse().join('');
    const correctness = spellBackwardScore(expected, completion);
    if (!/^[a-z]+$/.test(completion))
      return {
        accuracy: 0,
        format: 0,
        reason: `not one lowercase word: ${show(completion)}`,
        extra: { correctness },
      };
    if (completion === expected) return { accuracy: 1, format: 1, reason: 'correct', extra: { correctness } };
    return {
      accuracy: 0,
      format: 1,
      reason: `wrong: expected ${show(expected)}, got ${show(completion)} (reasoning-gym scores ${correctness.toFixed(2)})`,
      extra: { correctness },
    };
  },
  meta: (w) => ({ word: w, word_len: w.length }),
});
