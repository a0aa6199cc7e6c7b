// GPU-vs-twin tier for shaders/attention.wgsl: every case in attention.cases.ts runs the real WGSL through Dawn
// (SwiftShader on machines without a GPU) and is compared with src/reference/attention.ts. Never skips.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { attentionCases } from './attention.cases';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  console.log(`adapter: ${describeAdapter(ctx.report)}`);
});

afterAll(() => ctx?.destroy());

const cases = attentionCases();

describe('attention kernels on the GPU match their CPU twin', () => {
  it('covers forward and backward', () => {
    expect(cases.some((c) => c.name.startsWith('attentionForward'))).toBe(true);
    expect(cases.some((c) => c.name.startsWith('attentionBackward'))).toBe(true);
  });
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(ctx);
      console.log(`${r.name}: ${r.summary} (${r.ms.toFixed(1)} ms)`);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
});
