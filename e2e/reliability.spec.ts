// Nothing lost, nothing silent, in a real Chromium with WebGPU on SwiftShader: a run whose config diverges
// (learning_rate 1 with weight_decay 10 on the smallest setting) pauses with a message naming the first non-finite
// metric and its step, the state saved in IndexedDB stays finite, and the checkpoint the page exports is finite;
// an alert (lengths pinned at the cap) is shown, marked on its chart, and pauses the run under alert_action pause.
// Screenshots are saved as artifacts.
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { readZip } from '../src/io/zip';
import { guard, ready, shot, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

/** Tensors of a safetensors file and how many of their F32 values are not finite. */
function nonFiniteInSafetensors(bytes: Uint8Array): { tensors: number; values: number; nonFinite: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<
    string,
    { dtype: string; data_offsets: [number, number] }
  >;
  let tensors = 0;
  let values = 0;
  let nonFinite = 0;
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    expect(t.dtype, name).toBe('F32');
    tensors++;
    const start = 8 + headerLength + t.data_offsets[0];
    for (let i = start; i < 8 + headerLength + t.data_offsets[1]; i += 4) {
      values++;
      if (!Number.isFinite(view.getFloat32(i, true))) nonFinite++;
    }
  }
  return { tensors, values, nonFinite };
}

test('a diverging run pauses naming the metric and step; its saved state and exported weights stay finite', async ({
  page,
}, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=30&eval_every=0&learning_rate=1&weight_decay=10`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);

  // One step first, so the run has a saved state (step 1, still finite) to fall back to; then train on.
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused/, 1);
  // The status names the phase, and gives no pace or ETA from step 1 alone (it includes the kernels' compiles).
  await expect(page.getByTestId('status-phase')).toHaveText('paused at step 1');
  await expect(page.getByTestId('run-status')).not.toContainText(/ETA|s\/step/);
  const runId = (await page.getByTestId('run-status').getAttribute('data-run-id'))!;
  await page.getByTestId('run-start').click();

  const message = page.getByTestId('run-message');
  await expect(message).toContainText(
    /^The run diverged: \S+ = (NaN|-?Infinity) at step \d+ \(optimizer step \d+\)\. The update was not kept/,
    { timeout: 240_000 },
  );
  await expect(message).toContainText('last saved state, step 1');
  await waitStatus(page, /paused/);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-step', '1');
  await expect(page.getByTestId('status-phase')).toHaveText('paused at step 1: diverged, back at the saved state');
  await expect(page.getByTestId('notice').filter({ hasText: 'The run diverged' })).toHaveCount(1);
  // The charts show the run as of its saved state: one step, finite.
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', '1');
  await expect(page.getByTestId('chart-entropy')).toHaveAttribute('data-finite', 'true');
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-drawn', '1');
  await shot(page, info, 'reliability-diverged');

  // The state saved in IndexedDB: step 1, every tensor finite (the trainer state and the checkpoint).
  const saved = await page.evaluate(async (id) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open('rl-lab');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const s = await new Promise<{ step: number; state: Uint8Array; safetensors: Uint8Array } | undefined>(
      (resolve, reject) => {
        const req = db.transaction('states').objectStore('states').get(id);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      },
    );
    db.close();
    return s ? { step: s.step, state: Array.from(s.state), safetensors: Array.from(s.safetensors) } : null;
  }, runId);
  expect(saved?.step).toBe(1);
  for (const part of ['state', 'safetensors'] as const) {
    const r = nonFiniteInSafetensors(Uint8Array.from(saved![part]));
    expect(r.tensors, part).toBeGreaterThan(0);
    expect(r.nonFinite, `${part}: ${r.nonFinite} of ${r.values} values are not finite`).toBe(0);
  }

  // The checkpoint the page exports: the policy at step 1, finite.
  const row = page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('export-checkpoint').click()]);
  expect(download.suggestedFilename()).toMatch(/-step1\.zip$/);
  const path = info.outputPath(download.suggestedFilename());
  await download.saveAs(path);
  const weights = readZip(new Uint8Array(readFileSync(path))).find((e) => e.name.endsWith('/model.safetensors'));
  const exported = nonFiniteInSafetensors(weights!.data.slice());
  expect(exported.tensors).toBeGreaterThan(0);
  expect(exported.nonFinite, `${exported.nonFinite} of ${exported.values} exported values are not finite`).toBe(0);

  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('an alert names its metric, marks its step on the chart, and pauses the run under alert_action pause', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  // A one-token completion cap: every completion of copy is cut before its answer ends, so
  // completions/clipped_ratio sits near 1 and the alert fires once it has held for three steps.
  await page.goto(`/?preset=grpo&${SMALL}&steps=10&eval_every=0&max_completion_length=1&alert_action=pause`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await page.getByTestId('run-start').click();

  const message = page.getByTestId('run-message');
  const pattern =
    /^Paused by an alert \(alert_action pause\)\. Alert at step (\d+), lengths pinned at the cap: completions\/clipped_ratio = [\d.]+, at or above 0\.9 for 3 steps\./;
  await expect(message).toContainText(pattern, { timeout: 180_000 });
  await expect(message).toContainText('max_completion_length');
  await expect(message).toContainText('Lesson: length-bias.');
  // The sampler may end a completion with EOS at first, so the streak can start a step or two late.
  const step = pattern.exec((await message.textContent()) ?? '')![1];
  expect(Number(step)).toBeGreaterThanOrEqual(3);
  await waitStatus(page, /paused/);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-step', step);
  await expect(page.getByTestId('notice').filter({ hasText: 'lengths pinned at the cap' })).toHaveCount(1);
  const chart = page.getByTestId('chart-fractions');
  await expect(chart).toHaveAttribute('data-alerts', new RegExp(`(^|,)${step}(,|$)`));
  // A chart redraws only near the viewport (render-queue.ts): bring it there, then its plot catches up.
  await chart.scrollIntoViewIfNeeded();
  await expect(chart).toHaveAttribute('data-drawn', step);
  await shot(page, info, 'reliability-alert');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
