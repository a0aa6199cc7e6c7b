// The layout of a hub cache, shared by the CLI's folder (src/cli/hub-cache.ts) and the page's origin-private
// storage (src/io/opfs-snapshot-store.ts), after huggingface_hub's but without its blobs/ and symlinks:
//   models--<org>--<name>/refs/<revision>                            the commit the revision resolved to, once complete
//   models--<org>--<name>/snapshots/<commit>/<file>                   each file, renamed in once verified
//   models--<org>--<name>/snapshots/<commit>/<file>.incomplete        a download in progress (resumed with Range)
//   models--<org>--<name>/snapshots/<commit>/.rl-lab-download.json    what is being fetched: revision, origin, files
//   models--<org>--<name>/snapshots/<commit>/.rl-lab-snapshot.json    written last: the snapshot is complete
// Paths are arrays of names (each checked by hub-id's rules before it gets here); each store joins them its own way.
// Parsing of the two JSON records lives here so both stores accept and refuse the same files.

import type { HubRepo } from '../schema/hub-id';
import type { DownloadRecord, SnapshotManifest } from './snapshot';

export const MANIFEST_FILE = '.rl-lab-snapshot.json';
export const DOWNLOAD_RECORD_FILE = '.rl-lab-download.json';
export const INCOMPLETE_SUFFIX = '.incomplete';
export const REFS_FOLDER = 'refs';
export const SNAPSHOTS_FOLDER = 'snapshots';
const MODEL_PREFIX = 'models--';

/** `models--<org>--<name>`. */
export const modelFolderName = (repo: Pick<HubRepo, 'org' | 'name'>): string =>
  `${MODEL_PREFIX}${repo.org}--${repo.name}`;

/** The repo id (`org/name`) a model folder's name stands for, or null when the name is not a model folder's. */
export function repoIdOfFolder(folder: string): string | null {
  if (!folder.startsWith(MODEL_PREFIX)) return null;
  const rest = folder.slice(MODEL_PREFIX.length);
  const cut = rest.indexOf('--');
  return cut > 0 && cut < rest.length - 2 ? `${rest.slice(0, cut)}/${rest.slice(cut + 2)}` : null;
}

export const refPath = (repo: HubRepo, revision = repo.revision): string[] => [
  modelFolderName(repo),
  REFS_FOLDER,
  revision,
];

export const snapshotPath = (repo: HubRepo, commit: string): string[] => [
  modelFolderName(repo),
  SNAPSHOTS_FOLDER,
  commit,
];

/** A file's path in the snapshot at `commit` (a file name may hold `/`: `onnx/model.onnx`). */
export const snapshotFilePath = (repo: HubRepo, commit: string, file: string): string[] => [
  ...snapshotPath(repo, commit),
  ...file.split('/'),
];

/** The partial file beside where `file` will be. */
export function incompletePath(repo: HubRepo, commit: string, file: string): string[] {
  const path = snapshotFilePath(repo, commit, file);
  path[path.length - 1] += INCOMPLETE_SUFFIX;
  return path;
}

/** A commit (or revision) usable as one folder name: what a ref file may point at. */
export const isFolderName = (name: string): boolean => /^[A-Za-z0-9._-]+$/.test(name) && !name.includes('..');

/** A file name of a manifest: relative, no empty, `.` or `..` part. */
const isRelativeFile = (name: unknown): name is string =>
  typeof name === 'string' && name !== '' && name.split('/').every((p) => p !== '' && p !== '.' && p !== '..');

/** The commit a ref file holds, or null when it is not one a snapshot folder can be named by. */
export function parseRef(text: string): string | null {
  const commit = text.trim();
  return isFolderName(commit) ? commit : null;
}

/** A snapshot's manifest from its text, or null when it is not one (or names another commit). */
export function parseManifest(text: string, commit: string): SnapshotManifest | null {
  let m: SnapshotManifest;
  try {
    m = JSON.parse(text) as SnapshotManifest;
  } catch {
    return null;
  }
  if (typeof m !== 'object' || m === null || m.commit !== commit || !Array.isArray(m.files)) return null;
  const ok = m.files.every(
    (f) =>
      isRelativeFile(f?.name) &&
      Number.isSafeInteger(f.size) &&
      f.size >= 0 &&
      (f.sha256 === undefined || (typeof f.sha256 === 'string' && /^[0-9a-f]{64}$/.test(f.sha256))),
  );
  return ok ? m : null;
}

/** A download record from its text, or null when it is not one. */
export function parseDownloadRecord(text: string): DownloadRecord | null {
  let r: DownloadRecord;
  try {
    r = JSON.parse(text) as DownloadRecord;
  } catch {
    return null;
  }
  if (typeof r !== 'object' || r === null) return null;
  const strings = [r.repo, r.revision, r.commit, r.origin].every((s) => typeof s === 'string');
  const files =
    Array.isArray(r.files) &&
    r.files.every((f) => isRelativeFile(f?.name) && (f.size === null || (Number.isSafeInteger(f.size) && f.size >= 0)));
  return strings && files ? r : null;
}

/** A record's or manifest's text as written: two-space JSON and a newline. */
export const recordText = (value: SnapshotManifest | DownloadRecord): string => `${JSON.stringify(value, null, 2)}\n`;

/** Bytes of the files a record lists, or null when one has no known size. */
export function recordTotal(record: DownloadRecord): number | null {
  let total = 0;
  for (const f of record.files) {
    if (f.size === null) return null;
    total += f.size;
  }
  return total;
}
