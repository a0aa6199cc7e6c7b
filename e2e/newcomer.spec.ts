// What a newcomer meets once runs accumulate and the page reloads (issue 39), one test per finding, in the order a
// person meets them, in a real Chromium with WebGPU on SwiftShader at 1440x900: a run overlaid, then a lesson (its
// charts show exactly its runs; the overlay comes back when it closes); predict first kept honest (the answer waits
// for the run, the lesson's Run stays in view); a reload mid-lesson, then Resume at the top, and the lesson's verdict;
// one name per run in the list, the legend and the status line; the README's A/B (Dr. GRPO vs GRPO) with its
// one-click fix; the keyboard path (Escape then Tab leaves the reward_fn editor; the lesson's Run in at most 4 Tabs).
// Screenshots go to SHOTS_DIR (default test-results) as <finding>-<SHOTS_TAG>.png, for the before/after of the issue.
import { mkdirSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { guard, ready, setField, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 900 } });

const SHOTS_DIR = process.env.SHOTS_DIR ?? 'test-results/newcomer-shots';
const SHOTS_TAG = process.env.SHOTS_TAG ?? 'after';

/** A viewport screenshot saved as <name>-<tag>.png under SHOTS_DIR. */
async function shotAt(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: `${SHOTS_DIR}/${name}-${SHOTS_TAG}.png` });
}

const focusedTestId = (page: Page) =>
  page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? '');

/** Starts a new run from the edited config and waits until it is done (the runs list has `count` runs then). */
async function runToEnd(page: Page, count: number): Promise<void> {
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('runs-panel')).toHaveAttribute('data-count', String(count));
  await waitStatus(page, /done/);
}

