// The export's folder layout from a policy's files, without a model run: hostile run names become safe folder names,
// a hostile base model name reaches adapter_config.json, README.md and the Python lines only quoted, and the files
// are transformers' and PEFT's names (model/fixtures).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { zipNameProblem } from './zip';
import { encodeCheckpoint } from './checkpoint';
import { MODEL_PRESETS } from '../schema/model-config';
import { loadHfFolder } from './hf-folder';
import { writeSafetensors } from './safetensors';
import peft from './fixtures/peft.json';
import hf from './fixtures/transformers.json';
import { exportFolderName, hfExport, loadingLines, type PolicyFileSet } from './hf-model-folder';

const policy = (adapter: boolean): PolicyFileSet => ({
  step: 7,
  files: [
    {
      name: 'model.safetensors',
      data: writeSafetensors({ 'model.norm.weight': { dtype: 'F32', shape: [3], data: new Float32Array([1, 2, 3]) } }),
    },
    { name: 'config.json', data: JSON.stringify({ bos_token_id: 1, eos_token_id: [2, 5], pad_token_id: 0 }) },
    {
      name: 'tokenizer.json',
      data: JSON.stringify({ added_tokens: [0, 1, 2].map((id) => ({ id, content: ['<pad>', '<bos>', '<eos>'][id] })) }),
    },
    ...(adapter
      ? [
          { name: 'adapter/adapter_model.safetensors', data: new Uint8Array([9]) },
          { name: 'adapter/adapter_config.json', data: JSON.stringify({ r: 2, peft_type: 'LORA' }) },
        ]
      : []),
  ],
});

describe('exportFolderName', () => {
  it.each([
    ['my run', 'my-run-step7'],
    ['../../etc/passwd', 'etc-passwd-step7'],
    ['.hidden', 'hidden-step7'],
    ['-rf', 'rf-step7'],
    ['"; rm -rf ~ #', 'rm-rf-step7'],
    ['Ünïcödé', 'Unicode-step7'],
    ['', 'run-step7'],
    ['///', 'run-step7'],
    ['a\nb\u0000c', 'a-b-c-step7'],
  ])('%j -> %s', (name, want) => {
    expect(exportFolderName(name, 7)).toBe(want);
  });
  it('is short and a valid zip path even for a very long name', () => {
    const f = exportFolderName('x'.repeat(10_000), 123);
    expect(f.length).toBeLessThanOrEqual(96);
    expect(f.endsWith('-step123')).toBe(true);
    expect(zipNameProblem(`${f}-adapter/${peft.save_pretrained.model_card_file}`)).toBeNull();
  });
});

describe('hfExport', () => {
  it('writes the character vocabulary a tokenizer_config.json and special_tokens_map.json, and the ids as generation_config.json', () => {
    const e = hfExport({ runName: 'r', policy: policy(false), sourceGenerationConfigJson: null, baseModel: null });
    expect(e.adapterFolder).toBeNull();
    expect(e.files.map((f) => f.path)).toEqual(
      [
        hf.weights_file,
        hf.config_file,
        hf.generation_config_file,
        hf.tokenizer_file,
        hf.tokenizer_config_file,
        hf.special_tokens_map_file,
      ].map((n) => `r-step7/${n}`),
    );
    const get = (n: string) => JSON.parse(e.files.find((f) => f.path === `r-step7/${n}`)!.data as string);
    expect(get(hf.generation_config_file)).toEqual({
      _from_model_config: true,
      bos_token_id: 1,
      eos_token_id: [2, 5],
      pad_token_id: 0,
    });
    expect(get(hf.tokenizer_config_file)).toMatchObject({ bos_token: '<bos>', eos_token: '<eos>', pad_token: '<pad>' });
    expect(get(hf.special_tokens_map_file)).toEqual({ bos_token: '<bos>', eos_token: '<eos>', pad_token: '<pad>' });
  });

  it('quotes a hostile base model name everywhere it goes', () => {
    const base = 'org/x")\nimport os; os.system("id")\n---\nlibrary_name: evil\n`|';
    const e = hfExport({ runName: 'r', policy: policy(true), sourceGenerationConfigJson: null, baseModel: base });
    expect(e.adapterFolder).toBe('r-step7-adapter');
    const adapter = e.files.filter((f) => f.path.startsWith('r-step7-adapter/'));
    expect(adapter.map((f) => f.path.split('/')[1]).sort()).toEqual(peft.save_pretrained.folder_files);
    const config = JSON.parse(adapter.find((f) => f.path.endsWith(peft.config_file))!.data as string);
    expect(config.base_model_name_or_path).toBe(base);
    expect(Object.keys(config)).toEqual(Object.keys(config).sort());
    const card = adapter.find((f) => f.path.endsWith('README.md'))!.data as string;
    // One front matter block (the name's newline and --- stay inside a quoted string), no line that runs code.
    expect(card.split('\n').filter((l) => l === '---')).toHaveLength(2);
    expect(card.split('\n').some((l) => l.startsWith('import os'))).toBe(false);
    expect(card.split('\n')).not.toContain('library_name: evil');
    for (const line of loadingLines(e, base)) expect(line).not.toContain('\n');
  });

  it('keeps the source generation_config.json as it was, and refuses one that is not a JSON object', () => {
    const source = '{\n  "temperature": 0.7,\n  "eos_token_id": [2, 5]\n}\n';
    const e = hfExport({ runName: 'r', policy: policy(false), sourceGenerationConfigJson: source, baseModel: null });
    expect(e.files.find((f) => f.path.endsWith(hf.generation_config_file))!.data).toBe(source);
    expect(() =>
      hfExport({ runName: 'r', policy: policy(false), sourceGenerationConfigJson: '[1]', baseModel: null }),
    ).toThrow(/generation_config\.json is not a JSON object/);
  });
});

