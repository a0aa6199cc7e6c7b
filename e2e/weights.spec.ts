// Which weights move, in a real Chromium (WebGPU on SwiftShader): a short GRPO run on copy measuring its weights every
// step shows the heatmap with one row per weight of the nano model and one column per step, painted; a rank-1 share
// beside each matrix; the held-out accuracy of the rank-1 update beside the full update's at each evaluation; and
// the two catalog charts (relative update, rank-1 share) with finite values.
import { expect, test } from '@playwright/test';
import { SMALL, guard, ready, shot, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

test('a short run with weight_stats_every 1 fills the weight-update heatmap and the rank-1 comparison', async ({
  page,
}, info) => {
  const w = await guard(page);
  // Seed 1: groups with unequal rewards from the first step, so every weight moves.
  await page.goto(`/?preset=grpo&${SMALL}&steps=4&eval_every=2&weight_stats_every=1&seed=1`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await expect(page.getByTestId('field-weight_stats_every')).toHaveAttribute('data-value', '1');
  await ready(page);
  const panel = page.getByTestId('weight-updates');
  await expect(panel).toHaveAttribute('data-rows', '0');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 4, 200_000);

  // nano: the embedding (tied to the head), 2 layers x 9 weights, the final norm.
  await expect(panel).toHaveAttribute('data-rows', '20');
  await expect(panel).toHaveAttribute('data-steps', '4');
  await expect(panel).toHaveAttribute('data-rank1-evals', '2');
  const heatmap = page.getByTestId('weight-heatmap');
  const painted = await heatmap.evaluate((c) => {
    const canvas = c as HTMLCanvasElement;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let opaque = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] === 255) opaque++;
    return { width: canvas.width, height: canvas.height, opaque };
  });
  expect(painted.width).toBe(4 * 8);
  expect(painted.height).toBe(20 * 13);
  // Every cell is painted (one pixel row of gap per heatmap row).
  expect(painted.opaque).toBe(4 * 8 * 20 * 12);

  // A share per matrix (embed and 2 x 7), a dash for the 5 norm gains (2 per layer and the final one).
  const shares = page.getByTestId('rank1-shares').locator(':scope > div');
  await expect(shares).toHaveCount(20);
  const texts = await shares.allTextContents();
  expect(texts.filter((t) => t === '—')).toHaveLength(5);
  for (const t of texts.filter((x) => x !== '—')) expect(Number(t)).toBeGreaterThan(0);

  const accuracy = page.getByTestId('rank1-accuracy');
  await expect(accuracy.locator('tbody tr')).toHaveCount(2);
  await expect(accuracy.locator('tbody tr').first()).toContainText(/^2\d+%\d+%$/);

  for (const chart of ['weights', 'rank1'])
    await expect(page.getByTestId(`chart-${chart}`)).toHaveAttribute('data-finite', 'true');

  await heatmap.hover({ position: { x: 5, y: 13 * 1 + 5 } });
  await expect(page.getByTestId('weight-scale')).toContainText('layers.0.attn_norm at step 1');
  await panel.scrollIntoViewIfNeeded();
  await shot(page, info, 'weight-updates');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
