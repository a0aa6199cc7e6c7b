// The configs people use, read by the lab: each recorded config.json (fixtures/configs/) loads with its exact
// widths, head dim, q/k norm and RoPE scaling, and its parameter count is the published one; max_position_embeddings
// is a bound, not an allocation; several eos ids are kept; Llama 3's scaled frequencies follow transformers' three
// bands; and every architecture the engine does not run is refused from config.json alone, naming what is missing,
// before any weight file is opened.

import { describe, expect, it } from 'vitest';
import { ropeInverseFrequencies, type Llama3RopeScaling } from '../core/rope-frequencies';
import { configFromJson, modelConfigToJson } from '../io/checkpoint';
import { llamaTensorNames, parseLlamaConfigJson } from '../io/hf-layout';
import { parameterCount, type ModelConfig } from './model-config';
import { loadHfFolder, type FolderReader } from '../io/hf-folder';
import { folderReader } from '../io/tiny-hf';
import {
  REAL_CONFIG_FILES,
  UNSUPPORTED_CONFIG_FILES,
  realModelConfig,
  type RealModelName,
} from '../io/real-models.fixture';

describe('recorded config.json files', () => {
  // Published parameter counts (tied embeddings counted once); sources.json says where each count is published.
  const expected: Record<RealModelName, { params: number; check: (c: ModelConfig) => void }> = {
    'smollm2-135m': {
      params: 134_515_008,
      check: (c) => expect(c).toMatchObject({ dModel: 576, nHeads: 9, nKvHeads: 3, contextLength: 8192 }),
    },
    'smollm2-360m': {
      params: 361_821_120,
      check: (c) =>
        expect(c).toMatchObject({ dModel: 960, nLayers: 32, nHeads: 15, nKvHeads: 5, dFF: 2560, contextLength: 8192 }),
    },
    'smollm2-1.7b-instruct': {
      params: 1_711_376_384,
      check: (c) => expect(c).toMatchObject({ dModel: 2048, nHeads: 32, nKvHeads: 32, dFF: 8192, ropeTheta: 130_000 }),
    },
    'qwen2.5-0.5b': {
      params: 494_032_768,
      check: (c) => expect(c).toMatchObject({ qkvBias: true, contextLength: 32_768, vocabSize: 151_936 }),
    },
    'qwen2.5-0.5b-instruct': {
      params: 494_032_768,
      check: (c) => expect(c).toMatchObject({ qkvBias: true, dModel: 896, nHeads: 14, nKvHeads: 2 }),
    },
    'qwen2.5-1.5b-instruct': {
      params: 1_543_714_304,
      check: (c) => expect(c).toMatchObject({ qkvBias: true, dModel: 1536, nHeads: 12, nKvHeads: 2, dFF: 8960 }),
    },
    'qwen3-0.6b': {
      params: 596_049_920,
      check: (c) => expect(c).toMatchObject({ qkNorm: true, headDim: 128, dModel: 1024, nHeads: 16, nKvHeads: 8 }),
    },
    'qwen3-1.7b': {
      params: 1_720_574_976,
      // head_dim 128 is hidden / heads here (2048 / 16), so the config keeps no separate headDim.
      check: (c) => expect(c).toMatchObject({ qkNorm: true, dModel: 2048, nHeads: 16, nKvHeads: 8, dFF: 6144 }),
    },
    'llama-3.2-1b': {
      params: 1_235_814_400,
      check: (c) =>
        expect(c).toMatchObject({
          contextLength: 131_072,
          ropeTheta: 500_000,
          ropeScaling: {
            ropeType: 'llama3',
            factor: 32,
            lowFreqFactor: 1,
            highFreqFactor: 4,
            originalMaxPositions: 8192,
          },
        }),
    },
    'llama-3.2-1b-instruct': {
      params: 1_235_814_400,
      check: (c) =>
        expect(c).toMatchObject({ contextLength: 131_072, ropeScaling: { ropeType: 'llama3', factor: 32 } }),
    },
    'llama-3.2-3b': {
      params: 3_212_749_824,
      check: (c) => expect(c).toMatchObject({ dModel: 3072, nHeads: 24, tiedEmbeddings: true, contextLength: 131_072 }),
    },
  };

  it.each(Object.keys(REAL_CONFIG_FILES) as RealModelName[])(
    '%s loads with its widths, and its parameter count is the published one',
    (name) => {
      const { config } = realModelConfig(name);
      expected[name].check(config);
      expect(parameterCount(config)).toBe(expected[name].params);
      // head_dim is kept only where it is not hidden / heads.
      expect('headDim' in config).toBe(name === 'qwen3-0.6b');
    },
  );

  it('max_position_embeddings bounds the context without sizing anything: 131,072 and 40,960 load', () => {
    expect(realModelConfig('llama-3.2-1b').config.contextLength).toBe(131_072);
    expect(realModelConfig('qwen3-0.6b').config.contextLength).toBe(40_960);
    const json = parseLlamaConfigJson({ ...REAL_CONFIG_FILES['smollm2-135m'], max_position_embeddings: 2 ** 21 });
    expect(() => configFromJson(json)).toThrow(/max_position_embeddings: must be in \[2, 1048576\], got 2097152/);
  });

  it('Qwen3 and Llama 3 configs write back to config.json and read the same model config', () => {
    for (const name of ['qwen3-0.6b', 'llama-3.2-3b'] as const) {
      const { config, special } = realModelConfig(name);
      const json = modelConfigToJson(config, special);
      expect(json.model_type).toBe(name === 'qwen3-0.6b' ? 'qwen3' : 'llama');
      expect(configFromJson(parseLlamaConfigJson(JSON.parse(JSON.stringify(json)))).config).toEqual(config);
    }
    expect(
      modelConfigToJson(realModelConfig('qwen3-0.6b').config, realModelConfig('qwen3-0.6b').special).head_dim,
    ).toBe(128);
  });

  it('Qwen3 lists q_norm and k_norm (head_dim wide) after o_proj', () => {
    const names = llamaTensorNames(1, true, false, true).map((t) => t.name.replace('model.layers.0.', ''));
    expect(names.slice(1, 8)).toEqual([
      'input_layernorm.weight',
      'self_attn.q_proj.weight',
      'self_attn.k_proj.weight',
      'self_attn.v_proj.weight',
      'self_attn.o_proj.weight',
      'self_attn.q_norm.weight',
      'self_attn.k_norm.weight',
    ]);
  });

  it("keeps every eos id of Llama-3.2-1B-Instruct's list, and writes the list back", () => {
    const { config, special } = realModelConfig('llama-3.2-1b-instruct');
    expect(REAL_CONFIG_FILES['llama-3.2-1b-instruct'].eos_token_id).toEqual([128001, 128008, 128009]);
    expect(special).toMatchObject({ eosId: 128001, eosIds: [128001, 128008, 128009] });
    expect(modelConfigToJson(config, special).eos_token_id).toEqual([128001, 128008, 128009]);
    // The base model's config.json names one eos id.
    const base = realModelConfig('llama-3.2-1b').special;
    expect(base.eosId).toBe(128001);
    expect('eosIds' in base).toBe(false);
  });

  it('each Instruct config has the architecture of its base model', () => {
    expect(realModelConfig('llama-3.2-1b-instruct').config).toEqual(realModelConfig('llama-3.2-1b').config);
    expect(realModelConfig('qwen2.5-0.5b-instruct').config).toEqual(realModelConfig('qwen2.5-0.5b').config);
    // Qwen2.5-0.5B ends generation at <|endoftext|>, its Instruct variant at <|im_end|>.
    expect(realModelConfig('qwen2.5-0.5b').special.eosId).toBe(151643);
    expect(realModelConfig('qwen2.5-0.5b-instruct').special.eosId).toBe(151645);
  });
});

