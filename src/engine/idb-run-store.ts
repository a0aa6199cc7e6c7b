// The runs store on IndexedDB (the browser's, in the engine worker): one database, a table per kind of record,
// every write one transaction, so a write that fails (a full quota) leaves what was saved before untouched and
// surfaces as StorageFullError. Not the in-memory store (run-store.ts) and not the export formats.

import type { EvalRecord } from '../schema/stream';
import { StorageFullError, type RunRecords, type RunStore, type SavedState } from './run-store';
import type { MetricRow, RolloutRecord, RunData, RunHeader } from '../schema/run-types';

const DB_NAME = 'rl-lab';
const DB_VERSION = 1;
const STORES = ['runs', 'rows', 'rollouts', 'evals', 'states'] as const;
type StoreName = (typeof STORES)[number];

/** A storage failure as the engine reports it: StorageFullError for a full quota, else an Error naming the operation. */
function storageError(what: string, e: DOMException | Error | null | undefined): Error {
  const name = e?.name ?? '';
  if (name === 'QuotaExceededError' || /quota/i.test(e?.message ?? '')) {
    return new StorageFullError(`browser storage is full (${name || 'quota exceeded'}) while ${what}`);
  }
  return new Error(
    `browser storage failed while ${what}: ${e ? `${name}: ${e.message}` : 'the transaction was aborted'}`,
  );
}

function openDb(factory: IDBFactory): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = factory.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains('runs')) db.createObjectStore('runs', { keyPath: 'id' });
      if (!db.objectStoreNames.contains('rows'))
        db.createObjectStore('rows', { keyPath: ['runId', 'optimizerStep'] }).createIndex('step', ['runId', 'step']);
      if (!db.objectStoreNames.contains('rollouts')) db.createObjectStore('rollouts', { keyPath: ['runId', 'step'] });
      if (!db.objectStoreNames.contains('evals')) db.createObjectStore('evals', { keyPath: ['runId', 'step'] });
      if (!db.objectStoreNames.contains('states')) db.createObjectStore('states', { keyPath: 'runId' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(storageError('opening the runs database', req.error));
    req.onblocked = () =>
      reject(
        new Error('the runs database is open in an older version of this page in another tab; close it and reload'),
      );
  });
}

/** All keys of one run in a table keyed by [runId, number]. */
const runRange = (runId: string) => IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);

export class IdbRunStore implements RunStore {
  private constructor(private readonly db: IDBDatabase) {}

  /** Opens (or creates) the runs database. Throws when IndexedDB is missing or refuses. */
  static async open(factory: IDBFactory | undefined = globalThis.indexedDB): Promise<IdbRunStore> {
    if (!factory)
      throw new Error(
        'this browser has no IndexedDB here (private mode?), so runs are kept in memory only and are lost on reload',
      );
    return new IdbRunStore(await openDb(factory));
  }

