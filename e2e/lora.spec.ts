// LoRA in the lab: a link whose checkpoint is the shipped tiny Qwen2 folder (models/tiny-qwen2/) with lora_rank 4
// trains 3 GRPO steps with the base frozen (the knobs show in the Optimization section as the link set them), its
// charts carry finite metrics and a nonzero gradient norm (the adapters get gradients), and the run's checkpoint
// download is one .zip of the folder transformers loads (merged weights) and the adapter folder in PEFT's layout.
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { readZip } from '../src/io/zip';
import { guard, lastValues, ready, shot, waitStatus, expectFiniteCharts } from './helpers';

/** transformers' recorded file names (the fixture the unit tests check the export against). */
const hf = JSON.parse(readFileSync(new URL('../src/io/fixtures/transformers.json', import.meta.url), 'utf8'));

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
  // The checkpoint is one .zip of the folders from_pretrained and PeftModel.from_pretrained load.
  const [download] = await Promise.all([page.waitForEvent('download'), row.getByTestId('export-checkpoint').click()]);
  expect(download.suggestedFilename()).toMatch(/-step3\.zip$/);
  const path = info.outputPath(download.suggestedFilename());
  await download.saveAs(path);
  const entries = readZip(new Uint8Array(readFileSync(path)));
  const folder = download.suggestedFilename().replace(/\.zip$/, '');
  expect(entries.map((e) => e.name)).toEqual([
    ...[hf.weights_file, hf.config_file, hf.generation_config_file, hf.tokenizer_file, hf.tokenizer_config_file].map(
      (n) => `${folder}/${n}`,
    ),
    `${folder}/${hf.special_tokens_map_file}`,
    ...['adapter_config.json', 'adapter_model.safetensors', 'README.md'].map((n) => `${folder}-adapter/${n}`),
    // The base, a folder of the site Python cannot load by its path: its files beside the adapter.
    ...[hf.weights_file, hf.config_file, hf.generation_config_file, hf.tokenizer_file, hf.tokenizer_config_file].map(
      (n) => `tiny-qwen2/${n}`,
    ),
  ]);
  const adapterConfig = JSON.parse(new TextDecoder().decode(entries[6].data));
  expect(adapterConfig.base_model_name_or_path).toBe('models/tiny-qwen2/');
  await expect(page.getByTestId('export-python')).toContainText(`AutoModelForCausalLM.from_pretrained("${folder}")`);
  await expect(page.getByTestId('export-python')).toContainText(
    `PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained("tiny-qwen2"), "${folder}-adapter")`,
  );
  await page.getByTestId('last-export').scrollIntoViewIfNeeded();
  await shot(page, info, 'export-zip');

  // Where the browser has the File System Access API, "checkpoint folder…" writes the same files into a picked
  // folder (a stand-in picker here: a headless browser shows no dialog) and says so.
  await page.evaluate(() => {
    const written: Record<string, number> = {};
    (window as unknown as { __written: typeof written }).__written = written;
    const dir = (path: string): unknown => ({
      name: path || 'picked',
      getDirectoryHandle: async (n: string) => dir(`${path}${n}/`),
      getFileHandle: async (n: string) => ({
        createWritable: async () => ({
          write: async (d: Blob | string) => {
            written[`${path}${n}`] = typeof d === 'string' ? new Blob([d]).size : d.size;
          },
          close: async () => {},
        }),
      }),
    });
    (window as unknown as { showDirectoryPicker: () => Promise<unknown> }).showDirectoryPicker = async () => dir('');
  });
  await row.getByTestId('export-checkpoint-folder').click();
  await expect(page.getByTestId('last-export')).toContainText('Wrote into the folder "picked"');
  const written = await page.evaluate(() => (window as unknown as { __written: Record<string, number> }).__written);
  expect(Object.keys(written)).toEqual(entries.map((e) => e.name));
  for (const e of entries) expect(written[e.name], e.name).toBe(e.data.length);
  await shot(page, info, 'export-folder');

  expect(w.external, 'requests that left localhost').toEqual([]);
  expect(w.errors, 'page errors').toEqual([]);
  await expect(page.getByTestId('panel-error')).toHaveCount(0);
});
