// sampling_defaults: a checkpoint's generation_config.json values fill the sampling knobs left at the lab's
// defaults under 'model', never under 'lab'; a knob the person changed, a greedy do_sample and an unusable value
// are kept out and named; resolving twice changes nothing.

import { describe, expect, it } from 'vitest';
import { generationDefaults } from '../generation-defaults';
import { describeSamplingResolution, resolveConfig, resolveSamplingDefaults } from './';

const QWEN = generationDefaults({ do_sample: true, temperature: 0.7, top_p: 0.8, top_k: 20, repetition_penalty: 1.05 });

describe('resolveSamplingDefaults', () => {
  it("takes the model's values under 'model' and says so", () => {
    const r = resolveSamplingDefaults(resolveConfig('grpo', { sampling_defaults: 'model' }), QWEN);
    expect(r.config).toMatchObject({ temperature: 0.7, top_p: 0.8, top_k: 20 });
    expect(r.applied).toEqual({ temperature: 0.7, top_p: 0.8, top_k: 20 });
    expect(describeSamplingResolution(r)).toBe(
      'sampling from generation_config.json: temperature 0.7, top_p 0.8, top_k 20',
    );
    expect(resolveSamplingDefaults(r.config, QWEN).applied).toEqual({});
  });

  it("leaves 'lab' runs and folders without sampling defaults as they are", () => {
    const lab = resolveConfig('grpo');
    expect(resolveSamplingDefaults(lab, QWEN).config).toBe(lab);
    const model = resolveConfig('grpo', { sampling_defaults: 'model' });
    expect(resolveSamplingDefaults(model, null).config).toBe(model);
    expect(generationDefaults({ eos_token_id: 2 })).toBeNull();
    expect(generationDefaults({ temperature: 'hot', top_k: 5 })).toEqual({ topK: 5 });
  });

  it('keeps your values, samples despite do_sample false, and refuses values outside a knob', () => {
    const r = resolveSamplingDefaults(resolveConfig('grpo', { sampling_defaults: 'model', temperature: 0.9 }), {
      doSample: false,
      temperature: 0.6,
      topP: 1.5,
      topK: 50,
    });
    expect(r.config).toMatchObject({ temperature: 0.9, top_p: 1, top_k: 50 });
    expect(r.kept).toEqual([
      'generation_config.json says do_sample false (greedy); the run samples, as GRPO needs',
      "temperature 0.9 (yours) over generation_config.json's 0.6",
      expect.stringMatching(/^generation_config.json's top_p 1.5 is not usable \(top_p: .*\); kept 1$/),
    ]);
  });
});
