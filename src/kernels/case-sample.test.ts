// The browser self-test's subset of the kernel cases (case-sample.ts): every family and every matmul variant and
// layout is in it, at about one case in SAMPLE_STRIDE, in the list's order.

import { describe, expect, it } from 'vitest';
import { kernelCases } from './cases';
import { SAMPLE_STRIDE, sampleCases } from './case-sample';
import { MATMUL_VARIANTS } from './matmul';

describe('sampleCases', () => {
  const all = kernelCases();
  const sample = sampleCases(all);

  it("takes each family's first case and every SAMPLE_STRIDE-th after it, in the list's order", () => {
    const families = [...new Set(all.map((c) => c.family))];
    for (const family of families) {
      const of = all.filter((c) => c.family === family);
      expect(sample.filter((c) => c.family === family)).toEqual(of.filter((_, i) => i % SAMPLE_STRIDE === 0));
    }
    expect(sample.map((c) => all.indexOf(c))).toEqual([...sample.map((c) => all.indexOf(c))].sort((a, b) => a - b));
    expect(sample.length).toBeLessThanOrEqual(Math.ceil(all.length / SAMPLE_STRIDE) + families.length);
  });

  it('samples every matmul variant and every layout', () => {
    const names = sample.filter((c) => c.family === 'matmul').map((c) => c.name);
    for (const variant of MATMUL_VARIANTS)
      expect(
        names.some((n) => n.startsWith(`matmul ${variant} `)),
        variant,
      ).toBe(true);
    for (const layout of ['A*B ', 'A*B^T ', 'A^T*B '])
      expect(
        names.some((n) => n.includes(` ${layout}`)),
        layout,
      ).toBe(true);
  });

  it('is every case at stride 1, and refuses a stride below 1', () => {
    expect(sampleCases(all, 1)).toEqual(all);
    expect(() => sampleCases(all, 0)).toThrow(/stride/);
  });
});
