// A LoRA experiment exported to the other trainers: verl's lora_rank, lora_alpha and target_modules overrides (a
// Hydra list), OpenRLHF's --ds.lora.* flags (the modules as words), TRL's trainer given a PEFT LoraConfig; each
// key is one of the trainer's own (fixtures/), and with LoRA off nothing of it is written.

import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../schema/config';
import openrlhfFields from './fixtures/openrlhf.json';
import verlFields from './fixtures/verl.json';
import { mappingRows } from './mapping';
import { exportExperiment } from './render';

const config = (over: Record<string, unknown>) => resolveConfig('grpo', { task: 'copy', difficulty: 3, ...over });
const settingsOf = (target: 'trl' | 'verl' | 'openrlhf', c: ReturnType<typeof config>) =>
  Object.fromEntries(
    mappingRows(target, c)
      .filter((r) => r.field.startsWith('lora_'))
      .map((r) => [r.field, r.settings.map((s) => `${s.key}=${String(s.value)}`)]),
  );

describe('LoRA in the exports', () => {
  it('verl and OpenRLHF get their own LoRA keys, the projections in their list syntax', () => {
    const c = config({ lora_rank: 8, lora_alpha: 32, lora_targets: 'v_proj,q_proj' });
    expect(settingsOf('verl', c)).toEqual({
      lora_rank: ['actor_rollout_ref.model.lora_rank=8'],
      lora_alpha: ['actor_rollout_ref.model.lora_alpha=32'],
      lora_targets: ['actor_rollout_ref.model.target_modules=q_proj,v_proj'],
    });
    expect(settingsOf('openrlhf', c)).toEqual({
      lora_rank: ['--ds.lora.rank=8'],
      lora_alpha: ['--ds.lora.alpha=32'],
      lora_targets: ['--ds.lora.target_modules=q_proj,v_proj'],
    });
    for (const k of [
      'actor_rollout_ref.model.lora_rank',
      'actor_rollout_ref.model.lora_alpha',
      'actor_rollout_ref.model.target_modules',
    ])
      expect(verlFields.keys).toContain(k);
    for (const k of ['--ds.lora.rank', '--ds.lora.alpha', '--ds.lora.target_modules'])
      expect(openrlhfFields.flags).toContain(k);
    const verl = exportExperiment('verl', c, { preset: 'grpo', model: 'm', maxRows: 1 });
    expect(verl.files[0].text).toContain('actor_rollout_ref.model.target_modules=[q_proj,v_proj]');
    const openrlhf = exportExperiment('openrlhf', c, { preset: 'grpo', model: 'm', maxRows: 1 });
    expect(openrlhf.files[0].text).toContain('--ds.lora.target_modules q_proj v_proj');
  });

  it("TRL's trainer gets a PEFT LoraConfig; every projection is all-linear", () => {
    const some = exportExperiment('trl', config({ lora_rank: 4, lora_alpha: 8, lora_targets: 'down_proj,q_proj' }), {
      preset: 'grpo',
      model: 'm',
      maxRows: 1,
    }).files[0].text;
    expect(some).toContain('from peft import LoraConfig');
    expect(some).toContain(
      '    peft_config=LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["q_proj", "down_proj"], task_type="CAUSAL_LM"),',
    );
    const all = exportExperiment('trl', config({ lora_rank: 4 }), { preset: 'grpo', model: 'm', maxRows: 1 }).files[0]
      .text;
    expect(all).toContain('target_modules="all-linear"');
    expect(settingsOf('trl', config({ lora_rank: 4 })).lora_rank).toEqual([]);
    expect(mappingRows('trl', config({ lora_rank: 4 })).find((r) => r.field === 'lora_rank')?.comment).toMatch(
      /peft_config=LoraConfig/,
    );
  });

  it('writes nothing of LoRA when it is off', () => {
    const c = config({});
    const trl = exportExperiment('trl', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
    expect(trl).not.toContain('from peft');
    expect(trl).not.toContain('peft_config=LoraConfig');
    expect(settingsOf('verl', c).lora_targets).toEqual([]);
    expect(settingsOf('openrlhf', c).lora_targets).toEqual([]);
  });
});
