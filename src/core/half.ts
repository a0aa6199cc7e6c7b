// Half-precision numbers on the host: bfloat16 and IEEE binary16 bits to and from f32 (round to nearest even), the
// storage dtypes weights may take on the GPU, and the rounding the CPU twins apply so they compute with exactly the
// values the GPU stores. Pure functions of typed arrays; the GPU side reads the same bits (src/kernels/half-operand.ts).

/** A 16-bit float format: bfloat16 (f32's exponent, 8 bits of mantissa) or IEEE binary16 (f16). */
export type HalfDtype = 'bf16' | 'f16';

/** How weights are stored on the GPU; arithmetic and accumulation are f32 in every case. */
export type WeightDtype = 'f32' | HalfDtype;

export const WEIGHT_DTYPES: readonly WeightDtype[] = ['f32', 'bf16', 'f16'];

/** Bytes per stored element of each weight dtype. */
export const WEIGHT_DTYPE_BYTES: Readonly<Record<WeightDtype, number>> = { f32: 4, bf16: 2, f16: 2 };

/** Half-precision weights as a checkpoint holds them: raw bits, two bytes an element. */
export interface HalfBits {
  dtype: HalfDtype;
  bits: Uint16Array;
}

/** A weight on its way to the GPU: f32 values, or half bits that stay half (no f32 copy of the model on the host). */
export type WeightData = Float32Array | HalfBits;

export function isHalfBits(d: WeightData | number[]): d is HalfBits {
  return !Array.isArray(d) && !(d instanceof Float32Array);
}

/**
 * Whether a parameter of this shape is stored in the weight dtype: the matrices (embeddings, projections, LM head)
 * are; the norm gains and biases (1-D, a few thousand values) stay f32.
 */
export function storesHalf(shape: readonly number[]): boolean {
  return shape.length === 2;
}

let f16Table: Float32Array | null = null;

function buildF16Table(): Float32Array {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) t[h] = sign * mant * 2 ** -24;
    else if (exp === 31) t[h] = mant === 0 ? sign * Infinity : NaN;
    else t[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return t;
}

/** IEEE half bits -> Float32Array (exact). */
export function f16BitsToF32(bits: Uint16Array): Float32Array {
  const table = (f16Table ??= buildF16Table());
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]];
  return out;
}

/** bfloat16 bits -> Float32Array (exact: bf16 is the top half of an f32). */
export function bf16BitsToF32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const u = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) u[i] = bits[i] << 16;
  return out;
}

/** Float32 -> IEEE half bits, rounding to nearest even; overflow becomes infinity, NaN stays NaN. */
export function f32ToF16Bits(values: ArrayLike<number>): Uint16Array {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    f[0] = values[i];
    const x = u[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 31) {
      out[i] = sign | 0x7c00;
    } else if (e <= 0) {
      if (e < -10) {
        out[i] = sign; // underflows to (signed) zero
        continue;
      }
      mant |= 0x800000; // implicit leading 1
      const shift = 14 - e; // 14..24
      const half = 1 << (shift - 1);
      let m = mant >>> shift;
      const rest = mant & ((1 << shift) - 1);
      if (rest > half || (rest === half && (m & 1) === 1)) m++;
      out[i] = sign | m; // m may round up into the smallest normal, which is the right bit pattern
    } else {
      let h = (e << 10) | (mant >>> 13);
      const rest = mant & 0x1fff;
      if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++; // may carry into the exponent (to inf): correct
      out[i] = sign | h;
    }
  }
  return out;
}

/** Float32 -> bfloat16 bits, rounding to nearest even; NaN stays NaN. */
export function f32ToBf16Bits(values: ArrayLike<number>): Uint16Array {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    f[0] = values[i];
    const x = u[0];
    if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) {
      out[i] = (x >>> 16) | 0x40; // quiet NaN, keep the sign
      continue;
    }
    out[i] = (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
  }
  return out;
}

/** f32 values -> bits of `dtype`, rounding to nearest even. */
export function toHalfBits(values: ArrayLike<number>, dtype: HalfDtype): Uint16Array {
  return dtype === 'bf16' ? f32ToBf16Bits(values) : f32ToF16Bits(values);
}

/** Bits of `dtype` -> f32 (exact). */
export function halfBitsToF32(bits: Uint16Array, dtype: HalfDtype): Float32Array {
  return dtype === 'bf16' ? bf16BitsToF32(bits) : f16BitsToF32(bits);
}

