// The CLI's hub cache on the file system, and the hub ids of a run's `checkpoint` and `reward_model` resolved into
// it. Under RL_LAB_CACHE_DIR (default $XDG_CACHE_HOME/rl-lab, else ~/.cache/rl-lab), in the layout of
// src/hub/cache-layout.ts (after huggingface_hub's: models--<org>--<name>/refs/<revision>, snapshots/<commit>/<file>,
// <file>.incomplete while it downloads, a manifest written last). A snapshot found complete is read with no
// request. The token (HF_TOKEN) is held in memory only: never in the cache, the run folder, a log line or an error.

import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { checkpointDir } from '../schema/checkpoint-path';
import { rewardModelDir } from '../engine/learned-reward';
import type { AssetLoader } from '../engine/start-policy';
import { formatBytes } from '../core/format';
import type { ModelConfig } from '../schema/model-config';
import {
  seconds,
  transferOfTimeoutSetting,
  type HubClient,
  type PartialFile,
  type TransferPolicy,
} from '../hub/download';
import { looksLikeHubId, parseEndpoint, parseHubId, type HubRepo } from '../schema/hub-id';
import { SETTINGS } from '../schema/config';
import {
  DOWNLOAD_RECORD_FILE,
  incompletePath,
  MANIFEST_FILE,
  parseManifest,
  parseRef,
  recordText,
  refPath,
  snapshotFilePath,
  snapshotPath,
} from '../hub/cache-layout';
import { fetchSnapshot, type SnapshotStore } from '../hub/snapshot';
import { CHECKPOINT_FILE_PLAN, checkpointModelConfig, REWARD_MODEL_FILE_PLAN } from '../engine/hub-plans';

export { CHECKPOINT_FILE_PLAN, checkpointModelConfig, REWARD_MODEL_FILE_PLAN } from '../engine/hub-plans';
import { UsageError } from './args';
import { PUBLIC_DIR } from './files';

/** The cache folder: RL_LAB_CACHE_DIR, else $XDG_CACHE_HOME/rl-lab, else ~/.cache/rl-lab. */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RL_LAB_CACHE_DIR) return env.RL_LAB_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'rl-lab');
}

const snapshotDir = (root: string, repo: HubRepo, commit: string) => join(root, ...snapshotPath(repo, commit));

