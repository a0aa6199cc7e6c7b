// A training run's --out folder, kept from being lost or mixed: a folder that holds another run is refused unless the
// run is resumed or --overwrite is given (and then only the run's own files go, after the new run's checks passed); a
// lock file (.rl-lab.lock: pid, host, start time, created exclusively) keeps a second writer out, a stale one (its pid
// dead on this host) is taken over with a notice; temporaries a killed save left (.<name>.tmp-<pid>, pid dead) are
// swept; and the checkpoint and trainer state carry the run's id and a SHA-256 of their contents in their safetensors
// headers, which --resume checks, so a pair from two runs or a state whose bytes changed is refused by name.

import { createHash, randomUUID } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  rmSync,
  rmdirSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './args';
import { FileError, TRAINER_STATE_FILE, mkdirOrFail, onFile, readFileOrFail } from './files';

/** The lock file a run holds in its folder while it writes there. */
export const LOCK_FILE = '.rl-lab.lock';

/** What a run writes into its folder: any of them there means the folder holds a run. */
export const RUN_FILES = [
  'rl_config.json',
  'metrics.jsonl',
  'rollouts.jsonl',
  'eval.jsonl',
  TRAINER_STATE_FILE,
  'model.safetensors',
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'adapter',
] as const;

/** The safetensors metadata keys of a run's seal: the run's id, and the SHA-256 of everything else in the file. */
export const RUN_ID_KEY = 'rl_lab_run_id';
export const CONTENT_HASH_KEY = 'rl_lab_sha256';

/** A new run folder's id: a random UUID, recorded in rl_config.json and in every checkpoint and trainer state the run saves. */
export function newFolderRunId(): string {
  return randomUUID();
}

/** The run files present in `dir` (empty when it does not exist). */
export function runFilesIn(dir: string): string[] {
  return RUN_FILES.filter((f) => existsSync(join(dir, f)));
}