/** Bits of one half format as the other: exact widening to f32, then one rounding to nearest even. */
export function convertHalfBits(bits: Uint16Array, from: HalfDtype, to: HalfDtype): Uint16Array {
  return from === to ? bits : toHalfBits(halfBitsToF32(bits, from), to);
}

/** Values rounded to `dtype` and widened back: exactly what the GPU reads from storage of that dtype. */
export function roundToWeightDtype(values: Float32Array, dtype: WeightDtype): Float32Array {
  return dtype === 'f32' ? values : halfBitsToF32(toHalfBits(values, dtype), dtype);
}

/** A weight's f32 values (half bits widened exactly). */
export function weightToF32(d: WeightData): Float32Array {
  return isHalfBits(d) ? halfBitsToF32(d.bits, d.dtype) : d;
}

/** A weight's bits in `dtype` (f32 rounded, or half converted only if the formats differ). */
export function weightToHalf(d: WeightData, dtype: HalfDtype): Uint16Array {
  return isHalfBits(d) ? convertHalfBits(d.bits, d.dtype, dtype) : toHalfBits(d, dtype);
}

/** The weight-storage knob: a dtype, or 'auto' (resolveWeightDtype). */
export type WeightDtypeChoice = 'auto' | WeightDtype;

/**
 * Bytes of a model's weights stored in `dtype`: the matrices at its width, the 1-D gains and biases at f32's (as
 * GpuModel stores them; each tensor rounded up to 16 bytes, as GpuContext allocates). The memory plan's weights
 * part at a given width.
 */
export function storedWeightBytes(shapes: readonly { shape: readonly number[] }[], dtype: WeightDtype): number {
  let total = 0;
  for (const { shape } of shapes) {
    const n = shape.reduce((a, b) => a * b, 1);
    const bytes = n * (storesHalf(shape) ? WEIGHT_DTYPE_BYTES[dtype] : 4);
    total += Math.max(16, Math.ceil(bytes / 16) * 16);
  }
  return total;
}

/**
 * The dtype a run stores its frozen weights in: the choice itself, or for 'auto' f32 where the run fits in memory
 * with f32 weights (`fitsWith(4)`, the memory plan at 4 bytes a weight; every toy preset, so seeded runs stay
 * bit-identical) and bf16 where it does not (bf16 keeps f32's range, so no overflow where f16 would saturate).
 */
export function resolveWeightDtype(
  choice: WeightDtypeChoice,
  fitsWith: (bytesPerWeight: number) => boolean,
): WeightDtype {
  if (choice !== 'auto') return choice;
  return fitsWith(WEIGHT_DTYPE_BYTES.f32) ? 'f32' : 'bf16';
}

/**
 * The dtype a run stores its rollouts' KV cache in: the frozen weights' (the weight_dtype knob, resolved). No
 * trainer this lab follows names a separate knob for it, and the reasons for half weights hold for the cache: a run
 * with f32 weights (every toy preset under 'auto') keeps an f32 cache and bit-identical seeded runs; a run that
 * needs half weights to fit also needs the cache's memory halved (the real-model memory targets assume both). Only
 * sampling reads the cache: the learner's log-probs come from its own f32 forward, so pi_old is unchanged and the
 * sampler's log-probs differ from it by the rounding of K and V (checked in src/model/gpu-model.test.ts).
 */
export function kvCacheDtype(weightDtype: WeightDtype): WeightDtype {
  return weightDtype;
}

/** Unit roundoff of each format (half the spacing at 1): the largest relative error of one rounding. */
export const UNIT_ROUNDOFF: Readonly<Record<WeightDtype, number>> = { f32: 2 ** -24, bf16: 2 ** -8, f16: 2 ** -11 };

/**
 * How far y = sum_k a_k w_k computed with w stored in `dtype` may lie from the same sum with f32 weights: each w_k
 * moves by at most u |w_k|, so |dy| <= u sum_k |a_k w_k| (`absDot`), plus the two f32 sums' own rounding (`f32Slack`).
 * The size scaling is in absDot: it grows with K and with the operands' magnitudes.
 */
export function halfDotBound(dtype: WeightDtype, absDot: number, f32Slack: number): number {
  return UNIT_ROUNDOFF[dtype] * absDot + f32Slack;
}
