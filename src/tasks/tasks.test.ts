// Tests of the verifiable environments: determinism, solver correctness, split hygiene, robustness of the
// verifiers to bad completions, and the Countdown expression parser. CPU only, no GPU.

import { describe, it, expect } from 'vitest';
import { Rng } from '../core/random';
import {
  banditArmRewards,
  evaluateExpression,
  getTask,
  isTaskName,
  parseExpression,
  Rational,
  solveCountdown,
  TASK_ALPHABET,
  taskFactories,
  taskNames,
  type Split,
  type Task,
  type TaskItem,
} from './index';

const SPLITS: readonly Split[] = ['train', 'heldout'];

/** min, default and max difficulty of a task (deduplicated). */
function difficulties(name: string): number[] {
  const r = getTask(name).difficultyRange;
  return [...new Set([r.min, r.default, r.max])];
}

function samples(task: Task, seed: number, n: number, split: Split): TaskItem[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => task.sample(rng, split));
}

function expectRejected(task: Task, item: TaskItem, completion: string): void {
  const v = task.verify(item, completion);
  expect(v.reward, `${task.name} ${JSON.stringify(completion)}`).toBe(0);
  expect(v.parts.accuracy).toBe(0);
  expect(v.parts.format).toBe(0);
  expect(v.reason.length).toBeGreaterThan(0);
  expect(v.reason).not.toMatch(/internal verifier error/);
}

describe('registry', () => {
  it('creates every task at its default, min and max difficulty', () => {
    for (const name of taskNames) {
      expect(isTaskName(name)).toBe(true);
      for (const d of difficulties(name)) {
        const t = getTask(name, d);
        expect(t.name).toBe(name);
        expect(t.difficulty).toBe(d);
        expect(t.description.length).toBeGreaterThan(10);
        expect(t.weights.accuracy + t.weights.format).toBeCloseTo(1, 12);
      }
      expect(getTask(name).difficulty).toBe(taskFactories[name].difficultyRange.default);
    }
  });

  it('rejects unknown names and bad difficulties with clear errors', () => {
    expect(() => getTask('nope')).toThrow(/unknown task "nope"/);
    expect(() => getTask('addition', 0)).toThrow(RangeError);
    expect(() => getTask('addition', 2.5)).toThrow(/integer/);
    expect(() => getTask('copy', 999)).toThrow(/\[2, 16\]/);
    expect(isTaskName('toString')).toBe(false);
  });

  it('alphabets are sorted printable ASCII and TASK_ALPHABET covers them all', () => {
    for (const name of taskNames) {
      const a = getTask(name).alphabet;
      expect([...a].every((c) => c.charCodeAt(0) >= 32 && c.charCodeAt(0) <= 126)).toBe(true);
      expect([...a].sort().join('')).toBe(a);
      expect(new Set(a).size).toBe(a.length);
      for (const c of a) expect(TASK_ALPHABET).toContain(c);
    }
    expect(TASK_ALPHABET).not.toMatch(/[<>]/); // "<eos>"-like text would alias special tokens
  });
});

/** Tasks written in English sentences, for instruct models with pretrained tokenizers. */
const SENTENCE_TASKS: readonly string[] = ['word_problems', 'spell_backward'];

