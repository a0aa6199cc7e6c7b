// GPU-vs-twin tier: every kernel case runs the real WGSL through Dawn (SwiftShader on machines without a GPU)
// and is compared with its CPU twin. A missing adapter fails the suite with the reason; it never skips.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { kernelCases } from './cases';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  console.log(`adapter: ${describeAdapter(ctx.report)}`);
});

afterAll(() => ctx?.destroy());

const cases = kernelCases();

describe('kernels on the GPU match their CPU twins', () => {
  it('has at least 30 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(ctx);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
});