/** The run id recorded in a folder's rl_config.json, or null (none, or not readable as JSON). */
export function folderRunId(dir: string): string | null {
  const path = join(dir, 'rl_config.json');
  if (!existsSync(path)) return null;
  try {
    const id = (JSON.parse(readFileOrFail(path).toString('utf8')) as { run_id?: unknown }).run_id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

/** The pid is a live process on this machine (EPERM: alive, someone else's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LockHolder {
  pid: number;
  host: string;
  started: string;
}

function readLock(path: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileOrFail(path).toString('utf8')) as Partial<LockHolder>;
    if (typeof h.pid === 'number' && typeof h.host === 'string')
      return { pid: h.pid, host: h.host, started: String(h.started ?? '?') };
  } catch {
    // An unreadable lock (cut off while it was written) names nobody.
  }
  return null;
}

/** Whether a lock's holder may still be writing: alive on this host, or on another host (which cannot be asked). */
function lockHeld(h: LockHolder | null): boolean {
  if (h === null) return false;
  return h.host !== hostname() || pidAlive(h.pid);
}

function heldText(dir: string, h: LockHolder): string {
  return `${dir} is in use by another run (pid ${h.pid} on ${h.host}, started ${h.started}; lock file ${join(dir, LOCK_FILE)}): wait for it to end or choose another --out`;
}

/** The nearest existing folder at or above `dir`. */
function nearestExisting(dir: string): string {
  let d = resolve(dir);
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}

/**
 * How a run may use its folder: 'new' (the folder must hold no run), 'resume' (it may hold the resumed run, the one
 * `runId` names), 'overwrite' (it may hold any run, cleared once the new run's checks passed).
 */
export type FolderMode = 'new' | 'resume' | 'overwrite';

/**
 * Checks `dir` before anything is read or written for the run, writing nothing: it is a writable folder (or can be
 * made one), no live run holds its lock, and it holds no run unless the mode allows it. Throws UsageError (refused
 * input) or FileError naming the folder. `access` throws when a folder cannot be written (a test may stand in for it).
 */
export function checkRunFolder(
  dir: string,
  mode: FolderMode,
  runId: string | null = null,
  access: (path: string) => void = (path) => accessSync(path, constants.W_OK | constants.X_OK),
): void {
  const at = nearestExisting(dir);
  if (!statSync(at).isDirectory())
    throw new FileError(at, 'use it as the output folder', 'ENOTDIR', 'it is a file, not a directory');
  try {
    access(at);
  } catch {
    throw new FileError(
      dir,
      'write the run there',
      'EACCES',
      at === resolve(dir) ? 'the folder is not writable' : `the folder above it, ${at}, is not writable`,
    );
  }
  if (!existsSync(dir)) return;
  const holder = readLock(join(dir, LOCK_FILE));
  const mine = holder !== null && holder.pid === process.pid && holder.host === hostname();
  if (holder && !mine && lockHeld(holder)) throw new UsageError(heldText(dir, holder));
  const found = runFilesIn(dir);
  if (found.length === 0 || mode === 'overwrite') return;
  const what = `${dir} holds another run (${found.join(', ')})`;
  const how = `continue it with --resume ${join(dir, TRAINER_STATE_FILE)}, replace it with --overwrite, or choose another --out`;
  if (mode === 'new') throw new UsageError(`${what}; ${how}`);
  const there = folderRunId(dir);
  if (runId !== null && there !== null && there !== runId)
    throw new UsageError(`${dir} holds another run (run ${there}) than the resumed one (run ${runId}); ${how}`);
}

/** A held lock on a run folder; release() removes it. */
export interface RunLock {
  release(): void;
}

/**
 * Takes the folder's lock (created exclusively: a second writer is refused, naming the holder); a stale lock, its
 * pid dead on this host, is taken over with a notice. The folder must exist.
 */
export function lockRunFolder(dir: string, notice: (text: string) => void): RunLock {
  const path = join(dir, LOCK_FILE);
  const holder: LockHolder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0)
        return onFile(path, 'create the lock file', () => {
          throw e;
        });
      const other = readLock(path);
      if (other && lockHeld(other)) throw new UsageError(heldText(dir, other));
      notice(
        `taking over the stale lock ${path}${other ? ` (pid ${other.pid} on ${other.host}, started ${other.started}, is no longer running)` : ' (unreadable)'}`,
      );
      rmSync(path, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(holder)}\n`);
    } finally {
      closeSync(fd);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const now = readLock(path);
        if (now && now.pid === holder.pid && now.host === holder.host) rmSync(path, { force: true });
      },
    };
  }
}

/**
 * Claims a run's folder for its first write, once the run's checks passed: the folder made, its lock taken, the
 * check of checkRunFolder made again under the lock (another run may have written there meanwhile), and the
 * temporaries of a killed save swept. On a refusal the lock goes, and so does the folder when this made it empty.
 */
export function claimRunFolder(
  dir: string,
  mode: FolderMode,
  runId: string | null,
  notice: (text: string) => void,
): RunLock {
  const existed = existsSync(dir);
  mkdirOrFail(dir);
  const lock = lockRunFolder(dir, notice);
  try {
    checkRunFolder(dir, mode, runId);
  } catch (e) {
    lock.release();
    if (!existed) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty: something else was put there meanwhile; it stays.
      }
    }
    throw e;
  }
  const swept = sweepTemporaries(dir);
  if (swept.length) notice(`removed ${swept.length} temporary file(s) a cut-off save left: ${swept.join(', ')}`);
  return lock;
}

/** Temporaries an atomic write leaves when its process is killed mid-save: .<name>.tmp-<pid>. */
const TEMPORARY = /^\..+\.tmp-(\d+)$/;

/** Removes the temporaries in `dir` (and its adapter folder) whose writer's pid is dead; returns their names. */
export function sweepTemporaries(dir: string): string[] {
  const swept: string[] = [];
  for (const d of [dir, join(dir, 'adapter')]) {
    if (!existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      const m = TEMPORARY.exec(name);
      if (!m || pidAlive(Number(m[1]))) continue;
      rmSync(join(d, name), { force: true });
      swept.push(join(d, name));
    }
  }
  return swept;
}

/** Removes the run's own files from `dir` (--overwrite, after the new run's checks passed); nothing else there. */
export function clearRunFiles(dir: string): string[] {
  const found = runFilesIn(dir);
  for (const f of found)
    onFile(join(dir, f), 'remove it (--overwrite)', () => rmSync(join(dir, f), { recursive: true }));
  return found;
}

// --- The seal in a safetensors header -----------------------------------------------------------------------------

interface RawSafetensors {
  header: Record<string, unknown>;
  data: Uint8Array;
}

function splitSafetensors(bytes: Uint8Array): RawSafetensors | null {
  if (bytes.length < 8) return null;
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (8 + n > bytes.length) return null;
  try {
    const header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n))) as unknown;
    if (!header || typeof header !== 'object' || Array.isArray(header)) return null;
    return { header: header as Record<string, unknown>, data: bytes.subarray(8 + n) };
  } catch {
    return null;
  }
}

function joinSafetensors(header: Record<string, unknown>, data: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLen = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLen + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLen), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLen);
  out.set(data, 8 + headerLen);
  return out;
}

/** SHA-256 over the header (without the hash itself) and the tensor data. */
function contentHash(header: Record<string, unknown>, data: Uint8Array): string {
  const meta = { ...((header.__metadata__ as Record<string, string> | undefined) ?? {}) };
  delete meta[CONTENT_HASH_KEY];
  return createHash('sha256')
    .update(JSON.stringify({ ...header, __metadata__: meta }))
    .update(data)
    .digest('hex');
}

/** A safetensors file with the run's id and the SHA-256 of its contents added to its header's metadata. */
export function sealSafetensors(bytes: Uint8Array, runId: string): Uint8Array {
  const raw = splitSafetensors(bytes);
  if (!raw) throw new Error('sealing a save: not a safetensors file');
  const header = {
    ...raw.header,
    __metadata__: { ...((raw.header.__metadata__ as Record<string, string> | undefined) ?? {}), [RUN_ID_KEY]: runId },
  };
  (header.__metadata__ as Record<string, string>)[CONTENT_HASH_KEY] = contentHash(header, raw.data);
  return joinSafetensors(header, raw.data);
}

/** A file's seal: its run id (null for a file saved before runs carried one), checked against its contents. */
export interface Seal {
  runId: string | null;
}

/**
 * The seal of a saved safetensors file, its content hash checked: a file whose bytes changed since it was saved is
 * refused (UsageError naming `path`). A file without a seal (saved by an earlier version) gives runId null.
 */
export function readSeal(bytes: Uint8Array, path: string): Seal {
  const raw = splitSafetensors(bytes);
  const meta = (raw?.header.__metadata__ ?? {}) as Record<string, unknown>;
  const hash = meta[CONTENT_HASH_KEY];
  const runId = meta[RUN_ID_KEY];
  if (!raw || typeof hash !== 'string') return { runId: typeof runId === 'string' ? runId : null };
  if (contentHash(raw.header, raw.data) !== hash)
    throw new UsageError(
      `${path}: its contents changed since it was saved (the SHA-256 in its header does not match: a damaged or edited file); it cannot be used`,
    );
  return { runId: typeof runId === 'string' ? runId : null };
}

/** The seal of a file on disk, or null when it does not exist. */
export function readSealOf(path: string): Seal | null {
  return existsSync(path) ? readSeal(new Uint8Array(readFileOrFail(path)), path) : null;
}
