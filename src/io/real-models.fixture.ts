// The architectures of real models, for tests that size or build things at real scale. The config.json files the
// models publish are recorded under fixtures/configs/ (sources.json says where each copy came from, how exact it is
// and where the parameter count is published) and read here through the lab's own config.json reader, so a fixture
// that stops loading is a failing test. The two hand-written configs below (SmolLM2-135M and Qwen2.5-0.5B without
// Qwen2's q/k/v biases) size the memory plan.

import { configFromJson, type SpecialIds } from './checkpoint';
import { parseLlamaConfigJson } from './hf-layout';
import { MODEL_PRESETS, type ModelConfig } from '../schema/model-config';
import llama321b from '../schema/fixtures/configs/llama-3.2-1b.json';
import llama321bInstruct from '../schema/fixtures/configs/llama-3.2-1b-instruct.json';
import llama323b from '../schema/fixtures/configs/llama-3.2-3b.json';
import qwen2505b from '../schema/fixtures/configs/qwen2.5-0.5b.json';
import qwen2505bInstruct from '../schema/fixtures/configs/qwen2.5-0.5b-instruct.json';
import qwen2515bInstruct from '../schema/fixtures/configs/qwen2.5-1.5b-instruct.json';
import qwen306b from '../schema/fixtures/configs/qwen3-0.6b.json';
import qwen317b from '../schema/fixtures/configs/qwen3-1.7b.json';
import qwen330bA3b from '../schema/fixtures/configs/qwen3-30b-a3b.json';
import smollm2135m from '../schema/fixtures/configs/smollm2-135m.json';
import smollm217bInstruct from '../schema/fixtures/configs/smollm2-1.7b-instruct.json';
import smollm2360m from '../schema/fixtures/configs/smollm2-360m.json';

/** The recorded config.json of each real model the lab runs, by file name (without .json). */
export const REAL_CONFIG_FILES = {
  'smollm2-135m': smollm2135m,
  'smollm2-360m': smollm2360m,
  'smollm2-1.7b-instruct': smollm217bInstruct,
  'qwen2.5-0.5b': qwen2505b,
  'qwen2.5-0.5b-instruct': qwen2505bInstruct,
  'qwen2.5-1.5b-instruct': qwen2515bInstruct,
  'qwen3-0.6b': qwen306b,
  'qwen3-1.7b': qwen317b,
  'llama-3.2-1b': llama321b,
  'llama-3.2-1b-instruct': llama321bInstruct,
  'llama-3.2-3b': llama323b,
} as const satisfies Record<string, object>;

export type RealModelName = keyof typeof REAL_CONFIG_FILES;

/** Recorded config.json files of architectures the lab refuses (for the refusal tests). */
export const UNSUPPORTED_CONFIG_FILES = { 'qwen3-30b-a3b': qwen330bA3b } as const;

/** A recorded config.json as the lab reads it: the model config and its special ids. */
export function realModelConfig(name: RealModelName): { config: ModelConfig; special: SpecialIds } {
  return configFromJson(parseLlamaConfigJson(REAL_CONFIG_FILES[name]));
}

/** SmolLM2-135M: hidden 576, 30 layers, 9 heads, 3 kv heads, intermediate 1536, vocabulary 49,152, tied. */
export const SMOLLM2_135M: ModelConfig = {
  ...MODEL_PRESETS.nano,
  vocabSize: 49_152,
  contextLength: 8192,
  nLayers: 30,
  nHeads: 9,
  nKvHeads: 3,
  dModel: 576,
  dFF: 1536,
  ropeTheta: 100_000,
  tiedEmbeddings: true,
};

/** Qwen2.5-0.5B: hidden 896, 24 layers, 14 heads, 2 kv heads, intermediate 4864, vocabulary 151,936, tied. */
export const QWEN25_05B: ModelConfig = {
  ...MODEL_PRESETS.nano,
  vocabSize: 151_936,
  contextLength: 32_768,
  nLayers: 24,
  nHeads: 14,
  nKvHeads: 2,
  dModel: 896,
  dFF: 4864,
  ropeTheta: 1_000_000,
  normEps: 1e-6,
  tiedEmbeddings: true,
};
