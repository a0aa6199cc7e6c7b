// The word-problem task: every template's prompts parse back and solve to an exact integer, and the verifier reads
// the answer however a chat model writes it.

import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { getTask, lastNumber, thinkFormatTask } from '.';

describe('word_problems', () => {
  it('draws prompts of every template that parse back, fit the bound and verify their own answers', () => {
    for (let d = 1; d <= 3; d++) {
      const task = getTask('word_problems', d);
      const rng = new Rng(d);
      const templates = new Set<number>();
      for (let i = 0; i < 300; i++) {
        const item = task.sample(rng, i % 10 === 0 ? 'heldout' : 'train');
        templates.add(item.meta?.template as number);
        expect(item.prompt.length).toBeLessThanOrEqual(task.maxPromptLength);
        expect(Number.isInteger(Number(item.answer))).toBe(true);
        expect(Number(item.answer)).toBeGreaterThanOrEqual(0);
        expect(task.solve(item)).toBe(item.answer);
        expect(task.verify(item, item.answer).reward).toBe(1);
        expect(task.splitOf(item)).toBe(i % 10 === 0 ? 'heldout' : 'train');
      }
      expect(templates.size).toBe(6);
    }
  });

  it('solves by the sentence: addition, sharing, two steps', () => {
    const task = getTask('word_problems', 2);
    const answer = (prompt: string) => task.solve({ prompt, answer: '' });
    expect(answer('Ana has 12 apples and buys 7 more. How many apples does Ana have now?')).toBe('19');
    expect(answer('Gus shares 84 cookies equally among 7 friends. How many cookies does each friend get?')).toBe('12');
    expect(answer('Hana has 40 books, buys 15 more and then gives away 30. How many books does Hana have now?')).toBe(
      '25',
    );
    expect(answer('A shop sells pencils for 3 dollars each. How many dollars do 14 pencils cost?')).toBe('42');
    expect(
      task.splitOf({ prompt: 'Ana has 12 pears and buys 7 more. How many pears does Ana have now?', answer: '' }),
    ).toBe(null);
  });

  it('accepts the answer however it is written, and only the right number', () => {
    const task = getTask('word_problems', 3);
    const item = {
      prompt: 'There are 12 boxes with 100 marbles in each box. How many marbles are there in all?',
      answer: '1200',
    };
    for (const ok of [
      '1200',
      '1200.',
      '1,200',
      '1200 marbles',
      'The answer is 1200.',
      '12 x 100 = 1200',
      '1200.0',
      '$1,200',
    ])
      expect(task.verify(item, ok).parts.accuracy, ok).toBe(1);
    for (const wrong of ['120', '1200 - 1 = 1199', '12 boxes'])
      expect(task.verify(item, wrong).parts.accuracy, wrong).toBe(0);
    const none = task.verify(item, 'many marbles');
    expect(none.parts.format).toBe(0);
    expect(none.reason).toMatch(/no number/);
    expect(task.verify(item, 'x'.repeat(161)).reason).toMatch(/overlong/);
    expect(lastNumber('-3 and 4.5')).toBe(4.5);
  });

  it('is judged inside the think/answer format by what the answer tag holds', () => {
    const task = thinkFormatTask(getTask('word_problems', 2));
    const item = task.sample(new Rng(3), 'train');
    const inner = getTask('word_problems', 2).solve(item);
    const good = task.verify(item, `<think>add them</think><answer>${inner} apples</answer>`);
    expect(good.parts.accuracy).toBe(1);
    expect(good.parts.format).toBe(1);
    expect(task.verify(item, `The answer is ${inner}`).parts.format).toBe(0);
  });
});
