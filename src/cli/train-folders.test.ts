// `npm run train`'s --out folder cannot be lost or mixed: a folder holding a run is refused untouched unless --resume
// or --overwrite (which removes the old run only once the new one's checks passed); a live lock keeps a second writer
// out and a stale one is taken over; a killed save's temporaries are swept; --resume refuses a checkpoint and trainer
// state from two runs, or a state whose bytes changed; a seed group checks every seed's folder first; and a prompt
// longer than the model's context is refused input before the device is acquired.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { trainInProcess } from '../testing/train-in-process';
import { EXIT, exitCodeOf } from './args';
import { TRAINER_STATE_FILE } from './files';
import { LOCK_FILE, RUN_ID_KEY, checkRunFolder } from './run-folder';

// A device that is never to be acquired: a run refused before it must not reach this.
vi.mock('./tuned-device', async (real) => ({
  ...(await real<typeof import('./tuned-device')>()),
  acquireTunedDevice: async () => {
    throw new Error('the device was acquired');
  },
}));

const dir = mkdtempSync(join(tmpdir(), 'rl-lab-folders-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TINY = [
  '--task',
  'copy',
  '--train_batch_size',
  '1',
  '--num_generations',
  '2',
  '--eval_every',
  '0',
  '--inspect-groups',
  '0',
  '--backend',
  'cpu',
  '--quiet',
];
const run = (out: string, ...more: string[]) => trainInProcess([...TINY, '--steps', '2', '--out', out, ...more]);

/** Every file under `d` with its bytes, to compare a folder before and after. */
function snapshot(d: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const e of readdirSync(d, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) {
      const p = join(e.parentPath, e.name);
      files[p] = readFileSync(p).toString('base64');
    }
  }
  return files;
}

const stepsIn = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);

