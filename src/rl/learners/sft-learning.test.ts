// Learning, in CI: a nano model learns the copy task from scratch, on the GPU path (WGSL through Dawn), to at
// least 90% greedy accuracy on held-out items. Budget: the step count below on this 2-core CPU machine
// (SwiftShader); the test logs its accuracy and training time.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { loadCharTokenizerFile } from '../../cli/files';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import { getTask } from '../../tasks';
import { MODEL_PRESETS } from '../../schema/model-config';
import { GpuPolicy } from '../../model/policy';
import { evaluateGreedy, trainSft } from './sft';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

export const LEARNING_BUDGET = { task: 'copy', difficulty: 3, steps: 200, batchSize: 32, lr: 3e-3 } as const;

describe('learning', () => {
  it(`nano learns copy (length ${LEARNING_BUDGET.difficulty}) from scratch to >= 90% held-out greedy accuracy in ${LEARNING_BUDGET.steps} steps`, async () => {
    const { tok } = loadCharTokenizerFile();
    const task = getTask(LEARNING_BUDGET.task, LEARNING_BUDGET.difficulty);
    const config = MODEL_PRESETS.nano;
    const init = initParams(config, new Rng(0), { std: 0.02 });
    const policy = GpuPolicy.create(
      ctx,
      config,
      Object.fromEntries(Object.entries(init).map(([k, v]) => [k, Float32Array.from(v.data)])),
    );
    const before = await evaluateGreedy(policy, task, tok, { n: 100, seed: 7, split: 'heldout' });
    const t0 = performance.now();
    let last = Infinity;
    for await (const p of trainSft(policy, task, tok, {
      steps: LEARNING_BUDGET.steps,
      batchSize: LEARNING_BUDGET.batchSize,
      lr: LEARNING_BUDGET.lr,
      warmup: 20,
      seed: 0,
      logEvery: 50,
    })) {
      last = p.loss;
    }
    const trainS = (performance.now() - t0) / 1000;
    const after = await evaluateGreedy(policy, task, tok, { n: 200, seed: 7, split: 'heldout' });
    console.log(
      `learning: copy/${LEARNING_BUDGET.difficulty} held-out greedy accuracy ${(before.accuracy * 100).toFixed(1)}% -> ${(after.accuracy * 100).toFixed(1)}% ` +
        `(n=${after.n}) after ${LEARNING_BUDGET.steps} steps in ${trainS.toFixed(0)} s, final loss ${last.toFixed(4)}`,
    );
    expect(before.accuracy).toBeLessThan(0.1);
    expect(after.accuracy).toBeGreaterThanOrEqual(0.9);
    policy.destroy();
  }, 1_200_000);
});
