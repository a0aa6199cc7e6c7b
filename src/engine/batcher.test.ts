// The worker's record queue and metric columns: rows pack into columns and back unchanged, each row lands on the
// charts' rollout-step axis, runs drain in order, and transferable copies of token planes own their buffers
// (transferring them detaches nothing else).
import { describe, expect, it } from 'vitest';
import type { GroupRecord, StepRecord } from '../schema/stream';
import { RecordQueue, tokenTexts, transferableGroups } from './batcher';
import { batchTransfer, chartX, packRows, unpackBatch } from '../schema/metric-batch';
import type { MetricRow } from '../schema/run-types';

function rec(step: number, opt: number, metrics: Record<string, number>, groups?: GroupRecord[]): StepRecord {
  return { kind: 'step', step, optimizerStep: opt, update: 0, updates: 1, epoch: 0, minibatch: 0, metrics, groups };
}

function group(backing: ArrayBuffer): GroupRecord {
  const f = (o: number) => new Float32Array(backing, o * 4, 2);
  return {
    index: 0,
    prompt: 'p',
    answer: 'a',
    completions: [
      {
        text: 'ab',
        length: 2,
        finished: true,
        reward: 1,
        rewards: { accuracy: 1 },
        reason: '',
        masked: false,
        tokens: {
          tokens: Uint32Array.from([5, 2]),
          logpOld: f(0),
          logp: f(2),
          logpSampler: f(4),
          entropy: f(6),
          ratio: f(8),
          advantage: f(10),
          clipSide: Int8Array.from([0, 1]),
          kl: f(12),
          loss: f(14),
          weight: f(16),
          value: new Float32Array(0),
        },
      },
    ],
  };
}

describe('metric batches and the record queue', () => {
  it('packs rows into columns (union of names, NaN where absent) and unpacks them unchanged, update/updates filled in', () => {
    const rows: MetricRow[] = [
      { step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 0.5, kl: 0.01 } },
      { step: 1, optimizerStep: 2, epoch: 1, minibatch: 0, metrics: { reward: 0.5, entropy: 2 } },
    ];
    const b = packRows(rows);
    expect(b.names).toEqual(['entropy', 'kl', 'reward']);
    expect(Array.from(b.values)).toEqual([NaN, 0.01, 0.5, 2, NaN, 0.5]);
    // Rows recorded before update/updates were kept get them from their rollout step (two optimizer steps here).
    expect(unpackBatch(b)).toEqual(rows.map((r, i) => ({ ...r, update: i, updates: 2 })));
    expect(unpackBatch(packRows(unpackBatch(b)))).toEqual(unpackBatch(b));
    expect(batchTransfer(b)).toHaveLength(8);
    expect(new Set(batchTransfer(b)).size).toBe(8); // one buffer per column, none shared
  });

  it('places optimizer steps as sub-ticks of their rollout step, so runs with different update counts align', () => {
    const twoUpdates: MetricRow[] = [1, 2].flatMap((step) =>
      [0, 1].map((update) => ({
        step,
        optimizerStep: 2 * (step - 1) + update + 1,
        epoch: update,
        minibatch: 0,
        update,
        updates: 2,
        metrics: { reward: step },
      })),
    );
    const oneUpdate: MetricRow[] = [1, 2].map((step) => ({
      step,
      optimizerStep: step,
      epoch: 0,
      minibatch: 0,
      update: 0,
      updates: 1,
      metrics: { reward: step },
    }));
    const a = packRows(twoUpdates);
    expect(Array.from(a.x)).toEqual([0.5, 1, 1.5, 2]);
    expect(Array.from(packRows(oneUpdate).x)).toEqual([1, 2]); // the last update of each rollout step sits on the step
    expect(unpackBatch(a)).toEqual(twoUpdates); // update/updates survive the round trip
    expect(chartX({ step: 3, update: 1, updates: 3 })).toBeCloseTo(2 + 2 / 3, 15);
  });

  it('gives rows stored without update/updates (older runs) their sub-ticks from the rows of their rollout step', () => {
    const rows: MetricRow[] = [
      { step: 4, optimizerStep: 7, epoch: 0, minibatch: 0, metrics: {} },
      { step: 4, optimizerStep: 8, epoch: 1, minibatch: 0, metrics: {} },
      { step: 5, optimizerStep: 9, epoch: 0, minibatch: 0, update: 0, updates: 0, metrics: {} },
    ];
    expect(Array.from(packRows(rows).x)).toEqual([3.5, 4, 5]); // updates = 0 is kept, and says nothing: the step
    expect(chartX({ step: 4 })).toBe(4); // a lone row without them sits on its rollout step
  });

  it('drains runs in arrival order, merging consecutive pushes of the same run', () => {
    const q = new RecordQueue();
    const backing = new ArrayBuffer(18 * 4);
    q.push('a', [rec(1, 1, { reward: 1 }), rec(1, 2, { reward: 1 }, [group(backing)])]);
    q.push('a', [rec(2, 3, { reward: 2 })]);
    q.push('b', [rec(1, 1, { reward: 3 })]);
    const d = q.drain();
    expect(q.empty).toBe(true);
    expect(d.map((x) => x.runId)).toEqual(['a', 'b']);
    expect(Array.from(d[0].metrics.optimizerStep)).toEqual([1, 2, 3]);
    expect(d[0].rollouts.map((r) => r.step)).toEqual([1]);
    expect(q.drain()).toEqual([]);
  });

  it('sends the evaluation before training (step 0) ahead of the ones after batches', () => {
    const q = new RecordQueue();
    const ev = (step: number) => ({ step, items: 1, accuracy: step / 10, reward: 0, passAtK: [0] });
    q.push('a', [
      { ...rec(1, 1, { reward: 1 }), initialEval: ev(0), eval: ev(1) },
      { ...rec(2, 2, { reward: 1 }), eval: ev(2) },
    ]);
    expect(q.drain()[0].evals.map((e) => e.step)).toEqual([0, 1, 2]);
  });

  it('copies token planes into their own buffers before they are transferred', () => {
    const backing = new ArrayBuffer(18 * 4);
    new Float32Array(backing).forEach((_, i, a) => (a[i] = i));
    const g = group(backing);
    const { groups, transfer } = transferableGroups([g]);
    const planes = Object.values(groups[0].completions[0].tokens).filter((p) => p.length > 0);
    expect(transfer).toHaveLength(planes.length);
    for (const p of planes) expect(p.buffer.byteLength).toBe(p.byteLength);
    expect(transfer).not.toContain(backing);
    expect(Array.from(groups[0].completions[0].tokens.ratio)).toEqual([8, 9]);
    structuredClone(transfer, { transfer }); // detaches the copies only
    expect(backing.byteLength).toBe(18 * 4);
    expect(Array.from(g.completions[0].tokens.ratio)).toEqual([8, 9]);
  });

  it('names every token, special tokens by their text', () => {
    const tok = {
      specialIds: new Set([2]),
      tokenString: (id: number) => (id === 2 ? '<eos>' : '?'),
      decode: (ids: ArrayLike<number>) => String.fromCharCode(ids[0] + 92),
    };
    expect(tokenTexts([group(new ArrayBuffer(72))], tok)).toEqual([[['a', '<eos>']]]);
  });
});
