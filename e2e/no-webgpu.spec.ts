// The lab where the browser gives no WebGPU adapter (the same Chromium without --enable-unsafe-webgpu): the page
// says so plainly (which browsers, which flag), selects the CPU backend labelled slow, refuses models too large
// for it, and trains a tiny run on the CPU twins in the worker.
import { expect, test } from '@playwright/test';
import { guard, lastValues, shot, SMALL, waitStatus } from './helpers';

test.use({
  launchOptions: {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--disable-background-networking', '--no-first-run'],
  },
});

test('the page says so plainly and trains on the CPU backend, labelled slow', async ({ page }, info) => {
  test.setTimeout(120_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=1&eval_every=0`);
  const panel = page.getByTestId('gpu-panel');
  await expect(panel).toHaveAttribute('data-state', 'unavailable', { timeout: 60_000 });
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await expect(page.getByTestId('adapter-status')).toContainText('No WebGPU here');
  await expect(page.getByTestId('adapter-status')).toContainText('chrome://flags');
  await expect(page.getByTestId('cpu-offer')).toContainText('100-1000x slower');
  await expect(page.getByTestId('backend-select')).toHaveValue('cpu');
  await expect(page.getByTestId('backend-note')).toContainText('100-1000x slower');
  await expect(page.getByTestId('status-adapter')).toContainText('CPU reference backend (slow');
  // A model too large for the CPU backend is refused with the reason, before anything runs.
  await page.getByTestId('checkpoint-input').fill('');
  await page.locator('#field-input-model').selectOption('small');
  await expect(page.getByTestId('backend-note')).toContainText('at most 250,000 parameters');
  await page.locator('#field-input-model').selectOption('nano');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 1, 90_000);
  const last = await lastValues(page, 'reward');
  expect(Number.isFinite(last.reward)).toBe(true);
  await shot(page, info, 'lab-cpu');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
