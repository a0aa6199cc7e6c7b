// Checkpoints in Hugging Face's format: model.safetensors (float32, Llama tensor names and layouts; or several
// shards) plus config.json, so a checkpoint made here loads in LlamaForCausalLM (Qwen2ForCausalLM with q/k/v biases). Pure TypeScript on bytes and strings; the
// files are read and written by the caller (CLI: fs; browser: IndexedDB or a download). Not trainer state.

import { weightToF32, type WeightData } from '../core/half';
import { paramShapes } from '../core/model-shapes';
import {
  CheckpointError,
  assertValidCheckpoint,
  buildLlamaConfigJson,
  hasQkNorm,
  hasQkvBias,
  parseLlamaConfigJson,
  ropeScalingFromJson,
  type LlamaConfigJson,
} from './hf-layout';
import { ModelConfigError, validateModelConfig, type ModelConfig } from '../schema/model-config';
import {
  SafetensorsError,
  readSafetensors,
  writeSafetensors,
  type SafetensorsTensor,
  type SafetensorsTensorInput,
} from './safetensors';

/** Parameters keyed by Hugging Face tensor name, float32, in HF layouts. */
export type ParamArrays = Record<string, Float32Array>;

/** Token ids that config.json records. */
export interface SpecialIds {
  bosId: number;
  /** The first end-of-sequence id (config.json's eos_token_id, or the first of its list). */
  eosId: number;
  padId: number;
  /** Every end-of-sequence id when config.json lists several (Llama 3 Instruct); eosId is the first. */
  eosIds?: number[];
}

export interface Checkpoint {
  config: ModelConfig;
  params: ParamArrays;
  /** Free-form string metadata stored in the safetensors header (e.g. how it was made). */
  metadata: Record<string, string>;
  special: SpecialIds;
}

/** The Hugging Face config.json of a model config (its inverse is configFromJson). */
export function modelConfigToJson(c: ModelConfig, special: SpecialIds): LlamaConfigJson {
  return buildLlamaConfigJson({
    vocabSize: c.vocabSize,
    hidden: c.dModel,
    intermediate: c.dFF,
    nLayers: c.nLayers,
    nHeads: c.nHeads,
    nKvHeads: c.nKvHeads,
    headDim: c.headDim ?? c.dModel / c.nHeads,
    maxPositions: c.contextLength,
    rmsNormEps: c.normEps,
    ropeTheta: c.ropeTheta,
    tiedEmbeddings: c.tiedEmbeddings,
    bosId: special.bosId,
    eosId: special.eosId,
    padId: special.padId,
    qkvBias: c.qkvBias === true,
    qkNorm: c.qkNorm === true,
    ropeScaling: c.ropeScaling,
    eosIds: special.eosIds,
  });
}

/** Each model config field's key in config.json. */
const HF_NAMES: Record<keyof ModelConfig, string> = {
  vocabSize: 'vocab_size',
  contextLength: 'max_position_embeddings',
  nLayers: 'num_hidden_layers',
  nHeads: 'num_attention_heads',
  nKvHeads: 'num_key_value_heads',
  dModel: 'hidden_size',
  dFF: 'intermediate_size',
  ropeTheta: 'rope_theta',
  normEps: 'rms_norm_eps',
  tiedEmbeddings: 'tie_word_embeddings',
  qkvBias: 'model_type',
  qkNorm: 'model_type',
  headDim: 'head_dim',
  ropeScaling: 'rope_scaling',
};

/**
 * The model config a config.json describes (validated). The head dim is kept as `headDim` only when it is not
 * hidden / heads (Qwen3), so a Llama config stays exactly what it was.
 */
