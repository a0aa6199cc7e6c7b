// The "Run elsewhere" panel in a real Chromium: its code loads only when the panel is opened; it shows the edited
// experiment (DAPO on copy) as a TRL script and a verl run with the mapping of every field; the script downloads,
// and the one-file bundle downloads, unpacks with sh into the run's files, and its launch script parses with bash;
// a model name the scripts cannot hold is refused with a message naming it.
import { expect, test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { guard, shot } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

test('export the edited experiment to TRL and verl from the page and download it', async ({ page }, info) => {
  const w = await guard(page);
  await page.goto('/?preset=dapo&task=copy&difficulty=3&steps=5&train_batch_size=4&eval_items=3');
  const panel = page.getByTestId('run-elsewhere');
  await expect(panel).toBeVisible();
  const chunk = (r: string) => /RunElsewhere-[^/]*\.js$/.test(r);
  expect(w.requests.filter(chunk), 'the panel body is not loaded before it is opened').toEqual([]);

  await panel.locator('summary').click();
  await expect(page.getByTestId('elsewhere-target-trl')).toBeVisible();
  expect(w.requests.filter(chunk).length, 'opening the panel loads its body').toBeGreaterThan(0);

  // TRL: DAPO's token-mean is loss_type 'dapo'; the clip-higher epsilon is written; the table has every field.
  await expect(page.getByTestId('elsewhere-script')).toContainText('from trl import GRPOConfig, GRPOTrainer');
  await expect(page.getByTestId('elsewhere-script')).toContainText('loss_type="dapo"');
  await expect(page.getByTestId('elsewhere-script')).toContainText('epsilon_high=0.28');
  const rows = page.getByTestId('elsewhere-mapping').locator('tbody tr');
  expect(await rows.count()).toBeGreaterThan(60);
  await expect(
    rows.filter({ has: page.locator('td code', { hasText: /^reinforce_baseline_momentum$/ }) }),
  ).toContainText('no equivalent in GRPOConfig');

  // A model name the scripts cannot hold (it would be code in the launch script) is refused by name.
  await page.getByTestId('elsewhere-model').fill('org/my"model$(touch x)');
  await expect(page.getByTestId('elsewhere-error')).toContainText('hf-model: ');
  await expect(page.getByTestId('elsewhere-script')).toHaveCount(0);
  await page.getByTestId('elsewhere-model').fill('org/base-model');
  const [script] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('elsewhere-download-entry').click(),
  ]);
  expect(script.suggestedFilename()).toBe('train_trl.py');
  const scriptPath = info.outputPath('train_trl.py');
  await script.saveAs(scriptPath);
  expect(readFileSync(scriptPath, 'utf8')).toContain('parser.add_argument("--model", default="org/base-model"');

  // verl: the clip ratios and the DAPO filter, then the whole run as one download.
  await page.getByTestId('elsewhere-target-verl').click();
  await expect(page.getByTestId('elsewhere-script')).toContainText("'actor_rollout_ref.actor.clip_ratio_high=0.28'");
  await expect(page.getByTestId('elsewhere-script')).toContainText("'+algorithm.filter_groups.enable=True'");
  // data.max_prompt_length in the model's tokens: the worker read the model's tokenizer files for the page.
  await expect(page.getByTestId('elsewhere-script')).toContainText(
    "# data.max_prompt_length: the longest prompt in the model's tokens",
  );
  await shot(page, info, 'run-elsewhere-verl');
  const [bundle] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('elsewhere-download-bundle').click(),
  ]);
  expect(bundle.suggestedFilename()).toBe('rl-lab-verl-export.sh');
  const bundlePath = info.outputPath('rl-lab-verl-export.sh');
  await bundle.saveAs(bundlePath);
  const dir = info.outputPath('verl-run');
  execFileSync('sh', [bundlePath, dir]);
  for (const f of [
    'run_verl.sh',
    'reward_fn.py',
    'data/train.jsonl',
    'data/heldout.jsonl',
    'lab_config.json',
    'README.md',
  ])
    expect(existsSync(join(dir, f)), f).toBe(true);
  execFileSync('bash', ['-n', join(dir, 'run_verl.sh')]);
  const train = readFileSync(join(dir, 'data/train.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { data_source: string; reward_model: { ground_truth: string } });
  expect(train).toHaveLength(5 * 4);
  expect(train[0].data_source).toBe('rl-lab/copy');
  expect(readFileSync(join(dir, 'run_verl.sh'), 'utf8')).toContain(`[ -n "$MODEL" ] || MODEL='org/base-model'`);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
