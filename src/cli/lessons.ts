// `npm run lessons -- --list` and `npm run lessons -- --check [id ...] [--seeds N] [--seed S]`: runs each lesson's
// runs headless through the lab's trainer on the machine's WebGPU adapter (Dawn), evaluates its check on each seed
// and prints the observed values, the verdict and how many seeds showed the phenomenon. A lesson passes when its
// check holds on at least 4 of 5 seeds (80%, rounded up, of --seeds). Exit 0 when every lesson checked passes.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LESSONS, lessonById, type Lesson } from '../lessons';
import { runLesson, type LessonOutcome } from './lesson-run';
import { lessonRunsText } from '../lessons/table';
import { UsageError, runCli } from './args';
import { PUBLIC_ASSETS } from './files';
import { acquireTunedDevice } from './tuned-device';

const USAGE = `usage: npm run lessons -- --list
       npm run lessons -- --check [id ...] [--seeds N] [--seed S] [--backend webgpu|cpu]

  --list        the lessons: id, title, runs and step budget
  --check       run each named lesson (all when none is named) on seeds S..S+N-1 and evaluate its check
  --seeds N     seeds per lesson (default 5); a lesson passes when its check holds on ceil(0.8 N) of them
  --seed S      first seed (default 0)
  --backend     webgpu (default, Dawn) or cpu (the CPU twins: slow)
`;

/** Seeds out of `n` on which a lesson's check must hold for it to pass (4 of 5). */
export function seedsNeeded(n: number): number {
  return Math.ceil(0.8 * n);
}

interface LessonArgs {
  mode: 'list' | 'check' | 'help';
  ids: string[];
  seeds: number;
  seed: number;
  backend: 'webgpu' | 'cpu';
}

export function parseLessonArgs(argv: readonly string[]): LessonArgs {
  const out: LessonArgs = { mode: 'help', ids: [], seeds: 5, seed: 0, backend: 'webgpu' };
  const whole = (flag: string, v: string | undefined, min: number) => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < min)
      throw new UsageError(
        `--${flag} must be a whole number >= ${min}; got ${v === undefined ? 'nothing' : JSON.stringify(v)}`,
      );
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--list') out.mode = 'list';
    else if (a === '--check') out.mode = 'check';
    else if (a === '--help' || a === '-h') out.mode = 'help';
    else if (a === '--seeds') out.seeds = whole('seeds', argv[++i], 1);
    else if (a === '--seed') out.seed = whole('seed', argv[++i], 0);
    else if (a === '--backend') {
      const b = argv[++i];
      if (b !== 'webgpu' && b !== 'cpu')
        throw new UsageError(`--backend must be webgpu or cpu; got ${JSON.stringify(b ?? '')}`);
      out.backend = b;
    } else if (a.startsWith('--')) throw new UsageError(`unknown flag ${a} (see --help)`);
    else out.ids.push(a);
  }
  for (const id of out.ids) {
    if (!lessonById(id))
      throw new UsageError(`no lesson "${id}"; the lessons are ${LESSONS.map((l) => l.id).join(', ')}`);
  }
  if (out.ids.length && out.mode !== 'check') throw new UsageError('lesson ids go with --check');
  return out;
}

function listText(): string {
  return LESSONS.map((l) => `${l.id.padEnd(22)}${l.title}\n${' '.repeat(22)}${lessonRunsText(l)}\n`).join('');
}

function valuesText(o: LessonOutcome): string {
  return Object.entries(o.verdict.values)
    .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : Number(v.toPrecision(4))}`)
    .join(', ');
}

async function main(argv: string[]): Promise<number> {
  const args = parseLessonArgs(argv);
  if (args.mode === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.mode === 'list') {
    process.stdout.write(listText());
    return 0;
  }
  const lessons: Lesson[] = args.ids.length ? args.ids.map((id) => lessonById(id)!) : [...LESSONS];
  const ctx = args.backend === 'webgpu' ? await acquireTunedDevice({ tune: false }) : null;
  const backend = ctx ? ({ kind: 'webgpu', ctx } as const) : ({ kind: 'cpu' } as const);
  const need = seedsNeeded(args.seeds);
  let failed = 0;
  for (const lesson of lessons) {
    let shown = 0;
    const t0 = performance.now();
    for (let s = args.seed; s < args.seed + args.seeds; s++) {
      const o = await runLesson(lesson, {
        seed: s,
        backend,
        assets: PUBLIC_ASSETS,
        onAlert: (run, alert) => console.error(`  warning (${lesson.id} seed ${s}, ${run.label}): ${alert.message}`),
      });
      if (o.verdict.observed) shown++;
      console.log(`${lesson.id} seed ${s}: ${o.verdict.observed ? 'observed' : 'not this time'}: ${valuesText(o)}`);
      console.log(`  ${o.verdict.summary}`);
    }
    const pass = shown >= need;
    if (!pass) failed++;
    console.log(
      `${pass ? 'PASS' : 'FAIL'} ${lesson.id}: observed on ${shown} of ${args.seeds} seeds (needs ${need}) in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
    );
  }
  ctx?.destroy();
  console.log(`${lessons.length - failed} of ${lessons.length} lessons pass`);
  return failed ? 1 : 0;
}

// Run when executed (npm run lessons), not when a test imports parseLessonArgs.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) runCli('lessons', main);
