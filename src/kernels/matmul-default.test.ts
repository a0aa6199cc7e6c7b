// The variant matmul() runs by default (defaultVariantFor): the tuned tile stepped down for products too small for
// it, with rows that would fill at most half of an invocation's tile (a decode step) or columns that leave most of
// SwiftShader's lanes idle (a LoRA adapter's rank), never for training-sized ones, and never to a variant that cannot
// take the shape.

import { describe, expect, it } from 'vitest';
import { defaultVariantFor } from './matmul';

describe('defaultVariantFor', () => {
  const rows = (M: number) => ({ M, N: 1536, K: 576, transB: true });
  it('steps a tall or square tile down for few rows: wide at 8 rows or fewer, vec4 at 4 or fewer', () => {
    expect(defaultVariantFor('square', rows(8))).toBe('wide');
    expect(defaultVariantFor('tall', rows(5))).toBe('wide');
    expect(defaultVariantFor('tall', rows(4))).toBe('vec4');
    expect(defaultVariantFor('square', rows(1))).toBe('vec4');
    expect(defaultVariantFor('wide', rows(1))).toBe('vec4');
    expect(defaultVariantFor('wide', rows(5))).toBe('wide');
  });
  it('keeps the tuned tile from 9 rows on: a 16-row tile three-quarters full is still the fastest', () => {
    expect(defaultVariantFor('square', rows(9))).toBe('square');
    expect(defaultVariantFor('square', rows(12))).toBe('square');
    expect(defaultVariantFor('tall', rows(64))).toBe('tall');
    expect(defaultVariantFor('tall', rows(1024))).toBe('tall');
  });
  it('steps down where a smaller tile puts 1.5 times the share of the lanes to work across the columns', () => {
    // A LoRA rank of 16 at 160 rows, in each layout: a quarter of a 16-wide tile's lanes, half of an 8-wide one's.
    expect(defaultVariantFor('square', { M: 160, N: 16, K: 576, transB: true })).toBe('vec4'); // x A^T
    expect(defaultVariantFor('square', { M: 1536, N: 16, K: 160, transA: true })).toBe('vec4'); // dY^T xa
    expect(defaultVariantFor('square', { M: 160, N: 16, K: 1536 })).toBe('vec4'); // dY B
    // 48 columns (nano's width): three quarters of the lanes in either tile, so the 16-wide one stays.
    expect(defaultVariantFor('square', { M: 1024, N: 48, K: 128 })).toBe('square');
    expect(defaultVariantFor('square', { M: 1024, N: 48, K: 48, transB: true })).toBe('square');
    expect(defaultVariantFor('square', { M: 1024, N: 64, K: 48, transB: true })).toBe('square');
    // 24 columns (nano's k and v): 3/8 of the 16-wide tile's lanes, 3/4 of the 8-wide tile's and of vec4's.
    expect(defaultVariantFor('square', { M: 1024, N: 24, K: 48, transB: true })).toBe('wide');
    // 96 columns: 3/4 against all of them (1.33x): the 16-wide tile stays.
    expect(defaultVariantFor('square', { M: 1024, N: 96, K: 64, transB: true })).toBe('square');
    // The rank's transpose (dXa^T x: 16 rows, 576 columns) keeps the 16-row tile.
    expect(defaultVariantFor('square', { M: 16, N: 576, K: 160, transA: true })).toBe('square');
  });
  it('steps down where the tile makes one workgroup and the smaller one several (a CPU adapter runs one per core)', () => {
    // Nano's weight gradients: 128 x 48 and 48 x 128 are one 128 x 128 workgroup of the 16x16 tile, two of the 8x8.
    expect(defaultVariantFor('square', { M: 128, N: 48, K: 1024, transA: true })).toBe('wide');
    expect(defaultVariantFor('square', { M: 48, N: 128, K: 1024, transA: true })).toBe('wide');
    // 48 x 48 is one workgroup of either: the 16x16 tile stays; so do two workgroups of it (micro's 176 x 64).
    expect(defaultVariantFor('square', { M: 48, N: 48, K: 1024, transA: true })).toBe('square');
    expect(defaultVariantFor('square', { M: 176, N: 64, K: 1024, transA: true })).toBe('square');
    // The 8x8 tile of one workgroup (64 x 64) steps to vec4's four (4.63 and 4.58 ms there: a tie).
    expect(defaultVariantFor('wide', { M: 64, N: 64, K: 1024, transA: true })).toBe('vec4');
  });
  it('keeps variants without a register tile', () => {
    expect(defaultVariantFor('blocked', rows(1))).toBe('blocked');
    expect(defaultVariantFor('tiled', rows(1))).toBe('tiled');
    expect(defaultVariantFor('tiled128', rows(65))).toBe('tiled128');
  });
  it('steps the 128-row tile down to the 64-row one for 64 rows or fewer (both sum one k at a time)', () => {
    expect(defaultVariantFor('tiled128', rows(64))).toBe('tiled');
    expect(defaultVariantFor('tiled128', rows(1))).toBe('tiled');
  });
  it('stops where the smaller tile cannot take the shape, then falls back as variantFor does', () => {
    // K = 3: no vec4 operands for A*B^T, so no tile variant at all.
    expect(defaultVariantFor('tall', { M: 4, N: 8, K: 3, transB: true })).toBe('blocked');
    // A*B with N = 8 (divisible by 4) and K = 3: wide takes it through scalar A loads, vec4 does not.
    expect(defaultVariantFor('tall', { M: 4, N: 8, K: 3 })).toBe('wide');
  });
});
