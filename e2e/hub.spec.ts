// Hub models in the page, against the mock hub (src/testing/mock-hub.ts: the hub on 127.0.0.1:4311 redirecting
// large files to its CDN on 127.0.0.1:4312; the build allows both, playwright.config.ts). It serves a random
// SmolLM2-135M-architecture folder (the real vocabulary, tokenizer and special tokens; one narrow layer, built in
// memory). A link naming the id contacts nothing; Check fetches the small files only; the confirmed download is cut
// by a reload and the partial is kept; Resume finishes it; two GRPO steps train on it; Delete frees the storage and
// a run on the deleted model fails saying what to do. A gated model answers 401 until a token is given, and the
// token never reaches the CDN. A hostile CDN: one that falls silent after some bytes is shown stalled, then
// retrying n of N, then failed naming the host and the file (this build cuts a silent transfer after 2 s,
// RL_LAB_HUB_TIMEOUT in playwright.config.ts); one that streams past the announced size is stopped there, its
// partial file removed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { startMockHub, type MockHub } from '../src/testing/mock-hub';
import { guard, ready, waitStatus } from './helpers';

const HUB_PORT = 4311;
const CDN_PORT = 4312;
const ENDPOINT = `http://127.0.0.1:${HUB_PORT}`;
const MODEL = 'lab-test/smol-random';
const GATED = 'lab-test/gated';
const HOSTILE = 'lab-test/hostile';
const TOKEN = 'hf_e2e_token';

let WEIGHTS = 0;

const RUN = `checkpoint=${MODEL}&preset=grpo&task=addition&difficulty=1&steps=2&train_batch_size=1&num_generations=2&max_completion_length=4&eval_items=0&eval_every=0`;

let hub: MockHub;
test.beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-lab-hub-e2e-'));
  execFileSync('npx', ['tsx', 'e2e/hub-folder.ts', dir], { stdio: 'inherit' });
  const files = Object.fromEntries(readdirSync(dir).map((f) => [f, new Uint8Array(readFileSync(join(dir, f)))]));
  rmSync(dir, { recursive: true });
  WEIGHTS = files['model.safetensors'].length;
  hub = await startMockHub(
    { [MODEL]: { files }, [GATED]: { files, token: TOKEN }, [HOSTILE]: { files } },
    { hub: HUB_PORT, cdn: CDN_PORT },
  );
});
test.afterAll(() => hub?.close());
test.afterEach(() => {
  hub.faults.stall = undefined;
  hub.faults.endless = undefined;
});

/** Opens the hub panel and points it at the mock hub (the endpoint is kept across reloads). */
async function useMockHub(page: Page): Promise<void> {
  const panel = page.getByTestId('hub-panel');
  if (!(await panel.evaluate((d) => (d as HTMLDetailsElement).open))) await panel.locator('summary').click();
  await page.getByTestId('hub-endpoint').fill(ENDPOINT);
}

const keptBytes = (page: Page) => page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);

