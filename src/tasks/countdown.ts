// Countdown: reach a target with some of the given numbers, + - * / and parentheses, each number used at most
// once ("24 from 3,8,8,3=" -> "8/(3-8/3)"). The verifier parses the completion itself (expression.ts, exact
// rationals, no eval); the generator builds the target from the numbers, so a solution always exists, and the
// solver finds the shortest one by exhaustive search. Not the TV show's rules (no 100s, no approximate scores).

import type { Rng } from '../core/random';
import { evaluateExpression, parseExpression, Rational } from './expression';
import { defineTask, show, type TaskFactory } from './task';

/** Given numbers are drawn uniformly from 1..NUMBER_MAX (repeats allowed). */
export const COUNTDOWN_NUMBER_MAX = 9;
/** Targets are integers in 1..TARGET_MAX, never equal to one of the given numbers. */
export const COUNTDOWN_TARGET_MAX = 99;
/** The solver is exhaustive; beyond this many numbers it would be slow, so prompts with more are not parsed. */
export const COUNTDOWN_MAX_NUMBERS = 5;

/** A Countdown problem. */
export interface CountdownProblem {
  readonly numbers: readonly number[];
  readonly target: number;
}

/** Subtree of a candidate solution: its exact value, its text with minimal parentheses, its precedence. */
interface Node {
  value: Rational;
  text: string;
  /** 1: sum or difference, 2: product or quotient, 3: a number. */
  prec: 1 | 2 | 3;
}

const wrap = (n: Node, needed: boolean): string => (needed ? `(${n.text})` : n.text);

/**
 * Every way to combine two subtrees with one operator (both operand orders), printed with only the
 * parentheses the left-associative grammar needs: a+(b-c) prints as a+b-c and a*(b/c) as a*b/c (equal values
 * in exact arithmetic), while a-(b+c) and a/(b*c) keep theirs.
 */
function combine(a: Node, b: Node): Node[] {
  const out: Node[] = [];
  for (const [x, y] of [
    [a, b],
    [b, a],
  ] as const) {
    out.push({ value: x.value.add(y.value), text: `${x.text}+${y.text}`, prec: 1 });
    out.push({ value: x.value.mul(y.value), text: `${wrap(x, x.prec === 1)}*${wrap(y, y.prec === 1)}`, prec: 2 });
    out.push({ value: x.value.sub(y.value), text: `${x.text}-${wrap(y, y.prec === 1)}`, prec: 1 });
    const q = x.value.div(y.value);
    if (q !== null) out.push({ value: q, text: `${wrap(x, x.prec === 1)}/${wrap(y, y.prec < 3)}`, prec: 2 });
  }
  return out;
}

/** Shorter text wins; equal lengths: lexicographically first (makes the solver's answer canonical). */
function better(a: string, b: string): boolean {
  return a.length < b.length || (a.length === b.length && a < b);
}

/**
 * The shortest expression (ties: lexicographically first) that reaches `target` using each given number at
 * most once, or null if none exists. Exhaustive: dynamic programming over subsets of the numbers, keeping
 * for every subset the shortest text per (value, precedence); a parent's length depends on its children only
 * through their lengths and precedences, so this finds the same optimum as trying every expression tree.
 */
export function solveCountdown(numbers: readonly number[], target: number): string | null {
  const n = numbers.length;
  if (n === 0 || n > COUNTDOWN_MAX_NUMBERS) return null;
  const goal = Rational.of(target);
  const tables: Map<string, Node>[] = [];
  let best: string | null = null;
  const offer = (table: Map<string, Node>, node: Node): void => {
    const key = `${node.value.toString()}|${node.prec}`;
    const old = table.get(key);
    if (old === undefined || better(node.text, old.text)) table.set(key, node);
  };
  for (let mask = 1; mask < 1 << n; mask++) {
    const table = new Map<string, Node>();
    if ((mask & (mask - 1)) === 0) {
      const v = numbers[31 - Math.clz32(mask)] ?? 0;
      offer(table, { value: Rational.of(v), text: String(v), prec: 3 });
    } else {
      // Unordered splits of `mask` into two non-empty parts: the part holding the lowest bit is `a`.
      const low = mask & -mask;
      for (let a = (mask - 1) & mask; a > 0; a = (a - 1) & mask) {
        if ((a & low) === 0) continue;
        const left = tables[a];
        const right = tables[mask ^ a];
        if (left === undefined || right === undefined) continue;
        for (const x of left.values()) for (const y of right.values()) for (const c of combine(x, y)) offer(table, c);
      }
    }
    tables[mask] = table;
    for (const node of table.values()) {
      if (node.value.equals(goal) && (best === null || better(node.text, best))) best = node.text;
    }
  }
  return best;
}

