// The CLI on a Hugging Face folder (public/models/tiny-qwen2: Qwen2 with q/k/v biases and a byte-level BPE
// tokenizer), as processes: `generate --json` reports the prompt's token ids (BOS-less, or through the chat
// template with --chat) beside the completion's, and `train` runs GRPO from the folder and saves a checkpoint that
// keeps the tokenizer's files and loads again as the same Qwen2 model.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodePrompt } from '../rl/learners/sft';
import { EXIT } from './args';
import { loadCheckpointDir } from './files';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const QWEN = 'public/models/tiny-qwen2';

function cli(script: string, args: string[]): { code: number | null; stderr: string; stdout: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', './src/cli/register-raw.mjs', `src/cli/${script}.ts`, ...args],
    { cwd: ROOT, env: process.env, encoding: 'utf8' },
  );
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

interface GenerateJson {
  prompt: string;
  prompt_ids: number[];
  completion: string;
  completion_ids: number[];
  finished: boolean;
  tokens: { id: number; token: string; logprob: number; entropy: number }[];
}

describe('generate on a Hugging Face folder', () => {
  it('--json reports the prompt ids beside the completion ids, with and without --chat', async () => {
    const { tok } = await loadCheckpointDir(join(ROOT, QWEN));
    for (const chat of [false, true]) {
      const r = cli('generate', [
        '--checkpoint',
        QWEN,
        '--prompt',
        'addition:12+34=',
        '--greedy',
        '--json',
        '--max-new-tokens',
        '6',
        '--autotune=false',
        ...(chat ? ['--chat'] : []),
      ]);
      expect(r.code, r.stderr).toBe(EXIT.ok);
      const out = JSON.parse(r.stdout) as GenerateJson;
      expect(out.prompt_ids).toEqual(encodePrompt(tok, 'addition:12+34=', chat));
      expect(out.completion_ids).toEqual(out.tokens.map((t) => t.id));
      expect(out.completion_ids.length).toBeGreaterThan(0);
      expect(out.completion).toBe(
        tok.decode(
          out.completion_ids.filter((id) => id !== tok.eosId),
          { skipSpecialTokens: true },
        ),
      );
      for (const t of out.tokens) expect(Number.isFinite(t.logprob)).toBe(true);
    }
  });

  it('--chat on a tokenizer without a chat template is refused (exit 2), naming the file', () => {
    const r = cli('generate', ['--checkpoint', 'public/models/tiny-llama', '--prompt', 'x', '--chat']);
    expect(r.code, r.stderr).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/has no chat template \(tokenizer_config.json chat_template\)/);
  });
});

describe('train on a Hugging Face folder', () => {
  it('runs GRPO from the folder with its chat template and saves a checkpoint that loads as the same Qwen2 model', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'rl-lab-hf-train-')), 'run');
    const r = cli('train', [
      '--checkpoint',
      QWEN,
      '--task',
      'addition',
      '--difficulty',
      '1',
      '--steps',
      '2',
      '--train_batch_size',
      '2',
      '--num_generations',
      '4',
      '--max_completion_length',
      '8',
      '--eval_every',
      '0',
      '--chat_template',
      '--autotune=false',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    for (const f of ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'metrics.jsonl'])
      expect(existsSync(join(out, f)), f).toBe(true);
    expect(readFileSync(join(out, 'tokenizer_config.json'), 'utf8')).toBe(
      readFileSync(join(ROOT, QWEN, 'tokenizer_config.json'), 'utf8'),
    );
    const saved = await loadCheckpointDir(out);
    const start = await loadCheckpointDir(join(ROOT, QWEN));
    expect(saved.ck.config).toEqual(start.ck.config);
    expect(saved.tok.eosId).toBe(start.tok.eosId);
    expect(saved.tok.eosIds).toEqual(start.tok.eosIds);
    expect(start.tok.eosIds).toEqual([558, 556]);
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).architectures).toEqual(['Qwen2ForCausalLM']);
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThanOrEqual(2);
  }, 300_000);
});
