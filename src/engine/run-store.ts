// Where runs live: the RunStore interface (headers, metric rows, sampled rollouts, evaluations, the latest
// trainer state and checkpoint of each run), StorageFullError, and MemoryRunStore, an in-memory store with an
// optional byte quota (the engine's tests, and the fallback where a browser has no IndexedDB). The IndexedDB
// store is idb-run-store.ts. Every write is atomic: a write that fails leaves what was saved before untouched.

import type { EvalRecord } from '../schema/stream';
import type { MetricRow, RolloutRecord, RunData, RunHeader, RunRecords } from '../schema/run-types';

export type { RunRecords } from '../schema/run-types';

/** The browser refused a write because its storage quota is used up. Nothing saved before is affected. */
export class StorageFullError extends Error {
  override name = 'StorageFullError';
}

/** The latest resumable state of a run and its policy as a Hugging Face checkpoint. */
export interface SavedState {
  runId: string;
  /** Rollout step the state was saved after. */
  step: number;
  /** encodeTrainerState bytes. */
  state: Uint8Array;
  /** model.safetensors of the policy at that step. */
  safetensors: Uint8Array;
  /** config.json of the policy. */
  configJson: string;
  /** tokenizer.json the policy uses. */
  tokenizerJson: string;
  /** Its tokenizer_config.json (a Hugging Face BPE tokenizer's special tokens and chat template); absent for the character vocabulary. */
  tokenizerConfigJson?: string | null;
}

export interface RunStore {
  /** Every run's header, newest first. */
  listRuns(): Promise<RunHeader[]>;
  getRun(id: string): Promise<RunHeader | null>;
  putHeader(h: RunHeader): Promise<void>;
  /** One rollout step, in one transaction: the updated header, its metric rows, its sampled groups and evaluations. */
  appendStep(
    h: RunHeader,
    rows: readonly MetricRow[],
    rollout: RolloutRecord | null,
    evals: readonly EvalRecord[],
  ): Promise<void>;
  /** Replaces the run's saved state (and updates its header) in one transaction. */
  putState(h: RunHeader, saved: SavedState): Promise<void>;
  getState(runId: string): Promise<SavedState | null>;
  readRecords(runId: string): Promise<RunRecords>;
  /** One step's sampled groups (and every group in brief, where recorded). */
  readRollouts(runId: string, step: number): Promise<RolloutRecord | null>;
  readAllRollouts(runId: string): Promise<RolloutRecord[]>;
  /** A whole run (an import), in one transaction. */
  putRun(data: RunData): Promise<void>;
  /** Deletes the records of steps after `step` (a run resumed from an earlier saved state), and updates the header. */
  truncate(h: RunHeader, step: number): Promise<void>;
  deleteRun(runId: string): Promise<void>;
  /** Bytes used and available, when the platform says. */
  estimate(): Promise<{ usage: number; quota: number } | null>;
}

/** Rough bytes of a stored value (typed arrays exactly, strings at 2 bytes a character). */
export function sizeOf(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'string') return 2 * v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return 8;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (Array.isArray(v)) return v.reduce((s: number, x) => s + sizeOf(x), 0);
  if (typeof v === 'object') return Object.entries(v as object).reduce((s, [k, x]) => s + 2 * k.length + sizeOf(x), 0);
  return 0;
}

/** Runs in memory, deep-copied on the way in and out like IndexedDB's structured clone. */
export class MemoryRunStore implements RunStore {
  private runs = new Map<string, RunHeader>();
  private rows = new Map<string, MetricRow[]>();
  private evals = new Map<string, EvalRecord[]>();
  private rollouts = new Map<string, Map<number, RolloutRecord>>();
  private states = new Map<string, SavedState>();

  /** @param quotaBytes writes that would take the store past this many bytes fail with StorageFullError. */
  constructor(public quotaBytes = Infinity) {}

  private used(): number {
    return (
      sizeOf([...this.runs.values()]) +
      sizeOf([...this.rows.values()]) +
      sizeOf([...this.evals.values()]) +
      [...this.rollouts.values()].reduce((s, m) => s + sizeOf([...m.values()]), 0) +
      sizeOf([...this.states.values()])
    );
  }

  private check(extra: number): void {
    const used = this.used();
    if (used + extra > this.quotaBytes)
      throw new StorageFullError(`storage quota exceeded: ${used + extra} bytes needed, ${this.quotaBytes} allowed`);
  }

