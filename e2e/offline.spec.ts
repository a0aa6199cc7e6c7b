// The lab survives the network and the GPU going away: after one visit the page reloads and trains with the
// browser offline (the service worker's copy, scripts/offline-plugin.ts), and a device destroyed mid-run
// (as a driver reset does) interrupts the run with a message, after which Resume trains on from the last saved state.
import { expect, test } from '@playwright/test';
import { SMALL, ready, shot, waitStatus } from './helpers';

test('after one visit the page reloads and trains offline', async ({ page, context }, info) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/?preset=grpo&${SMALL}&steps=3&eval_every=0`);
  await ready(page);
  // The service worker has kept the page, its code, the engine worker and the warm starts once it controls the page.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  const kept = await page.evaluate(async () => {
    const keys = await caches.keys();
    const cache = await caches.open(keys.find((k) => k.startsWith('rl-lab-'))!);
    return (await cache.keys()).map((r) => new URL(r.url).pathname);
  });
  expect(kept).toContain('/checkpoints/copy/model.safetensors');
  expect(kept.some((p) => /engine\.worker-.*\.js$/.test(p))).toBe(true);
  expect(
    kept.some((p) => p.endsWith('.wasm')),
    'no heavy optional files kept',
  ).toBe(false);

  await context.setOffline(true);
  await page.reload();
  await ready(page);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3);
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', '3');
  await shot(page, info, 'offline-trained');
  await context.setOffline(false);
  expect(errors).toEqual([]);
});

test('a device lost mid-run: the page says so and Resume trains on from the last saved state', async ({
  page,
}, info) => {
  await page.goto(`/?preset=grpo&${SMALL}&steps=60&eval_every=0`);
  await ready(page);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /running/, 3);
  const engine = page.workers().find((w) => /engine\.worker/.test(w.url()));
  expect(engine, 'the engine worker').toBeDefined();
  expect(await engine!.evaluate(() => (self as unknown as { rlLabLoseDevice(): boolean }).rlLabLoseDevice())).toBe(
    true,
  );
  await waitStatus(page, /interrupted/);
  await expect(page.getByTestId('run-message')).toContainText(/device lost/i);
  await expect(page.getByTestId('run-message')).toContainText(/Resume continues from the last saved state/);
  await shot(page, info, 'device-lost');
  const lostAt = Number(await page.getByTestId('run-status').getAttribute('data-step'));
  await page.getByTestId('run-resume').click();
  await waitStatus(page, /running|paused|done/, lostAt + 2);
  await page
    .getByTestId('run-pause')
    .click()
    .catch(() => {});
  const last = JSON.parse((await page.getByTestId('chart-reward').getAttribute('data-last')) ?? '{}') as Record<
    string,
    number
  >;
  for (const [k, v] of Object.entries(last)) expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
});
