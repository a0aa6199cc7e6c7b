// Lessons end to end in a real Chromium with WebGPU on SwiftShader, through the real trainer in the engine worker:
// a shared link (?lesson=<id>) opens the lesson, the learner answers before Run is enabled (the answer is judged
// once the runs are done), the lesson's runs go
// one after the other, the narration quotes live numbers, the lesson's charts are outlined, the check's verdict
// shows its values, and a reload keeps the learner's progress. WALKED lists the lessons walked here (each costs
// its full runs on a software GPU). No request leaves localhost; screenshots are saved as artifacts.
import { expect, test, type Page } from '@playwright/test';
import { guard, lastValues, ready, shot, waitStatus } from './helpers';

// The offline copy's service worker would serve the shipped teacher from its cache, out of the request log the
// distillation lesson's test reads; offline is e2e/offline.spec.ts's and newcomer.spec.ts's.
test.use({ viewport: { width: 1440, height: 1200 }, serviceWorkers: 'block' });

/**
 * The lessons walked end to end: id, the choice the learner makes, a chart the lesson highlights and its first
 * inspector plane. A second lesson is one more entry here. reward-hacking runs to its verdict in
 * e2e/newcomer.spec.ts, through a reload mid-run and Resume.
 */
const WALKED = [{ id: 'clip-zero', choice: 0, chart: 'clip', plane: 'ratio' }] as const;

/** The verdict's values as the page shows them (name -> number). */
async function verdictValues(page: Page): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const row of await page.getByTestId('lesson-value').all())
    out[(await row.locator('th').textContent())!] = Number(await row.locator('td').textContent());
  return out;
}

test("a newcomer's first minutes: the first lesson's question, its Run the one control, Look here, a token by keyboard", async ({
  page,
}, info) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  await ready(page);
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-lesson', 'first-run');
  await expect(page.getByTestId('lesson-choice-0')).toBeVisible();
  await expect(page).toHaveURL(/\?lesson=first-run$/);
  // One control: Start, Step and Run over seeds wait while the lesson is open, and say so.
  for (const id of ['run-start', 'run-step', 'seeds-start']) await expect(page.getByTestId(id)).toBeDisabled();
  await expect(page.getByTestId('run-start-blocked')).toContainText('A lesson is open');
  await expect(page.getByTestId('run-status')).toContainText("answer the lesson's question");
  await expect(page.getByTestId('lesson-run')).toBeDisabled();
  await expect(page.getByTestId('lesson-run')).toBeInViewport();
  await shot(page, info, 'no-link-first-view');

  // Look here: the lesson's chart comes into view, outlined.
  const chart = page.getByTestId('chart-reward');
  await expect(chart).toHaveAttribute('data-highlighted', 'true');
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await expect(chart).not.toBeInViewport();
  await page.getByTestId('lesson-look-reward').click();
  await expect(chart).toBeInViewport();
  expect(await chart.evaluate((e) => getComputedStyle(e).outlineStyle)).toBe('solid');

  // Answer, then the lesson's Run: the status names the phases, and the reward chart gets its first point.
  await page.getByTestId('lesson-choice-2').click();
  await expect(page.getByTestId('lesson-prediction')).toBeVisible(); // the answer waits for the run
  await page.getByTestId('lesson-run').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-phase', 'running');
  await expect(page.getByTestId('run-status')).toContainText(/compiling|evaluating|training|step/);
  await expect
    .poll(async () => Object.keys(await lastValues(page, 'reward')).length, { timeout: 300_000 })
    .toBeGreaterThan(0);
  await page.getByTestId('lesson-look-reward').click();
  await expect(chart).toBeInViewport();
  await shot(page, info, 'newcomer-first-point');

  // Pause the lesson's run to read its tokens; then a token of the inspector by keyboard: one Tab stop per group,
  // the arrows move, Enter selects.
  await page.getByTestId('run-pause').click();
  await waitStatus(page, /paused/);
  await page.getByTestId('color-by').focus();
  const focused = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? '');
  for (let i = 0; i < 12 && (await focused()) !== 'token'; i++) await page.keyboard.press('Tab');
  expect(await focused()).toBe('token');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('token-detail')).toContainText('position 1');

  // Closing the lesson stops its run and gives Start back; the address carries the config again.
  await page.getByTestId('run-close-lesson').click();
  await expect(page.getByTestId('run-start')).toBeEnabled({ timeout: 120_000 });
  await expect(page).toHaveURL(/preset=grpo/);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

