// The policy a run starts from: a shipped warm-start checkpoint (public/checkpoints/<name>/), a Hugging Face model
// folder (public/models/tiny-qwen2/, a URL), or a fresh model of a preset, with its tokenizer (character or BPE). Reads files through an injected loader (fetch in the
// worker, the file system in tests), so it runs anywhere. Not the trainer and not the runs store.

import type { ParamArrays } from '../io/checkpoint';
import { MODEL_PRESETS, type ModelConfig } from '../schema/model-config';
import type { GenerationDefaults } from '../schema/generation-defaults';
import { loadHfFolder } from '../io/hf-folder';
import { loadCharTokenizer, type Tokenizer } from '../io/tokenizer';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import type { RLConfig } from '../schema/config';

import { checkpointDir } from '../schema/checkpoint-path';

export { CPU_MAX_PARAMETERS, cpuRefusal } from '../schema/cpu-limit';
export { checkpointDir, foreignCheckpointOrigin } from '../schema/checkpoint-path';

/** Reads a file of the site (paths relative to its root, e.g. "checkpoints/copy/config.json"). */
export interface AssetLoader {
  bytes(path: string): Promise<Uint8Array>;
  text(path: string): Promise<string>;
}

export interface StartPolicy {
  init: { config: ModelConfig; params: ParamArrays };
  tokenizer: Tokenizer;
  tokenizerJson: string;
  /** The folder's tokenizer_config.json (special tokens, chat template), or null (the character vocabulary). */
  tokenizerConfigJson: string | null;
  /** Where it came from, in words ("warm start checkpoints/copy", "fresh nano model, seed 0"). */
  source: string;
  /** The folder's generation_config.json sampling defaults (sampling_defaults 'model' uses them), or null. */
  generation: GenerationDefaults | null;
}

export const CHAR_TOKENIZER_PATH = 'tokenizers/char/tokenizer.json';

/** Loads the policy `config` starts from (its `checkpoint`, else a fresh `model` preset seeded by `seed`). */
export async function loadStartPolicy(config: RLConfig, assets: AssetLoader): Promise<StartPolicy> {
  if (config.checkpoint !== null) {
    const dir = checkpointDir(config.checkpoint);
    const read = {
      bytes: (name: string) => assets.bytes(`${dir}${name}`),
      text: (name: string) => assets.text(`${dir}${name}`),
    };
    let folder;
    try {
      // A folder without tokenizer.json is one of the lab's older checkpoints: the character vocabulary.
      folder = await loadHfFolder(read, () => assets.text(CHAR_TOKENIZER_PATH));
    } catch (e) {
      if (e instanceof Error) e.message = `checkpoint "${config.checkpoint}" (${dir}): ${e.message}`;
      throw e;
    }
    const { ck, tokenizer, tokenizerJson, tokenizerConfigJson, generation } = folder;
    return {
      generation,
      init: { config: ck.config, params: ck.params },
      tokenizer,
      tokenizerJson,
      tokenizerConfigJson,
      source: `warm start ${dir}`,
    };
  }
  const modelConfig = MODEL_PRESETS[config.model];
  const init = initParams(modelConfig, new Rng(config.seed), { std: 0.02 });
  const params: ParamArrays = Object.fromEntries(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v.data)]));
  const tokenizerJson = await assets.text(CHAR_TOKENIZER_PATH);
  return {
    init: { config: modelConfig, params },
    tokenizer: loadCharTokenizer(tokenizerJson),
    tokenizerJson,
    tokenizerConfigJson: null,
    source: `fresh ${config.model} model, seed ${config.seed}`,
    generation: null,
  };
}

/** The tokenizer files of the model `config` trains, as a run reads them (loadStartPolicy), without its weights. */
export interface StartTokenizerFiles {
  tokenizerJson: string;
  /** tokenizer_config.json (special tokens, chat template), or null where the folder has none. */
  tokenizerConfigJson: string | null;
}

/**
 * The tokenizer files of the policy `config` starts from: its checkpoint folder's tokenizer.json (the character
 * vocabulary for a folder without one, as loadHfFolder's fallback) and tokenizer_config.json where the folder has
 * one; the character vocabulary for a fresh model. For counting prompts in the model's tokens (the verl export's
 * data.max_prompt_length) in the CLI and, through the worker, on the page.
 */
export async function loadStartTokenizerFiles(config: RLConfig, assets: AssetLoader): Promise<StartTokenizerFiles> {
  const char = () => assets.text(CHAR_TOKENIZER_PATH);
  if (config.checkpoint === null) return { tokenizerJson: await char(), tokenizerConfigJson: null };
  const dir = checkpointDir(config.checkpoint);
  const optional = (name: string) => assets.text(`${dir}${name}`).catch(() => null);
  return {
    tokenizerJson: (await optional('tokenizer.json')) ?? (await char()),
    tokenizerConfigJson: await optional('tokenizer_config.json'),
  };
}

/**
 * A JSON object file of the folder a run started from, for its export; null for a fresh model, a folder without it,
 * or one that cannot be read now. A URL checkpoint (a scheme of two or more letters, so not a drive letter) is not
 * fetched again: an export contacts no origin by itself.
 */
async function readSourceJson(checkpoint: string | null, assets: AssetLoader, file: string): Promise<string | null> {
  if (checkpoint === null || /^[A-Za-z][A-Za-z0-9+.-]+:/.test(checkpoint)) return null;
  try {
    const text = await assets.text(`${checkpointDir(checkpoint)}${file}`);
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The generation_config.json of the folder a run started from (sampling defaults, end-of-sequence ids), for its
 * export; null when there is none to read (readSourceJson): the export then writes the ids config.json names.
 */
export function readSourceGenerationConfig(checkpoint: string | null, assets: AssetLoader): Promise<string | null> {
  return readSourceJson(checkpoint, assets, 'generation_config.json');
}

/**
 * The config.json of the folder a run started from, for its export: the exported config.json keeps that file's own
 * eos_token_id, as save_pretrained does (the run's checkpoint records every end-of-sequence id the tokenizer stops
 * on, generation_config.json's list included). Null when there is none to read (readSourceJson).
 */
export function readSourceModelConfig(checkpoint: string | null, assets: AssetLoader): Promise<string | null> {
  return readSourceJson(checkpoint, assets, 'config.json');
}