/** A pid that no process has now: one of a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid as number;
}

describe('a run folder', () => {
  it('holding a run is refused untouched; --overwrite replaces it only once the new run passed its checks', async () => {
    const out = join(dir, 'reuse');
    const first = await run(out);
    expect(first.error).toBeNull();
    const before = snapshot(out);
    const firstId = (JSON.parse(readFileSync(join(out, 'rl_config.json'), 'utf8')) as { run_id: string }).run_id;
    expect(firstId).toMatch(/^[0-9a-f-]{36}$/);

    const again = await run(out, '--seed', '5');
    expect(again.error?.message).toMatch(
      new RegExp(`^${out} holds another run \\(rl_config\\.json, metrics\\.jsonl, .*--resume .*--overwrite`),
    );
    expect(exitCodeOf(again.error)).toBe(EXIT.usage);
    // A new run whose checks fail (its start checkpoint cannot be read) leaves the old run as it was.
    const broken = await run(out, '--overwrite', '--checkpoint', join(dir, 'no-such-checkpoint'));
    expect(broken.error?.message).toMatch(/no-such-checkpoint/);
    expect(snapshot(out)).toEqual(before);
    // So does one whose reward_fn does not compile (tried in its sandbox before the folder is touched).
    const badReward = join(dir, 'bad-reward.js');
    writeFileSync(badReward, '(prompt, completion) => {\n');
    const noCompile = await run(out, '--overwrite', '--reward_fn', badReward);
    expect(noCompile.error?.message).toMatch(/^reward_fn does not compile/);
    expect(exitCodeOf(noCompile.error)).toBe(EXIT.usage);
    expect(snapshot(out)).toEqual(before);

    const replaced = await run(out, '--overwrite', '--steps', '3');
    expect(replaced.error).toBeNull();
    expect(replaced.stderr).toMatch(/--overwrite: removed the earlier run's rl_config\.json, metrics\.jsonl/);
    expect(stepsIn(join(out, 'metrics.jsonl'))).toEqual([1, 2, 3]);
    const config = JSON.parse(readFileSync(join(out, 'rl_config.json'), 'utf8')) as { run_id: string; steps: number };
    expect(config.steps).toBe(3);
    expect(config.run_id).not.toBe(firstId);
    expect(existsSync(join(out, LOCK_FILE))).toBe(false);
  }, 120_000);

  it('is written by one run at a time: a live lock refuses, a stale one is taken over, dead temporaries swept', async () => {
    const out = join(dir, 'locked');
    mkdirSync(out);
    const lock = join(out, LOCK_FILE);
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), started: 'now' }));
    const refused = await run(out);
    expect(refused.error?.message).toBe(
      `${out} is in use by another run (pid ${process.pid} on ${hostname()}, started now; lock file ${lock}): wait for it to end or choose another --out`,
    );
    expect(readdirSync(out)).toEqual([LOCK_FILE]);

    const dead = deadPid();
    writeFileSync(lock, JSON.stringify({ pid: dead, host: hostname(), started: 'then' }));
    const killedSave = join(out, `.trainer_state.safetensors.tmp-${dead}`);
    const liveSave = join(out, `.model.safetensors.tmp-${process.ppid}`); // a live process: the test runner
    writeFileSync(killedSave, 'partial');
    writeFileSync(liveSave, 'in progress');
    const taken = await run(out);
    expect(taken.error).toBeNull();
    expect(taken.stderr).toContain(`notice: taking over the stale lock ${lock} (pid ${dead} on ${hostname()}`);
    expect(taken.stderr).toContain(`removed 1 temporary file(s) a cut-off save left: ${killedSave}`);
    expect(existsSync(killedSave)).toBe(false);
    expect(existsSync(liveSave)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  }, 120_000);

  it('--resume refuses a checkpoint and trainer state of two runs, and a state whose bytes changed', async () => {
    const [a, b] = [join(dir, 'pair-a'), join(dir, 'pair-b')];
    expect((await run(a)).error).toBeNull();
    expect((await run(b)).error).toBeNull();
    const state = join(a, TRAINER_STATE_FILE);
    const stateBytes = readFileSync(state);
    expect(stateBytes.toString('latin1')).toContain(RUN_ID_KEY);

    writeFileSync(join(a, 'model.safetensors'), readFileSync(join(b, 'model.safetensors')));
    const mixed = await trainInProcess(['--resume', state, '--steps', '3', '--quiet']);
    expect(mixed.error?.message).toMatch(
      new RegExp(`^${join(a, 'model.safetensors')} belongs to another run \\(run [0-9a-f-]+\\) than ${state}`),
    );
    expect(exitCodeOf(mixed.error)).toBe(EXIT.usage);

    const flipped = Buffer.from(stateBytes);
    flipped[flipped.length - 5] ^= 0x10; // one bit of the last tensor's data
    writeFileSync(state, flipped);
    const damaged = await trainInProcess(['--resume', state, '--steps', '3', '--quiet']);
    expect(damaged.error?.message).toBe(
      `${state}: its contents changed since it was saved (the SHA-256 in its header does not match: a damaged or edited file); it cannot be used`,
    );
    expect(exitCodeOf(damaged.error)).toBe(EXIT.usage);
  }, 120_000);

  it('of a seed group: every seed folder is checked before the first seed trains', async () => {
    const out = join(dir, 'group');
    expect((await run(join(out, 'seed-4'), '--seed', '4')).error).toBeNull();
    const group = await run(out, '--seed', '3', '--seeds', '2');
    expect(group.error?.message).toMatch(new RegExp(`^${join(out, 'seed-4')} holds another run`));
    expect(existsSync(join(out, 'seed-3'))).toBe(false);
  }, 120_000);

  it('that is a file, or cannot be written, is named so', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    expect(() => checkRunFolder(join(file, 'out'), 'new')).toThrow(
      `${file}: cannot use it as the output folder: it is a file, not a directory`,
    );
    const readOnly = () => {
      throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
    };
    expect(() => checkRunFolder(join(dir, 'ro'), 'new', null, readOnly)).toThrow(
      `${join(dir, 'ro')}: cannot write the run there: the folder above it, ${dir}, is not writable`,
    );
  });
});

describe('a prompt longer than the context', () => {
  it('is refused input before the device is acquired', async () => {
    const list = join(dir, 'long.jsonl');
    // Characters a byte-level BPE keeps apart: about a token each. The config cannot know the folder's context (256).
    writeFileSync(list, `${JSON.stringify({ prompt: 'q7#!'.repeat(45), answer: '1' })}\n`);
    const out = join(dir, 'long');
    const r = await trainInProcess([
      ...['--task', 'prompts', '--prompts', list, '--checkpoint', 'public/models/tiny-qwen2'],
      ...['--max_completion_length', '100', '--steps', '1', '--out', out, '--quiet'],
    ]);
    expect(r.error?.message).toMatch(/max_completion_length: the longest prompt .* exceeds the model's context length/);
    expect(exitCodeOf(r.error)).toBe(EXIT.usage);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
