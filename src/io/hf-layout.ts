// Hugging Face Llama checkpoint naming: the config.json subset for LlamaForCausalLM (and Qwen2ForCausalLM, a Llama
// with q/k/v projection biases; Qwen3ForCausalLM, a Llama with per-head q/k RMSNorm and an explicit head_dim), the
// tensor names and shapes a model.safetensors must hold, and a validator that says precisely what is wrong with a
// foreign or broken file. Architectures the engine does not implement (Gemma, Phi, mixtures of experts, sliding
// windows, RoPE scalings other than Llama 3's) are refused from config.json alone, naming what is missing.
// This file does not read bytes (src/io/safetensors.ts does) and does not own the model's config type: it speaks
// Hugging Face's names and layouts only (Linear weights are (out_features, in_features), row-major).

import { clipText } from '../schema/fields';
import { endOfSequenceListProblem } from './end-of-sequence';
import { llama3ScalingProblems, type Llama3RopeScaling } from '../core/rope-frequencies';

/** HF rope_scaling of rope_type "llama3", in config.json's own keys. */
export interface Llama3RopeScalingJson {
  rope_type: 'llama3';
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
}

/** The decoder families this lab runs. */
export type SupportedModelType = 'llama' | 'qwen2' | 'qwen3';

/**
 * The subset of Hugging Face `config.json` for `LlamaForCausalLM` (model_type "llama"), `Qwen2ForCausalLM`
 * (model_type "qwen2": the same decoder with biases on the q/k/v projections) and `Qwen3ForCausalLM` (model_type
 * "qwen3": no biases, per-head RMSNorm of q and k before RoPE) that this lab reads and writes.
 */
export interface LlamaConfigJson {
  /** ["LlamaForCausalLM"], ["Qwen2ForCausalLM"] or ["Qwen3ForCausalLM"] when we write it. */
  architectures: string[];
  /** "qwen2" implies q/k/v biases (Qwen2Config has no attention_bias field); "qwen3" implies q/k norms. */
  model_type: SupportedModelType;
  /** Rows of the embedding table (and of lm_head). */
  vocab_size: number;
  /** Model width C. */
  hidden_size: number;
  /** SwiGLU inner width. */
  intermediate_size: number;
  /** Number of decoder layers L. */
  num_hidden_layers: number;
  /** Query heads NH. */
  num_attention_heads: number;
  /** Key/value heads (GQA); divides num_attention_heads. */
  num_key_value_heads: number;
  /** Longest position the model supports (a bound on the runs' lengths; nothing is allocated for it). */
  max_position_embeddings: number;
  /** RMSNorm epsilon. */
  rms_norm_eps: number;
  /** RoPE base frequency. */
  rope_theta: number;
  /** lm_head shares the embedding matrix (no lm_head.weight in the file). */
  tie_word_embeddings: boolean;
  bos_token_id: number;
  /** One id, or several (Llama 3 configs list more than one): every one of them ends a sequence. */
  eos_token_id: number | number[];
  pad_token_id: number | null;
  /** Dtype the weights were saved in; we write "float32". */
  torch_dtype: 'float32' | 'float16' | 'bfloat16';
  hidden_act: 'silu';
  /** Llama only (Qwen2's config has neither field). */
  attention_bias?: false;
  mlp_bias?: false;
  /** Qwen2/Qwen3 only: sliding-window attention, which the engine does not implement. */
  use_sliding_window?: false;
  /** Per-head width; hidden_size / num_attention_heads unless stated (Qwen3-0.6B states 128 with 1024 / 16). */
  head_dim: number;
  /** Llama 3 RoPE scaling, or absent/null for plain RoPE. */
  rope_scaling?: Llama3RopeScalingJson | null;
}

/** Thrown by {@link parseLlamaConfigJson} and {@link assertValidCheckpoint}; the message lists every problem. */
export class CheckpointError extends Error {
  override name = 'CheckpointError';
}

/**
 * A file of the site that could not be read because the page is offline and the file is not in its offline copy
 * (the service worker's, scripts/offline-plugin.ts): no other file of that folder will come either, so a loader
 * says this and looks for no alternative (a shard index) that would fail the same way.
 */
export class OfflineFileError extends Error {
  override name = 'OfflineFileError';
  constructor(readonly path: string) {
    super(
      `${path}: the page is offline and this file is not in its offline copy (only what the lab ships is kept after a first visit: the warm starts, the shipped models and tokenizers); connect and load the page again`,
    );
  }
}

type JsonObject = Record<string, unknown>;

