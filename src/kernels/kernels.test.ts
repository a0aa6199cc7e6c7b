// GPU-vs-twin tier for the families without a test file of their own (attention, layers, head and objective
// cases run in their own files): every case runs the real WGSL through Dawn (SwiftShader on machines without a GPU)
// and is compared with its CPU twin. A missing adapter fails the suite with the reason; it never skips.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { coreCases, kernelCases } from './cases';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  console.log(`adapter: ${describeAdapter(ctx.report)}`);
});

afterAll(() => ctx?.destroy());

const cases = coreCases();

describe('kernels on the GPU match their CPU twins', () => {
  it('has at least 30 cases, every one named uniquely', () => {
    const all = kernelCases();
    expect(all.length).toBeGreaterThanOrEqual(30);
    expect(new Set(all.map((c) => c.name)).size).toBe(all.length);
  });
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(ctx);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
});
