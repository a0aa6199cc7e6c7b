// The policy's architecture config: documented fields with ranges, validation with messages naming the field
// and the rule, presets from ~56k to ~17M parameters, parameter counts. Not the memory a run needs on a device
// (memory-plan.ts), not the training config (src/rl) and not the checkpoint's config.json (checkpoint-format.ts).

import type { ModelDims } from '../core/model-shapes';
import { llama3ScalingProblems } from '../core/rope-frequencies';

/** The architecture of a Llama-style decoder (RMSNorm, RoPE, SwiGLU, grouped-query attention). */
export interface ModelConfig extends ModelDims {
  /**
   * The longest sequence (prompt + completion) the model may be trained and sampled at: HF max_position_embeddings.
   * A bound only; nothing is allocated for it (a run's buffers follow its own prompt and completion lengths).
   */
  contextLength: number;
}

/**
 * The largest max_position_embeddings accepted: RoPE angles stay exact for positions < 2^24 (shaders/rope.wgsl),
 * and real configs state up to 131,072 (Llama 3.2).
 */
export const MAX_CONTEXT_LENGTH = 1 << 20;

/** The largest explicit head dim (Qwen3 uses 128). */
const MAX_HEAD_DIM = 1024;

interface FieldRule {
  doc: string;
  min: number;
  max: number;
  integer: boolean;
}

/** One line of documentation and the allowed range of every numeric field. */
export const MODEL_FIELDS: Record<
  Exclude<keyof ModelConfig, 'tiedEmbeddings' | 'qkvBias' | 'headDim' | 'qkNorm' | 'ropeScaling'>,
  FieldRule
> = {
  vocabSize: { doc: 'V: number of token ids (the char tokenizer has 99)', min: 2, max: 262_144, integer: true },
  contextLength: {
    doc: 'longest prompt + completion, in tokens (a bound: buffers follow the run)',
    min: 2,
    max: MAX_CONTEXT_LENGTH,
    integer: true,
  },
  nLayers: { doc: 'L: decoder layers', min: 1, max: 64, integer: true },
  nHeads: { doc: 'NH: query heads; head dim = headDim or dModel / nHeads', min: 1, max: 128, integer: true },
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
  const flags = ['tiedEmbeddings', 'qkvBias', 'headDim', 'qkNorm', 'ropeScaling'];
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
  if (c.qkNorm !== undefined && typeof c.qkNorm !== 'boolean')
    problems.push(`qkNorm: must be true or false when given, got ${JSON.stringify(c.qkNorm)}`);
  const hd = c.headDim;
  if (hd !== undefined && !(typeof hd === 'number' && Number.isInteger(hd) && hd >= 2 && hd <= MAX_HEAD_DIM))
    problems.push(`headDim: must be an integer in [2, ${MAX_HEAD_DIM}] when given, got ${JSON.stringify(hd)}`);
  const rs = c.ropeScaling as ModelConfig['ropeScaling'] | null | undefined;
  if (rs !== undefined) {
    if (typeof rs !== 'object' || rs === null || rs.ropeType !== 'llama3')
      problems.push(
        `ropeScaling: only Llama 3 scaling ({ropeType: "llama3", ...}) is supported, got ${JSON.stringify(rs)}`,
      );
    else problems.push(...llama3ScalingProblems(rs).map((p) => `ropeScaling: ${p}`));
  }
  if (problems.length) return problems;
  const m = c as ModelConfig;
  if (m.headDim !== undefined) {
    if (m.headDim % 2 !== 0) problems.push(`headDim: must be even for RoPE (got ${m.headDim})`);
  } else if (m.dModel % m.nHeads !== 0)
    problems.push(`nHeads: must divide dModel (dModel ${m.dModel}, nHeads ${m.nHeads}) unless headDim is given`);
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
  const HD = c.headDim ?? c.dModel / c.nHeads;
  const attn =
    c.dModel * c.nHeads * HD * 2 +
    c.dModel * c.nKvHeads * HD * 2 +
    (c.qkvBias ? (c.nHeads + 2 * c.nKvHeads) * HD : 0) +
    (c.qkNorm ? 2 * HD : 0);
  const mlp = 3 * c.dModel * c.dFF;
  const perLayer = attn + mlp + 2 * c.dModel;
  return c.vocabSize * c.dModel * (c.tiedEmbeddings ? 1 : 2) + c.nLayers * perLayer + c.dModel;
}
