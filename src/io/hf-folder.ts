// A Hugging Face causal-LM folder as the lab reads it: config.json, model.safetensors (or its shards listed in
// model.safetensors.index.json), tokenizer.json, tokenizer_config.json and generation_config.json, turned into a
// checkpoint and its tokenizer (the lab's character vocabulary when the file is one, any other tokenizer.json
// through Hugging Face's JS tokenizers). Files come through a reader the caller supplies (fetch, fs), so this runs
// anywhere; every problem names the file. Not the file system and not the run's start policy.

import { configFromJson, decodeCheckpoint, type Checkpoint, type CheckpointShard } from './checkpoint';
import { CheckpointError, OfflineFileError, parseLlamaConfigJson } from './hf-layout';
import { readSafetensorsHeader } from './safetensors';
import { endOfSequenceListProblem } from './end-of-sequence';
import { generationDefaults, type GenerationDefaults } from '../schema/generation-defaults';
import { loadCharTokenizer, loadPretrainedTokenizer, TokenizerError, type Tokenizer } from './tokenizer';

/** Reads the files of one folder by name ("config.json"); a missing file rejects. */
export interface FolderReader {
  bytes(name: string): Promise<Uint8Array>;
  text(name: string): Promise<string>;
}

export const SHARD_INDEX_FILE = 'model.safetensors.index.json';

/** A folder decoded: the checkpoint, its tokenizer, and the tokenizer files as read (saved with runs and checkpoints). */
export interface HfFolder {
  ck: Checkpoint;
  tokenizer: Tokenizer;
  tokenizerJson: string;
  /**
   * tokenizer_config.json as read, with `eos_token` filled in when the end of sequence came from
   * generation_config.json or config.json instead, so the tokenizer files saved with a run (which keep no
   * generation_config.json) reload with the same ids. Null for the character vocabulary without one.
   */
  tokenizerConfigJson: string | null;
  /** The safetensors files the weights came from (one, or the shards in index order). */
  weightFiles: string[];
  /** generation_config.json's sampling defaults (do_sample, temperature, top_p, top_k), or null without any. */
  generation: GenerationDefaults | null;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

async function optional<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch {
    return null;
  }
}

type JsonObject = Record<string, unknown>;

