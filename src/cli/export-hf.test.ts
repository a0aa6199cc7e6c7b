// `npm run export -- --to hf`: a run `npm run train` wrote (tiny Qwen2 folder, LoRA, CPU backend) exported as the
// folders transformers and PEFT load, by the page's code path: read back through the lab's own folder loader, the
// weights are the run's, the adapter folder has PEFT's names and merges into them, the source's generation_config
// and chat template are carried over, and a flag it does not take is refused by name.

import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import peft from '../io/fixtures/peft.json';
import hf from '../io/fixtures/transformers.json';
import { readPeftAdapter } from '../io/peft';
import { compareArrays } from '../reference/compare';
import { mergeLoraAdapters } from '../reference/lora';
import { trainInProcess } from '../testing/train-in-process';
import { UsageError } from './args';
import { exportCommand } from './export';
import { loadCheckpointDir } from './files';

// The CPU backend needs no device: acquiring one would be a bug.
vi.mock('./tuned-device', async (real) => ({
  ...(await real<typeof import('./tuned-device')>()),
  acquireTunedDevice: async () => {
    throw new Error('the device was acquired');
  },
}));

const dir = mkdtempSync(join(tmpdir(), 'rl-lab-export-hf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = () => {};
const TINY_QWEN2 = join(import.meta.dirname, '..', '..', 'public', 'models', 'tiny-qwen2');

describe('npm run export -- --to hf', () => {
  it('writes a LoRA run on the tiny Qwen2 folder as <run>-step<N>/ and <run>-step<N>-adapter/', async () => {
    const run = join(dir, 'my run');
    await trainInProcess([
      ...['--task', 'copy', '--checkpoint', TINY_QWEN2, '--train_batch_size', '1', '--num_generations', '2'],
      ...['--max_completion_length', '6', '--eval_every', '0', '--inspect-groups', '0', '--backend', 'cpu'],
      ...['--lora_rank', '2', '--lora_targets', 'q_proj,down_proj', '--learning_rate', '0.01'],
      ...['--steps', '1', '--quiet', '--out', run],
    ]);
    const out = join(dir, 'exported');
    const lines: string[] = [];
    await exportCommand(['--to', 'hf', '--run', run, '--out', out], (l) => lines.push(l));
    expect(readdirSync(out).sort()).toEqual(['my-run-step1', 'my-run-step1-adapter']);
    expect(readdirSync(join(out, 'my-run-step1')).sort()).toEqual(
      [
        hf.config_file,
        hf.generation_config_file,
        hf.weights_file,
        hf.special_tokens_map_file,
        hf.tokenizer_file,
        hf.tokenizer_config_file,
      ].sort(),
    );
    expect(readdirSync(join(out, 'my-run-step1-adapter')).sort()).toEqual(peft.save_pretrained.folder_files);
    expect(lines.join('\n')).toContain('AutoModelForCausalLM.from_pretrained("my-run-step1")');

    // The merged weights are the run's; the adapters merged into the source give them.
    const exported = await loadCheckpointDir(join(out, 'my-run-step1'));
    const trained = await loadCheckpointDir(run);
    for (const [k, w] of Object.entries(trained.ck.params))
      expect(Array.from(exported.ck.params[k]), k).toEqual(Array.from(w));
    const adapterDir = join(out, 'my-run-step1-adapter');
    const adapterConfig = readFileSync(join(adapterDir, peft.config_file), 'utf8');
    expect(JSON.parse(adapterConfig).base_model_name_or_path).toBe(TINY_QWEN2);
    const { spec, adapters } = readPeftAdapter(
      exported.ck.config,
      new Uint8Array(readFileSync(join(adapterDir, peft.weights_file))),
      adapterConfig,
    );
    const source = await loadCheckpointDir(TINY_QWEN2);
    for (const [name, w] of Object.entries(mergeLoraAdapters(exported.ck.config, spec, source.ck.params, adapters))) {
      const c = compareArrays(exported.ck.params[name], w, { atol: 1e-6, rtol: 1e-6 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    const read = (f: string) => JSON.parse(readFileSync(join(out, 'my-run-step1', f), 'utf8'));
    expect(read(hf.generation_config_file)).toEqual(
      JSON.parse(readFileSync(join(TINY_QWEN2, 'generation_config.json'), 'utf8')),
    );
    // config.json keeps the source config.json's own end of sequence (558); generation_config.json keeps its list
    // ([558, 556]), as save_pretrained writes each file's own. The run's checkpoint lists both ids it stops on.
    const sourceConfig = JSON.parse(readFileSync(join(TINY_QWEN2, 'config.json'), 'utf8'));
    expect(JSON.parse(readFileSync(join(run, 'config.json'), 'utf8')).eos_token_id).toEqual([558, 556]);
    expect(read(hf.config_file).eos_token_id).toBe(sourceConfig.eos_token_id);
    expect(read(hf.config_file).eos_token_id).toBe(558);
    expect(read(hf.generation_config_file).eos_token_id).toEqual([558, 556]);
    expect(read(hf.tokenizer_config_file).chat_template).toBe(
      JSON.parse(readFileSync(join(TINY_QWEN2, 'tokenizer_config.json'), 'utf8')).chat_template,
    );
  });

  it('refuses a missing --run and a flag it does not take', async () => {
    await expect(exportCommand(['--to', 'hf', '--out', join(dir, 'x')], quiet)).rejects.toThrow(/needs --run/);
    await expect(
      exportCommand(['--to', 'hf', '--run', dir, '--beta', '0.1', '--out', join(dir, 'x')], quiet),
    ).rejects.toThrow(UsageError);
  });
});
