// The lab in a real Chromium with WebGPU on SwiftShader, driving the real trainer in the engine worker on the
// smallest setting (GRPO on copy from its warm start, 2 prompts x 4 completions): pick a preset, edit a knob,
// start, see every chart receive finite values, pause, hover a token in the inspector and check its loss term,
// reload and find the run, overlay two runs with their config diff, export metrics and import them back, refuse
// a malformed file, open a shared link and find the same config, survive a bad link and a full storage quota.
// No request leaves localhost. The main thread's long tasks while training and while opening a 10,000-step run are
// printed with what ran in them (a measurement, not a pass/fail: their length depends on the machine's load);
// screenshots are saved as artifacts.
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import {
  guard,
  ready,
  setField,
  shot,
  SMALL,
  stepDrivenSaves,
  waitStatus,
  longTasksSince,
  expectFiniteCharts,
} from './helpers';

// Tall enough that a viewport screenshot shows the configuration, the controls and the first rows of charts.
test.use({ viewport: { width: 1440, height: 1500 } });

test('train, watch, inspect, reload, overlay, export, import and share in the lab', async ({ page, context }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(`/?preset=dr_grpo&${SMALL}&steps=40&eval_every=2`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);

  // Pick a preset: the algorithm's knobs change, the experiment (task, batch, steps) stays.
  await page.getByTestId('preset-select').selectOption('grpo');
  await expect(page.getByTestId('preset-description')).toContainText('group-normalized');
  await expect(page.getByTestId('field-task')).toHaveAttribute('data-value', 'copy');
  await expect(page.getByTestId('field-beta')).toHaveAttribute('data-value', '0.04');
  // Two updates per batch, so the ratio moves and the clip can fire; the field is marked as changed.
  await setField(page, 'optimizer', 'num_iterations', '2');
  await expect(page.getByTestId('field-num_iterations')).toHaveAttribute('data-differs', 'true');
  // An invalid value is named inline and blocks Start; fixing it unblocks.
  await setField(page, 'sampling', 'temperature', 'hot');
  await expect(page.getByTestId('field-error-temperature')).toContainText('must be a number');
  await expect(page.getByTestId('run-start')).toBeDisabled();
  await setField(page, 'sampling', 'temperature', '1');
  await expect(page.getByTestId('field-error-temperature')).toHaveCount(0);

  // Start, and watch the long tasks of the main thread while the worker trains.
  // The window starts at the click (entries from before it may still be delivered late, so filter by time).
  const clickedAt = await page.evaluate(() => performance.now());
  const t0 = Date.now();
  await page.getByTestId('run-start').click();
  await waitStatus(page, /running/, 5);
  await shot(page, info, 'lab-mid-run');
  await expectFiniteCharts(page, [
    'reward',
    'entropy',
    'clip',
    'kl',
    'lengths',
    'fractions',
    'loss',
    'grad',
    'lr',
    'throughput',
  ]);
  expect(Number(await page.getByTestId('chart-reward').getAttribute('data-points'))).toBeGreaterThanOrEqual(4);
  // A chart whose feature is off is folded into one line naming the knob instead of drawing a flat line; the loss
  // chart says why it sits near 0.
  await expect(page.getByTestId('chart-off-curriculum').getByTestId('chart-off')).toHaveText(
    'off in this run: curriculum = fixed (every step samples the configured difficulty)',
  );
  await expect(page.getByTestId('chart-loss')).toContainText('advantages are zero-mean within each group');
  await expect(page.getByTestId('chart-pass-at-k')).toHaveAttribute('data-finite', 'true');
  await expect(page.getByTestId('status-adapter')).toHaveAttribute('data-fallback', 'true');

  await page.getByTestId('run-pause').click();
  await waitStatus(page, /paused/);
  const trainedMs = Date.now() - t0;
  const long = await longTasksSince(page, clickedAt);
  console.log(
    `training ${(trainedMs / 1000).toFixed(1)} s: ${long.count} long tasks, longest ${long.longest.toFixed(0)} ms: ${long.report}`,
  );
  const status = page.getByTestId('run-status');
  const runId = (await status.getAttribute('data-run-id'))!;
  const steps = Number(await status.getAttribute('data-step'));

  // Inspector: the groups of the last step; hover a token: its numbers and its loss term, recomputed here and
  // equal to the share the trainer recorded.
  await page.getByTestId('color-by').selectOption('ratio');
  const token = page.getByTestId('token').first();
  const detail = page.getByTestId('token-detail');
  await token.scrollIntoViewIfNeeded();
  await token.hover();
  await expect(detail).toBeVisible();
  await expect(page.getByTestId('token-formula')).toContainText('l = −min(ρ·A, clip(ρ, 1−ε, 1+ε_high)·A)');
  await expect(detail).toHaveAttribute('data-agrees', 'true');
  // What the colours mean, and what w and the loss share are.
  await expect(page.getByTestId('color-legend')).toContainText('ρ > 1: the update made this token more likely');
  await expect(page.getByTestId('loss-share-terms')).toContainText('seq-mean-token-mean: w = 1/(N·|y_i|)');
  for (const t of await page.getByTestId('token').all()) {
    await t.hover();
    await expect(detail).toHaveAttribute('data-agrees', 'true');
  }
  await shot(page, info, 'lab-inspector');

  // Reload: the run is in the list, paused where it was, and opens on the charts.
  await page.reload();
  await ready(page);
  const row = page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
  await expect(row).toHaveAttribute('data-status', 'paused');
  await expect(row).toHaveAttribute('data-step', String(steps));
  await row.getByTestId('run-open').click();
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', String(steps * 2));
  const originalLast = await page.getByTestId('chart-reward').getAttribute('data-last');

  // A second run with another seed, one step; overlay the first: both on the charts, and their config diff.
  // (After the reload the page shows the link's config: the preset and the fields as set before.)
  await expect(page.getByTestId('field-num_iterations')).toHaveAttribute('data-value', '2');
  await setField(page, 'optimizer', 'seed', '7');
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused/, 1);
  await expect(page.getByTestId('run-row')).toHaveCount(2);
  await row.getByTestId('overlay-toggle').check();
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '2');
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-runs', '2');
  await expect(page.locator('[data-testid=diff-row][data-field=seed]')).toHaveCount(1);
  await expect(page.getByTestId('config-diff')).toHaveAttribute('data-rows', '1');
  // The runs are named by what each is (the preset, its algorithm's knobs, the seed): they differ in the seed.
  await expect(row).toHaveAttribute('data-label', /^grpo( · .+)? · seed 0$/);
  await expect(page.getByTestId('overlay-legend')).toContainText(/grpo( · .+)? · seed 7/);
  await shot(page, info, 'lab-overlay');

  // Export the first run's metrics (JSONL and CSV) and import both back: the same curves.
  let exportedJsonl = '';
  for (const kind of ['metrics-jsonl', 'metrics-csv'] as const) {
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId(`export-${kind}`).click()]);
    const path = info.outputPath(download.suggestedFilename());
    if (kind === 'metrics-jsonl') exportedJsonl = download.suggestedFilename();
    await download.saveAs(path);
    expect(readFileSync(path, 'utf8').split('\n')[0]).toContain('rl-lab-run');
    await page.getByTestId('import-file').setInputFiles(path);
    await expect(page.getByTestId('import-ok')).toContainText('(imported)');
  }
  await expect(page.getByTestId('run-row')).toHaveCount(4);
  const imported = page.locator('[data-testid=run-row][data-status=imported]');
  await expect(imported).toHaveCount(2);
  for (const r of await imported.all()) {
    await r.getByTestId('run-open').click();
    await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', String(steps * 2));
    await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-last', originalLast!);
  }
  // A 10,000-step run (synthetic metrics under the exported run's header) imports, opens and redraws with
  // decimation and smoothing, with no long task over 200 ms.
  const header = readFileSync(info.outputPath(exportedJsonl), 'utf8').split('\n')[0];
  const names = [
    'reward',
    'reward_std',
    'accuracy',
    'entropy',
    'clip_ratio/low_mean',
    'clip_ratio/high_mean',
    'kl',
    'kl/exact',
    'completions/mean_length',
    'grad_norm',
    'learning_rate',
    'policy_loss',
    'perf/step_ms',
    'timing_s/gen',
  ];
  const lines = [header];
  for (let i = 1; i <= 10_000; i++) {
    lines.push(
      JSON.stringify({
        type: 'step',
        step: i,
        optimizer_step: i,
        epoch: 0,
        minibatch: 0,
        metrics: Object.fromEntries(
          names.map((n, j) => [n, 0.5 + 0.4 * Math.sin(i / (50 * (j + 1))) + 0.05 * Math.cos(i * 1.7 + j)]),
        ),
      }),
    );
  }
  await page
    .getByTestId('import-file')
    .setInputFiles({ name: 'long.jsonl', mimeType: 'application/json', buffer: Buffer.from(lines.join('\n')) });
  await expect(page.getByTestId('import-ok')).toContainText('(10000 steps)');
  const longRow = page.locator('[data-testid=run-row][data-step="10000"]');
  const openedAt = await page.evaluate(() => performance.now());
  await longRow.getByTestId('run-open').click();
  // Plots redraw only near the viewport: bring the first charts into view.
  await page.getByTestId('chart-reward').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-drawn', '10000', { timeout: 60_000 });
  await page.getByTestId('smoothing').fill('0.9');
  await expect(page.getByTestId('chart-kl')).toHaveAttribute('data-drawn', '10000');
  await page.waitForTimeout(1500);
  const longOpen = await page.evaluate(
    (t) =>
      (window as unknown as { __longTasks: [number, number][] }).__longTasks.filter(([s]) => s >= t).map(([, d]) => d),
    openedAt,
  );
  console.log(
    `10,000-step run: ${longOpen.length} long tasks while opening and re-smoothing, longest ${Math.max(0, ...longOpen).toFixed(0)} ms`,
  );
  await shot(page, info, 'lab-10k-steps');

  // A malformed file: a message, nothing imported, the page still works.
  await page.getByTestId('import-file').setInputFiles({
    name: 'broken.jsonl',
    mimeType: 'application/json',
    buffer: Buffer.from('{"type":"run","format":"rl-lab-run"\nnot json\n'),
  });
  await expect(page.getByTestId('import-error')).toContainText('broken.jsonl: line 1');
  await expect(page.getByTestId('run-row')).toHaveCount(5);
  // Delete takes two clicks, and removes that run only.
  await longRow.getByTestId('run-delete').click();
  await longRow.getByTestId('run-delete-confirm').click();
  await expect(page.getByTestId('run-row')).toHaveCount(4);
  await expect(longRow).toHaveCount(0);

  // The shared link reopens the same experiment in a new tab.
  const link = await page.getByTestId('share-link').inputValue();
  expect(link).toContain('seed=7');
  // Copy confirms (with the clipboard allowed; refused, it would say why and select the link).
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('share-copy').click();
  await expect(page.getByTestId('copy-status')).toHaveText('Copied.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
  const other = await context.newPage();
  const w2 = await guard(other);
  await other.goto(link);
  await ready(other);
  await expect(other.getByTestId('preset-select')).toHaveValue('grpo');
  for (const f of [
    'task',
    'difficulty',
    'checkpoint',
    'train_batch_size',
    'num_generations',
    'num_iterations',
    'seed',
    'beta',
    'steps',
  ]) {
    await expect(other.getByTestId(`field-${f}`)).toHaveAttribute(
      'data-value',
      (await page.getByTestId(`field-${f}`).getAttribute('data-value'))!,
    );
  }
  await expect(other.getByTestId('url-error')).toHaveCount(0);
  await other.close();

  // A bad link: a message, the defaults, a working page.
  const bad = await context.newPage();
  const w3 = await guard(bad);
  await bad.goto('/?preset=grpoo&temperature=hot&lr=3');
  await ready(bad);
  await expect(bad.getByTestId('url-error')).toContainText('preset');
  await expect(bad.getByTestId('url-error')).toContainText('did you mean learning_rate');
  await expect(bad.getByTestId('config-panel')).toHaveAttribute('data-valid', 'true');
  await expect(bad.getByTestId('run-start')).toBeEnabled();
  await bad.close();

  expect([...w.external, ...w2.external, ...w3.external], 'requests that left localhost').toEqual([]);
  // The page never loaded transformers.js or ONNX Runtime (they are for learned rewards, loaded on demand).
  expect(w.requests.filter((u) => /ort-wasm|onnx|transformers/i.test(u))).toEqual([]);
  expect([...w.errors, ...w2.errors, ...w3.errors], 'page errors').toEqual([]);
  await expect(page.getByTestId('panel-error')).toHaveCount(0);
});

