// LoRA in the lab: a link whose checkpoint is the shipped tiny Qwen2 folder (models/tiny-qwen2/) with lora_rank 4
// trains 3 GRPO steps with the base frozen (the knobs show in the Optimization section as the link set them), its
// charts carry finite metrics and a nonzero gradient norm (the adapters get gradients), and the run's checkpoint
// download holds the merged weights and the adapters in PEFT's layout.
import { expect, test } from '@playwright/test';
import { guard, lastValues, ready, shot, waitStatus, expectFiniteCharts } from './helpers';

const RUN =
  'preset=grpo&task=addition&difficulty=1&checkpoint=models/tiny-qwen2/&train_batch_size=2&num_generations=4&max_completion_length=8' +
  '&eval_every=0&entropy_coef=0.01&learning_rate=0.01&lora_rank=4&lora_alpha=8&lora_targets=q_proj,v_proj,down_proj';

test('a LoRA run trains 3 steps on the tiny Qwen2 folder and downloads its adapters in PEFT layout', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(`/?${RUN}&steps=3`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await expect(page.getByTestId('field-lora_rank')).toHaveAttribute('data-value', '4');
  await expect(page.getByTestId('field-lora_targets')).toHaveAttribute('data-value', 'q_proj,v_proj,down_proj');
  await expect(page.getByTestId('run-start')).toBeEnabled();

  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3);
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-points', '3');
  await expectFiniteCharts(page, ['reward', 'entropy', 'loss', 'grad']);
  // The entropy bonus gives the adapters a gradient even where every reward of a group is the same.
  expect((await lastValues(page, 'grad')).grad_norm).toBeGreaterThan(0);
  const optimizer = page.getByTestId('section-optimizer');
  if (!(await optimizer.evaluate((d) => (d as HTMLDetailsElement).open))) await optimizer.locator('summary').click();
  await page.getByTestId('field-lora_targets').scrollIntoViewIfNeeded();
  await shot(page, info, 'lora-done');

  const row = page.getByTestId('run-row').first();
  await Promise.all([page.waitForEvent('download'), row.getByTestId('export-checkpoint').click()]);
  const files = (await page.getByTestId('last-export').getAttribute('data-files'))!.split(',');
  expect(files.map((f) => f.replace(/^.*\.step\d+\./, ''))).toEqual([
    'model.safetensors',
    'config.json',
    'tokenizer.json',
    'tokenizer_config.json',
    'adapter_model.safetensors',
    'adapter_config.json',
  ]);

  expect(w.external, 'requests that left localhost').toEqual([]);
  expect(w.errors, 'page errors').toEqual([]);
  await expect(page.getByTestId('panel-error')).toHaveCount(0);
});
