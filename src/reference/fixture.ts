// Turns the PyTorch parity fixture (public/fixtures/llama-parity.safetensors, made by
// scripts/make-parity-fixture.py) into reference-model inputs and expectations, and defines the parity error.
// Not a safetensors parser: callers parse the file (src/io/safetensors.ts) and pass the tensor map in,
// so src/reference stays below src/model in the dependency order.

import type { ModelDims, ModelParams } from '../core/model-shapes';

/** The structural subset of a parsed safetensors tensor that this file reads. */
export interface FixtureTensor {
  dtype: string;
  shape: readonly number[];
  data: ArrayLike<number> | ArrayLike<bigint>;
}

/** Everything the parity tests need, with the weights in the precision they are stored in (F32). */
export interface ParityFixture {
  dims: ModelDims;
  B: number;
  T: number;
  /** Weights under their HF names, Float32Array as stored. */
  params: ModelParams;
  /** (B*T) input token ids. */
  tokens: Uint32Array;
  /** (B*T) next-token targets; -100 (HF ignore_index) where the position does not count. */
  targets: Int32Array;
  expected: {
    /** (B,T,V) PyTorch float64 logits. */
    logits: Float64Array;
    /** Mean cross-entropy over positions whose target is not -100. */
    loss: number;
    /** d loss / d param, float64, keyed by HF parameter name. */
    grads: Record<string, Float64Array>;
  };
}

/** HF's ignore_index in input.targets. */
export const IGNORE_INDEX = -100;

function need(tensors: ReadonlyMap<string, FixtureTensor>, name: string, dtype: string): FixtureTensor {
  const t = tensors.get(name);
  if (!t) throw new Error(`parity fixture: missing tensor ${name}`);
  if (t.dtype !== dtype) throw new Error(`parity fixture: ${name} is ${t.dtype}, want ${dtype}`);
  return t;
}

function numbers(t: FixtureTensor): ArrayLike<number> {
  if (typeof t.data[0] === 'bigint') throw new Error('parity fixture: 64-bit integer tensors are not expected');
  return t.data as ArrayLike<number>;
}

/**
 * Builds the fixture from a parsed safetensors file: `tensors` by name and the `__metadata__` strings
 * (`config` is the HF-style config JSON, `batch` is {"B","T"}).
 */
export function parityFixtureFrom(
  tensors: ReadonlyMap<string, FixtureTensor>,
  metadata: Readonly<Record<string, string>>,
): ParityFixture {
  if (!metadata.config || !metadata.batch) throw new Error('parity fixture: __metadata__ needs "config" and "batch"');
  const c = JSON.parse(metadata.config) as Record<string, number | boolean>;
  const { B, T } = JSON.parse(metadata.batch) as { B: number; T: number };
  const dims: ModelDims = {
    vocabSize: Number(c.vocab_size),
    dModel: Number(c.hidden_size),
    nLayers: Number(c.num_hidden_layers),
    nHeads: Number(c.num_attention_heads),
    nKvHeads: Number(c.num_key_value_heads),
    dFF: Number(c.intermediate_size),
    ropeTheta: Number(c.rope_theta),
    normEps: Number(c.rms_norm_eps),
    tiedEmbeddings: Boolean(c.tie_word_embeddings),
  };
  if (c.head_dim !== undefined && Number(c.head_dim) * dims.nHeads !== dims.dModel) {
    throw new Error(`parity fixture: head_dim ${c.head_dim} * heads ${dims.nHeads} != hidden_size ${dims.dModel}`);
  }
  const params: ModelParams = {};
  const grads: Record<string, Float64Array> = {};
  for (const [name, t] of tensors) {
    if (name.startsWith('model.') || name === 'lm_head.weight') {
      params[name] = { data: Float32Array.from(numbers(need(tensors, name, 'F32'))), shape: [...t.shape] };
      grads[name] = Float64Array.from(numbers(need(tensors, `grad.${name}`, 'F64')));
    }
  }
  const tokens = Uint32Array.from(numbers(need(tensors, 'input.tokens', 'I32')));
  const targets = Int32Array.from(numbers(need(tensors, 'input.targets', 'I32')));
  if (tokens.length !== B * T || targets.length !== B * T)
    throw new Error(`parity fixture: inputs are not (B,T) = (${B},${T})`);
  return {
    dims,
    B,
    T,
    params,
    tokens,
    targets,
    expected: {
      logits: Float64Array.from(numbers(need(tensors, 'expected.logits', 'F64'))),
      loss: numbers(need(tensors, 'expected.loss', 'F64'))[0],
      grads,
    },
  };
}

/** The cross-entropy inputs for the fixture's targets: ignored positions get target 0 and mask 0. */
export function fixtureLossInputs(f: ParityFixture): { targets: Uint32Array; mask: Float32Array } {
  const targets = Uint32Array.from(f.targets, (t) => (t === IGNORE_INDEX ? 0 : t));
  const mask = Float32Array.from(f.targets, (t) => (t === IGNORE_INDEX ? 0 : 1));
  return { targets, mask };
}

/** Parity error of one tensor: max |got - want| / max |want| (a relative error that ignores tiny entries). */
export function parityError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) throw new Error(`parityError: ${got.length} elements vs ${want.length}`);
  let maxDiff = 0;
  let maxWant = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= maxDiff)) maxDiff = d; // NaN propagates
    maxWant = Math.max(maxWant, Math.abs(want[i]));
  }
  return maxWant > 0 ? maxDiff / maxWant : maxDiff;
}
