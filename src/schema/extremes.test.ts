// maxOf/minOf agree with Math.max/Math.min on short lists (empty, NaN, -0 aside) and work where spreading fails.
import { describe, expect, it } from 'vitest';
import { maxOf, minOf } from './extremes';

describe('maxOf and minOf', () => {
  it('agree with Math.max and Math.min', () => {
    for (const xs of [[3], [1, 5, 2], [-1, -7, -3], [0.5, Infinity], [-Infinity, 2]]) {
      expect(maxOf(xs)).toBe(Math.max(...xs));
      expect(minOf(xs)).toBe(Math.min(...xs));
    }
    expect(maxOf([])).toBe(-Infinity);
    expect(minOf([])).toBe(Infinity);
    expect(maxOf([], 0)).toBe(0);
    expect(maxOf([1, NaN, 2])).toBeNaN();
    expect(minOf([1, NaN, 2])).toBeNaN();
  });

  it('take lists far longer than a call can spread', () => {
    const big = Array.from({ length: 1_000_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(() => Math.max(...big)).toThrow(RangeError);
    expect(maxOf(big)).toBe(big.reduce((a, b) => Math.max(a, b)));
    expect(minOf(Float32Array.from(big))).toBe(0);
  });
});
