// The shared preamble of the GPU test files (Vitest in Node only: it imports vitest and Dawn): the device acquired
// before a file's tests and destroyed after them, and one test per GPU-vs-twin case. Not for the browser or CLI
// self-tests, which run the same cases through kernels/verify.ts's runKernelCases.
// Which Vulkan driver: RL_LAB_TEST_DRIVER (set per Vitest project in vite.config.ts: `slow` runs on SwiftShader,
// `lavapipe` runs the kernel and model files again on Mesa's lavapipe). A named driver that is missing, or an
// adapter that is not the named driver, fails the file loudly; nothing falls back to another driver.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeAdapter, GpuContext } from '../gpu';
import { acquireNodeDevice, assertVulkanDriver, isVulkanDriver, useVulkanDriver, type VulkanDriver } from '../gpu/node';
import type { KernelCase } from '../kernels/verify';

/** The file's device; `ctx` may be read in tests and hooks, which run after the acquisition. */
export interface TestDevice {
  readonly ctx: GpuContext;
  /** Whether the device has `shader-f16` (lavapipe has it, SwiftShader not): f16 paths test where it is true. */
  readonly hasF16: boolean;
  /** The driver the project asked for (RL_LAB_TEST_DRIVER), or undefined where none was named. */
  readonly driver: VulkanDriver | undefined;
}

/** The driver RL_LAB_TEST_DRIVER names; throws on a name that is not a known driver. */
export function requestedTestDriver(env: NodeJS.ProcessEnv = process.env): VulkanDriver | undefined {
  const name = env.RL_LAB_TEST_DRIVER;
  if (!name) return undefined;
  if (!isVulkanDriver(name))
    throw new Error(`RL_LAB_TEST_DRIVER=${name}: not a known Vulkan driver (swiftshader, lavapipe)`);
  return name;
}

/**
 * Acquires a test device on the requested driver (RL_LAB_TEST_DRIVER), checks the adapter is that driver and logs
 * it. Other test files that acquire devices of their own (acquireNodeDevice) share the process's driver.
 */
export async function acquireTestDevice(options: Parameters<typeof acquireNodeDevice>[0] = {}): Promise<GpuContext> {
  const driver = requestedTestDriver();
  if (driver) useVulkanDriver(driver);
  const ctx = await acquireNodeDevice(options);
  if (driver) assertVulkanDriver(ctx, driver);
  return ctx;
}

/**
 * Registers the file's device: acquired in beforeAll (its adapter logged), destroyed in afterAll. A missing
 * adapter or driver fails the file's tests with the reason; nothing is skipped.
 */
export function useNodeDevice(): TestDevice {
  let ctx: GpuContext | undefined;
  beforeAll(async () => {
    ctx = await acquireTestDevice();
    console.log(`adapter: ${describeAdapter(ctx.report)}`);
  });
  afterAll(() => ctx?.destroy());
  const get = (): GpuContext => {
    if (!ctx) throw new Error('the test device is acquired in beforeAll: read gpu.ctx inside a test or a hook');
    return ctx;
  };
  return {
    get ctx(): GpuContext {
      return get();
    },
    get hasF16(): boolean {
      return get().report.features.includes('shader-f16');
    },
    driver: requestedTestDriver(),
  };
}

/**
 * A second device with WebGPU's default limits (no limit raised: 8 storage buffers per shader stage, as a browser
 * adapter may give), for the kernels that must fit them; acquired in beforeAll, destroyed in afterAll. The engine's
 * own devices raise the limits to the adapter's (SwiftShader: 12 storage buffers), so kernels that bind more pass
 * there and fail here. `ctx` shares the file device's report.
 */
export function useDefaultLimitsDevice(gpu: Pick<TestDevice, 'ctx'>): Pick<TestDevice, 'ctx'> {
  let small: GpuContext | undefined;
  // Held for the file's lifetime: a Dawn instance collected while its device lives aborts the process.
  let dawn: GPU | undefined;
  beforeAll(async () => {
    const webgpu = await import('webgpu');
    dawn = webgpu.create([]);
    const adapter = await dawn.requestAdapter();
    if (!adapter) throw new Error('no adapter for the default-limits device');
    const device = await adapter.requestDevice({ label: 'default-limits' }); // no required limits: the defaults
    small = new GpuContext(device, gpu.ctx.report);
  });
  afterAll(() => {
    small?.destroy();
    expect(dawn).toBeDefined();
  });
  return {
    get ctx(): GpuContext {
      if (!small) throw new Error('the default-limits device is acquired in beforeAll');
      return small;
    },
  };
}

/**
 * One test per case, named after it: runs the case on the device and expects its outputs to match the CPU twin's,
 * with the case's summary as the failure message. `logResults` also prints every summary and its time.
 */
export function itEachCaseMatchesTwin(
  gpu: Pick<TestDevice, 'ctx'>,
  cases: readonly KernelCase[],
  opts: { logResults?: boolean } = {},
): void {
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(gpu.ctx);
      if (opts.logResults) console.log(`${r.name}: ${r.summary} (${r.ms.toFixed(1)} ms)`);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
}
