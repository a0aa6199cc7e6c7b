// Qwen2's config.json as the lab reads and writes it: model_type "qwen2" means q/k/v biases (Qwen2Config has no
// attention_bias field), transformers' Qwen2 defaults fill what is left out, sliding-window attention is refused,
// a Llama config still refuses attention_bias, and a model config with qkvBias round-trips through config.json.

import { describe, expect, it } from 'vitest';
import { configFromJson, modelConfigToJson } from '../io/checkpoint';
import { hasQkvBias, llamaTensorNames, parseLlamaConfigJson } from '../io/hf-layout';
import type { ModelConfig } from './model-config';
import { parameterCount } from './model-config';

const QWEN = {
  model_type: 'qwen2',
  architectures: ['Qwen2ForCausalLM'],
  vocab_size: 64,
  hidden_size: 8,
  intermediate_size: 16,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
};

describe('Qwen2 config.json', () => {
  it("reads with Qwen2Config's defaults and implies q/k/v biases", () => {
    const c = parseLlamaConfigJson(QWEN);
    expect(c.model_type).toBe('qwen2');
    expect(hasQkvBias(c)).toBe(true);
    expect(c.max_position_embeddings).toBe(32768);
    expect(c.tie_word_embeddings).toBe(false);
    expect(c.attention_bias).toBeUndefined();
    expect(configFromJson({ ...c, max_position_embeddings: 64 }).config.qkvBias).toBe(true);
    expect(configFromJson(parseLlamaConfigJson({ ...QWEN, model_type: 'llama' })).config).not.toHaveProperty('qkvBias');
  });

  it('refuses sliding windows, and attention_bias on a Llama config, saying why', () => {
    expect(() => parseLlamaConfigJson({ ...QWEN, use_sliding_window: true })).toThrow(
      /not a Qwen2 config this lab can run:\n- use_sliding_window true is not supported/,
    );
    expect(() => parseLlamaConfigJson({ ...QWEN, model_type: 'llama', attention_bias: true })).toThrow(
      /attention_bias true is not supported \(a Llama o_proj bias is not implemented; Qwen2 q\/k\/v biases are\)/,
    );
    expect(() => parseLlamaConfigJson({ ...QWEN, model_type: 'mistral' })).toThrow(
      /model_type "mistral" \(Qwen2ForCausalLM\) is Mistral, which this lab does not run: it needs sliding-window attention/,
    );
  });

  it('a model config with qkvBias writes a Qwen2ForCausalLM config that reads back the same, biases listed after their weights', () => {
    const config: ModelConfig = {
      vocabSize: 64,
      contextLength: 32,
      nLayers: 2,
      nHeads: 2,
      nKvHeads: 1,
      dModel: 8,
      dFF: 16,
      ropeTheta: 1e6,
      normEps: 1e-6,
      tiedEmbeddings: true,
      qkvBias: true,
    };
    const json = modelConfigToJson(config, { bosId: 1, eosId: 2, padId: 0 });
    expect(json.architectures).toEqual(['Qwen2ForCausalLM']);
    expect(JSON.parse(JSON.stringify(json))).not.toHaveProperty('attention_bias');
    expect(configFromJson(parseLlamaConfigJson(JSON.parse(JSON.stringify(json)))).config).toEqual(config);
    const names = llamaTensorNames(1, true, true).map((t) => t.name);
    expect(names.slice(2, 9)).toEqual([
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.q_proj.bias',
      'model.layers.0.self_attn.k_proj.weight',
      'model.layers.0.self_attn.k_proj.bias',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.v_proj.bias',
      'model.layers.0.self_attn.o_proj.weight',
    ]);
    // q (2 heads x 4) + k and v (1 head x 4 each) bias entries per layer.
    const { qkvBias: _, ...llama } = config;
    expect(parameterCount(config) - parameterCount(llama)).toBe(2 * (8 + 4 + 4));
  });
});
