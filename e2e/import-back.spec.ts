// A cluster run back in the lab, in a real Chromium: one browser step, then a TRL trainer_state.json imported
// through the runs panel's file input; it says where it came from and which names the catalog lacks, offers
// only its metrics exports (no resume, no rollouts, no checkpoint), overlays the browser run on the charts, and
// stays out of the config diff (its log holds no lab config).
import { expect, test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { guard, ready, shot, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

const TRL_STATE = fileURLToPath(new URL('../src/io/fixtures/trl-trainer_state.json', import.meta.url));

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
  // TRL's end-of-run entry is the run's summary, not a fifth step.
  await expect(page.getByTestId('import-summary')).toContainText('train_runtime 61.5, train_samples_per_second 1.04');
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

test('a TRL log with 2,000 steps x 50 new names each imports: 32 of its own names charted, the rest picked by name', async ({
  page,
}, info) => {
  // 100,000 names the catalog lacks (custom/s<step>_m<k>), beside loss and reward; generated, not committed.
  const steps = 2000;
  const log_history = Array.from({ length: steps }, (_, i) => {
    const entry: Record<string, number> = { step: i + 1, loss: 1 / (i + 1), reward: i / steps };
    for (let k = 0; k < 50; k++) entry[`custom/s${i + 1}_m${k}`] = i + k / 100;
    return entry;
  });
  const file = info.outputPath('trainer_state.json');
  writeFileSync(file, JSON.stringify({ global_step: steps, log_history }, null, 2));
  const w = await guard(page);
  await page.goto('/');
  await expect(page.getByTestId('runs-panel')).toBeVisible();
  await page.getByTestId('import-file').setInputFiles(file);
  await expect(page.getByTestId('import-ok')).toContainText('(2000 steps, from TRL)', { timeout: 120_000 });
  const uncharted = page.getByTestId('import-uncharted');
  await expect(uncharted).toHaveAttribute('data-count', String(100_000 - 32));
  await expect(uncharted).toContainText('+99968 more metrics not charted: ');
  await expect(page.getByTestId('import-uncatalogued')).toContainText('custom/s1_m0');

  const row = page.locator('[data-testid=run-row][data-origin=trl]');
  await row.getByTestId('run-open').click();
  const custom = page.getByTestId('chart-family-custom');
  await expect(custom).toHaveAttribute('data-metrics', /^custom\//);
  expect((await custom.getAttribute('data-metrics'))!.split(',')).toHaveLength(32);
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-runs', '1');

  // A name beyond the cap, typed into the picker, joins its chart.
  await page.getByTestId('uncharted-pick').fill('custom/s2000_m49');
  await page.getByTestId('uncharted-chart').click();
  await expect(custom).toHaveAttribute('data-metrics', /custom\/s2000_m49/);
  expect((await custom.getAttribute('data-metrics'))!.split(',')).toHaveLength(33);
  await shot(page, info, 'import-many-names');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test("a trainer_state.json with Python's NaN imports and says which step holds it", async ({ page }, info) => {
  const log_history = Array.from({ length: 40 }, (_, i) => ({ step: i + 1, loss: 1 / (i + 1), grad_norm: 0.5 }));
  const text = JSON.stringify({ log_history }, null, 2).replace(
    /("step": 37,\s+"loss": [^,]+,\s+"grad_norm": )0\.5/,
    '$1NaN',
  );
  const file = info.outputPath('trainer_state.json');
  writeFileSync(file, text);
  const w = await guard(page);
  await page.goto('/');
  await page.getByTestId('import-file').setInputFiles(file);
  await expect(page.getByTestId('import-ok')).toContainText('(40 steps, from TRL)');
  await expect(page.getByTestId('import-non-finite')).toContainText('step 37: grad_norm is NaN');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
