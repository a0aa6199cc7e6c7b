// Tokenizers behind one small interface: the lab's character-level vocabulary (read from a Hugging Face
// tokenizer.json by a tiny pure-TS reader, used on hot paths and in tests) and any pretrained tokenizer.json
// (loaded lazily through Hugging Face's JS tokenizers, never at page startup).
// This file does not fetch anything: callers pass the parsed (or raw) JSON in. It never adds special tokens
// on encode; callers prepend `bosId` (when `prependsBos`) and append `eosId` themselves.

import { endOfSequenceIds, MAX_EOS_IDS } from './end-of-sequence';

/** A tokenizer as the model, the trainer and the inspector see it. */
export interface Tokenizer {
  /** Which implementation this is ('char': the pure-TS reader; 'pretrained': Hugging Face's JS tokenizers). */
  readonly kind: 'char' | 'pretrained';
  /**
   * Number of token ids the tokenizer can produce (ids are 0..vocabSize-1). A model's embedding table may be
   * larger (padded for the GPU); ids at or above vocabSize decode as the unknown token.
   */
  readonly vocabSize: number;
  /** Id that starts a sequence. */
  readonly bosId: number;
  /**
   * Whether a prompt starts with `bosId`: true for the character vocabulary and for tokenizers whose own
   * post-processor adds it (Llama); false for those that add none (Qwen2, whose bos_token is null).
   */
  readonly prependsBos: boolean;
  /**
   * The prompt text a chat model is given for one user message: tokenizer_config.json's `chat_template` rendered
   * with that message and `add_generation_prompt`, as transformers' `apply_chat_template(..., tokenize=False)`
   * does. Null when the tokenizer has no chat template.
   */
  readonly applyChatTemplate: ((userText: string) => string) | null;
  /** Id that ends a completion; sampling stops on it. */
  readonly eosId: number;
  /**
   * Every id that ends a completion when the model has several (generation_config.json's or config.json's
   * eos_token_id list, with `eosId` first); sampling stops on any of them. Absent: `eosId` alone.
   */
  readonly eosIds?: readonly number[];
  /** Id used to fill ragged batches (masked out of every loss). */
  readonly padId: number;
  /** Id that unknown characters map to, or null when the vocabulary has no unknown token. */
  readonly unkId: number | null;
  /** Ids of the special (added) tokens, e.g. pad, bos, eos, unk. */
  readonly specialIds: ReadonlySet<number>;
  /** Text to ids. Never adds bos/eos. Literal special-token text (e.g. "<eos>") maps to that token, as in HF. */
  encode(text: string): number[];
  /** Ids to text. Special tokens are rendered as their text (e.g. "<eos>") unless `skipSpecialTokens`. */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
  /** The vocabulary string of one id (raw: e.g. "Ġthe" for byte-level BPE); the unknown token's text when out of range. */
  tokenString(id: number): string;
}

/** Options for {@link Tokenizer.decode}. */
export interface DecodeOptions {
  /** Drop special tokens (pad, bos, eos, unk, ...) from the output. Default false. */
  skipSpecialTokens?: boolean;
}

