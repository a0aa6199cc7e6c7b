// `npm run generate` as a process: a checkpoint whose weights are not finite, or whose tokenizer has more ids
// than the model's vocab_size, exits 2 naming the tensor (or both sizes) instead of printing <pad> tokens; a
// missing checkpoint directory is named as given. Each fails before a device is acquired, so no GPU work runs.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeCheckpoint, encodeCheckpoint } from '../io/checkpoint';
import { EXIT } from './args';
import { PUBLIC_DIR } from './files';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WARM = fileURLToPath(new URL('checkpoints/copy', PUBLIC_DIR));

function generate(args: string[]): { code: number | null; stderr: string; stdout: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', './src/cli/register-raw.mjs', 'src/cli/generate.ts', ...args],
    { cwd: ROOT, env: process.env, encoding: 'utf8' },
  );
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

function warmCopy(edit: (dir: string) => void): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'rl-lab-generate-')), 'ck');
  cpSync(WARM, dir, { recursive: true });
  edit(dir);
  return dir;
}

describe('generate refuses a checkpoint it cannot sample from', () => {
  it('non-finite weights: exit 2, the tensor named, nothing printed', () => {
    const dir = warmCopy((d) => {
      const ck = decodeCheckpoint(
        new Uint8Array(readFileSync(join(d, 'model.safetensors'))),
        readFileSync(join(d, 'config.json'), 'utf8'),
      );
      ck.params['model.norm.weight'][3] = NaN;
      writeFileSync(join(d, 'model.safetensors'), encodeCheckpoint(ck).safetensors);
    });
    const r = generate(['--checkpoint', dir, '--prompt', 'copy:ab=', '--greedy']);
    expect(r.code, r.stderr).toBe(EXIT.usage);
    expect(r.stderr).toContain(
      `generate: checkpoint ${dir}: model.safetensors: tensor model.norm.weight holds NaN at index 3 (the weights must be finite)`,
    );
    expect(r.stdout).toBe('');
  });

  it("a tokenizer larger than the model's vocab_size: exit 2, both numbers said", () => {
    const dir = warmCopy((d) => {
      const tok = JSON.parse(readFileSync(join(d, 'tokenizer.json'), 'utf8')) as {
        model: { vocab: Record<string, number> };
      };
      [...'éß'].forEach((ch, i) => (tok.model.vocab[ch] = 99 + i));
      writeFileSync(join(d, 'tokenizer.json'), JSON.stringify(tok));
    });
    const r = generate(['--checkpoint', dir, '--prompt', 'copy:ab=']);
    expect(r.code, r.stderr).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/the tokenizer's ids reach 100 \(token "ß"\) but the model's vocab_size is 99/);
  });

  it('a missing absolute directory is named as given; a bad flag is refused input too', () => {
    const missing = generate(['--checkpoint', '/no/such/ck', '--prompt', 'x']);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toMatch(
      /^generate: \/no\/such\/ck: cannot read the checkpoint directory: no such file or directory/m,
    );
    expect(generate(['--checkpoint', WARM, '--prompt', 'x', '--top-k', '-1']).code).toBe(EXIT.usage);
  });
});
