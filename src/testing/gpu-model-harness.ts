// What the GPU-model test files share: random base weights and LoRA adapters as ParamArrays, the same arrays as
// the CPU reference's host tensors, and one forward (and, given dLogits, one backward) of a GpuModel on a fixed batch
// returning the whole logits and the gradients. Whole (B, T, V) logits exist here only, at toy sizes.

import type { GpuContext } from '../gpu';
import { loraShapes, type LoraSpec } from '../core/lora-layout';
import { initParams, type ModelParams } from '../core/model-shapes';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import type { GpuModel } from '../model/gpu-model';

/** Base weights drawn with std 0.3 (large enough that every gradient is well above rounding). */
export function randomBaseParams(config: ModelConfig, seed: number): ParamArrays {
  const p = initParams(config, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** Adapters with B nonzero too (as after some training), so every adapter gradient is exercised. */
export function randomAdapters(config: ModelConfig, spec: LoraSpec, seed: number): ParamArrays {
  const rng = new Rng(seed);
  return Object.fromEntries(
    loraShapes(config, spec).map(({ name, shape }) => [
      name,
      Float32Array.from({ length: shape[0] * shape[1] }, () => 0.4 * rng.normal()),
    ]),
  );
}

/** The arrays as the CPU reference's f64 host tensors. */
export const hostParams = (arrays: ParamArrays, shapes: { name: string; shape: number[] }[]): ModelParams =>
  Object.fromEntries(shapes.map(({ name, shape }) => [name, host(Float64Array.from(arrays[name]), shape)]));

/** A fixed (B, T) batch of token ids and positions 0..T-1 per row. */
export interface ModelBatch {
  B: number;
  T: number;
  tokens: Uint32Array;
  positions: Uint32Array;
}

/** One forward (and, given dLogits, backward) on the GPU; returns the whole logits and the gradients. */
export async function runModel(
  ctx: GpuContext,
  model: GpuModel,
  batch: ModelBatch,
  dLogits?: Float32Array,
): Promise<{ logits: Float32Array; grads: ParamArrays }> {
  const { B, T } = batch;
  const V = model.config.vocabSize;
  const u32 = (data: Uint32Array, label: string) => ctx.fromArray<'u32'>(data, [data.length], { dtype: 'u32', label });
  const inp = { tokens: u32(batch.tokens, 'tokens'), positions: u32(batch.positions, 'positions') };
  const rec = ctx.recorder('model harness');
  const ws = model.forward(rec, B, T, inp);
  const all = ctx.tensor([B, T, V], { label: 'logits' });
  model.logitsOf(rec, ws, all);
  const dl = dLogits ? ctx.fromArray(dLogits, [B, T, V], { label: 'dLogits' }) : null;
  if (dl) {
    model.zeroGrads(rec);
    model.headBackwardOf(rec, ws, dl);
    model.backward(rec, ws, inp);
  }
  rec.submit();
  const logits = (await ctx.read(all)) as Float32Array;
  all.destroy();
  const grads = dl ? await model.downloadGrads() : {};
  dl?.destroy();
  for (const t of Object.values(inp)) t.destroy();
  return { logits, grads };
}

/**
 * Prompts of different lengths (so rollouts left-pad them; two rows alike), for rollout tests of the small test
 * models (token ids under 10).
 */
export const LEFT_PADDED_PROMPTS: readonly (readonly number[])[] = [
  [1, 5, 6, 7],
  [1, 9],
  [1, 3, 4, 5, 6, 7, 8],
  [1, 9],
];

/** The largest absolute difference between two arrays of the same length (log-probs of two samplers). */
export const worstGap = (a: Float32Array, b: Float32Array): number =>
  a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i])), 0);