test('a full storage quota is reported, training goes on, and saved runs survive', async ({ page, context }, info) => {
  // Four short runs' worth of steps: generous, since a loaded machine may be many times slower (nothing below
  // depends on how long a step takes).
  test.setTimeout(600_000);
  const w = await guard(page);
  // Give this origin a 2 MB quota (Chromium's override through the DevTools protocol; it binds a database
  // created after it). One tiny run takes about 1.2 MB (metrics, sampled groups, trainer state and checkpoint),
  // so the first run fits and the second fills the quota while it trains.
  // What fits must not depend on how long a step takes: with the wall-clock autosave on, a slow machine saved the
  // first run mid-way too and its extra saves filled the quota before the second run started.
  await stepDrivenSaves(page);
  const cdp = await context.newCDPSession(page);
  const origin = new URL(info.project.use.baseURL!).origin;
  await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: 2_000_000 });
  await page.goto(`/?preset=grpo&${SMALL}&steps=2&eval_every=2`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expect(page.getByTestId('notice')).toHaveCount(0);
  const firstId = await page.getByTestId('run-status').getAttribute('data-run-id');
  await expect(page.getByTestId('run-row')).toHaveCount(1);

  await setField(page, 'optimizer', 'seed', '3');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('notice').filter({ hasText: 'Storage is full' }).first()).toBeVisible({ timeout: 0 });
  await waitStatus(page, /done/, 2);
  // The page kept training and drawing: the new run's charts have both steps; the message came once.
  expect(Number(await page.getByTestId('chart-reward').getAttribute('data-points'))).toBe(2);
  await expect(page.getByTestId('notice').filter({ hasText: 'Storage is full' })).toHaveCount(1);
  await shot(page, info, 'lab-quota');

  await cdp.send('Storage.overrideQuotaForOrigin', { origin });
  await page.reload();
  await ready(page);
  const first = page.locator(`[data-testid=run-row][data-run-id="${firstId}"]`);
  await expect(first).toHaveAttribute('data-status', 'done');
  await expect(first).toHaveAttribute('data-step', '2');
  await first.getByTestId('run-open').click();
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', '2');
  // Its checkpoint was saved before the quota filled: it still exports.
  const [download] = await Promise.all([page.waitForEvent('download'), first.getByTestId('export-checkpoint').click()]);
  expect(download.suggestedFilename()).toMatch(/-step2\.zip$/);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
