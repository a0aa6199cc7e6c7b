// What the page shows before Start, sized from config.json alone: a preset, the shipped tiny Qwen2 folder (its
// config.json and generation_config.json read, no weights), every hub model the experiment offers from its recorded
// config.json, and a folder that does not exist, named.

import { describe, expect, it } from 'vitest';
import { REAL_MODEL_CHOICES, realModelExperiment, resolveConfig } from '../schema/config';
import { assumedThroughput } from '../schema/step-estimate';
import { estimateDraft, type ModelEstimate } from './model-estimates';
import { PUBLIC_ASSETS } from './node-assets';
import type { AssetLoader } from './start-policy';

const DEVICE = { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 31, budgetBytes: null };
const T = assumedThroughput(false);
/** The site's files, counting what is read: only small JSON files may be. */
const read: string[] = [];
const ASSETS: AssetLoader = {
  bytes: (p) => (read.push(p), PUBLIC_ASSETS.bytes(p)),
  text: (p) => (read.push(p), PUBLIC_ASSETS.text(p)),
};

describe('estimateDraft', () => {
  it('sizes a preset and the shipped folder from config.json, with its generation_config.json', async () => {
    const nano = (await estimateDraft(resolveConfig('grpo'), ASSETS, DEVICE, T)) as ModelEstimate;
    expect(nano.model).toBe('nano');
    expect(nano.seconds).toBeGreaterThan(0);
    expect(nano.memoryProblems).toEqual([]);
    const tiny = (await estimateDraft(
      resolveConfig('grpo', realModelExperiment('models/tiny-qwen2/', 'word_problems')),
      ASSETS,
      DEVICE,
      T,
    )) as ModelEstimate;
    expect(tiny.configFrom).toBe('models/tiny-qwen2/config.json');
    expect(tiny.generation).toEqual({ doSample: false });
    expect(read.every((p) => p.endsWith('.json'))).toBe(true);
  });

  it('sizes every hub model of the experiment from its recorded config.json, reading nothing', async () => {
    read.length = 0;
    const sized: ModelEstimate[] = [];
    for (const c of REAL_MODEL_CHOICES.filter((c) => c.recordedConfig)) {
      const e = await estimateDraft(
        resolveConfig('grpo', realModelExperiment(c.checkpoint, 'countdown')),
        ASSETS,
        DEVICE,
        T,
      );
      expect('seconds' in e, JSON.stringify(e)).toBe(true);
      sized.push(e as ModelEstimate);
    }
    expect(read).toEqual([]);
    // SmolLM2-135M: 134.5M parameters (its published count); bigger models take longer per step.
    expect(sized[0].parameters).toBe(134_515_008);
    for (let i = 1; i < sized.length; i++) expect(sized[i].seconds).toBeGreaterThan(sized[0].seconds);
  });

  it('names a folder whose config.json cannot be read', async () => {
    const e = await estimateDraft(resolveConfig('grpo', { checkpoint: 'models/nope/' }), ASSETS, DEVICE, T);
    expect(e).toMatchObject({ model: 'models/nope/', problem: expect.stringContaining('models/nope/config.json') });
  });
});
