// What a newcomer meets once runs accumulate and the page reloads (issue 39), one test per finding, in the order a
// person meets them, in a real Chromium with WebGPU on SwiftShader at 1440x900: a run overlaid, then a lesson (its
// charts show exactly its runs; the overlay comes back when it closes); predict first kept honest (the answer waits
// for the run, the lesson's Run stays in view); a reload mid-lesson, then Resume at the top, the lesson's verdict and
// the narration quoting what the charts draw;
// one name per run in the list, the legend and the status line; the README's A/B (Dr. GRPO vs GRPO) with its
// one-click fix; the keyboard path (Escape then Tab leaves the reward_fn editor; the lesson's Run in at most 4 Tabs).
// Screenshots go to SHOTS_DIR (default test-results) as <finding>-<SHOTS_TAG>.png, for the before/after of the issue.
import { mkdirSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { fmt } from '../src/store/format';
import { guard, lastValues, ready, setField, SMALL, waitStatus } from './helpers';

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

test('2 and 4. a reload mid-lesson offers Resume at the top; the resumed run finishes with the verdict observed, and its narration quotes the values the charts draw', async ({
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
  // The resumed run is the uninterrupted one (a resume is exact): the lesson's phenomenon, observed.
  await expect(page.getByTestId('lesson-verdict')).toHaveAttribute('data-observed', 'true');
  await expect(page.getByTestId('lesson-narration')).not.toContainText('…');
  // The run has shown it: the answer and its explanation now.
  await expect(page.getByTestId('lesson-answer-feedback')).toBeVisible();

  // 4. The narration quotes the values the charts draw: smoothed at their weight, the last step only with smoothing
  // off (on this finished run, so finding 4 costs no lesson run of its own).
  const note = page.getByTestId('lesson-narration-smoothing');
  await expect(note).toContainText('smoothed (weight 0.6), not the last step alone');
  // "... and the reward the policy sees is X.": X as the narration quotes it.
  const quoted = async () => {
    const text = (await page.getByTestId('lesson-narration').locator('p').first().textContent()) ?? '';
    return Number(/the reward the policy sees is (-?\d+(?:\.\d+)?)/.exec(text)?.[1]);
  };
  const smoothed = await quoted();
  // Smoothing off: the note says so and the narration quotes the chart's last step exactly.
  await page.getByTestId('smoothing').fill('0');
  await expect(note).toContainText('the last step (smoothing is off)');
  const raw = (await lastValues(page, 'reward')).reward;
  await expect.poll(quoted).toBeCloseTo(raw, 3);
  // The two differ on this run (the reward moved over its last steps): the smoothed quote was not the last step.
  expect(Math.abs(smoothed - raw)).toBeGreaterThan(1e-3);
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

test("5. the runs table's reward is the charts' smoothed reward, and its heading says so", async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=4&eval_every=0`);
  await ready(page);
  await runToEnd(page, 1);
  await expect(page.getByTestId('runs-reward-head')).toHaveAttribute('title', /smoothed with the charts' smoothing/);
  const cell = page.getByTestId('run-row').first().getByTestId('run-reward');
  await expect(cell).toHaveAttribute('data-smoothed', 'true');
  // No smoothing: the raw last step, as the charts then draw it.
  const slider = page.getByTestId('smoothing');
  await slider.fill('0');
  const raw = (await lastValues(page, 'reward')).reward;
  await expect(cell).toHaveText(fmt(raw));
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

test('7. no keyboard trap: Escape then Tab leaves the reward_fn editor; the lesson Run takes the focus after the answer', async ({
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

  // The first lesson, answered by keyboard: the Run takes the focus once it can be pressed (the lesson's model may
  // still be loading), and Shift+Tab walks back through the look-here buttons and the reveal: nothing hidden between.
  await page.goto('/');
  await ready(page);
  await page.getByTestId('lesson-choice-2').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('lesson-run')).toBeFocused();
  const back: (string | null)[] = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('Shift+Tab');
    back.push(await focusedTestId(page));
  }
  expect(back).toEqual(['lesson-look-pass-at-k', 'lesson-look-entropy', 'lesson-look-reward', 'lesson-reveal']);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('8. offline after one visit: the shipped models/tiny-qwen2 trains; a file not kept is named as missing offline', async ({
  page,
  context,
}) => {
  test.setTimeout(600_000);
  // No guard here: a routed page bypasses its service worker, and the offline copy is what this test is about.
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const RUN =
    '/?preset=grpo&task=addition&difficulty=1&checkpoint=models/tiny-qwen2/&train_batch_size=2&num_generations=4' +
    '&max_completion_length=8&eval_every=0&steps=1';
  await page.goto(RUN);
  await ready(page);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 120_000 });
  await context.setOffline(true);
  try {
    await page.reload();
    await ready(page);
    await runToEnd(page, 1);
    await expect(page.getByTestId('notice')).toHaveCount(0);

    // A folder the offline copy does not hold: the message says the page is offline and which file is missing.
    await setField(page, 'task', 'checkpoint', 'models/not-shipped/');
    await page.getByTestId('run-start').click();
    const message = page.getByTestId('notice').filter({ hasText: 'models/not-shipped/' });
    await expect(message).toContainText(
      /\/models\/not-shipped\/[a-z_.]+: the page is offline and this file is not in its/,
    );
    await expect(message).not.toContainText('Failed to fetch');
    await expect(message).not.toContainText('model.safetensors.index.json');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shotAt(page, 'finding8-offline');
  } finally {
    await context.setOffline(false);
  }
  expect(errors).toEqual([]);
});

test('9. the step estimate: one method before and after the first run, with its range', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=1&eval_every=0`);
  await ready(page);
  const estimate = page.getByTestId('step-estimate');
  await expect(estimate).toHaveAttribute('data-state', 'ready', { timeout: 120_000 });
  // Before any run: the adapter's measured figures, and the range measured steps fell in when calibrated.
  await expect(estimate).toHaveAttribute('title', /Adapter figures: measured on this adapter/);
  await expect(estimate).toContainText(/about [\d.]+ (s|min) per step \([\d.]+-[\d.]+ (s|min)\) on this adapter/);
  const before = await estimate.getAttribute('data-seconds');
  const [low, high] = (await estimate.getAttribute('data-range'))!.split(',').map(Number);
  expect(low).toBeLessThan(Number(before));
  expect(high).toBeGreaterThan(Number(before));
  await shotAt(page, 'finding9-estimate');
  await runToEnd(page, 1);
  // After it: the same figures, so the same seconds for the same config (no jump when the probe lands).
  await expect(estimate).toHaveAttribute('data-state', 'ready');
  await expect(estimate).toHaveAttribute('title', /Adapter figures: measured on this adapter/);
  await expect(estimate).toHaveAttribute('data-seconds', before!);
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

test('10. words and layout: a jump list to the sections at the top; the model and checkpoint fields show a hub id whole', async ({
  page,
}) => {
  const w = await guard(page);
  await page.goto('/?checkpoint=models/tiny-qwen2');
  await ready(page);
  await shotAt(page, 'finding10-top');
  // The model field says where the architecture comes from, whole (not "from the checkpoint: c"); a hub id fits
  // the checkpoint field.
  const fromCheckpoint = page.getByTestId('model-from-checkpoint');
  await expect(fromCheckpoint).toContainText('from the checkpoint: models/tiny-qwen2');
  const checkpoint = page.getByTestId('checkpoint-input');
  await checkpoint.fill('HuggingFaceTB/SmolLM2-135M-Instruct');
  await checkpoint.scrollIntoViewIfNeeded();
  await shotAt(page, 'finding10-model-fields');
  // The jump list: at the top of the page, one link per section; the runs link brings the runs table into view.
  await page.evaluate(() => window.scrollTo(0, 0));
  const jump = page.getByTestId('jump-list');
  await expect(jump).toBeInViewport();
  for (const section of ['charts', 'inspector', 'compare', 'runs'])
    await expect(jump.getByTestId(`jump-${section}`)).toBeVisible();
  await jump.getByTestId('jump-runs').click();
  await expect(page.locator('#runs-title')).toBeInViewport();

  await expect(fromCheckpoint).toHaveText('from the checkpoint: HuggingFaceTB/SmolLM2-135M-Instruct');
  for (const testId of ['checkpoint-input', 'model-from-checkpoint']) {
    const { overflow, outside } = await page.getByTestId(testId).evaluate((e) => {
      const el = e as HTMLElement;
      const panel = el.closest('.panel')!.getBoundingClientRect();
      return { overflow: el.scrollWidth - el.clientWidth, outside: el.getBoundingClientRect().right - panel.right };
    });
    expect(overflow, `${testId}: text wider than the field`).toBeLessThanOrEqual(0);
    expect(outside, `${testId}: past the panel's edge`).toBeLessThanOrEqual(0);
  }
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test("10. words and layout: a lesson's docs references are links to the docs' sections", async ({ page }) => {
  const w = await guard(page);
  await page.goto('/?lesson=first-run');
  await ready(page);
  const link = page.getByTestId('lesson-source').getByRole('link', { name: 'docs/algorithms.md#advantage-estimators' });
  await expect(link).toHaveAttribute('href', 'docs/algorithms.html#advantage-estimators');
  const doc = await page.request.get(new URL('docs/algorithms.html', page.url()).href);
  expect(doc.ok()).toBe(true);
  expect(await doc.text()).toContain('<h2 id="advantage-estimators">Advantage estimators</h2>');
  // A field's help carries its section's math as a link too.
  await expect(
    page.getByTestId('field-temperature').locator('.field-doc a[href="docs/algorithms.html#sampling"]'),
  ).toHaveCount(1);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('10. words and layout: after a run, heatmap labels are whole and the chart grid has no empty cells', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=2&eval_every=1`);
  await ready(page);
  await runToEnd(page, 1);
  await expect(page.getByTestId('chart-pass-at-k')).toBeVisible();
  const heatmap = page.locator('.chart-grid .heatmap').first();
  await heatmap.scrollIntoViewIfNeeded();
  await shotAt(page, 'finding10-heatmap');
  // Every heatmap's row labels and column ticks lie whole inside what clips them: their own box where it hides
  // overflow, and their chart (which does).
  const clipped = await page.evaluate(() =>
    [...document.querySelectorAll('.chart-grid .heatmap')].flatMap((h) => {
      const chart = h.closest('.chart')!.getBoundingClientRect();
      return [...h.querySelectorAll<HTMLElement>('.heatmap-rows span, .heatmap-ticks span')]
        .filter((s) => (s.textContent ?? '') !== '')
        .flatMap((s) => {
          const range = document.createRange();
          range.selectNodeContents(s);
          const text = range.getBoundingClientRect();
          const boxes = [chart];
          if (getComputedStyle(s).overflow !== 'visible') boxes.push(s.getBoundingClientRect());
          const cut = boxes.some(
            (b) =>
              text.left < b.left - 0.5 ||
              text.right > b.right + 0.5 ||
              text.top < b.top - 0.5 ||
              text.bottom > b.bottom + 0.5,
          );
          return cut ? [`${h.getAttribute('data-testid')}: "${s.textContent}"`] : [];
        });
    }),
  );
  expect(clipped).toEqual([]);
  // Each row of the grid but the last is full: its charts span all the columns.
  const rows = await page.evaluate(() => {
    const grid = document.querySelector<HTMLElement>('.chart-grid')!;
    const columns = getComputedStyle(grid).gridTemplateColumns.split(' ').length;
    const items = [...grid.children].filter((c) => (c as HTMLElement).getClientRects().length > 0) as HTMLElement[];
    const byTop = new Map<number, number>();
    for (const item of items) {
      const top = Math.round(item.getBoundingClientRect().top);
      const span = getComputedStyle(item).gridColumnStart.startsWith('span')
        ? 2
        : item.classList.contains('wide')
          ? 2
          : 1;
      byTop.set(top, (byTop.get(top) ?? 0) + span);
    }
    return { columns, filled: [...byTop.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]) };
  });
  await page.getByTestId('chart-pass-at-k').scrollIntoViewIfNeeded();
  await shotAt(page, 'finding10-chart-grid');
  expect(rows.columns).toBe(2);
  expect(
    rows.filled.slice(0, -1).every((n) => n === rows.columns),
    `cells per row: ${rows.filled}`,
  ).toBe(true);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('10. words and layout: a LoRA run of models/tiny-qwen2/ exports a PEFT snippet whose base Python can load', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(
    '/?preset=grpo&task=addition&difficulty=1&checkpoint=models/tiny-qwen2/&train_batch_size=2&num_generations=4' +
      '&max_completion_length=8&eval_every=0&lora_rank=4&lora_alpha=8&steps=1',
  );
  await ready(page);
  await runToEnd(page, 1);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('run-row').first().getByTestId('export-checkpoint').click(),
  ]);
  const folder = download.suggestedFilename().replace(/\.zip$/, '');
  const python = page.getByTestId('export-python');
  await expect(python).toBeVisible();
  await page.getByTestId('last-export').scrollIntoViewIfNeeded();
  await shotAt(page, 'finding10-peft');
  await expect(python).toContainText(
    `PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained("tiny-qwen2"), "${folder}-adapter")`,
  );
  await expect(python).toContainText("this site's models/tiny-qwen2/");
  await expect(python).not.toContainText('from_pretrained("models/');
  await expect(page.getByTestId('last-export')).toContainText('tiny-qwen2/');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
