// LoRA adapters in PEFT's layout, as PeftModel.save_pretrained writes them: adapter_model.safetensors with every key
// prefixed base_model.model. (model.layers.0.self_attn.q_proj.lora_A.weight becomes
// base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight) and adapter_config.json; and the reverse, for
// reading such a folder back. The names and fields are PEFT's recorded facts (fixtures/peft.json). Not the merged
// checkpoint (checkpoint.ts writes that).

import { LORA_TARGETS, loraShapes, type LoraDims, type LoraSpec, type LoraTarget } from '../core/lora-layout';
import type { ParamArrays } from './checkpoint';
import peft from './fixtures/peft.json';
import { readSafetensors, writeSafetensors, type SafetensorsTensorInput } from './safetensors';

/** The two files of a PEFT LoRA adapter folder. */
export const PEFT_WEIGHTS_FILE = peft.weights_file;
export const PEFT_CONFIG_FILE = peft.config_file;

/** adapter_config.json of a LoRA adapter, with the fields this lab writes (each one of PEFT's LoraConfig fields). */
export interface PeftLoraConfig {
  peft_type: 'LORA';
  task_type: 'CAUSAL_LM';
  base_model_name_or_path: string | null;
  revision: null;
  r: number;
  lora_alpha: number;
  lora_dropout: number;
  target_modules: LoraTarget[];
  bias: 'none';
  fan_in_fan_out: false;
  inference_mode: true;
  init_lora_weights: true;
  modules_to_save: null;
  layers_to_transform: null;
  layers_pattern: null;
  rank_pattern: Record<string, never>;
  alpha_pattern: Record<string, never>;
  use_rslora: false;
  use_dora: false;
}

/** The adapter folder's files: the adapters (f32) under PEFT's keys and the config naming the base model. */
export function peftAdapterFiles(
  d: LoraDims,
  spec: LoraSpec,
  adapters: ParamArrays,
  baseModel: string | null,
): { safetensors: Uint8Array; configJson: string } {
  const tensors = new Map<string, SafetensorsTensorInput>();
  for (const { name, shape } of loraShapes(d, spec)) {
    const data = adapters[name];
    if (!data || data.length !== shape[0] * shape[1])
      throw new Error(
        `PEFT export: adapter ${name} is ${data ? `${data.length} values` : 'missing'}, want [${shape.join(', ')}]`,
      );
    tensors.set(peft.key_prefix + name, { dtype: 'F32', shape, data });
  }
  const config: PeftLoraConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    revision: null,
    r: spec.rank,
    lora_alpha: spec.alpha,
    // The lab trains without dropout on the adapters' input.
    lora_dropout: 0,
    target_modules: [...spec.targets],
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    modules_to_save: null,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
    use_rslora: false,
    use_dora: false,
  };
  return {
    safetensors: writeSafetensors(tensors, { format: 'pt' }),
    configJson: `${JSON.stringify(config, null, 2)}\n`,
  };
}

/**
 * Reads a PEFT LoRA folder's two files back to the lab's spec and adapter names. Refuses what the lab cannot run
 * (another peft_type, a projection it has no adapter for, rank or alpha patterns, rsLoRA, DoRA), naming the field.
 */
export function readPeftAdapter(
  d: LoraDims,
  safetensors: Uint8Array,
  configJson: string,
): { spec: LoraSpec; adapters: ParamArrays } {
  const c = JSON.parse(configJson) as Partial<Record<string, unknown>>;
  if (c.peft_type !== 'LORA')
    throw new Error(`${PEFT_CONFIG_FILE}: peft_type must be "LORA", got ${JSON.stringify(c.peft_type)}`);
  const rank = c.r;
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1)
    throw new Error(`${PEFT_CONFIG_FILE}: r must be a whole number >= 1, got ${JSON.stringify(rank)}`);
  const alpha = c.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !(alpha > 0))
    throw new Error(`${PEFT_CONFIG_FILE}: lora_alpha must be a number > 0, got ${JSON.stringify(alpha)}`);
  for (const k of ['use_rslora', 'use_dora', 'fan_in_fan_out'] as const)
    if (c[k]) throw new Error(`${PEFT_CONFIG_FILE}: ${k} true is not supported by the lab`);
  for (const k of ['rank_pattern', 'alpha_pattern'] as const)
    if (c[k] && Object.keys(c[k] as object).length)
      throw new Error(
        `${PEFT_CONFIG_FILE}: ${k} is not supported by the lab (one rank and alpha for every projection)`,
      );
  const modules = c.target_modules;
  if (!Array.isArray(modules))
    throw new Error(
      `${PEFT_CONFIG_FILE}: target_modules must be a list of projection names, got ${JSON.stringify(modules)}`,
    );
  for (const m of modules)
    if (!(LORA_TARGETS as readonly string[]).includes(m as string))
      throw new Error(
        `${PEFT_CONFIG_FILE}: target_modules names ${JSON.stringify(m)}; the lab's projections are ${LORA_TARGETS.join(', ')}`,
      );
  const spec: LoraSpec = { rank, alpha, targets: LORA_TARGETS.filter((t) => modules.includes(t)) };
  const file = readSafetensors(safetensors, { toFloat32: true, copy: true });
  const adapters: ParamArrays = {};
  for (const { name, shape } of loraShapes(d, spec)) {
    const t = file.tensors.get(peft.key_prefix + name);
    if (!t) throw new Error(`${PEFT_WEIGHTS_FILE}: ${peft.key_prefix + name} is missing`);
    if (t.shape.length !== 2 || t.shape[0] !== shape[0] || t.shape[1] !== shape[1])
      throw new Error(
        `${PEFT_WEIGHTS_FILE}: ${peft.key_prefix + name} has shape [${t.shape.join(', ')}], want [${shape.join(', ')}]`,
      );
    adapters[name] = t.data as Float32Array;
  }
  return { spec, adapters };
}
