// The decode bookkeeping kernels (shaders/decode.wgsl) within WebGPU's default limits: decode_finish binds 8 storage
// buffers (the completion buffers, the step's samples as one buffer and the decode cursor), so a browser adapter
// that offers only the default runs a rollout's every kernel outside the layers. Their GPU-vs-twin cases run in
// kernels.test.ts on the engine's device.

import { describe, expect, it } from 'vitest';
import { decodeCases } from './decode.cases';
import { useDefaultLimitsDevice, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

describe('decode kernels within WebGPU default limits', () => {
  const small = useDefaultLimitsDevice(gpu);

  it('runs every decode case, decode_finish with and without a cursor, on a device with 8 storage buffers per stage', async () => {
    const dev = small.ctx;
    expect(dev.device.limits.maxStorageBuffersPerShaderStage).toBe(8);
    const cases = decodeCases();
    expect(cases.filter((c) => c.name.startsWith('decodeFinish')).length).toBeGreaterThanOrEqual(4);
    for (const c of cases) {
      const r = await c.run(dev);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    }
    await dev.flush();
  });
});
