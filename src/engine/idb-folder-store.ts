// Model folders a person imported from disk (a checkpoint or a reward model), kept in the browser's IndexedDB in a
// database of their own, so a run can name one as `local/<name>/` and read it again after a reload. Used by the
// engine worker's file reader; the page sends the files. Not the runs store (idb-run-store.ts).

import { openKeyValueDb } from './idb-tune-store';
import { LOCAL_FOLDER_PREFIX } from '../schema/folder-names';
import { StorageFullError } from './run-store';

export { LOCAL_FOLDER_PREFIX, isModelFile, localFolderName } from '../schema/folder-names';

const DB_NAME = 'rl-lab-folders';
const STORE = 'files';

export class IdbFolderStore {
  private constructor(private readonly db: IDBDatabase) {}

  static async open(factory: IDBFactory | undefined = globalThis.indexedDB): Promise<IdbFolderStore> {
    if (!factory) throw new Error('this browser has no IndexedDB here (private mode?), so a folder cannot be imported');
    return new IdbFolderStore(await openKeyValueDb(factory, DB_NAME, STORE, 'the imported folders'));
  }

  /**
   * Keeps `files` (paths inside the folder) as `local/<name>/`, replacing a folder of that name, in one transaction:
   * a full quota leaves the earlier folder as it was and rejects with StorageFullError.
   */
  put(name: string, files: readonly { path: string; bytes: Uint8Array }[]): Promise<void> {
    const prefix = `${LOCAL_FOLDER_PREFIX}${name}/`;
    return new Promise((resolve, reject) => {
      const t = this.db.transaction(STORE, 'readwrite');
      const store = t.objectStore(STORE);
      store.delete(IDBKeyRange.bound(prefix, `${prefix}\uffff`));
      for (const f of files) store.put(f.bytes, `${prefix}${f.path}`);
      t.oncomplete = () => resolve();
      const fail = () => {
        const e = t.error;
        if (e?.name === 'QuotaExceededError')
          reject(new StorageFullError(`browser storage is full while importing the folder ${name}`));
        else
          reject(
            new Error(
              `browser storage failed while importing the folder ${name}: ${e?.message ?? 'the transaction was aborted'}`,
            ),
          );
      };
      t.onerror = fail;
      t.onabort = fail;
    });
  }

  /** The bytes of `local/<name>/<file>`; rejects naming the path when it is not there. */
  get(path: string): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const req = this.db.transaction(STORE, 'readonly').objectStore(STORE).get(path);
      req.onsuccess = () => {
        const v = req.result as Uint8Array | ArrayBuffer | undefined;
        if (v === undefined) reject(new Error(`${path}: not in the imported folders (import the folder again)`));
        else resolve(v instanceof Uint8Array ? v : new Uint8Array(v));
      };
      req.onerror = () =>
        reject(new Error(`browser storage failed while reading ${path}: ${req.error?.message ?? 'unknown error'}`));
    });
  }
}
