// `npm run check:verifiers`: the Python verifiers of the exports (src/export/verifiers.py) against the lab's
// TypeScript ones (src/tasks/) on the same prompts and completions: every task at its smallest, default and largest
// difficulty, train and held-out prompts, and for each the canonical answer, near misses (one character changed,
// added or dropped, a leading zero), random strings over the task's alphabet, an empty, an overlong and a
// foreign-character completion. Runs Debian's python3 (/usr/bin/python3, or $PYTHON); prints a table per task and
// exits 1 on any disagreement of a reward part. Not part of the test suite, which needs no Python.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/core/random';
import { getTask, taskFactories, taskNames, type TaskItem } from '../src/tasks';

const ITEMS_PER_SPLIT = 8;
const RANDOM_STRINGS = 3;

interface Case {
  task: string;
  difficulty: number;
  prompt: string;
  completion: string;
}

function completionsOf(rng: Rng, alphabet: string, limit: number, item: TaskItem): string[] {
  const a = item.answer;
  const other = (ch: string) => alphabet[(alphabet.indexOf(ch) + 1 + rng.int(alphabet.length - 1)) % alphabet.length];
  const i = rng.int(a.length);
  const out = [
    a,
    a.slice(0, i) + other(a[i]) + a.slice(i + 1),
    a + alphabet[rng.int(alphabet.length)],
    a.slice(0, -1),
    `0${a}`,
    ` ${a}`,
    '',
    alphabet[0].repeat(limit + 1),
    `${a}é`,
    `${a}\u{1F600}`,
  ];
  for (let k = 0; k < RANDOM_STRINGS; k++) {
    const n = 1 + rng.int(limit + 2);
    out.push(Array.from({ length: n }, () => alphabet[rng.int(alphabet.length)]).join(''));
  }
  if (item.prompt.includes(' from ')) {
    // Countdown: other spellings of a correct expression, and numbers that are not all given.
    out.push(
      `(${a})`,
      a.replace(/([+\-*/])/g, ' $1 '),
      `${a}*1`,
      `${a}+0`,
      '1/0',
      item.prompt.split(' from ')[1].replace('=', '').split(',').join('+'),
    );
  }
  return out;
}

const cases: Case[] = [];
for (const name of taskNames) {
  const range = taskFactories[name].difficultyRange;
  for (const difficulty of [...new Set([range.min, range.default, range.max])]) {
    const task = getTask(name, difficulty);
    const rng = new Rng(difficulty * 7919 + name.length);
    for (const split of ['train', 'heldout'] as const) {
      for (let k = 0; k < ITEMS_PER_SPLIT; k++) {
        const item = task.sample(rng, split);
        for (const completion of completionsOf(rng, task.alphabet, task.maxCompletionLength, item))
          cases.push({ task: name, difficulty, prompt: item.prompt, completion });
      }
    }
  }
}

const python = process.env.PYTHON ?? '/usr/bin/python3';
const verifiersDir = fileURLToPath(new URL('../src/export/', import.meta.url));
const program =
  'import json, sys; sys.path.insert(0, sys.argv[1]); import verifiers; cases = json.load(sys.stdin); print(json.dumps([verifiers.verify(c["task"], c["difficulty"], c["prompt"], c["completion"]) for c in cases]))';
const version = execFileSync(python, ['--version'], { encoding: 'utf8' }).trim();
const pyParts = JSON.parse(
  execFileSync(python, ['-c', program, verifiersDir], {
    input: JSON.stringify(cases),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  }),
) as Record<string, number>[];

interface Tally {
  cases: number;
  prompts: Set<string>;
  correct: number;
  partial: number;
  zero: number;
  disagree: string[];
}
const tally = new Map<string, Tally>();
cases.forEach((c, i) => {
  const task = getTask(c.task, c.difficulty);
  const ts = task.verify({ prompt: c.prompt, answer: '' }, c.completion);
  const py = pyParts[i];
  const t = tally.get(c.task) ?? {
    cases: 0,
    prompts: new Set<string>(),
    correct: 0,
    partial: 0,
    zero: 0,
    disagree: [],
  };
  tally.set(c.task, t);
  t.cases++;
  t.prompts.add(`${c.difficulty}|${c.prompt}`);
  if (ts.reward === 1) t.correct++;
  else if (ts.reward > 0) t.partial++;
  else t.zero++;
  for (const k of new Set([...Object.keys(ts.parts), ...Object.keys(py)])) {
    const a = ts.parts[k];
    const b = py[k];
    if (a === undefined || b === undefined || Math.abs(a - b) > 1e-12)
      t.disagree.push(`${JSON.stringify(c.prompt)} ${JSON.stringify(c.completion)}: ${k} TypeScript ${a} Python ${b}`);
  }
});

console.log(`Python verifiers (src/export/verifiers.py, ${version}) against src/tasks/: every reward part compared`);
console.log('| task | prompts | completions | reward 1 | partial | 0 | disagreements |');
console.log('|---|---|---|---|---|---|---|');
let disagreements = 0;
for (const [name, t] of tally) {
  console.log(
    `| ${name} | ${t.prompts.size} | ${t.cases} | ${t.correct} | ${t.partial} | ${t.zero} | ${t.disagree.length} |`,
  );
  disagreements += t.disagree.length;
}
console.log(
  `total: ${cases.length} completions of ${[...tally.values()].reduce((s, t) => s + t.prompts.size, 0)} prompts, ${disagreements} disagreements`,
);
for (const t of tally.values()) for (const d of t.disagree.slice(0, 5)) console.log(`  ${d}`);
process.exit(disagreements ? 1 : 0);
