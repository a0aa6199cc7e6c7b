// Errors raised by the GPU runtime, each carrying a message a person can act on.
// The UI shows these messages as they are; keep them concrete (which browser, which flag, which kernel).

/** WebGPU is missing or gave no adapter; the message says what to do about it. */
export class WebGpuUnavailableError extends Error {
  override name = 'WebGpuUnavailableError';
}

/** A validation or out-of-memory error reported by the device; the message names the labelled kernel or buffer. */
export class GpuValidationError extends Error {
  override name = 'GpuValidationError';
}

/** The device was lost (driver reset, tab in background too long, destroy()). */
export class GpuDeviceLostError extends Error {
  override name = 'GpuDeviceLostError';
}

/** What to tell a person whose browser has no usable WebGPU. */
export function browserWebGpuAdvice(userAgent: string): string {
  const ua = userAgent.toLowerCase();
  const common =
    'WebGPU is available in Chrome and Edge 113+ (Windows, macOS, ChromeOS, Android), Safari 26+ (macOS, iOS) ' +
    'and Firefox 141+ (Windows).';
  if (ua.includes('firefox')) {
    return `${common} In Firefox on Linux or macOS, set dom.webgpu.enabled to true in about:config (Nightly is the most complete).`;
  }
  if (ua.includes('linux') && (ua.includes('chrome') || ua.includes('chromium'))) {
    return (
      `${common} In Chrome or Chromium on Linux, open chrome://flags, enable #enable-unsafe-webgpu and #enable-vulkan, ` +
      'then restart the browser (headless or GPU-less machines also need --enable-unsafe-webgpu on the command line).'
    );
  }
  if (ua.includes('safari') && !ua.includes('chrome')) {
    return `${common} In older Safari, enable WebGPU under Develop > Feature Flags.`;
  }
  return `${common} If your browser is one of these, check that hardware acceleration is on (chrome://gpu shows why WebGPU is off).`;
}

/** What to tell a person whose Node process has no adapter. */
export const nodeWebGpuAdvice =
  'Node gets WebGPU from the `webgpu` package (Dawn) over Vulkan. Install the Vulkan loader and a driver: ' +
  'on Debian `apt-get install -y libvulkan1 chromium` (Chromium ships the SwiftShader CPU driver), then run with ' +
  "VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json, or point VK_ICD_FILENAMES at your GPU's ICD file. " +
  '`npm run setup:system` does this on Debian.';
