// Word-problem arithmetic: templated English sentences ("Ana has 12 apples and buys 7 more. How many apples does Ana
// have now?") with one exact integer answer each (+, -, x, exact division, and a two-step +/-), for instruct models
// that read sentences rather than the lab's "12+7=" notation. The verifier is tolerant of how the answer is written:
// the last number in the completion counts ("19", "19.", "19 apples", "The answer is 19", "$1,200"), so a chat
// model's phrasing is not marked wrong. Difficulty is the digits of the numbers. Not free-form math word problems
// (GSM8K): every prompt comes from the templates below and parses back to its numbers.

import type { Rng } from '../core/random';
import { defineTask, show, type TaskFactory } from './task';

const NAMES = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Fatima', 'Gus', 'Hana'] as const;
const ITEMS = ['apple', 'pencil', 'marble', 'sticker', 'book', 'cookie'] as const;

/** One problem: a template, who and what it is about, and its numbers. */
export interface WordProblem {
  template: number;
  name: string;
  item: string;
  numbers: readonly number[];
}

interface Template {
  /** The sentence with {name}, {item} (plural: {item}s) and {0}, {1}, {2} for the numbers. */
  text: string;
  /** Numbers of the template drawn at a difficulty (digits), or null to draw again. */
  draw(rng: Rng, digits: number): number[] | null;
  solve(n: readonly number[]): number;
}

/** A uniform integer in [lo, hi]. */
const between = (rng: Rng, lo: number, hi: number) => lo + rng.int(hi - lo + 1);
/** The largest number of `digits` digits, and the smallest worth asking about (2 for one digit). */
const top = (digits: number) => 10 ** digits - 1;
const low = (digits: number) => (digits === 1 ? 2 : 10 ** (digits - 1));

const TEMPLATES: readonly Template[] = [
  {
    text: '{name} has {0} {item}s and buys {1} more. How many {item}s does {name} have now?',
    draw: (rng, d) => [between(rng, low(d), top(d)), between(rng, low(d), top(d))],
    solve: ([a, b]) => a + b,
  },
  {
    text: '{name} had {0} {item}s and gave {1} of them to a friend. How many {item}s does {name} have left?',
    draw: (rng, d) => {
      const a = between(rng, low(d), top(d));
      return [a, between(rng, 1, a - 1)];
    },
    solve: ([a, b]) => a - b,
  },
  {
    text: 'There are {0} boxes with {1} {item}s in each box. How many {item}s are there in all?',
    draw: (rng, d) => [between(rng, 2, Math.min(top(d), 12 * d)), between(rng, low(d), top(d))],
    solve: ([a, b]) => a * b,
  },
  {
    text: '{name} shares {0} {item}s equally among {1} friends. How many {item}s does each friend get?',
    draw: (rng, d) => {
      const friends = between(rng, 2, Math.min(9, top(d)));
      const each = between(rng, low(d), top(d));
      return [friends * each, friends];
    },
    solve: ([a, b]) => a / b,
  },
  {
    text: '{name} has {0} {item}s, buys {1} more and then gives away {2}. How many {item}s does {name} have now?',
    draw: (rng, d) => {
      const a = between(rng, low(d), top(d));
      const b = between(rng, low(d), top(d));
      return [a, b, between(rng, 1, a + b - 1)];
    },
    solve: ([a, b, c]) => a + b - c,
  },
  {
    text: 'A shop sells {item}s for {0} dollars each. How many dollars do {1} {item}s cost?',
    draw: (rng, d) => [between(rng, 2, top(d)), between(rng, 2, Math.min(top(d), 12 * d))],
    solve: ([a, b]) => a * b,
  },
];

