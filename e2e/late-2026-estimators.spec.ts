// The late-2026 estimators and loss in the page, each opened from a shared link carrying its knobs: MaxRL on binary
// rewards, F-GRPO with its focal knobs, the prime_rl preset's loss with adv_tau / kl_tau, spell_backward with a
// speedrun finish line, and VESPO with a token rollout correction in TRL's form. Each trains one step on the smallest
// setting with two updates of its batch (so the second update's ratio is not 1), every chart's last values are
// finite, and the speedrun readout is in the status line. No request leaves localhost.
import { expect, test } from '@playwright/test';
import { expectFiniteCharts, guard, ready, SMALL, waitStatus } from './helpers';

const SPELL = SMALL.replace('task=copy&difficulty=3', 'task=spell_backward&difficulty=3');

const VARIANTS: [string, string][] = [
  ['max_rl on binary rewards', `preset=grpo&${SMALL}&adv_estimator=max_rl&reward_weights=accuracy:1`],
  ['f_grpo', `preset=grpo&${SMALL}&adv_estimator=f_grpo&f_grpo_gamma=2&f_grpo_reward_wrong=0.1`],
  ['prime_rl preset (prime_dppo)', `preset=prime_rl&${SMALL}&adv_tau=0.5&kl_tau=0.01`],
  ['spell_backward with a speedrun target', `preset=grpo&${SPELL}&speedrun_target=0.5`],
  [
    "vespo with a bf16 sampler and token_mask (TRL's form)",
    `preset=grpo&${SMALL}&loss_type=vespo&rollout_dtype=bf16&rollout_is_mode=token_mask&rollout_is_clip_min=0.5&rollout_is_clip_max=2`,
  ],
];

test('each late-2026 estimator, loss and task trains a finite step of two updates from a link', async ({ page }) => {
  test.setTimeout(900_000);
  const w = await guard(page);
  for (const [name, params] of VARIANTS) {
    await test.step(name, async () => {
      await page.goto(`/?${params}&steps=1&eval_every=0&num_iterations=2`);
      await expect(page.getByTestId('url-error')).toHaveCount(0);
      await ready(page);
      await page.getByTestId('run-start').click();
      await waitStatus(page, /done/, 1);
      await expectFiniteCharts(page, ['reward', 'clip', 'loss', 'grad']);
      if (params.includes('speedrun_target'))
        await expect(page.getByTestId('status-speedrun')).toHaveText(
          '· speedrun: no 100-step rolling reward yet (1 of 100 steps)',
        );
    });
  }
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
