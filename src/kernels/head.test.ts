// GPU-vs-twin tier for the head and optimizer families (logprob, cross-entropy, optimizer, sampler), plus a
// statistical test of the GPU sampler: 8192 rows of identical logits in one dispatch (each row its own Philox
// draw), token counts against the exact sampling distribution. A missing adapter fails the suite; it never skips.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAdapter, type GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { samplingDistribution, type SamplerOptions } from '../reference/sampler';
import { host } from '../reference/types';
import { headCases, runGpuSampler, runTwinSampler } from './head.cases';

let ctx: GpuContext;

beforeAll(async () => {
  ctx = await acquireNodeDevice();
  console.log(`adapter: ${describeAdapter(ctx.report)}`);
});

afterAll(() => ctx?.destroy());

const cases = headCases();

describe('head and optimizer kernels on the GPU match their CPU twins', () => {
  it('has the expected families', () => {
    const families = new Set(cases.map((c) => c.family));
    expect([...families].sort()).toEqual(['cross-entropy', 'logprob', 'optimizer', 'sampler']);
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });
  for (const c of cases) {
    it(c.name, async () => {
      const r = await c.run(ctx);
      expect(r.pass, `${c.name}: ${r.summary}`).toBe(true);
    });
  }
});

/** Upper critical value of chi-square with `df` degrees of freedom at z standard deviations (Wilson-Hilferty). */
function chiSquareCritical(df: number, z: number): number {
  const a = 2 / (9 * df);
  return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
}

const LOGITS_V8 = [2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -3.0];
// 8192 rows: SwiftShader runs the 32-pass threshold searches of a row in about 0.6 ms (CPU emulation).
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
      const got = await runGpuSampler(ctx, logits, opts, 'sampler-stats');
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
        chi2 += ((counts[v] - e) ** 2) / e;
        df++;
      }
      // p = 1e-4 upper tail (z = 3.72): a fixed seed makes this deterministic; a wrong sampler fails by far.
      const crit = chiSquareCritical(Math.max(df, 1), 3.72);
      console.log(`${JSON.stringify(opts)}: chi2 ${chi2.toFixed(2)} (df ${df}, critical ${crit.toFixed(1)}), TV ${tv.toFixed(4)}`);
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