  /** Runs `body` in one transaction and resolves with its result when the transaction commits. */
  private tx<T>(
    what: string,
    stores: readonly StoreName[],
    mode: IDBTransactionMode,
    body: (t: IDBTransaction) => () => T,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let t: IDBTransaction;
      try {
        t = this.db.transaction(stores as StoreName[], mode);
      } catch (e) {
        reject(storageError(what, e as DOMException));
        return;
      }
      let result: () => T;
      try {
        result = body(t);
      } catch (e) {
        // A synchronous failure (e.g. a value that cannot be cloned): nothing of this transaction is kept.
        try {
          t.abort();
        } catch {
          /* already finished */
        }
        reject(e instanceof DOMException ? storageError(what, e) : e);
        return;
      }
      t.oncomplete = () => resolve(result());
      t.onabort = () => reject(storageError(what, t.error));
      t.onerror = (ev) => ev.preventDefault(); // let onabort report it once
    });
  }

  listRuns(): Promise<RunHeader[]> {
    return this.tx('listing runs', ['runs'], 'readonly', (t) => {
      const req = t.objectStore('runs').getAll();
      return () => (req.result as RunHeader[]).sort((a, b) => b.createdAt - a.createdAt);
    });
  }

  getRun(id: string): Promise<RunHeader | null> {
    return this.tx('reading a run', ['runs'], 'readonly', (t) => {
      const req = t.objectStore('runs').get(id);
      return () => (req.result as RunHeader | undefined) ?? null;
    });
  }

  putHeader(h: RunHeader): Promise<void> {
    return this.tx(`saving run "${h.name}"`, ['runs'], 'readwrite', (t) => {
      t.objectStore('runs').put(h);
      return () => undefined;
    });
  }

  appendStep(
    h: RunHeader,
    rows: readonly MetricRow[],
    rollout: RolloutRecord | null,
    evals: readonly EvalRecord[],
  ): Promise<void> {
    return this.tx(
      `saving step ${h.step} of run "${h.name}"`,
      ['runs', 'rows', 'rollouts', 'evals'],
      'readwrite',
      (t) => {
        t.objectStore('runs').put(h);
        const rs = t.objectStore('rows');
        for (const r of rows) rs.put({ runId: h.id, ...r });
        if (rollout) t.objectStore('rollouts').put({ runId: h.id, ...rollout });
        for (const e of evals) t.objectStore('evals').put({ runId: h.id, ...e });
        return () => undefined;
      },
    );
  }

  putState(h: RunHeader, saved: SavedState): Promise<void> {
    return this.tx(
      `saving the trainer state of run "${h.name}" at step ${saved.step}`,
      ['runs', 'states'],
      'readwrite',
      (t) => {
        t.objectStore('states').put(saved);
        t.objectStore('runs').put(h);
        return () => undefined;
      },
    );
  }

  getState(runId: string): Promise<SavedState | null> {
    return this.tx('reading a saved state', ['states'], 'readonly', (t) => {
      const req = t.objectStore('states').get(runId);
      return () => (req.result as SavedState | undefined) ?? null;
    });
  }

  readRecords(runId: string): Promise<RunRecords> {
    return this.tx('reading a run', ['rows', 'evals', 'rollouts'], 'readonly', (t) => {
      const rows = t.objectStore('rows').getAll(runRange(runId));
      const evals = t.objectStore('evals').getAll(runRange(runId));
      const steps = t.objectStore('rollouts').getAllKeys(runRange(runId));
      return () => ({
        rows: (rows.result as (MetricRow & { runId?: string })[]).map(({ runId: _, ...r }) => r),
        evals: (evals.result as (EvalRecord & { runId?: string })[]).map(({ runId: _, ...e }) => e),
        rolloutSteps: (steps.result as [string, number][]).map((k) => k[1]),
      });
    });
  }

  readRollouts(runId: string, step: number): Promise<RolloutRecord | null> {
    return this.tx('reading sampled groups', ['rollouts'], 'readonly', (t) => {
      const req = t.objectStore('rollouts').get([runId, step]);
      return () => {
        const r = req.result as (RolloutRecord & { runId?: string }) | undefined;
        if (!r) return null;
        const { runId: _, ...rollout } = r;
        return rollout;
      };
    });
  }

  readAllRollouts(runId: string): Promise<RolloutRecord[]> {
    return this.tx('reading sampled groups', ['rollouts'], 'readonly', (t) => {
      const req = t.objectStore('rollouts').getAll(runRange(runId));
      return () => (req.result as (RolloutRecord & { runId?: string })[]).map(({ runId: _, ...rollout }) => rollout);
    });
  }

  putRun(data: RunData): Promise<void> {
    const h = data.header;
    return this.tx(`importing run "${h.name}"`, ['runs', 'rows', 'rollouts', 'evals'], 'readwrite', (t) => {
      t.objectStore('runs').put(h);
      const rs = t.objectStore('rows');
      for (const r of data.rows) rs.put({ runId: h.id, ...r });
      for (const r of data.rollouts) t.objectStore('rollouts').put({ runId: h.id, ...r });
      for (const e of data.evals) t.objectStore('evals').put({ runId: h.id, ...e });
      return () => undefined;
    });
  }

  truncate(h: RunHeader, step: number): Promise<void> {
    return this.tx(
      `rewinding run "${h.name}" to step ${step}`,
      ['runs', 'rows', 'rollouts', 'evals'],
      'readwrite',
      (t) => {
        t.objectStore('runs').put(h);
        const after = IDBKeyRange.bound([h.id, step], [h.id, Infinity], true, false);
        const cursor = t.objectStore('rows').index('step').openCursor(after);
        cursor.onsuccess = () => {
          const c = cursor.result;
          if (c) {
            c.delete();
            c.continue();
          }
        };
        t.objectStore('rollouts').delete(after);
        t.objectStore('evals').delete(after);
        return () => undefined;
      },
    );
  }

  deleteRun(runId: string): Promise<void> {
    return this.tx('deleting a run', STORES, 'readwrite', (t) => {
      t.objectStore('runs').delete(runId);
      t.objectStore('states').delete(runId);
      for (const s of ['rows', 'rollouts', 'evals'] as const) t.objectStore(s).delete(runRange(runId));
      return () => undefined;
    });
  }

  async estimate(): Promise<{ usage: number; quota: number } | null> {
    const storage = (globalThis.navigator as Navigator | undefined)?.storage;
    if (!storage?.estimate) return null;
    const e = await storage.estimate();
    return e.usage !== undefined && e.quota !== undefined ? { usage: e.usage, quota: e.quota } : null;
  }
}
