// Device acquisition for the browser and Node: requests the limits and features the engine needs and
// describes what it got. Takes a GPU object (navigator.gpu, or Dawn's from ./node.ts); knows nothing of kernels.

import { GpuContext } from './context';
import { WebGpuUnavailableError, browserWebGpuAdvice } from './errors';

export { describeAdapter } from '../schema/adapter-text';

/** Features the engine uses when the adapter has them; none is required. */
export const OPTIONAL_FEATURES: readonly GPUFeatureName[] = ['timestamp-query', 'shader-f16', 'subgroups'];

/** Limits the engine raises to the adapter's maximum (buffers for model weights, workgroup memory for tiles). */
export const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

export type RaisedLimit = (typeof RAISED_LIMITS)[number];

/** What the engine knows about the adapter and device it runs on; shown by the page and the CLI. */
export interface AdapterReport {
  /** 'browser' (navigator.gpu) or 'node' (Dawn through the webgpu package). */
  runtime: 'browser' | 'node';
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for software adapters such as SwiftShader: correct, but 100-1000x slower than a GPU. */
  isFallbackAdapter: boolean;
  /** Features enabled on the device (a subset of OPTIONAL_FEATURES). */
  features: string[];
  /** The limits obtained on the device for the limits the engine raises. */
  limits: Record<RaisedLimit, number>;
}

export interface AcquireOptions {
  /** The GPU entry point; defaults to navigator.gpu. */
  gpu?: GPU;
  runtime?: 'browser' | 'node';
  powerPreference?: GPUPowerPreference;
  /** Request the fallback (software) adapter explicitly. */
  forceFallbackAdapter?: boolean;
  /**
   * Optional features the device is created without even where the adapter has them, so that a device with
   * subgroups can run the code of one without (the tests and the self-test run both variants of the row kernels).
   */
  withoutFeatures?: readonly GPUFeatureName[];
}

/**
 * Requests an adapter and a device with the engine's limits and optional features, and wraps them in a
 * GpuContext. Throws WebGpuUnavailableError with actionable advice when WebGPU or an adapter is missing.
 */
export async function acquireDevice(options: AcquireOptions = {}): Promise<GpuContext> {
  const runtime = options.runtime ?? 'browser';
  const gpu = options.gpu ?? (typeof navigator !== 'undefined' ? navigator.gpu : undefined);
  const userAgent = typeof navigator !== 'undefined' ? navigator.userAgent : '';
  if (!gpu) {
    throw new WebGpuUnavailableError(
      `This browser does not expose WebGPU (navigator.gpu is missing). ${browserWebGpuAdvice(userAgent)}`,
    );
  }
  const adapter = await gpu.requestAdapter({
    powerPreference: options.powerPreference ?? 'high-performance',
    forceFallbackAdapter: options.forceFallbackAdapter ?? false,
  });
  if (!adapter) {
    throw new WebGpuUnavailableError(
      `WebGPU is present but no GPU adapter is available (it may be blocklisted or disabled). ${browserWebGpuAdvice(userAgent)}`,
    );
  }
  const features = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f) && !options.withoutFeatures?.includes(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
  const device = await adapter.requestDevice({
    label: 'rl-lab',
    requiredFeatures: features,
    requiredLimits,
  });
  const info = adapter.info;
  const limits = {} as Record<RaisedLimit, number>;
  for (const name of RAISED_LIMITS) limits[name] = device.limits[name];
  const report: AdapterReport = {
    runtime,
    vendor: info.vendor || 'unknown',
    architecture: info.architecture || 'unknown',
    device: info.device || '',
    description: info.description || '',
    isFallbackAdapter: isFallback(adapter, info),
    features: [...features],
    limits,
  };
  return new GpuContext(device, report);
}

/** `isFallbackAdapter` moved from the adapter to its info in 2024; SwiftShader is a fallback either way. */
function isFallback(adapter: GPUAdapter, info: GPUAdapterInfo): boolean {
  const fromInfo = (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  const fromAdapter = (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  const text = `${info.vendor} ${info.architecture} ${info.description}`.toLowerCase();
  return (
    Boolean(fromInfo ?? fromAdapter) ||
    text.includes('swiftshader') ||
    text.includes('llvmpipe') ||
    text.includes('lavapipe')
  );
}
