// The test device's driver choice (RL_LAB_TEST_DRIVER): a known name picks that driver, an unknown one is refused,
// and an adapter that is not the named driver fails instead of passing as it. No device: reports stand in for one.

import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { VULKAN_DRIVERS, assertVulkanDriver } from '../gpu/node';
import { requestedTestDriver } from './test-device';

const withAdapter = (description: string, vendor = '') =>
  ({ report: { vendor, architecture: '', device: '', description } }) as unknown as GpuContext;

describe('the test device driver', () => {
  it('reads RL_LAB_TEST_DRIVER', () => {
    expect(requestedTestDriver({})).toBeUndefined();
    expect(requestedTestDriver({ RL_LAB_TEST_DRIVER: 'lavapipe' })).toBe('lavapipe');
    expect(() => requestedTestDriver({ RL_LAB_TEST_DRIVER: 'radv' })).toThrow(/RL_LAB_TEST_DRIVER=radv/);
  });

  it('accepts the named driver and refuses another adapter', () => {
    const lvp = withAdapter('llvmpipe (LLVM 15.0.6)', 'mesa');
    const ss = withAdapter('SwiftShader Device (Subzero)', 'google');
    expect(() => assertVulkanDriver(lvp, 'lavapipe')).not.toThrow();
    expect(() => assertVulkanDriver(ss, 'swiftshader')).not.toThrow();
    expect(() => assertVulkanDriver(ss, 'lavapipe')).toThrow(/asked for the lavapipe Vulkan driver/);
    expect(VULKAN_DRIVERS.lavapipe.icd).toMatch(/lvp_icd\.json$/);
  });
});
