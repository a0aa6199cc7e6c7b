// The architectures of two real models, for tests that size things at real scale (the memory plan): SmolLM2-135M
// and Qwen2.5-0.5B as their config.json files state them (Qwen2's q/k/v biases aside). Configs only: no weights.

import { MODEL_PRESETS, type ModelConfig } from './config';

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
