// The lab's reward model on the GPU: its parameter gradients for a batch of preference pairs equal the CPU reference
// model's backward of the Bradley-Terry twin's dScores; a score does not depend on the left padding of its batch;
// trained on separable pairs it ranks them all right; and preference pairs come only from mixed groups.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import type { ParamArrays } from '../../io/checkpoint';
import { MODEL_PRESETS, type ModelConfig } from '../../schema/model-config';
import { BT_METRICS, bradleyTerryForwardBackward } from '../../reference/bradley-terry';
import { compareArrays } from '../../reference/compare';
import { modelBackward, modelForward } from '../../reference/model';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import { host } from '../../core/host-tensor';
import { maxOf } from '../../schema/extremes';
import { criticInit } from '../learners/learner';
import { LabRewardModel, preferencePairs, scoreBatch, type PreferencePair } from './reward-model';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

const config: ModelConfig = { ...MODEL_PRESETS.nano, nLayers: 1 };
const PAD = 0;

function randomParams(c: ModelConfig, seed: number): ParamArrays {
  const p = initParams(c, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** A reward model whose head is random too (a zero head passes no gradient into the trunk). */
function randomRewardModel(seed: number): { rm: LabRewardModel; params: ParamArrays } {
  const init = criticInit(config, randomParams(config, seed));
  const rng = new Rng(seed + 1);
  init.params['lm_head.weight'] = Float32Array.from(init.params['lm_head.weight'], () => rng.uniform(-0.3, 0.3));
  return {
    rm: LabRewardModel.create(ctx, config, randomParams(config, seed), { padId: PAD, params: init.params }),
    params: init.params,
  };
}

const ids = (text: string) => Array.from(text, (ch) => ch.charCodeAt(0) - 28); // printable ASCII -> 4..98, as the char vocabulary

describe('scoreBatch', () => {
  it('left-pads prompt + completion so every score sits at the last position', () => {
    const b = scoreBatch(
      [
        { prompt: [1, 5], completion: [6, 7] },
        { prompt: [1], completion: [] },
      ],
      PAD,
    );
    expect(b.T).toBe(4);
    expect(Array.from(b.tokens)).toEqual([1, 5, 6, 7, PAD, PAD, PAD, 1]);
    expect(Array.from(b.positions)).toEqual([0, 1, 2, 3, 0, 0, 0, 0]);
    expect(Array.from(b.kvStart)).toEqual([0, 3]);
    expect(Array.from(b.scoreIdx)).toEqual([3, 7]);
    expect(() => scoreBatch([{ prompt: [], completion: [] }], PAD)).toThrow(/sequence 0 is empty/);
  });
});

describe('preferencePairs', () => {
  it('pairs every correct completion with every wrong one of its group, round-robin under a quota', () => {
    const g = { prompt: [1], completions: [[2], [3], [4], [5]], correct: [true, false, true, false] };
    const all = preferencePairs([g]);
    expect(all.map((p) => `${p.chosen[0]}>${p.rejected[0]}`)).toEqual(['2>3', '4>5', '2>5', '4>3']);
    expect(preferencePairs([g], 2).map((p) => p.chosen[0])).toEqual([2, 4]);
    expect(
      preferencePairs([
        { ...g, correct: [true, true, true, true] },
        { ...g, correct: [false, false, false, false] },
      ]),
    ).toEqual([]);
  });
});

describe('the lab reward model on the GPU', () => {
  it('has the gradients of the CPU reference model under the Bradley-Terry twin', async () => {
    const { rm, params } = randomRewardModel(5);
    const rng = new Rng(9);
    const T = 6; // equal lengths: the reference model has no left padding
    const seq = () => Array.from({ length: T - 2 }, () => 4 + rng.int(90));
    const pairs: PreferencePair[] = Array.from({ length: 3 }, () => ({
      prompt: [1, 4 + rng.int(90)],
      chosen: seq(),
      rejected: seq(),
    }));
    const { temps } = rm.recordBackward(pairs, { centerCoef: 0.01 });
    const got = await rm.model.downloadGrads();
    for (const t of temps) t.destroy();

    const rows = pairs.flatMap((p) => [
      [...p.prompt, ...p.chosen],
      [...p.prompt, ...p.rejected],
    ]);
    const B = rows.length;
    const V = config.vocabSize;
    const p64 = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, host(Float64Array.from(v), [v.length])]));
    const shaped = initParams({ ...config, tiedEmbeddings: false }, new Rng(0), { dtype: 'f64' });
    for (const k of Object.keys(shaped)) shaped[k] = host(p64[k].data, shaped[k].shape);
    const { logits, cache } = modelForward(
      { ...config, tiedEmbeddings: false },
      shaped,
      Uint32Array.from(rows.flat()),
      B,
      T,
    );
    const scores = host(
      Float64Array.from({ length: B }, (_, b) => logits.data[(b * T + T - 1) * V]),
      [B],
    );
    const dScores = host(new Float64Array(B), [B]);
    bradleyTerryForwardBackward(
      host(new Float64Array(1), [1]),
      dScores,
      host(new Float64Array(BT_METRICS.length), [BT_METRICS.length]),
      scores,
      { data: Uint32Array.from({ length: B }, (_, i) => i), shape: [B / 2, 2] },
      { centerCoef: 0.01 },
    );
    const dLogits = host(new Float64Array(B * T * V), [B, T, V]);
    for (let b = 0; b < B; b++) dLogits.data[(b * T + T - 1) * V] = dScores.data[b];
    const want = modelBackward({ ...config, tiedEmbeddings: false }, shaped, cache, dLogits);
    for (const name of Object.keys(want)) {
      const c = compareArrays(got[name], want[name].data, { atol: 2e-6, rtol: 2e-3 });
      expect(c.pass, `${name}: ${c.summary}`).toBe(true);
    }
    expect(maxOf(Array.from(got['model.embed_tokens.weight'], Math.abs))).toBeGreaterThan(1e-4);
    rm.destroy();
  });

  it('scores a sequence the same alone and in a left-padded batch', async () => {
    const { rm } = randomRewardModel(7);
    const short = { prompt: [1, ...ids('ab')], completion: ids('c') };
    const long = { prompt: [1, ...ids('abcdef')], completion: ids('ghij') };
    const [alone] = await rm.score([short]);
    const both = await rm.score([long, short]);
    expect(both[1]).toBeCloseTo(alone, 5);
    expect(await rm.score([])).toEqual(new Float32Array(0));
    rm.destroy();
  });

  it('learns to rank separable pairs from a zero head', async () => {
    const policy = randomParams(config, 3);
    const rm = LabRewardModel.create(ctx, config, policy, { padId: PAD });
    const rng = new Rng(4);
    const word = (letter: string) =>
      ids(Array.from({ length: 1 + rng.int(4) }, () => (rng.next() < 0.5 ? letter : 'x')).join('') + letter);
    const pairs = (n: number): PreferencePair[] =>
      Array.from({ length: n }, () => ({ prompt: [1, ...ids('q:')], chosen: word('a'), rejected: word('b') }));
    const [before] = await rm.score([{ prompt: [1], completion: ids('a') }]);
    expect(before).toBe(0); // the head starts at zero
    const steps = [];
    for (let i = 0; i < 40; i++)
      steps.push(await rm.trainStep(pairs(16), { lr: 3e-3, weightDecay: 0, maxGradNorm: 1 }));
    expect(steps[0].loss).toBeCloseTo(Math.log(2), 5);
    const heldOut = pairs(32);
    const chosen = await rm.score(heldOut.map((p) => ({ prompt: p.prompt, completion: p.chosen })));
    const rejected = await rm.score(heldOut.map((p) => ({ prompt: p.prompt, completion: p.rejected })));
    const right = heldOut.filter((_, i) => chosen[i] > rejected[i]).length;
    console.log(
      `reward model: loss ${steps[0].loss.toFixed(3)} -> ${steps.at(-1)!.loss.toFixed(3)}, held-out pairs ranked right ${right}/32`,
    );
    expect(steps.at(-1)!.loss).toBeLessThan(0.2);
    expect(right).toBe(32);
    rm.destroy();
  });
});
