// Typed wrappers of shaders/swiglu.wgsl (the Llama MLP gate, out = silu(gate) * up). Same names and argument
// order as src/reference/swiglu.ts, after the recorder. Not the gate/up/down projections (matmuls).

import raw from '../../shaders/swiglu.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import { valueTypeFamily } from './value-type';

const WG = 256;

const PARAMS = uniforms('Params', {
  n: 'u32', // elements of type V
});
export const SWIGLU_SHADER = declareShader('swiglu.wgsl', raw, { uniforms: [PARAMS] });

function checkSameShape(kernel: string, tensors: [Tensor, string][]): void {
  const [ref, refName] = tensors[0];
  for (const [t, name] of tensors) {
    if (t.dtype !== 'f32') throw new Error(`${kernel}: ${name} must be f32, got ${t.describe()}`);
    if (t.shape.length !== ref.shape.length || t.shape.some((d, i) => d !== ref.shape[i])) {
      throw new Error(`${kernel}: ${name} ${t.describe()} must have the shape of ${refName} ${ref.describe()}`);
    }
  }
}

/** One dispatch over n values: four per invocation (vec4) where n divides by 4, else one (value-type.ts). */
function launch(rec: Recorder, entry: string, n: number, bindings: Tensor[]): void {
  const { family, values: items } = valueTypeFamily(rec.ctx, 'swiglu', SWIGLU_SHADER.source, n);
  rec.dispatch({
    family,
    entry,
    label: `swiglu.${entry}`,
    constants: { WG },
    params: PARAMS.pack({ n: items }),
    bindings,
    workgroups: grid(Math.ceil(items / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}

/**
 * out = silu(gate) * up, elementwise.
 * @param out  (B,T,F) overwritten.
 * @param gate (B,T,F) gate_proj output.
 * @param up   (B,T,F) up_proj output.
 */
export function swigluForward(rec: Recorder, out: Tensor, gate: Tensor, up: Tensor): void {
  checkSameShape('swigluForward', [
    [out, 'out'],
    [gate, 'gate'],
    [up, 'up'],
  ]);
  launch(rec, 'swiglu_forward', out.size, [out, gate, up]);
}

/**
 * Backward of swigluForward: dUp = dOut * silu(gate); dGate = dOut * up * s * (1 + gate * (1 - s)), s = sigmoid(gate).
 * @param dGate (B,T,F) overwritten.
 * @param dUp   (B,T,F) overwritten.
 * @param dOut  (B,T,F) upstream gradient.
 * @param gate  (B,T,F) forward input.
 * @param up    (B,T,F) forward input.
 */
export function swigluBackward(
  rec: Recorder,
  dGate: Tensor,
  dUp: Tensor,
  dOut: Tensor,
  gate: Tensor,
  up: Tensor,
): void {
  checkSameShape('swigluBackward', [
    [dOut, 'dOut'],
    [dGate, 'dGate'],
    [dUp, 'dUp'],
    [gate, 'gate'],
    [up, 'up'],
  ]);
  launch(rec, 'swiglu_backward', dOut.size, [dGate, dUp, dOut, gate, up]);
}
