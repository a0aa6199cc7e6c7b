// Checkpoints: round trip through safetensors + config.json, and clear failures on bad files.
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../schema/model-config';
import { decodeCheckpoint, encodeCheckpoint, type ParamArrays } from './checkpoint';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { readSafetensorsHeader, writeSafetensors } from './safetensors';

const config = { ...MODEL_PRESETS.nano, nLayers: 1 };
const special = { bosId: 1, eosId: 2, padId: 0 };

function params(): ParamArrays {
  const p = initParams(config, new Rng(3));
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

describe('checkpoints', () => {
  it('round-trips parameters, config and metadata exactly, with HF names and a Llama config.json', () => {
    const p = params();
    const { safetensors, configJson } = encodeCheckpoint({ config, params: p, metadata: { made_by: 'test' }, special });
    const json = JSON.parse(configJson);
    expect(json.architectures).toEqual(['LlamaForCausalLM']);
    expect(json.model_type).toBe('llama');
    expect(json.hidden_size).toBe(config.dModel);
    expect(json.tie_word_embeddings).toBe(true);
    const back = decodeCheckpoint(safetensors, configJson);
    expect(back.config).toEqual(config);
    expect(back.special).toEqual(special);
    expect(back.metadata).toEqual({ made_by: 'test' });
    for (const [k, v] of Object.entries(p)) expect(Array.from(back.params[k])).toEqual(Array.from(v));
    expect(Object.keys(back.params)).toContain('model.layers.0.self_attn.q_proj.weight');
  });

  it('a truncated file says how many bytes are missing', () => {
    const { safetensors, configJson } = encodeCheckpoint({ config, params: params(), metadata: {}, special });
    expect(() => decodeCheckpoint(safetensors.slice(0, safetensors.length - 100), configJson)).toThrow(
      /100 bytes missing/,
    );
  });

  it('a checkpoint that does not match config.json names the tensor and both shapes', () => {
    const { safetensors } = encodeCheckpoint({ config, params: params(), metadata: {}, special });
    const other = encodeCheckpoint({
      config: { ...config, dFF: 64 },
      params: initFor({ ...config, dFF: 64 }),
      metadata: {},
      special,
    });
    expect(() => decodeCheckpoint(safetensors, other.configJson)).toThrow(
      /mlp\.gate_proj\.weight.*\b64\b.*\b128\b|mlp\.gate_proj\.weight[\s\S]*128/,
    );
  });

  it('a foreign (GPT-2) file is recognized as such', () => {
    const gpt2 = writeSafetensors({
      'wte.weight': { dtype: 'F32', shape: [4, 2], data: new Float32Array(8) },
      'h.0.attn.c_attn.weight': { dtype: 'F32', shape: [2, 6], data: new Float32Array(12) },
    });
    const { configJson } = encodeCheckpoint({ config, params: params(), metadata: {}, special });
    expect(() => decodeCheckpoint(gpt2, configJson)).toThrow(/GPT-2/);
  });

  it('a file that cannot be read is named, a single shard and model.safetensors too; a shard holding a wrong tensor is named', () => {
    const { safetensors, configJson } = encodeCheckpoint({ config, params: params(), metadata: {}, special });
    const cut = safetensors.slice(0, safetensors.length - 100);
    expect(() => decodeCheckpoint([{ file: 'model-00001-of-00001.safetensors', bytes: cut }], configJson)).toThrow(
      /^model-00001-of-00001\.safetensors: .*100 bytes missing/,
    );
    expect(() => decodeCheckpoint(cut, configJson)).toThrow(/^model\.safetensors: .*100 bytes missing/);
    // Two shards, the second holding a tensor of the wrong shape.
    const p = params();
    const header = readSafetensorsHeader(safetensors);
    const names = Object.keys(p);
    const [firstHalf, secondHalf] = [names.slice(0, 3), names.slice(3)];
    const shardOf = (list: string[], edit: (name: string, data: Float32Array) => Float32Array) =>
      writeSafetensors(
        Object.fromEntries(
          list.map((n) => {
            const data = edit(n, p[n]);
            return [
              n,
              {
                dtype: 'F32' as const,
                shape: data.length === p[n].length ? [...header.entries.get(n)!.shape] : [data.length],
                data,
              },
            ];
          }),
        ),
      );
    const wrong = secondHalf[0];
    const shards = [
      { file: 'model-00001-of-00002.safetensors', bytes: shardOf(firstHalf, (_, d) => d) },
      {
        file: 'model-00002-of-00002.safetensors',
        bytes: shardOf(secondHalf, (n, d) => (n === wrong ? d.subarray(1) : d)),
      },
    ];
    expect(() => decodeCheckpoint(shards, configJson)).toThrow(`(${wrong} is in model-00002-of-00002.safetensors)`);
  });

  it('bad config.json text is reported as such', () => {
    const { safetensors } = encodeCheckpoint({ config, params: params(), metadata: {}, special });
    expect(() => decodeCheckpoint(safetensors, '{"model_type": ')).toThrow(/config\.json is not valid JSON/);
    expect(() => decodeCheckpoint(safetensors, JSON.stringify({ model_type: 'gpt2' }))).toThrow(/llama/);
  });
});

function initFor(c: typeof config): ParamArrays {
  const p = initParams(c, new Rng(4));
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}
