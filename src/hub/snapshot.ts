// A hub model brought into a cache in the order that costs least when it is refused: config.json first (the
// caller checks that the engine runs its architecture), then the small files (tokenizer files, generation_config,
// the safetensors index), then a HEAD of every weight file for the download's size (the caller prints it and the
// memory plan, and may refuse), then the weights, each resumed and verified. A snapshot the cache holds complete is
// read with no request once each file's SHA-256 matches the one its manifest recorded (a manifest of an older
// version, with no hashes, or one that leaves out a file the reader takes, is checked against the hub again). A
// file found committed is reused only when it matches the HEAD: its size, and its SHA-256 where the hub announced
// one; one that differs is named (hooks.notice), removed and fetched again. The storage is injected (the CLI's file
// system; the page's origin-private storage).

import { COMMIT, resolveUrl, type HubRepo } from '../schema/hub-id';
import {
  downloadFile,
  fileMeta,
  HubError,
  type FileMeta,
  type HubClient,
  type PartialFile,
  type Progress,
  type TransferNotice,
} from './download';

/** What the cache records of a complete snapshot: its commit and each file it holds, with its size and SHA-256. */
export interface SnapshotManifest {
  repo: string;
  revision: string;
  commit: string;
  /** sha256: the hub's where it announced one, else the bytes' own when committed (absent in older manifests). */
  files: { name: string; size: number; sha256?: string }[];
}

/**
 * What a store records when a download starts (and again once every file's size is known): enough to list a
 * model whose download a reload or a failure cut short, and to say where it came from.
 */
export interface DownloadRecord {
  repo: string;
  revision: string;
  commit: string;
  /** The endpoint's origin the files were fetched from. */
  origin: string;
  /** The files known so far, with their size (null: the hub gave none). */
  files: { name: string; size: number | null }[];
}

/** The cache, per model: refs (revision -> commit), one folder per commit, partial files, the manifest. */
export interface SnapshotStore {
  /** The manifest of the complete snapshot `revision` points at (each file present at its size), else null. */
  complete(repo: HubRepo): Promise<SnapshotManifest | null>;
  /** `file` of the snapshot at `commit` as a partial file. */
  partial(repo: HubRepo, commit: string, file: string): PartialFile;
  /** Reads a committed file of the snapshot at `commit`. */
  read(repo: HubRepo, commit: string, file: string): Promise<Uint8Array>;
  /** Size of a committed file of the snapshot, or null when it is not there. */
  committedSize(repo: HubRepo, commit: string, file: string): Promise<number | null>;
  /** Lowercase hex SHA-256 of a committed file of the snapshot (read in chunks). */
  committedSha256(repo: HubRepo, commit: string, file: string): Promise<string>;
  /** Removes a committed file of the snapshot (one that does not match what the hub announced). */
  removeCommitted(repo: HubRepo, commit: string, file: string): Promise<void>;
  /** Records the complete snapshot and points `repo.revision` at it. */
  finish(repo: HubRepo, manifest: SnapshotManifest): Promise<void>;
  /** Records what is being fetched (cache-layout's DOWNLOAD_RECORD_FILE), before the files it lists. */
  begin?(repo: HubRepo, record: DownloadRecord): Promise<void>;
}

/** Which files a model needs once its config.json is read (the reader gets optional small files). */
export interface FilePlan {
  /** Small files to fetch when present (a 404 means absent). */
  optional: string[];
  /** Files that must exist, decided from config.json and the optional files (weights, or a classifier's files). */
  required(read: (file: string) => Promise<Uint8Array | null>): Promise<string[]>;
}

/** The hooks a caller gives a download: the architecture check, the size report, progress. */
export interface SnapshotHooks {
  /** Reads config.json's text and throws when the engine cannot run it; nothing else is fetched then. */
  checkConfig(configText: string): void;
  /** Told the files still to download and their bytes (null: unknown) before any is fetched; may throw to refuse. */
  beforeDownload?(files: { name: string; size: number | null }[]): void;
  progress?: Progress;
  /** Told when a transfer stalls or waits to resume (src/hub/download.ts's TransferNotice). */
  transfer?(notice: TransferNotice): void;
  /** Told, in words, of a cached file that did not match and is fetched again. */
  notice?(line: string): void;
}

export interface Snapshot {
  commit: string;
  manifest: SnapshotManifest;
  /** True when the cache held it complete and nothing was requested. */
  cached: boolean;
}

/** The commit folder name: the hub's X-Repo-Commit, else the revision itself (a hub that sends none). */
function commitOf(meta: FileMeta, repo: HubRepo): string {
  if (meta.commit !== null && COMMIT.test(meta.commit)) return meta.commit;
  return repo.revision;
}

