// Half-precision conversions against known bit patterns: bf16 and f16 rounding to nearest even (ties both ways),
// NaN (quiet, sign kept), infinities, overflow, subnormals of both formats and of f32, the conversions between
// the two formats, the twins' rounding, the byte counts and the weight_dtype resolution.

import { describe, expect, it } from 'vitest';
import {
  bf16BitsToF32,
  convertHalfBits,
  f16BitsToF32,
  f32ToBf16Bits,
  f32ToF16Bits,
  halfDotBound,
  resolveWeightDtype,
  roundToWeightDtype,
  storedWeightBytes,
  storesHalf,
  weightToF32,
  weightToHalf,
} from './half';

/** The f32 with these bits. */
const f32 = (bits: number) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];

describe('f32 -> bf16 (round to nearest even)', () => {
  it.each([
    ['1', 0x3f800000, 0x3f80],
    ['just below the tie rounds down', 0x3f807fff, 0x3f80],
    ['tie to even (even stays)', 0x3f808000, 0x3f80],
    ['tie to even (odd rounds up)', 0x3f818000, 0x3f82],
    ['just above the tie rounds up', 0x3f808001, 0x3f81],
    ['-2', 0xc0000000, 0xc000],
    ['+inf', 0x7f800000, 0x7f80],
    ['-inf', 0xff800000, 0xff80],
    ['largest f32 overflows to inf', 0x7f7fffff, 0x7f80],
    ['largest bf16 stays', 0x7f7f0000, 0x7f7f],
    ['+0', 0x00000000, 0x0000],
    ['-0', 0x80000000, 0x8000],
    ['f32 subnormal rounds within the subnormals', 0x00018000, 0x0002],
    ['smallest f32 subnormal rounds to 0', 0x00000001, 0x0000],
    ['largest f32 subnormal rounds up to the smallest normal', 0x007fffff, 0x0080],
    ['quiet NaN stays NaN', 0x7fc00000, 0x7fc0],
    ['signalling NaN whose payload is all in the low half becomes quiet, sign kept', 0xff800001, 0xffc0],
  ])('%s', (_, input, want) => {
    expect(f32ToBf16Bits([f32(input)])[0]).toBe(want);
  });

  it('widening is exact and rounding a bf16 value is the identity, for every bf16 that is not NaN', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const back = f32ToBf16Bits(bf16BitsToF32(all));
    const wrong: number[] = [];
    for (let h = 0; h < 65536; h++) {
      const nan = (h & 0x7f80) === 0x7f80 && (h & 0x7f) !== 0;
      const ok = nan ? Number.isNaN(bf16BitsToF32(new Uint16Array([back[h]]))[0]) : back[h] === h;
      if (!ok) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
});

describe('f32 -> f16 (round to nearest even)', () => {
  it.each([
    ['1', 1, 0x3c00],
    ['tie to even (even stays)', 1 + 2 ** -11, 0x3c00],
    ['tie to even (odd rounds up)', 1 + 3 * 2 ** -11, 0x3c02],
    ['65504 (largest) stays', 65504, 0x7bff],
    ['65520 overflows to inf (tie away from the largest)', 65520, 0x7c00],
    ['-1e6 overflows to -inf', -1e6, 0xfc00],
    ['smallest subnormal', 2 ** -24, 0x0001],
    ['half the smallest subnormal ties to 0', 2 ** -25, 0x0000],
    ['just above half the smallest subnormal rounds up', 2 ** -25 * 1.01, 0x0001],
    ['largest subnormal', 1023 * 2 ** -24, 0x03ff],
    ['smallest normal', 2 ** -14, 0x0400],
    ['-0', -0, 0x8000],
    ['NaN', Number.NaN, 0x7e00],
  ])('%s', (_, input, want) => {
    expect(f32ToF16Bits([input])[0]).toBe(want);
  });
});

describe('between the formats and for the twins', () => {
  it('bf16 -> f16 rounds once (through the exact f32), and f16 -> bf16 likewise', () => {
    // bf16 1 + 2^-7 is exact in f16; bf16 2^20 overflows f16; bf16 2^-20 is an f16 subnormal (2^-20 = 16 * 2^-24).
    const bf = f32ToBf16Bits([1 + 2 ** -7, 2 ** 20, 2 ** -20]);
    expect([...convertHalfBits(bf, 'bf16', 'f16')]).toEqual([0x3c08, 0x7c00, 0x0010]);
    // f16 1 + 2^-10 is below half a bf16 step (2^-8) above 1: bf16 1; 1 + 3 * 2^-8 ties between bf16 1 + 2^-7 and
    // 1 + 2^-6 and goes to the even one, 1 + 2^-6 (0x3f82).
    const h = f32ToF16Bits([1 + 2 ** -10, 1 + 3 * 2 ** -8]);
    expect([...convertHalfBits(h, 'f16', 'bf16')]).toEqual([0x3f80, 0x3f82]);
    expect(convertHalfBits(h, 'f16', 'f16')).toBe(h);
  });

  it('roundToWeightDtype is exactly widen(round(x)); f32 is the identity', () => {
    const x = Float32Array.from([0.1, -3.3, 1e-6, 7e4, 1 / 3]);
    expect(roundToWeightDtype(x, 'f32')).toBe(x);
    expect(roundToWeightDtype(x, 'bf16')).toEqual(bf16BitsToF32(f32ToBf16Bits(x)));
    expect(roundToWeightDtype(x, 'f16')).toEqual(f16BitsToF32(f32ToF16Bits(x)));
    expect(roundToWeightDtype(x, 'f16')[3]).toBe(Infinity); // 7e4 > 65504: f16's range is the risk, not bf16's
    const bits = { dtype: 'bf16' as const, bits: f32ToBf16Bits(x) };
    expect(weightToF32(bits)).toEqual(roundToWeightDtype(x, 'bf16'));
    expect(weightToHalf(bits, 'bf16')).toBe(bits.bits);
    expect(weightToHalf(x, 'f16')).toEqual(f32ToF16Bits(x));
  });

  it('stores the matrices half and the vectors f32, and counts the bytes as GpuContext allocates them', () => {
    expect(storesHalf([4, 3])).toBe(true);
    expect(storesHalf([12])).toBe(false);
    const shapes = [{ shape: [7, 3] }, { shape: [5] }];
    // 21 halves = 42 bytes -> 48; 5 f32 = 20 -> 32. In f32: 84 -> 96, and 32.
    expect(storedWeightBytes(shapes, 'bf16')).toBe(48 + 32);
    expect(storedWeightBytes(shapes, 'f32')).toBe(96 + 32);
  });

  it("resolves weight_dtype 'auto' from what fits at 4 bytes a weight; an explicit choice stays", () => {
    const asked: number[] = [];
    expect(resolveWeightDtype('auto', (b) => (asked.push(b), true))).toBe('f32');
    expect(resolveWeightDtype('auto', () => false)).toBe('bf16');
    expect(resolveWeightDtype('f16', () => true)).toBe('f16');
    expect(asked).toEqual([4]);
  });

  it('bounds a dot product over half weights by u sum |a w| plus the f32 slack', () => {
    expect(halfDotBound('bf16', 64, 1e-6)).toBe(64 * 2 ** -8 + 1e-6);
    expect(halfDotBound('f16', 64, 0)).toBe(64 * 2 ** -11);
  });
});
