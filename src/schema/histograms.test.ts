// The histograms' declared bins and the counting rule: edges increase, the end bins are open, NaN and excluded values
// are not counted, an empty input gives all-zero bins, and the labels name each bin.

import { describe, expect, it } from 'vitest';
import { HISTOGRAMS, HISTOGRAM_IDS, binLabel, binOf, histogramCounts } from './histograms';

describe('histogram bins', () => {
  it('every declared histogram has increasing edges', () => {
    for (const id of HISTOGRAM_IDS) {
      const e = HISTOGRAMS[id].edges;
      expect(e.length, id).toBeGreaterThanOrEqual(3);
      for (let i = 1; i < e.length; i++) expect(e[i], `${id} edge ${i}`).toBeGreaterThan(e[i - 1]);
    }
  });
  it('the advantage histogram has a bin of its own around 0', () => {
    const e = HISTOGRAMS.advantage.edges;
    const b = binOf(e, 0);
    expect(e[b]).toBeLessThan(0);
    expect(e[b + 1]).toBeGreaterThan(0);
    expect(binOf(e, 0.3)).not.toBe(b);
    expect(binOf(e, -0.3)).not.toBe(b);
  });
});

describe('binOf', () => {
  const edges = [0, 1, 2, 4];
  it('puts a value in [e_k, e_k+1)', () => {
    expect(binOf(edges, 0)).toBe(0);
    expect(binOf(edges, 0.999)).toBe(0);
    expect(binOf(edges, 1)).toBe(1);
    expect(binOf(edges, 3.5)).toBe(2);
  });
  it('has open end bins', () => {
    expect(binOf(edges, -5)).toBe(0);
    expect(binOf(edges, 4)).toBe(2);
    expect(binOf(edges, 1e9)).toBe(2);
    expect(binOf(edges, Infinity)).toBe(2);
  });
  it('gives NaN no bin', () => {
    expect(binOf(edges, NaN)).toBe(-1);
  });
});

describe('histogramCounts', () => {
  it('counts the included values, NaN left out', () => {
    expect(histogramCounts([0, 1, 2, 4], [0.5, 1.5, 3, 10, NaN, 0.2], [1, 1, 1, 1, 1, 0])).toEqual([1, 1, 2]);
  });
  it('gives all-zero bins for no values', () => {
    expect(histogramCounts([0, 1, 2], [])).toEqual([0, 0]);
  });
  it('puts tied values in one bin', () => {
    expect(histogramCounts([0, 1, 2], [1, 1, 1])).toEqual([0, 3]);
  });
  it('refuses fewer than two edges', () => {
    expect(() => histogramCounts([0], [1])).toThrow(/2 edges/);
  });
});

describe('binLabel', () => {
  it('names inner bins by their interval and the open ends by their bound', () => {
    expect(binLabel([0, 1, 2, 4], 0)).toBe('[0, 1)');
    expect(binLabel([0, 1, 2, 4], 1)).toBe('[1, 2)');
    expect(binLabel([0, 1, 2, 4], 2)).toBe('≥ 2');
    expect(binLabel([-2, -1, 1, 2], 0)).toBe('< -1');
  });
});
