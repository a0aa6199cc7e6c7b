// The training dynamics views in a real Chromium with WebGPU on SwiftShader, on a short GRPO run on copy (2 prompts
// x 4 completions, 4 steps, evaluations at steps 0, 2 and 4): the group-signal stacked area, the entropy and
// advantage heatmaps, the length percentiles and top-decile entropy, the held-out solve-rate histogram, and the
// inspector's all-groups view sorted by reward. The main thread's longest task while training is printed as
// lab.spec.ts measures it (a measurement, not a pass/fail); screenshots are saved as artifacts.
import { expect, test } from '@playwright/test';
import { guard, lastValues, ready, shot, SMALL, waitStatus, longTasksSince } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

test('group signal, distributions over steps, solve rates and every group of a step', async ({ page }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=4&eval_every=2`);
  await ready(page);

  const clickedAt = await page.evaluate(() => performance.now());
  const t0 = Date.now();
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 4, 240_000);
  const trainedMs = Date.now() - t0;

  // Group signal: the three outcome fractions add up to 1, and the non-zero-advantage share is a fraction.
  const groups = page.getByTestId('chart-groups');
  await expect(groups).toHaveAttribute('data-points', '4');
  const g = await lastValues(page, 'groups');
  expect(Object.keys(g).sort()).toEqual([
    'groups/all_fail_frac',
    'groups/all_pass_frac',
    'groups/mixed_frac',
    'groups/nonzero_adv_frac',
  ]);
  expect(g['groups/all_fail_frac'] + g['groups/mixed_frac'] + g['groups/all_pass_frac']).toBeCloseTo(1, 9);
  expect(g['groups/nonzero_adv_frac']).toBeGreaterThanOrEqual(0);
  expect(g['groups/nonzero_adv_frac']).toBeLessThanOrEqual(1);
  await expect(groups.locator('.recharts-area')).toHaveCount(3);

  // Length percentiles on a chart of their own, and the top-decile entropy beside the mean.
  const lengths = await lastValues(page, 'length_percentiles');
  for (const k of ['completions/p10_length', 'completions/p50_length', 'completions/p90_length'])
    expect(Number.isFinite(lengths[k]), k).toBe(true);
  expect(lengths['completions/p10_length']).toBeLessThanOrEqual(lengths['completions/p90_length']);
  const entropy = await lastValues(page, 'entropy');
  expect(entropy['entropy/top_decile_mean']).toBeGreaterThan(0);

  // Heatmaps: one column per step, one row per bin; hovering a cell names its step, bin and share.
  for (const id of ['entropy', 'advantage']) {
    const fig = page.getByTestId(`heatmap-${id}`);
    await fig.scrollIntoViewIfNeeded();
    await expect(fig).toHaveAttribute('data-steps', '4');
    const cells = page.getByTestId(`heatmap-${id}-cells`);
    await expect(cells).toHaveAttribute('data-columns', '4');
    expect(Number(await cells.getAttribute('data-rows'))).toBeGreaterThan(10);
  }
  const canvas = page.getByTestId('heatmap-entropy-cells').locator('canvas');
  const box = (await canvas.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.9, box.y + box.height * 0.5);
  await expect(page.getByTestId('heatmap-entropy-cells-hover')).toContainText(
    /step 4: .* holds .*% of \d+ loss tokens/,
  );
  await shot(page, info, 'dynamics-heatmaps');

  // Solve rates at the first (step 0) and the latest evaluation: each counts the 2 held-out prompts once.
  const solve = page.getByTestId('chart-solve-rate');
  await solve.scrollIntoViewIfNeeded();
  await expect(solve).toHaveAttribute('data-evals', '2');
  const counts = JSON.parse((await solve.getAttribute('data-last'))!) as number[];
  expect(counts).toHaveLength(5);
  expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
  await expect(solve.locator('.recharts-bar-rectangle').first()).toBeAttached();
  await expect(page.getByTestId('chart-pass-at-k')).toHaveAttribute('data-evals', '3');
  await shot(page, info, 'dynamics-solve-rate');

  // The inspector lists every group of the last step on demand, each sorted by reward with its advantages.
  await page.getByTestId('view-all-groups').click();
  const all = page.getByTestId('all-groups');
  await all.scrollIntoViewIfNeeded();
  await expect(all).toHaveAttribute('data-groups', '2');
  await expect(page.getByTestId('summary-completion')).toHaveCount(8);
  for (const group of await page.getByTestId('summary-group').all()) {
    const rewards = (await group.getAttribute('data-rewards'))!.split(',').map(Number);
    expect(rewards).toEqual([...rewards].sort((a, b) => b - a));
  }
  for (const c of await page.getByTestId('summary-completion').all())
    expect(Number.isFinite(Number(await c.getAttribute('data-advantage')))).toBe(true);
  await shot(page, info, 'dynamics-all-groups');
  // And back to the token view.
  await page.getByTestId('view-tokens').click();
  await expect(page.getByTestId('token').first()).toBeVisible();

  // As lab.spec.ts reports them: each long task since the click, with the render jobs that ran inside it.
  const long = await longTasksSince(page, clickedAt);
  console.log(
    `dynamics: training ${(trainedMs / 1000).toFixed(1)} s, then the views: ${long.count} long tasks, longest ${long.longest.toFixed(0)} ms: ${long.report}`,
  );
  expect(w.errors).toEqual([]);
  expect(w.external).toEqual([]);
});
