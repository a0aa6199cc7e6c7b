// Knights and Knaves: each of 2-3 people is a knight (always tells the truth) or a knave (always lies), and each
// makes one statement; say who is which. "kk:A:Bn;B:A=B?" reads "A says: B is a knave. B says: A and B are the
// same kind", and the answer is one letter per person, k or n, in order ("kn"). The generator keeps only puzzles
// with exactly one consistent assignment; the solver tries every assignment. Not natural-language puzzles: the
// notation is short so that the small presets' context holds prompt and answer.

import type { Rng } from '../core/random';
import { defineTask, exactMatch, show, type TaskFactory } from './task';

/** People are named by these letters, in order. */
const PEOPLE = 'ABC';

/**
 * One statement, in the prompt's notation: `Bk` (B is a knight), `Bn` (B is a knave), `Ak&Bn` (both),
 * `Ak|Bn` (at least one), `A=B` (A and B are the same kind), `A!B` (they differ).
 */
type Statement = string;

/** A puzzle: statements[i] is what person i says. */
export interface KnightsKnavesProblem {
  readonly statements: readonly Statement[];
}

const ATOM = /^([A-C])([kn])$/;
const COMPOUND = /^([A-C])([kn])([&|])([A-C])([kn])$/;
const RELATION = /^([A-C])([=!])([A-C])$/;

/** Whether `s` holds when knights[i] says whether person i is a knight; null when `s` is not a statement about these people. */
export function statementHolds(s: Statement, knights: readonly boolean[]): boolean | null {
  const who = (letter: string) => knights[PEOPLE.indexOf(letter)];
  const atom = (p: string, kind: string) => {
    const k = who(p);
    return k === undefined ? null : k === (kind === 'k');
  };
  let m = ATOM.exec(s);
  if (m) return atom(m[1], m[2]);
  m = COMPOUND.exec(s);
  if (m) {
    const a = atom(m[1], m[2]);
    const b = atom(m[4], m[5]);
    if (a === null || b === null) return null;
    return m[3] === '&' ? a && b : a || b;
  }
  m = RELATION.exec(s);
  if (m) {
    const p = who(m[1]);
    const q = who(m[3]);
    if (p === undefined || q === undefined) return null;
    return m[2] === '=' ? p === q : p !== q;
  }
  return null;
}

/**
 * Every assignment (k/n per person, as the answer is written) under which each knight's statement is true and
 * each knave's false. Brute force over the 2^n assignments.
 */
export function solveKnightsKnaves(statements: readonly Statement[]): string[] {
  const n = statements.length;
  const out: string[] = [];
  for (let mask = 0; mask < 1 << n; mask++) {
    const knights = Array.from({ length: n }, (_, i) => ((mask >> (n - 1 - i)) & 1) === 1);
    if (statements.every((s, i) => statementHolds(s, knights) === knights[i]))
      out.push(knights.map((k) => (k ? 'k' : 'n')).join(''));
  }
  return out;
}

/** A random statement about the first n people (two different people in compounds and relations). */
function drawStatement(rng: Rng, n: number): Statement {
  const person = () => PEOPLE[rng.int(n)];
  const kind = () => (rng.int(2) === 0 ? 'k' : 'n');
  const two = (): [string, string] => {
    const a = rng.int(n);
    const b = (a + 1 + rng.int(n - 1)) % n;
    return [PEOPLE[a], PEOPLE[b]];
  };
  const r = rng.int(10);
  if (r < 4) return `${person()}${kind()}`;
  if (r < 8) {
    const [p, q] = two();
    return `${p}${kind()}${r < 6 ? '&' : '|'}${q}${kind()}`;
  }
  const [p, q] = two();
  return `${p}${r === 8 ? '=' : '!'}${q}`;
}

const render = (p: KnightsKnavesProblem) => `kk:${p.statements.map((s, i) => `${PEOPLE[i]}:${s}`).join(';')}?`;

/** The longest statement: `Ak&Bn`. */
const LONGEST_STATEMENT = 5;

/** Knights and Knaves task (difficulty: how many people, 2..3, default 2). */
export const knightsKnaves: TaskFactory = defineTask<KnightsKnavesProblem>({
  name: 'knights_knaves',
  description:
    'Knights always tell the truth, knaves always lie: "kk:A:Bn;B:A=B?" (A says B is a knave; B says A and B are alike) -> "kn".',
  difficulty: { min: 2, max: 3, default: 2, meaning: 'how many people' },
  alphabet: `kk:;?&|=!${PEOPLE}kn`,
  weights: { accuracy: 0.9, format: 0.1 },
  extraRewards: ['positions'],
  disjointSplits: true,
  maxPromptLength: (n) => 3 + n * (2 + LONGEST_STATEMENT) + (n - 1) + 1,
  maxCompletionLength: (n) => n + 2,
  draw(rng, n) {
    return { statements: Array.from({ length: n }, () => drawStatement(rng, n)) };
  },
  render,
  parse(prompt) {
    const m = /^kk:(.*)\?$/.exec(prompt);
    if (!m) return null;
    const said = m[1].split(';');
    if (said.length < 2 || said.length > PEOPLE.length) return null;
    const statements: Statement[] = [];
    for (let i = 0; i < said.length; i++) {
      const [speaker, s, ...rest] = said[i].split(':');
      if (speaker !== PEOPLE[i] || s === undefined || rest.length) return null;
      // Only statements about the people present (a C in a two-person puzzle is not one of this task's prompts).
      if (
        statementHolds(
          s,
          Array.from({ length: said.length }, () => true),
        ) === null
      )
        return null;
      statements.push(s);
    }
    return { statements };
  },
  key: render,
  // Only puzzles with exactly one solution are drawn (and solvable).
  solve(p) {
    const all = solveKnightsKnaves(p.statements);
    return all.length === 1 ? all[0] : null;
  },
  completionLimit: (p) => p.statements.length + 2,
  check(p, completion) {
    const all = solveKnightsKnaves(p.statements);
    const n = p.statements.length;
    const ok = new RegExp(`^[kn]{${n}}$`).test(completion);
    return exactMatch(all.length === 1 ? all[0] : '', completion, {
      ok,
      why: `not ${n} letters k or n (one per person): ${show(completion)}`,
    });
  },
  meta: (p) => ({ people: p.statements.length }),
});
