// PEFT's layout of LoRA adapters: the recorded facts (fixtures/peft.json) are the ones written, every key is PEFT's
// (base_model.model. + the Hugging Face module + lora_A/lora_B.weight), every adapter_config.json field is one of
// LoraConfig's, and a folder reads back to the same spec and adapters; configs the lab cannot run are refused.

import { describe, expect, it } from 'vitest';
import { initLoraAdapters, type LoraSpec } from '../core/lora-layout';
import { Rng } from '../core/random';
import peft from './fixtures/peft.json';
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, peftAdapterFiles, readPeftAdapter } from './peft';
import { readSafetensors } from './safetensors';

const DIMS = { dModel: 8, nLayers: 2, nHeads: 4, nKvHeads: 2, dFF: 12 };
const SPEC: LoraSpec = { rank: 2, alpha: 16, targets: ['q_proj', 'v_proj', 'up_proj'] };

function adapters() {
  const a = initLoraAdapters(DIMS, SPEC, new Rng(3));
  // B nonzero, as after training, so the round trip carries values that are not all zero.
  for (const [name, data] of Object.entries(a))
    if (name.endsWith('lora_B.weight')) data.forEach((_, i) => (data[i] = 0.01 * (i + 1)));
  return a;
}

describe('LoRA adapters in PEFT layout', () => {
  it('uses the file names and key prefix PEFT records', () => {
    expect(PEFT_WEIGHTS_FILE).toBe('adapter_model.safetensors');
    expect(PEFT_CONFIG_FILE).toBe('adapter_config.json');
    expect(peft.key_prefix).toBe('base_model.model.');
    expect(peft.lora_layer_names).toEqual(['lora_A', 'lora_B']);
  });

  it('writes PEFT keys and shapes, and an adapter_config.json of LoraConfig fields only', () => {
    const files = peftAdapterFiles(DIMS, SPEC, adapters(), 'Qwen/Qwen2.5-0.5B-Instruct');
    const st = readSafetensors(files.safetensors);
    expect([...st.tensors.keys()].slice(0, 2)).toEqual([
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
      'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight',
    ]);
    expect(st.tensors.size).toBe(2 * 3 * 2);
    expect(st.tensors.get('base_model.model.model.layers.1.mlp.up_proj.lora_B.weight')?.shape).toEqual([12, 2]);
    expect(st.tensors.get('base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight')?.shape).toEqual([2, 8]);
    for (const key of st.tensors.keys())
      expect(key).toMatch(/^base_model\.model\.model\.layers\.\d+\.(self_attn|mlp)\.[a-z]+_proj\.lora_[AB]\.weight$/);
    const config = JSON.parse(files.configJson) as Record<string, unknown>;
    for (const k of Object.keys(config)) expect(peft.lora_config_fields, k).toContain(k);
    expect(config).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 2,
      lora_alpha: 16,
      target_modules: ['q_proj', 'v_proj', 'up_proj'],
      bias: 'none',
      fan_in_fan_out: false,
      base_model_name_or_path: 'Qwen/Qwen2.5-0.5B-Instruct',
    });
  });

  it('reads its own folder back to the same spec and adapters', () => {
    const a = adapters();
    const files = peftAdapterFiles(DIMS, SPEC, a, null);
    const back = readPeftAdapter(DIMS, files.safetensors, files.configJson);
    expect(back.spec).toEqual(SPEC);
    expect(Object.keys(back.adapters).sort()).toEqual(Object.keys(a).sort());
    for (const [name, data] of Object.entries(a))
      expect(Array.from(back.adapters[name]), name).toEqual(Array.from(data));
  });

  it('refuses what the lab cannot run, naming the field', () => {
    const files = peftAdapterFiles(DIMS, SPEC, adapters(), null);
    const edit = (f: (c: Record<string, unknown>) => void) => {
      const c = JSON.parse(files.configJson) as Record<string, unknown>;
      f(c);
      return JSON.stringify(c);
    };
    expect(() =>
      readPeftAdapter(
        DIMS,
        files.safetensors,
        edit((c) => (c.peft_type = 'IA3')),
      ),
    ).toThrow(/peft_type must be "LORA"/);
    expect(() =>
      readPeftAdapter(
        DIMS,
        files.safetensors,
        edit((c) => (c.use_dora = true)),
      ),
    ).toThrow(/use_dora true is not supported/);
    expect(() =>
      readPeftAdapter(
        DIMS,
        files.safetensors,
        edit((c) => (c.target_modules = ['q_proj', 'lm_head'])),
      ),
    ).toThrow(/target_modules names "lm_head"/);
    expect(() =>
      readPeftAdapter(
        DIMS,
        files.safetensors,
        edit((c) => (c.target_modules = ['q_proj', 'k_proj'])),
      ),
    ).toThrow(/k_proj\.lora_A\.weight is missing/);
    expect(() => peftAdapterFiles(DIMS, SPEC, {}, null)).toThrow(
      /adapter model\.layers\.0\.self_attn\.q_proj\.lora_A\.weight is missing/,
    );
  });
});
