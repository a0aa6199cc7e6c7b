// `npm run export`: the flags of the train command give the config (preset, --config file, field flags), --to picks
// the trainer and --out receives the script, the reward module, the prompts and the README with the mapping table.

import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RLConfigError } from '../schema/config';
import { UsageError, exitCodeOf } from './args';
import { runExport } from './export';

const quiet = () => {};

describe('npm run export', () => {
  it('writes a verl run from a preset and field flags', async () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    const files = await runExport(
      [
        '--to',
        'verl',
        '--preset',
        'dapo',
        '--task',
        'sort',
        '--steps',
        '3',
        '--epsilon_high',
        '0.3',
        '--hf-model',
        'org/base',
        '--out',
        out,
      ],
      quiet,
    );
    expect(files.map((f) => f.slice(out.length + 1)).sort()).toEqual([
      'README.md',
      'data/heldout.jsonl',
      'data/train.jsonl',
      'lab_config.json',
      'reward_fn.py',
      'run_verl.sh',
    ]);
    const script = readFileSync(join(out, 'run_verl.sh'), 'utf8');
    expect(script).toContain("'actor_rollout_ref.actor.clip_ratio_high=0.3'");
    expect(script).toContain(`[ -n "$MODEL" ] || MODEL='org/base'`);
    expect(readFileSync(join(out, 'data/train.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3 * 8);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '| `epsilon_high` | `0.3` | `actor_rollout_ref.actor.clip_ratio_high=0.3` |',
    );
  });

  it('reads --config with its preset, flags overriding the file', async () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    const config = join(out, 'config.json');
    writeFileSync(config, JSON.stringify({ preset: 'rloo', task: 'parity', beta: 0.02, steps: 2 }));
    await runExport(['--to', 'trl', '--config', config, '--beta', '0.03', '--out', join(out, 'trl')], quiet);
    const script = readFileSync(join(out, 'trl', 'train_trl.py'), 'utf8');
    expect(script).toContain('from trl import RLOOConfig, RLOOTrainer');
    expect(script).toContain('    beta=0.03,');
  });

  it('refuses a missing or unknown trainer and a foreign field name', async () => {
    await expect(runExport(['--out', 'x'], quiet)).rejects.toThrow(UsageError);
    await expect(runExport(['--to', 'deepspeed', '--out', 'x'], quiet)).rejects.toThrow(
      /--to must be one of trl, verl, openrlhf/,
    );
    await expect(runExport(['--to', 'trl', '--kl_coef', '0.1', '--out', 'x'], quiet)).rejects.toThrow(
      /did you mean --beta/,
    );
  });

  it('refuses a model name that is code or breaks the scripts, naming --hf-model, and writes nothing', async () => {
    for (const model of ['$(touch marker)', '`touch marker`', 'org/my"model', "it's", 'a b', '-x', 'm\nx'])
      for (const to of ['trl', 'verl', 'openrlhf']) {
        const out = mkdtempSync(join(tmpdir(), 'export-'));
        let err: unknown = null;
        try {
          await runExport(['--to', to, '--preset', 'grpo', '--task', 'copy', '--hf-model', model, '--out', out], quiet);
        } catch (e) {
          err = e;
        }
        expect(err, `${to} ${model}`).toBeInstanceOf(UsageError);
        expect(exitCodeOf(err), 'a refused input exits 2').toBe(2);
        expect((err as Error).message).toMatch(/^hf-model: .* is not a hub model name \(org\/name\) or a folder path/);
        expect(readdirSync(out), 'nothing written').toEqual([]);
      }
  });

  it('refuses a checkpoint or reward_model with a line break, naming the field', async () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    for (const field of ['checkpoint', 'reward_model'])
      await expect(
        runExport(['--to', 'verl', '--task', 'copy', `--${field}`, 'copy\n$(touch M)', '--out', out], quiet),
      ).rejects.toThrow(RLConfigError);
    await expect(
      runExport(['--to', 'verl', '--task', 'copy', '--checkpoint', 'copy\n$(touch M)', '--out', out], quiet),
    ).rejects.toThrow(/checkpoint: must be one line without control characters/);
    expect(readdirSync(out), 'nothing written').toEqual([]);
  });

  it('writes a reward function of several lines and a prompt list of two rows as their own files, never in the scripts', async () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    const rewardFn = '(prompt, completion) => {\n  // a comment\n  return completion.length > 3 ? 1 : 0;\n}';
    const prompts = '{"prompt": "$(touch M) one", "answer": "1"}\n{"prompt": "print(\\"two\\")", "answer": "2"}\n';
    const config = join(out, 'config.json');
    writeFileSync(config, JSON.stringify({ preset: 'grpo', task: 'prompts', prompts, reward_fn: rewardFn, steps: 1 }));
    for (const to of ['trl', 'verl', 'openrlhf'] as const) {
      const dir = join(out, to);
      await runExport(['--to', to, '--config', config, '--hf-model', 'org/base', '--out', dir], quiet);
      expect(readFileSync(join(dir, 'user_reward_fn.js'), 'utf8')).toBe(rewardFn);
      expect(readFileSync(join(dir, 'prompt_list.txt'), 'utf8')).toBe(prompts);
      const entry = readFileSync(
        join(dir, { trl: 'train_trl.py', verl: 'run_verl.sh', openrlhf: 'run_openrlhf.sh' }[to]),
        'utf8',
      );
      expect(entry).toContain(`# reward_fn = (${rewardFn.length} characters, in user_reward_fn.js)`);
      expect(entry).toContain(`# prompts = (${prompts.length} characters, in prompt_list.txt)`);
      expect(entry).not.toContain('return completion.length');
      expect(entry).not.toContain('$(touch');
      const texts = readFileSync(join(dir, 'data/train.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { prompt: string | { content: string }[] })
        .map((r) => (typeof r.prompt === 'string' ? r.prompt : r.prompt[0].content));
      expect(texts.length).toBeGreaterThan(0);
      for (const t of texts) expect(['$(touch M) one', 'print("two")']).toContain(t);
      expect(JSON.parse(readFileSync(join(dir, 'lab_config.json'), 'utf8'))).toMatchObject({
        prompts,
        reward_fn: rewardFn,
      });
      expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('`user_reward_fn.js`: your reward function');
    }
  });

  it('writes the exact config as lab_config.json, which --config reads back to the same export', async () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    await runExport(
      ['--to', 'verl', '--preset', 'dapo', '--task', 'sort', '--beta', '0.01', '--out', join(out, 'a')],
      quiet,
    );
    await runExport(['--to', 'verl', '--config', join(out, 'a', 'lab_config.json'), '--out', join(out, 'b')], quiet);
    for (const f of ['run_verl.sh', 'lab_config.json', 'data/train.jsonl', 'README.md'])
      expect(readFileSync(join(out, 'b', f), 'utf8'), f).toBe(readFileSync(join(out, 'a', f), 'utf8'));
  });
});
