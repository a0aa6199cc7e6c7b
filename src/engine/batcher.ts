// The queue between the trainer's records and the page: the engine pushes each rollout step's records as they
// come, and the worker drains the queue on a timer, so the page receives metrics at a steady rate (a few
// messages a second) however fast the GPU steps. Pure data; the timer belongs to the worker.

import type { Tokenizer } from '../io/tokenizer';
import { evalsOf, type EvalRecord, type GroupRecord, type StepRecord } from '../schema/stream';
import type { RolloutRecord } from '../schema/run-types';
import { packRows, type MetricBatch } from '../schema/metric-batch';
import { rowOf } from '../schema/run-types';

/** What one drain sends for one run: its new metric rows, sampled groups by step, and evaluations. */
export interface Drained {
  runId: string;
  metrics: MetricBatch;
  rollouts: RolloutRecord[];
  evals: EvalRecord[];
}

export class RecordQueue {
  private pending: { runId: string; records: StepRecord[] }[] = [];

  /** Queues one rollout step's records of a run. */
  push(runId: string, records: readonly StepRecord[]): void {
    const last = this.pending[this.pending.length - 1];
    // A loop, not push(...records): a rollout step may hold num_iterations x num_minibatches records, past what
    // one call can take as arguments.
    if (last && last.runId === runId) for (const r of records) last.records.push(r);
    else this.pending.push({ runId, records: [...records] });
  }

  /** True when nothing is queued. */
  get empty(): boolean {
    return this.pending.length === 0;
  }

  /** Everything queued, one entry per consecutive run, in arrival order; the queue is then empty. */
  drain(): Drained[] {
    const out = this.pending.map(({ runId, records }) => ({
      runId,
      metrics: packRows(records.map(rowOf)),
      rollouts: records
        .filter((r) => r.groups?.length)
        .map((r) => ({ step: r.step, groups: r.groups!, ...(r.batch && { batch: r.batch }) })),
      evals: records.flatMap(evalsOf),
    }));
    this.pending = [];
    return out;
  }
}

/**
 * Copies of these groups whose token planes own exact-size buffers, and those buffers: the copies can be
 * transferred (not cloned) to the page without detaching anything the trainer or the store still holds
 * (a trainer may hand out views into larger readback buffers).
 */
export function transferableGroups(groups: readonly GroupRecord[]): { groups: GroupRecord[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const copy = groups.map((g) => ({
    ...g,
    completions: g.completions.map((c) => {
      const tokens = {} as Record<string, ArrayBufferView>;
      for (const [k, plane] of Object.entries(c.tokens) as [string, Float32Array | Uint32Array | Int8Array][]) {
        const own = plane.slice();
        if (own.byteLength > 0) transfer.push(own.buffer as ArrayBuffer);
        tokens[k] = own;
      }
      return { ...c, rewards: { ...c.rewards }, tokens: tokens as unknown as typeof c.tokens };
    }),
  }));
  return { groups: copy, transfer };
}

/** The text of every token of these groups ([group][completion][token]), special tokens as their names. */
export function tokenTexts(
  groups: readonly GroupRecord[],
  tok: Pick<Tokenizer, 'decode' | 'tokenString' | 'specialIds'>,
): string[][][] {
  return groups.map((g) => g.completions.map((c) => tokenStrings(c.tokens.tokens, tok)));
}

/** Each token's text: special tokens by name (<eos>), others decoded. */
export function tokenStrings(
  ids: Uint32Array,
  tok: Pick<Tokenizer, 'decode' | 'tokenString' | 'specialIds'>,
): string[] {
  return Array.from(ids, (id) => (tok.specialIds.has(id) ? tok.tokenString(id) : tok.decode([id])));
}
