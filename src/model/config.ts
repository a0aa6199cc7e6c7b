// The policy's architecture config: documented fields with ranges, validation with messages naming the field
// and the rule, presets from ~56k to ~17M parameters, parameter counts. Not the memory a run needs on a device
// (memory-plan.ts), not the training config (src/rl) and not the checkpoint's config.json (checkpoint-format.ts).

import type { ModelDims } from '../core/model-shapes';

/** The architecture of a Llama-style decoder (RMSNorm, RoPE, SwiGLU, grouped-query attention). */
export interface ModelConfig extends ModelDims {
  /** Longest sequence (prompt + completion) the model is trained and sampled at (HF max_position_embeddings). */
  contextLength: number;
}

interface FieldRule {
  doc: string;
  min: number;
  max: number;
  integer: boolean;
}

/** One line of documentation and the allowed range of every numeric field. */
export const MODEL_FIELDS: Record<Exclude<keyof ModelConfig, 'tiedEmbeddings' | 'qkvBias'>, FieldRule> = {
  vocabSize: { doc: 'V: number of token ids (the char tokenizer has 99)', min: 2, max: 262_144, integer: true },
  contextLength: { doc: 'longest prompt + completion, in tokens', min: 2, max: 8192, integer: true },
  nLayers: { doc: 'L: decoder layers', min: 1, max: 64, integer: true },
  nHeads: { doc: 'NH: query heads; head dim = dModel / nHeads', min: 1, max: 128, integer: true },
  nKvHeads: { doc: 'NKV: key/value heads (grouped-query attention); divides nHeads', min: 1, max: 128, integer: true },
  dModel: { doc: 'C: residual width (hidden_size)', min: 2, max: 8192, integer: true },
  dFF: { doc: 'F: SwiGLU hidden width (intermediate_size)', min: 1, max: 32768, integer: true },
  ropeTheta: { doc: 'RoPE base frequency', min: 1, max: 1e8, integer: false },
  normEps: { doc: 'RMSNorm epsilon', min: 1e-12, max: 1e-1, integer: false },
};

/** A config field that is out of range or inconsistent, with the rule it broke. */
export class ModelConfigError extends Error {
  override name = 'ModelConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid model config:\n  ${problems.join('\n  ')}`);
  }
}

/** Every problem of a config (empty when valid). Each message starts with the field name. */
export function modelConfigProblems(c: Partial<Record<keyof ModelConfig, unknown>>): string[] {
  const problems: string[] = [];
  const flags = ['tiedEmbeddings', 'qkvBias'];
  for (const key of Object.keys(c)) {
    if (!(key in MODEL_FIELDS) && !flags.includes(key))
      problems.push(`${key}: unknown field (known: ${[...Object.keys(MODEL_FIELDS), ...flags].join(', ')})`);
  }
  for (const [key, rule] of Object.entries(MODEL_FIELDS)) {
    const v = c[key as keyof ModelConfig];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      problems.push(`${key}: must be a number (${rule.doc}), got ${JSON.stringify(v)}`);
    } else if (rule.integer && !Number.isInteger(v)) {
      problems.push(`${key}: must be an integer, got ${v}`);
    } else if (v < rule.min || v > rule.max) {
      problems.push(`${key}: must be in [${rule.min}, ${rule.max}], got ${v}`);
    }
  }
  if (typeof c.tiedEmbeddings !== 'boolean')
    problems.push(`tiedEmbeddings: must be true or false, got ${JSON.stringify(c.tiedEmbeddings)}`);
  if (c.qkvBias !== undefined && typeof c.qkvBias !== 'boolean')
    problems.push(`qkvBias: must be true or false when given, got ${JSON.stringify(c.qkvBias)}`);
  if (problems.length) return problems;
  const m = c as ModelConfig;
  if (m.dModel % m.nHeads !== 0) problems.push(`nHeads: must divide dModel (dModel ${m.dModel}, nHeads ${m.nHeads})`);
  else if ((m.dModel / m.nHeads) % 2 !== 0)
    problems.push(`nHeads: head dim dModel/nHeads must be even for RoPE (got ${m.dModel / m.nHeads})`);
  if (m.nHeads % m.nKvHeads !== 0)
    problems.push(`nKvHeads: must divide nHeads (nHeads ${m.nHeads}, nKvHeads ${m.nKvHeads})`);
  return problems;
}

/** Returns the config when valid; throws ModelConfigError listing every problem otherwise. */
export function validateModelConfig(c: Partial<Record<keyof ModelConfig, unknown>>): ModelConfig {
  const problems = modelConfigProblems(c);
  if (problems.length) throw new ModelConfigError(problems);
  return c as ModelConfig;
}

/** The character vocabulary: <pad>, <bos>, <eos>, <unk> and printable ASCII (public/tokenizers/char). */
export const CHAR_VOCAB_SIZE = 99;

const base = { vocabSize: CHAR_VOCAB_SIZE, contextLength: 64, ropeTheta: 10_000, normEps: 1e-5, tiedEmbeddings: true };

/** Presets, smallest first. Parameter counts are for the character vocabulary. */
export const MODEL_PRESETS = {
  nano: { ...base, nLayers: 2, nHeads: 4, nKvHeads: 2, dModel: 48, dFF: 128 },
  micro: { ...base, nLayers: 4, nHeads: 4, nKvHeads: 2, dModel: 64, dFF: 176 },
  tiny: { ...base, nLayers: 4, nHeads: 8, nKvHeads: 4, dModel: 128, dFF: 352, contextLength: 128 },
  small: { ...base, nLayers: 6, nHeads: 8, nKvHeads: 4, dModel: 256, dFF: 688, contextLength: 128 },
  base: { ...base, nLayers: 6, nHeads: 8, nKvHeads: 4, dModel: 512, dFF: 1376, contextLength: 256 },
} satisfies Record<string, ModelConfig>;

export type ModelPresetName = keyof typeof MODEL_PRESETS;

/** Number of parameters (the tied embedding counted once). */
export function parameterCount(c: ModelConfig): number {
  const HD = c.dModel / c.nHeads;
  const attn =
    c.dModel * c.nHeads * HD * 2 + c.dModel * c.nKvHeads * HD * 2 + (c.qkvBias ? (c.nHeads + 2 * c.nKvHeads) * HD : 0);
  const mlp = 3 * c.dModel * c.dFF;
  const perLayer = attn + mlp + 2 * c.dModel;
  return c.vocabSize * c.dModel * (c.tiedEmbeddings ? 1 : 2) + c.nLayers * perLayer + c.dModel;
}
