// Learned rewards in a real Chromium: a GRPO run whose reward is the shipped transformers.js sentiment classifier
// (public/models/sentiment-char/, ONNX run by ONNX Runtime's WASM build inside the engine worker) trains, charts
// rewards/reward_model beside the verifier's accuracy, loads nothing from outside this machine, and the page's
// startup never loads transformers.js; so does one against the shipped reward model trained in the lab
// (public/models/copy-reward-model/, made by `npm run reward-model`). A link naming another site's reward model is
// refused with a message.
import { expect, test } from '@playwright/test';
import { guard, lastValues, ready, shot, SMALL, waitStatus } from './helpers';

// The offline copy's service worker would serve the shipped reward models from its cache, out of the request log
// these tests read; offline is e2e/offline.spec.ts's and newcomer.spec.ts's.
test.use({ viewport: { width: 1440, height: 1500 }, serviceWorkers: 'block' });

test('GRPO with the shipped text classifier as the reward', async ({ page }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(
    `/?preset=grpo&${SMALL}&steps=3&eval_every=0&reward_model=models/sentiment-char/&reward_weights=reward_model:1,accuracy:0`,
  );
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  // Nothing of transformers.js or ONNX Runtime is fetched before a run asks for it.
  expect(w.requests.filter((p) => /transformers|ort-wasm|onnx/.test(p))).toEqual([]);

  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3, 240_000);
  await expect(page.getByTestId('run-message')).toHaveCount(0);
  const rewards = await lastValues(page, 'rewards');
  console.log(`last step: ${JSON.stringify(rewards)}`);
  expect(Object.keys(rewards)).toEqual(expect.arrayContaining(['rewards/reward_model/mean', 'rewards/accuracy/mean']));
  expect(rewards['rewards/reward_model/mean']).toBeGreaterThan(0);
  expect(rewards['rewards/reward_model/mean']).toBeLessThan(1);
  expect(w.requests.some((p) => p.endsWith('/models/sentiment-char/onnx/model.onnx'))).toBe(true);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
  await page.getByTestId('chart-rewards').scrollIntoViewIfNeeded();
  await shot(page, info, 'reward-model-classifier');
});

test('GRPO against the shipped reward model trained in the lab', async ({ page }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto(
    `/?preset=grpo&${SMALL}&steps=3&eval_every=0&reward_model=models/copy-reward-model/&reward_weights=reward_model:1,accuracy:0`,
  );
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3, 240_000);
  await expect(page.getByTestId('run-message')).toHaveCount(0);
  const rewards = await lastValues(page, 'rewards');
  console.log(`last step: ${JSON.stringify(rewards)}`);
  expect(Number.isFinite(rewards['rewards/reward_model/mean'])).toBe(true);
  expect(rewards['rewards/accuracy/mean']).toBeGreaterThanOrEqual(0);
  // A lab reward model is a safetensors checkpoint on the lab's own kernels: transformers.js is not loaded for it.
  expect(w.requests.filter((p) => /transformers|ort-wasm/.test(p))).toEqual([]);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
  await page.getByTestId('chart-rewards').scrollIntoViewIfNeeded();
  await shot(page, info, 'reward-model-lab');
});

test("a link naming another site's reward model is not used, and says so", async ({ page }) => {
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=3&reward_model=https://elsewhere.invalid/rm/`);
  await expect(page.getByTestId('url-error')).toContainText(
    'reward_model: https://elsewhere.invalid/rm/ is on https://elsewhere.invalid, not this site',
  );
  expect(w.external).toEqual([]);
});
