// The reward_fn editor and saved runs in Chromium: a function that does not compile is shown at the person's own
// line and column (one-line and multi-line), makes no run however often Start is pressed and leaves one notice;
// "test on one batch" lists each completion's reward from the sandbox; a one-step run is renamed, and after a reload
// the finished run opens for an objective A/B (no Resume needed) and compares on a fresh batch. Screenshots of the
// editor and of the runs list (its header and buttons render in Debian's fonts).
import { expect, test } from '@playwright/test';
import { SMALL, guard, ready, setField, shot, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1400 } });

test('reward_fn editor: errors at the own line, a trial batch, no run for a bad function; A/B of a saved run after reload', async ({
  page,
}, info) => {
  // SwiftShader compiles the sampling kernels again after the reload, for the fresh batch: minutes on a busy machine.
  test.setTimeout(480_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=1&eval_every=0`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  const editor = page.getByTestId('reward-fn-editor');

  // One line that ends early: placed at the end of the person's line 1, not at the wrapper's line 2.
  await setField(page, 'task', 'reward_fn', '(p, c) => c.length +');
  await expect(editor).toHaveAttribute('data-state', 'error');
  await expect(page.getByTestId('reward-fn-error')).toContainText('reward_fn does not compile (line 1, column 21');
  await expect(page.getByTestId('reward-fn-place')).toHaveAttribute('data-line', '1');
  // Several lines: the error is on the person's line 3.
  await setField(page, 'task', 'reward_fn', '(p, c) => {\n  const n = c.length;\n  return n +* 2;\n}');
  await expect(page.getByTestId('reward-fn-error')).toContainText('reward_fn does not compile (line 3');
  await expect(page.getByTestId('reward-fn-place')).toHaveAttribute('data-line', '3');
  await editor.scrollIntoViewIfNeeded();
  await shot(page, info, 'reward-fn-error');

  // Start, twice: no run is created, and one notice names the problem.
  await page.getByTestId('run-start').click();
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('notice')).toHaveCount(1);
  await expect(page.getByTestId('notice')).toContainText('reward_fn does not compile (line 3');
  await expect(page.getByTestId('runs-panel')).toHaveAttribute('data-count', '0');

  // A good function: compiles, and the trial batch shows each completion's reward (1 for the answer, 0 altered).
  await setField(page, 'task', 'reward_fn', '(p, c, item) => (c === item.answer ? 1 : 0)');
  await expect(editor).toHaveAttribute('data-state', 'ok');
  await page.getByTestId('reward-fn-try').click();
  const rows = page.getByTestId('reward-fn-trial-row');
  await expect(rows).toHaveCount(8);
  await expect(page.locator('[data-testid=reward-fn-trial-row][data-kind=correct][data-reward="1"]')).toHaveCount(4);
  await expect(page.locator('[data-testid=reward-fn-trial-row][data-kind=altered][data-reward="0"]')).toHaveCount(4);
  await shot(page, info, 'reward-fn-trial');

  // A one-step run with it, renamed in the runs list.
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 1);
  const row = page.getByTestId('run-row');
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-status', 'done');
  await row.getByTestId('run-rename').click();
  await row.getByTestId('run-rename-input').fill('my baseline');
  await row.getByTestId('run-rename-input').press('Enter');
  await expect(row).toHaveAttribute('data-name', 'my baseline');
  await expect(row.getByTestId('run-open')).toHaveText('my baseline');

  // After a reload the finished run has no Resume, but opens for an A/B on a fresh batch.
  await page.reload();
  await ready(page);
  await expect(row).toHaveAttribute('data-status', 'done');
  await expect(row.getByTestId('run-resume-row')).toHaveCount(0);
  await page.getByTestId('runs-panel').scrollIntoViewIfNeeded();
  await shot(page, info, 'runs-list');
  await row.getByTestId('run-compare-row').click();
  await waitStatus(page, /done/, 1);
  const panel = page.getByTestId('compare-panel');
  await panel.scrollIntoViewIfNeeded();
  await expect(panel.getByTestId('compare-source-fresh')).toBeChecked();
  await panel.getByTestId('compare-preset').selectOption('dr_grpo');
  await expect(panel.getByTestId('compare-run')).toBeEnabled();
  await panel.getByTestId('compare-run').click();
  await expect(panel.getByTestId('compare-result')).toContainText('on a fresh batch sampled after step 1', {
    timeout: 0,
  });
  await shot(page, info, 'ab-after-reload');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
