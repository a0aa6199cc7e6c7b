// compareArrays's conditioning-aware bound (sumTerms): a sum of mixed signs whose result cancels may differ by
// rounding ∝ Σ|terms| in another summation order, while a wrong sum still fails and a well-conditioned sum gets a
// bound tighter than the old fixed rtol of 1e-5.

import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { F32_EPS, compareArrays, conditionedBound } from './compare';

/** The f32 sum of xs in the given order (every partial sum rounded to f32, as a GPU lane does). */
function f32Sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s = Math.fround(s + x);
  return s;
}

describe('compareArrays with sumTerms', () => {
  const rng = new Rng(3);
  const K = 1023;
  const xs = Array.from({ length: K }, () => Math.fround(rng.uniform(-1, 1)));
  const exact = xs.reduce((a, b) => a + b, 0);
  const magnitude = xs.reduce((a, b) => a + Math.abs(b), 0);
  const reversed = f32Sum([...xs].reverse());
  const forward = f32Sum(xs);

  it('passes another summation order of a cancelling sum', () => {
    const want = [Math.fround(exact)];
    const c = compareArrays([reversed], want, { atol: 0, rtol: F32_EPS, sumTerms: K }, [magnitude]);
    expect(c.pass, c.summary).toBe(true);
    expect(compareArrays([forward], want, { atol: 0, rtol: F32_EPS, sumTerms: K }, [magnitude]).pass).toBe(true);
  });

  it('fails a sum missing one term, and a NaN', () => {
    const dropped = [f32Sum(xs.slice(1))];
    const tol = { atol: 0, rtol: F32_EPS, sumTerms: K };
    expect(Math.abs(xs[0])).toBeGreaterThan(conditionedBound(K, magnitude));
    expect(compareArrays(dropped, [Math.fround(exact)], tol, [magnitude]).pass).toBe(false);
    expect(compareArrays([Number.NaN], [Math.fround(exact)], tol, [magnitude]).pass).toBe(false);
  });

  it('is tighter than rtol 1e-5 for a sum of one sign', () => {
    const positive = xs.map(Math.abs);
    const sum = positive.reduce((a, b) => a + b, 0);
    expect(conditionedBound(K, sum)).toBeLessThan(1e-5 * sum);
  });

  it('needs one magnitude per element', () => {
    expect(() => compareArrays([1], [1], { atol: 0, rtol: 0, sumTerms: 4 })).toThrow(/one magnitude/);
  });
});
