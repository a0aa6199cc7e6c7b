// The metric charts read true in a real Chromium: two 150-step GRPO runs (every metric of the catalog a GRPO run
// reports, on plausible curves: a reward in [0, 1] with a wide reward_std band, throughput and weight updates on
// log axes) are imported as run files and overlaid, without training (the axes are the page's, not the trainer's).
// Checked on the page's SVG: no tick label overlaps another or its axis title, the last x tick label lies inside the
// chart, the reward axis stays within [0, 1], x ticks are round steps, the overlaid group-signal chart draws no
// stacked areas, the charts the runs' config turns off are folded into one line whose clip-ratio entry opens its
// lesson, and the loss and zero-signal charts link the lesson on dead groups. Screenshots of the charts at
// 1440 x 900 go to the test's output (and to SHOTS_DIR when set).
import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { resolveConfig } from '../src/schema/config';
import { METRICS } from '../src/schema/metrics';
import { guard, shot } from './helpers';

test.use({ viewport: { width: 1440, height: 900 } });

const STEPS = 150;
const MATRICES = ['embed', 'layers.0.q', 'layers.0.k', 'layers.0.v', 'layers.0.o', 'head'];
/** A GRPO run reports neither the critic's metrics nor CISPO's. */
const NOT_GRPO = new Set(['value_loss', 'critic/grad_norm', 'cispo_clip_ratio']);
/** Each catalog metric a GRPO run reports, templates filled in (weights are set apart below). */
const NAMES = METRICS.filter(
  (m) => m.chart !== 'critic' && !NOT_GRPO.has(m.name) && !m.name.startsWith('weights/'),
).map((m) => m.name.replace('<fn>', 'accuracy').replace('<phase>', 'gen'));
/** A typical value of a unit, the curves' middle. */
const TYPICAL: Record<string, number> = { fraction: 0.3, nats: 1, tokens: 5, 'tokens/s': 1000, s: 0.5, reward: 0.5 };

/** One step's metrics, every name moved along a curve of its own. */
function syntheticMetrics(i: number, seed: number) {
  const t = i / STEPS;
  const wobble = (j: number) => Math.sin(i / 7 + j + seed) * 0.5 + Math.cos(i * 1.3 + 2 * j + seed) * 0.5;
  const out: Record<string, number> = {};
  NAMES.forEach((n, j) => {
    const unit = METRICS.find((m) => m.name.replace('<fn>', 'accuracy').replace('<phase>', 'gen') === n)!.unit;
    const v = (TYPICAL[unit] ?? 0.1) * (1 + 0.2 * wobble(j));
    out[n] = unit === 'fraction' ? Math.min(1, v) : v;
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
    // One update per batch: the ratio is 1, so nothing clips and approx_kl is 0.
    'clip_ratio/low_mean': 0,
    'clip_ratio/low_min': 0,
    'clip_ratio/high_mean': 0,
    'clip_ratio/high_max': 0,
    'clip_ratio/region_mean': 0,
    approx_kl: 0,
    'perf/rollout_tokens_per_s': 900 + 300 * wobble(3),
    'perf/train_tokens_per_s': 2400 + 600 * wobble(4),
    learning_rate: 1e-3,
  });
  MATRICES.forEach((m, k) => {
    out[`weights/${m}/rel_update`] = 2e-5 * (k + 1) * i ** 1.5;
    out[`weights/${m}/rank1_share`] = 0.3 + 0.2 * Math.sin(i / 20 + k);
  });
  return out;
}

/** A run file (the format the runs list exports) of a GRPO run on copy with this seed. */
function runFile(seed: number): string {
  const config = resolveConfig('grpo', { task: 'copy', difficulty: 3, checkpoint: 'copy', seed, steps: STEPS });
  const lines = [
    JSON.stringify({
      type: 'run',
      format: 'rl-lab-run',
      version: 1,
      id: `synthetic-${seed}`,
      name: `synthetic ${seed}`,
      created_at: 1_700_000_000_000 + seed,
      preset: 'grpo',
      backend: 'webgpu',
      status: 'done',
      step: STEPS,
      elapsed_ms: 0,
      adapter: '',
      config,
    }),
  ];
  for (let i = 1; i <= STEPS; i++)
    lines.push(
      JSON.stringify({
        type: 'step',
        step: i,
        optimizer_step: i,
        epoch: 0,
        minibatch: 0,
        metrics: syntheticMetrics(i, seed),
      }),
    );
  return lines.join('\n');
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
    // Tick labels are drawn in a layer of their own (recharts-xAxis-tick-labels), apart from the axis line.
    const ticks = (axis: string) =>
      [...fig.querySelectorAll(`.recharts-${axis}-tick-labels .recharts-cartesian-axis-tick-value`)].map(box);
    return {
      svg: box(svg),
      x: ticks('xAxis'),
      y: ticks('yAxis'),
      html: fig.querySelector('svg')?.outerHTML.slice(0, 3000) ?? '',
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
  await page.goto('/');
  for (const seed of [0, 1]) {
    await page.getByTestId('import-file').setInputFiles({
      name: `synthetic-${seed}.jsonl`,
      mimeType: 'application/json',
      buffer: Buffer.from(runFile(seed)),
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
  for (const id of ['reward', 'groups'])
    await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-drawn', /[1-9]/);
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
    expect(a.x.length, `${id}: x tick labels in ${a.html}`).toBeGreaterThan(0);
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
  await expect(folded.getByTestId('chart-clip')).toHaveAttribute('data-off', 'true');
  await expect(page.locator('figure[data-testid=chart-clip]')).toHaveCount(0);
  // Opened, it says which knob turned each chart off.
  await expect(folded.getByTestId('chart-off-curriculum').getByTestId('chart-off')).toHaveText(
    'off in every run: curriculum = fixed (every step samples the configured difficulty)',
  );
  // GRPO's loss near 0 and the zero-signal groups link the lesson on dead groups.
  for (const id of ['loss', 'fractions'])
    await expect(page.getByTestId(`chart-lesson-${id}`)).toHaveAttribute('data-lesson', 'dead-groups');
  await folded.getByTestId('chart-off-lesson-clip').click();
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-lesson', 'clip-zero');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