/** Writes `text` to `path` through a temporary file and a rename, so a reader never sees half of it. */
function writeAtomically(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp-${process.pid}`, text);
  renameSync(`${path}.tmp-${process.pid}`, path);
}

function fileSize(path: string): number | null {
  try {
    const s = statSync(path);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}

/** SHA-256 of the file at `path`, read in chunks (no file: the hash of no bytes). */
function sha256OfFile(path: string): string {
  const hash = createHash('sha256');
  if (fileSize(path) === null) return hash.digest('hex');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** The file-system SnapshotStore under `root` (layout in the file's head). */
export function fsSnapshotStore(root: string): SnapshotStore {
  return {
    async complete(repo) {
      const ref = join(root, ...refPath(repo));
      const commit = existsSync(ref) ? parseRef(readFileSync(ref, 'utf8')) : null;
      if (commit === null) return null;
      const dir = snapshotDir(root, repo, commit);
      const manifestPath = join(dir, MANIFEST_FILE);
      const manifest = existsSync(manifestPath) ? parseManifest(readFileSync(manifestPath, 'utf8'), commit) : null;
      const whole = manifest?.files.every((f) => fileSize(join(dir, f.name)) === f.size);
      return whole ? manifest : null;
    },
    partial(repo, commit, file): PartialFile {
      const final = join(root, ...snapshotFilePath(repo, commit, file));
      const path = join(root, ...incompletePath(repo, commit, file));
      return {
        size: async () => fileSize(path) ?? 0,
        append: async (chunk) => {
          mkdirSync(dirname(path), { recursive: true });
          appendFileSync(path, chunk);
        },
        truncate: async () => writeFileSync(path, new Uint8Array(0)),
        sha256: async () => sha256OfFile(path),
        commit: async () => {
          if (!existsSync(path)) {
            mkdirSync(dirname(path), { recursive: true });
            writeFileSync(path, new Uint8Array(0));
          }
          renameSync(path, final);
        },
        discard: async () => rmSync(path, { force: true }),
      };
    },
    read: async (repo, commit, file) => new Uint8Array(readFileSync(join(snapshotDir(root, repo, commit), file))),
    committedSize: async (repo, commit, file) => fileSize(join(snapshotDir(root, repo, commit), file)),
    committedSha256: async (repo, commit, file) => sha256OfFile(join(root, ...snapshotFilePath(repo, commit, file))),
    removeCommitted: async (repo, commit, file) =>
      rmSync(join(root, ...snapshotFilePath(repo, commit, file)), { force: true }),
    async finish(repo, manifest) {
      writeAtomically(join(snapshotDir(root, repo, manifest.commit), MANIFEST_FILE), recordText(manifest));
      writeAtomically(join(root, ...refPath(repo)), manifest.commit);
    },
    async begin(repo, record) {
      writeAtomically(join(snapshotDir(root, repo, record.commit), DOWNLOAD_RECORD_FILE), recordText(record));
    },
  };
}

/** How the CLI reaches a hub: the endpoint (flag, else HF_ENDPOINT, else the Hugging Face Hub), HF_TOKEN, the cache folder. */
export interface HubOptions {
  endpoint: string;
  token: string | null;
  cacheDir: string;
  fetch?: typeof fetch;
  /** Lines for the person (stderr in the CLI). */
  log(line: string): void;
  /** Told the model's config before its weights are fetched, to print (and check) the memory plan; may throw. */
  plan?(model: ModelConfig): void;
  progress?(file: string, bytes: number, total: number | null): void;
  /** Timeouts and resumes of every transfer (absent fields: src/hub/download.ts's DEFAULT_TRANSFER_POLICY). */
  transfer?: Partial<TransferPolicy>;
}

/** HubOptions from the environment: `flag`, else HF_ENDPOINT, else the Hugging Face Hub; HF_TOKEN; RL_LAB_CACHE_DIR; RL_LAB_HUB_TIMEOUT. */
export function hubOptionsFromEnv(flag: string | null, env: NodeJS.ProcessEnv = process.env): Omit<HubOptions, 'log'> {
  const timeout = SETTINGS.hub_timeout.env;
  let transfer: HubOptions['transfer'];
  try {
    transfer = transferOfTimeoutSetting(env[timeout], timeout);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return {
    endpoint: flag ?? (env[SETTINGS.hf_endpoint.env] || SETTINGS.hf_endpoint.default),
    token: env.HF_TOKEN || null,
    cacheDir: hubCacheDir(env),
    ...(Object.keys(transfer).length > 0 && { transfer }),
  };
}

/**
 * A hub id when `value` (a run's checkpoint or reward_model) names one: the shape org/name[@rev], and no such
 * folder here or under public/ (a local folder of that name wins). A bad id is refused, naming the field.
 */
export function hubRepoOf(field: string, value: string | null): HubRepo | null {
  if (value === null || isAbsolute(value) || !looksLikeHubId(value)) return null;
  // A folder here, or a site path the CLI reads from public/ (models/copy-reward-model), is a folder, not an id.
  if (existsSync(value) || existsSync(new URL(value, PUBLIC_DIR))) return null;
  try {
    return parseHubId(value);
  } catch (e) {
    throw new UsageError(`${field}: ${(e as Error).message}`);
  }
}

/** Downloads (or finds in the cache) one model; returns its snapshot folder. */
export async function fetchHubModel(
  repo: HubRepo,
  kind: 'checkpoint' | 'reward_model',
  opts: HubOptions,
): Promise<string> {
  const endpoint = parseEndpoint(opts.endpoint);
  const client: HubClient = {
    endpoint,
    token: opts.token,
    fetch: opts.fetch ?? fetch,
    ...(opts.transfer && { transfer: opts.transfer }),
  };
  const store = fsSnapshotStore(opts.cacheDir);
  const snap = await fetchSnapshot(
    client,
    repo,
    store,
    kind === 'checkpoint' ? CHECKPOINT_FILE_PLAN : REWARD_MODEL_FILE_PLAN,
    {
      checkConfig: (text) => {
        if (kind !== 'checkpoint') return;
        const model = checkpointModelConfig(text);
        opts.plan?.(model);
      },
      beforeDownload: (files) => {
        if (files.length === 0) return;
        const known = files.reduce((s, f) => s + (f.size ?? 0), 0);
        const unknown = files.filter((f) => f.size === null).length;
        opts.log(
          `${kind} ${repo.id}@${repo.revision}: downloading ${files.length} file${files.length > 1 ? 's' : ''}, ${formatBytes(known)}${unknown ? ` (+${unknown} of unknown size)` : ''} from ${endpoint.origin} into ${opts.cacheDir}`,
        );
      },
      progress: opts.progress,
      transfer: (n) =>
        opts.log(
          n.kind === 'stalled'
            ? `${kind} ${repo.id}: no data from ${n.host} for ${seconds(n.silentMs)} while downloading ${n.file} (stalled)`
            : `${kind} ${repo.id}: ${n.reason}; retrying ${n.retry} of ${n.retries} in ${seconds(n.waitMs)}, from byte ${n.bytes}`,
        ),
      notice: (line) => opts.log(`${kind} ${repo.id}: ${line}`),
    },
  );
  const dir = snapshotDir(opts.cacheDir, repo, snap.commit);
  opts.log(
    `${kind} ${repo.id}@${repo.revision}: ${snap.cached ? 'read from the cache' : 'downloaded'}, commit ${snap.commit} (${dir})`,
  );
  return dir;
}

/**
 * An AssetLoader that reads a hub id's files (`org/name@rev/config.json`, as checkpointDir and rewardModelDir name
 * them) from their snapshot folders, and everything else through `base`.
 */
export function hubAssets(base: AssetLoader, folders: ReadonlyMap<string, string>): AssetLoader {
  const map = (path: string) => {
    for (const [prefix, dir] of folders) if (path.startsWith(prefix)) return join(dir, path.slice(prefix.length));
    return path;
  };
  return { bytes: (p) => base.bytes(map(p)), text: (p) => base.text(map(p)) };
}

/**
 * The hub ids of a run's checkpoint, reward_model and teachers, downloaded or found in the cache, as an AssetLoader
 * over `base`.
 */
export async function runHubAssets(
  config: {
    checkpoint: string | null;
    reward_model: string | null;
    teacher?: string | null;
    teachers?: Readonly<Record<string, string>> | null;
  },
  base: AssetLoader,
  opts: HubOptions,
): Promise<AssetLoader> {
  const folders = new Map<string, string>();
  const ck = hubRepoOf('checkpoint', config.checkpoint);
  if (ck && config.checkpoint)
    folders.set(checkpointDir(config.checkpoint), await fetchHubModel(ck, 'checkpoint', opts));
  const rm = hubRepoOf('reward_model', config.reward_model);
  if (rm && config.reward_model)
    folders.set(rewardModelDir(config.reward_model), await fetchHubModel(rm, 'reward_model', opts));
  // The teachers are checkpoints too; the memory plan it reads is the policy's, so their configs are not planned here.
  const teachers: [string, string | null][] = [
    ['teacher', config.teacher ?? null],
    ...Object.entries(config.teachers ?? {}).map(([id, v]): [string, string] => [`teachers ${id}`, v]),
  ];
  for (const [field, value] of teachers) {
    const teacher = hubRepoOf(field, value);
    if (teacher && value)
      folders.set(checkpointDir(value), await fetchHubModel(teacher, 'checkpoint', { ...opts, plan: undefined }));
  }
  return folders.size ? hubAssets(base, folders) : base;
}
