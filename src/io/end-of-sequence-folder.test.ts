// Several end-of-sequence ids through a Hugging Face folder: a Llama 3.2 Instruct style config.json (eos_token_id
// 128001, 128008, 128009; the real vocabulary and special tokens at narrow widths) loads with every id kept, and
// generation stops at each of them; a list longer than the decode kernel holds, or naming an id outside the
// vocabulary, is refused naming its file.

import { describe, expect, it } from 'vitest';
import { MAX_EOS_IDS } from './end-of-sequence';
import type { ParamArrays } from './checkpoint';
import { loadHfFolder } from './hf-folder';
import { CpuPolicy } from '../model/policy';
import { buildRealArchFolder } from './real-arch-folder';
import { folderReader } from './tiny-hf';

const INSTRUCT_EOS = [128_001, 128_008, 128_009];
const narrow = {
  hidden_size: 16,
  intermediate_size: 32,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 8,
  max_position_embeddings: 64,
  rope_scaling: null,
};

function folder(overrides: Record<string, unknown> = {}) {
  return buildRealArchFolder('llama-3.2-1b', {
    layers: 1,
    dtype: 'F32',
    seed: 5,
    std: 0.5,
    configOverrides: { ...narrow, eos_token_id: INSTRUCT_EOS, ...overrides },
  });
}

/** The weights with the embedding rows (tied: also the LM head's) of ids a and b swapped: the same model, relabelled. */
function swapIds(params: ParamArrays, a: number, b: number, C: number): ParamArrays {
  const embed = Float32Array.from(params['model.embed_tokens.weight']);
  const rowA = embed.slice(a * C, (a + 1) * C);
  embed.copyWithin(a * C, b * C, (b + 1) * C);
  embed.set(rowA, b * C);
  return { ...params, 'model.embed_tokens.weight': embed };
}

describe('several end-of-sequence ids from a Hugging Face folder', () => {
  it('a Llama 3.2 Instruct style config.json loads with its three ids, and greedy generation stops at each', async () => {
    const { files } = folder();
    const { ck, tokenizer } = await loadHfFolder(folderReader(files));
    expect(ck.special).toMatchObject({ eosId: 128_001, eosIds: INSTRUCT_EOS });
    expect(tokenizer.eosId).toBe(128_001);
    expect(tokenizer.eosIds).toEqual(INSTRUCT_EOS);
    expect(ck.config.tiedEmbeddings).toBe(true);
    const C = ck.config.dModel;
    const S = 6;
    // 128009 sits in the prompt: an id in the prompt ends nothing.
    const prompt = [128_000, 128_009, 300, 301];
    const sampler = { temperature: 1, greedy: true, seed: 0 };
    const free = await new CpuPolicy(ck.config, ck.params).generate([prompt], {
      maxNewTokens: S,
      sampler,
      eosId: ck.config.vocabSize + 1,
      padId: 0,
    });
    const seq = Array.from(free.tokens);
    // Positions 1..3 hold tokens seen there first, none of them an end-of-sequence id or in the prompt.
    for (const k of [1, 2, 3]) {
      expect(seq.indexOf(seq[k]), `token ${k} first seen there`).toBe(k);
      expect([...INSTRUCT_EOS, ...prompt]).not.toContain(seq[k]);
    }
    expect(seq.some((t) => INSTRUCT_EOS.includes(t))).toBe(false);
    // Relabel seq[k] as the k-th id: the same model then samples that id at step k and must stop there.
    for (const [i, eos] of INSTRUCT_EOS.entries()) {
      const k = i + 1;
      const swap = (t: number) => (t === seq[k] ? eos : t === eos ? seq[k] : t);
      const policy = new CpuPolicy(ck.config, swapIds(ck.params, seq[k], eos, C));
      const got = await policy.generate([prompt.map(swap)], {
        maxNewTokens: S,
        sampler,
        eosId: tokenizer.eosId,
        eosIds: tokenizer.eosIds,
        padId: tokenizer.padId,
      });
      const want = seq.slice(0, k + 1).map(swap);
      expect(want[k]).toBe(eos);
      expect(Array.from(got.tokens)).toEqual([...want, ...Array(S - k - 1).fill(tokenizer.padId)]);
      expect(got.lengths[0]).toBe(k + 1);
      expect(got.finished).toEqual([true]);
    }
  });

  it(`refuses more than ${MAX_EOS_IDS} ids in config.json or generation_config.json, naming the file`, async () => {
    const nine = Array.from({ length: 9 }, (_, i) => 128_001 + i);
    const { files } = folder();
    const config = { ...JSON.parse(files['config.json'] as string), eos_token_id: nine };
    await expect(loadHfFolder(folderReader({ ...files, 'config.json': JSON.stringify(config) }))).rejects.toThrow(
      /^config\.json .*\n- eos_token_id lists 9 end-of-sequence ids; at most 8 are supported/,
    );
    const generation = { ...JSON.parse(files['generation_config.json'] as string), eos_token_id: nine };
    await expect(
      loadHfFolder(folderReader({ ...files, 'generation_config.json': JSON.stringify(generation) })),
    ).rejects.toThrow('generation_config.json: eos_token_id lists 9 end-of-sequence ids; at most 8 are supported');
  });

  it('refuses an end-of-sequence id of the list that is not in the vocabulary', async () => {
    const { files } = folder();
    const generation = { eos_token_id: [128_001, 200_000] };
    await expect(
      loadHfFolder(folderReader({ ...files, 'generation_config.json': JSON.stringify(generation) })),
    ).rejects.toThrow(
      'end-of-sequence id 200000 (generation_config.json or config.json eos_token_id) is not in the vocabulary',
    );
  });
});
