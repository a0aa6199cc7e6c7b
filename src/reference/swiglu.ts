// CPU twin of shaders/swiglu.wgsl: the Llama MLP's gate, out = silu(gate) * up, elementwise.
// Not the gate/up/down projections (those are matmuls).

import type { HostTensor } from '../core/host-tensor';

function checkSameShape(kernel: string, tensors: [HostTensor, string][]): void {
  const [ref, refName] = tensors[0];
  for (const [t, name] of tensors) {
    if (t.shape.length !== ref.shape.length || t.shape.some((d, i) => d !== ref.shape[i])) {
      throw new Error(
        `${kernel}: ${name} [${t.shape.join(', ')}] must have the shape of ${refName} [${ref.shape.join(', ')}]`,
      );
    }
  }
}

/**
 * out = silu(gate) * up, silu(g) = g * sigmoid(g).
 * @param out  (B,T,F) overwritten.
 * @param gate (B,T,F) gate_proj output.
 * @param up   (B,T,F) up_proj output.
 */
export function swigluForward(out: HostTensor, gate: HostTensor, up: HostTensor): void {
  checkSameShape('swigluForward', [
    [out, 'out'],
    [gate, 'gate'],
    [up, 'up'],
  ]);
  for (let i = 0; i < out.data.length; i++) {
    const g = gate.data[i];
    const s = 1 / (1 + Math.exp(-g));
    out.data[i] = g * s * up.data[i];
  }
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
  dGate: HostTensor,
  dUp: HostTensor,
  dOut: HostTensor,
  gate: HostTensor,
  up: HostTensor,
): void {
  checkSameShape('swigluBackward', [
    [dOut, 'dOut'],
    [dGate, 'dGate'],
    [dUp, 'dUp'],
    [gate, 'gate'],
    [up, 'up'],
  ]);
  for (let i = 0; i < dOut.data.length; i++) {
    const g = gate.data[i];
    const s = 1 / (1 + Math.exp(-g));
    const dy = dOut.data[i];
    dUp.data[i] = dy * g * s;
    dGate.data[i] = dy * up.data[i] * s * (1 + g * (1 - s));
  }
}
