// A Hugging Face model folder in the lab: a link whose checkpoint is the shipped tiny Qwen2 (models/tiny-qwen2/:
// q/k/v biases, a byte-level BPE tokenizer, a chat template) trains a few GRPO steps with its prompts in the chat
// template, the inspector shows its BPE tokens as text, and after a reload the saved run opens with its charts and
// its tokens decoded by the tokenizer saved with it (tokenizer.json and tokenizer_config.json). No request leaves
// this machine.
import { expect, test } from '@playwright/test';
import { guard, ready, shot, waitStatus, expectFiniteCharts } from './helpers';

// The offline copy's service worker would serve the shipped folders from its cache, out of the request log these
// tests read ("its files come from the site"); offline is e2e/offline.spec.ts's and newcomer.spec.ts's.
test.use({ serviceWorkers: 'block' });

const RUN =
  'preset=grpo&task=addition&difficulty=1&checkpoint=models/tiny-qwen2/&chat_template=true&train_batch_size=2&num_generations=4&max_completion_length=8&eval_items=2&eval_num_generations=4&eval_every=0&entropy_coef=0.01';

test('a run trains on the tiny Qwen2 folder through its chat template, and reopens after a reload', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(`/?${RUN}&steps=3`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await expect(page.getByTestId('field-checkpoint')).toHaveAttribute('data-value', 'models/tiny-qwen2/');
  await expect(page.getByTestId('field-chat_template')).toHaveAttribute('data-value', 'true');
  await expect(page.getByTestId('run-start')).toBeEnabled();

  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3);
  // Every step's record has reached the charts (the worker sends them a few times a second).
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', '3');
  await expectFiniteCharts(page, ['reward', 'entropy', 'loss', 'grad']);
  // The folder's files were fetched from the site, the weights and both tokenizer files among them.
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'])
    expect(w.requests, f).toContain(`/models/tiny-qwen2/${f}`);
  // The inspector draws each sampled BPE token as its text (byte-level "Ġ" markers decoded).
  const tokens = page.getByTestId('token');
  expect(await tokens.count()).toBeGreaterThan(0);
  const texts = await tokens.allTextContents();
  expect(texts.join('')).not.toContain('Ġ');
  await shot(page, info, 'hf-model-done');
  const points = await page.getByTestId('chart-reward').getAttribute('data-points');

  // Reload: the run was saved; it opens with the same charts and its tokens decoded by its saved tokenizer.
  const runId = (await page.getByTestId('run-status').getAttribute('data-run-id'))!;
  await page.reload();
  await ready(page);
  const row = page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
  await expect(row).toHaveAttribute('data-step', '3');
  await row.getByTestId('run-open').click();
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', points!);
  await tokens.first().scrollIntoViewIfNeeded();
  await expect(tokens.first()).toBeVisible();
  expect((await tokens.allTextContents()).join('')).not.toContain('Ġ');
  await shot(page, info, 'hf-model-reloaded-inspector');

  expect(w.external, 'requests that left localhost').toEqual([]);
  expect(w.errors, 'page errors').toEqual([]);
  await expect(page.getByTestId('panel-error')).toHaveCount(0);
});