test('a hub model: link, check, download cut by a reload, resume, two steps, delete', async ({ page }) => {
  test.setTimeout(480_000);
  const t0 = Date.now();
  const lap = (what: string) => console.log(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const w = await guard(page);
  await page.goto(`/?${RUN}`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  // The link filled the field and says what a click fetches; nothing was requested from the hub.
  await expect(page.getByTestId('checkpoint-input')).toHaveValue(MODEL);
  await expect(page.getByTestId('model-from-checkpoint')).toContainText(`from the checkpoint: ${MODEL}`);
  await useMockHub(page);
  await expect(page.getByTestId('hub-explain')).toContainText(`Check fetches its config.json and tokenizer files`);
  await expect(page.getByTestId('hub-explain')).toContainText(`127.0.0.1:${HUB_PORT}`);
  expect(hub.requests).toEqual([]);

  await page.getByTestId('hub-check').click();
  await expect(page.getByTestId('hub-architecture')).toContainText('LlamaForCausalLM: 1 layer, hidden 64');
  await expect(page.getByTestId('hub-architecture')).toContainText('vocabulary 49152');
  await expect(page.getByTestId('hub-memory')).toContainText('Memory plan of this config');
  // The seconds-per-step estimate of the draft config on this adapter, before any weight is fetched.
  await expect(page.getByTestId('hub-estimate')).toContainText(
    /One step of this config: .* on this adapter \(estimate\)/,
  );
  const confirm = page.getByTestId('hub-download');
  await expect(confirm).toContainText(`from 127.0.0.1:${HUB_PORT}`);
  // The check fetched small files only: the weights were not requested with GET.
  expect(hub.requests.some((r) => r.method === 'GET' && r.path.endsWith('.safetensors'))).toBe(false);

  // The confirmed download, slowed down, is cut by a reload once part of the weights is kept.
  hub.faults.slow = { chunkBytes: 64 * 1024, pauseMs: 60 };
  await confirm.click();
  const progress = page.getByTestId('hub-progress');
  await expect(progress).toHaveAttribute('data-state', 'downloading');
  await expect(page.getByTestId('status-download')).toContainText(`downloading ${MODEL}`);
  const weights = page.locator('[data-testid=hub-file][data-file="model.safetensors"] progress');
  await expect
    .poll(async () => Number(await weights.getAttribute('value')), { timeout: 60_000 })
    .toBeGreaterThan(2_500_000);
  await page.reload();
  hub.faults.slow = undefined;
  await useMockHub(page);
  const row = page.locator(`[data-testid=hub-kept][data-model="${MODEL}"]`);
  await expect(row).toHaveAttribute('data-complete', 'false');
  await expect(row).toContainText('partial');
  hub.requests.length = 0;
  await row.getByTestId('hub-kept-resume').click();
  await expect(page.getByTestId('hub-progress')).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  await expect(row).toHaveAttribute('data-complete', 'true');
  // The resumed download asked the CDN for the rest only.
  const resumed = hub.requests.find((r) => r.server === 'cdn' && r.method === 'GET');
  expect(Number(/^bytes=(\d+)-$/.exec(resumed?.range ?? '')?.[1])).toBeGreaterThan(0);

  // Two GRPO steps on the kept model, read from the browser's storage with no request to the hub.
  hub.requests.length = 0;
  await ready(page);
  lap('downloaded');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /running/);
  lap('started');
  await waitStatus(page, /done/, 2);
  lap('trained');
  expect(hub.requests).toEqual([]);

  // Delete: the storage is freed, and a run on the deleted model says what to do.
  const before = await keptBytes(page);
  await row.getByTestId('hub-delete').click();
  await expect(row).toHaveCount(0);
  expect(before - (await keptBytes(page))).toBeGreaterThan(WEIGHTS * 0.9);
  await page.getByTestId('run-start').click();
  await expect(
    page.getByTestId('notice').filter({ hasText: `the hub model ${MODEL} is not kept in this browser` }),
  ).toContainText('Check it and confirm the download');

  expect(w.external, 'requests that left this machine').toEqual([]);
});

test('a gated hub model asks for a token, which reaches the hub and never its CDN', async ({ page }) => {
  test.setTimeout(60_000);
  await guard(page);
  await page.goto(`/?checkpoint=${GATED}`);
  await useMockHub(page);
  await page.getByTestId('hub-check').click();
  await expect(page.getByTestId('hub-check-message')).toContainText('is gated or private (401): paste a hub token');
  await page.getByTestId('hub-token').fill(TOKEN);
  await page.getByTestId('hub-token-set').click();
  hub.requests.length = 0;
  await page.getByTestId('hub-check').click();
  await expect(page.getByTestId('hub-architecture')).toContainText('LlamaForCausalLM');
  expect(hub.requests.filter((r) => r.server === 'hub').every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  expect(hub.requests.filter((r) => r.server === 'cdn').every((r) => r.authorization === null)).toBe(true);
  // The token is in no link and no storage of the page.
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + location.href);
  expect(stored).not.toContain(TOKEN);
});

/** Opens HOSTILE's card, checks it and starts its download. */
async function startHostileDownload(page: Page): Promise<void> {
  await guard(page);
  await page.goto(`/?checkpoint=${HOSTILE}`);
  await useMockHub(page);
  await page.getByTestId('hub-check').click();
  await expect(page.getByTestId('hub-architecture')).toContainText('LlamaForCausalLM');
  await page.getByTestId('hub-download').click();
}

test('a CDN that falls silent: stalled, retrying n of N, then failed naming the host and the file', async ({
  page,
}) => {
  test.setTimeout(90_000);
  const t0 = Date.now();
  hub.faults.stall = { file: 'model.safetensors', afterBytes: 100_000 };
  await startHostileDownload(page);
  const progress = page.getByTestId('hub-progress');
  await expect(progress).toHaveAttribute('data-state', 'stalled', { timeout: 20_000 });
  await expect(page.getByTestId('hub-progress-message')).toContainText(
    `no data from 127.0.0.1:${CDN_PORT} for 0.33 s while downloading model.safetensors`,
  );
  await expect(progress).toHaveAttribute('data-state', 'retrying', { timeout: 20_000 });
  await expect(page.getByTestId('hub-progress-state')).toHaveText('retrying 1 of 3');
  await expect(page.getByTestId('hub-progress-message')).toContainText(
    `no data from 127.0.0.1:${CDN_PORT} for 2 s while downloading model.safetensors; resuming model.safetensors from byte`,
  );
  await expect(progress).toHaveAttribute('data-state', 'failed', { timeout: 60_000 });
  await expect(page.getByTestId('hub-progress-message')).toContainText(
    `after 4 tries (no data from 127.0.0.1:${CDN_PORT} for 2 s while downloading model.safetensors); the partial file is kept`,
  );
  console.log(`silent CDN: failed in the page after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Each resume asked for the rest only.
  const ranges = hub.requests.filter((r) => r.server === 'cdn' && r.method === 'GET' && r.path.includes('hostile'));
  expect(ranges.map((r) => r.range)).toEqual([null, 'bytes=100000-', 'bytes=200000-', 'bytes=300000-']);
});

test('a CDN that streams past the announced size is stopped there, and nothing of it is kept', async ({ page }) => {
  test.setTimeout(60_000);
  const t0 = Date.now();
  hub.faults.endless = { file: 'model.safetensors' };
  await startHostileDownload(page);
  await expect(page.getByTestId('hub-progress')).toHaveAttribute('data-state', 'failed', { timeout: 30_000 });
  await expect(page.getByTestId('hub-progress-message')).toContainText(
    `127.0.0.1:${CDN_PORT} sent more than the ${WEIGHTS} bytes the hub announced (the transfer was stopped at the first byte past them); removed the download`,
  );
  console.log(`endless CDN: refused in the page after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // The partial file was removed from the origin's storage: the snapshot holds the small files, no weights.
  const kept = await page.evaluate(async () => {
    let dir = await navigator.storage.getDirectory();
    for (const name of ['hub', 'models--lab-test--hostile', 'snapshots', 'c'.repeat(40)])
      dir = await dir.getDirectoryHandle(name);
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    return names.sort();
  });
  expect(kept).toContain('config.json');
  expect(kept.filter((n) => n.startsWith('model.safetensors'))).toEqual([]);
});
