// End-to-end tests in Debian's Chromium (never a downloaded browser) with WebGPU on SwiftShader.
// The app is built and served by `vite preview` on 127.0.0.1; one worker, since the CPU is the GPU here.
import { defineConfig } from '@playwright/test';

// E2E_PORT lets two checkouts run their browser tests side by side.
const port = Number(process.env.E2E_PORT ?? 4173);

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results/e2e',
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 240_000,
  expect: { timeout: 30_000 },
  reporter: [['list'], ['json', { outputFile: 'test-results/e2e.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--enable-unsafe-webgpu',
        // No background traffic: this machine has no network beyond localhost.
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-quic',
        '--no-first-run',
      ],
    },
  },
  webServer: {
    command: `npx vite build && npx vite preview --host 127.0.0.1 --port ${port} --strictPort`,
    // The mock hub of e2e/hub.spec.ts and its CDN: this build's CSP and hub origin check allow them. Its hub
    // downloads give up on a silent server after 2 s (RL_LAB_HUB_TIMEOUT), so the stall case ends in seconds.
    env: {
      ...process.env,
      RL_LAB_EXTRA_HUB_ORIGINS: 'http://127.0.0.1:4311,http://127.0.0.1:4312',
      RL_LAB_HUB_TIMEOUT: '2',
    } as Record<string, string>,
    url: `http://127.0.0.1:${port}`,
    // Always build and serve this tree: a server left running from an older build would test stale code.
    reuseExistingServer: false,
    timeout: 180_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
