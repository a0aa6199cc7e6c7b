// `npm run export`: the flags of the train command give the config (preset, --config file, field flags), --to picks
// the trainer and --out receives the script, the reward module, the prompts and the README with the mapping table.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from './args';
import { runExport } from './export';

const quiet = () => {};

describe('npm run export', () => {
  it('writes a verl run from a preset and field flags', () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    const files = runExport(
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
      'reward_fn.py',
      'run_verl.sh',
    ]);
    const script = readFileSync(join(out, 'run_verl.sh'), 'utf8');
    expect(script).toContain("'actor_rollout_ref.actor.clip_ratio_high=0.3'");
    expect(script).toContain('MODEL="${MODEL:-org/base}"');
    expect(readFileSync(join(out, 'data/train.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3 * 8);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '| `epsilon_high` | `0.3` | `actor_rollout_ref.actor.clip_ratio_high=0.3` |',
    );
  });

  it('reads --config with its preset, flags overriding the file', () => {
    const out = mkdtempSync(join(tmpdir(), 'export-'));
    const config = join(out, 'config.json');
    writeFileSync(config, JSON.stringify({ preset: 'rloo', task: 'parity', beta: 0.02, steps: 2 }));
    runExport(['--to', 'trl', '--config', config, '--beta', '0.03', '--out', join(out, 'trl')], quiet);
    const script = readFileSync(join(out, 'trl', 'train_trl.py'), 'utf8');
    expect(script).toContain('from trl import RLOOConfig, RLOOTrainer');
    expect(script).toContain('    beta=0.03,');
  });

  it('refuses a missing or unknown trainer and a foreign field name', () => {
    expect(() => runExport(['--out', 'x'], quiet)).toThrow(UsageError);
    expect(() => runExport(['--to', 'deepspeed', '--out', 'x'], quiet)).toThrow(
      /--to must be one of trl, verl, openrlhf/,
    );
    expect(() => runExport(['--to', 'trl', '--kl_coef', '0.1', '--out', 'x'], quiet)).toThrow(/did you mean --beta/);
  });
});
