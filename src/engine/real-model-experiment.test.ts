// The real-model experiment trains on the shipped tiny Qwen2 folder as a run does (a RunSession on the WebGPU
// backend): the chat template, LoRA, the think/answer format around word problems, and the model's sampling
// defaults from its generation_config.json resolved into the run's config (here a copy of the folder whose
// generation_config.json states temperature, top_p and top_k). Two steps, smaller batches than the experiment's.

import { describe, expect, it } from 'vitest';
import { useNodeDevice } from '../testing/test-device';
import { realModelExperiment, resolveConfig } from '../schema/config';
import { PUBLIC_ASSETS } from './node-assets';
import { NO_SINK, RunSession } from './run-session';
import type { AssetLoader } from './start-policy';

const gpu = useNodeDevice();

/** The shipped folder, its generation_config.json replaced by one that asks for sampling at 0.7 / 0.8 / 20. */
const SAMPLING_FOLDER: AssetLoader = {
  bytes: (p) => PUBLIC_ASSETS.bytes(p),
  text: async (p) =>
    p === 'models/tiny-qwen2/generation_config.json'
      ? JSON.stringify({ eos_token_id: [558, 556], do_sample: true, temperature: 0.7, top_p: 0.8, top_k: 20 })
      : PUBLIC_ASSETS.text(p),
};

const experiment = (overrides: Record<string, unknown> = {}) =>
  resolveConfig('grpo', {
    ...realModelExperiment('models/tiny-qwen2/', 'word_problems'),
    train_batch_size: 2,
    num_generations: 4,
    max_completion_length: 24,
    steps: 2,
    eval_every: 0,
    save_every: 0,
    ...overrides,
  });

describe('the real-model experiment on tiny-qwen2', () => {
  it('trains two steps with the chat template and LoRA, sampling as generation_config.json says', async () => {
    const config = experiment();
    expect(config).toMatchObject({
      chat_template: true,
      answer_format: 'think',
      lora_rank: 16,
      sampling_defaults: 'model',
    });
    const session = await RunSession.open(
      { config, backend: 'webgpu', divergence: 'stop', inspectGroups: 1 },
      { assets: SAMPLING_FOLDER, sink: NO_SINK, device: async () => gpu.ctx },
    );
    try {
      // The run's own config holds what it samples with, and its source says where that came from.
      expect(session.config).toMatchObject({ temperature: 0.7, top_p: 0.8, top_k: 20 });
      expect(session.start?.source).toBe(
        'warm start models/tiny-qwen2/ (sampling from generation_config.json: temperature 0.7, top_p 0.8, top_k 20)',
      );
      for (let step = 1; step <= 2; step++) {
        const o = await session.runStep();
        expect(o.kind).toBe('trained');
        if (o.kind !== 'trained') return;
        const last = o.records[o.records.length - 1];
        expect(last.step).toBe(step);
        expect(Number.isFinite(last.metrics.reward)).toBe(true);
        // The prompt the model read is the user message in its ChatML template.
        const group = last.groups?.[0];
        expect(group?.prompt).toMatch(/ apples| pencils| marbles| stickers| books| cookies/);
      }
      expect(session.step).toBe(2);
      // LoRA: the checkpoint it exports holds the merged weights in the original layout, no adapter tensors.
      const ck = await session.trainer.exportCheckpoint();
      expect(Object.keys(ck.params).some((k) => k.includes('lora'))).toBe(false);
    } finally {
      session.destroy();
    }
  });

  it('keeps a sampling knob the person changed, and the lab defaults under sampling_defaults lab', async () => {
    const open = (config: ReturnType<typeof experiment>) =>
      RunSession.open(
        { config, backend: 'webgpu', divergence: 'stop', inspectGroups: 0 },
        { assets: SAMPLING_FOLDER, sink: NO_SINK, device: async () => gpu.ctx },
      );
    const mine = await open(experiment({ temperature: 0.9 }));
    expect(mine.config).toMatchObject({ temperature: 0.9, top_p: 0.8, top_k: 20 });
    expect(mine.start?.source).toContain('temperature 0.9 (yours) over generation_config.json');
    mine.destroy();
    const lab = await open(experiment({ sampling_defaults: 'lab' }));
    expect(lab.config).toMatchObject({ temperature: 1, top_p: 1, top_k: 0 });
    expect(lab.start?.source).toBe('warm start models/tiny-qwen2/');
    lab.destroy();
  });
});
