// The matmul autotune's cache in the browser (src/kernels/matmul-tune.ts TuneStore): one small IndexedDB database
// of key -> string, apart from the runs database so that neither's schema moves with the other. Any failure
// reads as a miss (get) or is ignored (set): a missing cache only costs the next startup the measurements.

const DB_NAME = 'rl-lab-cache';
const STORE = 'kv';

/**
 * Opens (or creates) a database of one key -> value store, `what` naming it in errors. Shared by the small stores
 * kept apart from the runs database (this cache, the imported folders of idb-folder-store.ts).
 */
export function openKeyValueDb(
  factory: IDBFactory,
  dbName: string,
  storeName: string,
  what: string,
): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = factory.open(dbName, 1);
    req.onupgradeneeded = () => {
      if (!req.result.objectStoreNames.contains(storeName)) req.result.createObjectStore(storeName);
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(new Error(`cannot open ${what}: ${req.error?.message ?? 'unknown error'}`));
    req.onblocked = () => reject(new Error(`${what} is blocked by another tab`));
  });
}

const openDb = (factory: IDBFactory) => openKeyValueDb(factory, DB_NAME, STORE, 'the cache database');

function request<T>(db: IDBDatabase, mode: IDBTransactionMode, run: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const req = run(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(req.result);
    tx.onabort = tx.onerror = () => reject(tx.error ?? new Error('cache transaction failed'));
  });
}

/** A TuneStore on IndexedDB, or null when the browser has none here (private mode). */
export function idbTuneStore(factory: IDBFactory | undefined = globalThis.indexedDB): {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
} | null {
  if (!factory) return null;
  let db: Promise<IDBDatabase> | null = null;
  const open = () => (db ??= openDb(factory));
  return {
    async get(key) {
      try {
        const v = await request(await open(), 'readonly', (s) => s.get(key) as IDBRequest<unknown>);
        return typeof v === 'string' ? v : null;
      } catch {
        return null;
      }
    },
    async set(key, value) {
      try {
        await request(await open(), 'readwrite', (s) => s.put(value, key));
      } catch {
        // a cache that cannot be written only costs the next startup the measurements
      }
    },
  };
}