  async listRuns(): Promise<RunHeader[]> {
    return [...this.runs.values()].map((h) => structuredClone(h)).sort((a, b) => b.createdAt - a.createdAt);
  }
  async getRun(id: string): Promise<RunHeader | null> {
    const h = this.runs.get(id);
    return h ? structuredClone(h) : null;
  }
  async putHeader(h: RunHeader): Promise<void> {
    this.check(sizeOf(h) - sizeOf(this.runs.get(h.id)));
    this.runs.set(h.id, structuredClone(h));
  }
  async appendStep(
    h: RunHeader,
    rows: readonly MetricRow[],
    rollout: RolloutRecord | null,
    evals: readonly EvalRecord[],
  ): Promise<void> {
    this.check(sizeOf(h) - sizeOf(this.runs.get(h.id)) + sizeOf(rows) + sizeOf(rollout) + sizeOf(evals));
    this.runs.set(h.id, structuredClone(h));
    const list = this.rows.get(h.id) ?? [];
    const have = new Set(list.map((r) => r.optimizerStep));
    for (const r of structuredClone(rows as MetricRow[])) if (!have.has(r.optimizerStep)) list.push(r);
    list.sort((a, b) => a.optimizerStep - b.optimizerStep);
    this.rows.set(h.id, list);
    if (rollout) {
      const m = this.rollouts.get(h.id) ?? new Map<number, RolloutRecord>();
      m.set(rollout.step, structuredClone(rollout));
      this.rollouts.set(h.id, m);
    }
    if (evals.length) {
      const e = (this.evals.get(h.id) ?? []).filter((x) => !evals.some((y) => y.step === x.step));
      this.evals.set(
        h.id,
        [...e, ...structuredClone(evals as EvalRecord[])].sort((a, b) => a.step - b.step),
      );
    }
  }
  async putState(h: RunHeader, saved: SavedState): Promise<void> {
    this.check(sizeOf(saved) - sizeOf(this.states.get(saved.runId)) + sizeOf(h) - sizeOf(this.runs.get(h.id)));
    this.states.set(saved.runId, structuredClone(saved));
    this.runs.set(h.id, structuredClone(h));
  }
  async getState(runId: string): Promise<SavedState | null> {
    const s = this.states.get(runId);
    return s ? structuredClone(s) : null;
  }
  async readRecords(runId: string): Promise<RunRecords> {
    return {
      rows: structuredClone(this.rows.get(runId) ?? []),
      evals: structuredClone(this.evals.get(runId) ?? []),
      rolloutSteps: [...(this.rollouts.get(runId)?.keys() ?? [])].sort((a, b) => a - b),
    };
  }
  async readRollouts(runId: string, step: number): Promise<RolloutRecord | null> {
    const g = this.rollouts.get(runId)?.get(step);
    return g ? structuredClone(g) : null;
  }
  async readAllRollouts(runId: string): Promise<RolloutRecord[]> {
    return [...(this.rollouts.get(runId)?.values() ?? [])]
      .sort((a, b) => a.step - b.step)
      .map((r) => structuredClone(r));
  }
  async putRun(data: RunData): Promise<void> {
    this.check(sizeOf(data));
    const id = data.header.id;
    this.runs.set(id, structuredClone(data.header));
    this.rows.set(id, structuredClone(data.rows));
    this.evals.set(id, structuredClone(data.evals));
    this.rollouts.set(id, new Map(data.rollouts.map((r) => [r.step, structuredClone(r)])));
  }
  async truncate(h: RunHeader, step: number): Promise<void> {
    this.runs.set(h.id, structuredClone(h));
    this.rows.set(
      h.id,
      (this.rows.get(h.id) ?? []).filter((r) => r.step <= step),
    );
    this.evals.set(
      h.id,
      (this.evals.get(h.id) ?? []).filter((e) => e.step <= step),
    );
    const m = this.rollouts.get(h.id);
    if (m) for (const s of [...m.keys()]) if (s > step) m.delete(s);
  }
  async deleteRun(runId: string): Promise<void> {
    for (const m of [this.runs, this.rows, this.evals, this.rollouts, this.states]) m.delete(runId);
  }
  async estimate(): Promise<{ usage: number; quota: number } | null> {
    return Number.isFinite(this.quotaBytes) ? { usage: this.used(), quota: this.quotaBytes } : null;
  }
}