/** One entry of `added_tokens` in a Hugging Face tokenizer.json. */
export interface AddedTokenJson {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** The shape of the lab's character-level tokenizer.json (a Hugging Face tokenizers file, BPE with no merges). */
export interface CharTokenizerJson {
  version: '1.0';
  truncation: null;
  padding: null;
  added_tokens: AddedTokenJson[];
  normalizer: null;
  pre_tokenizer: null;
  post_processor: null;
  decoder: { type: 'Fuse' };
  model: {
    type: 'BPE';
    dropout: null;
    unk_token: string;
    continuing_subword_prefix: null;
    end_of_word_suffix: null;
    fuse_unk: false;
    byte_fallback: false;
    ignore_merges: false;
    vocab: Record<string, number>;
    merges: [];
  };
}

/** Special tokens of the character vocabulary, in id order: `<pad>`=0, `<bos>`=1, `<eos>`=2, `<unk>`=3. */
export const CHAR_SPECIAL_TOKENS = ['<pad>', '<bos>', '<eos>', '<unk>'] as const;

/** First and last code point of the character vocabulary (printable ASCII), ids 4..98. */
export const CHAR_FIRST_CODE = 32;
export const CHAR_LAST_CODE = 126;

/**
 * Builds the lab's character-level tokenizer.json: specials `<pad>` `<bos>` `<eos>` `<unk>` (ids 0-3), then
 * printable ASCII 32..126 (ids 4-98). It is a BPE model with an empty merge list, no normalizer and no
 * pre-tokenizer, so every character is its own token in the Rust `tokenizers` library and in tokenizers.js alike;
 * the `Fuse` decoder concatenates tokens without separators. `public/tokenizers/char/tokenizer.json` is this
 * object serialized by `scripts/make-char-tokenizer.ts`.
 */
export function buildCharTokenizerJson(): CharTokenizerJson {
  const vocab: Record<string, number> = {};
  const added: AddedTokenJson[] = [];
  CHAR_SPECIAL_TOKENS.forEach((content, id) => {
    vocab[content] = id;
    added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  });
  for (let c = CHAR_FIRST_CODE; c <= CHAR_LAST_CODE; c++) {
    vocab[String.fromCharCode(c)] = CHAR_SPECIAL_TOKENS.length + c - CHAR_FIRST_CODE;
  }
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
}

/** Thrown when a tokenizer.json (or tokenizer_config.json) cannot be read by the chosen implementation. */
export class TokenizerError extends Error {
  override name = 'TokenizerError';
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseJsonInput(input: string | object, what: string): JsonObject {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw new TokenizerError(`${what} is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (!isObject(value)) throw new TokenizerError(`${what} must be a JSON object`);
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// (a) The pure-TS character tokenizer.

/**
 * Reads a character-level tokenizer.json (the shape {@link buildCharTokenizerJson} writes) into a tiny pure-TS
 * tokenizer. It reproduces exactly what Hugging Face's tokenizers do with such a file: literal special-token
 * text is matched first (leftmost, longest), every other code point is looked up in the vocabulary, unknown
 * ones become `<unk>`. Files it cannot reproduce exactly (merges, normalizers, pre-tokenizers, post-processors,
 * multi-character vocabulary entries, stripping added tokens) are rejected with a TokenizerError naming the
 * field; load those with {@link loadPretrainedTokenizer}.
 */
export function loadCharTokenizer(json: string | object): Tokenizer {
  const tj = parseJsonInput(json, 'tokenizer.json');
  const reject = (why: string): never => {
    throw new TokenizerError(
      `loadCharTokenizer reads character-level tokenizer.json files only (BPE without merges, no normalizer, ` +
        `pre-tokenizer or post-processor, Fuse decoder): ${why}. Use loadPretrainedTokenizer for this file.`,
    );
  };
  const model = tj.model;
  if (!isObject(model)) return reject('"model" is missing');
  if (model.type !== 'BPE') reject(`model.type is ${JSON.stringify(model.type)}, expected "BPE"`);
  if (!Array.isArray(model.merges) || model.merges.length !== 0) reject('model.merges is not an empty list');
  if (model.byte_fallback === true) reject('model.byte_fallback is true');
  if (model.fuse_unk === true) reject('model.fuse_unk is true');
  if (model.continuing_subword_prefix != null || model.end_of_word_suffix != null) {
    reject('model has a subword prefix/suffix');
  }
  for (const field of ['normalizer', 'pre_tokenizer', 'post_processor'] as const) {
    if (tj[field] != null)
      reject(`"${field}" is ${JSON.stringify((tj[field] as JsonObject).type ?? tj[field])}, expected null`);
  }
  if (!isObject(tj.decoder) || tj.decoder.type !== 'Fuse') reject('"decoder" is not {"type":"Fuse"}');
  if (!isObject(model.vocab)) return reject('model.vocab is not an object');

  // id -> string; the added tokens override/extend the model vocabulary, as in HF.
  const byId: string[] = [];
  const idOf = new Map<string, number>();
  for (const [tok, id] of Object.entries(model.vocab)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
      reject(`vocab entry ${JSON.stringify(tok)} has id ${String(id)}`);
    byId[id as number] = tok;
    idOf.set(tok, id as number);
  }
  const addedContents: string[] = [];
  const specialIds = new Set<number>();
  const addedList = Array.isArray(tj.added_tokens) ? tj.added_tokens : [];
  for (const a of addedList) {
    if (!isObject(a) || typeof a.content !== 'string' || typeof a.id !== 'number') {
      return reject('an added_tokens entry lacks "id"/"content"');
    }
    if (a.lstrip === true || a.rstrip === true || a.single_word === true) {
      reject(`added token ${JSON.stringify(a.content)} uses lstrip/rstrip/single_word`);
    }
    byId[a.id] = a.content;
    idOf.set(a.content, a.id);
    addedContents.push(a.content);
    if (a.special === true) specialIds.add(a.id);
  }
  for (const [tok, id] of idOf) {
    if (!addedContents.includes(tok) && [...tok].length !== 1) {
      reject(`vocab entry ${JSON.stringify(tok)} (id ${id}) is longer than one character`);
    }
  }
  for (let i = 0; i < byId.length; i++) if (byId[i] === undefined) reject(`ids are not contiguous: id ${i} is unused`);

  const unkTok = typeof model.unk_token === 'string' ? model.unk_token : null;
  const unkId = unkTok !== null ? (idOf.get(unkTok) ?? null) : null;
  const need = (name: string): number => {
    const id = idOf.get(name);
    if (id === undefined) return reject(`it has no ${name} token`);
    return id;
  };
  const bosId = need('<bos>');
  const eosId = need('<eos>');
  const padId = need('<pad>');
  const unkText = unkTok ?? '';

  // Added tokens sorted longest first so the first match at a position is the longest (HF: leftmost-longest).
  const added = [...addedContents].sort((x, y) => y.length - x.length);
  const firstChars = new Set(added.map((s) => s[0]));

  function encodeSection(text: string, out: number[]): void {
    for (const ch of text) {
      const id = idOf.get(ch);
      if (id !== undefined) out.push(id);
      else if (unkId !== null) out.push(unkId);
      // No unknown token: HF drops the character; so do we.
    }
  }

  return {
    kind: 'char',
    vocabSize: byId.length,
    bosId,
    prependsBos: true,
    applyChatTemplate: null,
    eosId,
    padId,
    unkId,
    specialIds,
    encode(text: string): number[] {
      const out: number[] = [];
      let start = 0;
      for (let i = 0; i < text.length; ) {
        let match: string | undefined;
        if (firstChars.has(text[i])) match = added.find((s) => text.startsWith(s, i));
        if (match === undefined) {
          i++;
          continue;
        }
        if (i > start) encodeSection(text.slice(start, i), out);
        out.push(idOf.get(match)!);
        i += match.length;
        start = i;
      }
      if (start < text.length) encodeSection(text.slice(start), out);
      return out;
    },
    decode(ids: ArrayLike<number>, options?: DecodeOptions): string {
      const skip = options?.skipSpecialTokens === true;
      let s = '';
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        if (skip && specialIds.has(id)) continue;
        const t = byId[id];
        if (t === undefined) {
          if (!Number.isInteger(id)) throw new TokenizerError(`decode: id ${id} is not an integer`);
          if (skip && unkId !== null && specialIds.has(unkId)) continue;
          s += unkText;
        } else {
          s += t;
        }
      }
      return s;
    },
    tokenString(id: number): string {
      return byId[id] ?? unkText;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// (b) Any tokenizer.json, through Hugging Face's JS tokenizers (loaded on first use).

/** Which library {@link loadPretrainedTokenizer} goes through. */
export type PretrainedTokenizerBackend = 'tokenizers' | 'transformers';

/** Options for {@link loadPretrainedTokenizer}. */
export interface PretrainedTokenizerOptions {
  /**
   * 'tokenizers' (default): `@huggingface/tokenizers`, the pure-JS tokenizer library transformers.js 4 itself
   * uses (~36 KB chunk in the page build, ~10 ms import in Node). 'transformers': `@huggingface/transformers`'
   * `PreTrainedTokenizer` (same core underneath; ~580 KB chunk plus a 27 MB ONNX Runtime wasm in the build,
   * ~130 ms import in Node). Both give identical ids.
   */
  backend?: PretrainedTokenizerBackend;
  /**
   * End-of-sequence id to use when tokenizer_config.json names no `eos_token` (a Hugging Face folder's
   * generation_config.json or config.json `eos_token_id`); conventional names are tried only after it.
   */
  eosId?: number;
  /**
   * Every end-of-sequence id of the model (generation_config.json's or config.json's eos_token_id list): each
   * must be in the vocabulary; together with the tokenizer's own end of sequence they become `eosIds`.
   */
  eosIds?: readonly number[];
}

/** The part of a Hugging Face tokenizer object both backends expose that this wrapper uses. */
interface HfCoreTokenizer {
  encode(text: string, ids: { add_special_tokens: boolean }): number[];
  decode(ids: number[], options: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean }): string;
  token_to_id(token: string): number | undefined;
  id_to_token(id: number): string | undefined;
  vocabSize: number;
  unkToken: string | null;
  specialIds: number[];
}

function tokenFromConfig(config: JsonObject, key: string): string | null {
  const v = config[key];
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') return v.content; // AddedToken form {"__type":"AddedToken",...}
  return null;
}

// Conventional names, tried in order when tokenizer_config.json does not say.
const BOS_NAMES = ['<bos>', '<s>', '<|begin_of_text|>', '<|startoftext|>', '<|endoftext|>'];
const EOS_NAMES = ['<eos>', '</s>', '<|end_of_text|>', '<|endoftext|>', '<|im_end|>', '<|eot_id|>'];
const PAD_NAMES = ['<pad>', '<|pad|>', '[PAD]'];

/**
 * Loads ANY Hugging Face tokenizer.json (BPE, byte-level BPE, Unigram, WordPiece, ...) through Hugging Face's JS
 * tokenizers, imported dynamically on first call so the page never loads them at startup. Nothing is fetched:
 * both JSON files are passed in (objects or strings), and for the transformers backend `env.allowRemoteModels` is
 * set to false. Special-token ids come from `tokenizer_config.json` (`bos_token`, `eos_token`, `pad_token`) when
 * given, else from conventional names in the file (`<bos>`, `<s>`, `<|endoftext|>`, ...); pad falls back to eos
 * and bos to eos, as Hugging Face does. Decoding never applies `clean_up_tokenization_spaces` unless the config
 * asks for it (tokenizers.js would default it to true, which breaks round trips such as "a ." -> "a.").
 */
export async function loadPretrainedTokenizer(
  json: string | object,
  configJson?: string | object,
  options: PretrainedTokenizerOptions = {},
): Promise<Tokenizer> {
  const tj = parseJsonInput(json, 'tokenizer.json');
  const config = configJson === undefined ? {} : parseJsonInput(configJson, 'tokenizer_config.json');
  validateAgainstVocabulary(tj);
  const cleanUp = config.clean_up_tokenization_spaces === true;
  const backend = options.backend ?? 'tokenizers';
  let core: HfCoreTokenizer;
  try {
    core = backend === 'transformers' ? await viaTransformers(tj, config) : await viaTokenizers(tj, config);
  } catch (e) {
    if (e instanceof TokenizerError) throw e;
    throw new TokenizerError(`Hugging Face ${backend} could not load this tokenizer.json: ${(e as Error).message}`);
  }

  const resolve = (key: string, names: readonly string[]): number | null => {
    const fromConfig = tokenFromConfig(config, key);
    if (fromConfig !== null) {
      const id = core.token_to_id(fromConfig);
      if (id === undefined)
        throw new TokenizerError(`tokenizer_config.json ${key} ${JSON.stringify(fromConfig)} is not in the vocabulary`);
      return id;
    }
    for (const n of names) {
      const id = core.token_to_id(n);
      if (id !== undefined) return id;
    }
    return null;
  };
  const givenEos = tokenFromConfig(config, 'eos_token') === null && options.eosId !== undefined ? options.eosId : null;
  if (givenEos !== null && core.id_to_token(givenEos) === undefined) {
    throw new TokenizerError(
      `end-of-sequence id ${givenEos} (generation_config.json or config.json eos_token_id) is not in the vocabulary`,
    );
  }
  const eosId = givenEos ?? resolve('eos_token', EOS_NAMES);
  if (eosId === null) {
    throw new TokenizerError('cannot tell which token is end-of-sequence: pass tokenizer_config.json (eos_token)');
  }
  for (const id of options.eosIds ?? []) {
    if (core.id_to_token(id) === undefined)
      throw new TokenizerError(
        `end-of-sequence id ${id} (generation_config.json or config.json eos_token_id) is not in the vocabulary`,
      );
  }
  const allEos = endOfSequenceIds({ eosId, eosIds: options.eosIds });
  if (allEos.length > MAX_EOS_IDS)
    throw new TokenizerError(
      `eos_token_id: ${allEos.length} end-of-sequence ids; at most ${MAX_EOS_IDS} are supported`,
    );
  const bosId = resolve('bos_token', BOS_NAMES) ?? eosId;
  const padId = resolve('pad_token', PAD_NAMES) ?? eosId;
  const configUnk = tokenFromConfig(config, 'unk_token');
  if (configUnk !== null && core.token_to_id(configUnk) === undefined)
    throw new TokenizerError(`tokenizer_config.json unk_token ${JSON.stringify(configUnk)} is not in the vocabulary`);
  const unkTok = configUnk ?? core.unkToken;
  const unkId = unkTok === null ? null : (core.token_to_id(unkTok) ?? null);
  const unkText = unkTok ?? '';
  const specialIds = new Set(core.specialIds);
  // What Hugging Face does with add_special_tokens=True: the tokenizer's post-processor decides whether BOS leads.
  const probe = core.encode('a', { add_special_tokens: true });
  const prependsBos =
    config.bos_token !== null &&
    probe.length > core.encode('a', { add_special_tokens: false }).length &&
    probe[0] === bosId;
  const applyChatTemplate =
    typeof config.chat_template === 'string' ? await chatTemplateRenderer(config.chat_template, config) : null;

  return {
    kind: 'pretrained',
    vocabSize: core.vocabSize,
    bosId,
    prependsBos,
    applyChatTemplate,
    eosId,
    ...(allEos.length > 1 ? { eosIds: allEos } : {}),
    padId,
    unkId,
    specialIds,
    encode(text: string): number[] {
      return text.length === 0 ? [] : core.encode(text, { add_special_tokens: false });
    },
    decode(ids: ArrayLike<number>, opts?: DecodeOptions): string {
      if (ids.length === 0) return ''; // both libraries throw on an empty list
      return core.decode(Array.from(ids), {
        skip_special_tokens: opts?.skipSpecialTokens === true,
        clean_up_tokenization_spaces: cleanUp,
      });
    },
    tokenString(id: number): string {
      return core.id_to_token(id) ?? unkText;
    },
  };
}

/**
 * The model's vocabulary (token -> id) as Hugging Face tokenizers reads it: an object for BPE, WordPiece and
 * WordLevel, a list of [token, score] for Unigram (the id is the place). Null for a model it does not know.
 */
function modelVocabulary(model: JsonObject): Vocabulary | null {
  if (Array.isArray(model.vocab)) {
    const byToken = new Map<string, number>();
    model.vocab.forEach((entry, id) => {
      if (Array.isArray(entry) && typeof entry[0] === 'string' && !byToken.has(entry[0])) byToken.set(entry[0], id);
    });
    return { size: byToken.size, get: (t) => byToken.get(t), has: (t) => byToken.has(t) };
  }
  const vocab = model.vocab;
  if (!isObject(vocab)) return null;
  // The parsed object itself is the table (a copy into a Map costs as much again on a 128k vocabulary).
  let size = 0;
  for (const token in vocab) {
    const id = vocab[token];
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
      throw new TokenizerError(
        `tokenizer.json model.vocab ${JSON.stringify(token)} has id ${JSON.stringify(id)}, not a token id`,
      );
    size++;
  }
  const has = (t: string) => Object.hasOwn(vocab, t);
  return { size, has, get: (t) => (has(t) ? (vocab[t] as number) : undefined) };
}

/** A model's vocabulary as the checks read it. */
interface Vocabulary {
  size: number;
  get(token: string): number | undefined;
  has(token: string): boolean;
}

/** A merge's two parts, as Hugging Face tokenizers splits it ("a b" on its one space, or ["a", "b"]), or null. */
function mergeParts(merge: unknown): [string, string] | null {
  if (typeof merge === 'string') {
    const parts = merge.split(' ');
    return parts.length === 2 ? [parts[0], parts[1]] : null;
  }
  if (Array.isArray(merge) && merge.length === 2 && typeof merge[0] === 'string' && typeof merge[1] === 'string')
    return [merge[0], merge[1]];
  return null;
}

/**
 * Refuses a tokenizer.json that Hugging Face tokenizers (the Rust library transformers uses) would refuse or read
 * otherwise than the JS tokenizers would, naming the first bad entry: a BPE merge that is not two parts, or whose
 * parts or result are not in the vocabulary ("Token `co` out of vocabulary" there; the JS library drops such a
 * merge and encodes other text than the model was trained on); an added token whose id is not the one tokenizers
 * gives it (its vocabulary id when it is in the vocabulary, else the next after the vocabulary and the added tokens
 * before it: the JS library takes the file's id); a post-processor special token whose ids are not its tokens'.
 */
export function validateAgainstVocabulary(tj: JsonObject): void {
  const model = tj.model;
  if (!isObject(model)) return; // the library names a missing model itself
  const vocab = modelVocabulary(model);
  if (vocab === null) return;
  const bad = (what: string) =>
    new TokenizerError(
      `tokenizer.json ${what}; Hugging Face tokenizers refuses or reads this file otherwise, so it is not used`,
    );

  if (model.type === 'BPE' && Array.isArray(model.merges)) {
    const prefix = typeof model.continuing_subword_prefix === 'string' ? model.continuing_subword_prefix : '';
    const merges: unknown[] = model.merges;
    const text = typeof merges[0] === 'string';
    merges.forEach((merge, i) => {
      const shown = () => `model.merges[${i}] (${JSON.stringify(merge)})`;
      if ((typeof merge === 'string') !== text) throw bad('model.merges mixes "a b" strings and ["a", "b"] pairs');
      const parts = mergeParts(merge);
      if (parts === null) throw bad(`${shown()} is not two tokens`);
      const [a, b] = parts;
      const joined = a + (prefix && b.startsWith(prefix) ? b.slice(prefix.length) : b);
      for (const token of [a, b, joined])
        if (!vocab.has(token)) throw bad(`${shown()}: the token ${JSON.stringify(token)} is not in model.vocab`);
    });
  }

  if (Array.isArray(tj.added_tokens)) {
    const vocabSize = vocab.size;
    const added = new Map<string, number>();
    let top: number | null = null;
    tj.added_tokens.forEach((entry, i) => {
      if (!isObject(entry) || typeof entry.content !== 'string' || typeof entry.id !== 'number')
        throw bad(`added_tokens[${i}] has no "content" text and "id" number`);
      const content = entry.content;
      // AddedVocabulary::add_tokens: the vocabulary's id, an added token's earlier id, else the next free one.
      let id = vocab.get(content) ?? added.get(content);
      if (id === undefined) {
        id = top === null ? vocabSize : top >= vocabSize || vocabSize === 0 ? top + 1 : vocabSize;
        added.set(content, id);
        top = top === null ? id : Math.max(top, id);
      }
      if (entry.id !== id)
        throw bad(
          `added_tokens[${i}] (${JSON.stringify(content)}) has id ${entry.id}, but it is id ${id} ${vocab.has(content) ? 'in model.vocab' : `as tokenizers numbers added tokens (after the ${vocabSize} of model.vocab and the added tokens before it)`}`,
        );
    });
  }

  const post = tj.post_processor;
  const processors = isObject(post)
    ? post.type === 'Sequence' && Array.isArray(post.processors)
      ? post.processors.filter(isObject)
      : [post]
    : [];
  for (const p of processors) {
    if (p.type !== 'TemplateProcessing' || !isObject(p.special_tokens)) continue;
    for (const [name, special] of Object.entries(p.special_tokens)) {
      const ids: unknown = isObject(special) ? special.ids : undefined;
      const tokens: unknown = isObject(special) ? special.tokens : undefined;
      if (!Array.isArray(ids) || !Array.isArray(tokens))
        throw bad(`post_processor special token ${JSON.stringify(name)} has no "ids" and "tokens" lists`);
      if (ids.length !== tokens.length)
        throw bad(
          `post_processor special token ${JSON.stringify(name)} has ${ids.length} ids for ${tokens.length} tokens`,
        );
      tokens.forEach((token, k) => {
        const id = typeof token === 'string' ? (vocab.get(token) ?? addedId(tj, token)) : undefined;
        if (id !== ids[k])
          throw bad(
            `post_processor special token ${JSON.stringify(name)}: ${JSON.stringify(token)} is ${id === undefined ? 'not in the vocabulary' : `id ${id}`}, not ${JSON.stringify(ids[k])}`,
          );
      });
    }
  }
}

/** The id an added token has in the file (checked against tokenizers' numbering before this is asked). */
function addedId(tj: JsonObject, token: string): number | undefined {
  const list = Array.isArray(tj.added_tokens) ? tj.added_tokens : [];
  const entry = list.find((a) => isObject(a) && a.content === token) as JsonObject | undefined;
  return typeof entry?.id === 'number' ? entry.id : undefined;
}

// The special tokens a chat template may name, as transformers.js passes them (SPECIAL_TOKEN_ATTRIBUTES there).
const TEMPLATE_TOKENS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];

/**
 * What one render of a chat template may take: steps (every evaluation and every run of a block, so each loop
 * iteration counts even when its body is empty) and characters (every value made, and every block's output summed
 * over the render).
 */
export const CHAT_TEMPLATE_MAX_STEPS = 100_000;
export const CHAT_TEMPLATE_MAX_CHARS = 4 << 20;

/**
 * A renderer of a Jinja chat template for one user message, with the variables transformers.js'
 * `apply_chat_template` passes (messages, add_generation_prompt, tools, documents, the special tokens' text).
 * The Jinja engine is imported on first use, like the tokenizers. A render is bounded: at most
 * CHAT_TEMPLATE_MAX_STEPS steps, where a step is an evaluation or a run of a block (each loop iteration runs its
 * body's block, so `{% for %}{% for %}{% endfor %}{% endfor %}` counts every inner iteration; a `range` longer than
 * the bound is refused before it is made), no value over CHAT_TEMPLATE_MAX_CHARS characters, and no more than
 * CHAT_TEMPLATE_MAX_CHARS characters output by all its blocks together; past any of them it fails with a
 * TokenizerError naming chat_template.
 * The template is rendered once on load, so one that cannot render is refused there.
 */
async function chatTemplateRenderer(source: string, config: JsonObject): Promise<(userText: string) => string> {
  const { Template, Interpreter, Environment } = await import('@huggingface/jinja');
  let template: InstanceType<typeof Template>;
  try {
    template = new Template(source);
  } catch (e) {
    throw new TokenizerError(
      `tokenizer_config.json chat_template is not a template Jinja can read: ${(e as Error).message}`,
    );
  }
  const tokens: Record<string, string> = {};
  for (const key of TEMPLATE_TOKENS) {
    const t = tokenFromConfig(config, key);
    if (t) tokens[key] = t;
  }
  const tooBig = (what: string) =>
    new TokenizerError(
      `tokenizer_config.json chat_template ${what} (a render may take ${CHAT_TEMPLATE_MAX_STEPS.toLocaleString('en-US')} steps and ${CHAT_TEMPLATE_MAX_CHARS.toLocaleString('en-US')} characters): it cannot be used`,
    );
  /**
   * The interpreter of one render, counting its evaluations and block runs (loop iterations) as steps, measuring
   * every text value it makes, and summing the characters every block outputs.
   */
  class BoundedInterpreter extends Interpreter {
    private steps = 0;
    private chars = 0;
    private step() {
      if (++this.steps > CHAT_TEMPLATE_MAX_STEPS) throw tooBig('runs too long');
    }
    override evaluate(...args: Parameters<InstanceType<typeof Interpreter>['evaluate']>) {
      this.step();
      const value = super.evaluate(...args);
      const v = (value as { value?: unknown } | undefined)?.value;
      if (typeof v === 'string' && v.length > CHAT_TEMPLATE_MAX_CHARS) throw tooBig('makes too much text');
      return value;
    }
    constructor(env: InstanceType<typeof Environment>) {
      super(env);
      // evaluateBlock is private in the library's types (not at run time): every loop iteration, if, set block,
      // macro and call runs through it, so it is wrapped on the instance.
      type Block = (statements: unknown, environment: unknown) => { value: string };
      const self = this as unknown as { evaluateBlock: Block };
      const run = self.evaluateBlock.bind(this);
      self.evaluateBlock = (statements, environment) => {
        this.step();
        const out = run(statements, environment);
        this.chars += out.value.length;
        if (this.chars > CHAT_TEMPLATE_MAX_CHARS) throw tooBig('makes too much text');
        return out;
      };
    }
  }
  const range = (start: number, stop?: number, step = 1) => {
    const [from, to] = stop === undefined ? [0, start] : [start, stop];
    if (step === 0) throw new Error('range() step must not be zero');
    const length = Math.max(0, Math.ceil((to - from) / step));
    if (length > CHAT_TEMPLATE_MAX_STEPS) throw tooBig(`asks for range() of ${length.toLocaleString('en-US')} numbers`);
    return Array.from({ length }, (_, i) => from + i * step);
  };
  // The globals Template.render sets, then the render's variables; strftime_now is the library's own, reached
  // through a template of its own (it is not exported).
  const strftimeNow = (format: string) => new Template('{{ strftime_now(f) }}').render({ f: format });
  const globals = { false: false, true: true, none: null, False: false, True: true, None: null };
  const render = (userText: string): string => {
    const env = new Environment();
    for (const [k, v] of Object.entries(globals)) env.set(k, v);
    env.set('raise_exception', (message: string) => {
      throw new Error(message);
    });
    env.set('strftime_now', strftimeNow);
    env.set('range', range);
    const variables = {
      messages: [{ role: 'user', content: userText }],
      add_generation_prompt: true,
      tools: null,
      documents: null,
      ...tokens,
    };
    for (const [k, v] of Object.entries(variables)) env.set(k, v);
    try {
      const out = new BoundedInterpreter(env).run(template.parsed).value;
      if (typeof out !== 'string') throw new TokenizerError('tokenizer_config.json chat_template renders no text');
      return out;
    } catch (e) {
      if (e instanceof TokenizerError) throw e;
      throw new TokenizerError(`tokenizer_config.json chat_template cannot be rendered: ${(e as Error).message}`);
    }
  };
  render('hello');
  return render;
}

/**
 * The tokenizer's vocabSize: one more than its largest id, over the vocabulary and the added tokens (not their count,
 * which a vocabulary with gaps in its ids would make smaller than the ids it produces).
 */
function idsBelow(vocabIds: Iterable<number>, addedIds: Iterable<number>): number {
  let top = -1;
  for (const ids of [vocabIds, addedIds]) for (const id of ids) if (id > top) top = id;
  return top + 1;
}

async function viaTokenizers(tj: JsonObject, config: JsonObject): Promise<HfCoreTokenizer> {
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers');
  const t = new HfTokenizer(tj, config);
  const added = [...t.get_added_tokens_decoder().values()];
  return {
    encode: (text, o) => t.encode(text, o).ids,
    decode: (ids, o) => t.decode(ids, o),
    token_to_id: (tok) => t.token_to_id(tok),
    id_to_token: (id) => t.id_to_token(id),
    vocabSize: idsBelow(
      t.get_vocab(true).values(),
      added.map((a) => a.id),
    ),
    unkToken: t.model?.unk_token ?? null,
    specialIds: added.filter((a) => a.special).map((a) => a.id),
  };
}

async function viaTransformers(tj: JsonObject, config: JsonObject): Promise<HfCoreTokenizer> {
  const tf = await import('@huggingface/transformers');
  tf.env.allowRemoteModels = false; // nothing may come from a model hub; we pass the JSON in anyway
  const t = new tf.PreTrainedTokenizer(tj, config);
  const vocab = t.get_vocab();
  return {
    encode: (text, o) => t.encode(text, o),
    decode: (ids, o) => t.decode(ids, o),
    token_to_id: (tok) => vocab.get(tok),
    id_to_token: (id) => t._tokenizer.id_to_token(id),
    vocabSize: idsBelow(vocab.values(), t.all_special_ids),
    unkToken: t.unk_token ?? t._tokenizer.model?.unk_token ?? null,
    specialIds: [...t.all_special_ids],
  };
}
