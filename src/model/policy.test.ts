// The two policy backends agree: supervised steps give the same losses, and rollouts give the same tokens and
// log-probabilities (CPU twins vs WGSL on Dawn), for the same seed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';
import type { ModelConfig } from '../schema/model-config';
import type { Rollout } from './generate';
import { CpuPolicy, GpuPolicy, type Policy, type SftBatch } from './policy';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

const config: ModelConfig = {
  vocabSize: 21,
  contextLength: 24,
  nLayers: 2,
  nHeads: 2,
  nKvHeads: 1,
  dModel: 16,
  dFF: 24,
  ropeTheta: 10000,
  normEps: 1e-5,
  tiedEmbeddings: true,
};

function params() {
  const p = initParams(config, new Rng(9), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

function batch(seed: number): SftBatch {
  const rng = new Rng(seed);
  const B = 3;
  const T = 9;
  const tokens = Uint32Array.from({ length: B * T }, () => 1 + rng.int(config.vocabSize - 1));
  const targets = Uint32Array.from({ length: B * T }, (_, i) => tokens[i + 1] ?? 0);
  const mask = Float32Array.from({ length: B * T }, (_, i) => (i % T >= 3 && i % T < T - 1 ? 1 : 0));
  return { B, T, tokens, targets, mask };
}

describe('Policy backends agree', () => {
  it('supervised steps on one batch: the same falling losses on CPU twins and on the GPU', async () => {
    const policies: Policy[] = [new CpuPolicy(config, params()), GpuPolicy.create(ctx, config, params())];
    const losses = await Promise.all(
      policies.map(async (p) => {
        const out: number[] = [];
        for (let s = 0; s < 4; s++)
          out.push((await p.sftStep(batch(0), { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 1, readLoss: true }))!);
        return out;
      }),
    );
    console.log(
      `SFT losses cpu ${losses[0].map((x) => x.toFixed(6)).join(' ')} | gpu ${losses[1].map((x) => x.toFixed(6)).join(' ')}`,
    );
    for (let s = 0; s < 4; s++) expect(Math.abs(losses[0][s] - losses[1][s]) / losses[0][s]).toBeLessThan(1e-4);
    expect(losses[0][3]).toBeLessThan(losses[0][0]);
    for (const p of policies) p.destroy();
  });

  it('rollouts: greedy and sampled tokens match, and so do their log-probabilities', async () => {
    const prompts = [
      [1, 4, 5],
      [1, 7],
      [1, 3, 9, 11, 2],
      [1, 7],
    ];
    for (const sampler of [
      { temperature: 1, greedy: true, seed: 0 },
      { temperature: 0.8, topK: 5, seed: 42 },
    ]) {
      const cpu = new CpuPolicy(config, params());
      const gpu = GpuPolicy.create(ctx, config, params());
      const opts = { maxNewTokens: 8, sampler, eosId: 2, padId: 0, checkEvery: 0 };
      const [a, b] = [await cpu.generate(prompts, opts), await gpu.generate(prompts, opts)];
      expect(Array.from(a.tokens)).toEqual(Array.from(b.tokens));
      expect(Array.from(a.lengths)).toEqual(Array.from(b.lengths));
      let worst = 0;
      for (let i = 0; i < a.logprobs.length; i++) worst = Math.max(worst, Math.abs(a.logprobs[i] - b.logprobs[i]));
      expect(worst).toBeLessThan(1e-4);
      gpu.destroy();
    }
  });

  it('several end-of-sequence ids: both backends end each row at the first id of any kind, the prompt aside', async () => {
    const S = 8;
    const prompts = [
      [1, 3, 4],
      [1, 7],
      [1, 13, 14],
      [1, 15, 16, 17],
    ];
    for (const sampler of [
      { temperature: 1, greedy: true, seed: 0 },
      { temperature: 0.9, topK: 8, seed: 5 },
    ]) {
      // A run that never stops (its id is past the vocabulary) is the oracle: a completion with ids E is its row up
      // to the first id in E, then pad. Rows are sampled independently, so one row's end cannot change another.
      const freeRun = async (p: number[][]) =>
        new CpuPolicy(config, params()).generate(p, {
          maxNewTokens: S,
          sampler,
          eosId: config.vocabSize + 3,
          padId: 0,
        });
      const rowOf = (run: Rollout, r: number) => Array.from(run.tokens.subarray(r * S, (r + 1) * S));
      const free0 = await freeRun(prompts);
      const row0 = rowOf(free0, 0);
      // The second id: row 0's second token, when it is not its first. The first id: a token another row samples
      // that row 0 does not sample before the second id (so the second id ends row 0 first).
      const second = row0[1] !== row0[0] ? row0[1] : row0[2];
      const first = [1, 2, 3]
        .flatMap((r) => rowOf(free0, r).slice(1))
        .find((t) => t !== second && !row0.slice(0, row0.indexOf(second)).includes(t));
      expect(first, 'a token for the first id').toBeDefined();
      // A fifth row whose prompt holds both ids: an id in the prompt ends nothing.
      const all = [...prompts, [1, first!, 5, second]];
      const free = await freeRun(all);
      for (const padId of [0, second]) {
        const opts = { maxNewTokens: S, sampler, eosId: first!, eosIds: [first!, second], padId, checkEvery: 2 };
        const ids = new Set(opts.eosIds);
        const want = all.map((_, r) => {
          const end = rowOf(free, r).findIndex((t) => ids.has(t));
          const n = end < 0 ? S : end + 1;
          return {
            tokens: [...rowOf(free, r).slice(0, n), ...Array(S - n).fill(padId)],
            length: n,
            finished: end >= 0,
          };
        });
        // The premise: row 0 ends at the second id, before any first id.
        expect(want[0].tokens[want[0].length - 1]).toBe(second);
        expect(want[0].tokens.slice(0, want[0].length)).not.toContain(first);
        const cpu = new CpuPolicy(config, params());
        const gpu = GpuPolicy.create(ctx, config, params());
        for (const got of [await cpu.generate(all, opts), await gpu.generate(all, opts)]) {
          expect(rowsOf(got.tokens, S)).toEqual(want.map((w) => w.tokens));
          expect(Array.from(got.lengths)).toEqual(want.map((w) => w.length));
          expect(got.finished).toEqual(want.map((w) => w.finished));
          const mask = want.map((w) => Array.from({ length: S }, (_, s) => (s < w.length ? 1 : 0)));
          expect(rowsOf(got.mask, S)).toEqual(mask);
        }
        gpu.destroy();
      }
    }
  });
});

const rowsOf = (a: ArrayLike<number>, S: number) =>
  Array.from({ length: a.length / S }, (_, r) => Array.from(a).slice(r * S, (r + 1) * S));
