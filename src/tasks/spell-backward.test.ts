// spell_backward: reasoning-gym's question as the prompt, the word list's lengths, the split, the verdict's parts,
// and its correctness score against reasoning-gym's own score_answer run on every branch
// (fixtures/spell-backward-scores.json, written by scripts/make-spell-backward-fixture.py).
import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import fixture from './fixtures/spell-backward-scores.json';
import { getTask, taskNames } from './index';
import { SPELL_BACKWARD_QUESTION, spellBackwardScore } from './spell-backward';
import { SPELL_BACKWARD_WORDS } from './spell-backward-words';

describe('spell_backward', () => {
  it("equals reasoning-gym's score_answer on every case of the fixture", () => {
    expect(fixture.cases.length).toBeGreaterThan(400);
    for (const c of fixture.cases)
      expect(spellBackwardScore(c.answer, c.completion), `${c.answer} <- ${JSON.stringify(c.completion)}`).toBe(
        c.score,
      );
  });

  it('scores by hand: exact 1, a wrong letter (n-1)/n, the whole word and more 0.8', () => {
    expect(spellBackwardScore('eca', 'eca')).toBe(1);
    expect(spellBackwardScore('eca', 'ECA')).toBe(1);
    expect(spellBackwardScore('eca', 'exa')).toBeCloseTo(2 / 3, 12);
    expect(spellBackwardScore('abcd', 'abcdx')).toBeCloseTo(0.8, 12);
    expect(spellBackwardScore('abc', '')).toBe(0);
  });

  it("asks reasoning-gym's question, and draws words of 3 up to `difficulty` letters", () => {
    expect(taskNames).toContain('spell_backward');
    const words = SPELL_BACKWARD_WORDS.split(' ');
    for (let n = 3; n <= 10; n++) expect(words.filter((w) => w.length === n).length).toBe(300);
    const rng = new Rng(3);
    for (const d of [3, 6, 10]) {
      const task = getTask('spell_backward', d);
      const lengths = new Set<number>();
      for (let i = 0; i < 200; i++) {
        const item = task.sample(rng, i % 5 === 0 ? 'heldout' : 'train');
        expect(item.prompt.startsWith(SPELL_BACKWARD_QUESTION)).toBe(true);
        const word = item.prompt.slice(SPELL_BACKWARD_QUESTION.length);
        lengths.add(word.length);
        expect(item.answer).toBe([...word].reverse().join(''));
        expect(task.splitOf(item)).toBe(i % 5 === 0 ? 'heldout' : 'train');
        expect(task.verify(item, item.answer).reward).toBe(1);
      }
      expect(Math.min(...lengths)).toBe(3);
      expect(Math.max(...lengths)).toBe(d);
    }
  });

  it('scores accuracy (exact), format (one lowercase word) and correctness (graded) apart', () => {
    const task = getTask('spell_backward', 5);
    const item = { prompt: `${SPELL_BACKWARD_QUESTION}ace`, answer: 'eca' };
    expect(task.verify(item, 'eca').parts).toEqual({ correctness: 1, accuracy: 1, format: 1 });
    const near = task.verify(item, 'exa');
    expect(near.parts.accuracy).toBe(0);
    expect(near.parts.format).toBe(1);
    expect(near.parts.correctness).toBeCloseTo(2 / 3, 12);
    expect(near.reward).toBeCloseTo(0.1, 12);
    const spaced = task.verify(item, 'ec a');
    expect([spaced.parts.accuracy, spaced.parts.format]).toEqual([0, 0]);
    expect(task.verify(item, 'ecaxyz').reason).toMatch(/overlong/);
    expect(task.verify({ prompt: 'Spell this word backward: ace', answer: 'eca' }, 'eca').reward).toBe(0);
  });
});
