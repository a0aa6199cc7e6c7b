// Helpers of the lab's browser tests: the smallest real experiment, a guard that fails requests leaving this
// machine and records page errors and main-thread long tasks, and small page actions. Not a test file.
import { expect, type Page, type TestInfo } from '@playwright/test';

/** The smallest real experiment (the preset, steps and eval_every are each test's; a parameter given twice is an error). */
export const SMALL =
  'task=copy&difficulty=3&checkpoint=copy&train_batch_size=2&num_generations=4&eval_items=2&eval_num_generations=4';

export interface Watch {
  external: string[];
  errors: string[];
  /** Every URL the page requested (same origin included). */
  requests: string[];
}

/** Fails every request that would leave this machine, and records page errors. */
export async function guard(page: Page): Promise<Watch> {
  const w: Watch = { external: [], errors: [], requests: [] };
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    w.requests.push(url.pathname);
    if (['127.0.0.1', 'localhost'].includes(url.hostname) || url.protocol === 'data:' || url.protocol === 'blob:')
      return route.continue();
    w.external.push(route.request().url());
    return route.abort();
  });
  page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if ((m.type() === 'error' || /failed to render/.test(m.text())) && !/Failed to load resource/.test(m.text()))
      w.errors.push(`console: ${m.text()}`);
  });
  // Long tasks on the main thread (> 50 ms each) and the chart render jobs (user timing), from page start.
  await page.addInitScript(() => {
    const w = window as unknown as { __longTasks: [number, number][]; __renders: [string, number, number][] };
    w.__longTasks = [];
    w.__renders = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longTasks.push([e.startTime, e.duration]);
    }).observe({ type: 'longtask', buffered: true });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.duration > 40) w.__renders.push([e.name, e.startTime, e.duration]);
    }).observe({ type: 'measure', buffered: true });
  });
  return w;
}

export async function ready(page: Page): Promise<void> {
  const panel = page.getByTestId('gpu-panel');
  // No deadline of its own (the test's timeout bounds it): on a loaded machine the device can take minutes.
  await expect(panel).toHaveAttribute('data-state', /^(ready|unavailable|error)$/, { timeout: 0 });
  if ((await panel.getAttribute('data-state')) !== 'ready')
    throw new Error(`no WebGPU adapter in Chromium: ${await page.getByTestId('adapter-status').textContent()}`);
}

/** A screenshot of the viewport (a full-page capture resizes the page, which is not what a person sees). */
export async function shot(page: Page, info: TestInfo, name: string): Promise<void> {
  const path = info.outputPath(`${name}.png`);
  await page.screenshot({ path });
  await info.attach(name, { path, contentType: 'image/png' });
}

export async function lastValues(page: Page, chart: string): Promise<Record<string, number>> {
  return JSON.parse((await page.getByTestId(`chart-${chart}`).getAttribute('data-last')) ?? '{}') as Record<
    string,
    number
  >;
}

/** Each of `charts` has metrics, and every latest value is finite. */
export async function expectFiniteCharts(page: Page, charts: readonly string[]): Promise<void> {
  for (const chart of charts) {
    const last = await lastValues(page, chart);
    expect(Object.keys(last).length, `chart ${chart} has metrics`).toBeGreaterThan(0);
    for (const [k, v] of Object.entries(last)) expect(Number.isFinite(v), `${chart}: ${k} = ${v}`).toBe(true);
  }
}

export async function setField(page: Page, section: string, field: string, value: string): Promise<void> {
  const details = page.getByTestId(`section-${section}`);
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await details.locator('summary').click();
  await page.locator(`#field-input-${field}`).fill(value);
}

/** Waits for the run's status (and step); no deadline of its own unless given: the test's timeout bounds it. */
export async function waitStatus(page: Page, status: RegExp, minStep = 0, timeout = 0): Promise<void> {
  const s = page.getByTestId('run-status');
  await expect(s).toHaveAttribute('data-status', status, { timeout });
  if (minStep)
    await expect
      .poll(async () => Number(await s.getAttribute('data-step')), { timeout })
      .toBeGreaterThanOrEqual(minStep);
}

/**
 * The page's long tasks (> 50 ms on the main thread) since `since` (page clock, ms), each with the chart render jobs
 * that ran inside it, as one printable line; and the longest. Printed by the tests, never asserted (timing depends on
 * the machine).
 */
export async function longTasksSince(
  page: Page,
  since: number,
): Promise<{ count: number; longest: number; report: string }> {
  const { longTasks, renders } = await page
    .evaluate(() => {
      const w = window as unknown as { __longTasks: [number, number][]; __renders: [string, number, number][] };
      return { longTasks: w.__longTasks, renders: w.__renders };
    })
    .then((r) => ({
      longTasks: r.longTasks.filter(([t]) => t >= since),
      renders: r.renders.filter(([, t]) => t >= since),
    }));
  let longest = 0;
  for (const [, d] of longTasks) longest = Math.max(longest, d);
  const report = longTasks
    .map(([t, d]) => {
      const inside = renders
        .filter(([, s, rd]) => s >= t - 1 && s + rd <= t + d + 1)
        .map(([n, , rd]) => `${n} ${rd.toFixed(0)}`);
      return `${d.toFixed(0)} ms at ${(t - since).toFixed(0)}${inside.length ? ` (${inside.join(', ')})` : ''}`;
    })
    .join('; ');
  return { count: longTasks.length, longest, report };
}

/**
 * Saves driven by steps, not by the machine's speed: the engine's 30 s wall-clock autosave is turned off before the
 * page loads (protocol.ts EngineTestHooks), so a run saves at save_every, on pause and at its end only, and what a
 * test asserts about storage holds on a slow machine as on a fast one.
 */
export async function stepDrivenSaves(page: Page): Promise<void> {
  await page.addInitScript(() => {
    (window as unknown as Record<string, unknown>).__rlLabTestHooks = { autosaveMs: Number.POSITIVE_INFINITY };
  });
}
