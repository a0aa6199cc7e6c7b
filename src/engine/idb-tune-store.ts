// The matmul autotune's cache in the browser (src/kernels/matmul-tune.ts TuneStore): one small IndexedDB database
// of key -> string, apart from the runs database so that neither's schema moves with the other. Any failure
// reads as a miss (get) or is ignored (set): a missing cache only costs the next startup the measurements.

const DB_NAME = 'rl-lab-cache';
const STORE = 'kv';

function openDb(factory: IDBFactory): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = factory.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      if (!req.result.objectStoreNames.contains(STORE)) req.result.createObjectStore(STORE);
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('cannot open the cache database'));
    req.onblocked = () => reject(new Error('the cache database is blocked by another tab'));
  });
}

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
