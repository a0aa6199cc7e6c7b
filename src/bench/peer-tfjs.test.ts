// The tfjs peer does the same work as our model: on the same weights and batch it computes the same loss, before
// and after one clipped AdamW step (so its gradients and optimizer match too), on our device through Dawn.
// Correctness only: no timing is asserted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice, installNavigatorGpu } from '../gpu/node';
import { MODEL_PRESETS, type ModelConfig } from '../schema/model-config';
import { TfjsLlama, releaseTfjs, tfjsBatch, tfjsSync, useTfjsOnDevice } from './peer-tfjs';
import { BENCH_STEP, OurStep, benchParams, randomBatch } from './step';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  installNavigatorGpu();
  await useTfjsOnDevice(ctx);
});

afterAll(() => {
  releaseTfjs();
  ctx?.destroy();
});

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

const configs: [string, ModelConfig][] = [
  ['nano (tied head)', MODEL_PRESETS.nano],
  ['micro, untied head', { ...MODEL_PRESETS.micro, tiedEmbeddings: false }],
];

describe('the tfjs peer computes what our model computes', () => {
  for (const [name, config] of configs) {
    it(`${name}: same loss before and after one clipped AdamW step`, async () => {
      // std 0.1 makes the loss depend visibly on the weights (not just log V), and the gradient large enough to clip.
      const params = benchParams(config, 7, 0.1);
      const batch = randomBatch(config, 3, 17, 11);
      const ours = OurStep.create(ctx, config, params, batch);
      const peer = new TfjsLlama(config, params);
      const inputs = tfjsBatch(batch.tokens, batch.targets);
      try {
        const opts = { ...BENCH_STEP, lr: 1e-2 };
        const ourLoss0 = await ours.step(opts);
        const peerLoss0Tensor = peer.trainStep(inputs.tokens, inputs.targets, batch.B, batch.T, opts);
        await tfjsSync(ctx.device);
        const peerLoss0 = (await peerLoss0Tensor.data())[0];
        peerLoss0Tensor.dispose();
        expect(rel(peerLoss0, ourLoss0), `loss ours ${ourLoss0} tfjs ${peerLoss0}`).toBeLessThan(1e-4);
        const ourLoss1 = await ours.evalLoss();
        const peerLoss1 = await peer.evalLoss(batch.tokens, batch.targets, batch.B, batch.T);
        expect(Math.abs(ourLoss1 - ourLoss0), 'the step changed the loss').toBeGreaterThan(1e-3);
        console.log(
          `${name}: loss ${ourLoss0} vs ${peerLoss0} (rel ${rel(peerLoss0, ourLoss0).toExponential(1)}); after ${ourLoss1} vs ${peerLoss1} (rel ${rel(peerLoss1, ourLoss1).toExponential(1)})`,
        );
        expect(rel(peerLoss1, ourLoss1), `loss after a step: ours ${ourLoss1} tfjs ${peerLoss1}`).toBeLessThan(1e-4);
      } finally {
        inputs.dispose();
        peer.dispose();
        ours.destroy();
      }
    });
  }
});