function parseObject(text: string, where: string): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError(`${where} is not valid JSON: ${errorText(e)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new CheckpointError(`${where} must be a JSON object`);
  return v as JsonObject;
}

/**
 * The shard files a model.safetensors.index.json names, in first-mention order, and which file each tensor is in.
 * Throws a CheckpointError naming the index when its weight_map is missing or holds anything but file names.
 */
export function parseShardIndex(
  text: string,
  where = SHARD_INDEX_FILE,
): { files: string[]; weightMap: Map<string, string> } {
  const index = parseObject(text, where);
  const map = index.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new CheckpointError(`${where}: "weight_map" must be an object of tensor name -> shard file`);
  const weightMap = new Map<string, string>();
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string' || file === '' || file.includes('/') || file.includes('\\')) {
      throw new CheckpointError(
        `${where}: weight_map["${name}"] is ${JSON.stringify(file)}, not a file name in this folder`,
      );
    }
    weightMap.set(name, file);
  }
  if (weightMap.size === 0) throw new CheckpointError(`${where}: weight_map is empty`);
  return { files: [...new Set(weightMap.values())], weightMap };
}

/** The first id of a config's eos_token_id (one id or a list), or undefined when it names none. */
function firstEosId(json: JsonObject | null): number | undefined {
  const v = json?.eos_token_id;
  const id = Array.isArray(v) ? v[0] : v;
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : undefined;
}

/**
 * Every id of a config's eos_token_id when it is a list, undefined otherwise; a list that is not ids or holds more
 * than MAX_EOS_IDS is refused, naming the file.
 */
function eosIdList(json: JsonObject | null, file: string): number[] | undefined {
  const v = json?.eos_token_id;
  if (!Array.isArray(v)) return undefined;
  const problem = endOfSequenceListProblem('eos_token_id', v);
  if (problem) throw new CheckpointError(`${file}: ${problem}`);
  return v as number[];
}

/**
 * The tokenizer of a tokenizer.json: the lab's pure-TS character tokenizer when the file is a character vocabulary
 * (fast, and what every shipped warm start uses), else Hugging Face's JS tokenizers with tokenizer_config.json.
 * `eosId` (from generation_config.json or config.json) is the end of sequence when tokenizer_config.json names none;
 * `eosIds` (their eos_token_id list) are the other ids that end a completion.
 */
export async function tokenizerFromFiles(
  tokenizerJson: string,
  tokenizerConfigJson: string | null,
  eosId?: number,
  eosIds?: readonly number[],
): Promise<Tokenizer> {
  try {
    return loadCharTokenizer(tokenizerJson);
  } catch (e) {
    if (!(e instanceof TokenizerError)) throw e;
  }
  return loadPretrainedTokenizer(tokenizerJson, tokenizerConfigJson ?? undefined, { eosId, eosIds });
}

/**
 * Reads a Hugging Face folder through `read`. The weights are model.safetensors, or when it cannot be read the
 * shards model.safetensors.index.json lists (each tensor must be in the shard the index names). `fallbackTokenizer`
 * supplies tokenizer.json for folders without one (the lab's older checkpoints, which assume the character
 * vocabulary). A file that cannot be read rethrows the reader's error (which names the path); a malformed one
 * throws CheckpointError, SafetensorsError or TokenizerError whose message starts with the file's name, for the
 * caller to prefix with the folder; a tokenizer with ids beyond the model's vocab_size is refused. config.json is
 * read and checked first: an architecture the engine does not run (Gemma, Phi, experts, sliding windows, other
 * RoPE scalings) is refused, naming what is missing, before any weight file is opened.
 */
export async function loadHfFolder(read: FolderReader, fallbackTokenizer?: () => Promise<string>): Promise<HfFolder> {
  // The architecture first: nothing large is read for a model the engine cannot run. (A folder without a
  // config.json goes on to the weights, so that an empty or wrong folder is named by its missing weights.)
  const earlyConfig = await optional(() => read.text('config.json'));
  if (earlyConfig !== null) configFromJson(parseLlamaConfigJson(parseObject(earlyConfig, 'config.json')));

  // Weights: one file, else the shards of the index.
  let weights: Uint8Array | CheckpointShard[];
  let weightFiles: string[];
  let weightMap: Map<string, string> | null = null;
  const single = await read.bytes('model.safetensors').catch((e: unknown) => e);
  if (single instanceof Uint8Array) {
    weights = single;
    weightFiles = ['model.safetensors'];
  } else {
    // Offline, the index could not come either: the message names the file and why, not a missing index.
    if (single instanceof OfflineFileError) throw single;
    const indexText = await optional(() => read.text(SHARD_INDEX_FILE));
    if (indexText === null) {
      if (single instanceof Error) {
        single.message += ` (nor is there a ${SHARD_INDEX_FILE} listing shards)`;
        throw single;
      }
      throw new CheckpointError(`model.safetensors: cannot read it (${String(single)})`);
    }
    const index = parseShardIndex(indexText);
    weightMap = index.weightMap;
    weightFiles = index.files;
    weights = [];
    for (const file of index.files) {
      try {
        weights.push({ file, bytes: await read.bytes(file) });
      } catch (e) {
        throw new CheckpointError(
          `${SHARD_INDEX_FILE} names the shard ${file}, which cannot be read (${errorText(e)})`,
        );
      }
    }
  }
  const configText = earlyConfig ?? (await read.text('config.json'));
  const rawConfig = parseObject(configText, 'config.json');
  // decodeCheckpoint names config.json, the shard, or the tensors in its messages already.
  const ck = decodeCheckpoint(weights, configText);
  if (weightMap) checkShardPlacement(weights as CheckpointShard[], weightMap, SHARD_INDEX_FILE);

  // Tokenizer.
  // Without a fallback, a missing tokenizer.json is read once more so that the reader's own error (its path) is thrown.
  let tokenizerJson = await optional(() => read.text('tokenizer.json'));
  if (tokenizerJson === null)
    tokenizerJson = fallbackTokenizer ? await fallbackTokenizer() : await read.text('tokenizer.json');
  // The two configs are optional: one that cannot be read counts as absent.
  let tokenizerConfigJson = await optional(() => read.text('tokenizer_config.json'));
  const generationText = await optional(() => read.text('generation_config.json'));
  const generation = generationText === null ? null : parseObject(generationText, 'generation_config.json');
  // The ids that end a completion: generation_config.json's list when it has one, else config.json's.
  const eosIds = eosIdList(generation, 'generation_config.json') ?? eosIdList(rawConfig, 'config.json');
  let tokenizer: Tokenizer;
  try {
    tokenizer = await tokenizerFromFiles(
      tokenizerJson,
      tokenizerConfigJson,
      firstEosId(generation) ?? firstEosId(rawConfig),
      eosIds,
    );
  } catch (e) {
    // Messages that start with tokenizer.json or tokenizer_config.json name their file already; others get it in front.
    if (e instanceof Error && !/^tokenizer(_config)?\.json\b/.test(e.message))
      e.message = `tokenizer.json: ${e.message}`;
    throw e;
  }
  if (tokenizer.kind === 'pretrained') {
    const tokenizerConfig =
      tokenizerConfigJson === null ? {} : parseObject(tokenizerConfigJson, 'tokenizer_config.json');
    if (tokenizerConfig.eos_token == null)
      tokenizerConfigJson = `${JSON.stringify({ ...tokenizerConfig, eos_token: tokenizer.tokenString(tokenizer.eosId) }, null, 2)}\n`;
  }
  const problems = unusableCheckpointProblems(ck, tokenizer);
  if (problems.length) throw new CheckpointError(problems.join('; '));
  return { ck, tokenizer, tokenizerJson, tokenizerConfigJson, weightFiles, generation: generationDefaults(generation) };
}

/** Every tensor the index places in a shard must be in that shard (a stale index is named, not guessed around). */
function checkShardPlacement(
  shards: readonly CheckpointShard[],
  weightMap: ReadonlyMap<string, string>,
  where: string,
): void {
  const names = new Map<string, Set<string>>();
  for (const { file, bytes } of shards) names.set(file, new Set(readSafetensorsHeader(bytes).entries.keys()));
  for (const [name, file] of weightMap) {
    if (!names.get(file)?.has(name))
      throw new CheckpointError(`${where}: says ${name} is in ${file}, but ${file} does not hold it`);
  }
}

/**
 * What makes a decoded checkpoint unusable for sampling or training, though its files are well formed: a
 * non-finite weight (named, with its index), or a tokenizer whose ids (its largest one, and its special tokens')
 * reach the model's vocab_size (they would index past the embedding table).
 */
export function unusableCheckpointProblems(ck: Checkpoint, tok: Tokenizer): string[] {
  const problems: string[] = [];
  for (const [name, data] of Object.entries(ck.params)) {
    const bad = data.findIndex((x) => !Number.isFinite(x));
    if (bad >= 0)
      problems.push(
        `model.safetensors: tensor ${name} holds ${data[bad]} at index ${bad} (the weights must be finite)`,
      );
  }
  // vocabSize is one more than the tokenizer's largest id (a count would miss a vocabulary with gaps in its ids).
  const size = ck.config.vocabSize;
  if (tok.vocabSize > size) {
    const top = tok.vocabSize - 1;
    const specials = (
      [
        ['end-of-sequence', tok.eosId],
        ['beginning-of-sequence', tok.bosId],
        ['padding', tok.padId],
      ] as const
    )
      .filter(([, id]) => id >= size)
      .map(([role, id]) => `the ${role} id ${id}`);
    problems.push(
      `tokenizer.json: the tokenizer's ids reach ${top} (token ${JSON.stringify(tok.tokenString(top))}) but the model's vocab_size is ${size} (every token id must be below vocab_size${specials.length ? `; ${[...new Set(specials)].join(', ')} ${specials.length > 1 ? 'are' : 'is'} not` : ''})`,
    );
  }
  return problems;
}