for (const walk of WALKED) {
  test(`lesson ${walk.id}: answer, run, narration, verdict, progress kept`, async ({ page }, info) => {
    test.setTimeout(600_000);
    const w = await guard(page);
    await page.goto(`/?lesson=${walk.id}`);
    await ready(page);
    const lesson = page.getByTestId('lesson');
    await expect(lesson).toHaveAttribute('data-lesson', walk.id);
    await expect(page.getByTestId(`chart-${walk.chart}`)).toHaveAttribute('data-highlighted', 'true');
    await expect(page.getByTestId('color-by')).toHaveValue(walk.plane);
    await expect(page.getByTestId(`lesson-plane-${walk.plane}`)).toHaveAttribute('aria-pressed', 'true');

    // Predict first: Run waits for an answer; the answer is judged and explained.
    await expect(page.getByTestId('lesson-run')).toBeDisabled();
    await shot(page, info, `${walk.id}-opened`);
    await page.getByTestId(`lesson-choice-${walk.choice}`).click();
    await expect(page.getByTestId('lesson-prediction')).toBeVisible();
    await expect(page.getByTestId('lesson-answer-feedback')).toHaveCount(0); // judged and explained after the run
    await expect(page.getByTestId(`lesson-choice-${walk.choice}`)).toBeDisabled();

    // Run: the runs go one after the other; the narration quotes the live values of the first.
    await page.getByTestId('lesson-run').click();
    await expect(lesson).toHaveAttribute('data-phase', 'running');
    const firstRun = page.getByTestId('lesson-runs').locator('li').first();
    await expect(firstRun).toHaveAttribute('data-state', 'training');
    const narration = page.getByTestId('lesson-narration').locator('p').first();
    await expect(narration).not.toContainText('…', { timeout: 300_000 });
    await expect(narration).toContainText(/\d/);
    await shot(page, info, `${walk.id}-running`);

    // The verdict, with the numbers it rests on.
    await expect(lesson).toHaveAttribute('data-phase', /done|stopped/, { timeout: 540_000 });
    await expect(lesson).toHaveAttribute('data-phase', 'done');
    const verdict = page.getByTestId('lesson-verdict');
    await expect(verdict).toHaveAttribute('data-observed', 'true');
    await expect(verdict).toContainText('Observed');
    await expect(page.getByTestId('lesson-answer-feedback')).toBeVisible();
    const values = await verdictValues(page);
    expect(Object.keys(values).length).toBeGreaterThan(0);
    for (const [k, v] of Object.entries(values)) expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
    await expect(page.getByTestId('lesson-narration')).not.toContainText('…');
    await expect(page.getByTestId('lesson-rerun')).toBeEnabled();
    // Every run of the lesson is on the charts, named by what differs.
    await expect(page.getByTestId('charts')).toHaveAttribute(
      'data-runs',
      String(await page.getByTestId('lesson-runs').locator('li').count()),
    );
    await verdict.scrollIntoViewIfNeeded();
    await shot(page, info, `${walk.id}-verdict`);

    // A reload keeps the progress: the answer stands, and the list marks the lesson run and observed.
    await page.reload();
    await ready(page);
    await expect(page.getByTestId('lesson-answer-feedback')).toBeVisible();
    await expect(page.getByTestId('lesson-run')).toBeEnabled();
    await page.getByTestId('lesson-close').click();
    const marks = page.getByTestId(`lesson-progress-${walk.id}`);
    await expect(marks).toHaveAttribute('data-completed', 'true');
    await expect(marks).toHaveAttribute('data-observed', 'true');
    await shot(page, info, `${walk.id}-list-after-reload`);

    // An unknown lesson id names the known ones.
    await page.goto('/?lesson=no-such-lesson');
    await expect(page.getByText(`There is no lesson "no-such-lesson". The lessons are:`)).toBeVisible();
    await expect(page.getByTestId(`lesson-item-${walk.id}`)).toBeVisible();

    expect(w.external).toEqual([]);
    expect(w.errors).toEqual([]);
  });
}

// The supervised run of rl-vs-sft trains on the page (the engine's run session in mode 'sft'): after the answer Run
// is enabled, and the SFT run's steps chart its loss. Two steps of it are enough to show it goes through the lab.
test('lesson rl-vs-sft: its supervised run trains on the page', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto('/?lesson=rl-vs-sft');
  await ready(page);
  await page.getByTestId('lesson-choice-1').click();
  await expect(page.getByTestId('lesson-run')).toBeEnabled();
  await expect(page.getByTestId('lesson-blocked')).toHaveCount(0);
  await page.getByTestId('lesson-run').click();
  await expect(page.getByTestId('lesson-run-sft')).toHaveAttribute('data-state', 'training');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-step', /^([2-9]|1\d)$/, { timeout: 540_000 });
  const loss = page.getByTestId('chart-loss');
  await expect(loss).toHaveAttribute('data-last', /"loss":\d/);
  expect(Number(await loss.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

// distill-vs-rl's runs carry a teacher (models/copy-teacher, fetched from the site by the engine worker): its first
// run, GRPO with the teacher only watching (distill_coef 0), trains on the page and charts the KL of the student's
// samples to the teacher, with none of the advantage the teacher's. Two steps show the teacher goes through the lab.
test('lesson distill-vs-rl: its runs load the teacher and chart the KL to it on the page', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto('/?lesson=distill-vs-rl');
  await ready(page);
  await page.getByTestId('lesson-choice-1').click();
  await expect(page.getByTestId('lesson-run')).toBeEnabled();
  await expect(page.getByTestId('lesson-blocked')).toHaveCount(0);
  await page.getByTestId('lesson-run').click();
  await expect(page.getByTestId('lesson-run-rl')).toHaveAttribute('data-state', 'training');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-step', /^([2-9]|1\d)$/, { timeout: 540_000 });
  await expect.poll(async () => (await lastValues(page, 'kl'))['distill/reverse_kl'] ?? 0).toBeGreaterThan(0);
  expect((await lastValues(page, 'fractions'))['distill/adv_share']).toBe(0);
  expect(w.requests.some((p) => p.endsWith('/models/copy-teacher/model.safetensors'))).toBe(true);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
