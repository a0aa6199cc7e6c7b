// A cluster run back in the lab, in a real Chromium: one browser step, then a TRL trainer_state.json imported
// through the runs panel's file input; it says where it came from and which names the catalog lacks, offers
// only its metrics exports (no resume, no rollouts, no checkpoint), overlays the browser run on the charts, and
// stays out of the config diff (its log holds no lab config).
import { expect, test } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { guard, ready, shot, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

const TRL_STATE = fileURLToPath(new URL('../src/engine/fixtures/trl-trainer_state.json', import.meta.url));

test('import a TRL trainer_state.json and overlay it on a browser run', async ({ page }, info) => {
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=2`);
  await ready(page);
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused/, 1);
  await expect(page.getByTestId('run-row')).toHaveCount(1);

  await page.getByTestId('import-file').setInputFiles(TRL_STATE);
  await expect(page.getByTestId('import-ok')).toContainText('(4 steps, from TRL)');
  await expect(page.getByTestId('import-uncatalogued')).toContainText('eval_reward');
  const trl = page.locator('[data-testid=run-row][data-origin=trl]');
  await expect(trl).toHaveAttribute('data-status', 'imported');
  await expect(trl).toContainText('TRL · imported from trl-trainer_state.json');
  await expect(trl.locator('button[data-testid^=export-]')).toHaveCount(2);
  await expect(trl.getByTestId('export-metrics-csv')).toBeVisible();
  await expect(trl.getByTestId('export-checkpoint')).toHaveCount(0);
  await expect(trl.getByTestId('export-rollouts-jsonl')).toHaveCount(0);
  await expect(trl.getByTestId('run-resume-row')).toHaveCount(0);

  await trl.getByTestId('overlay-toggle').check();
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '2');
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-runs', '2');
  await expect(page.getByTestId('chart-entropy')).toHaveAttribute('data-runs', '2');
  await expect(page.getByTestId('config-diff-foreign')).toContainText('Not compared: TRL · trl-trainer_state.json');
  await expect(page.getByTestId('overlay-legend')).toContainText('TRL · trl-trainer_state.json');
  await page.getByTestId('chart-reward').scrollIntoViewIfNeeded();
  await shot(page, info, 'import-back-trl-overlay');
  await page.getByTestId('runs-panel').scrollIntoViewIfNeeded();
  await shot(page, info, 'import-back-runs');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
