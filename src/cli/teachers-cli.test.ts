// Multi-teacher distillation from the command line: `npm run train` with a prompt list whose rows name their
// teacher (teacher_id) and `--teachers id=checkpoint,...` trains two finite steps, loads every teacher once (each
// named on stderr and counted in the memory plan), and logs the reverse KL per teacher beside the overall one; a
// row naming a teacher the flags do not configure is refused input (exit 2) with its id and line.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT } from './args';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const LIST = [
  '{"prompt": "ab", "answer": "ab", "teacher_id": "self"}',
  '{"prompt": "cd", "answer": "cd", "teacher_id": "rev"}',
  '{"prompt": "ef", "answer": "ef"}',
].join('\n');

function train(args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'rl-lab-teachers-'));
  const prompts = join(dir, 'prompts.jsonl');
  writeFileSync(prompts, LIST);
  const out = join(dir, 'run');
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      './src/cli/register-raw.mjs',
      'src/cli/train.ts',
      '--task',
      'prompts',
      '--prompts',
      prompts,
      '--checkpoint',
      'copy',
      '--steps',
      '2',
      '--train_batch_size',
      '3',
      '--num_generations',
      '2',
      '--eval_every',
      '0',
      '--save_every',
      '0',
      '--inspect-groups',
      '0',
      '--quiet',
      '--autotune=false',
      '--out',
      out,
      ...args,
    ],
    { cwd: ROOT, env: process.env, encoding: 'utf8' },
  );
  return { ...run, out };
}

describe('train with two teachers by prompt source', () => {
  it('trains two finite steps, each teacher loaded and planned, the reverse KL logged per teacher', () => {
    const run = train(['--teacher', 'copy', '--teachers', 'self=copy,rev=reverse']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('teachers: teacher self checkpoints/copy/');
    expect(run.stderr).toContain('teachers: teacher rev checkpoints/reverse/');
    // teacher and self name one folder: read and held once, so two teachers are planned.
    expect(run.stderr).toMatch(/; the 2 teachers \d/);
    const records = readFileSync(join(run.out, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(records.map((r) => r.step)).toEqual([1, 2]);
    for (const r of records) {
      expect(Number.isFinite(r.loss)).toBe(true);
      expect(Number.isFinite(r['distill/reverse_kl'])).toBe(true);
      const perTeacher = Object.keys(r).filter((k) => k.startsWith('distill/reverse_kl/'));
      expect(perTeacher.length).toBeGreaterThan(0);
      for (const k of perTeacher) expect(Number.isFinite(r[k]), k).toBe(true);
    }
    // Before the first update the student is the copy warm start: its own weights' reverse KL is exactly 0.
    const first = records[0];
    for (const id of ['self', 'teacher'])
      if (`distill/reverse_kl/${id}` in first) expect(first[`distill/reverse_kl/${id}`]).toBe(0);
  });

  it('refuses a teacher_id the flags do not configure, with its id and line (exit 2)', () => {
    const run = train(['--teacher', 'copy', '--teachers', 'self=copy']);
    expect(run.status).toBe(EXIT.usage);
    expect(run.stderr).toContain(
      'teachers: line 2 of the prompt list names teacher_id "rev", which is not one of teachers (self)',
    );
  });
});