/** A config.json value as a message shows it: JSON, cut to 80 characters. */
const shown = (v: unknown): string => clipText(JSON.stringify(v) ?? String(v));

/** True when the config's model has q/k/v projection biases (Qwen2). */
export function hasQkvBias(c: Pick<LlamaConfigJson, 'model_type'>): boolean {
  return c.model_type === 'qwen2';
}

/** True when the config's model normalizes each head of q and k before RoPE (Qwen3). */
export function hasQkNorm(c: Pick<LlamaConfigJson, 'model_type'>): boolean {
  return c.model_type === 'qwen3';
}

/** The model config's Llama 3 scaling from config.json's keys (undefined for plain RoPE). */
export function ropeScalingFromJson(s: Llama3RopeScalingJson | null | undefined): Llama3RopeScaling | undefined {
  if (!s) return undefined;
  return {
    ropeType: 'llama3',
    factor: s.factor,
    lowFreqFactor: s.low_freq_factor,
    highFreqFactor: s.high_freq_factor,
    originalMaxPositions: s.original_max_position_embeddings,
  };
}

/** Defaults of transformers' Qwen2Config / Qwen3Config where they differ from LlamaConfig's. */
const QWEN2_DEFAULTS = { max_position_embeddings: 32768, bos_token_id: null, eos_token_id: null } as const;

/** The architectures the lab runs, by model_type, with their class name. */
const SUPPORTED: Record<SupportedModelType, { arch: string; label: string }> = {
  llama: { arch: 'LlamaForCausalLM', label: 'Llama' },
  qwen2: { arch: 'Qwen2ForCausalLM', label: 'Qwen2' },
  qwen3: { arch: 'Qwen3ForCausalLM', label: 'Qwen3' },
};

/** Known families the engine does not implement, by model_type pattern, with what each would need. */
const UNSUPPORTED_FAMILIES: ReadonlyArray<{ test: RegExp; family: string; missing: string }> = [
  {
    test: /^gemma/,
    family: 'Gemma',
    missing:
      'GeGLU MLPs with gelu, (1 + weight) RMSNorm gains, embeddings scaled by sqrt(hidden_size), and for Gemma 2/3 logit soft-capping, extra pre/post norms and sliding-window layers',
  },
  {
    test: /^phi/,
    family: 'Phi',
    missing:
      'partial rotary embeddings, LayerNorm with biases and a parallel attention/MLP block (Phi-1/2), or fused qkv_proj/gate_up_proj tensors and LongRoPE scaling (Phi-3)',
  },
  {
    test: /moe|^mixtral$|^deepseek|^dbrx$|^jamba$|^olmoe$|^gpt_oss$/,
    family: 'a mixture of experts',
    missing: 'routed expert MLPs (the engine runs one dense SwiGLU MLP per layer)',
  },
  { test: /^mistral$/, family: 'Mistral', missing: 'sliding-window attention' },
];

/**
 * Every architecture feature of a config.json the engine does not implement, each naming the key and what is
 * missing (empty when the decoder is one the lab runs). Reads config.json only, so a folder can be refused before
 * any weight is read.
 */
export function unsupportedArchitectureProblems(c: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const type = typeof c.model_type === 'string' ? c.model_type : null;
  const arch = Array.isArray(c.architectures) ? ` (${c.architectures.join(', ')})` : '';
  if (type === null || !(type in SUPPORTED)) {
    const known = type === null ? undefined : UNSUPPORTED_FAMILIES.find((f) => f.test.test(type));
    problems.push(
      known
        ? `model_type ${shown(type)}${arch} is ${known.family}, which this lab does not run: it needs ${known.missing}`
        : `model_type is ${shown(c.model_type)}${arch}, not "llama", "qwen2" or "qwen3": this lab runs Llama, Qwen2 and Qwen3 decoders only`,
    );
  }
  for (const key of ['num_experts', 'num_local_experts', 'n_routed_experts', 'moe_intermediate_size']) {
    const v = c[key];
    if (v !== undefined && v !== null && v !== 0)
      problems.push(`${key} ${shown(v)}: mixtures of experts are not supported (one dense SwiGLU MLP per layer)`);
  }
  if (c.use_sliding_window === true)
    problems.push(
      `use_sliding_window true is not supported (sliding_window ${shown(c.sliding_window)}): attention is over the whole context here`,
    );
  else if (type === 'llama' && typeof c.sliding_window === 'number')
    problems.push(
      `sliding_window ${c.sliding_window} is not supported: attention is over the whole context here (Llama configs have no such window)`,
    );
  if (Array.isArray(c.layer_types)) {
    const other = c.layer_types.find((t) => t !== 'full_attention');
    if (other !== undefined)
      problems.push(
        `layer_types holds ${shown(other)}: only "full_attention" layers are supported (no sliding-window layers)`,
      );
  }
  const rotary = c.partial_rotary_factor;
  if (rotary !== undefined && rotary !== null && rotary !== 1)
    problems.push(`partial_rotary_factor ${shown(rotary)} is not supported (RoPE rotates the whole head)`);
  const quant = c.quantization_config ?? c.quantization;
  if (quant !== undefined && quant !== null)
    problems.push(`quantization_config ${shown(quant)}: quantized weights are not supported (F32, F16 or BF16 only)`);
  if ((c.hidden_act ?? 'silu') !== 'silu')
    problems.push(`hidden_act ${shown(c.hidden_act)} is not supported (the engine implements SwiGLU with silu)`);
  if (c.attention_bias === true)
    problems.push(
      'attention_bias true is not supported (a Llama o_proj bias is not implemented; Qwen2 q/k/v biases are)',
    );
  if (c.mlp_bias === true) problems.push('mlp_bias true is not supported (gate/up/down projections have no bias here)');
  const scaling = ropeScalingProblems(c.rope_scaling ?? ropeParametersScaling(c));
  problems.push(...scaling);
  return problems;
}