/** Brings `repo` into `store`; see the file's head for the order. */
export async function fetchSnapshot(
  client: HubClient,
  repo: HubRepo,
  store: SnapshotStore,
  plan: FilePlan,
  hooks: SnapshotHooks,
): Promise<Snapshot> {
  const cached = await store.complete(repo);
  if (cached && (await cachedSnapshotHolds(store, repo, cached, plan, hooks)))
    return { commit: cached.commit, manifest: cached, cached: true };

  // config.json first, at the revision asked for; every later file at the commit it resolved to.
  const headed = await fileMeta(client, repo, 'config.json');
  const commit = commitOf(headed, repo);
  // Its bytes too are read at that commit, so that the revision cannot move between the HEAD and the GET.
  const configMeta =
    headed.location.origin === client.endpoint.origin && commit !== repo.revision
      ? { ...headed, location: resolveUrl(client.endpoint, repo, 'config.json', commit) }
      : headed;
  const files = new Map<string, { size: number; sha256: string }>();
  const record = (known: { name: string; size: number | null }[]) =>
    store.begin?.(repo, {
      repo: repo.id,
      revision: repo.revision,
      commit,
      origin: client.endpoint.origin,
      files: known,
    });
  await record([{ name: 'config.json', size: configMeta.size }]);
  /** A committed file that differs from the HEAD (size, or SHA-256 where announced) is named and removed. */
  const keptMatches = async (file: string, meta: FileMeta, size: number): Promise<boolean> => {
    let why: string | null = null;
    if (meta.size !== null && size !== meta.size) why = `${size} bytes, the hub announces ${meta.size}`;
    else if (meta.sha256 !== null) {
      const got = await store.committedSha256(repo, commit, file);
      if (got !== meta.sha256) why = `SHA-256 ${got}, the hub announces ${meta.sha256}`;
    }
    if (why === null) return true;
    hooks.notice?.(`${file} of ${repo.id} in the cache does not match the hub (${why}): fetching it again`);
    await store.removeCommitted(repo, commit, file);
    return false;
  };
  const get = async (file: string, meta: FileMeta) => {
    const have = await store.committedSize(repo, commit, file);
    if (have === null || !(await keptMatches(file, meta, have)))
      await downloadFile(
        client,
        repo,
        file,
        commit,
        meta,
        store.partial(repo, commit, file),
        hooks.progress,
        hooks.transfer,
      );
    const size = (await store.committedSize(repo, commit, file)) ?? 0;
    files.set(file, { size, sha256: meta.sha256 ?? (await store.committedSha256(repo, commit, file)) });
  };
  await get('config.json', configMeta);
  hooks.checkConfig(new TextDecoder().decode(await store.read(repo, commit, 'config.json')));

  for (const file of plan.optional) {
    let meta: FileMeta;
    try {
      meta = await fileMeta(client, repo, file, commit);
    } catch (e) {
      if (e instanceof HubError && e.status === 404) {
        continue;
      }
      throw e;
    }
    await get(file, meta);
  }
  const readIfPresent = async (file: string) => (files.has(file) ? store.read(repo, commit, file) : null);
  const required = (await plan.required(readIfPresent)).filter((f) => !files.has(f));

  const metas: { name: string; meta: FileMeta }[] = [];
  for (const name of required) metas.push({ name, meta: await fileMeta(client, repo, name, commit) });
  const todo: { name: string; size: number | null }[] = [];
  for (const { name, meta } of metas)
    if ((await store.committedSize(repo, commit, name)) === null) todo.push({ name, size: meta.size });
  await record([
    ...[...files].map(([name, f]) => ({ name, size: f.size })),
    ...metas.map(({ name, meta }) => ({ name, size: meta.size })),
  ]);
  hooks.beforeDownload?.(todo);
  for (const { name, meta } of metas) await get(name, meta);

  const manifest: SnapshotManifest = {
    repo: repo.id,
    revision: repo.revision,
    commit,
    files: [...files].map(([name, f]) => ({ name, size: f.size, sha256: f.sha256 })),
  };
  await store.finish(repo, manifest);
  return { commit, manifest, cached: false };
}

/**
 * Whether a snapshot the store holds complete may be read as it is: every file's SHA-256 equals its manifest's
 * (a manifest without hashes, from an older version, is checked against the hub instead). A file that differs is
 * named and removed, and the snapshot is fetched again. So is a snapshot whose manifest leaves out a file the
 * reader would take from the folder (config.json, an optional file present there, a file the plan requires): the
 * file left out is then checked against the hub's HEAD like any file found committed.
 */
async function cachedSnapshotHolds(
  store: SnapshotStore,
  repo: HubRepo,
  manifest: SnapshotManifest,
  plan: FilePlan,
  hooks: SnapshotHooks,
): Promise<boolean> {
  const listed = new Set(manifest.files.map((f) => f.name));
  const unlisted: string[] = [];
  for (const file of ['config.json', ...plan.optional])
    if (!listed.has(file) && (await store.committedSize(repo, manifest.commit, file)) !== null) unlisted.push(file);
  if (!listed.has('config.json')) unlisted.push('config.json');
  else {
    const read = async (file: string) => (listed.has(file) ? store.read(repo, manifest.commit, file) : null);
    for (const file of await plan.required(read)) if (!listed.has(file)) unlisted.push(file);
  }
  for (const file of new Set(unlisted))
    hooks.notice?.(`${file} of ${repo.id} is not in its record in the cache: checking it against the hub`);
  let holds = unlisted.length === 0;
  for (const f of manifest.files) {
    if (f.sha256 === undefined) {
      holds = false;
      continue;
    }
    const got = await store.committedSha256(repo, manifest.commit, f.name);
    if (got === f.sha256) continue;
    hooks.notice?.(
      `${f.name} of ${repo.id} in the cache does not match its record (SHA-256 ${got}, recorded ${f.sha256}): fetching it again`,
    );
    await store.removeCommitted(repo, manifest.commit, f.name);
    holds = false;
  }
  return holds;
}
