// `npm run train -- --seeds N`: a seed group from the command line, as the page's "Run over seeds": each seed a run
// of its own in --out/seed-<s>/ (its rl_config.json records the seed), a summary with the median across seeds, and
// the refusals (a group of one, a resumed group).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trainInProcess } from '../testing/train-in-process';

const dir = mkdtempSync(join(tmpdir(), 'rl-lab-seeds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KNOBS = [
  '--task',
  'copy',
  '--preset',
  'grpo',
  '--train_batch_size',
  '2',
  '--num_generations',
  '4',
  '--steps',
  '2',
];
const FLAGS = [...KNOBS, '--eval_every', '2', '--eval_items', '4', '--backend', 'cpu', '--quiet'];

describe('npm run train -- --seeds', () => {
  it('trains the config over consecutive seeds, each in its own folder, and sums them up', async () => {
    const out = join(dir, 'group');
    const run = await trainInProcess([...FLAGS, '--seed', '3', '--seeds', '2', '--out', out]);
    expect(run.error).toBeNull();
    expect(run.code).toBe(0);
    for (const seed of [3, 4]) {
      const config = JSON.parse(readFileSync(join(out, `seed-${seed}`, 'rl_config.json'), 'utf8')) as { seed: number };
      expect(config.seed).toBe(seed);
      expect(existsSync(join(out, `seed-${seed}`, 'trainer_state.safetensors'))).toBe(true);
      expect(
        readFileSync(join(out, `seed-${seed}`, 'metrics.jsonl'), 'utf8')
          .trim()
          .split('\n'),
      ).toHaveLength(2);
    }
    expect(run.stderr).toContain(`seed group: 2 of 2 seeds trained, in ${out}`);
    expect(run.stderr).toMatch(/seed 3: reward [\d.]+, accuracy [\d.]+%, held-out accuracy [\d.]+% at step 2/);
    expect(run.stderr).toMatch(/median last reward over 2 seeds: [\d.]+ \(95% band [\d.]+ to [\d.]+\)/);
    expect(run.stderr).toMatch(/median held-out accuracy over 2 seeds: [\d.]+% \(95% band/);
  });

  it('refuses a group of one seed and a resumed group, before any work', async () => {
    const one = await trainInProcess([...FLAGS, '--seeds', '1', '--out', join(dir, 'one')]);
    expect(one.error?.message).toMatch(/^--seeds: a seed group has 2 to 10 seeds \(got 1\)/);
    expect(existsSync(join(dir, 'one'))).toBe(false);
    const resumed = await trainInProcess([
      '--resume',
      join(dir, 'group', 'seed-3', 'trainer_state.safetensors'),
      '--seeds',
      '2',
    ]);
    expect(resumed.error?.message).toMatch(/^--seeds starts a seed group; resume each seed's run with --resume/);
  });
});
