// Gradient accumulation on the CPU learner (cpu-learner.ts): one optimizer step on a minibatch taken whole equals
// the same step taken as k micro-batches (gradients summed, one clipped AdamW step), for every loss aggregation,
// with the KL in the loss, an entropy bonus, LoRA and the critic (grad-accum.fixture.ts holds the case). The
// tolerance is f32 summation order: the twin sums each micro-batch's per-row gradients, then the micro-batches.

import { describe, expect, it } from 'vitest';
import type { ObjectiveConfig } from '../../schema/objective';
import { CpuLearner } from './cpu-learner';
import { GA_OBJECTIVE, GA_TOLERANCES, gaCase, gaInit } from './grad-accum.fixture';
import { combineMicroScalars, STEP_SCALARS, type StepScalar } from './learner';

describe('gradient accumulation on the CPU learner: k micro-batches make the step of the whole minibatch', () => {
  for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const)
    it(`${agg}, k3 KL in the loss and an entropy bonus, k = 2 and 3`, async () => {
      expect(
        await gaCase(
          agg,
          () => new CpuLearner(gaInit()),
          { ...GA_OBJECTIVE, loss_agg_mode: agg },
          [2, 3],
          GA_TOLERANCES,
        ),
      ).toEqual([]);
    });

  it('sequence-level ratio (GSPO), the exact KL, a row per micro-batch (one without masked tokens)', async () => {
    const cfg: ObjectiveConfig = { ...GA_OBJECTIVE, kl_estimator: 'exact', importance_sampling_level: 'sequence' };
    expect(await gaCase('gspo exact', () => new CpuLearner(gaInit()), cfg, [6], GA_TOLERANCES)).toEqual([]);
  });

  it('LoRA', async () => {
    expect(
      await gaCase('lora', () => new CpuLearner(gaInit({ lora: true })), GA_OBJECTIVE, [2, 3], GA_TOLERANCES),
    ).toEqual([]);
  });

  it('the critic (PPO): the value loss over the minibatch, one critic step', async () => {
    expect(
      await gaCase('critic', () => new CpuLearner(gaInit({ critic: true })), GA_OBJECTIVE, [3], GA_TOLERANCES, {
        critic: true,
      }),
    ).toEqual([]);
  });
});

describe('combineMicroScalars', () => {
  const part = (v: number) => Object.fromEntries(STEP_SCALARS.map((k) => [k, v])) as Record<StepScalar, number>;
  it('sums shares, takes max / min / last, and leaves a micro-batch without masked tokens out of low_min', () => {
    const a = { ...part(0.25), 'clip_ratio/low_min': 0.5, 'clip_ratio/high_max': 0.1, grad_norm: 9 };
    const b = { ...part(0.5), 'clip_ratio/low_min': 0.2, 'clip_ratio/high_max': 0.7, grad_norm: 3 };
    const empty = { ...part(0), 'clip_ratio/low_min': 0 };
    const out = combineMicroScalars([a, b, empty], [10, 4, 0]);
    expect(out.entropy).toBe(0.75);
    expect(out.loss).toBe(0.75);
    expect(out['clip_ratio/high_max']).toBe(0.7);
    expect(out['sampling/sampling_logp_difference/max']).toBe(0.5);
    expect(out['clip_ratio/low_min']).toBe(0.2);
    expect(out.grad_norm).toBe(0);
    expect(combineMicroScalars([empty, empty], [0, 0])['clip_ratio/low_min']).toBe(0);
  });
});