describe('Llama 3 RoPE scaling (transformers _compute_llama3_parameters)', () => {
  const scaling: Llama3RopeScaling = {
    ropeType: 'llama3',
    factor: 32,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositions: 8192,
  };
  const HD = 64;
  const theta = 500_000;
  const plain = ropeInverseFrequencies({ theta }, HD);
  const scaled = ropeInverseFrequencies({ theta, scaling }, HD);

  it('keeps short wavelengths, divides long ones by factor, and blends the band between', () => {
    let kept = 0;
    let divided = 0;
    let blended = 0;
    for (let i = 0; i < HD / 2; i++) {
      const f = plain[i];
      const w = (2 * Math.PI) / f;
      if (w < 8192 / 4) {
        expect(scaled[i]).toBe(f);
        kept++;
      } else if (w > 8192 / 1) {
        expect(scaled[i]).toBeCloseTo(f / 32, 15);
        divided++;
      } else {
        const s = (8192 / w - 1) / (4 - 1);
        expect(scaled[i]).toBeCloseTo((1 - s) * (f / 32) + s * f, 15);
        expect(scaled[i]).toBeLessThan(f);
        expect(scaled[i]).toBeGreaterThan(f / 32);
        blended++;
      }
    }
    // Llama 3.2's head dim 64 at theta 500000 has pairs in all three bands.
    expect([kept > 0, divided > 0, blended > 0]).toEqual([true, true, true]);
    // Frequencies stay decreasing (the blend is continuous at both edges).
    for (let i = 1; i < HD / 2; i++) expect(scaled[i]).toBeLessThan(scaled[i - 1]);
  });

  it('refuses a scaling with missing or inconsistent factors, naming the key', () => {
    const base = REAL_CONFIG_FILES['llama-3.2-1b'];
    expect(() => parseLlamaConfigJson({ ...base, rope_scaling: { rope_type: 'llama3', factor: 32 } })).toThrow(
      /rope_scaling .* is not supported as given: rope_scaling.low_freq_factor must be a positive number/,
    );
    expect(() =>
      parseLlamaConfigJson({ ...base, rope_scaling: { ...base.rope_scaling, high_freq_factor: 0.5 } }),
    ).toThrow(/high_freq_factor \(0.5\) must exceed low_freq_factor \(1\)/);
  });
});

