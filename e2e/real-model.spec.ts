// The real-model experiment in the page: the estimate of seconds per step beside Start for the edited config, the
// "Try a real model" card sizing the shipped tiny Qwen2 folder and the recorded instruct models from their config.json
// alone (no request for a hub), "Use" putting the experiment in the editor (chat template, LoRA, think format,
// sampling from generation_config.json), and one step of it trained on tiny-qwen2. No request leaves this machine.
import { expect, test } from '@playwright/test';
import { guard, ready, setField, shot, waitStatus } from './helpers';

test('Try a real model: estimates before any download, then one step on tiny-qwen2', async ({ page }, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  await page.goto('/');
  await ready(page);
  // The front door opens the first lesson; closed, the edited config has its estimate beside Start.
  await page.getByTestId('run-close-lesson').click();
  const estimate = page.getByTestId('step-estimate');
  await expect(estimate).toContainText(/per step \([\d.]+-[\d.]+ (s|min|h)\) on this adapter \(estimate\)/);
  expect(Number(await estimate.getAttribute('data-seconds'))).toBeGreaterThan(0);

  const card = page.getByTestId('real-model');
  await card.locator('summary').click();
  await card.getByTestId('real-model-task').selectOption('word_problems');
  const rows = card.getByTestId('real-model-row');
  await expect(rows).toHaveCount(5);
  // Every model is sized, the hub ones from their recorded config.json, the shipped one from its folder's.
  await expect(card.getByTestId('real-model-seconds')).toHaveCount(5);
  await expect(card.getByTestId('real-model-throughput')).toContainText('Step times on this adapter');
  await shot(page, info, 'real-model-card');

  await card.locator('[data-checkpoint="models/tiny-qwen2/"]').getByTestId('real-model-use').click();
  await expect(page.getByTestId('field-checkpoint')).toHaveAttribute('data-value', 'models/tiny-qwen2/');
  await expect(page.getByTestId('field-chat_template')).toHaveAttribute('data-value', 'true');
  await expect(page.getByTestId('field-lora_rank')).toHaveAttribute('data-value', '16');
  await expect(page.getByTestId('field-answer_format')).toHaveAttribute('data-value', 'think');
  await expect(page.getByTestId('field-sampling_defaults')).toHaveAttribute('data-value', 'model');
  // The folder's generation_config.json says do_sample false: the note says the run samples anyway.
  await expect(page.getByTestId('step-estimate-sampling')).toContainText('do_sample false');

  // One step, smaller than the experiment's batch, to keep the software adapter's time short.
  await setField(page, 'sampling', 'train_batch_size', '2');
  await setField(page, 'sampling', 'num_generations', '2');
  await setField(page, 'sampling', 'max_completion_length', '16');
  await expect(page.getByTestId('run-step')).toBeEnabled();
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused/, 1);
  await shot(page, info, 'real-model-step');

  expect(w.requests.some((r) => r.includes('huggingface'))).toBe(false);
  expect(w.external, 'requests that left localhost').toEqual([]);
  expect(w.errors, 'page errors').toEqual([]);
  await expect(page.getByTestId('panel-error')).toHaveCount(0);
});
