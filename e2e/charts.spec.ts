// The metric charts read true in a real Chromium: one real training step gives a run's header and metric names,
// then two 150-step runs built under that header (values in realistic ranges: a reward in [0, 1] with a wide
// reward_std band, throughput and weight updates on log axes) are imported and overlaid. Checked on the page's
// SVG: no tick label overlaps another or its axis title, the last x tick label lies inside the chart, the reward
// axis stays at or above 0, x ticks are round steps, the overlaid group-signal chart draws no stacked areas, and
// the charts a run's config turns off are folded into one line whose clip-ratio entry opens its lesson.
// Screenshots of the charts at 1440 x 900 go to the test's output (and to SHOTS_DIR when set).
import { expect, test, type Page } from '@playwright/test';
import { mkdirSync, readFileSync } from 'node:fs';
import { guard, ready, shot, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 900 } });

const STEPS = 150;
const MATRICES = ['embed', 'layers.0.q', 'layers.0.k', 'layers.0.v', 'layers.0.o', 'head'];

/** One synthetic step's metrics: every name the real run reported, moved along plausible curves. */
function syntheticMetrics(names: readonly string[], real: Record<string, number>, i: number, seed: number) {
  const t = i / STEPS;
  const wobble = (j: number) => Math.sin(i / 7 + j + seed) * 0.5 + Math.cos(i * 1.3 + 2 * j + seed) * 0.5;
  const out: Record<string, number> = {};
  names.forEach((n, j) => {
    const v = real[n];
    const moved = Number.isFinite(v) ? v * (1 + 0.2 * wobble(j)) : 0;
    // A value in [0, 1] (a fraction, a 0/1 reward) stays there.
    out[n] = v >= 0 && v <= 1 ? Math.min(1, Math.max(0, moved)) : moved;
  });
  const reward = Math.min(1, Math.max(0, 0.25 + 0.5 * t + 0.08 * wobble(1)));
  const pass = Math.min(0.9, 0.1 + 0.5 * t);
  const fail = Math.max(0.05, 0.6 - 0.5 * t);
  Object.assign(out, {
    reward,
    accuracy: reward,
    reward_std: 0.45 + 0.1 * wobble(2),
    'groups/all_pass_frac': pass,
    'groups/all_fail_frac': fail,
    'groups/mixed_frac': 1 - pass - fail,
    'perf/rollout_tokens_per_s': 900 + 300 * wobble(3),
    'perf/train_tokens_per_s': 2400 + 600 * wobble(4),
    step_time: 0.8 + 0.3 * wobble(5),
  });
  MATRICES.forEach((m, k) => {
    out[`weights/${m}/rel_update`] = 2e-5 * (k + 1) * i ** 1.5;
    out[`weights/${m}/rank1_share`] = 0.3 + 0.2 * Math.sin(i / 20 + k);
  });
  return out;
}

