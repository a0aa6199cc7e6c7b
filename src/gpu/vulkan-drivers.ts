// The CPU Vulkan drivers the Node tier runs on, as data with no imports (vite.config.ts reads it to point the
// lavapipe test project at its driver; src/gpu/node.ts selects and checks drivers with it).

/** Chromium's SwiftShader Vulkan driver, used when no other Vulkan driver is configured. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * The CPU Vulkan drivers the Node tier runs on (scripts/setup-system.sh installs both on Debian): each one's ICD
 * file (what VK_ICD_FILENAMES names) and the text its adapter's description contains, to check that a process
 * got the driver it asked for. SwiftShader is the default; lavapipe is Mesa 25's (bookworm-backports), with
 * shader-f16.
 */
export const VULKAN_DRIVERS = {
  swiftshader: { icd: SWIFTSHADER_ICD, adapterMatch: /swiftshader/i },
  lavapipe: { icd: '/usr/share/vulkan/icd.d/lvp_icd.json', adapterMatch: /llvmpipe|lavapipe/i },
} as const;

export type VulkanDriver = keyof typeof VULKAN_DRIVERS;

/** Whether `name` is one of VULKAN_DRIVERS. */
export function isVulkanDriver(name: string): name is VulkanDriver {
  return Object.hasOwn(VULKAN_DRIVERS, name);
}

/** The fields of an adapter's info that tell its driver (AdapterReport has them). */
interface AdapterInfoText {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
}

/** An adapter's info as the one line each driver's adapterMatch is tested against. */
export function adapterInfoText(r: AdapterInfoText): string {
  return `${r.vendor} ${r.architecture} ${r.device} ${r.description}`;
}

/** Which of VULKAN_DRIVERS an adapter runs on, by its info; null for any other (a GPU's own driver). */
export function vulkanDriverOf(r: AdapterInfoText): VulkanDriver | null {
  const text = adapterInfoText(r);
  return (Object.keys(VULKAN_DRIVERS) as VulkanDriver[]).find((d) => VULKAN_DRIVERS[d].adapterMatch.test(text)) ?? null;
}