describe("hfExport's end-of-sequence ids", () => {
  // The run's checkpoint lists every id its tokenizer stops on ([2, 5]: generation_config.json's list).
  const generation = '{\n  "eos_token_id": [2, 5]\n}\n';
  const exported = (sourceConfigJson: string | null) => {
    const e = hfExport({
      runName: 'r',
      policy: policy(false),
      sourceGenerationConfigJson: generation,
      baseModel: null,
      sourceConfigJson,
    });
    const file = (name: string) => JSON.parse(e.files.find((f) => f.path === `r-step7/${name}`)!.data as string);
    return { config: file(hf.config_file), generation: file(hf.generation_config_file) };
  };

  it("keeps the source config.json's own eos_token_id in config.json, and the list in generation_config.json", () => {
    const out = exported(JSON.stringify({ eos_token_id: 2, bos_token_id: 1 }));
    expect(out.config.eos_token_id).toBe(2);
    expect(out.config).toMatchObject({ bos_token_id: 1, pad_token_id: 0 });
    expect(out.generation.eos_token_id).toEqual([2, 5]);
  });

  it("writes the run's ids when the source config.json cannot be read or names none", () => {
    expect(exported(null).config.eos_token_id).toEqual([2, 5]);
    expect(exported('{"bos_token_id": 1}').config.eos_token_id).toEqual([2, 5]);
    expect(() => exported('[2]')).toThrow(/config\.json is not a JSON object/);
  });
});

describe('hfExport of weights past the shard size', () => {
  it('splits them into model-0000k-of-0000N.safetensors with model.safetensors.index.json, which the folder loader reads back', async () => {
    const config = MODEL_PRESETS.nano;
    const params = Object.fromEntries(
      Object.entries(initParams(config, new Rng(3))).map(([k, t]) => [k, t.data as Float32Array]),
    );
    const { safetensors, configJson } = encodeCheckpoint({
      config,
      params,
      metadata: {},
      special: { bosId: 1, eosId: 2, padId: 0 },
    });
    const base = policy(false);
    const files = base.files.map((f) =>
      f.name === 'model.safetensors'
        ? { ...f, data: safetensors }
        : f.name === 'config.json'
          ? { ...f, data: configJson }
          : f,
    );
    const limit = Math.ceil(safetensors.length / 3);
    const e = hfExport({
      runName: 'r',
      policy: { step: 7, files },
      sourceGenerationConfigJson: null,
      baseModel: null,
      maxShardBytes: limit,
    });
    const names = e.files.map((f) => f.path.slice('r-step7/'.length));
    const shards = names.filter((n) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(n));
    expect(shards.length).toBeGreaterThanOrEqual(3);
    expect(shards[0]).toBe(`model-00001-of-${String(shards.length).padStart(5, '0')}.safetensors`);
    expect(names).not.toContain(hf.weights_file);
    expect(names).toContain(hf.weights_index_file);
    const byName = new Map(e.files.map((f) => [f.path.slice('r-step7/'.length), f.data]));
    const index = JSON.parse(byName.get(hf.weights_index_file) as string);
    expect(Object.keys(index)).toEqual(hf.shard_index_keys);
    expect(index.metadata.total_size).toBe(Object.values(params).reduce((n, p) => n + p.length * 4, 0));
    for (const s of shards) expect((byName.get(s) as Uint8Array).length).toBeLessThanOrEqual(limit + 4096);
    const read = {
      bytes: async (n: string) => {
        const v = byName.get(n);
        if (!(v instanceof Uint8Array)) throw new Error(`${n}: missing`);
        return v;
      },
      text: async (n: string) => {
        const v = byName.get(n);
        if (typeof v !== 'string') throw new Error(`${n}: missing`);
        return v;
      },
    };
    // The shards and index read back as any sharded folder (the character vocabulary as its tokenizer).
    byName.set(
      'tokenizer.json',
      readFileSync(new URL('../../public/tokenizers/char/tokenizer.json', import.meta.url), 'utf8'),
    );
    byName.delete('tokenizer_config.json');
    const back = await loadHfFolder(read);
    expect(back.weightFiles).toEqual(shards);
    for (const [k, w] of Object.entries(params)) expect(Array.from(back.ck.params[k]), k).toEqual(Array.from(w));
  });
});
