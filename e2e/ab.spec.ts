// The objective A/B in a real Chromium with WebGPU on SwiftShader: a short GRPO run (two updates per batch, so the
// ratio moves) trains to its end; then GRPO vs Dr. GRPO on its latest step shows the explanation with numbers, the
// gradient share by length and correctness, the tokens that differ most, the side-by-side tokens and one completion's
// per-token numbers; then the run's own config with epsilon_high changed, on the same step, names the edit and counts
// the clipped tokens. Screenshots of the panel are saved as artifacts.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { guard, ready, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1500 } });

/** A screenshot of the A/B panel alone. */
async function panelShot(page: Page, info: TestInfo, name: string): Promise<void> {
  const path = info.outputPath(`${name}.png`);
  await page.getByTestId('compare-panel').screenshot({ path });
  await info.attach(name, { path, contentType: 'image/png' });
}

test('compare GRPO with Dr. GRPO and with an edited epsilon_high on the latest step of a run', async ({
  page,
}, info) => {
  test.setTimeout(300_000);
  const w = await guard(page);
  // Four prompts, so that some group's rewards differ (a batch of tied groups has no policy gradient to compare).
  await page.goto(
    '/?preset=grpo&task=copy&difficulty=3&checkpoint=copy&train_batch_size=4&num_generations=4&steps=3&eval_every=0&num_iterations=2&temperature=1&learning_rate=0.001',
  );
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);

  const panel = page.getByTestId('compare-panel');
  await expect(panel.getByTestId('compare-run')).toBeDisabled();
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3);

  // B = Dr. GRPO applied to the run's config: its aggregation, the run's experiment.
  await panel.scrollIntoViewIfNeeded();
  await panel.getByTestId('compare-preset').selectOption('dr_grpo');
  await panel.getByTestId('compare-knobs').locator('summary').click();
  await expect(panel.getByTestId('b-field-loss_agg_mode')).toHaveAttribute('data-value', 'seq-mean-token-sum-norm');
  await expect(panel.getByTestId('b-field-loss_agg_mode')).toHaveAttribute('data-differs', 'true');
  await expect(panel.getByTestId('b-field-gamma')).toHaveAttribute('data-differs', 'false');
  await panel.getByTestId('compare-knobs').locator('summary').click();
  await panel.getByTestId('compare-run').click();

  const result = panel.getByTestId('compare-result');
  await expect(result).toBeVisible({ timeout: 60_000 });
  await expect(result).toContainText('A: GRPO (DeepSeekMath) (this run) vs B: Dr. GRPO, on the batch of step 3');
  const explanation = panel.getByTestId('compare-explanation');
  await expect(explanation).toContainText(
    'A: loss_agg_mode seq-mean-token-mean weighs each token 1/(N·|y_i|) (N = 16, L_max =',
  );
  await expect(explanation).toContainText('B: loss_agg_mode seq-mean-token-sum-norm weighs each token 1/(N·L_max)');
  await expect(explanation).toContainText(/Share of the gradient .* \d+(\.\d)?% under A, \d+(\.\d)?% under B/);
  await expect(explanation).toContainText(/Clipped tokens: A \d+ \(\d+ low, \d+ high\), B \d+/);
  expect(await panel.getByTestId('compare-cells').locator('tbody tr').count()).toBeGreaterThan(0);
  expect(await panel.getByTestId('compare-top').locator('tbody tr').count()).toBe(8);
  // Side by side: every completion of the group has an A line and a B line of the same tokens.
  const completions = panel.getByTestId('compare-completion');
  expect(await completions.count()).toBe(4);
  const first = completions.first();
  expect(await first.getByTestId('compare-line-A').getByTestId('compare-token').count()).toBe(
    await first.getByTestId('compare-line-B').getByTestId('compare-token').count(),
  );
  expect(await panel.getByTestId('compare-tokens').locator('.tok.differs-most').count()).toBeGreaterThan(0);
  // One completion's numbers, token by token: loss shares as percentages, gradients as numbers, clip sides named.
  const rows = panel.getByTestId('compare-token-row');
  expect(await rows.count()).toBeGreaterThan(0);
  await expect(rows.first().locator('td').nth(1)).toHaveText(/^(\d+(\.\d)?%|—)$/);
  await expect(rows.first().locator('td').nth(3)).toHaveText(/^-?\d/);
  await expect(rows.first().locator('td').nth(5)).toHaveText(/^(none|low|high)$/);
  await panelShot(page, info, 'ab-grpo-vs-dr-grpo');
  await panel.getByTestId('compare-color').selectOption('grad');
  await panelShot(page, info, 'ab-grpo-vs-dr-grpo-gradient');

  // B = the run's own config with a wider upper clip: the label names the edit, the clip counts compare.
  await panel.getByTestId('compare-preset').selectOption('run');
  await panel.getByTestId('compare-knobs').locator('summary').click();
  await panel.locator('#b-field-input-epsilon_high').fill('0.5');
  await expect(panel.getByTestId('b-field-epsilon_high')).toHaveAttribute('data-differs', 'true');
  await panel.getByTestId('compare-run').click();
  await expect(result).toContainText("B: this run's config with epsilon_high 0.5", { timeout: 60_000 });
  await expect(explanation).toContainText('Advantages: the same on both sides');
  const clip = /Clipped tokens: A \d+ \((\d+) low, (\d+) high\), B \d+ \((\d+) low, (\d+) high\)/;
  await expect(explanation).toContainText(clip);
  // A wider upper clip range clips no more tokens high, and the lower range is the same.
  const [lowA, highA, lowB, highB] = clip
    .exec((await explanation.textContent()) ?? '')!
    .slice(1)
    .map(Number);
  expect(lowB).toBe(lowA);
  expect(highB).toBeLessThanOrEqual(highA);
  await panelShot(page, info, 'ab-epsilon-high');

  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
