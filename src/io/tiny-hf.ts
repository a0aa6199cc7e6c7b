// The two tiny randomly initialized Hugging Face checkpoints shipped in public/models/ (tiny-llama: LlamaForCausalLM,
// untied head; tiny-qwen2: Qwen2ForCausalLM, tied, q/k/v biases), each with a real byte-level BPE tokenizer.json
// whose merges are learned here from a corpus the caller passes (the tasks' prompts and answers). Pure and
// deterministic: the same corpus and seeds give the same bytes. scripts/make-tiny-hf.ts writes them; a test checks
// the committed files match. Not a loader (hf-folder.ts) and not a trained model: the weights are random.

import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import { encodeCheckpoint, type ParamArrays } from './checkpoint';
import type { ModelConfig } from '../schema/model-config';
import type { FolderReader } from './hf-folder';
import type { AddedTokenJson } from './tokenizer';

/** GPT-2's byte-to-character map of byte-level BPE: printable bytes stand for themselves, the rest shift past 255. */
export function bytesToUnicode(): string[] {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let shifted = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable(b) ? b : 256 + shifted++);
  return out;
}

/** GPT-2's pre-tokenizer pattern, which the ByteLevel pre-tokenizer applies before BPE (use_regex: true). */
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * Learns up to `count` byte-level BPE merges from `texts`: words are split as the ByteLevel pre-tokenizer splits
 * them, written in GPT-2's byte characters, and the most frequent adjacent pair is merged until `count` merges are
 * made or no pair occurs twice. Ties go to the pair that sorts first, so the result is deterministic.
 */
export function learnByteLevelMerges(texts: readonly string[], count: number): [string, string][] {
  const byteChar = bytesToUnicode();
  const encoder = new TextEncoder();
  const freq = new Map<string, number>();
  for (const text of texts) {
    for (const word of text.match(GPT2_SPLIT) ?? []) {
      const mapped = Array.from(encoder.encode(word), (b) => byteChar[b]).join('');
      freq.set(mapped, (freq.get(mapped) ?? 0) + 1);
    }
  }
  const words = [...freq].map(([w, n]) => ({ symbols: [...w], n }));
  const merges: [string, string][] = [];
  while (merges.length < count) {
    const pairs = new Map<string, number>();
    for (const { symbols, n } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + n);
      }
    }
    let best: string | null = null;
    let bestN = 1;
    for (const [key, n] of pairs)
      if (n > bestN || (n === bestN && best !== null && key < best)) [best, bestN] = [key, n];
    if (best === null) break;
    const [a, b] = best.split(' ') as [string, string];
    merges.push([a, b]);
    for (const w of words) {
      const next: string[] = [];
      for (let i = 0; i < w.symbols.length; i++) {
        if (i + 1 < w.symbols.length && w.symbols[i] === a && w.symbols[i + 1] === b) {
          next.push(a + b);
          i++;
        } else next.push(w.symbols[i]);
      }
      w.symbols = next;
    }
  }
  return merges;
}

/** tokenizer.json's entry for a special token at a fixed id (matched whole, never normalized or stripped). */
export const specialAddedToken = (id: number, content: string): AddedTokenJson => ({
  id,
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: true,
});

/** The byte-level pre-tokenizer and decoder of GPT-2-style tokenizers (SmolLM2, Qwen, Llama 3). */
export const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };

/** tokenizer.json's `model` for a byte-level BPE with this vocabulary and merges (no unk, no byte fallback). */
export function byteLevelBpeModel(vocab: Record<string, number>, merges: readonly (readonly [string, string])[]) {
  return {
    type: 'BPE',
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
    vocab,
    merges: merges.map(([a, b]) => `${a} ${b}`),
  };
}

/**
 * A byte-level BPE tokenizer.json: the 256 byte characters, then one token per merge, with `specials` either first
 * (ids 0.., also in the model's vocabulary, as Llama's files have them) or after the merges (added tokens only, as
 * Qwen2's). Returns the JSON and the id of each special token.
 */
function byteLevelTokenizerJson(
  merges: [string, string][],
  specials: readonly string[],
  specialsFirst: boolean,
  extra: { normalizer: object | null; post_processor: (ids: Record<string, number>) => object },
) {
  const vocab: Record<string, number> = {};
  let next = 0;
  const add = (token: string) => {
    // Two merges can spell the same token ("a"+"bc", "ab"+"c"): it gets one id, so ids stay contiguous.
    if (!(token in vocab)) vocab[token] = next++;
  };
  if (specialsFirst) specials.forEach(add);
  bytesToUnicode().forEach(add);
  merges.forEach(([a, b]) => add(a + b));
  const modelSize = next;
  const specialId = (i: number) => (specialsFirst ? i : modelSize + i);
  const ids = Object.fromEntries(specials.map((s, i) => [s, specialId(i)]));
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((s, i) => specialAddedToken(specialId(i), s)),
    normalizer: extra.normalizer,
    pre_tokenizer: BYTE_LEVEL,
    post_processor: extra.post_processor(ids),
    decoder: BYTE_LEVEL,
    model: byteLevelBpeModel(vocab, merges),
  };
  return { json, ids, size: specialsFirst ? modelSize : modelSize + specials.length };
}

/** Qwen2's ChatML template, reduced to what the lab sends: user (and system/assistant) turns and the generation prompt. */
export const TINY_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** The files of one tiny folder: name -> contents (model.safetensors as bytes, the rest as JSON text). */
export type TinyFolder = Record<string, Uint8Array | string>;

