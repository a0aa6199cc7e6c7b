// The variant matmul() runs by default (defaultVariantFor): the tuned tile stepped down for products with few rows
// (a decode step), never for training-sized ones, and never to a variant that cannot take the shape.

import { describe, expect, it } from 'vitest';
import { defaultVariantFor } from './matmul';

describe('defaultVariantFor', () => {
  const decode = (M: number) => ({ M, N: 1536, K: 576, transB: true });
  it('steps a tall or square tile down for few rows: wide at 64 rows, vec4 at 32 or fewer', () => {
    expect(defaultVariantFor('tall', decode(64))).toBe('wide');
    expect(defaultVariantFor('square', decode(64))).toBe('wide');
    expect(defaultVariantFor('tall', decode(4))).toBe('vec4');
    expect(defaultVariantFor('wide', decode(1))).toBe('vec4');
    expect(defaultVariantFor('wide', decode(33))).toBe('wide');
  });
  it('keeps the tuned tile for training-sized products and variants without a row tile', () => {
    expect(defaultVariantFor('tall', decode(65))).toBe('tall');
    expect(defaultVariantFor('tall', decode(1024))).toBe('tall');
    expect(defaultVariantFor('blocked', decode(1))).toBe('blocked');
    expect(defaultVariantFor('tiled', decode(1))).toBe('tiled');
    expect(defaultVariantFor('tiled128', decode(65))).toBe('tiled128');
  });
  it('steps the 128-row tile down to the 64-row one for 64 rows or fewer (both sum one k at a time)', () => {
    expect(defaultVariantFor('tiled128', decode(64))).toBe('tiled');
    expect(defaultVariantFor('tiled128', decode(1))).toBe('tiled');
  });
  it('stops where the smaller tile cannot take the shape, then falls back as variantFor does', () => {
    // K = 3: no vec4 operands for A*B^T, so no tile variant at all.
    expect(defaultVariantFor('tall', { M: 4, N: 8, K: 3, transB: true })).toBe('blocked');
    // A*B with N = 8 (divisible by 4) and K = 3: wide takes it through scalar A loads, vec4 does not.
    expect(defaultVariantFor('tall', { M: 4, N: 8, K: 3 })).toBe('wide');
  });
});
