// Hugging Face Llama checkpoint naming: the config.json subset for LlamaForCausalLM (and Qwen2ForCausalLM, a Llama
// with q/k/v projection biases), the tensor names and shapes a model.safetensors must hold, and a validator that says
// precisely what is wrong with a foreign or broken file.
// This file does not read bytes (src/model/safetensors.ts does) and does not own the model's config type: it speaks
// Hugging Face's names and layouts only (Linear weights are (out_features, in_features), row-major).

import { clipText } from '../schema/fields';

/**
 * The subset of Hugging Face `config.json` for `LlamaForCausalLM` (model_type "llama") and `Qwen2ForCausalLM`
 * (model_type "qwen2": the same decoder with biases on the q/k/v projections) that this lab reads and writes.
 */
export interface LlamaConfigJson {
  /** ["LlamaForCausalLM"] or ["Qwen2ForCausalLM"] when we write it. */
  architectures: string[];
  /** "qwen2" implies q/k/v biases (Qwen2Config has no attention_bias field). */
  model_type: 'llama' | 'qwen2';
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
  /** Longest position the RoPE tables are built for. */
  max_position_embeddings: number;
  /** RMSNorm epsilon. */
  rms_norm_eps: number;
  /** RoPE base frequency. */
  rope_theta: number;
  /** lm_head shares the embedding matrix (no lm_head.weight in the file). */
  tie_word_embeddings: boolean;
  bos_token_id: number;
  /** One id, or several (Llama 3 configs list more than one). */
  eos_token_id: number | number[];
  pad_token_id: number | null;
  /** Dtype the weights were saved in; we write "float32". */
  torch_dtype: 'float32' | 'float16' | 'bfloat16';
  hidden_act: 'silu';
  /** Llama only (Qwen2's config has neither field). */
  attention_bias?: false;
  mlp_bias?: false;
  /** Qwen2 only: sliding-window attention, which the engine does not implement. */
  use_sliding_window?: false;
  /** Per-head width; hidden_size / num_attention_heads unless stated. */
  head_dim: number;
}

/** Thrown by {@link parseLlamaConfigJson} and {@link assertValidCheckpoint}; the message lists every problem. */
export class CheckpointError extends Error {
  override name = 'CheckpointError';
}

type JsonObject = Record<string, unknown>;

/** A config.json value as a message shows it: JSON, cut to 80 characters. */
const shown = (v: unknown): string => clipText(JSON.stringify(v) ?? String(v));

/** True when the config's model has q/k/v projection biases (Qwen2). */
export function hasQkvBias(c: Pick<LlamaConfigJson, 'model_type'>): boolean {
  return c.model_type === 'qwen2';
}

