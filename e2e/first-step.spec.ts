// Time to first step in a real Chromium with WebGPU on SwiftShader: the page as a newcomer opens it (no link: the
// first lesson's question), the answer and the lesson's Run, until a chart has drawn its first point; on a first
// visit (the shipped matmul variants; the adapter's tune waits until no run is loaded) and after a reload (the
// files from the offline cache). Prints
// where the time went from the page's and the engine worker's User Timing marks (src/worker/startup-marks.ts) and
// the worker's resource timings. A measurement, not a pass/fail: no timing is asserted (it depends on the load).
import { expect, test, type Page } from '@playwright/test';
import { guard, ready, shot, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1200 } });

interface Timeline {
  /** performance.timeOrigin of the page and of the engine worker (epoch ms). */
  pageOrigin: number;
  workerOrigin: number;
  /** Mark name -> ms since the page's navigation start. */
  marks: Record<string, number>;
  /** The worker's fetches of the site's files: path, start and end in ms since the page's navigation start. */
  fetches: [string, number, number][];
}

async function timeline(page: Page): Promise<Timeline> {
  const ofPage = await page.evaluate(() => ({
    origin: performance.timeOrigin,
    marks: performance
      .getEntriesByType('mark')
      .filter((m) => m.name.startsWith('rl-lab:'))
      .map((m) => [m.name, m.startTime] as [string, number]),
  }));
  const worker = page.workers().find((w) => w.url().includes('engine.worker'));
  if (!worker)
    throw new Error(
      `no engine worker among ${page
        .workers()
        .map((w) => w.url())
        .join(', ')}`,
    );
  const ofWorker = await worker.evaluate(() => ({
    origin: performance.timeOrigin,
    marks: performance
      .getEntriesByType('mark')
      .filter((m) => m.name.startsWith('rl-lab:'))
      .map((m) => [m.name, m.startTime] as [string, number]),
    fetches: (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map(
      (r) => [new URL(r.name).pathname, r.startTime, r.responseEnd] as [string, number, number],
    ),
  }));
  // Worker times count from the worker's start; shift them onto the page's clock.
  const shift = ofWorker.origin - ofPage.origin;
  const marks: Record<string, number> = {};
  for (const [name, t] of ofPage.marks) marks[name.slice('rl-lab:'.length)] = t;
  for (const [name, t] of ofWorker.marks) marks[`worker:${name.slice('rl-lab:'.length)}`] = t + shift;
  return {
    pageOrigin: ofPage.origin,
    workerOrigin: ofWorker.origin,
    marks,
    fetches: ofWorker.fetches.map(([p, a, b]) => [p, a + shift, b + shift]),
  };
}

/** The timeline as lines: each stage's time since navigation start and since the stage before it. */
function report(label: string, t: Timeline): string {
  const order = [
    'engine-start',
    'worker:device',
    'worker:autotune',
    'gpu-ready',
    'worker:prepare',
    'configure',
    'worker:run-configure',
    'worker:run-created',
    'worker:step-1',
    'first-metrics',
    'first-point',
    'worker:step-2',
  ];
  const lines = [`time to first step, ${label}:`];
  let prev = 0;
  // In the order they happened: the worker prepares the opening lesson's run before the app has started it.
  const happened = order.filter((name) => t.marks[name] !== undefined).sort((a, b) => t.marks[a] - t.marks[b]);
  for (const name of happened) {
    const at = t.marks[name];
    lines.push(`  ${name.padEnd(22)} ${(at / 1000).toFixed(2).padStart(7)} s  (+${((at - prev) / 1000).toFixed(2)} s)`);
    prev = at;
  }
  const run = t.marks.configure;
  const point = t.marks['first-point'];
  if (run !== undefined && point !== undefined)
    lines.push(`  Run pressed -> first point: ${((point - run) / 1000).toFixed(2)} s`);
  for (const [path, start, end] of t.fetches)
    lines.push(
      `  fetch ${path}: ${(start / 1000).toFixed(2)}-${(end / 1000).toFixed(2)} s (${(end - start).toFixed(0)} ms)`,
    );
  return lines.join('\n');
}

test('time to first step: page load to the first chart point, without and with a cached tune', async ({
  page,
}, info) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  const results: Record<string, Timeline> = {};
  const visits: [string, string, () => Promise<unknown>][] = [
    ['first visit', 'first-step-first-visit', () => page.goto('/')],
    ['reload', 'first-step-reload', () => page.reload()],
  ];
  for (const [visit, screenshot, open] of visits) {
    await open();
    await ready(page);
    // The first lesson's question (answered once: a reload keeps the answer), then its Run: the one control.
    await expect(page.getByTestId('lesson')).toHaveAttribute('data-lesson', 'first-run');
    await expect(page.getByTestId('run-start')).toBeDisabled();
    const choice = page.getByTestId('lesson-choice-2');
    if (await choice.isEnabled()) await choice.click();
    await page.getByTestId('lesson-run').click();
    await page.waitForFunction(() => performance.getEntriesByName('rl-lab:first-point').length > 0, null, {
      timeout: 300_000,
      polling: 100,
    });
    // The second step's mark gives the steady step time the first step is compared with.
    await waitStatus(page, /running/, 2, 300_000);
    results[visit] = await timeline(page);
    await shot(page, info, screenshot);
    await page.getByTestId('run-pause').click();
    await waitStatus(page, /paused/, 0, 300_000);
    console.log(report(visit, results[visit]));
  }
  for (const [visit, t] of Object.entries(results)) {
    // Every stage was reached, in order: the marks are what the numbers above are made of.
    expect(t.marks['first-point'], visit).toBeGreaterThan(t.marks['gpu-ready']);
    // The first point is the run's own (a reload draws its restored run before Run: that point does not count).
    expect(t.marks['first-point'], visit).toBeGreaterThan(t.marks['first-metrics']);
    expect(t.marks['first-metrics'], visit).toBeGreaterThan(t.marks.configure);
    expect(t.marks['worker:step-1'], visit).toBeGreaterThan(t.marks['worker:run-created']);
  }
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test("an adapter's own matmul tune is measured while no run is loaded, and a reload starts with it", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto('/');
  await ready(page);
  const status = page.getByTestId('run-status');
  const tuning = page.getByTestId('adapter-tuning');
  // Ready at once on the shipped variants; the tune measures in the background and says so, once the open
  // lesson's prepared first step (LabEngine.prepare) has left the device.
  await expect(tuning).toContainText('defaults for this kind of adapter');
  await expect(status).toHaveAttribute('data-tune', /^(measuring|done)$/, { timeout: 300_000 });
  await expect(status).toHaveAttribute('data-tune', 'done', { timeout: 540_000 });
  await expect(tuning).toHaveText(
    /^matmul autotune: NT \w+, NN \w+, TN \w+ \(measured in .*\); runs started from now on use it$/,
  );
  await expect(status).not.toContainText('tuning the matmul kernels');
  // The next visit installs the cached tune and measures nothing.
  await page.reload();
  await ready(page);
  await expect(tuning).toContainText('measured on this adapter before, cached');
  await expect(status).toHaveAttribute('data-tune', '');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
