// The page's hub cache: a SnapshotStore in the Origin Private File System, in the CLI cache's layout
// (src/hub/cache-layout.ts) under the directory it is given (the engine worker passes `hub/` of the origin's root).
// Weights of hundreds of megabytes survive reloads without an IndexedDB copy.
//
// Partial files: appended chunks are held in memory up to WRITE_BATCH_BYTES and then written at the file's end
// through a FileSystemSyncAccessHandle (the engine's dedicated worker has it; it writes in place, so a file of
// gigabytes is never copied), opened for that write and closed after it: no lock outlives a call, so a reload, a
// second store over the same directory or a list() from the page never meets a held file. Where the sync handle is
// missing (the page's main thread), a writable stream with keepExistingData writes the batch instead (Chromium
// copies the file into a swap file for that, so it is the slow path). A reload loses at most the one batch in memory,
// which the resumed download fetches again with Range. size() writes the batch out first, so what it says is kept.
// The SHA-256 runs as bytes arrive (src/core/sha256.ts; crypto.subtle has no streaming digest); after a reload
// the bytes already kept are read back in chunks to catch the hash up.
// Commit moves `<file>.incomplete` onto `<file>` with FileSystemHandle.move (atomic in the origin's storage), or
// copies and removes where move is missing.

import { Sha256 } from '../core/sha256';
import {
  DOWNLOAD_RECORD_FILE,
  incompletePath,
  MANIFEST_FILE,
  modelFolderName,
  parseDownloadRecord,
  parseManifest,
  parseRef,
  recordText,
  recordTotal,
  REFS_FOLDER,
  refPath,
  repoIdOfFolder,
  SNAPSHOTS_FOLDER,
  snapshotFilePath,
  snapshotPath,
} from '../hub/cache-layout';
import type { PartialFile } from '../hub/download';
import { DEFAULT_REVISION, parseHubId, type HubRepo } from '../schema/hub-id';
import type { KeptModel } from '../hub/manager-types';
import type { SnapshotManifest, SnapshotStore } from '../hub/snapshot';

/** Bytes of a partial file held in memory before they are written (and what a reload can cost to fetch again). */
export const WRITE_BATCH_BYTES = 1 << 20;
/** Bytes read back at a time to catch a resumed file's hash up. */
const READ_BACK_BYTES = 4 << 20;

/** The sync access handle's methods used here (lib.dom types it for workers only). */
interface SyncAccessHandle {
  write(buffer: Uint8Array, options?: { at?: number }): number;
  getSize(): number;
  flush(): void;
  close(): void;
}

/** FileSystemFileHandle with the methods Chromium has that lib.dom lacks in this context. */
type FileHandle = FileSystemFileHandle & {
  createSyncAccessHandle?(): Promise<SyncAccessHandle>;
  move?(name: string): Promise<void>;
};

