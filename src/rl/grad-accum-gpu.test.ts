// Gradient accumulation on the GPU learner (learner.ts): one optimizer step on a minibatch taken whole equals the
// same step taken as k micro-batches (one command buffer each, the gradients accumulating in the model's gradient
// buffers, one clipped AdamW step after the last), for every loss aggregation, with the KL in the loss, an entropy
// bonus, LoRA, the critic and gradient checkpointing (grad-accum.fixture.ts holds the case).

import { describe, expect, it } from 'vitest';
import { DEFAULT_OBJECTIVE_CONFIG, type ObjectiveConfig } from '../schema/objective';
import { useNodeDevice } from '../testing/test-device';
import { gaCase, gaInit, type GaTolerances } from './grad-accum.fixture';
import { GpuLearner } from './learner';

const gpu = useNodeDevice();

// The weight gradients are f32 matmul reductions over the rows' positions: k micro-batches add k partial sums into
// the gradient buffer instead of one, the same terms in another order (a few ulps of the terms' magnitude); the
// objective's sums too. The step moves a weight by lr g / (|g| + 1) with lr 0.5.
const TOL: GaTolerances = { weights: { atol: 1e-6, rtol: 1e-5 }, scalars: { atol: 1e-6, rtol: 1e-5 } };
const KL: ObjectiveConfig = {
  ...DEFAULT_OBJECTIVE_CONFIG,
  beta: 0.05,
  kl_placement: 'in_loss',
  kl_estimator: 'k3',
  entropy_coef: 0.01,
};

describe('gradient accumulation on the GPU learner: k micro-batches make the step of the whole minibatch', () => {
  for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const)
    it(`${agg}, k3 KL in the loss and an entropy bonus, k = 2 and 3`, async () => {
      expect(
        await gaCase(agg, () => new GpuLearner(gpu.ctx, gaInit()), { ...KL, loss_agg_mode: agg }, [2, 3], TOL),
      ).toEqual([]);
    });

  it('sequence-level ratio (GSPO), the exact KL, a row per micro-batch (one without masked tokens)', async () => {
    const cfg: ObjectiveConfig = { ...KL, kl_estimator: 'exact', importance_sampling_level: 'sequence' };
    expect(await gaCase('gspo exact', () => new GpuLearner(gpu.ctx, gaInit()), cfg, [6], TOL)).toEqual([]);
  });

  it('LoRA', async () => {
    expect(await gaCase('lora', () => new GpuLearner(gpu.ctx, gaInit({ lora: true })), KL, [2, 3], TOL)).toEqual([]);
  });

  it('the critic (PPO): the value loss over the minibatch, one critic step', async () => {
    expect(
      await gaCase('critic', () => new GpuLearner(gpu.ctx, gaInit({ critic: true })), KL, [3], TOL, { critic: true }),
    ).toEqual([]);
  });

  it('gradient checkpointing: each micro-batch recomputes its own layers', async () => {
    expect(await gaCase('recompute', () => new GpuLearner(gpu.ctx, gaInit({ recompute: true })), KL, [2], TOL)).toEqual(
      [],
    );
  });
});
