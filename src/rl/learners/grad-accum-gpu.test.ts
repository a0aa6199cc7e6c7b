// Gradient accumulation on the GPU learner (learner.ts): one optimizer step on a minibatch taken whole equals the
// same step taken as k micro-batches (one command buffer each, the gradients accumulating in the model's gradient
// buffers, one clipped AdamW step after the last), for every loss aggregation, with the KL in the loss, an entropy
// bonus, LoRA, the critic and gradient checkpointing (grad-accum.fixture.ts holds the case).

import { describe, expect, it } from 'vitest';
import type { ObjectiveConfig } from '../../schema/objective';
import { useNodeDevice } from '../../testing/test-device';
import { GA_OBJECTIVE, GA_TOLERANCES, gaCase, gaInit } from './grad-accum.fixture';
import { GpuLearner } from './learner';

const gpu = useNodeDevice();

describe('gradient accumulation on the GPU learner: k micro-batches make the step of the whole minibatch', () => {
  for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const)
    it(`${agg}, k3 KL in the loss and an entropy bonus, k = 2 and 3`, async () => {
      expect(
        await gaCase(
          agg,
          () => new GpuLearner(gpu.ctx, gaInit()),
          { ...GA_OBJECTIVE, loss_agg_mode: agg },
          [2, 3],
          GA_TOLERANCES,
        ),
      ).toEqual([]);
    });

  it('sequence-level ratio (GSPO), the exact KL, a row per micro-batch (one without masked tokens)', async () => {
    const cfg: ObjectiveConfig = { ...GA_OBJECTIVE, kl_estimator: 'exact', importance_sampling_level: 'sequence' };
    expect(await gaCase('gspo exact', () => new GpuLearner(gpu.ctx, gaInit()), cfg, [6], GA_TOLERANCES)).toEqual([]);
  });

  it('LoRA', async () => {
    expect(
      await gaCase('lora', () => new GpuLearner(gpu.ctx, gaInit({ lora: true })), GA_OBJECTIVE, [2, 3], GA_TOLERANCES),
    ).toEqual([]);
  });

  it('the critic (PPO): the value loss over the minibatch, one critic step', async () => {
    expect(
      await gaCase(
        'critic',
        () => new GpuLearner(gpu.ctx, gaInit({ critic: true })),
        GA_OBJECTIVE,
        [3],
        GA_TOLERANCES,
        { critic: true },
      ),
    ).toEqual([]);
  });

  it('gradient checkpointing: each micro-batch recomputes its own layers', async () => {
    expect(
      await gaCase(
        'recompute',
        () => new GpuLearner(gpu.ctx, gaInit({ recompute: true })),
        GA_OBJECTIVE,
        [2],
        GA_TOLERANCES,
      ),
    ).toEqual([]);
  });
});