describe.each(taskNames.map((n) => [n]))('task %s', (name) => {
  it('is deterministic for a seed', () => {
    for (const d of difficulties(name)) {
      const t = getTask(name, d);
      const draw = (seed: number) => {
        const rng = new Rng(seed);
        return Array.from({ length: 40 }, (_, i) => t.sample(rng, i % 3 === 0 ? 'heldout' : 'train'));
      };
      expect(draw(123)).toEqual(draw(123));
      if (name !== 'bandit' && d >= 3) expect(draw(123)).not.toEqual(draw(124));
    }
  });

  it('solver output and the canonical answer verify with reward 1 on 200 items per split', () => {
    for (const d of difficulties(name)) {
      const t = getTask(name, d);
      for (const split of SPLITS) {
        for (const item of samples(t, 1000 + d, 200, split)) {
          const solved = t.solve(item);
          expect(solved).toBe(item.answer);
          const v = t.verify(item, solved);
          expect(v.reward, `${item.prompt}${solved}: ${v.reason}`).toBe(1);
          expect(v.parts.accuracy).toBe(1);
          expect(v.parts.format).toBe(1);
          expect(item.prompt.length).toBeLessThanOrEqual(t.maxPromptLength);
          expect(item.answer.length).toBeLessThanOrEqual(t.maxCompletionLength);
          for (const c of item.prompt + item.answer) expect(t.alphabet).toContain(c);
        }
      }
    }
  });

  it('keeps prompt + answer short at the default difficulty', () => {
    const t = getTask(name);
    // Sentences are for pretrained tokenizers (a few characters a token): they fit 512 characters, the rest 48.
    const bound = SENTENCE_TASKS.includes(name) ? 512 : 48;
    for (const item of samples(t, 5, 300, 'train')) expect(item.prompt.length + item.answer.length).toBeLessThan(bound);
    expect(t.maxPromptLength + t.maxCompletionLength).toBeLessThanOrEqual(bound);
  });

  it('never lets held-out and train items overlap', () => {
    const factory = taskFactories[name];
    if (name === 'bandit') {
      // One prompt only: nothing to hold out, and the task says so.
      expect(getTask(name).disjointSplits).toBe(false);
      expect(samples(getTask(name), 1, 5, 'heldout')).toEqual(samples(getTask(name), 1, 5, 'train'));
      return;
    }
    for (const d of [factory.difficultyRange.min, factory.difficultyRange.default]) {
      const t = getTask(name, d);
      expect(t.disjointSplits).toBe(true);
      const train = samples(t, 77, 3000, 'train');
      const held = samples(t, 78, 3000, 'heldout');
      const trainPrompts = new Set(train.map((i) => i.prompt));
      for (const item of held) {
        expect(trainPrompts.has(item.prompt)).toBe(false);
        expect(t.splitOf(item)).toBe('heldout');
      }
      for (const item of train) expect(t.splitOf(item)).toBe('train');
    }
  });

  it('gives garbage, empty, overlong and foreign completions reward 0 with a reason', () => {
    for (const d of difficulties(name)) {
      const t = getTask(name, d);
      for (const item of samples(t, 9, 20, 'train')) {
        for (const bad of ['', ' ', '\n', '!!!', 'hello world', '\u{1F600}', 'NaN', '\u0000', '((', 'A'.repeat(200)]) {
          expectRejected(t, item, bad);
        }
        const overlong = item.answer + item.answer.repeat(t.maxCompletionLength + 1);
        expectRejected(t, item, overlong);
        expect(t.verify(item, overlong).reason).toMatch(/overlong/);
      }
    }
  });

  it('never throws and keeps rewards in [0, 1] on random completions', () => {
    const t = getTask(name);
    const rng = new Rng(42);
    const chars = `${t.alphabet}x.?`;
    const items = samples(t, 3, 10, 'train');
    for (let k = 0; k < 1000; k++) {
      const len = rng.int(t.maxCompletionLength + 4);
      let s = '';
      for (let i = 0; i < len; i++) s += chars[rng.int(chars.length)];
      const item = items[k % items.length];
      if (item === undefined) continue;
      const v = t.verify(item, s);
      expect(v.reward).toBeGreaterThanOrEqual(0);
      expect(v.reward).toBeLessThanOrEqual(1);
      expect(v.reason.length).toBeGreaterThan(0);
      expect(v.reason).not.toMatch(/internal verifier error/);
    }
  });

  it('handles prompts that are not its own without throwing', () => {
    const t = getTask(name);
    const foreign: TaskItem = { prompt: 'what is this?', answer: '1' };
    expectRejected(t, foreign, '1');
    expect(t.splitOf(foreign)).toBeNull();
    expect(() => t.solve(foreign)).toThrow(/cannot parse/);
  });
});

describe('format rewards', () => {
  it('pays only the format weight for well-formed wrong answers', () => {
    const cases: [string, number, string, string][] = [
      ['addition', 3, '123+45=', '167'],
      ['multiplication', 2, '12*34=', '409'],
      ['copy', 5, 'copy:abcab=', 'abcaa'],
      ['reverse', 5, 'rev:abcab=', 'abcab'],
      ['sort', 5, 'sort:31412=', '11243'],
      ['parity', 4, 'par:1011=', '0'],
      ['count', 5, 'count b:abcab=', '3'],
      ['countdown', 3, '24 from 3,4,6=', '3+4+6'],
    ];
    for (const [name, d, prompt, completion] of cases) {
      const t = getTask(name, d);
      const v = t.verify({ prompt, answer: '' }, completion);
      expect(v.parts.format, `${name}: ${v.reason}`).toBe(1);
      expect(v.parts.accuracy).toBe(0);
      expect(v.reward).toBeCloseTo(t.weights.format, 12);
      expect(v.reason).toMatch(/wrong|not/);
    }
  });

  it('rejects badly formatted numbers and wrong lengths', () => {
    expectRejected(getTask('addition'), { prompt: '123+45=', answer: '168' }, '0168');
    expectRejected(getTask('addition'), { prompt: '123+45=', answer: '168' }, '168=');
    expectRejected(getTask('copy'), { prompt: 'copy:abcab=', answer: 'abcab' }, 'abca');
    expectRejected(getTask('sort'), { prompt: 'sort:31412=', answer: '11234' }, '112345');
    expectRejected(getTask('parity'), { prompt: 'par:1011=', answer: '1' }, '11');
    expect(getTask('addition').verify({ prompt: '123+45=', answer: '' }, '168').reward).toBe(1);
  });

  it('reports position accuracy as an informational part', () => {
    const v = getTask('addition').verify({ prompt: '123+45=', answer: '168' }, '178');
    expect(v.parts['positions']).toBeCloseTo(2 / 3, 12);
    expect(v.reward).toBeCloseTo(0.1, 12);
  });
});