interface Box {
  text: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Every tick label and axis title of a chart's SVG, with its box in page coordinates, and the SVG's own box. */
async function axisTexts(page: Page, chart: string) {
  return page.getByTestId(`chart-${chart}`).evaluate((fig) => {
    const svg = fig.querySelector('svg.recharts-surface')!;
    const box = (e: Element) => {
      const r = e.getBoundingClientRect();
      return { text: e.textContent ?? '', x: r.x, y: r.y, width: r.width, height: r.height };
    };
    const ticks = (axis: string) =>
      [...fig.querySelectorAll(`.recharts-${axis}-axis .recharts-cartesian-axis-tick-value`)].map(box);
    return {
      svg: box(svg),
      x: ticks('xAxis'),
      y: ticks('yAxis'),
      titles: [...fig.querySelectorAll('.recharts-label')].map(box),
    };
  });
}

const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;

test('chart axes: round ticks, no overlap, catalog ranges; overlays without stacks; off charts folded', async ({
  page,
}, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=1&eval_every=0`);
  await ready(page);
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused|done/, 1);
  const row = page.getByTestId('run-row').first();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    row.getByTestId('export-metrics-jsonl').click(),
  ]);
  const path = info.outputPath('real.jsonl');
  await download.saveAs(path);
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const steps = lines.map((l) => JSON.parse(l) as { type: string; metrics?: Record<string, number> });
  const real = steps.filter((s) => s.type === 'step').at(-1)!.metrics!;
  const names = Object.keys(real);

  for (const seed of [0, 1]) {
    const body = [header];
    for (let i = 1; i <= STEPS; i++)
      body.push(
        JSON.stringify({
          type: 'step',
          step: i,
          optimizer_step: i,
          epoch: 0,
          minibatch: 0,
          metrics: syntheticMetrics(names, real, i, seed),
        }),
      );
    await page.getByTestId('import-file').setInputFiles({
      name: `synthetic-${seed}.jsonl`,
      mimeType: 'application/json',
      buffer: Buffer.from(body.join('\n')),
    });
    await expect(page.getByTestId('import-ok')).toContainText(`(${STEPS} steps)`);
  }
  const imported = page.locator('[data-testid=run-row][data-status=imported]');
  await expect(imported).toHaveCount(2);
  await imported.nth(0).getByTestId('run-open').click();
  await imported.nth(1).getByTestId('overlay-toggle').check();
  await expect(page.getByTestId('charts')).toHaveAttribute('data-runs', '2');

  // Screenshots first (before any assertion), so a failing check still leaves the picture to look at.
  await page.getByTestId('charts').scrollIntoViewIfNeeded();
  await page.getByTestId('charts').evaluate((e) => e.scrollIntoView({ block: 'start' }));
  for (const id of ['reward', 'groups']) await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-drawn', /[1-9]/);
  await shot(page, info, 'charts-overlay');
  const charts = await page.getByTestId('charts').boundingBox();
  console.log(`charts section: ${Math.round(charts!.height)} px tall`);
  if (process.env.SHOTS_DIR) {
    mkdirSync(process.env.SHOTS_DIR, { recursive: true });
    await page.screenshot({ path: `${process.env.SHOTS_DIR}/charts-${process.env.SHOTS_NAME ?? 'shot'}.png` });
  }
  const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight);
  console.log(`page: ${pageHeight} px tall`);

  // Every metric chart (each drawn once scrolled near): ticks apart from each other and from the axis titles, the
  // last x tick inside the SVG.
  const drawnCharts = await page
    .locator('figure[data-testid^=chart-][data-metrics]')
    .evaluateAll((es) => es.map((e) => e.getAttribute('data-testid')!.slice(6)));
  for (const id of ['reward', 'throughput', 'weights']) expect(drawnCharts).toContain(id);
  for (const id of drawnCharts) {
    await page.getByTestId(`chart-${id}`).scrollIntoViewIfNeeded();
    await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-drawn', String(STEPS));
    if (id === 'throughput' || id === 'weights') {
      await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-log', 'true');
      await shot(page, info, `chart-${id}`);
    }
    const a = await axisTexts(page, id);
    for (const ticks of [a.x, a.y]) {
      for (let i = 0; i < ticks.length; i++)
        for (let j = i + 1; j < ticks.length; j++)
          expect(overlaps(ticks[i], ticks[j]), `${id}: ticks ${ticks[i].text} and ${ticks[j].text} overlap`).toBe(
            false,
          );
      for (const t of ticks)
        for (const title of a.titles)
          expect(overlaps(t, title), `${id}: tick ${t.text} overlaps the title ${title.text}`).toBe(false);
    }
    const lastX = a.x.at(-1)!;
    expect(lastX.x + lastX.width, `${id}: last x tick ${lastX.text} inside the chart`).toBeLessThanOrEqual(
      a.svg.x + a.svg.width + 0.5,
    );
    // Rollout steps land on round numbers (1-2-5 steps: 20, 40, ... or 25, 50, ...).
    const xs = a.x.map((t) => Number(t.text));
    expect(xs.length, `${id}: x ticks`).toBeGreaterThanOrEqual(3);
    const step = xs[1] - xs[0];
    expect([1, 2, 5].includes(step / 10 ** Math.floor(Math.log10(step))), `${id}: x tick step ${step}`).toBe(true);
    for (const x of xs) expect(x % step, `${id}: x tick ${x}`).toBe(0);
  }
  // A reward in [0, 1] with a band wider than that: the axis stays within [0, 1].
  const reward = await axisTexts(page, 'reward');
  const ys = reward.y.map((t) => Number(t.text));
  expect(Math.min(...ys)).toBeGreaterThanOrEqual(0);
  expect(Math.max(...ys)).toBeLessThanOrEqual(1);

  // Overlaid runs' group outcomes: no stacked areas on one axis (each run its own small plot, or lines).
  const groups = page.getByTestId('chart-groups');
  expect(await groups.locator('.recharts-area').count()).toBe(0);

  // The charts off in this run (the clip ratio under one update per batch) are one line, not a box each, and
  // the clip ratio's entry opens the lesson that explains why it is 0.
  const folded = page.getByTestId('charts-off');
  await expect(folded).toBeVisible();
  await expect(folded).toContainText('Clip ratio');
  await expect(page.locator('[data-testid=chart-clip]')).toHaveCount(0);
  await folded.getByTestId('chart-off-lesson-clip').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-lesson', 'clip-zero');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
