// Which files of a hub model a run needs, decided from its config.json (and its safetensors index), and config.json
// read as the engine reads a causal LM's: shared by the CLI's hub cache (src/cli/hub-cache.ts) and the engine
// worker's download manager (hub-manager.ts), so both fetch the same files and refuse the same architectures.

import { configFromJson } from '../io/checkpoint';
import { CheckpointError, parseLlamaConfigJson } from '../io/hf-layout';
import type { ModelConfig } from '../schema/model-config';
import { parseShardIndex, SHARD_INDEX_FILE } from '../io/hf-folder';
import { CLASSIFIER_FILES } from '../model/reward-classifier';
import { REWARD_MODEL_KIND } from '../rl/rewards/reward-model';
import type { FilePlan } from '../hub/snapshot';

/** The files of a causal LM: tokenizer files and generation_config when present, then its weights (one file or shards). */
export const CHECKPOINT_FILE_PLAN: FilePlan = {
  optional: ['generation_config.json', 'tokenizer.json', 'tokenizer_config.json', SHARD_INDEX_FILE],
  async required(read) {
    const index = await read(SHARD_INDEX_FILE);
    return index ? parseShardIndex(new TextDecoder().decode(index)).files : ['model.safetensors'];
  },
};

/** The files of a reward model: a lab reward model's weights, else a text classifier's files. */
export const REWARD_MODEL_FILE_PLAN: FilePlan = {
  optional: [],
  async required(read) {
    const config = JSON.parse(new TextDecoder().decode((await read('config.json')) ?? new Uint8Array()));
    return config?.rl_lab?.kind === REWARD_MODEL_KIND ? ['model.safetensors'] : [...CLASSIFIER_FILES];
  },
};

/** config.json as the engine reads a causal LM's: throws CheckpointError naming what the engine does not run. */
export function checkpointModelConfig(configText: string): ModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(configText);
  } catch (e) {
    throw new CheckpointError(`config.json is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new CheckpointError('config.json must be a JSON object');
  return configFromJson(parseLlamaConfigJson(json as Record<string, unknown>)).config;
}
