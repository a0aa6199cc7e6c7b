// GPU-vs-twin tier for the layer kernels (embedding, rmsnorm, rope, swiglu): every case runs the real WGSL through
// Dawn (SwiftShader on machines without a GPU) against its CPU twin, plus the properties a twin comparison does
// not show: bit-identical reruns of the reductions, and what out-of-range token ids do.

import { describe, expect, it } from 'vitest';
import type { Tensor } from '../gpu';
import { Rng } from '../core/random';
import { embeddingBackward, embeddingForward } from './embedding';
import { layerCases } from './layers.cases';
import { rmsnormBackward, rmsnormForward } from './rmsnorm';
import { ropeFreqTable } from './rope';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { randomHost } from './verify';

const gpu = useNodeDevice();

const cases = layerCases();

describe('layer kernels on the GPU match their CPU twins', () => {
  itEachCaseMatchesTwin(gpu, cases);
});

describe('layer kernels: properties beyond the twin comparison', () => {
  it('embeddingBackward and rmsnormBackward are bit-identical across runs', async () => {
    const rng = new Rng(7);
    const [N, C, V] = [300, 40, 5];
    const tokens = new Uint32Array(N).map(() => rng.int(V));
    const dOut = randomHost(rng, [N, C]).data;
    const x = randomHost(rng, [N, C], 2).data;
    const w = randomHost(rng, [C]).data;
    const init = randomHost(rng, [V, C]).data;
    const run = async () => {
      const t: Tensor[] = [];
      const keep = <T extends Tensor>(a: T) => (t.push(a), a);
      const gTok = keep(gpu.ctx.fromArray<'u32'>(tokens, [N], { dtype: 'u32' }));
      const gdOut = keep(gpu.ctx.fromArray(dOut, [N, C]));
      const gx = keep(gpu.ctx.fromArray(x, [N, C]));
      const gw = keep(gpu.ctx.fromArray(w, [C]));
      const dTable = keep(gpu.ctx.fromArray(init, [V, C]));
      const y = keep(gpu.ctx.tensor([N, C]));
      const rstd = keep(gpu.ctx.tensor([N]));
      const dx = keep(gpu.ctx.tensor([N, C]));
      const dW = keep(gpu.ctx.fromArray(init.subarray(0, C), [C]));
      const rec = gpu.ctx.recorder('determinism');
      embeddingBackward(rec, dTable, gdOut, gTok);
      rmsnormForward(rec, y, rstd, gx, gw, { eps: 1e-5 });
      rmsnormBackward(rec, dx, dW, gdOut, gx, gw, rstd);
      rec.submit();
      const got = await gpu.ctx.readMany([dTable, dW, dx]);
      t.forEach((a) => a.destroy());
      return got.map((a) => new Uint32Array(a.buffer.slice(0)));
    };
    const first = await run();
    const second = await run();
    for (let i = 0; i < first.length; i++) expect(second[i]).toEqual(first[i]);
  });

  it('token ids >= V give NaN rows forward and no gradient backward', async () => {
    const [C, V] = [5, 3];
    const tokens = gpu.ctx.fromArray<'u32'>([2, 3, 0, 99], [4], { dtype: 'u32' });
    const table = gpu.ctx.fromArray(
      Float32Array.from({ length: V * C }, (_, i) => i + 1),
      [V, C],
    );
    const out = gpu.ctx.tensor([4, C]);
    const dOut = gpu.ctx.fromArray(new Float32Array(4 * C).fill(1), [4, C]);
    const dTable = gpu.ctx.fromArray(new Float32Array(V * C).fill(0.5), [V, C]);
    const rec = gpu.ctx.recorder('bad tokens');
    embeddingForward(rec, out, table, tokens);
    embeddingBackward(rec, dTable, dOut, tokens);
    rec.submit();
    const [o, d] = await gpu.ctx.readMany([out, dTable]);
    for (const t of [tokens, table, out, dOut, dTable]) t.destroy();
    expect(Array.from(o.subarray(0, C))).toEqual([11, 12, 13, 14, 15]);
    expect(Array.from(o.subarray(C, 2 * C)).every(Number.isNaN)).toBe(true);
    expect(Array.from(o.subarray(3 * C)).every(Number.isNaN)).toBe(true);
    expect(Array.from(d)).toEqual([...Array(C).fill(1.5), ...Array(C).fill(0.5), ...Array(C).fill(1.5)]);
  });

  it('the rope frequency table splits each turn rate exactly into f32 chunks of 12 bits', () => {
    const theta = 10000;
    const HD = 16;
    const t = ropeFreqTable(theta, HD);
    for (let i = 0; i < HD / 2; i++) {
      const f = Math.pow(theta, (-2 * i) / HD) / (2 * Math.PI);
      const a = 4096 * f - Math.floor(4096 * f);
      const chunks = Array.from(t.subarray(i * 8, i * 8 + 6));
      chunks.forEach((c, k) => expect(Number.isInteger(c * 2 ** (12 * ((k % 3) + 1)))).toBe(true));
      expect(Math.abs(chunks[0] + chunks[1] + chunks[2] - a)).toBeLessThan(2 ** -36);
      expect(Math.abs(chunks[3] + chunks[4] + chunks[5] - f)).toBeLessThan(2 ** -36);
    }
  });
});
