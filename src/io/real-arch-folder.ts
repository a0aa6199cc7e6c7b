// Random-initialised Hugging Face folders at the exact widths, head dim and vocabulary of real models (their recorded
// config.json, real-models.fixture.ts) with fewer layers: config.json (the recorded file with num_hidden_layers
// reduced, every other key as published), model.safetensors in the checkpoint's dtype (BF16 like the real ones),
// a byte-level BPE tokenizer.json of the real vocabulary size (synthetic merges, valid for Hugging Face's
// tokenizers), tokenizer_config.json and generation_config.json. Pure and deterministic; large, so tests build them
// in memory or in a temp dir and scripts/make-real-arch-folders.ts writes them on request. Never committed.

import { paramShapes } from '../core/model-shapes';
import { configFromJson, type ParamArrays } from './checkpoint';
import { parseLlamaConfigJson } from './hf-layout';
import type { ModelConfig } from '../schema/model-config';
import { REAL_CONFIG_FILES, type RealModelName } from './real-models.fixture';
import { f32ToBf16Bits, bf16BitsToF32, writeSafetensors, type SafetensorsTensorInput } from './safetensors';
import {
  BYTE_LEVEL,
  byteLevelBpeModel,
  bytesToUnicode,
  specialAddedToken,
  TINY_CHAT_TEMPLATE,
  type TinyFolder,
} from './tiny-hf';

/** One special token at a fixed id. */
interface SpecialToken {
  id: number;
  content: string;
}

/** How each family's tokenizer lays out its special tokens, and which ones are bos, eos and pad. */
interface TokenizerLayout {
  specials: SpecialToken[];
  bos: string | null;
  eos: string;
  pad: string;
  /** generation_config.json's eos_token_id: one id or several. */
  generationEos: number | number[];
  /** Prepend bos (Llama 3's TemplateProcessing); Qwen and SmolLM2 add none. */
  addBos: boolean;
  chatTemplate: string | null;
}

/** The special tokens of each recorded model's tokenizer, at the ids its config.json names. */
function layoutFor(name: RealModelName, vocabSize: number): TokenizerLayout {
  switch (name) {
    case 'smollm2-135m':
    case 'smollm2-360m':
    case 'smollm2-1.7b-instruct': {
      const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content, id) => ({ id, content }));
      return {
        specials,
        bos: '<|im_start|>',
        eos: '<|im_end|>',
        pad: '<|endoftext|>',
        // Each config.json's eos_token_id: <|endoftext|> for the base model, <|im_end|> for Instruct.
        generationEos: name === 'smollm2-1.7b-instruct' ? 2 : 0,
        addBos: false,
        chatTemplate: TINY_CHAT_TEMPLATE,
      };
    }
    case 'qwen2.5-0.5b':
    case 'qwen2.5-0.5b-instruct':
    case 'qwen2.5-1.5b-instruct':
    case 'qwen3-0.6b':
    case 'qwen3-1.7b': {
      // Qwen: 151,643 regular tokens, then <|endoftext|>, <|im_start|>, <|im_end|> (vocab_size pads past them).
      const first = 151_643;
      const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content, i) => ({
        id: first + i,
        content,
      }));
      return {
        specials,
        bos: null,
        eos: '<|im_end|>',
        pad: '<|endoftext|>',
        generationEos: [first + 2, first],
        addBos: false,
        chatTemplate: TINY_CHAT_TEMPLATE,
      };
    }
    case 'llama-3.2-1b':
    case 'llama-3.2-1b-instruct':
    case 'llama-3.2-3b': {
      // Llama 3: 128,000 regular tokens, then 256 specials (most reserved).
      const named: Record<number, string> = {
        128000: '<|begin_of_text|>',
        128001: '<|end_of_text|>',
        128006: '<|start_header_id|>',
        128007: '<|end_header_id|>',
        128008: '<|eom_id|>',
        128009: '<|eot_id|>',
      };
      const specials: SpecialToken[] = [];
      for (let id = 128_000; id < vocabSize; id++)
        specials.push({ id, content: named[id] ?? `<|reserved_special_token_${id - 128_000}|>` });
      return {
        specials,
        bos: '<|begin_of_text|>',
        eos: '<|end_of_text|>',
        pad: '<|end_of_text|>',
        generationEos: [128_001, 128_008, 128_009],
        addBos: true,
        chatTemplate: null,
      };
    }
  }
}

/**
 * Synthetic byte-level BPE merges: the 256 byte characters, then strings over 52 letters grown one letter at a
 * time, breadth first (every merge joins an existing token and a letter, so each merge's parts exist before it).
 * Returns `count` merges.
 */
export function syntheticMerges(count: number): [string, string][] {
  const letters = [...'etaoinshrdlucmfwypvbgkqjxzETAOINSHRDLUCMFWYPVBGKQJXZ'];
  const merges: [string, string][] = [];
  const queue: string[] = [...letters];
  for (let head = 0; merges.length < count; head++) {
    const prefix = queue[head];
    for (const c of letters) {
      if (merges.length >= count) break;
      merges.push([prefix, c]);
      queue.push(prefix + c);
    }
  }
  return merges;
}