/** A reader over in-memory files that records every name asked for. */
function spyReader(files: Record<string, string | Uint8Array>): { reader: FolderReader; asked: string[] } {
  const asked: string[] = [];
  return { asked, reader: folderReader(files, (name) => asked.push(name)) };
}

describe('unsupported architectures are refused before any weight is read', () => {
  const llama = REAL_CONFIG_FILES['llama-3.2-1b'];
  const qwen2 = REAL_CONFIG_FILES['qwen2.5-0.5b'];
  const qwen3 = REAL_CONFIG_FILES['qwen3-0.6b'];
  const cases: { name: string; config: object; message: RegExp }[] = [
    {
      name: 'Gemma',
      config: { ...llama, model_type: 'gemma', architectures: ['GemmaForCausalLM'] },
      message: /is Gemma.*GeGLU/,
    },
    { name: 'Gemma 2', config: { ...llama, model_type: 'gemma2' }, message: /"gemma2".*is Gemma.*soft-capping/ },
    { name: 'Gemma 3', config: { ...llama, model_type: 'gemma3_text' }, message: /"gemma3_text".*is Gemma/ },
    { name: 'Phi', config: { ...llama, model_type: 'phi' }, message: /"phi".*is Phi.*partial rotary/ },
    { name: 'Phi-3', config: { ...llama, model_type: 'phi3' }, message: /"phi3".*is Phi.*qkv_proj/ },
    {
      name: 'Mixtral',
      config: { ...llama, model_type: 'mixtral', num_local_experts: 8 },
      message: /mixture of experts[\s\S]*num_local_experts 8/,
    },
    {
      name: 'Qwen2-MoE',
      config: { ...qwen2, model_type: 'qwen2_moe', num_experts: 60 },
      message: /"qwen2_moe".*mixture of experts[\s\S]*num_experts 60/,
    },
    {
      name: 'Qwen3-MoE (recorded)',
      config: UNSUPPORTED_CONFIG_FILES['qwen3-30b-a3b'],
      message: /"qwen3_moe".*mixture of experts[\s\S]*num_experts 128[\s\S]*moe_intermediate_size 768/,
    },
    {
      name: 'experts on a Llama',
      config: { ...llama, num_local_experts: 4 },
      message: /num_local_experts 4: mixtures of experts are not supported/,
    },
    {
      name: 'Qwen2 sliding window',
      config: { ...qwen2, use_sliding_window: true },
      message: /use_sliding_window true is not supported \(sliding_window 32768\)/,
    },
    {
      name: 'Qwen3 sliding window',
      config: { ...qwen3, use_sliding_window: true, sliding_window: 4096 },
      message: /not a Qwen3 config[\s\S]*use_sliding_window true/,
    },
    {
      name: 'Llama sliding window',
      config: { ...llama, sliding_window: 4096 },
      message: /sliding_window 4096 is not supported/,
    },
    {
      name: 'sliding layers',
      config: { ...qwen3, layer_types: ['full_attention', 'sliding_attention'] },
      message: /layer_types holds "sliding_attention"/,
    },
    { name: 'Mistral', config: { ...llama, model_type: 'mistral' }, message: /is Mistral.*sliding-window attention/ },
    {
      name: 'yarn',
      config: { ...qwen3, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32768 } },
      message: /rope_scaling of type "yarn" is not supported/,
    },
    {
      name: 'dynamic',
      config: { ...llama, rope_scaling: { type: 'dynamic', factor: 2 } },
      message: /rope_scaling of type "dynamic" is not supported/,
    },
    {
      name: 'linear',
      config: { ...llama, rope_scaling: { type: 'linear', factor: 2 } },
      message: /rope_scaling of type "linear" is not supported/,
    },
    {
      name: 'Qwen3 attention_bias',
      config: { ...qwen3, attention_bias: true },
      message: /attention_bias true is not supported/,
    },
    {
      name: 'partial rotary',
      config: { ...llama, partial_rotary_factor: 0.5 },
      message: /partial_rotary_factor 0.5 is not supported/,
    },
    {
      name: 'quantized',
      config: { ...qwen3, quantization_config: { quant_method: 'awq', bits: 4 } },
      message: /quantized weights are not supported/,
    },
    {
      name: 'gelu',
      config: { ...llama, hidden_act: 'gelu_pytorch_tanh' },
      message: /hidden_act "gelu_pytorch_tanh" is not supported/,
    },
  ];

  it.each(cases)('$name', async ({ config, message }) => {
    expect(() => parseLlamaConfigJson(config)).toThrow(message);
    // A folder with that config.json and (unreadable) weights: only config.json is opened.
    const { reader, asked } = spyReader({
      'config.json': JSON.stringify(config),
      'model.safetensors': new Uint8Array([1, 2, 3]),
      'tokenizer.json': '{}',
    });
    await expect(loadHfFolder(reader)).rejects.toThrow(message);
    expect(asked).toEqual(['config.json']);
  });

  it('a supported config.json goes on to the weights (the spy sees them asked for)', async () => {
    const { reader, asked } = spyReader({
      'config.json': JSON.stringify(qwen3),
      'model.safetensors': new Uint8Array(3),
    });
    await expect(loadHfFolder(reader)).rejects.toThrow();
    expect(asked.slice(0, 2)).toEqual(['config.json', 'model.safetensors']);
  });
});
