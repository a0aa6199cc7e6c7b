// Tests of the bradley-terry family: every case of bradley-terry.cases.ts on the GPU against the CPU twin, and the
// wrapper's checks; then the twin alone: dScores against central finite differences of its loss (with and without
// the centering term), the metrics against a direct computation, and its index checks. A missing adapter fails the
// suite; it never skips.

import { describe, expect, it } from 'vitest';
import * as ref from '../reference/bradley-terry';
import { Rng } from '../core/random';
import { host } from '../core/host-tensor';
import { bradleyTerryCases, randomPairInputs } from './bradley-terry.cases';
import { BT_METRICS, bradleyTerryForwardBackward } from './bradley-terry';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();
const cases = bradleyTerryCases();

describe('Bradley-Terry loss on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(13);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

describe('bradley-terry wrapper', () => {
  it('checks shapes and options before recording', () => {
    const f = (n: number) => gpu.ctx.tensor([n], { label: 'bt chk' });
    const u = (n: number) => gpu.ctx.tensor([n], { dtype: 'u32', label: 'bt chk pairs' });
    const rec = gpu.ctx.recorder('bt checks');
    expect(() => bradleyTerryForwardBackward(rec, f(1), f(3), f(3), f(4), u(2))).toThrow(
      /dScores .* must have the size of scores/,
    );
    expect(() => bradleyTerryForwardBackward(rec, f(1), f(4), f(3), f(4), u(3))).toThrow(/pairs must be \(P, 2\) u32/);
    expect(() => bradleyTerryForwardBackward(rec, f(1), f(4), f(2), f(4), u(2))).toThrow(/metrics must be 3 f32/);
    expect(() => bradleyTerryForwardBackward(rec, f(1), f(4), f(3), f(4), u(2), { centerCoef: -1 })).toThrow(
      /centerCoef must be a finite number >= 0/,
    );
  });
});

describe('the Bradley-Terry twin', () => {
  const run = (scores: Float32Array, pairs: Uint32Array, centerCoef = 0) => {
    const loss = host(new Float32Array(1), [1]);
    const dScores = host(new Float32Array(scores.length), [scores.length]);
    const metrics = host(new Float32Array(BT_METRICS.length), [BT_METRICS.length]);
    ref.bradleyTerryForwardBackward(
      loss,
      dScores,
      metrics,
      host(scores, [scores.length]),
      { data: pairs, shape: [pairs.length / 2, 2] },
      { centerCoef },
    );
    return { loss: loss.data[0], dScores: dScores.data, metrics: metrics.data };
  };

  for (const centerCoef of [0, 0.05]) {
    it(`has the gradient of its loss (central differences, centerCoef ${centerCoef})`, () => {
      const [scores, pairs] = randomPairInputs(new Rng(11), 12, 30);
      const s64 = Float64Array.from(scores.data);
      const { dScores } = run(scores.data, pairs.data, centerCoef);
      const lossAt = (x: Float64Array) => {
        let total = 0;
        for (let p = 0; p < pairs.data.length / 2; p++) {
          const c = x[pairs.data[2 * p]];
          const r = x[pairs.data[2 * p + 1]];
          total += ref.softplusNeg(c - r) + centerCoef * (c + r) ** 2;
        }
        return total / (pairs.data.length / 2);
      };
      const h = 1e-5;
      for (let i = 0; i < s64.length; i++) {
        const up = Float64Array.from(s64);
        const down = Float64Array.from(s64);
        up[i] += h;
        down[i] -= h;
        expect(dScores[i]).toBeCloseTo((lossAt(up) - lossAt(down)) / (2 * h), 5);
      }
    });
  }

  it('gives the metrics and the loss of a hand-computed batch', () => {
    // Pairs: (0 over 1): d = 2; (2 over 0): d = -1. Sequence 3 is in no pair.
    const { loss, dScores, metrics } = run(Float32Array.from([1, -1, 0, 5]), Uint32Array.from([0, 1, 2, 0]));
    const sp = (d: number) => Math.log(1 + Math.exp(-d));
    expect(loss).toBeCloseTo((sp(2) + sp(-1)) / 2, 6);
    expect(Array.from(metrics)).toEqual([expect.closeTo((sp(2) + sp(-1)) / 2, 6), 0.5, expect.closeTo(0.5, 6)]);
    const sig = (x: number) => 1 / (1 + Math.exp(-x));
    expect(dScores[0]).toBeCloseTo((-sig(-2) + sig(1)) / 2, 6);
    expect(dScores[3]).toBe(0);
  });

  it('stays finite at margins of 1000', () => {
    const { loss, dScores } = run(Float32Array.from([1000, -1000]), Uint32Array.from([0, 1, 1, 0]));
    expect(loss).toBeCloseTo(2000 / 2, 3);
    expect(Array.from(dScores).every(Number.isFinite)).toBe(true);
  });

  it('names a pair index beyond the scores', () => {
    expect(() => run(Float32Array.from([0, 1]), Uint32Array.from([0, 2]))).toThrow(
      /pair 0 names sequence 2, but there are 2 scores/,
    );
  });
});
