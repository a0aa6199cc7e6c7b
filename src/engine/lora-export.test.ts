// The page's checkpoint download of a LoRA run, through the LabEngine with the real trainer on the GPU (Dawn): the
// merged checkpoint's files, then the adapters in PEFT's layout read from the run's trainer state, both while the
// run is in memory and from the store once it is not; the adapters merged into the warm start give the checkpoint.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { decodeCheckpoint } from '../io/checkpoint';
import peftFacts from '../io/fixtures/peft.json';
import { readPeftAdapter } from '../io/peft';
import { compareArrays } from '../reference/compare';
import { mergeLoraAdapters } from '../reference/lora';
import { resolveConfig } from '../schema/config';
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
  it('adds the PEFT adapter folder (adapter_config.json, adapter_model.safetensors, README.md), which merges into the downloaded checkpoint', async () => {
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
    const live = await engine.runs.export(h.id, 'checkpoint');
    const folder = live[0].name.split('/')[0];
    expect(live.map((f) => f.name)).toEqual([
      `${folder}/model.safetensors`,
      `${folder}/config.json`,
      `${folder}/generation_config.json`,
      `${folder}/tokenizer.json`,
      `${folder}/tokenizer_config.json`,
      `${folder}/special_tokens_map.json`,
      `${folder}-adapter/adapter_config.json`,
      `${folder}-adapter/adapter_model.safetensors`,
      `${folder}-adapter/${peftFacts.save_pretrained.model_card_file}`,
    ]);
    // PEFT's folder: the names save_pretrained writes, the config naming the checkpoint the run started from.
    expect(
      live
        .filter((f) => f.name.startsWith(`${folder}-adapter/`))
        .map((f) => f.name.split('/')[1])
        .sort(),
    ).toEqual(peftFacts.save_pretrained.folder_files);
    const adapterConfig = JSON.parse(live[6].data as string);
    expect(adapterConfig.base_model_name_or_path).toBe('copy');
    expect(Object.keys(adapterConfig)).toEqual(Object.keys(adapterConfig).sort());
    expect(live[8].data as string).toMatch(/^---\nbase_model: "copy"\nlibrary_name: peft\n/);
    const ck = decodeCheckpoint(live[0].data as Uint8Array, live[1].data as string);
    const { spec, adapters } = readPeftAdapter(ck.config, live[7].data as Uint8Array, live[6].data as string);
    expect(spec).toEqual({ rank: 2, alpha: 4, targets: ['o_proj', 'down_proj'] });
    for (const [name, w] of Object.entries(mergeLoraAdapters(ck.config, spec, warm.params, adapters))) {
      const c = compareArrays(ck.params[name], w, { atol: 1e-6, rtol: 1e-6 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    // From the store (the run no longer in memory): the same adapters, from the saved trainer state.
    const engine2 = new LabEngine({ store, assets: PUBLIC_ASSETS, gpu: async () => ctx, emit: () => {} });
    const stored = await engine2.runs.export(h.id, 'checkpoint');
    expect(stored.map((f) => f.name)).toEqual(live.map((f) => f.name));
    expect(Array.from(stored[7].data as Uint8Array)).toEqual(Array.from(live[7].data as Uint8Array));
  });
});