/** tokenizer.json with regular tokens at every id the specials leave free, below `regularEnd`. */
function tokenizerJson(layout: TokenizerLayout, regularCount: number): object {
  const taken = new Set(layout.specials.map((s) => s.id));
  const vocab: Record<string, number> = {};
  let id = 0;
  const add = (token: string) => {
    while (taken.has(id)) id++;
    vocab[token] = id++;
  };
  for (const s of layout.specials) vocab[s.content] = s.id;
  const bytes = bytesToUnicode();
  bytes.forEach(add);
  const merges = syntheticMerges(regularCount - bytes.length);
  for (const [a, b] of merges) add(a + b);
  const bos = layout.specials.find((s) => s.content === layout.bos);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: layout.specials.map((s) => specialAddedToken(s.id, s.content)),
    normalizer: null,
    pre_tokenizer: BYTE_LEVEL,
    post_processor:
      layout.addBos && bos
        ? {
            type: 'TemplateProcessing',
            single: [{ SpecialToken: { id: bos.content, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
            pair: [
              { SpecialToken: { id: bos.content, type_id: 0 } },
              { Sequence: { id: 'A', type_id: 0 } },
              { SpecialToken: { id: bos.content, type_id: 1 } },
              { Sequence: { id: 'B', type_id: 1 } },
            ],
            special_tokens: { [bos.content]: { id: bos.content, ids: [bos.id], tokens: [bos.content] } },
          }
        : BYTE_LEVEL,
    decoder: BYTE_LEVEL,
    model: byteLevelBpeModel(vocab, merges),
  };
}

const text = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

/** Options of one folder. */
export interface RealArchOptions {
  /** Decoder layers kept (default 2). */
  layers?: number;
  /** Weight dtype in model.safetensors (default BF16, as the real checkpoints ship). */
  dtype?: 'BF16' | 'F32';
  /** Seed of the random weights (default 1). */
  seed?: number;
  /** Standard deviation of the random matrices (default 0.3: logits spread, so greedy decoding has no ties). */
  std?: number;
  /**
   * config.json keys replaced after num_hidden_layers (narrower widths, say, for a test that needs the real
   * vocabulary and special ids but not the real size).
   */
  configOverrides?: Record<string, unknown>;
}

/**
 * Fills `out` with uniform values of standard deviation `std` around `center` from a 32-bit xorshift stream: the
 * folders hold hundreds of millions of weights, which Box-Muller normals (initParams) would take minutes to draw.
 */
function fillUniform(out: Float32Array, state: { s: number }, center: number, std: number): void {
  const half = std * Math.sqrt(3);
  let x = state.s;
  for (let i = 0; i < out.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = center + half * ((x >>> 0) / 2 ** 31 - 1);
  }
  state.s = x;
}

/** A folder and what it was built from. */
export interface RealArchFolder {
  files: TinyFolder;
  /** The model config the folder's config.json describes. */
  config: ModelConfig;
  /** The weights as the loader will read them (BF16-rounded when the dtype is BF16). */
  params: ParamArrays;
}

/**
 * The folder of one recorded architecture with `layers` decoder layers and random weights. The config.json is the
 * recorded file with num_hidden_layers changed (max_window_layers too, where it names more layers than remain).
 */
export function buildRealArchFolder(name: RealModelName, opts: RealArchOptions = {}): RealArchFolder {
  const layers = opts.layers ?? 2;
  const dtype = opts.dtype ?? 'BF16';
  const recorded = REAL_CONFIG_FILES[name] as Record<string, unknown>;
  const configJson: Record<string, unknown> = { ...recorded, num_hidden_layers: layers, ...opts.configOverrides };
  if (typeof recorded.max_window_layers === 'number') configJson.max_window_layers = layers;
  const { config } = configFromJson(parseLlamaConfigJson(configJson));
  const state = { s: (opts.seed ?? 1) * 2654435761 || 1 };
  const params: ParamArrays = {};
  const tensors = new Map<string, SafetensorsTensorInput>();
  for (const { name: tensor, shape } of paramShapes(config)) {
    const f32 = new Float32Array(shape.reduce((a, b) => a * b, 1));
    // Norm gains near 1 (not exactly, so their gradients are exercised); matrices and biases around 0.
    const gain = shape.length === 1 && tensor.endsWith('norm.weight');
    fillUniform(f32, state, gain ? 1 : 0, gain ? 0.1 : (opts.std ?? 0.3));
    const stored = dtype === 'BF16' ? bf16BitsToF32(f32ToBf16Bits(f32)) : f32;
    params[tensor] = stored;
    tensors.set(tensor, { dtype, shape, data: stored });
  }
  const layout = layoutFor(name, config.vocabSize);
  const firstSpecial = Math.min(...layout.specials.map((s) => s.id));
  // Regular tokens fill every id below the vocabulary the specials leave free (Qwen pads vocab_size past them).
  const regularCount = layout.specials[0].id === 0 ? config.vocabSize - layout.specials.length : firstSpecial;
  const tokenizerConfig: Record<string, unknown> = {
    add_bos_token: layout.addBos,
    add_eos_token: false,
    added_tokens_decoder: Object.fromEntries(
      layout.specials.map((s) => [String(s.id), { ...specialAddedToken(s.id, s.content), id: undefined }]),
    ),
    bos_token: layout.bos,
    clean_up_tokenization_spaces: false,
    eos_token: layout.eos,
    model_max_length: config.contextLength,
    pad_token: layout.pad,
    tokenizer_class: 'PreTrainedTokenizerFast',
  };
  if (layout.chatTemplate) tokenizerConfig.chat_template = layout.chatTemplate;
  const files: TinyFolder = {
    'config.json': text(configJson),
    'model.safetensors': writeSafetensors(tensors, {
      format: 'pt',
      made_by: 'npm run real-arch-folders (random weights)',
    }),
    'tokenizer.json': text(tokenizerJson(layout, regularCount)),
    'tokenizer_config.json': text(tokenizerConfig),
    'generation_config.json': text({
      bos_token_id: recorded.bos_token_id ?? null,
      eos_token_id: layout.generationEos,
      do_sample: false,
    }),
  };
  return { files, config, params };
}