/** transformers v5 writes rope_parameters {rope_type, rope_theta, ...}; its scaling part, if any. */
function ropeParametersScaling(c: Record<string, unknown>): unknown {
  const p = c.rope_parameters;
  if (typeof p !== 'object' || p === null) return undefined;
  const type = (p as JsonObject).rope_type ?? (p as JsonObject).type;
  return type === undefined || type === 'default' ? undefined : p;
}

/** The rope_scaling's type ("llama3", "yarn", ...): rope_type, or the older type key. */
function ropeScalingType(s: JsonObject): unknown {
  return s.rope_type ?? s.type;
}

/** Problems of a rope_scaling value: only null, absent or a well-formed llama3 scaling passes. */
function ropeScalingProblems(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (typeof v !== 'object' || Array.isArray(v)) return [`rope_scaling must be an object or null, got ${shown(v)}`];
  const s = v as JsonObject;
  const type = ropeScalingType(s);
  if (type === 'default') return [];
  if (type !== 'llama3')
    return [
      `rope_scaling of type ${shown(type)} is not supported: only Llama 3's ("llama3") is implemented (not linear, dynamic, yarn, longrope)`,
    ];
  const scaling = ropeScalingFromJson(s as unknown as Llama3RopeScalingJson);
  const problems = scaling ? llama3ScalingProblems(scaling) : [];
  return problems.length ? [`rope_scaling ${shown(v)} is not supported as given: ${problems.join('; ')}`] : [];
}

/** Defaults of transformers' LlamaConfig, used for fields a config.json leaves out. */
const LLAMA_DEFAULTS = {
  max_position_embeddings: 2048,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: false,
  bos_token_id: 1,
  eos_token_id: 2,
  pad_token_id: null,
  torch_dtype: 'float32',
} as const;

/**
 * Validates a parsed Hugging Face config.json as a Llama or Qwen2 model this lab can run and returns it with
 * defaults filled in (num_key_value_heads = num_attention_heads, head_dim = hidden_size / num_attention_heads, and
 * transformers' LlamaConfig or Qwen2Config defaults). Throws {@link CheckpointError} listing every problem: another
 * model_type, missing or non-integer sizes, heads not divisible by key/value heads, features the engine does not
 * implement (activations other than silu, Llama attention/MLP biases, rope_scaling, Qwen2 sliding windows).
 */