/** Defaults of transformers' Qwen2Config where they differ from LlamaConfig's. */
const QWEN2_DEFAULTS = { max_position_embeddings: 32768, bos_token_id: null, eos_token_id: null } as const;

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
  const problems: string[] = [];
  const qwen2 = c.model_type === 'qwen2';
  if (c.model_type !== 'llama' && !qwen2) {
    const arch = Array.isArray(c.architectures) ? ` (${c.architectures.join(', ')})` : '';
    problems.push(
      `model_type is ${shown(c.model_type)}${arch}, not "llama" or "qwen2": this is not a Llama or Qwen2 config`,
    );
  }
  const defaults = qwen2 ? { ...LLAMA_DEFAULTS, ...QWEN2_DEFAULTS } : LLAMA_DEFAULTS;
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
  const theta = posNum('rope_theta', LLAMA_DEFAULTS.rope_theta);
  const tied = c.tie_word_embeddings ?? LLAMA_DEFAULTS.tie_word_embeddings;
  if (typeof tied !== 'boolean') problems.push(`tie_word_embeddings must be true or false, got ${shown(tied)}`);
  // Qwen2 leaves the ids to the tokenizer (its defaults are null); the Llama defaults stand in for what we write.
  const bos = tokenId('bos_token_id', defaults.bos_token_id);
  let eos: number | number[] = LLAMA_DEFAULTS.eos_token_id;
  if (Array.isArray(c.eos_token_id)) {
    if (c.eos_token_id.length === 0 || !c.eos_token_id.every((x) => Number.isSafeInteger(x) && (x as number) >= 0)) {
      problems.push(`eos_token_id must be an id or a non-empty list of ids, got ${shown(c.eos_token_id)}`);
    } else eos = c.eos_token_id as number[];
  } else {
    eos = tokenId('eos_token_id', defaults.eos_token_id) ?? LLAMA_DEFAULTS.eos_token_id;
  }
  const pad = tokenId('pad_token_id', LLAMA_DEFAULTS.pad_token_id);
  const dtype = c.torch_dtype ?? LLAMA_DEFAULTS.torch_dtype;
  if (dtype !== 'float32' && dtype !== 'float16' && dtype !== 'bfloat16') {
    problems.push(`torch_dtype ${shown(dtype)} is not supported (float32, float16 or bfloat16)`);
  }
  if ((c.hidden_act ?? 'silu') !== 'silu')
    problems.push(`hidden_act ${shown(c.hidden_act)} is not supported (the engine implements SwiGLU with silu)`);
  if (c.attention_bias === true)
    problems.push(
      'attention_bias true is not supported (a Llama o_proj bias is not implemented; Qwen2 q/k/v biases are)',
    );
  if (c.mlp_bias === true) problems.push('mlp_bias true is not supported (gate/up/down projections have no bias here)');
  if (qwen2 && c.use_sliding_window === true)
    problems.push('use_sliding_window true is not supported (attention is over the whole context here)');
  if (c.rope_scaling !== undefined && c.rope_scaling !== null) {
    problems.push(`rope_scaling ${shown(c.rope_scaling)} is not supported (plain RoPE only)`);
  }
  if (problems.length > 0)
    throw new CheckpointError(
      `config.json is not a ${qwen2 ? 'Qwen2' : 'Llama'} config this lab can run:\n- ${problems.join('\n- ')}`,
    );
  const parsed: LlamaConfigJson = {
    architectures: Array.isArray(c.architectures)
      ? c.architectures.map(String)
      : [qwen2 ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'],
    model_type: qwen2 ? 'qwen2' : 'llama',
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
    ...(qwen2 ? { use_sliding_window: false as const } : { attention_bias: false as const, mlp_bias: false as const }),
    head_dim: headDim,
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
}

/** Builds the config.json we save next to a float32 model.safetensors (validated by {@link parseLlamaConfigJson}). */
export function buildLlamaConfigJson(d: LlamaConfigDims): LlamaConfigJson {
  const family = d.qkvBias
    ? { architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', use_sliding_window: false }
    : { architectures: ['LlamaForCausalLM'], model_type: 'llama', attention_bias: false, mlp_bias: false };
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
    eos_token_id: d.eosId,
    pad_token_id: d.padId,
    torch_dtype: 'float32',
    hidden_act: 'silu',
    head_dim: d.headDim,
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
export function llamaTensorNames(nLayers: number, tied: boolean, qkvBias = false): LlamaTensorName[] {
  const out: LlamaTensorName[] = [{ name: 'model.embed_tokens.weight', kind: 'embed_tokens', layer: null }];
  for (let i = 0; i < nLayers; i++) {
    for (const [kind, suffix] of LAYER_TENSORS) {
      out.push({ name: `model.layers.${i}.${suffix}`, kind, layer: i });
      const bias = qkvBias ? QKV_BIASES.get(kind) : undefined;
      if (bias) out.push({ name: `model.layers.${i}.${bias[1]}`, kind: bias[0], layer: i });
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
  return llamaTensorNames(c.num_hidden_layers, c.tie_word_embeddings, hasQkvBias(c)).map((t) => ({
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
