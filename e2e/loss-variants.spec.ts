// The 2026 loss and advantage variants in the page: each run is opened from a shared link carrying the knobs
// (straight-through k3+, the unbiased KL, GDPO's normalize_then_sum, DRO; DPPO Binary-KL with low_var_kl+ and
// grpo_passk; DPPO Binary-TV; VESPO; the optimal token baseline; a bf16 sampler corrected by token_truncate), trains
// one step on the smallest setting with two updates of its batch (so the second update's ratio is not 1), and every
// chart's last values are finite. Each variant's arithmetic over many steps is src/kernels/objective.test.ts's and
// the trainer tests'; this is the link and the page's worker. No request leaves localhost.
import { expect, test } from '@playwright/test';
import { expectFiniteCharts, guard, ready, SMALL, waitStatus } from './helpers';

const VARIANTS: [string, string][] = [
  [
    'k3+, use_bias_correction_kl, normalize_then_sum and dro',
    'beta=0.05&kl_estimator=k3%2B&use_bias_correction_kl=true&multi_objective_aggregation=normalize_then_sum&loss_type=dro&dro_beta=0.5',
  ],
  [
    'dppo_kl with low_var_kl+ and grpo_passk',
    'loss_type=dppo_kl&epsilon=0.01&epsilon_high=0.015&beta=0.05&kl_estimator=low_var_kl%2B&adv_estimator=grpo_passk',
  ],
  ['dppo_tv', 'loss_type=dppo_tv&epsilon=0.05&epsilon_high=0.08'],
  ['vespo', 'loss_type=vespo&vespo_k_pos=1.5&vespo_lambda_neg=2.5'],
  ['optimal_token_baseline', 'adv_estimator=optimal_token_baseline'],
  [
    'a bf16 sampler with token_truncate rollout correction',
    'rollout_dtype=bf16&rollout_is_mode=token_truncate&rollout_is_clip_max=2',
  ],
];

// One page for every variant (a link opened in the same tab): the browser keeps its compiled shaders between them, so
// each variant after the first costs its step, not a cold start.
test('each 2026 variant trains a finite step of two updates from a link', async ({ page }) => {
  test.setTimeout(900_000);
  const w = await guard(page);
  for (const [name, params] of VARIANTS) {
    await test.step(name, async () => {
      await page.goto(`/?preset=grpo&${SMALL}&steps=1&eval_every=0&num_iterations=2&${params}`);
      await expect(page.getByTestId('url-error')).toHaveCount(0);
      await ready(page);
      await page.getByTestId('run-start').click();
      await waitStatus(page, /done/, 1);
      await expectFiniteCharts(page, ['reward', 'clip', 'kl', 'loss', 'grad']);
    });
  }
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
