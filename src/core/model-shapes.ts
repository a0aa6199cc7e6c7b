// The policy's parameters as every layer names them: the architecture numbers (ModelDims), each tensor's Hugging
// Face name and shape in order, the shape check, and the random initialization. Shared by the CPU twins, the GPU
// model, checkpoints and the memory plan; no computation of the model itself (that is src/reference/model.ts).

import type { FloatArray, HostTensor } from './host-tensor';
import type { Rng } from './random';
import type { Llama3RopeScaling } from './rope-frequencies';

/** The architecture numbers of a Llama-style decoder (src/schema/model-config.ts validates and extends them). */
export interface ModelDims {
  /** V: vocabulary size. */
  vocabSize: number;
  /** C: residual width (HF hidden_size). */
  dModel: number;
  /** L: decoder layers. */
  nLayers: number;
  /** NH: query heads; head dim HD = headDim, or dModel / nHeads when absent. */
  nHeads: number;
  /** NKV: key/value heads (grouped-query attention); divides nHeads. */
  nKvHeads: number;
  /** F: MLP hidden width (HF intermediate_size). */
  dFF: number;
  /** RoPE base (HF rope_theta). */
  ropeTheta: number;
  /** RMSNorm epsilon (HF rms_norm_eps). */
  normEps: number;
  /** lm_head shares the embedding table (HF tie_word_embeddings). */
  tiedEmbeddings: boolean;
  /**
   * q/k/v projections carry a bias (Qwen2: `self_attn.{q,k,v}_proj.bias`; o_proj and the MLP have none).
   * Absent or false: the Llama layout, no bias tensors and no bias kernels.
   */
  qkvBias?: boolean;
  /**
   * HD when it is not dModel / nHeads (Qwen3-0.6B: 128 with dModel 1024 and 16 heads; HF head_dim). Absent: the
   * Llama rule HD = dModel / nHeads.
   */
  headDim?: number;
  /**
   * Per-head RMSNorm of q and k after the projection and before RoPE (Qwen3: `self_attn.q_norm.weight`,
   * `self_attn.k_norm.weight`, shape HD, epsilon normEps). Absent or false: no such norm.
   */
  qkNorm?: boolean;
  /** Llama 3 RoPE frequency scaling (HF rope_scaling of rope_type "llama3"); absent: plain RoPE. */
  ropeScaling?: Llama3RopeScaling;
}

/** Parameters (or their gradients) keyed by Hugging Face tensor name, in HF shapes (Linear weights are (out, in)). */
export type ModelParams = Record<string, HostTensor>;

/** Head dim HD: the explicit headDim, else C / NH (checked). */
export function headDim(d: Pick<ModelDims, 'dModel' | 'nHeads' | 'nKvHeads' | 'headDim'>): number {
  if (d.nHeads % d.nKvHeads !== 0)
    throw new Error(`model: nHeads ${d.nHeads} is not a multiple of nKvHeads ${d.nKvHeads}`);
  if (d.headDim !== undefined) return d.headDim;
  if (d.dModel % d.nHeads !== 0) throw new Error(`model: dModel ${d.dModel} is not a multiple of nHeads ${d.nHeads}`);
  return d.dModel / d.nHeads;
}

/** Every parameter's HF name and shape, in HF order (embeddings, layers, final norm, lm_head when untied). */
export function paramShapes(d: ModelDims): { name: string; shape: number[] }[] {
  const C = d.dModel;
  const HD = headDim(d);
  const out: { name: string; shape: number[] }[] = [{ name: 'model.embed_tokens.weight', shape: [d.vocabSize, C] }];
  for (let i = 0; i < d.nLayers; i++) {
    const p = `model.layers.${i}.`;
    out.push(
      { name: `${p}input_layernorm.weight`, shape: [C] },
      { name: `${p}self_attn.q_proj.weight`, shape: [d.nHeads * HD, C] },
      ...(d.qkvBias ? [{ name: `${p}self_attn.q_proj.bias`, shape: [d.nHeads * HD] }] : []),
      { name: `${p}self_attn.k_proj.weight`, shape: [d.nKvHeads * HD, C] },
      ...(d.qkvBias ? [{ name: `${p}self_attn.k_proj.bias`, shape: [d.nKvHeads * HD] }] : []),
      { name: `${p}self_attn.v_proj.weight`, shape: [d.nKvHeads * HD, C] },
      ...(d.qkvBias ? [{ name: `${p}self_attn.v_proj.bias`, shape: [d.nKvHeads * HD] }] : []),
      { name: `${p}self_attn.o_proj.weight`, shape: [C, d.nHeads * HD] },
      ...(d.qkNorm
        ? [
            { name: `${p}self_attn.q_norm.weight`, shape: [HD] },
            { name: `${p}self_attn.k_norm.weight`, shape: [HD] },
          ]
        : []),
      { name: `${p}post_attention_layernorm.weight`, shape: [C] },
      { name: `${p}mlp.gate_proj.weight`, shape: [d.dFF, C] },
      { name: `${p}mlp.up_proj.weight`, shape: [d.dFF, C] },
      { name: `${p}mlp.down_proj.weight`, shape: [C, d.dFF] },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [C] });
  if (!d.tiedEmbeddings) out.push({ name: 'lm_head.weight', shape: [d.vocabSize, C] });
  return out;
}

/** True for an RMSNorm gain (a 1-D weight that multiplies), false for matrices and biases. */
function isNormGain(name: string): boolean {
  return name.endsWith('layernorm.weight') || name.endsWith('_norm.weight') || name === 'model.norm.weight';
}

/**
 * Random parameters for tests: normal(0, std) matrices and biases, norm gains 1 + normal(0, 0.1) (not exactly 1,
 * so their gradients are exercised).
 */
export function initParams(d: ModelDims, rng: Rng, opts: { std?: number; dtype?: 'f32' | 'f64' } = {}): ModelParams {
  const std = opts.std ?? 0.3;
  const params: ModelParams = {};
  for (const { name, shape } of paramShapes(d)) {
    const t = alloc(opts.dtype === 'f64', shape);
    const isNorm = isNormGain(name);
    for (let i = 0; i < t.data.length; i++) t.data[i] = isNorm ? 1 + 0.1 * rng.normal() : std * rng.normal();
    params[name] = t;
  }
  return params;
}

/** Checks that every expected parameter is present with its HF shape (extra keys are an error too). */
export function checkParams(d: ModelDims, params: ModelParams): void {
  const shapes = paramShapes(d);
  for (const { name, shape } of shapes) {
    const t = params[name];
    if (!t) throw new Error(`model: missing parameter ${name}`);
    if (
      t.shape.length !== shape.length ||
      t.shape.some((x, i) => x !== shape[i]) ||
      t.data.length !== t.shape.reduce((a, b) => a * b, 1)
    ) {
      throw new Error(`model: ${name} has shape [${t.shape.join(', ')}], want [${shape.join(', ')}]`);
    }
  }
  const known = new Set(shapes.map((s) => s.name));
  for (const name of Object.keys(params)) {
    if (!known.has(name))
      throw new Error(
        `model: unexpected parameter ${name}${name === 'lm_head.weight' ? ' (embeddings are tied)' : ''}`,
      );
  }
}

function alloc(f64: boolean, shape: readonly number[]): HostTensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const data: FloatArray = f64 ? new Float64Array(n) : new Float32Array(n);
  return { data, shape: [...shape] };
}
