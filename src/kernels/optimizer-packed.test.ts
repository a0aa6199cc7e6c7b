// The packed optimizer step (tensors in groups of arenas: one norm-partials and one AdamW dispatch a group) gives the
// per-tensor step's parameters, moments and norm bit for bit, at sizes that straddle the norm's 32,768-element chunks
// and the arenas' alignment padding, in one group and cut in several; and how packedRuns cuts the groups.

import { describe, expect, it } from 'vitest';
import { Rng, randomArray } from '../core/random';
import { useNodeDevice } from '../testing/test-device';
import { arenaSize } from '../gpu';
import { clippedAdamwStep, destroyPacked, packedOptimizerOf, packedRuns, type PackedOptimizer } from './optimizer';

const gpu = useNodeDevice();
// Lengths below, at and past the norm's 32,768-element chunk (and its 4-element quads), and odd ones.
const SHAPES = [[1], [63], [2049], [5, 413], [32768], [3, 7, 11], [2, 32771]];

describe('packed clippedAdamwStep', () => {
  it.each([
    ['one group', [[0, 7]]],
    [
      'three groups',
      [
        [0, 2],
        [2, 5],
        [5, 7],
      ],
    ],
  ] as const)('%s equals the per-tensor step bit for bit over 3 steps', async (_, runs) => {
    const { ctx } = gpu;
    const rng = new Rng(5);
    const sizes = SHAPES.map((s) => s.reduce((a, b) => a * b, 1));
    const init = sizes.map((n) => randomArray(rng, n));
    const grads = [0, 1, 2].map(() => sizes.map((n) => Float32Array.from(randomArray(rng, n), (x) => 0.3 * x)));
    const loose = {
      params: init.map((d, i) => ctx.fromArray(d, SHAPES[i])),
      m: SHAPES.map((s) => ctx.tensor(s)),
      v: SHAPES.map((s) => ctx.tensor(s)),
      grads: SHAPES.map((s) => ctx.tensor(s)),
    };
    const groups: PackedOptimizer[] = runs.map(([a, b]) => packedOptimizerOf(ctx, SHAPES.slice(a, b)));
    const views = (k: 'params' | 'm' | 'v' | 'grads') => groups.flatMap((g) => g[k].views);
    init.forEach((d, i) => ctx.upload(views('params')[i], d));
    const [normA, scaleA, normB, scaleB] = [0, 1, 2, 3].map(() => ctx.tensor([1]));
    const opts = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxNorm: 1 };
    let packedDispatches = 0;
    for (let t = 1; t <= 3; t++) {
      grads[t - 1].forEach((g, i) => {
        ctx.upload(loose.grads[i], g);
        ctx.upload(views('grads')[i], g);
      });
      const rec = ctx.recorder('optimizer.loose');
      clippedAdamwStep(rec, normA, scaleA, loose, { ...opts, t });
      rec.submit();
      const recP = ctx.recorder('optimizer.packed');
      const state = { params: views('params'), m: views('m'), v: views('v'), grads: views('grads'), packed: groups };
      clippedAdamwStep(recP, normB, scaleB, state, { ...opts, t });
      packedDispatches = recP.dispatchCount;
      recP.submit();
    }
    const got = await ctx.readMany([
      ...views('params'),
      ...views('m'),
      ...views('v'),
      normB,
      ...loose.params,
      ...loose.m,
      ...loose.v,
      normA,
    ]);
    const half = got.length / 2;
    for (let i = 0; i < half; i++)
      expect(
        Buffer.from((got[i] as Float32Array).buffer).equals(Buffer.from((got[half + i] as Float32Array).buffer)),
        `output ${i}`,
      ).toBe(true);
    expect((got[half - 1] as Float32Array)[0]).toBeGreaterThan(1); // the norm clipped: the scale mattered
    // Norm partials and AdamW a group, the finalize and the clip factor once: 4 dispatches for seven tensors in one
    // group, 8 in three.
    expect(packedDispatches).toBe(2 * runs.length + 2);
    groups.forEach((g) => destroyPacked(g));
    for (const t of [...loose.params, ...loose.m, ...loose.v, ...loose.grads, normA, normB, scaleA, scaleB])
      t.destroy();
  });

  it('refuses groups that are not the state in order', () => {
    const { ctx } = gpu;
    const a = packedOptimizerOf(ctx, SHAPES.slice(0, 2));
    const b = packedOptimizerOf(ctx, SHAPES.slice(2, 4));
    const state = (groups: PackedOptimizer[]) => ({
      params: groups.flatMap((g) => g.params.views),
      m: groups.flatMap((g) => g.m.views),
      v: groups.flatMap((g) => g.v.views),
      grads: groups.flatMap((g) => g.grads.views),
    });
    const [norm, scale] = [ctx.tensor([1]), ctx.tensor([1])];
    const rec = ctx.recorder('optimizer.refused');
    const step = (s: ReturnType<typeof state>, packed: PackedOptimizer[]) =>
      clippedAdamwStep(rec, norm, scale, { ...s, packed }, { lr: 1e-3, t: 1 });
    expect(() => step(state([b, a]), [a, b])).toThrow(/tensor 0 of the state is not a view of the packed arenas/);
    expect(() => step(state([a, b]), [a])).toThrow(/the packed groups hold 2 tensors, the state 4/);
    for (const g of [a, b]) destroyPacked(g);
    norm.destroy();
    scale.destroy();
  });
});

describe('packedRuns', () => {
  // Units as a model's: the embedding alone, two layers of three tensors, the final norm.
  const shapes = [[64, 8], [8], [8, 8], [8, 8], [8], [8, 8], [8, 8], [8]];
  const units = ['embed', '0', '0', '0', '1', '1', '1', 'norm'];

  it('fills groups greedily and never splits a unit', () => {
    const { ctx } = gpu;
    const size = (a: number, b: number) => arenaSize(ctx, shapes.slice(a, b));
    // Everything fits: one group.
    expect(packedRuns(ctx, shapes, units)).toEqual([[0, 8]]);
    // Room for the embedding and one layer, not two: each layer starts a group, the norm joins the last.
    const limit = size(0, 4);
    expect(size(0, 7)).toBeGreaterThan(limit);
    expect(packedRuns(ctx, shapes, units, limit)).toEqual([
      [0, 4],
      [4, 8],
    ]);
    // Room for the embedding alone: it is a group, both layers and the norm another.
    expect(packedRuns(ctx, shapes, units, size(0, 1))).toEqual([
      [0, 1],
      [1, 8],
    ]);
  });

  it('packs nothing where one unit does not fit', () => {
    const { ctx } = gpu;
    // The embedding (512 elements) alone is over the limit.
    expect(packedRuns(ctx, shapes, units, 511)).toBeNull();
  });
});
