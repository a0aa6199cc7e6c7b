// On-policy distillation in the page: the knobs come from a link (a teacher folder on the site, every reward weighed
// 0) and from the config form the schema generates (distill_coef's number input, self_distill's checkbox); two steps
// train in the engine worker, which fetches the teacher's files from the site, and the KL chart receives finite
// distill/reverse_kl and (on the fractions chart) distill/adv_share. Self-distillation (no second model) trains two finite steps too, and so
// do two teachers by prompt source (a prompt list whose rows name their teacher, the teachers knob from a link and
// from the form), each teacher's reverse KL on the KL chart.
import { expect, test } from '@playwright/test';
import { expectFiniteCharts, guard, lastValues, ready, setField, SMALL, waitStatus } from './helpers';

// The offline copy's service worker would serve the shipped folders from its cache, out of the request log these
// tests read ("its files come from the site"); offline is e2e/offline.spec.ts's and newcomer.spec.ts's.
test.use({ serviceWorkers: 'block' });

test('a teacher from a link trains two finite steps; its files come from the site', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(
    `/?preset=grpo&${SMALL}&steps=2&eval_every=0&teacher=models/copy-teacher&reward_weights=accuracy:0,format:0`,
  );
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await ready(page);
  await expect(page.locator('#field-input-teacher')).toHaveValue('models/copy-teacher');
  await setField(page, 'advantage', 'distill_coef', '0.5');
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expect(page.getByTestId('run-message')).toHaveCount(0);
  await expectFiniteCharts(page, ['kl']);
  const kl = await lastValues(page, 'kl');
  expect(kl['distill/reverse_kl']).toBeGreaterThan(0);
  // Distillation alone: the whole advantage is the teacher's (a share, drawn with the fractions, not on KL's nats).
  expect((await lastValues(page, 'fractions'))['distill/adv_share']).toBe(1);
  expect(w.requests.some((p) => p.endsWith('/models/copy-teacher/model.safetensors'))).toBe(true);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('self-distillation from the form trains two finite steps', async ({ page }) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  await page.goto(`/?preset=grpo&${SMALL}&steps=2&eval_every=0`);
  await ready(page);
  await setField(page, 'advantage', 'distill_coef', '0.5');
  await page.locator('#field-input-self_distill').check();
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expect(page.getByTestId('run-message')).toHaveCount(0);
  await expectFiniteCharts(page, ['kl', 'fractions']);
  const share = (await lastValues(page, 'fractions'))['distill/adv_share'];
  expect(share).toBeGreaterThan(0);
  expect(share).toBeLessThan(1);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});

test('two teachers by prompt source from a link and the form train two finite steps, each charted', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const w = await guard(page);
  const prompts = [
    '{"prompt": "ab", "answer": "ab", "teacher_id": "self"}',
    '{"prompt": "cd", "answer": "cd", "teacher_id": "rev"}',
    '{"prompt": "ef", "answer": "ef", "teacher_id": "rev"}',
  ].join('\n');
  const link = new URLSearchParams({
    preset: 'grpo',
    task: 'prompts',
    prompts,
    checkpoint: 'copy',
    teachers: 'self=copy',
    train_batch_size: '3',
    num_generations: '2',
    steps: '2',
    eval_every: '0',
  });
  await page.goto(`/?${link}`);
  await ready(page);
  // The link's teachers lack rev, which rows 2 and 3 name: the link is used but for teachers, the refusal naming the
  // id and the line; the form then gives both teachers.
  await expect(page.getByTestId('url-error')).toContainText(
    'teachers: line 2 of the prompt list names teacher_id "rev", which is not one of teachers (self)',
  );
  await expect(page.locator('#field-input-teachers')).toHaveValue('');
  await setField(page, 'advantage', 'teachers', 'self=copy,rev=reverse');
  await expect(page.locator('#field-input-teachers')).toHaveAttribute('aria-invalid', 'false');
  // The link's one problem is answered: its notice closes.
  await expect(page.getByTestId('url-error')).toHaveCount(0);
  await page.getByTestId('run-start').click();
  await waitStatus(page, /done/, 2);
  await expect(page.getByTestId('run-message')).toHaveCount(0);
  await expectFiniteCharts(page, ['kl']);
  const kl = await lastValues(page, 'kl');
  expect(Object.keys(kl).some((k) => k.startsWith('distill/reverse_kl/'))).toBe(true);
  expect(Number.isFinite(kl['distill/reverse_kl'])).toBe(true);
  expect(w.requests.some((p) => p.endsWith('/checkpoints/reverse/model.safetensors'))).toBe(true);
  expect(w.external).toEqual([]);
  expect(w.errors).toEqual([]);
});