/** A directory's entries (lib.dom's DOM.AsyncIterable is not in this project's libs). */
const entriesOf = (dir: FileSystemDirectoryHandle) =>
  (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries();

const isNotFound = (e: unknown) =>
  e instanceof DOMException && (e.name === 'NotFoundError' || e.name === 'TypeMismatchError');

/** The directory at `path` under `root`, created when `create`; null when it is not there. */
async function dirAt(
  root: FileSystemDirectoryHandle,
  path: readonly string[],
  create: boolean,
): Promise<FileSystemDirectoryHandle | null> {
  let dir = root;
  try {
    for (const name of path) dir = await dir.getDirectoryHandle(name, { create });
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
  return dir;
}

/** The file at `path` under `root` (its folders created when `create`), or null. */
async function fileAt(root: FileSystemDirectoryHandle, path: readonly string[], create: boolean) {
  const dir = await dirAt(root, path.slice(0, -1), create);
  if (!dir) return null;
  try {
    return (await dir.getFileHandle(path[path.length - 1], { create })) as FileHandle;
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

async function fileOf(root: FileSystemDirectoryHandle, path: readonly string[]): Promise<File | null> {
  return (await (await fileAt(root, path, false))?.getFile()) ?? null;
}

async function textAt(root: FileSystemDirectoryHandle, path: readonly string[]): Promise<string | null> {
  return (await (await fileOf(root, path))?.text()) ?? null;
}

/** Replaces the file at `path` with `data` (a writable stream lands whole on close). */
async function writeWhole(root: FileSystemDirectoryHandle, path: readonly string[], data: string | Uint8Array) {
  const file = await fileAt(root, path, true);
  const w = await (file as FileHandle).createWritable();
  await w.write(data as FileSystemWriteChunkType);
  await w.close();
}

/** Removes the entry at `path` (recursively), when it is there. */
async function removeAt(root: FileSystemDirectoryHandle, path: readonly string[]) {
  const dir = await dirAt(root, path.slice(0, -1), false);
  try {
    await dir?.removeEntry(path[path.length - 1], { recursive: true });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

/** Appends `bytes` at the end of `file`: in place through a sync handle, else a writable stream. */
async function appendBytes(file: FileHandle, bytes: Uint8Array): Promise<void> {
  if (file.createSyncAccessHandle) {
    const h = await file.createSyncAccessHandle();
    try {
      let at = h.getSize();
      for (let done = 0; done < bytes.length; ) {
        const n = h.write(bytes.subarray(done), { at });
        done += n;
        at += n;
      }
      h.flush();
    } finally {
      h.close();
    }
    return;
  }
  const size = (await file.getFile()).size;
  const w = await file.createWritable({ keepExistingData: true });
  await w.seek(size);
  await w.write(bytes as FileSystemWriteChunkType);
  await w.close();
}

/** Every file's bytes under `dir`, recursively. */
async function bytesUnder(dir: FileSystemDirectoryHandle): Promise<number> {
  let total = 0;
  for await (const [, entry] of entriesOf(dir))
    total +=
      entry.kind === 'file'
        ? (await (entry as FileSystemFileHandle).getFile()).size
        : await bytesUnder(entry as FileSystemDirectoryHandle);
  return total;
}

/** The names in `dir` of the given kind. */
async function namesIn(dir: FileSystemDirectoryHandle | null, kind: FileSystemHandleKind): Promise<string[]> {
  const names: string[] = [];
  if (dir) for await (const [name, entry] of entriesOf(dir)) if (entry.kind === kind) names.push(name);
  return names.sort();
}

/** One file being downloaded: `<file>.incomplete`, a batch in memory, and the hash of the bytes so far. */
class OpfsPartialFile implements PartialFile {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** Bytes of the file on disk, once read (this object is the file's one writer). */
  private disk: number | null = null;
  /** The hash of the first `hash.bytes` bytes of the file (what is on disk, then what is pending). */
  private hash = new Sha256();

  constructor(
    private readonly root: FileSystemDirectoryHandle,
    private readonly path: string[],
    private readonly finalPath: string[],
  ) {}

  private async diskSize(): Promise<number> {
    this.disk ??= (await fileOf(this.root, this.path))?.size ?? 0;
    return this.disk;
  }

  /** Forgets the batch, the hash and the size read (the file is emptied, removed or renamed). */
  private reset(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.disk = null;
    this.hash = new Sha256();
  }

  /** Writes the batch held in memory at the file's end. */
  private async writeOut(): Promise<void> {
    if (this.pendingBytes === 0) return;
    const batch = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const c of this.pending) {
      batch.set(c, at);
      at += c.length;
    }
    const disk = await this.diskSize();
    this.pending = [];
    this.pendingBytes = 0;
    this.disk = null;
    await appendBytes((await fileAt(this.root, this.path, true)) as FileHandle, batch);
    this.disk = disk + batch.length;
  }

  /** Hashes what is on disk past what the hash has seen (a file an earlier page left), reading it back in chunks. */
  private async catchUpHash(): Promise<void> {
    const file = await fileOf(this.root, this.path);
    const size = file?.size ?? 0;
    if (this.hash.bytes > size) this.hash = new Sha256();
    for (let at = this.hash.bytes; file && at < size; at = this.hash.bytes)
      this.hash.update(new Uint8Array(await file.slice(at, Math.min(size, at + READ_BACK_BYTES)).arrayBuffer()));
  }

  async size(): Promise<number> {
    await this.writeOut();
    return this.diskSize();
  }

  async append(chunk: Uint8Array): Promise<void> {
    if (this.pendingBytes === 0 && this.hash.bytes !== (await this.diskSize())) await this.catchUpHash();
    this.hash.update(chunk);
    // A copy: the caller may reuse its buffer.
    this.pending.push(chunk.slice());
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= WRITE_BATCH_BYTES) await this.writeOut();
  }

  async truncate(): Promise<void> {
    this.reset();
    await writeWhole(this.root, this.path, new Uint8Array(0));
  }

  async sha256(): Promise<string> {
    await this.writeOut();
    await this.catchUpHash();
    return this.hash.digestHex();
  }

  async commit(): Promise<void> {
    await this.writeOut();
    this.reset();
    const file = (await fileAt(this.root, this.path, true)) as FileHandle;
    const finalName = this.finalPath[this.finalPath.length - 1];
    if (file.move) await file.move(finalName);
    else {
      const target = (await fileAt(this.root, this.finalPath, true)) as FileHandle;
      await (await file.getFile()).stream().pipeTo(await target.createWritable());
      await removeAt(this.root, this.path);
    }
  }

  async discard(): Promise<void> {
    this.reset();
    await removeAt(this.root, this.path);
  }
}

/** The SnapshotStore of the page, with what the storage panel needs: the models kept, and their removal. */
export interface OpfsSnapshotStore extends SnapshotStore {
  /** Every model kept under the root: complete snapshots (one per revision pointing at them) and cut downloads. */
  list(): Promise<KeptModel[]>;
  /** Deletes `repoId`'s ref `revision` and every snapshot it or a download of it holds that no other ref points at. */
  remove(repoId: string, revision: string): Promise<void>;
}

/** The OPFS SnapshotStore under `root` (layout in src/hub/cache-layout.ts). */
export function opfsSnapshotStore(root: FileSystemDirectoryHandle): OpfsSnapshotStore {
  /** One PartialFile per path, so a resumed download in the same page keeps its batch and hash. */
  const partials = new Map<string, OpfsPartialFile>();

  /** The manifest of the snapshot at `commit` when each file it lists is there at its size. */
  const completeManifest = async (repo: HubRepo, commit: string) => {
    const text = await textAt(root, [...snapshotPath(repo, commit), MANIFEST_FILE]);
    const manifest = text === null ? null : parseManifest(text, commit);
    if (!manifest) return null;
    for (const f of manifest.files)
      if ((await fileOf(root, snapshotFilePath(repo, commit, f.name)))?.size !== f.size) return null;
    return manifest;
  };

  /** The refs of a model folder: revision -> commit. */
  const refsOf = async (folder: FileSystemDirectoryHandle) => {
    const refs = new Map<string, string>();
    const dir = await dirAt(folder, [REFS_FOLDER], false);
    for (const revision of await namesIn(dir, 'file')) {
      const commit = parseRef((await textAt(folder, [REFS_FOLDER, revision])) ?? '');
      if (commit !== null) refs.set(revision, commit);
    }
    return refs;
  };

  const repoOf = (repoId: string, revision: string): HubRepo => parseHubId(`${repoId}@${revision}`);

  return {
    async complete(repo) {
      const commit = parseRef((await textAt(root, refPath(repo))) ?? '');
      return commit === null ? null : completeManifest(repo, commit);
    },
    partial(repo, commit, file) {
      const path = incompletePath(repo, commit, file);
      const key = path.join('/');
      let p = partials.get(key);
      if (!p) partials.set(key, (p = new OpfsPartialFile(root, path, snapshotFilePath(repo, commit, file))));
      return p;
    },
    async read(repo, commit, file) {
      const f = await fileOf(root, snapshotFilePath(repo, commit, file));
      if (!f) throw new Error(`${file} of ${repo.id} at ${commit} is not kept in this browser`);
      return new Uint8Array(await f.arrayBuffer());
    },
    async committedSize(repo, commit, file) {
      return (await fileOf(root, snapshotFilePath(repo, commit, file)))?.size ?? null;
    },
    async committedSha256(repo, commit, file) {
      const f = await fileOf(root, snapshotFilePath(repo, commit, file));
      const hash = new Sha256();
      for (let at = 0; f && at < f.size; at += READ_BACK_BYTES)
        hash.update(new Uint8Array(await f.slice(at, Math.min(f.size, at + READ_BACK_BYTES)).arrayBuffer()));
      return hash.digestHex();
    },
    async removeCommitted(repo, commit, file) {
      await removeAt(root, snapshotFilePath(repo, commit, file));
    },
    async begin(repo, record) {
      await writeWhole(root, [...snapshotPath(repo, record.commit), DOWNLOAD_RECORD_FILE], recordText(record));
    },
    async finish(repo, manifest) {
      await writeWhole(root, [...snapshotPath(repo, manifest.commit), MANIFEST_FILE], recordText(manifest));
      await writeWhole(root, refPath(repo), manifest.commit);
    },

    async list() {
      const kept: KeptModel[] = [];
      for (const folderName of await namesIn(root, 'directory')) {
        const repoId = repoIdOfFolder(folderName);
        const folder = await dirAt(root, [folderName], false);
        if (repoId === null || folder === null) continue;
        const refs = await refsOf(folder);
        const snapshots = await dirAt(folder, [SNAPSHOTS_FOLDER], false);
        for (const commit of await namesIn(snapshots, 'directory')) {
          const dir = (await dirAt(folder, [SNAPSHOTS_FOLDER, commit], false)) as FileSystemDirectoryHandle;
          const text = await textAt(dir, [DOWNLOAD_RECORD_FILE]);
          const record = text === null ? null : parseDownloadRecord(text);
          const id = record?.repo ?? repoId;
          const pointing = [...refs].filter(([, c]) => c === commit).map(([r]) => r);
          const revisions = pointing.length > 0 ? pointing : [record?.revision ?? commit];
          let manifest: SnapshotManifest | null = null;
          try {
            manifest = await completeManifest(repoOf(id, revisions[0]), commit);
          } catch {
            // A folder or record naming no valid id is listed as found, never complete.
          }
          const bytes = (await bytesUnder(dir)) - (await bytesOfRecords(dir));
          const total = manifest ? manifest.files.reduce((s, f) => s + f.size, 0) : record ? recordTotal(record) : null;
          for (const revision of revisions)
            kept.push({
              model: revision === DEFAULT_REVISION ? id : `${id}@${revision}`,
              repoId: id,
              revision,
              commit,
              origin: record?.origin ?? '',
              bytes,
              total,
              complete: manifest !== null,
            });
        }
      }
      return kept;
    },

    async remove(repoId, revision) {
      const repo = repoOf(repoId, revision);
      const folderPath = [modelFolderName(repo)];
      const folder = await dirAt(root, folderPath, false);
      if (!folder) return;
      const refs = await refsOf(folder);
      const target = refs.get(revision);
      refs.delete(revision);
      await removeAt(root, refPath(repo));
      const stillUsed = new Set(refs.values());
      const snapshots = await dirAt(folder, [SNAPSHOTS_FOLDER], false);
      for (const commit of await namesIn(snapshots, 'directory')) {
        if (stillUsed.has(commit)) continue;
        const text = await textAt(folder, [SNAPSHOTS_FOLDER, commit, DOWNLOAD_RECORD_FILE]);
        const recorded = text === null ? null : parseDownloadRecord(text)?.revision;
        if (commit === target || recorded === revision || commit === revision) {
          const prefix = `${snapshotPath(repo, commit).join('/')}/`;
          for (const key of partials.keys()) if (key.startsWith(prefix)) partials.delete(key);
          await removeAt(root, snapshotPath(repo, commit));
        }
      }
      const left = (await namesIn(snapshots, 'directory')).length + refs.size;
      if (left === 0) await removeAt(root, folderPath);
    },
  };
}

/** Bytes of the store's own records in a snapshot folder (not the model's). */
async function bytesOfRecords(dir: FileSystemDirectoryHandle): Promise<number> {
  let total = 0;
  for (const name of [MANIFEST_FILE, DOWNLOAD_RECORD_FILE]) total += (await fileOf(dir, [name]))?.size ?? 0;
  return total;
}
