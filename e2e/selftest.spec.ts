// The kernel self-test in a real Chromium with WebGPU on SwiftShader: the page reports a real adapter, runs kernel
// cases in its worker, and every case passes against its CPU twin. Saves a screenshot.
// By default the page's representative sample (/?selftest&sample: each family's first case and every tenth after it,
// src/kernels/case-sample.ts), since Node runs every case on Dawn (the kernel test files); what only the browser shows
// is Chromium compiling and running each family's kernels through the page's worker.
// RL_LAB_FULL_SELFTEST=1 runs every case instead (`RL_LAB_FULL_SELFTEST=1 npx playwright test e2e/selftest.spec.ts`).
import { expect, test } from '@playwright/test';

const FULL = process.env.RL_LAB_FULL_SELFTEST === '1';

test(`the page shows a real adapter and the kernel self-test (${FULL ? 'every case' : 'sample'}) passes in the browser`, async ({
  page,
}, testInfo) => {
  // A bound on waiting, not a timing assertion: every case's pipelines compile in the browser (all 1,173 cases took
  // 146 s in CI; the sample is about a tenth of them).
  test.setTimeout(600_000);
  const external: string[] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (!['127.0.0.1', 'localhost'].includes(url.hostname) && url.protocol !== 'data:' && url.protocol !== 'blob:')
      external.push(req.url());
  });
  const consoleErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));

  await page.goto(FULL ? '/?selftest' : '/?selftest&sample');
  const panel = page.getByTestId('gpu-panel');
  await expect(panel).toHaveAttribute('data-state', /^(ready|unavailable|error)$/);
  // A missing adapter is a failure with the page's own explanation, never a skip.
  if ((await panel.getAttribute('data-state')) !== 'ready') {
    throw new Error(`no WebGPU adapter in Chromium: ${await page.getByTestId('adapter-status').textContent()}`);
  }
  await expect(page.getByTestId('adapter-info')).toBeVisible();
  await expect(page.getByTestId('adapter-name')).not.toHaveText('unknown');
  // A matmul variant per layout: the adapter's cached tune, or the defaults for its class while its own is measured.
  await expect(page.getByTestId('adapter-tuning')).toHaveText(/matmul( autotune)?: NT \w+, NN \w+, TN \w+/);

  await page.getByTestId('selftest-run').click();
  const summary = page.getByTestId('selftest-summary');
  await expect(summary).toBeVisible({ timeout: 540_000 });
  const text = (await summary.textContent()) ?? '';
  const m = /(\d+) passed, (\d+) failed/.exec(text);
  expect(m, `summary text: ${text}`).not.toBeNull();
  const [passed, failed] = [Number(m![1]), Number(m![2])];
  const failures = await page.locator('[data-testid="selftest-row"][data-pass="false"]').allTextContents();
  expect(failed, `failing cases:\n${failures.join('\n')}`).toBe(0);
  expect(passed).toBeGreaterThanOrEqual(30);
  await expect(page.getByTestId('selftest-row')).toHaveCount(passed);

  const shot = testInfo.outputPath('selftest.png');
  await page.screenshot({ path: shot, fullPage: true });
  await testInfo.attach('selftest', { path: shot, contentType: 'image/png' });
  console.log(`browser self-test: ${text}; adapter: ${await page.getByTestId('adapter-name').textContent()}`);
  expect(external, 'requests that left localhost').toEqual([]);
  expect(consoleErrors, 'console errors').toEqual([]);
});
