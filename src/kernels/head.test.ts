// GPU-vs-twin tier for the head and optimizer families (logprob, cross-entropy, optimizer, sampler), plus a
// statistical test of the GPU sampler: 8192 rows of identical logits in one dispatch (each row its own Philox
// draw), token counts against the exact sampling distribution; and the row layout's properties: its lane edges and
// bit-identical reruns. A missing adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import type { Tensor } from '../gpu';
import { Rng } from '../core/random';
import { samplingDistribution, type SamplerOptions } from '../reference/sampler';
import { host } from '../core/host-tensor';
import { crossEntropyBackward, crossEntropyForward } from './cross-entropy';
import { headCases, runGpuSampler, runTwinSampler } from './head.cases';
import { logprobBackward, logprobForward } from './logprob';
import { ROW_THREADS, rowEdgeShapes, rowLaneEdges, rowLayout } from './rows';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { randomHost, randomInts } from './verify';

const gpu = useNodeDevice();

const cases = headCases();

describe('head and optimizer kernels on the GPU match their CPU twins', () => {
  it('has the expected families', () => {
    const families = new Set(cases.map((c) => c.family));
    expect([...families].sort()).toEqual(['cross-entropy', 'logprob', 'optimizer', 'sampler']);
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

/** Upper critical value of chi-square with `df` degrees of freedom at z standard deviations (Wilson-Hilferty). */
function chiSquareCritical(df: number, z: number): number {
  const a = 2 / (9 * df);
  return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
}

const LOGITS_V8 = [2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -3.0];
// 8192 rows: SwiftShader runs the threshold searches of a short row in well under a millisecond (CPU emulation).
const ROWS = 8192;

describe('GPU sampler statistics: counts over 8192 rows of identical logits match the sampling distribution', () => {
  const configs: SamplerOptions[] = [
    { temperature: 1, seed: 11, step: 0 },
    { temperature: 0.7, topK: 4, seed: 12, step: 1 },
    { temperature: 1, topP: 0.8, seed: 13, step: 2 },
    { temperature: 1.3, minP: 0.2, seed: 14, step: 3 },
    { temperature: 0.7, topK: 6, topP: 0.9, minP: 0.05, seed: 15, step: 4 },
  ];
  for (const opts of configs) {
    it(JSON.stringify(opts), async () => {
      const data = new Float32Array(ROWS * LOGITS_V8.length);
      for (let r = 0; r < ROWS; r++) data.set(LOGITS_V8, r * LOGITS_V8.length);
      const logits = host(data, [ROWS, LOGITS_V8.length]);
      const got = await runGpuSampler(gpu.ctx, logits, opts, 'sampler-stats');
      const want = samplingDistribution(host(Float32Array.from(LOGITS_V8), [1, LOGITS_V8.length]), 0, opts);
      const counts = new Array<number>(LOGITS_V8.length).fill(0);
      for (const t of got.tokens) counts[t]++;
      let chi2 = 0;
      let df = -1;
      let tv = 0;
      for (let v = 0; v < counts.length; v++) {
        tv += Math.abs(counts[v] / ROWS - want[v]) / 2;
        if (want[v] === 0) {
          expect(counts[v], `token ${v} is filtered out but was drawn`).toBe(0);
          continue;
        }
        const e = want[v] * ROWS;
        chi2 += (counts[v] - e) ** 2 / e;
        df++;
      }
      // p = 1e-4 upper tail (z = 3.72): a fixed seed makes this deterministic; a wrong sampler fails by far.
      const crit = chiSquareCritical(Math.max(df, 1), 3.72);
      console.log(
        `${JSON.stringify(opts)}: chi2 ${chi2.toFixed(2)} (df ${df}, critical ${crit.toFixed(1)}), TV ${tv.toFixed(4)}`,
      );
      if (df > 0) expect(chi2).toBeLessThan(crit);
      expect(tv).toBeLessThan(0.03); // expected TV at n = 8192, V = 8 is about 0.01
      // And every one of the draws equals the twin's.
      const twin = runTwinSampler(logits, opts);
      let differ = 0;
      for (let r = 0; r < ROWS; r++) if (twin.tokens[r] !== got.tokens[r]) differ++;
      expect(differ).toBe(0);
    });
  }
});

describe('row layout of the row kernels (rows.ts)', () => {
  it('gives 1, 4, 16 or 64 lanes per row by the row length only, 64 threads per workgroup', () => {
    const lanes = (cols: number) => rowLayout(cols).LANES;
    expect([1, 2, 48, 99, 512, 1023].map(lanes)).toEqual([1, 1, 1, 1, 1, 1]);
    expect([1024, 4095, 4096, 16383, 16384, 50257, 262144].map(lanes)).toEqual([4, 4, 16, 16, 64, 64, 64]);
    expect(rowLaneEdges()).toEqual([1024, 4096, 16384]);
    for (const cols of [1, 1024, 4096, 16384]) expect(rowLayout(cols).LANES * rowLayout(cols).ROWS).toBe(ROW_THREADS);
    expect(rowEdgeShapes()).toEqual([
      [65, 1023],
      [17, 1024],
      [17, 4095],
      [5, 4096],
      [5, 16383],
      [2, 16384],
    ]);
  });

  it('cross-entropy and logprob are bit-identical across runs, at a thread per row and at 4 and 64 lanes', async () => {
    for (const [N, V] of [
      [65, 99],
      [17, 1024],
      [2, 16384],
    ]) {
      const rng = new Rng(N * V);
      const logits = randomHost(rng, [N, V], 3).data;
      const targets = randomInts(rng, [N], V).data;
      const mask = Float32Array.from({ length: N }, (_, i) => (i % 5 === 2 ? 0 : 1));
      const gradsIn = randomHost(rng, [2, N]).data;
      const run = async () => {
        const t: Tensor[] = [];
        const keep = <T extends Tensor>(a: T) => (t.push(a), a);
        const gl = keep(gpu.ctx.fromArray(logits, [N, V]));
        const gt = keep(gpu.ctx.fromArray<'u32'>(targets, [N], { dtype: 'u32' }));
        const gm = keep(gpu.ctx.fromArray(mask, [N]));
        const gdl = keep(gpu.ctx.fromArray(gradsIn.subarray(0, N), [N]));
        const gdh = keep(gpu.ctx.fromArray(gradsIn.subarray(N), [N]));
        const loss = keep(gpu.ctx.tensor([1]));
        const dCe = keep(gpu.ctx.tensor([N, V]));
        const lp = keep(gpu.ctx.tensor([N]));
        const h = keep(gpu.ctx.tensor([N]));
        const dLp = keep(gpu.ctx.tensor([N, V]));
        const rec = gpu.ctx.recorder('determinism');
        crossEntropyForward(rec, loss, gl, gt, gm);
        crossEntropyBackward(rec, dCe, gl, gt, gm);
        logprobForward(rec, lp, h, gl, gt, { temperature: 0.7 });
        logprobBackward(rec, dLp, gdl, gdh, gl, gt, { temperature: 0.7 });
        rec.submit();
        const got = await gpu.ctx.readMany([loss, dCe, lp, h, dLp]);
        t.forEach((a) => a.destroy());
        return got.map((a) => new Uint32Array(a.buffer.slice(0)));
      };
      const first = await run();
      const second = await run();
      for (let i = 0; i < first.length; i++) expect(second[i], `${N}x${V} output ${i}`).toEqual(first[i]);
    }
  });
});
