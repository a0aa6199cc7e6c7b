// The jax-js peer does the same work as our model: on the same weights and batch it computes the same loss, before
// and after one clipped AdamW step (so its gradients and optimizer match too), and its matmul computes ours at the
// presets' matmul shapes, on our device through Dawn. Correctness only: no timing is asserted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice, installNavigatorGpu } from '../gpu/node';
import { matmul } from '../kernels/matmul';
import { MODEL_PRESETS, type ModelConfig } from '../schema/model-config';
import { Rng, randomArray } from '../core/random';
import { modelMatmulShapes } from './autotune';
import { JaxLlama, JaxMatmul, jaxBatch, jaxSync, useJaxOnDevice } from './peer-jaxjs';
import { BENCH_STEP, OurStep, benchParams, randomBatch } from './step';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  installNavigatorGpu();
  await useJaxOnDevice(ctx);
});

afterAll(() => {
  ctx?.destroy();
});

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

const configs: [string, ModelConfig][] = [
  ['nano (tied head)', MODEL_PRESETS.nano],
  ['micro, untied head', { ...MODEL_PRESETS.micro, tiedEmbeddings: false }],
];

describe('the jax-js peer computes what our model computes', () => {
  it('runs on our GPUDevice', async () => {
    const { getWebGPUDevice } = await import('@jax-js/jax');
    expect(getWebGPUDevice()).toBe(ctx.device);
  });

  for (const [name, config] of configs) {
    it(`${name}: same loss before and after one clipped AdamW step`, async () => {
      // std 0.1 makes the loss depend visibly on the weights (not just log V), and the gradient large enough to clip.
      const params = benchParams(config, 7, 0.1);
      const batch = randomBatch(config, 3, 17, 11);
      const ours = OurStep.create(ctx, config, params, batch);
      const peer = new JaxLlama(config, params);
      const inputs = jaxBatch(batch.tokens, batch.targets);
      try {
        const opts = { ...BENCH_STEP, lr: 1e-2 };
        const ourLoss0 = await ours.step(opts);
        const peerLoss0Array = peer.trainStep(inputs.tokens, inputs.targets, batch.B, batch.T, opts);
        await jaxSync(ctx.device, [peerLoss0Array]);
        const peerLoss0 = (await peerLoss0Array.data())[0];
        expect(rel(peerLoss0, ourLoss0), `loss ours ${ourLoss0} jax-js ${peerLoss0}`).toBeLessThan(1e-4);
        const ourLoss1 = await ours.evalLoss();
        const peerLoss1 = await peer.evalLoss(batch.tokens, batch.targets, batch.B, batch.T);
        expect(Math.abs(ourLoss1 - ourLoss0), 'the step changed the loss').toBeGreaterThan(1e-3);
        console.log(
          `${name}: loss ${ourLoss0} vs ${peerLoss0} (rel ${rel(peerLoss0, ourLoss0).toExponential(1)}); after ${ourLoss1} vs ${peerLoss1} (rel ${rel(peerLoss1, ourLoss1).toExponential(1)})`,
        );
        expect(rel(peerLoss1, ourLoss1), `loss after a step: ours ${ourLoss1} jax-js ${peerLoss1}`).toBeLessThan(1e-4);
      } finally {
        inputs.dispose();
        peer.dispose();
        ours.destroy();
      }
    });
  }

  it("jax-js's matmul equals ours at nano's matmul shapes (each layout)", async () => {
    const config = MODEL_PRESETS.nano;
    for (const s of modelMatmulShapes(config, 2 * 32)) {
      const rng = new Rng(s.M + 3 * s.N + 7 * s.K);
      const aData = Float32Array.from(randomArray(rng, s.M * s.K));
      const bData = Float32Array.from(randomArray(rng, s.K * s.N));
      const a = ctx.fromArray(aData, s.transA ? [s.K, s.M] : [s.M, s.K]);
      const b = ctx.fromArray(bData, s.transB ? [s.N, s.K] : [s.K, s.N]);
      const out = ctx.tensor([s.M, s.N]);
      const peer = new JaxMatmul(s, aData, bData);
      try {
        const rec = ctx.recorder('test.matmul');
        matmul(rec, out, a, b, { transA: s.transA, transB: s.transB });
        rec.submit();
        const want = (await ctx.read(out)) as Float32Array;
        const got = (await peer.run().data()) as Float32Array;
        expect(got.length).toBe(want.length);
        let maxDiff = 0;
        let maxRef = 0;
        for (let i = 0; i < want.length; i++) {
          maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]));
          maxRef = Math.max(maxRef, Math.abs(want[i]));
        }
        expect(maxDiff / maxRef, `${s.role}: max |jax-js - ours| / max |ours|`).toBeLessThan(1e-5);
      } finally {
        peer.dispose();
        for (const t of [a, b, out]) t.destroy();
      }
    }
  });
});
