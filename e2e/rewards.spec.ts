// A reward function of one's own in the browser: GRPO with a reward_fn written in the config panel trains a few
// steps and charts rewards/user/mean beside the task's parts; a function that never returns is stopped by its
// sandbox's time limit, and the run pauses with the message; a prompt list picked as a file becomes task prompts
// (a malformed one named by its line). Screenshots of each. Not the sandbox's unit tests (src/rl/rewards/user-reward.test.ts).
import { expect, test } from '@playwright/test';
import { SMALL, guard, lastValues, ready, setField, shot, waitStatus } from './helpers';

test('a user reward function is charted, an endless one is stopped with the run paused, and a prompt list is picked', async ({
  page,
}, info) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=3&eval_every=0`);
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);

  // The field is a text area of several lines; the fraction of the completion's characters that are "a".
  await setField(
    page,
    'task',
    'reward_fn',
    '(prompt, completion) =>\n  completion.length ? (completion.split("a").length - 1) / completion.length : 0',
  );
  await expect(page.getByTestId('field-error-reward_fn')).toHaveCount(0);
  await expect(page.locator('#field-input-reward_fn')).toHaveJSProperty('tagName', 'TEXTAREA');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 3);
  const rewards = await lastValues(page, 'rewards');
  expect(Object.keys(rewards)).toEqual(expect.arrayContaining(['rewards/user/mean', 'rewards/accuracy/mean']));
  for (const [k, v] of Object.entries(rewards)) expect(Number.isFinite(v), `${k} = ${v}`).toBe(true);
  await page.getByTestId('chart-rewards').scrollIntoViewIfNeeded();
  // Plots are drawn only near the viewport, through a render queue: wait for this one's 3 steps.
  await expect(page.getByTestId('chart-rewards')).toHaveAttribute('data-drawn', '3');
  await shot(page, info, 'rewards-user-charted');

  // An endless loop: the sandbox is terminated after its time limit and the run pauses, saying why.
  await setField(page, 'task', 'reward_fn', '(prompt, completion) => {\n  while (true) {}\n}');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /paused/);
  await expect(page.getByTestId('run-message')).toContainText(
    'reward_fn did not finish a batch of 8 completions within 5 s (an endless loop?)',
  );
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-step', '0');
  await page.getByTestId('run-message').scrollIntoViewIfNeeded();
  await shot(page, info, 'rewards-loop-stopped');

  // The person's own prompt list, picked as a file in the config panel; a malformed one is named by its line.
  await page.getByTestId('task-select').selectOption('prompts');
  await expect(page.getByTestId('field-error-prompts')).toContainText('none is given');
  await expect(page.getByTestId('run-start')).toBeDisabled();
  const file = (name: string, text: string) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(text) });
  await page
    .getByTestId('prompts-file')
    .setInputFiles(file('bad.jsonl', '{"prompt": "2+2=", "answer": "4"}\n{"prompt": "3+3="}\n'));
  await expect(page.getByTestId('field-error-prompts')).toContainText('line 2: missing "answer"');
  await page.getByTestId('prompts-file').setInputFiles(file('sums.csv', 'prompt,answer\n2+2=,4\n3+3=,6\n'));
  await expect(page.getByTestId('field-error-prompts')).toHaveCount(0);
  await expect(page.getByTestId('prompts-summary')).toContainText('sums.csv: 3 lines');
  await expect(page.getByTestId('task-description')).toContainText('Your own 2 prompts');
  await page.getByTestId('field-prompts').scrollIntoViewIfNeeded();
  await shot(page, info, 'rewards-prompt-list');
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test("a reward function cannot reach the network or compile code: it runs under the page's security policy", async ({
  page,
}) => {
  test.setTimeout(240_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=1&eval_every=0`);
  await ready(page);
  // import() is syntax, so no deleted global can stop it; Function and eval compile strings. Under the page's CSP
  // (script-src 'self', no 'unsafe-eval') all three are refused before any request leaves.
  await setField(
    page,
    'task',
    'reward_fn',
    '(prompt, completion) => {\n  import("https://reward-fn-probe.invalid/x.js").catch(() => {});\n  let compiled = 0;\n  try { compiled += (0, Function)("return 1")(); } catch (e) {}\n  try { compiled += (0, eval)("1"); } catch (e) {}\n  return compiled;\n}',
  );
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 1);
  // Waits for the chart's last value (a fixed pause would depend on the machine's speed).
  await expect.poll(async () => (await lastValues(page, 'rewards'))['rewards/user/mean']).toBe(0);
  expect(w.external).toEqual([]);
  expect(w.requests.filter((p) => p.includes('reward-fn-probe'))).toEqual([]);
});
