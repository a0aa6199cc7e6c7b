// CPU twin of half-precision weight storage: a model's weights rounded to bf16 or f16 exactly as GpuModel stores
// them (the matrices; the 1-D gains and biases stay f32), widened back to f32. The twins then compute in f32 on
// these values, so a GPU model with half weights and the CPU reference on the rounded weights agree as tightly as
// the f32 model does with its twin.

import { roundToWeightDtype, storesHalf, type WeightDtype } from '../core/half';
import { paramShapes, type ModelDims } from '../core/model-shapes';

/** `params` with each matrix rounded to `dtype` (round to nearest even) and widened back; f32 returns them as given. */
export function roundModelWeights(
  d: ModelDims,
  params: Readonly<Record<string, Float32Array>>,
  dtype: WeightDtype,
): Record<string, Float32Array> {
  const out: Record<string, Float32Array> = { ...params };
  if (dtype === 'f32') return out;
  for (const { name, shape } of paramShapes(d)) {
    const p = params[name];
    if (!p) throw new Error(`roundModelWeights: parameter ${name} is missing`);
    if (storesHalf(shape)) out[name] = roundToWeightDtype(p, dtype);
  }
  return out;
}