export function configFromJson(json: LlamaConfigJson): { config: ModelConfig; special: SpecialIds } {
  const headDim = json.head_dim ?? json.hidden_size / json.num_attention_heads;
  const explicitHeadDim = headDim * json.num_attention_heads !== json.hidden_size;
  const ropeScaling = ropeScalingFromJson(json.rope_scaling);
  let config: ModelConfig;
  try {
    config = validateModelConfig({
      vocabSize: json.vocab_size,
      contextLength: json.max_position_embeddings,
      nLayers: json.num_hidden_layers,
      nHeads: json.num_attention_heads,
      nKvHeads: json.num_key_value_heads ?? json.num_attention_heads,
      dModel: json.hidden_size,
      dFF: json.intermediate_size,
      ropeTheta: json.rope_theta,
      normEps: json.rms_norm_eps,
      tiedEmbeddings: json.tie_word_embeddings,
      // Only Qwen2 configs carry the key, so a Llama model config stays exactly what it was.
      ...(hasQkvBias(json) ? { qkvBias: true } : {}),
      ...(hasQkNorm(json) ? { qkNorm: true } : {}),
      ...(explicitHeadDim ? { headDim } : {}),
      ...(ropeScaling ? { ropeScaling } : {}),
    });
  } catch (e) {
    // A config.json that parses as Llama but describes a model outside the engine's ranges: said in its own keys.
    if (!(e instanceof ModelConfigError)) throw e;
    const problems = e.problems.map((p) =>
      p.replace(/^(\w+):/, (_, ours: string) => `${HF_NAMES[ours as keyof ModelConfig] ?? ours}:`),
    );
    throw new CheckpointError(`config.json describes a model this lab cannot run:\n- ${problems.join('\n- ')}`);
  }
  const first = (v: number | number[] | null | undefined, fallback: number) =>
    Array.isArray(v) ? v[0] : (v ?? fallback);
  const special: SpecialIds = {
    bosId: first(json.bos_token_id, 1),
    eosId: first(json.eos_token_id, 2),
    padId: first(json.pad_token_id, 0),
    ...(Array.isArray(json.eos_token_id) && json.eos_token_id.length > 1 ? { eosIds: [...json.eos_token_id] } : {}),
  };
  return { config, special };
}

/** Serializes a checkpoint: the bytes of model.safetensors and the text of config.json. */
export function encodeCheckpoint(ck: Checkpoint): { safetensors: Uint8Array; configJson: string } {
  const tensors = new Map<string, SafetensorsTensorInput>();
  for (const { name, shape } of paramShapes(ck.config)) {
    const data = ck.params[name];
    if (!data) throw new CheckpointError(`cannot save: parameter ${name} is missing`);
    const n = shape.reduce((a, b) => a * b, 1);
    if (data.length !== n)
      throw new CheckpointError(
        `cannot save: ${name} has ${data.length} values, shape (${shape.join(', ')}) needs ${n}`,
      );
    tensors.set(name, { dtype: 'F32', shape, data });
  }
  const safetensors = writeSafetensors(tensors, { format: 'pt', ...ck.metadata });
  const configJson = `${JSON.stringify(modelConfigToJson(ck.config, ck.special), null, 2)}\n`;
  return { safetensors, configJson };
}

/** One file of a sharded checkpoint (model-00001-of-00002.safetensors, ...). */
export interface CheckpointShard {
  file: string;
  bytes: Uint8Array;
}

/**
 * Every tensor of the shards in one map (float32 copies); a tensor in two shards is an error, and a file that
 * cannot be read (the single model.safetensors too) is named in the message (the SafetensorsError keeps its class
 * and code).
 */
function readShards(
  shards: readonly CheckpointShard[],
  toFloat32 = true,
): {
  tensors: Map<string, SafetensorsTensor>;
  metadata: Record<string, string>;
  /** The file each tensor is in. */
  where: Map<string, string>;
} {
  const tensors = new Map<string, SafetensorsTensor>();
  const where = new Map<string, string>();
  let metadata: Record<string, string> = {};
  for (const { file, bytes } of shards) {
    let read;
    try {
      read = readSafetensors(bytes, { toFloat32, copy: true });
    } catch (e) {
      if (e instanceof SafetensorsError) e.message = `${file}: ${e.message}`;
      throw e;
    }
    for (const [name, t] of read.tensors) {
      const before = where.get(name);
      if (before !== undefined) throw new CheckpointError(`tensor ${name} is in both ${before} and ${file}`);
      where.set(name, file);
      tensors.set(name, t);
    }
    metadata = { ...metadata, ...(read.metadata ?? {}) };
  }
  return { tensors, metadata, where };
}