/** A FolderReader over files held in memory (`onRead` sees every name asked for); a missing file is an error. */
export function folderReader(files: TinyFolder, onRead?: (name: string) => void): FolderReader {
  const get = async (name: string) => {
    onRead?.(name);
    const v = files[name];
    if (v === undefined) throw new Error(`${name}: no such file`);
    return v;
  };
  return {
    bytes: async (n) => {
      const v = await get(n);
      return typeof v === 'string' ? new TextEncoder().encode(v) : v;
    },
    text: async (n) => {
      const v = await get(n);
      return typeof v === 'string' ? v : new TextDecoder().decode(v);
    },
  };
}

const text = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

function randomParams(config: ModelConfig, seed: number): ParamArrays {
  // std 0.3 rather than Hugging Face's 0.02: logits then spread by about one nat, so greedy decoding is not a tie.
  const p = initParams(config, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** The context both tiny models are built for: enough for every task's longest prompt, a chat template and completion. */
export const TINY_CONTEXT = 256;

/**
 * Both tiny folders from a corpus: `tiny-llama` (specials <pad> <s> </s> first, BOS added by its TemplateProcessing
 * post-processor, untied lm_head) and `tiny-qwen2` (specials <|endoftext|> <|im_start|> <|im_end|> after the merges,
 * NFC normalizer, no BOS, eos <|im_end|>, a ChatML chat template, tied embeddings, q/k/v biases, vocab_size padded
 * past the tokenizer to a multiple of 16 as Qwen2's is).
 */
export function buildTinyHfFolders(
  corpus: readonly string[],
  merges = 300,
): { 'tiny-llama': TinyFolder; 'tiny-qwen2': TinyFolder } {
  const learned = learnByteLevelMerges([...corpus, 'user', 'assistant', 'system', '\n'], merges);
  const madeBy = { made_by: 'npm run tiny-models (random weights, for tests and demos)' };

  // Llama.
  const llamaTok = byteLevelTokenizerJson(learned, ['<pad>', '<s>', '</s>'], true, {
    normalizer: null,
    post_processor: (ids) => ({
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '<s>', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<s>', type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { '<s>': { id: '<s>', ids: [ids['<s>']], tokens: ['<s>'] } },
    }),
  });
  const L = llamaTok.ids;
  const llamaConfig: ModelConfig = {
    vocabSize: llamaTok.size,
    contextLength: TINY_CONTEXT,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    dModel: 16,
    dFF: 40,
    ropeTheta: 10_000,
    normEps: 1e-5,
    tiedEmbeddings: false,
  };
  const llamaCk = encodeCheckpoint({
    config: llamaConfig,
    params: randomParams(llamaConfig, 1),
    metadata: madeBy,
    special: { bosId: L['<s>'], eosId: L['</s>'], padId: L['<pad>'] },
  });
  const llama: TinyFolder = {
    'config.json': llamaCk.configJson,
    'model.safetensors': llamaCk.safetensors,
    'tokenizer.json': text(llamaTok.json),
    'tokenizer_config.json': text({
      add_bos_token: true,
      add_eos_token: false,
      added_tokens_decoder: Object.fromEntries(llamaTok.json.added_tokens.map(({ id, ...t }) => [String(id), t])),
      bos_token: '<s>',
      clean_up_tokenization_spaces: false,
      eos_token: '</s>',
      model_max_length: TINY_CONTEXT,
      pad_token: '<pad>',
      tokenizer_class: 'PreTrainedTokenizerFast',
    }),
    'generation_config.json': text({ bos_token_id: L['<s>'], eos_token_id: L['</s>'], pad_token_id: L['<pad>'] }),
  };

  // Qwen2.
  const qwenTok = byteLevelTokenizerJson(learned, ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], false, {
    normalizer: { type: 'NFC' },
    post_processor: () => BYTE_LEVEL,
  });
  const Q = qwenTok.ids;
  const qwenConfig: ModelConfig = {
    vocabSize: Math.ceil(qwenTok.size / 16) * 16,
    contextLength: TINY_CONTEXT,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    dModel: 24,
    dFF: 48,
    ropeTheta: 1_000_000,
    normEps: 1e-6,
    tiedEmbeddings: true,
    qkvBias: true,
  };
  const qwenCk = encodeCheckpoint({
    config: qwenConfig,
    params: randomParams(qwenConfig, 2),
    metadata: madeBy,
    special: { bosId: Q['<|endoftext|>'], eosId: Q['<|im_end|>'], padId: Q['<|endoftext|>'] },
  });
  const qwen: TinyFolder = {
    'config.json': qwenCk.configJson,
    'model.safetensors': qwenCk.safetensors,
    'tokenizer.json': text(qwenTok.json),
    'tokenizer_config.json': text({
      add_prefix_space: false,
      added_tokens_decoder: Object.fromEntries(qwenTok.json.added_tokens.map(({ id, ...t }) => [String(id), t])),
      additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
      bos_token: null,
      chat_template: TINY_CHAT_TEMPLATE,
      clean_up_tokenization_spaces: false,
      eos_token: '<|im_end|>',
      errors: 'replace',
      model_max_length: TINY_CONTEXT,
      pad_token: '<|endoftext|>',
      split_special_tokens: false,
      tokenizer_class: 'Qwen2Tokenizer',
      unk_token: null,
    }),
    'generation_config.json': text({
      bos_token_id: Q['<|endoftext|>'],
      eos_token_id: [Q['<|im_end|>'], Q['<|endoftext|>']],
      pad_token_id: Q['<|endoftext|>'],
      do_sample: false,
    }),
  };
  return { 'tiny-llama': llama, 'tiny-qwen2': qwen };
}
