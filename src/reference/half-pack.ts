// CPU twin of shaders/half-pack.wgsl (src/kernels/half-pack.ts): f32 values rounded to bf16 or f16 bits, round to
// nearest even, as src/core/half.ts's toHalfBits does (the one definition of the rounding on the host), and half bits
// widened back to f32 (halfBitsToF32, exact).

import { halfBitsToF32, toHalfBits, type HalfDtype } from '../core/half';
import type { HostTensor } from '../core/host-tensor';

/** out (half bits of `dtype`, one per element) = `a` rounded to `dtype`. */
export function packHalf(out: Uint16Array, a: HostTensor, dtype: HalfDtype): void {
  if (out.length !== a.data.length)
    throw new Error(`packHalf: ${a.data.length} values for ${out.length} half elements`);
  out.set(toHalfBits(a.data, dtype));
}

/** out (f32, one per element) = the half bits `a` of `dtype` widened (exact). */
export function unpackHalf(out: Float32Array, a: Uint16Array, dtype: HalfDtype): void {
  if (out.length !== a.length) throw new Error(`unpackHalf: ${a.length} half elements for ${out.length} values`);
  out.set(halfBitsToF32(a, dtype));
}
