// Multi-digit addition ("123+45=" -> "168") and multiplication ("12*34=" -> "408") of natural numbers.
// Difficulty is the digits per operand; each operand is uniform in [0, 10^d). Answers are plain decimal
// (most significant digit first, no leading zeros). Exact via BigInt; no floating point anywhere.

import { defineTask, exactMatch, naturalFormat, randomDecimal, type TaskFactory } from './task';

interface Operands {
  a: string;
  b: string;
}

function operationTask(
  name: 'addition' | 'multiplication',
  op: '+' | '*',
  apply: (a: bigint, b: bigint) => bigint,
  maxDigits: number,
  defaultDigits: number,
  answerDigits: (a: number, b: number) => number,
  description: string,
): TaskFactory {
  const pattern = new RegExp(`^(0|[1-9][0-9]{0,29})\\${op}(0|[1-9][0-9]{0,29})=$`);
  const answer = (p: Operands) => apply(BigInt(p.a), BigInt(p.b)).toString();
  return defineTask<Operands>({
    name,
    description,
    difficulty: { min: 1, max: maxDigits, default: defaultDigits, meaning: 'digits per operand' },
    alphabet: `0123456789${op}=`,
    weights: { accuracy: 0.9, format: 0.1 },
    extraRewards: ['positions'],
    disjointSplits: true,
    maxPromptLength: (d) => 2 * d + 2,
    maxCompletionLength: (d) => 2 * answerDigits(d, d) + 2,
    draw: (rng, d) => ({ a: randomDecimal(rng, d), b: randomDecimal(rng, d) }),
    render: (p) => `${p.a}${op}${p.b}=`,
    parse(prompt) {
      const m = pattern.exec(prompt);
      return m?.[1] !== undefined && m[2] !== undefined ? { a: m[1], b: m[2] } : null;
    },
    // Commutative: a op b and b op a are the same problem, so they share a side of the split.
    key: (p) => (BigInt(p.a) <= BigInt(p.b) ? `${p.a}${op}${p.b}` : `${p.b}${op}${p.a}`),
    solve: answer,
    completionLimit: (p) => 2 * answerDigits(p.a.length, p.b.length) + 2,
    check: (p, completion) => exactMatch(answer(p), completion, naturalFormat(completion), 'right'),
  });
}

/** Addition task (difficulty: digits per operand, 1..10, default 3). */
export const addition: TaskFactory = operationTask(
  'addition',
  '+',
  (a, b) => a + b,
  10,
  3,
  (a, b) => Math.max(a, b) + 1,
  'Add two natural numbers: "123+45=" -> "168".',
);

/** Multiplication task (difficulty: digits per operand, 1..6, default 2). */
export const multiplication: TaskFactory = operationTask(
  'multiplication',
  '*',
  (a, b) => a * b,
  6,
  2,
  (a, b) => a + b,
  'Multiply two natural numbers: "12*34=" -> "408".',
);
