// A hub model brought into a cache in the order that costs least when it is refused: config.json first (the
// caller checks that the engine runs its architecture), then the small files (tokenizer files, generation_config,
// the safetensors index), then a HEAD of every weight file for the download's size (the caller prints it and the
// memory plan, and may refuse), then the weights, each resumed and verified. A snapshot the cache holds complete is
// read with no request. The storage is injected (the CLI's file system; the page's origin-private storage).

import { COMMIT, resolveUrl, type HubRepo } from '../schema/hub-id';
import {
  downloadFile,
  fileMeta,
  HubError,
  type FileMeta,
  type HubClient,
  type PartialFile,
  type Progress,
} from './download';

/** What the cache records of a complete snapshot: its commit and each file it holds, with its size. */
export interface SnapshotManifest {
  repo: string;
  revision: string;
  commit: string;
  files: { name: string; size: number }[];
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
  if (cached) return { commit: cached.commit, manifest: cached, cached: true };

  // config.json first, at the revision asked for; every later file at the commit it resolved to.
  const headed = await fileMeta(client, repo, 'config.json');
  const commit = commitOf(headed, repo);
  // Its bytes too are read at that commit, so that the revision cannot move between the HEAD and the GET.
  const configMeta =
    headed.location.origin === client.endpoint.origin && commit !== repo.revision
      ? { ...headed, location: resolveUrl(client.endpoint, repo, 'config.json', commit) }
      : headed;
  const files = new Map<string, number>();
  const record = (known: { name: string; size: number | null }[]) =>
    store.begin?.(repo, {
      repo: repo.id,
      revision: repo.revision,
      commit,
      origin: client.endpoint.origin,
      files: known,
    });
  await record([{ name: 'config.json', size: configMeta.size }]);
  const get = async (file: string, meta: FileMeta) => {
    const have = await store.committedSize(repo, commit, file);
    if (have === null)
      await downloadFile(client, repo, file, commit, meta, store.partial(repo, commit, file), hooks.progress);
    const size = (await store.committedSize(repo, commit, file)) ?? 0;
    files.set(file, size);
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
    ...[...files].map(([name, size]) => ({ name, size })),
    ...metas.map(({ name, meta }) => ({ name, size: meta.size })),
  ]);
  hooks.beforeDownload?.(todo);
  for (const { name, meta } of metas) await get(name, meta);

  const manifest: SnapshotManifest = {
    repo: repo.id,
    revision: repo.revision,
    commit,
    files: [...files].map(([name, size]) => ({ name, size })),
  };
  await store.finish(repo, manifest);
  return { commit, manifest, cached: false };
}
