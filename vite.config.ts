// Vite builds the lab page; Vitest (configured here too) runs the Node tiers of the test suite: the fast projects
// (pure logic, no Dawn: `npm run test:fast`), the slow projects (GPU device, CLI processes, real training runs),
// each tier's files sharing a worker (`fast`, `slow`) but for those that need their own (`fast-alone`,
// `slow-alone`), and the lavapipe project (the kernel and GPU-model files again on Mesa's lavapipe driver);
// src/testing/tiers.ts tells them apart.
// The GPU tests run real WGSL through Dawn on whatever Vulkan driver VK_ICD_FILENAMES names
// (Chromium's SwiftShader on machines without a GPU; see scripts/setup-system.sh).
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hubOriginsPlugin } from './scripts/hub-origins-plugin';
import { docsPlugin } from './scripts/docs-plugin';
import { offlinePlugin } from './scripts/offline-plugin';
import { TEST_HUB_ENDPOINT } from './src/testing/test-hub';
import { secondDriverFiles, sharedAndAlone, testTiers } from './src/testing/tiers';
import { SWIFTSHADER_ICD, VULKAN_DRIVERS } from './src/gpu/vulkan-drivers';

const swiftshaderIcd = SWIFTSHADER_ICD;
const vulkanEnv: Record<string, string> =
  process.env.VK_ICD_FILENAMES || !existsSync(swiftshaderIcd) ? {} : { VK_ICD_FILENAMES: swiftshaderIcd };
const tiers = testTiers(import.meta.dirname);
const fast = sharedAndAlone(import.meta.dirname, tiers.fast);
const slow = sharedAndAlone(import.meta.dirname, tiers.slow);

/**
 * A tier's two Vitest projects: `name`, whose files share their worker (isolate off), and `name-alone`, whose files
 * each run in a worker of their own (src/testing/tiers.ts, ALONE_SIGNS). `--project 'name*'` runs both.
 */
function tierProjects(
  name: string,
  files: { shared: string[]; alone: string[] },
  base: {
    resolve?: { alias: Record<string, string> };
    test: { pool?: 'threads'; testTimeout: number; hookTimeout: number };
  },
) {
  return [
    { extends: true as const, ...base, test: { ...base.test, name, include: files.shared, isolate: false } },
    { extends: true as const, ...base, test: { ...base.test, name: `${name}-alone`, include: files.alone } },
  ];
}

/**
 * The dev server only: index.html's Content-Security-Policy plus what Vite's dev client needs (the inline React
 * refresh preamble and the hot-reload socket). Builds and `vite preview` serve the policy as written.
 */
const devServerPolicy: Plugin = {
  name: 'dev-server-csp',
  apply: 'serve',
  transformIndexHtml: (html) =>
    html
      .replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
      .replace("connect-src 'self'", "connect-src 'self' ws: wss:"),
};

export default defineConfig({
  plugins: [react(), offlinePlugin(), docsPlugin(), hubOriginsPlugin(), devServerPolicy],
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 1500 },
  preview: { host: '127.0.0.1', port: 4173, strictPort: true },
  server: { host: '127.0.0.1' },
  test: {
    // No test reaches a real hub: an id without an endpoint goes to a closed port here (src/testing/no-hub-setup.ts).
    env: { ...vulkanEnv, HF_ENDPOINT: TEST_HUB_ENDPOINT },
    setupFiles: ['src/testing/no-hub-setup.ts'],
    // Dawn's native module is happiest in a child process of its own, not a worker thread.
    pool: 'forks',
    reporters: ['default'],
    projects: [
      // The webgpu package is a throwing stand-in in the fast tier: a misclassified file fails instead of finding a
      // device. No Dawn there, so worker threads, cheaper to start than the forks the slow tier needs.
      ...tierProjects('fast', fast, {
        resolve: { alias: { webgpu: fileURLToPath(new URL('./src/testing/no-webgpu.ts', import.meta.url)) } },
        test: { pool: 'threads', testTimeout: 10_000, hookTimeout: 10_000 },
      }),
      ...tierProjects('slow', slow, { test: { testTimeout: 120_000, hookTimeout: 120_000 } }),
      // Opt-in (npm run test:lavapipe): on a loaded 2-core machine its first-dispatch compiles take far longer than
      // the rest of the suite (BENCHMARKS.md, "Two drivers").
      ...(process.env.RL_LAB_SECOND_DRIVER
        ? [
            {
              // The kernel and GPU-model files again on Mesa's lavapipe (a second compiler, with shader-f16); fails
              // loudly where lavapipe is not installed (scripts/setup-system.sh installs it on Debian).
              extends: true as const,
              test: {
                name: 'lavapipe',
                include: secondDriverFiles(tiers),
                env: { VK_ICD_FILENAMES: VULKAN_DRIVERS.lavapipe.icd, RL_LAB_TEST_DRIVER: 'lavapipe' },
                setupFiles: ['src/testing/no-hub-setup.ts', 'src/testing/driver-setup.ts'],
                // Lavapipe compiles a pipeline with LLVM at its first dispatch, so a case's first run carries its compile
                // (up to minutes for the unrolled matmul tiles on a loaded 2-core machine: BENCHMARKS.md).
                testTimeout: 600_000,
                hookTimeout: 600_000,
              },
            },
          ]
        : []),
    ],
  },
});
