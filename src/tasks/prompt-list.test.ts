// The person's own prompt list as a task: JSONL and CSV reading (quotes, blank lines, a byte-order mark), the errors
// of malformed files with their line, exact and numeric matching, the held-out split by hash (deterministic, and
// never overlapping the training split), and a list too small to split.

import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { PromptListError, answerMatches, parsePromptList, promptListTask, splitOfKey } from './index';

/** A JSONL list of n questions "q<i>?" with answers i. */
const jsonl = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `q${i}?`, answer: String(i) })).join('\n');

const problem = (text: string) => {
  try {
    parsePromptList(text);
    return '';
  } catch (e) {
    expect(e).toBeInstanceOf(PromptListError);
    return (e as Error).message;
  }
};

describe('prompt list: reading', () => {
  it('reads a teacher_id per row (JSONL key or CSV column), absent or empty meaning the default teacher', () => {
    const items = parsePromptList(
      '{"prompt": "2+2=", "answer": "4", "teacher_id": "math"}\n{"prompt": "hi:", "answer": "hi"}\n{"prompt": "x:", "answer": "x", "teacher_id": null}',
    );
    expect(items.map((it) => [it.prompt, it.teacherId, it.line])).toEqual([
      ['2+2=', 'math', 1],
      ['hi:', null, 2],
      ['x:', null, 3],
    ]);
    const csv = parsePromptList('prompt,Teacher_ID,answer\n2+2=,math,4\nhi:,,hi\n"a,b", code.v-2 ,ab');
    expect(csv.map((it) => [it.prompt, it.teacherId, it.answer])).toEqual([
      ['2+2=', 'math', '4'],
      ['hi:', null, 'hi'],
      ['a,b', 'code.v-2', 'ab'],
    ]);
    // The task hands each item's teacher id to the trainer, by the item's prompt.
    const task = promptListTask(
      '{"prompt": "2+2=", "answer": "4", "teacher_id": "math"}\n{"prompt": "hi:", "answer": "hi"}',
    ).create();
    expect(task.teacherId({ prompt: '2+2=', answer: '4' })).toBe('math');
    expect(task.teacherId({ prompt: 'hi:', answer: 'hi' })).toBeNull();
    expect(task.teacherId({ prompt: 'not in the list', answer: '' })).toBeNull();
  });

  it('refuses a hostile or malformed teacher_id with its line', () => {
    expect(problem('{"prompt": "a", "answer": "b", "teacher_id": 3}')).toBe(
      'line 1: "teacher_id" must be text (a teacher id), got number',
    );
    expect(problem('{"prompt": "a", "answer": "b"}\n{"prompt": "c", "answer": "d", "teacher_id": ["x"]}')).toBe(
      'line 2: "teacher_id" must be text (a teacher id), got object',
    );
    for (const [id, ch] of [
      ['a b', ' '],
      ['$(rm -rf /)', ' '],
      ['x\u0000', '\u0000'],
      ['x\ny', '\n'],
      ['caf\u00e9', '\u00e9'],
      ['\u202eevil', '\u202e'],
    ]) {
      const message = problem(`{"prompt": "a", "answer": "b", "teacher_id": ${JSON.stringify(id)}}`);
      expect(message.startsWith('line 1: the teacher_id ')).toBe(true);
      expect(
        message.endsWith(`has the character ${JSON.stringify(ch)}; a teacher id is one word of printable ASCII`),
      ).toBe(true);
    }
    expect(problem(`prompt,answer,teacher_id\nq,1,${'t'.repeat(65)}`)).toBe(
      'line 2: the teacher_id has 65 characters, more than 64',
    );
    expect(problem('prompt,answer,teacher_id\nq,1,math\nq,1,code')).toBe(
      'line 3: the prompt "q" is on line 2 with another teacher_id',
    );
  });

  it('reads JSONL and CSV alike', () => {
    expect(
      parsePromptList(
        '{"prompt": "2+2=", "answer": "4"}\n\n{"prompt": "capital of France:", "answer": "Paris", "extra": 1}\n',
      ),
    ).toEqual([
      { prompt: '2+2=', answer: '4', teacherId: null, line: 1 },
      { prompt: 'capital of France:', answer: 'Paris', teacherId: null, line: 3 },
    ]);
    expect(parsePromptList('\uFEFFid,Prompt,Answer\r\n1,"say ""hi"", twice:","hi, hi"\r\n2,7*6=,42\r\n')).toEqual([
      { prompt: 'say "hi", twice:', answer: 'hi, hi', teacherId: null, line: 2 },
      { prompt: '7*6=', answer: '42', teacherId: null, line: 3 },
    ]);
    expect(parsePromptList('{"prompt": "n?", "answer": 3.5}')[0].answer).toBe('3.5');
  });

  it('names the line and the problem of a malformed file', () => {
    expect(problem('')).toMatch(/^the prompt list is empty/);
    expect(problem('{"prompt": "a", "answer": "b"}\n{"prompt": "c"}')).toBe('line 2: missing "answer"');
    expect(problem('{"prompt": "a", "answer": "b"}\n{"prompt": "c", "answer": }')).toMatch(/^line 2: not valid JSON/);
    expect(problem('{"prompt": "a", "answer": "b"}\n[1, 2]')).toBe(
      'line 2: must be an object {"prompt": ..., "answer": ...}',
    );
    expect(problem('{"prompt": 5, "answer": null}')).toBe('line 1: "answer" must be text, got null');
    expect(problem('{"prompt": "caf\u00e9?", "answer": "x"}')).toMatch(
      /^line 1: the prompt has the character "\u00e9", which the lab's tokenizer does not have/,
    );
    expect(problem('question,answer\nq,a')).toBe(
      'line 1: the CSV header has no "prompt" column (it has "question", "answer")',
    );
    expect(problem('prompt,answer\nq,a\nr,b,c')).toBe('line 3: 3 fields, but the header has 2');
    expect(problem('prompt,answer\n"q,a')).toBe('line 2: a quoted field is not closed');
    expect(problem('prompt,answer\nq,')).toBe('line 2: the answer is empty');
    expect(problem('prompt,answer\n')).toBe('the prompt list has a header but no prompts');
    expect(problem('prompt,answer\nq,1\nq,2')).toBe('line 3: the prompt "q" is on line 2 with another answer');
    expect(problem(`prompt,answer\n${'x'.repeat(201)},1`)).toBe('line 2: the prompt has 201 characters, more than 200');
  });
});

