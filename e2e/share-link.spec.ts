// A long config in the address: a 300-row prompt list is kept in this browser and the address refers to it
// (under 2,000 characters), so a reload opens it instead of HTTP 431; another browser is told what it lacks and
// opens the rest; a hand-made long link, refused by the server, is answered by the offline copy.
import { expect, test } from '@playwright/test';
import { guard } from './helpers';

const ROWS = 300;
const PROMPTS = Array.from({ length: ROWS }, (_, i) => `{"prompt": "What is ${i} + ${i}?", "answer": "${2 * i}"}`).join(
  '\n',
);

test('a 300-row prompt list stays out of the address; reload opens it, another browser is told it is missing', async ({
  page,
  browser,
}) => {
  const w = await guard(page);
  await page.goto('/?preset=grpo&seed=5');
  await page.getByTestId('task-select').selectOption('prompts');
  await page
    .getByTestId('prompts-file')
    .setInputFiles({ name: 'sums.jsonl', mimeType: 'text/plain', buffer: Buffer.from(PROMPTS) });
  await expect(page.getByTestId('task-description')).toContainText(`Your own ${ROWS} prompts`);
  await expect(page.getByTestId('share-stored')).toHaveAttribute('data-fields', 'prompts');
  await expect(page).toHaveURL(/ref\.prompts=[0-9a-f]{32}/);
  expect(page.url().length).toBeLessThan(2100);
  expect((await page.getByTestId('share-link').inputValue()).length).toBeLessThan(2100);

  await page.reload();
  await expect(page.getByTestId('task-description')).toContainText(`Your own ${ROWS} prompts`);
  await expect(page.getByTestId('field-seed')).toHaveAttribute('data-value', '5');
  await expect(page.getByTestId('notice')).toHaveCount(0);

  // Another browser (a fresh context: its own IndexedDB) opens the same link.
  const other = await browser.newContext();
  const elsewhere = await other.newPage();
  await elsewhere.goto(page.url());
  await expect(elsewhere.getByTestId('notice')).toContainText(
    'This link refers to prompts kept in the browser that made it; this browser does not have it',
  );
  await expect(elsewhere.getByTestId('field-seed')).toHaveAttribute('data-value', '5');
  // Without its prompts the link's task cannot stand: the page names why and keeps the preset's task.
  await expect(elsewhere.getByTestId('url-error')).toContainText("(task stay at the preset's values)");
  await expect(elsewhere.getByTestId('url-error')).toContainText('none is given');
  await other.close();
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('a hand-made link too long for the server opens from the offline copy and gets a short address', async ({
  page,
}) => {
  await page.goto('/?preset=grpo');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 0 });
  const long = `/?preset=grpo&seed=7&task=prompts&prompts=${encodeURIComponent(PROMPTS)}`;
  expect(long.length).toBeGreaterThan(20_000);
  const direct = await page.request.get(long);
  expect(direct.status()).toBe(431);
  await page.goto(long);
  await expect(page.getByTestId('task-description')).toContainText(`Your own ${ROWS} prompts`);
  await expect(page.getByTestId('field-seed')).toHaveAttribute('data-value', '7');
  await expect(page).toHaveURL(/ref\.prompts=/);
  expect(page.url().length).toBeLessThan(2100);
});