/** config.json parsed and the shards' tensors read and checked against it (half tensors widened if `toFloat32`). */
function readCheckpoint(
  safetensors: Uint8Array | readonly CheckpointShard[],
  configJsonText: string,
  toFloat32: boolean,
) {
  let raw: unknown;
  try {
    raw = JSON.parse(configJsonText);
  } catch (e) {
    throw new CheckpointError(`config.json is not valid JSON: ${(e as Error).message}`);
  }
  const json = parseLlamaConfigJson(raw);
  const { config, special } = configFromJson(json);
  const file = readShards(
    safetensors instanceof Uint8Array ? [{ file: 'model.safetensors', bytes: safetensors }] : safetensors,
    toFloat32,
  );
  try {
    assertValidCheckpoint(json, file.tensors);
  } catch (e) {
    // A sharded checkpoint's problems name the shard each tensor named is in.
    if (e instanceof Error && !(safetensors instanceof Uint8Array)) {
      const named = [...file.where].filter(([name]) =>
        new RegExp(`\\b${name.replace(/\./g, '\\.')}\\b`).test(e.message),
      );
      if (named.length) e.message += ` (${named.map(([name, shard]) => `${name} is in ${shard}`).join('; ')})`;
    }
    throw e;
  }
  return { config, special, file };
}

/**
 * Reads a checkpoint: one model.safetensors, or the shards of a sharded one (their tensors together). A truncated
 * or malformed file, a foreign architecture, or tensors that do not match config.json fail with a message that
 * says what is wrong (SafetensorsError or CheckpointError).
 */
export function decodeCheckpoint(
  safetensors: Uint8Array | readonly CheckpointShard[],
  configJsonText: string,
): Checkpoint {
  const { config, special, file } = readCheckpoint(safetensors, configJsonText, true);
  const params: ParamArrays = {};
  for (const { name } of paramShapes(config)) {
    const t = file.tensors.get(name)!;
    params[name] = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data as ArrayLike<number>);
  }
  const { format: _format, ...metadata } = file.metadata ?? {};
  return { config, params, metadata, special };
}

/** A checkpoint whose BF16/F16 tensors stay half: raw bits, as in the file (decodeCheckpointHalf). */
export interface HalfCheckpoint extends Omit<Checkpoint, 'params'> {
  /** By HF name: Float32Array for F32 tensors, half bits for BF16/F16 ones. */
  weights: Record<string, WeightData>;
}

/**
 * decodeCheckpoint without widening: BF16 and F16 tensors stay half bits (2 bytes a weight, copied out of the file
 * bytes), so a half checkpoint reaches GpuModel.create, which uploads it one tensor at a time, without an f32 copy
 * of the model on the host. Same checks and messages as decodeCheckpoint, and a non-finite weight (a half whose
 * exponent bits are all ones) is refused, named with its index.
 */
export function decodeCheckpointHalf(
  safetensors: Uint8Array | readonly CheckpointShard[],
  configJsonText: string,
): HalfCheckpoint {
  const { config, special, file } = readCheckpoint(safetensors, configJsonText, false);
  const weights: Record<string, WeightData> = {};
  for (const { name } of paramShapes(config)) {
    const t = file.tensors.get(name)!;
    if (t.dtype === 'BF16' || t.dtype === 'F16') {
      const half = { dtype: t.dtype === 'BF16' ? 'bf16' : 'f16', bits: t.data as Uint16Array } as const;
      const exponent = half.dtype === 'bf16' ? 0x7f80 : 0x7c00;
      const bad = half.bits.findIndex((b) => (b & exponent) === exponent);
      if (bad >= 0) {
        const value = weightToF32({ dtype: half.dtype, bits: half.bits.subarray(bad, bad + 1) })[0];
        throw new CheckpointError(
          `model.safetensors: tensor ${name} holds ${value} at index ${bad} (the weights must be finite)`,
        );
      }
      weights[name] = half;
    } else weights[name] = t.data instanceof Float32Array ? t.data : Float32Array.from(t.data as ArrayLike<number>);
  }
  const { format: _format, ...metadata } = file.metadata ?? {};
  return { config, weights, metadata, special };
}
