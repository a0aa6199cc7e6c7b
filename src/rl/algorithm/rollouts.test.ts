// A rollout step with several end-of-sequence ids (on the CPU policy): each completion's mask and length end at
// the first id of any kind, that token included, and its text stops before it.

import { describe, expect, it } from 'vitest';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import type { ModelConfig } from '../../schema/model-config';
import { CpuPolicy } from '../../model/policy';
import { buildCharTokenizerJson, loadCharTokenizer, type Tokenizer } from '../../io/tokenizer';
import { getTask } from '../../tasks';
import { derive, resolveConfig } from '../../schema/config';
import { completionTokens, sampleStepRollouts, type RolloutSetting } from './rollouts';

const charTokenizer = loadCharTokenizer(buildCharTokenizerJson());
const model: ModelConfig = {
  vocabSize: charTokenizer.vocabSize,
  contextLength: 64,
  nLayers: 1,
  nHeads: 2,
  nKvHeads: 1,
  dModel: 16,
  dFF: 24,
  ropeTheta: 10000,
  normEps: 1e-5,
  tiedEmbeddings: true,
};
const config = resolveConfig(null, {
  task: 'copy',
  train_batch_size: 2,
  num_generations: 2,
  max_completion_length: 8,
  temperature: 1,
});

/** The step's rollouts with `tok`'s end-of-sequence ids, from the same weights, prompts and sampler seeds. */
async function step(tok: Tokenizer) {
  const p = initParams(model, new Rng(3), { std: 0.4 });
  const policy = new CpuPolicy(
    model,
    Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)])),
  );
  const s: RolloutSetting = { config, derived: derive(config), tokenizer: tok, userReward: null, learnedReward: null };
  return sampleStepRollouts(s, policy, getTask('copy'), new Rng(11), 0);
}

/** The char tokenizer with other end-of-sequence ids (the rest read through to it). */
const withEos = (eosId: number, eosIds?: number[]): Tokenizer =>
  Object.assign(Object.create(charTokenizer) as Tokenizer, { eosId, eosIds });

describe('rollouts with several end-of-sequence ids', () => {
  it("end each completion's mask and length at the first id of any kind, and its text before it", async () => {
    const S = 8;
    // A run that never stops (its id is past the vocabulary) shows what each row samples.
    const free = await step(withEos(model.vocabSize + 5));
    const row = (r: number) => Array.from(free.rollout.tokens.subarray(r * S, (r + 1) * S));
    // The second id: a token row 0 samples at step 2 that it did not sample before.
    const second = row(0)[2];
    const firstAt = row(0).indexOf(second);
    expect(firstAt, 'the second id first appears in row 0 at its third token').toBe(2);
    const eos = charTokenizer.eosId;
    const got = await step(withEos(eos, [eos, second]));
    const ids = new Set([eos, second]);
    for (let r = 0; r < got.rollout.rows; r++) {
      const end = row(r).findIndex((t) => ids.has(t));
      const n = end < 0 ? S : end + 1;
      expect(got.rollout.lengths[r], `row ${r} length`).toBe(n);
      expect(Array.from(got.rollout.mask.subarray(r * S, (r + 1) * S))).toEqual(
        Array.from({ length: S }, (_, s) => (s < n ? 1 : 0)),
      );
      expect(got.rollout.finished[r]).toBe(end >= 0);
      expect(completionTokens(got.rollout, r, withEos(eos, [eos, second]))).toEqual(row(r).slice(0, end < 0 ? S : end));
      expect(got.texts[r]).toBe(charTokenizer.decode(row(r).slice(0, end < 0 ? S : end), { skipSpecialTokens: true }));
    }
    // Row 0 ends at the second id, its third token: the mask covers three tokens, the text two.
    expect(got.rollout.lengths[0]).toBe(3);
    expect(got.texts[0]).toBe(charTokenizer.decode(row(0).slice(0, 2)));
    expect(got.sampledTokens).toBeLessThan(free.sampledTokens);
  });
});
