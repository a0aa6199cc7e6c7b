// The page's checkpoint download of a LoRA run, through the LabEngine with the real trainer on the GPU (Dawn): the
// merged checkpoint's files, then the adapters in PEFT's layout read from the run's trainer state, both while the
// run is in memory and from the store once it is not; the adapters merged into the warm start give the checkpoint.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { decodeCheckpoint } from '../model/checkpoint';
import { readPeftAdapter } from '../model/peft';
import { compareArrays } from '../reference/compare';
import { mergeLoraAdapters } from '../reference/lora';
import { resolveConfig } from '../rl/config';
import { loadCheckpointDir } from '../cli/files';
import { LabEngine } from './lab-engine';
import { PUBLIC_ASSETS } from './node-assets';
import { MemoryRunStore } from './run-store';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

describe('checkpoint download of a LoRA run', () => {
  it('adds adapter_model.safetensors and adapter_config.json, which merge into the downloaded checkpoint', async () => {
    const store = new MemoryRunStore();
    const engine = new LabEngine({ store, assets: PUBLIC_ASSETS, gpu: async () => ctx, emit: () => {} });
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      checkpoint: 'copy',
      train_batch_size: 4,
      num_generations: 8,
      temperature: 1,
      learning_rate: 1e-2,
      steps: 3,
      eval_every: 0,
      lora_rank: 2,
      lora_alpha: 4,
      lora_targets: 'o_proj,down_proj',
    });
    const h = await engine.create({ config, preset: 'grpo', backend: 'webgpu' });
    engine.stepOnce();
    await engine.idle();
    const warm = (await loadCheckpointDir(new URL('../../public/checkpoints/copy', import.meta.url).pathname)).ck;
    const live = await engine.exportRun(h.id, 'checkpoint');
    const names = live.map((f) => f.name.replace(/^.*\.step\d+\./, ''));
    expect(names).toEqual([
      'model.safetensors',
      'config.json',
      'tokenizer.json',
      'adapter_model.safetensors',
      'adapter_config.json',
    ]);
    const ck = decodeCheckpoint(live[0].data as Uint8Array, live[1].data as string);
    const { spec, adapters } = readPeftAdapter(ck.config, live[3].data as Uint8Array, live[4].data as string);
    expect(spec).toEqual({ rank: 2, alpha: 4, targets: ['o_proj', 'down_proj'] });
    for (const [name, w] of Object.entries(mergeLoraAdapters(ck.config, spec, warm.params, adapters))) {
      const c = compareArrays(ck.params[name], w, { atol: 1e-6, rtol: 1e-6 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    // From the store (the run no longer in memory): the same adapters, from the saved trainer state.
    const engine2 = new LabEngine({ store, assets: PUBLIC_ASSETS, gpu: async () => ctx, emit: () => {} });
    const stored = await engine2.exportRun(h.id, 'checkpoint');
    expect(stored.map((f) => f.name)).toEqual(live.map((f) => f.name));
    expect(Array.from(stored[3].data as Uint8Array)).toEqual(Array.from(live[3].data as Uint8Array));
  });
});
