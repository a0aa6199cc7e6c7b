// The page's checkpoint export as the folder transformers loads: a run on the nano warm start (copy), the tiny Qwen2
// and the tiny Llama folder is trained a step on the CPU backend, exported, zipped, read back out of the zip through
// the lab's own Hugging Face folder loader, and compared with the run's saved policy: the same weights, the same
// greedy continuation, the same tokenizer ids; the names and layout are transformers' recorded ones
// (io/fixtures/transformers.json), the source's generation_config.json and chat template are carried over, and a
// hostile run name reaches no file unsanitised.

import { describe, expect, it } from 'vitest';
import { host } from '../core/host-tensor';
import { paramShapes } from '../core/model-shapes';
import { readZip, zipBytes } from '../io/zip';
import { decodeCheckpoint } from '../io/checkpoint';
import { loadHfFolder } from '../io/hf-folder';
import hf from '../io/fixtures/transformers.json';
import { modelForward } from '../reference/model';
import { resolveConfig } from '../schema/config';
import { LabEngine } from './lab-engine';
import { PUBLIC_ASSETS } from './node-assets';
import { MemoryRunStore } from './run-store';

/** Greedy continuation of `prompt` by `n` tokens with the CPU reference forward. */
function greedy(ck: ReturnType<typeof decodeCheckpoint>, prompt: number[], n: number): number[] {
  const ids = [...prompt];
  for (let i = 0; i < n; i++) {
    const T = ids.length;
    const params = Object.fromEntries(
      paramShapes(ck.config).map(({ name, shape }) => [name, host(ck.params[name], shape)]),
    );
    const { logits } = modelForward(ck.config, params, Uint32Array.from(ids), 1, T);
    const V = ck.config.vocabSize;
    const row = logits.data.subarray((T - 1) * V, T * V);
    let best = 0;
    for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    ids.push(best);
  }
  return ids.slice(prompt.length);
}

const SOURCES = [
  { checkpoint: 'copy', what: 'the nano warm start (character vocabulary)', generation: false },
  { checkpoint: 'models/tiny-qwen2', what: 'the tiny Qwen2 folder', generation: true },
  { checkpoint: 'models/tiny-llama', what: 'the tiny Llama folder', generation: true },
];

describe('checkpoint export as the folder from_pretrained loads', () => {
  it.each(SOURCES)('of a run on $what reads back with the same weights, generation and tokenizer', async (src) => {
    const store = new MemoryRunStore();
    const engine = new LabEngine({
      store,
      assets: PUBLIC_ASSETS,
      gpu: async () => {
        throw new Error('no GPU in this test');
      },
      emit: () => {},
      autosaveMs: Number.POSITIVE_INFINITY,
    });
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      checkpoint: src.checkpoint,
      train_batch_size: 1,
      num_generations: 2,
      max_completion_length: 8,
      steps: 1,
      eval_every: 0,
    });
    const name = '../../"quoted" <run>\n$(rm -rf ~) ü';
    const h = await engine.create({ config, preset: 'grpo', backend: 'cpu', name });
    engine.stepOnce();
    await engine.idle();
    const files = await engine.runs.export(h.id, 'checkpoint');
    const folder = files[0].name.split('/')[0];
    expect(folder).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*-step1$/);
    const names = files.map((f) => f.name.slice(folder.length + 1));
    expect(files.every((f) => f.name.startsWith(`${folder}/`))).toBe(true);
    // Exactly transformers' names: weights, config, generation config, tokenizer files (special tokens map when the
    // tokenizer names any).
    expect(names).toEqual([
      hf.weights_file,
      hf.config_file,
      hf.generation_config_file,
      hf.tokenizer_file,
      hf.tokenizer_config_file,
      hf.special_tokens_map_file,
    ]);

    const zip = readZip(zipBytes(files.map((f) => ({ name: f.name, data: f.data }))));
    const byName = new Map(zip.map((e) => [e.name.slice(folder.length + 1), e.data]));
    const text = (n: string) => new TextDecoder().decode(byName.get(n));
    const read = {
      bytes: async (n: string) => {
        const b = byName.get(n);
        if (!b) throw new Error(`${n}: not in the zip`);
        return b;
      },
      text: async (n: string) => {
        if (!byName.has(n)) throw new Error(`${n}: not in the zip`);
        return text(n);
      },
    };
    const back = await loadHfFolder(read);
    const config_ = JSON.parse(text(hf.config_file));
    expect(config_.architectures[0]).toBe(hf.architectures[config_.model_type as keyof typeof hf.architectures]);
    expect(config_.torch_dtype).toBe('float32');

    // The run's own saved policy (the resume point) is what was exported.
    const saved = (await store.getState(h.id))!;
    const policy = decodeCheckpoint(saved.safetensors, saved.configJson);
    for (const [k, w] of Object.entries(policy.params)) expect(Array.from(back.ck.params[k]), k).toEqual(Array.from(w));
    const prompt = back.tokenizer.encode('abc');
    expect(greedy(back.ck, prompt, 4)).toEqual(greedy(policy, prompt, 4));
    expect(back.tokenizer.eosId).toBe(policy.special.eosId);

    const generation = JSON.parse(text(hf.generation_config_file));
    const tokenizerConfig = JSON.parse(text(hf.tokenizer_config_file));
    const specialMap = JSON.parse(text(hf.special_tokens_map_file));
    if (src.generation) {
      // The source's generation_config.json and chat template, as the source had them.
      const dir = `${src.checkpoint}/`;
      expect(generation).toEqual(JSON.parse(await PUBLIC_ASSETS.text(`${dir}generation_config.json`)));
      const sourceTc = JSON.parse(await PUBLIC_ASSETS.text(`${dir}tokenizer_config.json`));
      expect(tokenizerConfig.chat_template).toBe(sourceTc.chat_template);
      if (src.checkpoint.endsWith('qwen2')) expect(typeof tokenizerConfig.chat_template).toBe('string');
    } else {
      // A source without one: the ids config.json names.
      expect(generation).toEqual({
        _from_model_config: true,
        bos_token_id: config_.bos_token_id,
        eos_token_id: config_.eos_token_id,
        pad_token_id: config_.pad_token_id,
      });
      expect(tokenizerConfig.tokenizer_class).toBe('PreTrainedTokenizerFast');
      expect(back.tokenizer.tokenString(back.tokenizer.eosId)).toBe(tokenizerConfig.eos_token);
    }
    for (const k of Object.keys(specialMap)) {
      expect(hf.special_tokens_attributes).toContain(k);
      expect(specialMap[k]).toEqual(tokenizerConfig[k]);
    }
    // The run's name is nowhere in a file but as the sanitised folder name.
    for (const f of files) if (typeof f.data === 'string') expect(f.data.includes('rm -rf'), f.name).toBe(false);
  });
});
