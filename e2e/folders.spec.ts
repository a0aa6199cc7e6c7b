// Model folders picked from disk: "Load a folder…" beside checkpoint keeps the tiny Qwen2 folder
// (public/models/tiny-qwen2, as a person's own download would be) in the browser as local/tiny-qwen2/, a GRPO run with
// LoRA adapters (rank 4) trains on it, and a page opened later trains from the kept folder by naming local/tiny-qwen2/ (nothing fetched for it from
// the site); beside
// reward_model it keeps the sentiment classifier and a run is rewarded by it. A folder without config.json is
// refused with a message. No request leaves this machine.
import { expect, test } from '@playwright/test';
import { guard, lastValues, ready, shot, waitStatus } from './helpers';

// The offline copy's service worker would serve the shipped folders from its cache, out of the request log these
// tests read; offline is e2e/offline.spec.ts's and newcomer.spec.ts's.
test.use({ serviceWorkers: 'block' });

const SETTING =
  'preset=grpo&task=addition&difficulty=1&chat_template=true&lora_rank=4&train_batch_size=2&num_generations=4&max_completion_length=8&eval_items=2&eval_num_generations=4&eval_every=0&entropy_coef=0.01';

test('a checkpoint folder picked from disk trains, and a later page trains from the kept folder', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(`/?${SETTING}&steps=2`);
  await ready(page);
  await page.getByTestId('folder-checkpoint').setInputFiles('public/models/tiny-qwen2');
  await expect(page.getByTestId('folder-status-checkpoint')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('folder-status-checkpoint')).toContainText('tiny-qwen2: 5 files kept');
  await expect(page.getByTestId('field-checkpoint')).toHaveAttribute('data-value', 'local/tiny-qwen2/');
  await expect(page.getByTestId('run-start')).toBeEnabled();
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  for (const [k, v] of Object.entries(await lastValues(page, 'reward')))
    expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
  expect(
    w.requests.filter((p) => p.includes('/models/tiny-qwen2/')),
    'the folder came from the picker, not the site',
  ).toEqual([]);
  await page.getByTestId('field-checkpoint').scrollIntoViewIfNeeded();
  await shot(page, info, 'folders-checkpoint');

  // A new page: a link naming local/tiny-qwen2/ trains from the folder kept in this browser.
  await page.goto(`/?${SETTING}&checkpoint=local/tiny-qwen2/&steps=1`);
  await ready(page);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 1);
  expect(w.requests.filter((p) => p.includes('/models/tiny-qwen2/') || p.includes('/local/'))).toEqual([]);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('a reward model folder picked from disk rewards a run; a folder without config.json is refused', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(
    '/?preset=grpo&task=copy&difficulty=3&checkpoint=copy&train_batch_size=2&num_generations=4&eval_items=2&eval_num_generations=4&steps=2&eval_every=0',
  );
  await ready(page);
  await page.getByTestId('folder-reward_model').setInputFiles('public/models/sentiment-char/onnx');
  await expect(page.getByTestId('folder-status-reward_model')).toHaveAttribute('data-status', 'failed');
  await expect(page.getByTestId('folder-status-reward_model')).toContainText('has no config.json at its top');
  await page.getByTestId('folder-reward_model').setInputFiles('public/models/sentiment-char');
  await expect(page.getByTestId('folder-status-reward_model')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('field-reward_model')).toHaveAttribute('data-value', 'local/sentiment-char/');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  const rewards = await lastValues(page, 'rewards');
  expect(rewards['rewards/reward_model/mean']).toBeGreaterThan(0);
  expect(w.requests.filter((p) => p.includes('/models/sentiment-char/'))).toEqual([]);
  await page.getByTestId('field-reward_model').scrollIntoViewIfNeeded();
  await shot(page, info, 'folders-reward-model');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