export function parseLlamaConfigJson(json: unknown): LlamaConfigJson {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new CheckpointError('config.json must be a JSON object');
  const c = json as JsonObject;
  const problems: string[] = unsupportedArchitectureProblems(c);
  const modelType: SupportedModelType = c.model_type === 'qwen2' || c.model_type === 'qwen3' ? c.model_type : 'llama';
  const qwen = modelType !== 'llama';
  const defaults = qwen ? { ...LLAMA_DEFAULTS, ...QWEN2_DEFAULTS } : LLAMA_DEFAULTS;
  const posInt = (key: string, fallback?: number): number => {
    const v = c[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      problems.push(`${key} must be a positive integer, got ${shown(c[key])}`);
      return 1;
    }
    return v;
  };
  const posNum = (key: string, fallback: number): number => {
    const v = c[key] ?? fallback;
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
      problems.push(`${key} must be a positive number, got ${shown(c[key])}`);
      return fallback;
    }
    return v;
  };
  const tokenId = (key: string, fallback: number | null): number | null => {
    const v = c[key] === undefined ? fallback : c[key];
    if (v === null) return null;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      problems.push(`${key} must be a non-negative integer or null, got ${shown(v)}`);
      return null;
    }
    return v;
  };
  const vocab = posInt('vocab_size');
  const hidden = posInt('hidden_size');
  const inter = posInt('intermediate_size');
  const layers = posInt('num_hidden_layers');
  const heads = posInt('num_attention_heads');
  const kv = posInt('num_key_value_heads', heads);
  if (heads % kv !== 0) problems.push(`num_attention_heads ${heads} is not a multiple of num_key_value_heads ${kv}`);
  let headDim = hidden / heads;
  if (c.head_dim !== undefined && c.head_dim !== null) headDim = posInt('head_dim');
  else if (hidden % heads !== 0)
    problems.push(
      `hidden_size ${hidden} is not a multiple of num_attention_heads ${heads} (and head_dim is not given)`,
    );
  const maxPos = posInt('max_position_embeddings', defaults.max_position_embeddings);
  const eps = posNum('rms_norm_eps', LLAMA_DEFAULTS.rms_norm_eps);
  const ropeParams = c.rope_parameters as JsonObject | undefined;
  const theta =
    c.rope_theta === undefined && typeof ropeParams?.rope_theta === 'number'
      ? ropeParams.rope_theta
      : posNum('rope_theta', LLAMA_DEFAULTS.rope_theta);
  const tied = c.tie_word_embeddings ?? LLAMA_DEFAULTS.tie_word_embeddings;
  if (typeof tied !== 'boolean') problems.push(`tie_word_embeddings must be true or false, got ${shown(tied)}`);
  // Qwen2 leaves the ids to the tokenizer (its defaults are null); the Llama defaults stand in for what we write.
  const bos = tokenId('bos_token_id', defaults.bos_token_id);
  let eos: number | number[] = LLAMA_DEFAULTS.eos_token_id;
  if (Array.isArray(c.eos_token_id)) {
    const problem = endOfSequenceListProblem('eos_token_id', c.eos_token_id);
    if (problem) problems.push(problem);
    else eos = c.eos_token_id as number[];
  } else {
    eos = tokenId('eos_token_id', defaults.eos_token_id) ?? LLAMA_DEFAULTS.eos_token_id;
  }
  const pad = tokenId('pad_token_id', LLAMA_DEFAULTS.pad_token_id);
  const dtype = c.torch_dtype ?? c.dtype ?? LLAMA_DEFAULTS.torch_dtype;
  if (dtype !== 'float32' && dtype !== 'float16' && dtype !== 'bfloat16') {
    problems.push(`torch_dtype ${shown(dtype)} is not supported (float32, float16 or bfloat16)`);
  }
  if (problems.length > 0)
    throw new CheckpointError(
      `config.json is not a ${SUPPORTED[modelType].label} config this lab can run:\n- ${problems.join('\n- ')}`,
    );
  const scalingJson = (c.rope_scaling ?? ropeParametersScaling(c)) as JsonObject | null | undefined;
  const ropeScaling: Llama3RopeScalingJson | null =
    scalingJson && ropeScalingType(scalingJson) === 'llama3'
      ? {
          rope_type: 'llama3',
          factor: scalingJson.factor as number,
          low_freq_factor: scalingJson.low_freq_factor as number,
          high_freq_factor: scalingJson.high_freq_factor as number,
          original_max_position_embeddings: scalingJson.original_max_position_embeddings as number,
        }
      : null;
  const parsed: LlamaConfigJson = {
    architectures: Array.isArray(c.architectures) ? c.architectures.map(String) : [SUPPORTED[modelType].arch],
    model_type: modelType,
    vocab_size: vocab,
    hidden_size: hidden,
    intermediate_size: inter,
    num_hidden_layers: layers,
    num_attention_heads: heads,
    num_key_value_heads: kv,
    max_position_embeddings: maxPos,
    rms_norm_eps: eps,
    rope_theta: theta,
    tie_word_embeddings: tied as boolean,
    bos_token_id: bos ?? LLAMA_DEFAULTS.bos_token_id,
    eos_token_id: eos,
    pad_token_id: pad,
    torch_dtype: dtype as LlamaConfigJson['torch_dtype'],
    hidden_act: 'silu',
    ...(modelType === 'qwen2'
      ? { use_sliding_window: false as const }
      : modelType === 'qwen3'
        ? { attention_bias: false as const, use_sliding_window: false as const }
        : { attention_bias: false as const, mlp_bias: false as const }),
    head_dim: headDim,
    ...(ropeScaling ? { rope_scaling: ropeScaling } : {}),
  };
  return parsed;
}

