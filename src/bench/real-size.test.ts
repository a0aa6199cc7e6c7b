// The real-size bench's modes (real-size.ts) at the 8 prompts x 8 completions x 256 new tokens: one
// minibatch a batch (one optimizer step, the trainer's default) whose micro-batches (gradient_accumulation_steps)
// keep the memory plan of SmolLM2-135M under each mode's target. No GPU: the plan is arithmetic.

import { describe, expect, it } from 'vitest';
import { SMOLLM2_135M } from '../io/real-models.fixture';
import { derive } from '../schema/config';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { REAL_SIZE_MODES, realSizeConfig } from './real-size';
import { REAL_SIZE_MODE_NAMES } from '../schema/bench-report';

const BIG = { maxBufferSize: 2 ** 36, maxStorageBufferBindingSize: 2 ** 36 };

describe('real-size modes', () => {
  for (const mode of REAL_SIZE_MODE_NAMES)
    it(`${REAL_SIZE_MODES[mode].label}: one optimizer step a batch, planned under the target`, () => {
      const config = realSizeConfig(mode, { prompts: 8, generations: 8, maxTokens: 256 });
      const d = derive(config);
      expect([config.num_minibatches, d.optimizerStepsPerBatch]).toEqual([1, 1]);
      expect(d.microBatchSize).toBe(REAL_SIZE_MODES[mode].microBatchRows);
      const { weightDtype, plan } = rlResolvedMemoryPlan(config, SMOLLM2_135M, BIG);
      expect(weightDtype).toBe('bf16');
      expect(plan.peakBytes).toBeLessThanOrEqual(REAL_SIZE_MODES[mode].targetBytes);
      // Taking the whole minibatch at once would not fit: the micro-batches are what meets the target.
      const whole = rlResolvedMemoryPlan({ ...config, gradient_accumulation_steps: 1 }, SMOLLM2_135M, BIG).plan;
      expect(whole.peakBytes).toBeGreaterThan(REAL_SIZE_MODES[mode].targetBytes);
    });
});
