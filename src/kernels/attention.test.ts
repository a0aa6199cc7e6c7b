// GPU-vs-twin tier for shaders/attention.wgsl: every case in attention.cases.ts runs the real WGSL through Dawn
// (SwiftShader on machines without a GPU) and is compared with src/reference/attention.ts. Never skips.

import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import {
  ROWS_LAVAPIPE_MAX_REGISTER_VEC4,
  ROWS_MAX_LOOPED_VEC4,
  ROWS_MAX_REGISTER_VEC4,
  attentionBackward,
  attentionForward,
  rowsForm,
  rowsPerThread,
  rowsRegisterBound,
} from './attention';
import { vulkanDriverOf } from '../gpu/vulkan-drivers';
import { attentionCases } from './attention.cases';
import { itEachCaseMatchesTwin, useDefaultLimitsDevice, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

const cases = attentionCases();

describe('attention kernels on the GPU match their CPU twin', () => {
  it('covers forward and backward', () => {
    expect(cases.some((c) => c.name.startsWith('attentionForward'))).toBe(true);
    expect(cases.some((c) => c.name.startsWith('attentionBackward'))).toBe(true);
  });
  itEachCaseMatchesTwin(gpu, cases, { logResults: true });
});

describe('attention within WebGPU default limits', () => {
  // The engine requests the adapter's maxStorageBuffersPerShaderStage (12 on SwiftShader), but a browser
  // adapter may offer only WebGPU's default of 8: every entry point must fit it (dk/dv binds exactly 8).
  const small = useDefaultLimitsDevice(gpu);

  it('runs every padded and cached case on a device with 8 storage buffers per stage', async () => {
    const dev = small.ctx;
    const limit = (c: GpuContext) => c.device.limits.maxStorageBuffersPerShaderStage;
    console.log(`storage buffers per stage: engine device ${limit(gpu.ctx)}, default-limits device ${limit(dev)}`);
    expect(dev.device.limits.maxStorageBuffersPerShaderStage).toBe(8);
    const subset = cases.filter((c) => /kvStart|Tcap|B=2 T=5 NH=4/.test(c.name));
    expect(subset.length).toBeGreaterThanOrEqual(12);
    for (const c of subset) {
      const r = await c.run(dev);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    }
    await dev.flush();
  });
});

describe('attention-rows rows per thread', () => {
  it('keeps 4 rows a thread to head dim 16, then halves them to stay within the register bound', () => {
    const at = (HD: number) => rowsPerThread(64, HD);
    expect([4, 8, 12, 16, 20, 32, 36, 64].map(at)).toEqual([4, 4, 4, 4, 2, 2, 1, 1]);
    for (const HD of [4, 16, 20, 32, 36, 64]) expect(at(HD) * (HD / 4)).toBeLessThanOrEqual(ROWS_MAX_REGISTER_VEC4);
    expect(rowsPerThread(1, 8)).toBe(1); // a decode step's single query
    expect(rowsPerThread(3, 8)).toBe(1);
  });

  it('gives the looped form 4 rows a thread to head dim 8, 2 to 16, then 1, up to head dim 128', () => {
    const at = (HD: number) => rowsPerThread(64, HD, ROWS_MAX_LOOPED_VEC4);
    expect([4, 8, 12, 16, 20, 32, 64, 128].map(at)).toEqual([4, 4, 2, 2, 1, 1, 1, 1]);
    for (const HD of [4, 8, 16, 32]) expect(at(HD) * (HD / 4)).toBeLessThanOrEqual(ROWS_MAX_LOOPED_VEC4);
    expect(rowsPerThread(1, 128, ROWS_MAX_LOOPED_VEC4)).toBe(1);
  });

  it("keeps lavapipe's registers form to 2 rows a thread at head dim 12 and 1 row to head dim 24", () => {
    const at = (HD: number) => rowsPerThread(64, HD, ROWS_LAVAPIPE_MAX_REGISTER_VEC4);
    expect([4, 8, 12, 16, 24].map(at)).toEqual([4, 2, 2, 1, 1]);
  });

  it('takes the registers form while a row fits the register bound (head dim 64, 24 on lavapipe), else the looped', () => {
    const lavapipe = vulkanDriverOf(gpu.ctx.report) === 'lavapipe';
    expect(rowsRegisterBound(gpu.ctx)).toBe(lavapipe ? ROWS_LAVAPIPE_MAX_REGISTER_VEC4 : ROWS_MAX_REGISTER_VEC4);
    expect(rowsForm(gpu.ctx, 12)).toBe('registers');
    expect(rowsForm(gpu.ctx, 24)).toBe('registers');
    expect(rowsForm(gpu.ctx, 28)).toBe(lavapipe ? 'looped' : 'registers');
    expect(rowsForm(gpu.ctx, 64)).toBe(lavapipe ? 'looped' : 'registers');
    expect(rowsForm(gpu.ctx, 68)).toBe('looped');
    expect(rowsForm(gpu.ctx, 128)).toBe('looped');
  });
});

describe('attention wrapper checks', () => {
  it('rejects a kvStart of the wrong size or dtype and keys beyond the key tensor', () => {
    const q = gpu.ctx.tensor([2, 3, 2, 4]);
    const k = gpu.ctx.tensor([2, 5, 1, 4]);
    const out = gpu.ctx.tensor(q.shape);
    const lse = gpu.ctx.tensor([2, 2, 3]);
    const rec = gpu.ctx.recorder('attention checks');
    try {
      expect(() =>
        attentionForward(rec, out, lse, q, k, k, { kvStart: gpu.ctx.tensor([3], { dtype: 'u32' }) }),
      ).toThrow(/kvStart/);
      expect(() => attentionForward(rec, out, lse, q, k, k, { kvStart: gpu.ctx.tensor([2]) as never })).toThrow(
        /kvStart/,
      );
      expect(() => attentionForward(rec, out, lse, q, k, k, { keys: 6 })).toThrow(/keys=6/);
      expect(() => attentionForward(rec, out, lse, q, k, k, { keys: 2 })).toThrow(/2 key positions for 3/);
      expect(() => attentionBackward(rec, out, k, k, out, q, k, k, out, lse, { keys: 6 })).toThrow(/keys=6/);
      // The rows path needs HD % 4 == 0 and HD <= 128; asked for elsewhere it says so instead of computing garbage.
      const q6 = gpu.ctx.tensor([2, 3, 2, 6]);
      const k6 = gpu.ctx.tensor([2, 3, 1, 6]);
      expect(() => attentionForward(rec, gpu.ctx.tensor(q6.shape), lse, q6, k6, k6, { path: 'rows' })).toThrow(
        /path 'rows' needs a head dim that divides by 4/,
      );
      const lse1 = gpu.ctx.tensor([1, 1, 3]);
      const q132 = gpu.ctx.tensor([1, 3, 1, 132]);
      expect(() => attentionForward(rec, gpu.ctx.tensor(q132.shape), lse1, q132, q132, q132, { path: 'rows' })).toThrow(
        /at most 128, got 132/,
      );
      const q68 = gpu.ctx.tensor([1, 3, 1, 68]);
      expect(() =>
        attentionForward(rec, gpu.ctx.tensor(q68.shape), lse1, q68, q68, q68, { path: 'rows', rowsForm: 'registers' }),
      ).toThrow(/rowsForm 'registers' holds at most 16 vec4/);
    } finally {
      rec.submit();
    }
    expect(rec.dispatchCount).toBe(0);
  });
});
