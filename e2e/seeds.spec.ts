// A seed group in a real Chromium with WebGPU on SwiftShader: the smallest setting (GRPO on copy, 2 prompts x 4
// completions) over 3 seeds x 2 steps, started from the run controls and queued run after run. The reward chart
// draws the group as its median across seeds in a bootstrap band (data-seed-bands), the runs list gathers the three
// runs under one expandable row, and "every seed" draws them as lines of their own. Screenshots are saved.
import { expect, test } from '@playwright/test';
import { guard, ready, shot, SMALL } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

test('3 seeds x 2 steps: one queue, one band, one row', async ({ page }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=2&eval_every=0&seed=7`);
  await ready(page);

  await page.getByTestId('seed-count').selectOption('3');
  await page.getByTestId('seeds-start').click();
  // The status line says which run of the group trains.
  await expect(page.getByTestId('status-seed-queue')).toHaveAttribute('data-size', '3', { timeout: 60_000 });

  const group = page.getByTestId('seed-group-row');
  await expect(group).toHaveCount(1, { timeout: 240_000 });
  await expect(group).toHaveAttribute('data-runs', '3', { timeout: 240_000 });
  await expect(page.getByTestId('seed-group-state')).toHaveText('3 done', { timeout: 240_000 });
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('status-seed-queue')).toHaveCount(0); // the queue is over
  await expect(group.getByTestId('seed-group-open')).toHaveText('GRPO (DeepSeekMath) · copy 3 · seeds 7-9');

  // The reward chart: one median line of the 3 seeds with its band, not three lines.
  const reward = page.getByTestId('chart-reward');
  await expect(reward).toHaveAttribute('data-seeds', '3');
  expect(Number(await reward.getAttribute('data-seed-bands'))).toBeGreaterThanOrEqual(1);
  await expect(reward).toHaveAttribute('data-runs', '1');
  await expect(reward.locator('.recharts-area')).toHaveCount(Number(await reward.getAttribute('data-seed-bands')));
  await expect(page.getByTestId('seed-statistic')).toHaveValue('median');
  await expect(reward.getByTestId('seed-band-legend')).toHaveText('median, 3 seeds, 95% band:');
  await reward.scrollIntoViewIfNeeded();
  await shot(page, info, 'seeds-band');

  // Expanded, the group lists its three runs, seeds 7, 8 and 9, each named as a run of its own.
  await page.getByTestId('seed-group-expand').click();
  const members = page.locator('[data-testid="run-row"][data-seed-group]');
  await expect(members).toHaveCount(3);
  expect((await members.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')))).sort()).toEqual(
    [7, 8, 9].map((s) => `GRPO (DeepSeekMath) · copy 3 · seed ${s}`),
  );
  await expect(page.getByTestId('run-row')).toHaveCount(3); // no run outside the group

  // Every seed: three runs on the charts, no seed bands; back to the band.
  await page.getByTestId('seed-view-seeds').click();
  await expect(reward).toHaveAttribute('data-runs', '3');
  await expect(reward).toHaveAttribute('data-seed-bands', '0');
  await page.getByTestId('runs-panel').scrollIntoViewIfNeeded();
  await shot(page, info, 'seeds-every-seed');
  await page.getByTestId('seed-view-band').click();
  await expect(reward).toHaveAttribute('data-seeds', '3');
  await page.getByTestId('seed-statistic').selectOption('iqm');
  await expect(reward).toHaveAttribute('data-seed-bands', /^[1-9]/);

  expect(w.errors).toEqual([]);
  expect(w.external).toEqual([]);
});