/** The verdict parts of a Countdown completion, before weighting (exported for tests and the inspector). */
export function judgeCountdown(
  problem: CountdownProblem,
  completion: string,
): { accuracy: number; format: number; reason: string } {
  const parsed = parseExpression(completion);
  if (!parsed.ok)
    return { accuracy: 0, format: 0, reason: `not an expression: ${parsed.error} (column ${parsed.at + 1})` };
  // Each given number may be used at most as many times as it is given.
  const left = new Map<bigint, number>();
  for (const n of problem.numbers) left.set(BigInt(n), (left.get(BigInt(n)) ?? 0) + 1);
  const given = problem.numbers.join(',');
  for (const n of parsed.numbers) {
    const k = left.get(n);
    if (k === undefined)
      return { accuracy: 0, format: 0, reason: `uses ${show(String(n), 12)}, which is not one of ${given}` };
    if (k === 0) return { accuracy: 0, format: 0, reason: `uses ${n} more often than given (${given})` };
    left.set(n, k - 1);
  }
  const value = evaluateExpression(parsed.expr);
  if (!value.ok) return { accuracy: 0, format: 0, reason: value.error };
  if (value.value.equals(Rational.of(problem.target)))
    return { accuracy: 1, format: 1, reason: `correct: = ${problem.target}` };
  return { accuracy: 0, format: 1, reason: `= ${value.value.toString()}, not ${problem.target}` };
}

/**
 * A random target reachable from all the numbers: combine random pairs with random operators until one value
 * is left. Null when that value is not an integer in 1..TARGET_MAX or equals a given number (trivial).
 */
function drawProblem(rng: Rng, count: number): CountdownProblem | null {
  const numbers = Array.from({ length: count }, () => 1 + rng.int(COUNTDOWN_NUMBER_MAX));
  const pool = numbers.map((n) => Rational.of(n));
  while (pool.length > 1) {
    const a = pool.splice(rng.int(pool.length), 1)[0];
    const b = pool.splice(rng.int(pool.length), 1)[0];
    if (a === undefined || b === undefined) return null;
    const op = rng.int(4);
    const v = op === 0 ? a.add(b) : op === 1 ? a.sub(b) : op === 2 ? a.mul(b) : a.div(b);
    if (v === null) return null;
    pool.push(v);
  }
  const v = pool[0];
  if (v === undefined || !v.isInteger() || v.num < 1n || v.num > BigInt(COUNTDOWN_TARGET_MAX)) return null;
  const target = Number(v.num);
  if (numbers.includes(target)) return null;
  return { numbers, target };
}

const PROMPT = /^([1-9][0-9]{0,3}) from ([1-9][0-9]{0,2}(?:,[1-9][0-9]{0,2}){0,4})=$/;

/** Countdown task (difficulty: how many numbers are given, 2..4, default 3). */
export const countdown: TaskFactory = defineTask<CountdownProblem>({
  name: 'countdown',
  description:
    'Countdown: reach the target with + - * / ( ), each number at most once: "24 from 3,8,8,3=" -> "8/(3-8/3)".',
  difficulty: { min: 2, max: 4, default: 3, meaning: 'how many numbers are given' },
  alphabet: '0123456789 from,=+-*/()',
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: [],
  disjointSplits: true,
  maxPromptLength: (n) => 2 * n + 8,
  maxCompletionLength: (n) => 6 * n + 4,
  draw: (rng, n) => drawProblem(rng, n),
  render: (p) => `${p.target} from ${p.numbers.join(',')}=`,
  parse(prompt) {
    const m = PROMPT.exec(prompt);
    if (m?.[1] === undefined || m[2] === undefined) return null;
    return { target: Number(m[1]), numbers: m[2].split(',').map(Number) };
  },
  // The order the numbers are shown in does not change the problem.
  key: (p) => `${p.target}:${[...p.numbers].sort((a, b) => a - b).join(',')}`,
  solve: (p) => solveCountdown(p.numbers, p.target),
  completionLimit: (p) => 6 * p.numbers.length + 4,
  check: (p, completion) => judgeCountdown(p, completion),
  meta: (p) => ({ numbers: [...p.numbers], target: p.target }),
});
