// The rollout correction, the off-policy mask and TRL's adaptive entropy controller in the page: the knobs come
// from a link and from the config form the schema generates (an enum select, number inputs, a checkbox), two steps
// train, and the rollout correction chart and the entropy coefficient receive finite values.
import { expect, test } from '@playwright/test';
import { expectFiniteCharts, guard, lastValues, ready, setField, SMALL, waitStatus } from './helpers';

test('rollout correction and adaptive entropy knobs train two finite steps from a link and the form', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  const knobs =
    'rollout_is_mode=sequence_mask&rollout_is_clip_min=0.5&rollout_is_clip_max=2&off_policy_mask_threshold=0.5' +
    '&entropy_target=5&entropy_coef=0.01&entropy_coef_step=0.005&entropy_coef_min=0&entropy_coef_max=0.5&entropy_bonus_gate=true';
  await page.goto(`/?preset=grpo&${SMALL}&steps=2&eval_every=2&${knobs}`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  // The form shows the link's values, and takes an edit of each kind.
  await expect(page.locator('#field-input-rollout_is_mode')).toHaveValue('sequence_mask');
  await expect(page.locator('#field-input-entropy_bonus_gate')).toBeChecked();
  await setField(page, 'loss', 'rollout_is_clip_max', '1.5'); // opens the Objective section
  await page.locator('#field-input-rollout_is_mode').selectOption('token_mask');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expectFiniteCharts(page, ['rollout_correction', 'lr', 'entropy']);
  const corr = await lastValues(page, 'rollout_correction');
  expect(Object.keys(corr).sort()).toEqual([
    'off_policy_mask/masked_frac',
    'rollout_correction/masked_frac',
    'rollout_correction/truncated_frac',
    'sampling/importance_sampling_ratio/mean',
  ]);
  // The gate held alpha back at the first step (no entropy measured yet); at the second it applied 0.01 + 0.005.
  expect((await lastValues(page, 'lr')).entropy_coef).toBeCloseTo(0.015, 6);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
