// Node entry to WebGPU: Dawn through the `webgpu` package. The only file that imports it, and it is
// imported only by Node code (CLI, tests, benchmarks), never by the page.

import { existsSync } from 'node:fs';
import { acquireDevice, type AcquireOptions } from './adapter';
import { backOffDawnPolling } from './dawn-polling';
import type { GpuContext } from './context';
import { WebGpuUnavailableError, nodeWebGpuAdvice } from './errors';
import { SWIFTSHADER_ICD, VULKAN_DRIVERS, adapterInfoText, vulkanDriverOf, type VulkanDriver } from './vulkan-drivers';

export { SWIFTSHADER_ICD, VULKAN_DRIVERS, isVulkanDriver, type VulkanDriver } from './vulkan-drivers';

/**
 * Points this process's Vulkan loader at one driver (before the first device is acquired). Throws, naming the
 * file and the fix, when the driver is not installed: a missing driver never falls back to another one.
 */
export function useVulkanDriver(driver: VulkanDriver): void {
  const { icd } = VULKAN_DRIVERS[driver];
  if (!existsSync(icd))
    throw new WebGpuUnavailableError(
      `the ${driver} Vulkan driver is not installed (${icd} is missing): run \`npm run setup:system\` as root`,
    );
  if (dawnInstance && process.env.VK_ICD_FILENAMES !== icd)
    throw new Error(
      `useVulkanDriver(${driver}): Dawn already started on ${process.env.VK_ICD_FILENAMES ?? 'the default driver'}`,
    );
  process.env.VK_ICD_FILENAMES = icd;
}

/** Throws unless the context's adapter is `driver`'s (so a wrong or missing ICD cannot pass as the right one). */
export function assertVulkanDriver(ctx: GpuContext, driver: VulkanDriver): void {
  if (vulkanDriverOf(ctx.report) !== driver)
    throw new WebGpuUnavailableError(
      `asked for the ${driver} Vulkan driver (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? ''}) but the adapter is "${adapterInfoText(ctx.report).trim()}"`,
    );
}

let dawnInstance: GPU | undefined;

/**
 * Dawn's flags in Node. Timestamp quantization off: by default Dawn rounds GPU timestamps down to 2^16 ns (65.5 µs,
 * against timing attacks in browsers), which on a real GPU turns most kernels' timings into 0 or 65.5 µs and the
 * matmul autotune's ranking into noise. A Node process runs no foreign code, so the bench and the autotune get
 * the driver's timestamps (checked: resolved timestamps stop being multiples of 65,536 ns). The page keeps the
 * browser's quantization (the page's kernel tables on a real GPU remain coarse).
 */
export const DAWN_FLAGS = ['disable-dawn-features=timestamp_quantization'];

/**
 * Acquires a device through Dawn. When VK_ICD_FILENAMES is unset and SwiftShader is installed, points the
 * Vulkan loader at it, so a machine without a GPU still runs the real WGSL.
 */
export async function acquireNodeDevice(options: Omit<AcquireOptions, 'gpu' | 'runtime'> = {}): Promise<GpuContext> {
  if (!process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES && existsSync(SWIFTSHADER_ICD)) {
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  let webgpu: typeof import('webgpu');
  try {
    webgpu = await import('webgpu');
  } catch (e) {
    throw new WebGpuUnavailableError(
      `Could not load the webgpu package (${(e as Error).message}). ${nodeWebGpuAdvice}`,
    );
  }
  Object.assign(globalThis, webgpu.globals);
  backOffDawnPolling();
  // One Dawn instance per process, held for the process's lifetime: if it is garbage-collected while a device
  // lives, Dawn's event processing touches freed state and the process aborts.
  dawnInstance ??= webgpu.create(DAWN_FLAGS);
  const gpu = dawnInstance;
  try {
    return await acquireDevice({ ...options, gpu, runtime: 'node' });
  } catch (e) {
    if (e instanceof WebGpuUnavailableError)
      throw new WebGpuUnavailableError(`No WebGPU adapter in Node. ${nodeWebGpuAdvice}`);
    throw e;
  }
}

/**
 * Exposes the process's Dawn instance as navigator.gpu, for libraries that look for it there (TensorFlow.js's
 * WebGPU backend checks it before wrapping a device; jax-js also reads navigator.userAgent: the benchmark's
 * peers). Call after acquireNodeDevice. Node 20 has no navigator; Node 21+ has one (with userAgent) without gpu.
 * Leaves an existing navigator.gpu alone.
 */
export function installNavigatorGpu(): void {
  if (!dawnInstance) throw new Error('installNavigatorGpu: call acquireNodeDevice first');
  const g = globalThis as { navigator?: { gpu?: GPU } };
  const userAgent = `Node.js/${process.versions.node}`;
  if (!g.navigator)
    Object.defineProperty(globalThis, 'navigator', {
      value: { gpu: dawnInstance, userAgent },
      configurable: true,
      writable: true,
    });
  else if (!g.navigator.gpu) Object.defineProperty(g.navigator, 'gpu', { value: dawnInstance, configurable: true });
}