function render(p: WordProblem): string {
  return TEMPLATES[p.template].text
    .replaceAll('{name}', p.name)
    .replaceAll('{item}', p.item)
    .replace(/\{(\d)\}/g, (_, i: string) => String(p.numbers[Number(i)]));
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each template as a pattern that reads its name, item and numbers back (canonical numbers only). */
const PATTERNS = TEMPLATES.map((t) => {
  let source = '';
  const groups: ('name' | 'item' | number)[] = [];
  for (const part of t.text.split(/(\{name\}|\{item\}|\{\d\})/)) {
    if (part === '{name}') {
      source += groups.includes('name') ? '\\k<name>' : `(?<name>${NAMES.join('|')})`;
      if (!groups.includes('name')) groups.push('name');
    } else if (part === '{item}') {
      source += groups.includes('item') ? '\\k<item>' : `(?<item>${ITEMS.join('|')})`;
      if (!groups.includes('item')) groups.push('item');
    } else if (/^\{\d\}$/.test(part)) source += `(?<n${part[1]}>0|[1-9][0-9]{0,5})`;
    else source += escapeRegExp(part);
  }
  return new RegExp(`^${source}$`);
});

function parse(prompt: string): WordProblem | null {
  for (const [template, pattern] of PATTERNS.entries()) {
    const m = pattern.exec(prompt);
    if (!m?.groups) continue;
    const numbers: number[] = [];
    for (let i = 0; m.groups[`n${i}`] !== undefined; i++) numbers.push(Number(m.groups[`n${i}`]));
    return { template, name: m.groups.name ?? '', item: m.groups.item ?? '', numbers };
  }
  return null;
}

/** Every number written in a text, in order: digits with optional thousands commas and decimals, and a sign. */
const NUMBER = /-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?/g;

/**
 * The answer a completion gives: its last number, commas dropped ("1,200" is 1200, "19." is 19); null without one.
 * A decimal that is a whole number ("19.0") is that integer.
 */
export function lastNumber(completion: string): number | null {
  const found = completion.match(NUMBER);
  if (!found) return null;
  const value = Number(found[found.length - 1].replaceAll(',', ''));
  return Number.isFinite(value) ? value : null;
}

/**
 * The longest prompt at a difficulty: each template with the longest name and item and every number one digit
 * longer than the difficulty (a shared total is friends x each, up to d + 1 digits).
 */
function longestPrompt(digits: number): number {
  const name = NAMES.reduce((a, b) => (b.length > a.length ? b : a));
  const item = ITEMS.reduce((a, b) => (b.length > a.length ? b : a));
  const n = 10 ** (digits + 1) - 1;
  return Math.max(...TEMPLATES.map((_, template) => render({ template, name, item, numbers: [n, n, n] }).length));
}

/**
 * Longest completion the verifier reads: room for a few sentences of working, and in the think format (which adds
 * the tags and its own budget) about 50 tokens of a real model's tokenizer.
 */
const COMPLETION_LIMIT = 160;

/** Word-problem arithmetic (difficulty: digits of the numbers, 1..3, default 2). */
export const wordProblems: TaskFactory = defineTask<WordProblem>({
  name: 'word_problems',
  description:
    'Arithmetic in sentences: "Ana has 12 apples and buys 7 more. How many apples does Ana have now?" -> "19" (the last number in the answer counts).',
  difficulty: { min: 1, max: 3, default: 2, meaning: 'digits of the numbers' },
  // Printable ASCII but < and > (which would spell special tokens): a chat model's answer may say more than the number.
  alphabet: Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))
    .filter((c) => c !== '<' && c !== '>')
    .join(''),
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: [],
  disjointSplits: true,
  maxPromptLength: longestPrompt,
  maxCompletionLength: () => COMPLETION_LIMIT,
  draw: (rng, d) => {
    const template = rng.int(TEMPLATES.length);
    const numbers = TEMPLATES[template].draw(rng, d);
    if (numbers === null) return null;
    return { template, name: NAMES[rng.int(NAMES.length)], item: ITEMS[rng.int(ITEMS.length)], numbers };
  },
  render,
  parse,
  key: render,
  solve: (p) => String(TEMPLATES[p.template].solve(p.numbers)),
  completionLimit: () => COMPLETION_LIMIT,
  check: (p, completion) => {
    const expected = TEMPLATES[p.template].solve(p.numbers);
    const given = lastNumber(completion);
    if (given === null) return { accuracy: 0, format: 0, reason: `no number in ${show(completion)}` };
    if (given === expected) return { accuracy: 1, format: 1, reason: 'correct' };
    return { accuracy: 0, format: 1, reason: `wrong: expected ${expected}, got ${given}` };
  },
  meta: (p) => ({ template: p.template }),
});
