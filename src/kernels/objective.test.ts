// GPU-vs-twin tier for the objective family (shaders/objective.wgsl against src/reference/objective.ts): every
// case of objective.cases.ts, plus determinism (two runs bit-identical) and the wrapper's checks. A missing
// adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import { OBJECTIVE_METRICS } from '../reference/objective';
import { Rng } from '../core/random';
import { objectiveForwardBackward, objectiveLayout } from './objective';
import { objectiveCases, pickInputs, randomObjectiveInputs } from './objective.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';
import { resolveObjectiveConfig, type ObjectiveConfig } from '../schema/objective';

const gpu = useNodeDevice();

const cases = objectiveCases();

describe('objective on the GPU matches its CPU twin', () => {
  it('has the expected cases', () => {
    expect(new Set(cases.map((c) => c.family))).toEqual(new Set(['objective']));
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(100);
  });
  itEachCaseMatchesTwin(gpu, cases);
});

describe('objective wrapper', () => {
  it('spreads long rows over lanes', () => {
    expect(objectiveLayout(8, 33)).toEqual({ LANES: 4, ROWS: 16 });
    expect(objectiveLayout(2, 300)).toEqual({ LANES: 16, ROWS: 4 });
    expect(objectiveLayout(2, 700)).toEqual({ LANES: 64, ROWS: 1 });
    expect(objectiveLayout(1, 2000)).toEqual({ LANES: 64, ROWS: 1 });
    expect(objectiveLayout(4096, 512)).toEqual({ LANES: 1, ROWS: 64 });
  });

  it('is deterministic: two runs with a token selection are bit-identical', async () => {
    const N = 16;
    const L = 70;
    const ins = randomObjectiveInputs(new Rng(7), N, L).map((h, i) =>
      gpu.ctx.fromArray(h.data, h.shape, { label: `det:in${i}` }),
    );
    const cfg = { kl_cov_ratio: 0.1, top_entropy_quantile: 0.5, beta: 0.04 } as const;
    const run = async () => {
      const outs = [[1], [N, L], [N, L], [5, N, L], [OBJECTIVE_METRICS.length]].map((s, i) =>
        gpu.ctx.tensor(s, { label: `det:out${i}` }),
      );
      const rec = gpu.ctx.recorder('objective determinism');
      objectiveForwardBackward(
        rec,
        outs[0],
        outs[1],
        outs[2],
        outs[3],
        outs[4],
        pickInputs(ins, { ref: true }),
        resolveObjectiveConfig(cfg),
      );
      rec.submit();
      const got = await gpu.ctx.readMany(outs);
      for (const t of outs) t.destroy();
      return got;
    };
    const a = await run();
    const b = await run();
    for (const t of ins) t.destroy();
    a.forEach((x, i) => expect(Array.from(b[i]), `output ${i}`).toEqual(Array.from(x)));
  });

  it('checks shapes and required inputs before recording', () => {
    const t = (s: number[]) => gpu.ctx.tensor(s, { label: 'chk' });
    const [lp, old, adv, mask, ent] = [t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3]), t([2, 3])];
    const inputs = { logp: lp, oldLogp: old, advantages: adv, mask, entropy: ent };
    const rec = gpu.ctx.recorder('objective checks');
    const outs = [t([1]), t([2, 3]), t([2, 3]), t([5, 2, 3]), t([OBJECTIVE_METRICS.length])] as const;
    const call = (over: object, cfg: Partial<ObjectiveConfig> = {}) =>
      objectiveForwardBackward(
        rec,
        outs[0],
        outs[1],
        outs[2],
        outs[3],
        outs[4],
        { ...inputs, ...over },
        resolveObjectiveConfig(cfg),
      );
    expect(() => call({ mask: t([3, 2]) })).toThrow(/mask must be \(N, L\) = \(2, 3\)/);
    expect(() => call({}, { beta: 0.1 })).toThrow(/needs refLogp/);
    expect(() => call({}, { beta: 0.1, kl_estimator: 'exact' })).toThrow(/needs klExact/);
    expect(() => call({}, { tis_cap: 2 })).toThrow(/tis_cap needs samplerLogp/);
    expect(() => call({}, { epsilon: 1.5 })).toThrow(/epsilon: must be in \[0, 1\)/);
    expect(() => objectiveForwardBackward(rec, outs[0], t([2, 2]), outs[2], outs[3], outs[4], inputs)).toThrow(/dLogp/);
    rec.submit();
  });
});
