// Knights and Knaves: the statements' meaning, the brute-force solver on puzzles worked by hand, the generator's
// promise of exactly one solution, and the verifier's format and accuracy parts. The registry-wide checks (split,
// determinism, garbage completions) run on it with every other task in tasks.test.ts.

import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { getTask, solveKnightsKnaves, statementHolds } from './index';

describe('knights and knaves', () => {
  it('reads every kind of statement', () => {
    const kn = [true, false];
    expect(statementHolds('Ak', kn)).toBe(true);
    expect(statementHolds('Bk', kn)).toBe(false);
    expect(statementHolds('Ak&Bn', kn)).toBe(true);
    expect(statementHolds('Ak&Bk', kn)).toBe(false);
    expect(statementHolds('An|Bk', kn)).toBe(false);
    expect(statementHolds('An|Bn', kn)).toBe(true);
    expect(statementHolds('A=B', kn)).toBe(false);
    expect(statementHolds('A!B', kn)).toBe(true);
    expect(statementHolds('Ck', kn)).toBeNull(); // no third person
    expect(statementHolds('A?B', kn)).toBeNull();
  });

  it('solves puzzles worked by hand, and finds none or several where there are', () => {
    // A: "B is a knave". B: "we are alike". A knight makes B a knave, who then lies about being alike: consistent.
    expect(solveKnightsKnaves(['Bn', 'A=B'])).toEqual(['kn']);
    // A: "I am a knave" is impossible for both kinds.
    expect(solveKnightsKnaves(['An', 'Bk'])).toEqual([]);
    // A: "I am a knight", B: "I am a knight": anyone can say that.
    expect(solveKnightsKnaves(['Ak', 'Bk'])).toEqual(['nn', 'nk', 'kn', 'kk']);
    // Three people. A: "B is a knave"; B: "C is a knave"; C: "A and B are both knaves". C cannot be a knight (then
    // A, a knave, would say something true), so C lies, B tells the truth and A lies.
    expect(solveKnightsKnaves(['Bn', 'Cn', 'An&Bn'])).toEqual(['nkn']);
  });

  it('draws only puzzles with exactly one solution, which is the answer', () => {
    for (const people of [2, 3]) {
      const t = getTask('knights_knaves', people);
      const rng = new Rng(people);
      for (let i = 0; i < 300; i++) {
        const item = t.sample(rng, i % 2 ? 'train' : 'heldout');
        const statements = item.prompt
          .slice(3, -1)
          .split(';')
          .map((s) => s.split(':')[1]);
        expect(statements.length).toBe(people);
        expect(solveKnightsKnaves(statements)).toEqual([item.answer]);
      }
    }
  });

  it('pays the format part for k/n answers of the right length and accuracy only for the solution', () => {
    const t = getTask('knights_knaves', 2);
    const item = { prompt: 'kk:A:Bn;B:A=B?', answer: 'kn' };
    expect(t.verify(item, 'kn')).toMatchObject({ reward: 1, parts: { accuracy: 1, format: 1 } });
    expect(t.verify(item, 'nk')).toMatchObject({ parts: { accuracy: 0, format: 1 } });
    expect(t.verify(item, 'nk').reward).toBeCloseTo(0.1, 12);
    expect(t.verify(item, 'k').reward).toBe(0);
    expect(t.verify(item, 'knk').reward).toBe(0);
    // A puzzle that is not uniquely solvable is not one of the task's prompts to solve.
    expect(() => t.solve({ prompt: 'kk:A:Ak;B:Bk?', answer: '' })).toThrow(/no solution/);
    expect(t.splitOf({ prompt: 'kk:A:Ck;B:Ak?', answer: '' })).toBeNull(); // C is not in a two-person puzzle
  });

  it('fits the nano preset: BOS + the longest prompt + the longest completion + EOS within 64 tokens', () => {
    for (const people of [2, 3]) {
      const t = getTask('knights_knaves', people);
      expect(1 + t.maxPromptLength + t.maxCompletionLength + 1).toBeLessThanOrEqual(64);
    }
  });
});