/** Dimensions needed to write a config.json; everything else takes the values this lab always uses. */
export interface LlamaConfigDims {
  vocabSize: number;
  hidden: number;
  intermediate: number;
  nLayers: number;
  nHeads: number;
  nKvHeads: number;
  headDim: number;
  maxPositions: number;
  rmsNormEps: number;
  ropeTheta: number;
  tiedEmbeddings: boolean;
  bosId: number;
  eosId: number;
  padId: number | null;
  /** q/k/v projection biases: written as a Qwen2 config (Qwen2ForCausalLM). */
  qkvBias?: boolean;
  /** Per-head q/k RMSNorm: written as a Qwen3 config (Qwen3ForCausalLM). */
  qkNorm?: boolean;
  /** Llama 3 RoPE scaling, written as rope_scaling. */
  ropeScaling?: Llama3RopeScaling;
  /** Every end-of-sequence id when there are several (eos_token_id becomes the list). */
  eosIds?: number[];
}

/** Builds the config.json we save next to a float32 model.safetensors (validated by {@link parseLlamaConfigJson}). */
export function buildLlamaConfigJson(d: LlamaConfigDims): LlamaConfigJson {
  if (d.qkvBias && d.qkNorm) throw new CheckpointError('cannot write a config with both q/k/v biases and q/k norms');
  const family = d.qkvBias
    ? { architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', use_sliding_window: false }
    : d.qkNorm
      ? { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', attention_bias: false, use_sliding_window: false }
      : { architectures: ['LlamaForCausalLM'], model_type: 'llama', attention_bias: false, mlp_bias: false };
  const s = d.ropeScaling;
  return parseLlamaConfigJson({
    ...family,
    vocab_size: d.vocabSize,
    hidden_size: d.hidden,
    intermediate_size: d.intermediate,
    num_hidden_layers: d.nLayers,
    num_attention_heads: d.nHeads,
    num_key_value_heads: d.nKvHeads,
    max_position_embeddings: d.maxPositions,
    rms_norm_eps: d.rmsNormEps,
    rope_theta: d.ropeTheta,
    tie_word_embeddings: d.tiedEmbeddings,
    bos_token_id: d.bosId,
    eos_token_id: d.eosIds && d.eosIds.length > 1 ? d.eosIds : d.eosId,
    pad_token_id: d.padId,
    torch_dtype: 'float32',
    hidden_act: 'silu',
    head_dim: d.headDim,
    ...(s
      ? {
          rope_scaling: {
            rope_type: 'llama3',
            factor: s.factor,
            low_freq_factor: s.lowFreqFactor,
            high_freq_factor: s.highFreqFactor,
            original_max_position_embeddings: s.originalMaxPositions,
          },
        }
      : {}),
  });
}

/** Which parameter a tensor is. */
export type LlamaTensorKind =
  | 'embed_tokens'
  | 'input_layernorm'
  | 'q_proj'
  | 'k_proj'
  | 'v_proj'
  | 'q_bias'
  | 'k_bias'
  | 'v_bias'
  | 'o_proj'
  | 'q_norm'
  | 'k_norm'
  | 'post_attention_layernorm'
  | 'gate_proj'
  | 'up_proj'
  | 'down_proj'
  | 'norm'
  | 'lm_head';

/** One tensor of a Llama checkpoint: its Hugging Face name, kind and layer (null for the non-layer tensors). */
export interface LlamaTensorName {
  name: string;
  kind: LlamaTensorKind;
  layer: number | null;
}

/** A tensor name with the shape Hugging Face stores it in. */
export interface LlamaTensorSpec extends LlamaTensorName {
  shape: number[];
}

const LAYER_TENSORS: ReadonlyArray<[LlamaTensorKind, string]> = [
  ['input_layernorm', 'input_layernorm.weight'],
  ['q_proj', 'self_attn.q_proj.weight'],
  ['k_proj', 'self_attn.k_proj.weight'],
  ['v_proj', 'self_attn.v_proj.weight'],
  ['o_proj', 'self_attn.o_proj.weight'],
  ['post_attention_layernorm', 'post_attention_layernorm.weight'],
  ['gate_proj', 'mlp.gate_proj.weight'],
  ['up_proj', 'mlp.up_proj.weight'],
  ['down_proj', 'mlp.down_proj.weight'],
];

/** The q/k/v biases of a Qwen2 layer, each listed right after its projection's weight. */
const QKV_BIASES: ReadonlyMap<LlamaTensorKind, [LlamaTensorKind, string]> = new Map([
  ['q_proj', ['q_bias', 'self_attn.q_proj.bias']],
  ['k_proj', ['k_bias', 'self_attn.k_proj.bias']],
  ['v_proj', ['v_bias', 'self_attn.v_proj.bias']],
]);

/**
 * The tensor names of a LlamaForCausalLM checkpoint in Hugging Face order: `model.embed_tokens.weight`, then per
 * layer `model.layers.{i}.input_layernorm.weight`, `self_attn.{q,k,v,o}_proj.weight`,
 * `post_attention_layernorm.weight`, `mlp.{gate,up,down}_proj.weight`, then `model.norm.weight`, and
 * `lm_head.weight` only when the embeddings are not tied. With `qkvBias` (Qwen2ForCausalLM) each of
 * `self_attn.{q,k,v}_proj.bias` follows its weight.
 */
export function llamaTensorNames(nLayers: number, tied: boolean, qkvBias = false, qkNorm = false): LlamaTensorName[] {
  const out: LlamaTensorName[] = [{ name: 'model.embed_tokens.weight', kind: 'embed_tokens', layer: null }];
  for (let i = 0; i < nLayers; i++) {
    for (const [kind, suffix] of LAYER_TENSORS) {
      out.push({ name: `model.layers.${i}.${suffix}`, kind, layer: i });
      const bias = qkvBias ? QKV_BIASES.get(kind) : undefined;
      if (bias) out.push({ name: `model.layers.${i}.${bias[1]}`, kind: bias[0], layer: i });
      // Qwen3: the per-head norms follow o_proj, as in paramShapes.
      if (qkNorm && kind === 'o_proj')
        out.push(
          { name: `model.layers.${i}.self_attn.q_norm.weight`, kind: 'q_norm', layer: i },
          { name: `model.layers.${i}.self_attn.k_norm.weight`, kind: 'k_norm', layer: i },
        );
    }
  }
  out.push({ name: 'model.norm.weight', kind: 'norm', layer: null });
  if (!tied) out.push({ name: 'lm_head.weight', kind: 'lm_head', layer: null });
  return out;
}

/**
 * Hugging Face shape of one tensor kind, with how it was derived (for error messages). Linear weights are
 * (out_features, in_features): q_proj (NH*hd, C), k/v_proj (NKV*hd, C), o_proj (C, NH*hd), gate/up (I, C),
 * down (C, I); embed_tokens and lm_head (V, C); norms (C).
 */
export function llamaTensorShape(kind: LlamaTensorKind, c: LlamaConfigJson): { shape: number[]; why: string } {
  const C = c.hidden_size;
  const q = c.num_attention_heads * c.head_dim;
  const kv = c.num_key_value_heads * c.head_dim;
  const I = c.intermediate_size;
  const V = c.vocab_size;
  const qWhy = `num_attention_heads ${c.num_attention_heads} x head_dim ${c.head_dim}`;
  const kvWhy = `num_key_value_heads ${c.num_key_value_heads} x head_dim ${c.head_dim}`;
  switch (kind) {
    case 'embed_tokens':
    case 'lm_head':
      return { shape: [V, C], why: `vocab_size ${V}, hidden_size ${C}` };
    case 'input_layernorm':
    case 'post_attention_layernorm':
    case 'norm':
      return { shape: [C], why: `hidden_size ${C}` };
    case 'q_norm':
    case 'k_norm':
      return { shape: [c.head_dim], why: `head_dim ${c.head_dim}` };
    case 'q_proj':
      return { shape: [q, C], why: `${qWhy}, hidden_size ${C}` };
    case 'q_bias':
      return { shape: [q], why: qWhy };
    case 'k_bias':
    case 'v_bias':
      return { shape: [kv], why: kvWhy };
    case 'k_proj':
    case 'v_proj':
      return { shape: [kv, C], why: `${kvWhy}, hidden_size ${C}` };
    case 'o_proj':
      return { shape: [C, q], why: `hidden_size ${C}, ${qWhy}` };
    case 'gate_proj':
    case 'up_proj':
      return { shape: [I, C], why: `intermediate_size ${I}, hidden_size ${C}` };
    case 'down_proj':
      return { shape: [C, I], why: `hidden_size ${C}, intermediate_size ${I}` };
  }
}

/** Every tensor of the checkpoint {@link llamaTensorNames} lists, with its expected shape. */
export function llamaTensorSpecs(c: LlamaConfigJson): LlamaTensorSpec[] {
  return llamaTensorNames(c.num_hidden_layers, c.tie_word_embeddings, hasQkvBias(c), hasQkNorm(c)).map((t) => ({
    ...t,
    shape: llamaTensorShape(t.kind, c).shape,
  }));
}

/** Dtypes the loader accepts (F16/BF16 are widened to float32 on load). */
export const SUPPORTED_CHECKPOINT_DTYPES: readonly string[] = ['F32', 'F16', 'BF16'];

/** A tensor as the validator needs it (a safetensors header entry or a loaded tensor both fit). */
export interface TensorInfoLike {
  dtype: string;
  shape: readonly number[];
}

/** One finding of {@link validateCheckpointTensors}. Errors make the checkpoint unusable; warnings do not. */
export interface CheckpointProblem {
  kind: 'foreign' | 'missing' | 'unexpected' | 'shape' | 'dtype' | 'ignored';
  severity: 'error' | 'warning';
  /** Tensor name (absent for 'foreign', which is about the whole file). */
  name?: string;
  expected?: number[];
  found?: number[];
  message: string;
}

/** What {@link validateCheckpointTensors} returns: `ok` when there is no error. */
export interface CheckpointReport {
  ok: boolean;
  problems: CheckpointProblem[];
}

/** Name patterns of other model families, to say what a foreign file is instead of listing hundreds of names. */
const FOREIGN_FAMILIES: ReadonlyArray<{ family: string; test: RegExp; not?: string; note?: string }> = [
  { family: 'a GPT-2', test: /(^|\.)(wte|wpe)\.weight$|(^|\.)h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|ln_1)\./ },
  { family: 'a GPT-NeoX/Pythia', test: /^gpt_neox\./ },
  { family: 'an OPT', test: /(^|\.)decoder\.layers\.\d+\.(self_attn_layer_norm|fc1)|decoder\.embed_positions/ },
  { family: 'a BERT-style encoder', test: /(^|\.)embeddings\.word_embeddings\.weight$|(^|\.)encoder\.layer\.\d+\./ },
  { family: 'a T5', test: /(^|\.)(encoder|decoder)\.block\.\d+\./ },
  { family: 'a Falcon/BLOOM', test: /self_attention\.query_key_value|(^|\.)word_embeddings_layernorm\./ },
  { family: 'a Phi-3 (fused qkv_proj/gate_up_proj)', test: /self_attn\.qkv_proj\.|mlp\.gate_up_proj\./ },
  {
    family: "Meta's original Llama (consolidated.*.pth names)",
    test: /^tok_embeddings\.weight$|(^|\.)attention\.w[qkvo]\.weight$|feed_forward\.w[123]\.weight$/,
    not: 'Hugging Face Llama',
    note: "; convert it with transformers' convert_llama_weights_to_hf.py",
  },
  { family: 'a Qwen2-style (attention biases)', test: /self_attn\.[qkv]_proj\.bias$/ },
];

const ROTARY_BUFFER = /^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/;

function entriesOf(
  tensors: ReadonlyMap<string, TensorInfoLike> | Readonly<Record<string, TensorInfoLike>>,
): Map<string, TensorInfoLike> {
  return tensors instanceof Map ? new Map(tensors) : new Map(Object.entries(tensors));
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

const fmt = (s: readonly number[]): string => `[${s.join(', ')}]`;

/**
 * Checks a checkpoint's tensors (name -> dtype and shape) against what `config` says a LlamaForCausalLM holds and
 * reports every problem precisely: a file of another family ("this looks like a GPT-2 checkpoint, not Llama"),
 * each missing tensor, each unexpected tensor, each shape mismatch (name, expected, found, and how the expected
 * shape follows from the config; a transposed Linear weight is called out), and each unsupported dtype.
 * Warnings, which do not make the checkpoint unusable: RoPE `inv_freq` buffers (recomputed) and an `lm_head.weight`
 * next to tied embeddings (Hugging Face ignores it too).
 */
export function validateCheckpointTensors(
  config: LlamaConfigJson,
  tensors: ReadonlyMap<string, TensorInfoLike> | Readonly<Record<string, TensorInfoLike>>,
): CheckpointReport {
  const found = entriesOf(tensors);
  const problems: CheckpointProblem[] = [];
  const specs = llamaTensorSpecs(config);
  const expectedNames = new Set(specs.map((s) => s.name));

  // Whole-file diagnosis first: which family do the unexpected names belong to?
  const unexpectedNames = [...found.keys()].filter(
    (n) => !expectedNames.has(n) && !ROTARY_BUFFER.test(n) && !(n === 'lm_head.weight' && config.tie_word_embeddings),
  );
  for (const { family, test, not = 'Llama', note = '' } of FOREIGN_FAMILIES) {
    const hits = unexpectedNames.filter((n) => test.test(n));
    if (hits.length === 0) continue;
    const llamaCount = [...found.keys()].filter((n) => expectedNames.has(n)).length;
    const examples = hits.slice(0, 3).join(', ');
    problems.push({
      kind: 'foreign',
      severity: 'error',
      message:
        llamaCount === 0
          ? `this looks like ${family} checkpoint, not ${not} (${examples}${hits.length > 3 ? ', ...' : ''})${note}`
          : `this has tensors of ${family} checkpoint, which is not ${not} (${examples}${hits.length > 3 ? ', ...' : ''})${note}`,
    });
    break;
  }

  for (const spec of specs) {
    const t = found.get(spec.name);
    if (t === undefined) {
      const bare = spec.name.replace(/^model\./, '');
      const hint =
        spec.name !== bare && found.has(bare)
          ? ` (found "${bare}" without the "model." prefix: saved from LlamaModel rather than LlamaForCausalLM?)`
          : spec.kind === 'lm_head'
            ? ' (config.json says tie_word_embeddings is false, so the file must hold lm_head.weight)'
            : '';
      problems.push({
        kind: 'missing',
        severity: 'error',
        name: spec.name,
        expected: spec.shape,
        message: `missing tensor ${spec.name}${hint}`,
      });
      continue;
    }
    if (!SUPPORTED_CHECKPOINT_DTYPES.includes(t.dtype)) {
      problems.push({
        kind: 'dtype',
        severity: 'error',
        name: spec.name,
        message: `${spec.name}: dtype ${t.dtype} is not supported (${SUPPORTED_CHECKPOINT_DTYPES.join(', ')}; quantized checkpoints cannot be loaded)`,
      });
    }
    if (!sameShape(t.shape, spec.shape)) {
      const { why } = llamaTensorShape(spec.kind, config);
      const transposed = spec.shape.length === 2 && sameShape(t.shape, [spec.shape[1], spec.shape[0]]);
      problems.push({
        kind: 'shape',
        severity: 'error',
        name: spec.name,
        expected: spec.shape,
        found: [...t.shape],
        message:
          `${spec.name}: shape ${fmt(t.shape)}, expected ${fmt(spec.shape)} (${why})` +
          (transposed ? '; it is transposed: Hugging Face Linear weights are (out_features, in_features)' : ''),
      });
    }
  }

  for (const [name, t] of found) {
    if (expectedNames.has(name)) continue;
    if (ROTARY_BUFFER.test(name)) {
      problems.push({
        kind: 'ignored',
        severity: 'warning',
        name,
        message: `${name}: RoPE buffer, ignored (recomputed from rope_theta)`,
      });
    } else if (name === 'lm_head.weight' && config.tie_word_embeddings) {
      problems.push({
        kind: 'ignored',
        severity: 'warning',
        name,
        found: [...t.shape],
        message:
          'lm_head.weight is present but tie_word_embeddings is true: it is ignored and model.embed_tokens.weight is used, as Hugging Face does',
      });
    } else {
      problems.push({
        kind: 'unexpected',
        severity: 'error',
        name,
        found: [...t.shape],
        message: `unexpected tensor ${name} ${fmt(t.shape)} (not part of a ${hasQkvBias(config) ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'} with this config)`,
      });
    }
  }
  return { ok: !problems.some((p) => p.severity === 'error'), problems };
}

/**
 * One readable paragraph for a report: errors first, at most `limit` lines, then "... and N more".
 * Returns '' when there is nothing to say.
 */
export function formatCheckpointReport(report: CheckpointReport, limit = 12): string {
  const sorted = [...report.problems].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1));
  const lines = sorted.slice(0, limit).map((p) => `- ${p.severity === 'warning' ? 'warning: ' : ''}${p.message}`);
  if (sorted.length > limit) lines.push(`- ... and ${sorted.length - limit} more`);
  return lines.join('\n');
}

/** {@link validateCheckpointTensors}, throwing a {@link CheckpointError} with the formatted report on any error. */
export function assertValidCheckpoint(
  config: LlamaConfigJson,
  tensors: ReadonlyMap<string, TensorInfoLike> | Readonly<Record<string, TensorInfoLike>>,
): CheckpointReport {
  const report = validateCheckpointTensors(config, tensors);
  if (!report.ok)
    throw new CheckpointError(`checkpoint does not match config.json:\n${formatCheckpointReport(report)}`);
  return report;
}