test('1. a lesson shows exactly its runs; the overlay ticked before comes back when it closes', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=1&eval_every=0`);
  await ready(page);
  await runToEnd(page, 1);
  await setField(page, 'optimizer', 'seed', '1');
  await runToEnd(page, 2);
  // Tick the other run: two runs on the charts.
  const notViewed = page.locator('[data-testid=run-row]:not(.viewing)');
  await notViewed.getByTestId('overlay-toggle').check();
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '2');

  // A lesson opens: none of the earlier runs is drawn on its charts (it has none of its own yet).
  await page.getByTestId('lesson-item-reward-hacking').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-lesson', 'reward-hacking');
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '0');
  // Nor on the distributions beside them.
  await expect(page.getByTestId('heatmap-advantage')).toHaveAttribute('data-steps', '0');
  await expect(page.getByTestId('config-diff')).toHaveCount(0);
  await page.getByTestId('charts').scrollIntoViewIfNeeded();
  await shotAt(page, 'finding1-lesson-charts');

  // Closed: the person's view is back, overlay included.
  await page.getByTestId('lesson-close').click();
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '2');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('3. predict first: the answer waits for the run (or for the asking), and the lesson Run stays in view', async ({
  page,
}) => {
  const w = await guard(page);
  await page.goto('/?lesson=reward-hacking');
  await ready(page);
  await page.getByTestId('lesson-choice-1').click();
  await expect(page.getByTestId('lesson-prediction')).toBeVisible();
  await expect(page.getByTestId('lesson-answer-feedback')).toHaveCount(0);
  await expect(page.locator('.lesson-choices .choice.right')).toHaveCount(0);
  await expect(page.getByTestId('lesson-run')).toBeEnabled();
  await expect(page.getByTestId('lesson-run')).toBeInViewport();
  // Asked for, it shows at once.
  await page.getByTestId('lesson-reveal').click();
  await expect(page.getByTestId('lesson-answer-feedback')).toBeVisible();
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('2. a reload mid-lesson offers Resume at the top; the resumed run finishes the narration and the verdict', async ({
  page,
}) => {
  test.setTimeout(900_000);
  const w = await guard(page);
  await page.goto('/?lesson=reward-hacking');
  await ready(page);
  await page.getByTestId('lesson-choice-1').click();
  await page.getByTestId('lesson-run').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-phase', 'running');
  // Reload once a saved state exists (every 10 steps or 30 s), before the run's 12 steps are done.
  await expect(page.getByTestId('run-status')).toContainText(/saved at step \d+/, { timeout: 600_000 });
  const step = Number(await page.getByTestId('run-status').getAttribute('data-step'));
  expect(step, 'the run finished before the reload; the test needs it mid-run').toBeLessThan(12);
  await page.reload();
  await ready(page);

  const offer = page.getByTestId('lesson-interrupted');
  await expect(offer).toBeVisible();
  await expect(offer).toBeInViewport();
  await expect(offer).toContainText(/stopped at step \d+\/12/);
  await expect(page.getByTestId('run-status')).toContainText('Resume it in the lesson');
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '1');
  await shotAt(page, 'finding2-reload');

  await page.getByTestId('lesson-resume').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-phase', 'done', { timeout: 600_000 });
  await expect(page.getByTestId('lesson-verdict')).toBeVisible();
  await expect(page.getByTestId('lesson-narration')).not.toContainText('…');
  // The run has shown it: the answer and its explanation now.
  await expect(page.getByTestId('lesson-answer-feedback')).toBeVisible();
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('5. one name per run: the runs list, the status line and the legend agree, and a name stays when runs are added', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=dr_grpo&steps=1&eval_every=0`);
  await ready(page);
  await runToEnd(page, 1);
  const first = page.getByTestId('run-row').first();
  const name = (await first.getAttribute('data-label'))!;
  await expect(page.getByTestId('status-name')).toHaveText(name);

  await setField(page, 'optimizer', 'seed', '1');
  await runToEnd(page, 2);
  const firstRow = page.locator(`[data-testid=run-row][data-label="${name}"]`);
  await expect(firstRow).toHaveCount(1); // the first run kept its name
  const second = page.locator('[data-testid=run-row].viewing');
  const secondName = (await second.getAttribute('data-label'))!;
  expect(secondName).not.toBe(name);
  await expect(page.getByTestId('status-name')).toHaveText(secondName);
  await firstRow.getByTestId('overlay-toggle').check();
  await expect(page.getByTestId('overlay-legend')).toContainText(name);
  await expect(page.getByTestId('overlay-legend')).toContainText(secondName);
  await expect(firstRow).toHaveAttribute('data-label', name);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shotAt(page, 'finding5-names');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test("6. the README's A/B: a Dr. GRPO run against GRPO offers the beta fix, Compare waits for it, then compares", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(
    '/?preset=dr_grpo&task=copy&difficulty=3&checkpoint=copy&train_batch_size=4&num_generations=4&steps=1&eval_every=0&temperature=1',
  );
  await ready(page);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 1);
  const panel = page.getByTestId('compare-panel');
  await panel.scrollIntoViewIfNeeded();
  await panel.getByTestId('compare-preset').selectOption('grpo');
  await expect(panel.getByTestId('compare-fix')).toContainText("B's beta 0.04 adds a KL term");
  await expect(panel.getByTestId('compare-run')).toBeDisabled();
  await panel.getByTestId('compare-fix-apply').click();
  await expect(panel.getByTestId('compare-fix')).toHaveCount(0);
  await expect(panel.getByTestId('compare-run')).toBeEnabled();
  await panel.getByTestId('compare-run').click();
  await expect(panel.getByTestId('compare-result')).toBeVisible({ timeout: 120_000 });
  await expect(panel.getByTestId('compare-error')).toHaveCount(0);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('7. no keyboard trap: Escape then Tab leaves the reward_fn editor; the lesson Run within 4 Tabs of the answer', async ({
  page,
}) => {
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=1`);
  await ready(page);
  const details = page.getByTestId('section-task');
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await details.locator('summary').click();
  const editor = page.getByTestId('reward-fn-text');
  await editor.fill('(p, c) => 1');
  await editor.focus();
  await page.keyboard.press('End');
  await page.keyboard.press('Tab'); // indents
  await expect(editor).toBeFocused();
  await expect(editor).toHaveValue('(p, c) => 1  ');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab'); // leaves
  await expect(editor).not.toBeFocused();

  // The first lesson: answered by keyboard, its Run is the next stop within 4 Tabs.
  await page.goto('/');
  await ready(page);
  await page.getByTestId('lesson-choice-2').focus();
  await page.keyboard.press('Enter');
  let tabs = 0;
  while (tabs < 4 && (await focusedTestId(page)) !== 'lesson-run') {
    await page.keyboard.press('Tab');
    tabs++;
  }
  expect(await focusedTestId(page), `after ${tabs} Tabs`).toBe('lesson-run');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('10. words and layout: the status after an answer, field names broken only after an underscore', async ({
  page,
}) => {
  const w = await guard(page);
  await page.goto('/');
  await ready(page);
  await page.getByTestId('lesson-choice-2').click();
  await expect(page.getByTestId('run-status')).toContainText("no run yet: press the lesson's Run");
  // Every visible field name: each of its underscore-separated parts sits on one line.
  const field = page.getByTestId('field-mask_truncated_completions');
  const section = page.locator('details.config-section', { has: field });
  if (!(await section.evaluate((d) => (d as HTMLDetailsElement).open))) await section.locator('summary').click();
  await field.scrollIntoViewIfNeeded();
  await shotAt(page, 'finding10-field-names');
  const broken = await page.evaluate(() =>
    [...document.querySelectorAll('.field-name')]
      .filter((e) => (e as HTMLElement).offsetParent !== null)
      .flatMap((e) =>
        [...e.childNodes]
          .filter((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').replace('_', '').length > 0)
          .flatMap((n) => {
            const text = (n.textContent ?? '').replace(/_$/, '');
            const r = document.createRange();
            r.setStart(n, 0);
            r.setEnd(n, text.length);
            const lines = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
            return lines.size > 1 ? [`${e.textContent}: "${text}"`] : [];
          }),
      ),
  );
  expect(broken).toEqual([]);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