describe('bandit', () => {
  it('pays (i+1)/k per arm, with the last arm the unique best', () => {
    const t = getTask('bandit', 4);
    const item = t.sample(new Rng(0), 'train');
    expect(item.prompt).toBe('pick:');
    expect(item.answer).toBe('D');
    expect(banditArmRewards(4)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(['A', 'B', 'C', 'D'].map((a) => t.verify(item, a).reward)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(t.verify(item, 'D').parts['best']).toBe(1);
    expect(t.verify(item, 'C').parts['best']).toBe(0);
    expectRejected(t, item, 'E'); // an arm letter beyond k
    expectRejected(t, item, 'DD');
    expectRejected(t, item, 'p');
  });
});

describe('split', () => {
  it('is canonical: commuted operands and reordered numbers land on the same side', () => {
    const add = getTask('addition', 3);
    for (const item of samples(add, 11, 300, 'heldout')) {
      const m = /^(\d+)\+(\d+)=$/.exec(item.prompt);
      expect(add.splitOf({ prompt: `${m?.[2]}+${m?.[1]}=`, answer: '' })).toBe('heldout');
    }
    const cd = getTask('countdown', 4);
    for (const item of samples(cd, 12, 100, 'heldout')) {
      const m = /^(\d+) from ([\d,]+)=$/.exec(item.prompt);
      const reversed = (m?.[2] ?? '').split(',').reverse().join(',');
      expect(cd.splitOf({ prompt: `${m?.[1]} from ${reversed}=`, answer: '' })).toBe('heldout');
    }
  });

  it('holds out roughly one in ten problems', () => {
    const t = getTask('addition', 4);
    let held = 0;
    const rng = new Rng(5);
    for (let i = 0; i < 5000; i++) {
      const a = rng.int(10000);
      const b = rng.int(10000);
      if (t.splitOf({ prompt: `${a}+${b}=`, answer: '' }) === 'heldout') held++;
    }
    expect(held / 5000).toBeGreaterThan(0.08);
    expect(held / 5000).toBeLessThan(0.12);
  });
});

describe('countdown expression parser', () => {
  const value = (src: string): string => {
    const p = parseExpression(src);
    if (!p.ok) return `error: ${p.error}`;
    const v = evaluateExpression(p.expr);
    return v.ok ? v.value.toString() : `error: ${v.error}`;
  };

  it('respects precedence, left associativity and parentheses', () => {
    expect(value('2+3*4')).toBe('14');
    expect(value('2*3+4')).toBe('10');
    expect(value('8-3-2')).toBe('3');
    expect(value('8/4/2')).toBe('1');
    expect(value('(2+3)*4')).toBe('20');
    expect(value('2*(3+4)')).toBe('14');
    expect(value('((7))')).toBe('7');
    expect(value('9-(3-1)')).toBe('7');
    expect(value(' 6 * ( 1 + 2 ) ')).toBe('18');
    expect(value('8-3-7')).toBe('-2');
  });

  it('divides exactly', () => {
    expect(value('7/2')).toBe('7/2');
    expect(value('1/3*3')).toBe('1');
    expect(value('8/(3-8/3)')).toBe('24'); // 23.999999999999996 in floating point
    expect(value('2/4+1/4')).toBe('3/4');
    expect(value('7/(3-3)')).toMatch(/division by zero/);
    expect(value('0/5')).toBe('0');
    expect(Rational.of(6, -4).toString()).toBe('-3/2');
  });

  it('rejects malformed expressions with a reason', () => {
    for (const bad of [
      '',
      '   ',
      '(3+5',
      '3+5)',
      ')(',
      '3+',
      '*3',
      '-3+5',
      '3 5',
      '3(5)',
      '(3)(5)',
      '03+5',
      '3.5',
      '2^3',
      '3++5',
      '()',
      'x',
      '(((((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))))))',
    ]) {
      const p = parseExpression(bad);
      expect(p.ok, bad).toBe(false);
      if (!p.ok) expect(p.error.length).toBeGreaterThan(0);
    }
    expect(parseExpression('1+'.repeat(200) + '1').ok).toBe(false); // over MAX_EXPRESSION_LENGTH
  });

  it('never throws on fuzzed strings', () => {
    const rng = new Rng(2024);
    const chars = '0123456789+-*/() .x';
    for (let k = 0; k < 3000; k++) {
      let s = '';
      const len = rng.int(30);
      for (let i = 0; i < len; i++) s += chars[rng.int(chars.length)];
      const p = parseExpression(s);
      if (p.ok) evaluateExpression(p.expr);
      const v = getTask('countdown').verify({ prompt: '24 from 3,8,8,3=', answer: '' }, s.slice(0, 22));
      expect(v.reward).toBeGreaterThanOrEqual(0);
      expect(v.reward).toBeLessThanOrEqual(1);
      expect(v.reason).not.toMatch(/internal verifier error/);
    }
  });

  it('verifies the rules: exact target, numbers at most once, none foreign', () => {
    const t = getTask('countdown', 4);
    const item: TaskItem = { prompt: '24 from 3,8,8,3=', answer: '' };
    expect(t.verify(item, '8/(3-8/3)').reward).toBe(1);
    expect(t.verify(item, '3*8').reward).toBe(1); // a subset of the numbers is fine
    expect(t.verify(item, '(8+8+8)').reason).toMatch(/more often than given/);
    expect(t.verify(item, '(8+8+8)').reward).toBe(0);
    expect(t.verify(item, '4*6').reason).toMatch(/not one of 3,8,8,3/);
    expect(t.verify(item, '4*6').reward).toBe(0);
    expect(t.verify(item, '8/(3-3)').reason).toMatch(/division by zero/);
    expect(t.verify(item, '8/(3-3)').reward).toBe(0);
    expect(t.verify(item, '(3+8').reward).toBe(0);
    expect(t.verify(item, '3+8)').reward).toBe(0);
    expect(t.verify(item, '8/3').reason).toMatch(/= 8\/3, not 24/);
    expect(t.verify(item, '8/3').reward).toBeCloseTo(0.1, 12);
    expect(t.verify(item, '-3+8*3').reward).toBe(0);
  });

  it('solver finds the shortest solution, or null when there is none', () => {
    expect(solveCountdown([3, 8, 8, 3], 24)).toBe('3*8');
    expect(solveCountdown([1, 5, 5, 5], 24)).toBe('5*5-1');
    expect(solveCountdown([8, 6, 1, 6], 24)).toBe('6/(1-6/8)'); // only via the fraction 1/4
    expect(solveCountdown([1, 1], 99)).toBeNull();
    expect(solveCountdown([], 1)).toBeNull();
    // Cross-check existence against a brute force over every expression tree on every subset.
    const brute = (nums: readonly Rational[], goal: Rational): boolean => {
      if (nums.some((x) => x.equals(goal))) return true;
      for (let i = 0; i < nums.length; i++) {
        for (let j = 0; j < nums.length; j++) {
          const a = nums[i];
          const b = nums[j];
          if (i === j || a === undefined || b === undefined) continue;
          const rest = nums.filter((_, k) => k !== i && k !== j);
          for (const v of [a.add(b), a.sub(b), a.mul(b), a.div(b)])
            if (v !== null && brute([...rest, v], goal)) return true;
        }
      }
      return false;
    };
    const rng = new Rng(99);
    for (let k = 0; k < 60; k++) {
      const nums = Array.from({ length: 3 }, () => 1 + rng.int(9));
      const target = 1 + rng.int(60);
      const s = solveCountdown(nums, target);
      expect(s !== null, `${nums} -> ${target}`).toBe(
        brute(
          nums.map((x) => Rational.of(x)),
          Rational.of(target),
        ),
      );
      if (s !== null) {
        const v = getTask('countdown', 3).verify({ prompt: `${target} from ${nums.join(',')}=`, answer: '' }, s);
        expect(v.reward, `${s}: ${v.reason}`).toBe(1);
      }
    }
  });
});
