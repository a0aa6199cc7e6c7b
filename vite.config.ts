// Vite builds the lab page; Vitest (configured here too) runs the Node tiers of the test suite.
// The GPU tests run real WGSL through Dawn on whatever Vulkan driver VK_ICD_FILENAMES names
// (Chromium's SwiftShader on machines without a GPU; see scripts/setup-system.sh).
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { existsSync } from 'node:fs';
import { offlinePlugin } from './scripts/offline-plugin';

const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
const vulkanEnv: Record<string, string> =
  process.env.VK_ICD_FILENAMES || !existsSync(swiftshaderIcd) ? {} : { VK_ICD_FILENAMES: swiftshaderIcd };

export default defineConfig({
  plugins: [react(), offlinePlugin()],
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 1500 },
  preview: { host: '127.0.0.1', port: 4173, strictPort: true },
  server: { host: '127.0.0.1' },
  test: {
    include: ['src/**/*.test.ts'],
    env: vulkanEnv,
    // Dawn's native module is happiest in a child process of its own, not a worker thread.
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
