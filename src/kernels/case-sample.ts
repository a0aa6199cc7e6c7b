// The kernel self-test's representative subset: from each family, its first case and then every SAMPLE_STRIDE-th
// case in list order. Every family is in it, and since each family's list walks its variants, layouts and shapes in
// order (matmul: variant, then layout, then shape), the stride samples across all of them (every matmul variant,
// every layout). The browser tier runs this subset (e2e/selftest.spec.ts opens /?selftest&sample); the page's button
// at /?selftest, `npm run selftest` and the kernel test files in Node run every case.

/**
 * One case of every this many in each family (1,410 cases give 81; src/kernels/case-sample.test.ts checks every
 * matmul variant and layout is among them).
 */
export const SAMPLE_STRIDE = 20;

/** The cases at positions 0, stride, 2 stride, ... of each family, in their original order. */
export function sampleCases<T extends { family: string }>(cases: readonly T[], stride = SAMPLE_STRIDE): T[] {
  if (!Number.isInteger(stride) || stride < 1) throw new Error(`sample stride must be a whole number >= 1: ${stride}`);
  const seen = new Map<string, number>();
  return cases.filter((c) => {
    const index = seen.get(c.family) ?? 0;
    seen.set(c.family, index + 1);
    return index % stride === 0;
  });
}
