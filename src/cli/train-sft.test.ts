// `npm run train -- --sft` is a run session in mode 'sft' (src/engine/supervised-trainer.ts): in process, its
// metrics.jsonl, checkpoint and eval.json are what sft.ts's own loop gives on a GPU policy of the same start with the
// command's settings (rows = --batch, --warmup, --noise, greedy validation on 100 held-out items with seed 999 every
// --eval-every steps, the final greedy evaluation on --eval items with seed 12345), and --stop-at-accuracy ends the
// run at the first validation that reaches it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import type { ParamArrays } from '../io/checkpoint';
import { GpuPolicy } from '../model/policy';
import { SFT_DEFAULTS, evaluateGreedy, trainSft, type EvalResult } from '../rl/learners/sft';
import { getTask } from '../tasks';
import { acquireTestDevice } from '../testing/test-device';
import { trainInProcess } from '../testing/train-in-process';
import { loadCheckpointDir } from './files';

const WARM_START = new URL('../../public/checkpoints/copy', import.meta.url).pathname;
/** Four steps of four demonstrations from the copy warm start, a quarter of them wrong, validated every two steps. */
const FLAGS = [
  '--sft',
  '--task',
  'copy',
  '--difficulty',
  '3',
  '--init',
  WARM_START,
  '--steps',
  '4',
  '--batch',
  '4',
  '--warmup',
  '1',
  '--noise',
  '0.25',
  '--seed',
  '2',
  '--eval-every',
  '2',
  '--eval',
  '8',
  '--autotune=false',
];

const dir = mkdtempSync(join(tmpdir(), 'rl-lab-sft-'));
let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireTestDevice();
});
afterAll(() => {
  ctx?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** A metrics.jsonl line without its wall time. */
const timeless = (line: string) => {
  const { 'timing_s/elapsed': elapsed, ...rest } = JSON.parse(line) as Record<string, number>;
  expect(elapsed).toBeGreaterThan(0);
  return rest;
};
const metricLines = (out: string) => readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').map(timeless);

/** sft.ts's loop on a GPU policy of the warm start: each logged step's line, weights and final evaluation. */
async function directRun() {
  const { ck, tok } = await loadCheckpointDir(WARM_START);
  const task = getTask('copy', 3);
  const policy = GpuPolicy.create(ctx, ck.config, ck.params, 4);
  const opts = { steps: 4, batchSize: 4, lr: SFT_DEFAULTS.lr, warmup: 1, weightDecay: 0.01, maxGradNorm: 1 };
  const at = new Map<number, { line: Record<string, number>; params: ParamArrays; final: EvalResult }>();
  for await (const p of trainSft(policy, task, tok, { ...opts, noise: 0.25, seed: 2, logEvery: 2 })) {
    const validation = await evaluateGreedy(policy, task, tok, { n: 100, seed: 999, split: 'heldout' });
    at.set(p.step, {
      line: { step: p.step, loss: p.loss, learning_rate: p.lr, 'eval/validation_accuracy': validation.accuracy },
      params: await policy.download(),
      final: await evaluateGreedy(policy, task, tok, { n: 8, seed: 12345, split: 'heldout' }),
    });
  }
  policy.destroy();
  return at;
}

describe('npm run train -- --sft', () => {
  it("writes sft.ts's own loop's records, weights and evaluation, and stops at --stop-at-accuracy", async () => {
    const direct = await directRun();
    expect([...direct.keys()]).toEqual([2, 4]);
    const check = async (out: string, steps: number) => {
      const { ck } = await loadCheckpointDir(out);
      expect(ck.params).toEqual(direct.get(steps)!.params);
      expect(ck.metadata).toMatchObject({ task: 'copy', difficulty: '3', steps: String(steps), seed: '2' });
      const evaluation = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8'));
      expect(evaluation).toEqual({ split: 'heldout', steps, ...direct.get(steps)!.final });
    };

    const full = join(dir, 'full');
    const run = await trainInProcess([...FLAGS, '--out', full]);
    expect(run.error).toBeNull();
    expect(run.code).toBe(0);
    expect(metricLines(full)).toEqual([direct.get(2)!.line, direct.get(4)!.line]);
    await check(full, 4);

    // Any validation accuracy reaches 0: the run ends at its first validation, after step 2.
    const stopped = join(dir, 'stopped');
    const early = await trainInProcess([...FLAGS, '--stop-at-accuracy', '0', '--out', stopped]);
    expect(early.error).toBeNull();
    expect(metricLines(stopped)).toEqual([direct.get(2)!.line]);
    await check(stopped, 2);
  });
});
