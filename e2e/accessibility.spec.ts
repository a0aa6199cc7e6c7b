// Accessibility of the lab by keyboard and by name, in a real Chromium: the skip link reaches the run controls in a
// few Tab presses from page load; every visible config field is named by its field name (short) and described by
// its help; the charts are named images with their latest values as the description; an inspector token takes the
// keyboard focus (one Tab stop per group, the arrow keys move, Enter selects) with a visible focus ring. One small
// run of one step feeds the charts and the inspector.
import { expect, test, type Page } from '@playwright/test';
import { guard, ready, SMALL, waitStatus } from './helpers';

test.use({ viewport: { width: 1440, height: 1200 } });

/** The test id of the focused element (empty when it has none). */
const focusedTestId = (page: Page) =>
  page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.testid ?? '');

test('skip link, field names and descriptions, chart names, keyboard tokens', async ({ page }) => {
  const w = await guard(page);
  await page.goto(`/?${SMALL}&preset=grpo&steps=2&eval_every=0`);
  await ready(page);
  await expect(page.getByTestId('run-start')).toBeEnabled();

  // From page load: Tab to the skip link, follow it, and Start has the focus.
  let tabs = 0;
  while (tabs < 3 && (await focusedTestId(page)) !== 'skip-to-run') {
    await page.keyboard.press('Tab');
    tabs++;
  }
  expect(await focusedTestId(page)).toBe('skip-to-run');
  await page.keyboard.press('Enter');
  while (tabs < 3 && (await focusedTestId(page)) !== 'run-start') {
    await page.keyboard.press('Tab');
    tabs++;
  }
  expect(await focusedTestId(page), `after ${tabs} Tab presses`).toBe('run-start');
  expect(tabs).toBeLessThanOrEqual(3);

  // Every visible field: named by its field name (the help is its description, not part of its name).
  const fields = page.locator('[id^="field-input-"]:visible');
  expect(await fields.count()).toBeGreaterThan(5);
  for (const field of await fields.all()) {
    const id = (await field.getAttribute('id'))!;
    const name = id.replace('field-input-', '');
    await expect(field, id).toHaveAccessibleName(new RegExp(`^${name}( differs from .*)?$`));
    await expect(field, id).toHaveAccessibleName(/^.{1,59}$/s);
    await expect(field, id).toHaveAccessibleDescription(new RegExp(`^${name}: .{20,}`, 's'));
  }

  // One step: the charts get values, the inspector its groups.
  await page.getByTestId('run-step').click();
  await waitStatus(page, /paused/, 1);
  const figures = page.getByTestId('chart-figure');
  expect(await figures.count()).toBeGreaterThan(5);
  for (const figure of await figures.all()) {
    await expect(figure).toHaveAccessibleName(/\S chart$/);
    await expect(figure).toHaveAccessibleDescription(/^(Latest: .+|No values yet\.)$/);
  }
  await expect(page.getByTestId('chart-reward').getByTestId('chart-figure')).toHaveAccessibleDescription(
    /^Latest: .*reward -?\d/,
  );

  // The inspector by keyboard: Tab from the colour picker reaches a group's token, the arrows move, Enter selects.
  await page.getByTestId('color-by').focus();
  for (let i = 0; i < 12 && (await focusedTestId(page)) !== 'token'; i++) await page.keyboard.press('Tab');
  expect(await focusedTestId(page)).toBe('token');
  const tokens = page.getByTestId('token');
  await expect(tokens.first()).toBeFocused();
  // One Tab stop per group, not one per token.
  expect(await page.locator('[data-testid=token][tabindex="0"]').count()).toBe(await page.getByTestId('group').count());
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  expect(outline).not.toBe('none');
  await page.keyboard.press('ArrowRight');
  const second = tokens.nth(1);
  await expect(second).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(second).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('token-detail')).toContainText('position 1');

  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