describe('prompt list: the task', () => {
  it('matches exactly, or as numbers when the answer is one', () => {
    expect(answerMatches('Paris', ' Paris ')).toBe(true);
    expect(answerMatches('Paris', 'paris')).toBe(false);
    expect(answerMatches('3.5', '3.50')).toBe(true);
    expect(answerMatches('42', '4.2e1')).toBe(true);
    expect(answerMatches('42', '42.1')).toBe(false);
    const t = promptListTask('prompt,answer\ncapital of France:,Paris\nhalf of 7:,3.5').create();
    const [france, half] = [
      { prompt: 'capital of France:', answer: 'Paris' },
      { prompt: 'half of 7:', answer: '3.5' },
    ];
    expect(t.verify(france, 'Paris')).toMatchObject({ reward: 1, parts: { accuracy: 1, format: 1 } });
    expect(t.verify(france, 'Lyon')).toMatchObject({ parts: { accuracy: 0, format: 1 } });
    expect(t.verify(half, '3.50').reward).toBe(1);
    expect(t.verify(half, 'about 3')).toMatchObject({ reward: 0, reason: 'not a number: "about 3"' });
    expect(t.verify(france, 'Paris'.repeat(10)).reason).toMatch(/overlong/);
    expect(t.verify({ prompt: 'not in the list', answer: 'x' }, 'x').reward).toBe(0);
    expect(t.solve(half)).toBe('3.5');
  });

  it('holds out one in ten prompts by a hash of their text, deterministically and without overlap', () => {
    const f = promptListTask(jsonl(400));
    const t = f.create();
    expect(t.disjointSplits).toBe(true);
    const rng = new Rng(1);
    const train = new Set(Array.from({ length: 2000 }, () => t.sample(rng, 'train').prompt));
    const held = new Set(Array.from({ length: 500 }, () => t.sample(rng, 'heldout').prompt));
    for (const p of held) {
      expect(train.has(p)).toBe(false);
      expect(splitOfKey('prompts', p)).toBe('heldout');
    }
    expect(held.size).toBeGreaterThan(20);
    expect(held.size).toBeLessThan(60);
    // The same list read again splits the same way.
    expect(
      [...held].every((p) => promptListTask(jsonl(400)).create().splitOf({ prompt: p, answer: '' }) === 'heldout'),
    ).toBe(true);
    for (const item of [...train].slice(0, 50).map((p) => ({ prompt: p, answer: '' })))
      expect(t.verify(item, t.solve(item)).reward).toBe(1);
  });

  it('draws both splits from the whole list when it is too small to hold any out', () => {
    // Find a list of 3 prompts none of which hashes to the held-out side.
    const prompts = Array.from({ length: 40 }, (_, i) => `p${i}`)
      .filter((p) => splitOfKey('prompts', p) === 'train')
      .slice(0, 3);
    const t = promptListTask(prompts.map((p) => `{"prompt":"${p}","answer":"1"}`).join('\n')).create();
    expect(t.disjointSplits).toBe(false);
    expect(prompts).toContain(t.sample(new Rng(3), 'heldout').prompt);
    expect(t.description).toMatch(/too few to hold any out/);
  });
});
