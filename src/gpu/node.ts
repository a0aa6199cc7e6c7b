// Node entry to WebGPU: Dawn through the `webgpu` package. The only file that imports it, and it is
// imported only by Node code (CLI, tests, benchmarks), never by the page.

import { existsSync } from 'node:fs';
import { acquireDevice, type AcquireOptions } from './adapter';
import type { GpuContext } from './context';
import { WebGpuUnavailableError, nodeWebGpuAdvice } from './errors';

/** Chromium's SwiftShader Vulkan driver, used when no other Vulkan driver is configured. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

let dawnInstance: GPU | undefined;

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
  // One Dawn instance per process, held for the process's lifetime: if it is garbage-collected while a device
  // lives, Dawn's event processing touches freed state and the process aborts.
  dawnInstance ??= webgpu.create([]);
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
