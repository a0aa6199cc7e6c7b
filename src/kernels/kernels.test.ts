// GPU-vs-twin tier for the families without a test file of their own (attention, layers, head and objective
// cases run in their own files): every case runs the real WGSL through Dawn (SwiftShader on machines without a GPU)
// and is compared with its CPU twin. A missing adapter fails the suite with the reason; it never skips.

import { describe, expect, it } from 'vitest';
import { coreCases, kernelCases } from './cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

const cases = coreCases();

describe('kernels on the GPU match their CPU twins', () => {
  it('has at least 30 cases, every one named uniquely', () => {
    const all = kernelCases();
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect(new Set(all.map((c) => c.name)).size).toBe(all.length);
  });
  itEachCaseMatchesTwin(gpu, cases);
});
