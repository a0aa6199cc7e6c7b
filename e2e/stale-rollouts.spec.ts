// Stale rollouts and the sampler's recorded log-probs in the page: max_staleness, weight_sync_steps and
// rollout_logprobs come from a link and the config form the schema generates, two steps train, and the Sampler vs
// trainer chart receives finite staleness and mismatch diagnostics.
import { expect, test } from '@playwright/test';
import { expectFiniteCharts, guard, lastValues, ready, SMALL, waitStatus } from './helpers';

test('max_staleness, weight_sync_steps and rollout_logprobs train two finite steps from a link and the form', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=2&eval_every=0&max_staleness=1&weight_sync_steps=2&top_k=4`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await expect(page.locator('#field-input-max_staleness')).toHaveValue('1');
  await expect(page.locator('#field-input-weight_sync_steps')).toHaveValue('2');
  await page.locator('#field-input-rollout_logprobs').selectOption('filtered');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expectFiniteCharts(page, ['sampling']);
  const sampling = await lastValues(page, 'sampling');
  // The second batch was sampled by version 0, one optimizer step behind; filtered log-probs put mu above pi_old.
  expect(sampling['off_policy/steps_behind']).toBe(1);
  expect(sampling['off_policy/versions_behind']).toBe(0);
  expect(sampling['mismatch_kl/mean']).toBeGreaterThan(0);
  expect(sampling['rollout_corr/ppl_ratio']).toBeGreaterThan(1);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
