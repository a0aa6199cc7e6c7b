// The <think>...</think><answer>...</answer> format around a task: format and accuracy scored as separate
// reward functions, the inner verifier applied to the answer tag, the guard rails (overlong, foreign characters,
// foreign prompts), the split and the solver passed through.

import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { getTask, taskFactoryFor, thinkFormatTask } from './index';

describe('think format', () => {
  const t = thinkFormatTask(getTask('addition', 2));
  const item = { prompt: '12+34=', answer: '' };

  it('scores the tags as format and the answer by the inner verifier as accuracy', () => {
    expect(t.rewardNames).toEqual(['accuracy', 'format', 'positions', 'inner_format']);
    expect(t.verify(item, '<think>2+4</think><answer>46</answer>')).toMatchObject({
      reward: 1,
      parts: { accuracy: 1, format: 1, inner_format: 1 },
    });
    // Right answer, broken format: accuracy only (the answer tag is still read, as R1's accuracy reward does).
    const noThink = t.verify(item, '<answer>46</answer>');
    expect(noThink.parts).toMatchObject({ accuracy: 1, format: 0 });
    expect(noThink.reward).toBeCloseTo(0.8, 12);
    // Well formed, wrong answer: format only.
    const wrong = t.verify(item, '<think></think><answer>45</answer>');
    expect(wrong.parts).toMatchObject({ accuracy: 0, format: 1, inner_format: 1 });
    expect(wrong.reward).toBeCloseTo(0.2, 12);
    expect(wrong.reason).toMatch(/^format ok; answer: wrong/);
    expect(t.verify(item, '46')).toMatchObject({
      reward: 0,
      reason: 'not <think>...</think><answer>...</answer>; no <answer>...</answer>',
    });
    expect(t.verify(item, '<think>a<b</think><answer>46</answer>').parts.format).toBe(0);
  });

  it('keeps the guard rails', () => {
    expect(t.verify(item, '').reward).toBe(0);
    expect(t.verify(item, `<think>${'1'.repeat(100)}</think><answer>46</answer>`).reason).toMatch(/overlong/);
    expect(t.verify(item, '<think>\u00e9</think><answer>46</answer>').reason).toMatch(/not printable ASCII/);
    expect(t.verify({ prompt: 'copy:ab=', answer: '' }, '<think></think><answer>ab</answer>').reason).toMatch(
      /not a addition prompt/,
    );
  });

  it('samples the inner task, solves in the format and keeps the split', () => {
    const rng = new Rng(4);
    for (const split of ['train', 'heldout'] as const) {
      for (let i = 0; i < 50; i++) {
        const it = t.sample(rng, split);
        expect(it.answer).toBe(t.solve(it));
        expect(it.answer).toMatch(/^<think><\/think><answer>\d+<\/answer>$/);
        expect(t.verify(it, it.answer).reward).toBe(1);
        expect(t.splitOf(it)).toBe(split);
        expect(it.prompt.length + it.answer.length).toBeLessThanOrEqual(t.maxPromptLength + t.maxCompletionLength);
      }
    }
  });

  it('wraps any task of a config, the prompt list included', () => {
    expect(
      taskFactoryFor('knights_knaves', null, 'think')
        .create(2)
        .verify({ prompt: 'kk:A:Bn;B:A=B?', answer: '' }, '<think>A true</think><answer>kn</answer>').reward,
    ).toBe(1);
    expect(
      taskFactoryFor('prompts', 'prompt,answer\nhi:,yo', 'think')
        .create()
        .verify({ prompt: 'hi:', answer: '' }, '<think></think><answer>yo</answer>').reward,
    ).toBe(1);
    expect(() => taskFactoryFor('prompts', null, 'plain')).toThrow(/none is given/);
  });
});
