// The packed optimizer step (tensors in arenas: one norm-partials and one AdamW dispatch for all of them) gives the
// per-tensor step's parameters, moments and norm bit for bit, at sizes that straddle the norm's 2048-element chunks
// and the arenas' alignment padding.

import { describe, expect, it } from 'vitest';
import { Rng, randomArray } from '../core/random';
import { useNodeDevice } from '../testing/test-device';
import { clippedAdamwStep, destroyPacked, packedOptimizerOf } from './optimizer';

const gpu = useNodeDevice();
const SHAPES = [[1], [63], [2049], [5, 413], [4096], [3, 7, 11]];

describe('packed clippedAdamwStep', () => {
  it('equals the per-tensor step bit for bit over 3 steps, with dispatches independent of the tensor count', async () => {
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
    const packed = packedOptimizerOf(ctx, SHAPES);
    init.forEach((d, i) => ctx.upload(packed.params.views[i], d));
    const [normA, scaleA, normB, scaleB] = [0, 1, 2, 3].map(() => ctx.tensor([1]));
    const opts = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxNorm: 1 };
    let packedDispatches = 0;
    for (let t = 1; t <= 3; t++) {
      grads[t - 1].forEach((g, i) => {
        ctx.upload(loose.grads[i], g);
        ctx.upload(packed.grads.views[i], g);
      });
      const rec = ctx.recorder('optimizer.loose');
      clippedAdamwStep(rec, normA, scaleA, loose, { ...opts, t });
      rec.submit();
      const recP = ctx.recorder('optimizer.packed');
      const { params, m, v, grads: g } = packed;
      clippedAdamwStep(
        recP,
        normB,
        scaleB,
        { params: params.views, m: m.views, v: v.views, grads: g.views, packed },
        { ...opts, t },
      );
      packedDispatches = recP.dispatchCount;
      recP.submit();
    }
    const got = await ctx.readMany([
      ...packed.params.views,
      ...packed.m.views,
      ...packed.v.views,
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
    // Norm partials, finalize, clip factor, AdamW: four dispatches for six tensors.
    expect(packedDispatches).toBe(4);
    destroyPacked(packed);
    for (const t of [...loose.params, ...loose.m, ...loose.v, ...loose.grads, normA, normB, scaleA, scaleB])
      t.destroy();
  });
});
