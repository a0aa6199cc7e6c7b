// `npm run train` with LoRA, as a real process: the run writes the merged checkpoint (the original architecture,
// loadable as any checkpoint) and, in adapter/, the adapters in PEFT's layout; the merged weights are the shipped
// warm start plus s B A of exactly those adapters, and the projections without adapters are the warm start's.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, readPeftAdapter } from '../io/peft';
import { compareArrays } from '../reference/compare';
import { mergeLoraAdapters } from '../reference/lora';
import { EXIT } from './args';
import { loadCheckpointDir } from './files';
import { LORA_ADAPTER_DIR } from '../engine/run-session';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('npm run train with lora_rank > 0', () => {
  it('writes the merged checkpoint and the adapters in PEFT layout, which agree', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'rl-lab-lora-')), 'run');
    const args = [
      '--task',
      'copy',
      '--steps',
      '2',
      '--train_batch_size',
      '4',
      '--num_generations',
      '8',
      '--temperature',
      '1',
      '--learning_rate',
      '0.01',
      '--eval_every',
      '0',
      '--lora_rank',
      '4',
      '--lora_targets',
      'q_proj,v_proj,up_proj',
      '--quiet',
      '--autotune=false',
      '--out',
      out,
    ];
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './src/cli/register-raw.mjs', 'src/cli/train.ts', ...args],
      { cwd: ROOT, env: process.env },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    expect(code, stderr).toBe(EXIT.ok);

    const dir = join(out, LORA_ADAPTER_DIR);
    expect(existsSync(join(dir, PEFT_WEIGHTS_FILE)) && existsSync(join(dir, PEFT_CONFIG_FILE))).toBe(true);
    const merged = (await loadCheckpointDir(out)).ck;
    const warm = (await loadCheckpointDir(join(ROOT, 'public', 'checkpoints', 'copy'))).ck;
    const configJson = readFileSync(join(dir, PEFT_CONFIG_FILE), 'utf8');
    expect(JSON.parse(configJson)).toMatchObject({
      peft_type: 'LORA',
      r: 4,
      lora_alpha: 16,
      target_modules: ['q_proj', 'v_proj', 'up_proj'],
      base_model_name_or_path: 'copy',
    });
    const { spec, adapters } = readPeftAdapter(
      merged.config,
      new Uint8Array(readFileSync(join(dir, PEFT_WEIGHTS_FILE))),
      configJson,
    );
    const want = mergeLoraAdapters(merged.config, spec, warm.params, adapters);
    for (const [name, w] of Object.entries(want)) {
      const c = compareArrays(merged.params[name], w, { atol: 1e-6, rtol: 1e-6 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    expect(Array.from(merged.params['model.layers.0.self_attn.k_proj.weight'])).toEqual(
      Array.from(warm.params['model.layers.0.self_attn.k_proj.weight']),
    );
    expect(Array.from(merged.params['model.layers.0.self_attn.q_proj.weight'])).not.toEqual(
      Array.from(warm.params['model.layers.0.self_attn.q_proj.weight']),
    );
  }, 300_000);
});
