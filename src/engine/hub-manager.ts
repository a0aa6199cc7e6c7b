// The engine worker's hub models: the check of a model from its small files (architecture, memory plan of the draft
// config, download size, generation defaults, chat template) before any weight is fetched, the download of its
// weights with progress (bytes, rate over the last seconds, time left, per file), cancel and resume, the models the
// browser keeps, and the reader a run uses for a checkpoint named by hub id. The files go through fetchSnapshot
// (src/hub/snapshot.ts) into an injected SnapshotStore (the Origin Private File System in the page, memory in
// tests), so a reload or a dropped connection loses nothing already fetched. The token lives in this object's
// memory only: never in a message to the page, a store, a file or an error; download.ts sends it to the
// endpoint's origin alone.

import { generationDefaults } from '../schema/generation-defaults';
import { describePlan } from '../model/memory-plan';
import { CheckpointError } from '../io/hf-layout';
import { parameterCount, type ModelConfig } from '../schema/model-config';
import type { RLConfig } from '../schema/config';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { formatBytes } from '../core/format';
import { HubError, seconds, type HubClient, type PartialFile, type TransferPolicy } from '../hub/download';
import { HubIdError, parseEndpoint, parseHubId, type HubRepo } from '../schema/hub-id';
import { hubSourcesAllow } from '../schema/hub-origins';
import type { HubCheck, HubDownloadState, HubFileState, HubProgress, KeptModel } from '../hub/manager-types';
import { fetchSnapshot, type SnapshotManifest, type SnapshotStore } from '../hub/snapshot';
import { hubModelOf } from '../schema/checkpoint-path';
import { CHECKPOINT_FILE_PLAN, checkpointModelConfig } from './hub-plans';
import type { AssetLoader } from './start-policy';

/** The storage a manager keeps models in: a SnapshotStore that also lists and removes them. */
export type KeptStore = SnapshotStore & {
  list(): Promise<KeptModel[]>;
  remove(repoId: string, revision: string): Promise<void>;
};

export interface HubManagerDeps {
  /** The store (opened on first use). */
  store(): Promise<KeptStore>;
  fetch: typeof fetch;
  /** Milliseconds (performance.now in the worker; a test's clock). */
  now(): number;
  /** A download's progress: at most every `emitEveryMs`, and at once when its state changes. */
  emit(progress: HubProgress): void;
  /** The device's buffer limits for the memory plan, when a device is open. */
  limits?(): { maxBufferSize: number; maxStorageBufferBindingSize: number } | null;
  /** Seconds of one step of `config` on `model` on this adapter, and the source of its speed figures (null: no device). */
  estimate?(config: RLConfig, model: ModelConfig): Promise<{ seconds: number; source: string } | null>;
  emitEveryMs?: number;
  /** The window the rate is measured over (default 5 s). */
  rateWindowMs?: number;
  /** The connect sources the page's CSP lists (pageHubSources()); a URL outside them is refused, named. */
  sources?: readonly string[];
  /** Timeouts and resumes of every transfer (src/hub/download.ts's TransferPolicy; absent fields: its defaults). */
  transfer?: Partial<TransferPolicy>;
}

/**
 * Bytes per second over the last `windowMs` of samples (time in ms, bytes fetched so far). A resumed download's
 * earlier bytes are not counted: the caller adds only what this session fetched.
 */
export class RateMeter {
  private samples: { t: number; bytes: number }[] = [];
  constructor(private readonly windowMs = 5000) {}

  add(t: number, bytes: number): void {
    this.samples.push({ t, bytes });
    // Keep one sample at or before the window's start, so the window is always covered.
    while (this.samples.length > 2 && this.samples[1].t <= t - this.windowMs) this.samples.shift();
  }

  /** Bytes per second between the oldest kept sample and the newest; 0 before two samples. */
  rate(): number {
    if (this.samples.length < 2) return 0;
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    const dt = (last.t - first.t) / 1000;
    return dt > 0 ? (last.bytes - first.bytes) / dt : 0;
  }
}

/** Seconds left to fetch `remaining` bytes at `rate` bytes per second, or null when either is unknown or zero. */
export function etaSeconds(remaining: number | null, rate: number): number | null {
  if (remaining === null || rate <= 0) return null;
  return Math.max(0, remaining / rate);
}

/** Thrown inside fetchSnapshot's hooks to stop a check before any weight is fetched. */
class StopBeforeWeights extends Error {}

/** A fetch that follows redirects itself: a browser hides a manual redirect's Location (an opaque response), so
 * the browser follows the hub's redirect to its CDN and drops the Authorization header on the way (Fetch standard),
 * while download.ts's own redirect handling applies where `redirect: 'manual'` can be read (Node). */
export function followingFetch(base: typeof fetch, sources?: readonly string[]): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init?.redirect === 'manual' ? { ...init, redirect: 'follow' } : init);
    // The redirect target the browser followed is held to the same sources as the URL asked for.
    if (sources && res.redirected && !hubSourcesAllow(sources, new URL(res.url))) {
      await res.body?.cancel();
      throw new HubError(
        `${new URL(res.url).origin} (where the hub redirected) is not a hub origin this page may connect to (it allows ${sources.join(', ')})`,
      );
    }
    return res;
  };
}

/** The store's optional download record hook (begin), delegated when it has one. */
function optionalBegin(store: SnapshotStore): Partial<SnapshotStore> {
  const begin = (store as { begin?: (...args: unknown[]) => Promise<void> }).begin;
  return begin ? ({ begin: (...args: unknown[]) => begin.apply(store, args) } as Partial<SnapshotStore>) : {};
}

/** A store that notes the commit a snapshot resolved to, the committed files it was asked about and each
 * partial file's size when a download (re)starts, for the check and the progress. */
function recording(store: SnapshotStore) {
  const seen = {
    commit: null as string | null,
    committed: new Map<string, number>(),
    started: new Map<string, number>(),
  };
  // Every call delegated by name: a store or partial file may be a class, whose methods a spread would lose.
  const wrapped: SnapshotStore = {
    complete: (repo) => store.complete(repo),
    read: (repo, commit, file) => store.read(repo, commit, file),
    finish: (repo, manifest) => store.finish(repo, manifest),
    committedSha256: (repo, commit, file) => store.committedSha256(repo, commit, file),
    removeCommitted: (repo, commit, file) => store.removeCommitted(repo, commit, file),
    ...optionalBegin(store),
    async committedSize(repo, commit, file) {
      seen.commit = commit;
      const size = await store.committedSize(repo, commit, file);
      if (size !== null) seen.committed.set(file, size);
      return size;
    },
    partial(repo, commit, file): PartialFile {
      const p = store.partial(repo, commit, file);
      return {
        size: async () => {
          const n = await p.size();
          seen.started.set(file, n);
          return n;
        },
        append: (chunk) => p.append(chunk),
        truncate: () => p.truncate(),
        sha256: () => p.sha256(),
        commit: () => p.commit(),
        discard: () => p.discard(),
      };
    },
  };
  return { store: wrapped, seen };
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** The architecture in words, from config.json and the model it describes. */
function describeArchitecture(json: Record<string, unknown>, model: ModelConfig | null): string {
  const arch = Array.isArray(json.architectures) ? String(json.architectures[0]) : String(json.model_type ?? '?');
  if (!model) return arch;
  const params = parameterCount(model);
  return `${arch}: ${model.nLayers} layer${model.nLayers === 1 ? '' : 's'}, hidden ${model.dModel}, ${model.nHeads} heads (${model.nKvHeads} key/value), MLP ${model.dFF}, vocabulary ${model.vocabSize}, ${params.toLocaleString('en-US')} parameters`;
}

/** generation_config.json's sampling defaults (read by the model's own reader), under the file's field names. */
function hubGenerationDefaults(text: string | null): HubCheck['generation'] {
  let json: unknown = null;
  try {
    json = text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
  const g = generationDefaults(
    json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : null,
  );
  if (!g) return null;
  return {
    ...(g.doSample !== undefined && { do_sample: g.doSample }),
    ...(g.temperature !== undefined && { temperature: g.temperature }),
    ...(g.topP !== undefined && { top_p: g.topP }),
    ...(g.topK !== undefined && { top_k: g.topK }),
  };
}

function hasChatTemplate(text: string | null): boolean {
  if (text === null) return false;
  try {
    const t = (JSON.parse(text) as { chat_template?: unknown }).chat_template;
    return (typeof t === 'string' && t.length > 0) || (Array.isArray(t) && t.length > 0);
  } catch {
    return false;
  }
}

/** What the manager keeps of one download in flight. */
interface Flight {
  abort: AbortController;
  cancelled: boolean;
}

export class HubManager {
  private token: string | null = null;
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly deps: HubManagerDeps) {}

  /** Keeps the person's token in memory (null forgets it). */
  setToken(token: string | null): void {
    this.token = token && token.trim() !== '' ? token.trim() : null;
  }

  private client(endpoint: URL, signal?: AbortSignal): HubClient {
    return {
      endpoint,
      token: this.token,
      fetch: this.deps.fetch,
      ...(signal && { signal }),
      ...(this.deps.transfer && { transfer: this.deps.transfer }),
      ...(this.deps.sources && { sources: this.deps.sources }),
    };
  }

  /** The small files of `model` into the store, and what they say; nothing large is fetched. */
  async check(model: string, endpointText: string, config: RLConfig): Promise<HubCheck> {
    const repo = parseHubId(model);
    const endpoint = parseEndpoint(endpointText);
    const store = await this.deps.store();
    const rec = recording(store);
    let refused: string | null = null;
    let modelConfig: ModelConfig | null = null;
    let todo: { name: string; size: number | null }[] = [];
    let commit: string | null = null;
    let complete = false;
    try {
      const snap = await fetchSnapshot(this.client(endpoint), repo, rec.store, CHECKPOINT_FILE_PLAN, {
        checkConfig: (text) => {
          try {
            modelConfig = checkpointModelConfig(text);
          } catch (e) {
            refused = e instanceof Error ? e.message : String(e);
            throw new StopBeforeWeights();
          }
        },
        beforeDownload: (files) => {
          todo = files;
          throw new StopBeforeWeights();
        },
      });
      commit = snap.commit;
      complete = true;
      for (const f of snap.manifest.files) rec.seen.committed.set(f.name, f.size);
    } catch (e) {
      if (!(e instanceof StopBeforeWeights)) throw await this.explain(e, repo);
      commit = rec.seen.commit;
    }
    const at = commit ?? repo.revision;
    const readKept = async (file: string) =>
      rec.seen.committed.has(file) ? decode(await store.read(repo, at, file)) : null;
    const configText = await readKept('config.json');
    const json = configText ? (JSON.parse(configText) as Record<string, unknown>) : {};
    if (complete && configText !== null) {
      try {
        modelConfig = checkpointModelConfig(configText);
      } catch (e) {
        refused = e instanceof Error ? e.message : String(e);
      }
    }
    const files: HubFileState[] = [...rec.seen.committed].map(([name, size]) => ({ name, size, kept: size }));
    if (refused === null)
      for (const f of todo) {
        const kept = await store.partial(repo, at, f.name).size();
        files.push({ name: f.name, size: f.size, kept });
      }
    const pending = files.filter((f) => f.size === null || f.kept < f.size);
    const downloadBytes = pending.reduce((s, f) => s + Math.max(0, (f.size ?? 0) - f.kept), 0);
    return {
      model,
      repoId: repo.id,
      revision: repo.revision,
      commit,
      origin: endpoint.origin,
      architecture: describeArchitecture(json, modelConfig),
      refused,
      files,
      downloadBytes,
      sizesKnown: pending.every((f) => f.size !== null),
      memory: modelConfig && refused === null ? this.memoryPlan(config, modelConfig) : null,
      estimate: modelConfig && refused === null ? ((await this.deps.estimate?.(config, modelConfig)) ?? null) : null,
      generation: hubGenerationDefaults(await readKept('generation_config.json')),
      chatTemplate: hasChatTemplate(await readKept('tokenizer_config.json')),
    };
  }

  private memoryPlan(config: RLConfig, model: ModelConfig): HubCheck['memory'] {
    const limits = this.deps.limits?.() ?? null;
    const { plan } = rlResolvedMemoryPlan(config, model, {
      maxBufferSize: limits?.maxBufferSize ?? Number.POSITIVE_INFINITY,
      maxStorageBufferBindingSize: limits?.maxStorageBufferBindingSize ?? Number.POSITIVE_INFINITY,
      budgetBytes: null,
    });
    const lines = describePlan(plan).map((l) =>
      l.replace(/per-buffer limit Infinity GiB$/, "the GPU's per-buffer limit is checked when it opens"),
    );
    return { totalBytes: plan.peakBytes, budgetBytes: plan.budgetBytes, fits: plan.problems.length === 0, lines };
  }

  /**
   * Fetches (or resumes) every file of `model` into the store, verified, with progress; resolves once the snapshot
   * is complete, rejects naming the pause when cancel() stopped it, or with a message that says what to do.
   */
  async download(model: string, endpointText: string): Promise<void> {
    const repo = parseHubId(model);
    const endpoint = parseEndpoint(endpointText);
    const store = await this.deps.store();
    const rec = recording(store);
    this.flights.get(model)?.abort.abort();
    const flight: Flight = { abort: new AbortController(), cancelled: false };
    this.flights.set(model, flight);
    const meter = new RateMeter(this.deps.rateWindowMs ?? 5000);
    const files = new Map<string, HubFileState>();
    /** Bytes fetched in this session (resumed bytes excluded), for the rate. */
    let fetched = 0;
    let current: string | null = null;
    let state: HubDownloadState = 'checking';
    /** What a stall or a resume says while it lasts (cleared by the next bytes). */
    let note: { message: string; retry?: HubProgress['retry'] } | null = null;
    let lastEmit = Number.NEGATIVE_INFINITY;
    const snapshot = (message: string | null): HubProgress => {
      const list = [...files.values()];
      const bytes = list.reduce((s, f) => s + f.kept, 0);
      const total = list.every((f) => f.size !== null) ? list.reduce((s, f) => s + (f.size ?? 0), 0) : null;
      const rate = state === 'downloading' || state === 'verifying' ? meter.rate() : 0;
      return {
        model,
        state,
        files: list.map((f) => ({ ...f })),
        current,
        bytes,
        total,
        rate,
        etaSeconds: state === 'downloading' ? etaSeconds(total === null ? null : total - bytes, rate) : null,
        message: message ?? note?.message ?? null,
        ...(note?.retry && { retry: note.retry }),
      };
    };
    const emit = (force: boolean, message: string | null = null) => {
      const now = this.deps.now();
      if (!force && now - lastEmit < (this.deps.emitEveryMs ?? 250)) return;
      lastEmit = now;
      this.deps.emit(snapshot(message));
    };
    const setState = (next: HubDownloadState, message: string | null = null) => {
      state = next;
      emit(true, message);
    };
    emit(true);
    try {
      await fetchSnapshot(this.client(endpoint, flight.abort.signal), repo, rec.store, CHECKPOINT_FILE_PLAN, {
        checkConfig: (text) => void checkpointModelConfig(text),
        beforeDownload: (todo) => {
          for (const [name, size] of rec.seen.committed) files.set(name, { name, size, kept: size });
          for (const f of todo) files.set(f.name, { name: f.name, size: f.size, kept: 0 });
          setState('downloading');
        },
        progress: (file, bytes, total) => {
          const f = files.get(file) ?? { name: file, size: total, kept: 0 };
          files.set(file, f);
          // The first chunk of a resumed file starts after the bytes the partial file held.
          const before = Math.max(f.kept, rec.seen.started.get(file) ?? 0);
          if (bytes > before) fetched += bytes - before;
          f.kept = bytes;
          f.size = total ?? f.size;
          current = file;
          note = null;
          meter.add(this.deps.now(), fetched);
          if (total !== null && bytes >= total) setState('verifying');
          else if (state !== 'downloading') setState('downloading');
          else emit(false);
        },
        transfer: (n) => {
          current = n.file;
          if (n.kind === 'stalled') {
            note = { message: `no data from ${n.host} for ${seconds(n.silentMs)} while downloading ${n.file}` };
            setState('stalled');
          } else {
            note = {
              message: `${n.reason}; resuming ${n.file} from byte ${n.bytes} in ${seconds(n.waitMs)} (retry ${n.retry} of ${n.retries})`,
              retry: { retry: n.retry, retries: n.retries },
            };
            setState('retrying');
          }
        },
        notice: (line) => {
          note = { message: line };
          emit(true);
        },
      });
      for (const f of files.values()) if (f.size !== null) f.kept = f.size;
      current = null;
      note = null;
      setState('done');
    } catch (e) {
      current = null;
      note = null;
      if (flight.cancelled) {
        await this.refreshKept(files, rec.store, repo, rec.seen.commit);
        const message = `paused: ${formatBytes(snapshot(null).bytes)} kept in this browser; Resume continues from there`;
        setState('paused', message);
        throw new HubError(`${model}: ${message}`);
      }
      const err = await this.explain(e, repo);
      setState('failed', err.message);
      throw err;
    } finally {
      if (this.flights.get(model) === flight) this.flights.delete(model);
    }
  }

  /** The bytes each file's partial holds after a pause (a chunk in flight may not have been counted). */
  private async refreshKept(
    files: Map<string, HubFileState>,
    store: SnapshotStore,
    repo: HubRepo,
    commit: string | null,
  ): Promise<void> {
    if (commit === null) return;
    for (const f of files.values()) {
      const committed = await store.committedSize(repo, commit, f.name);
      f.kept = committed ?? (await store.partial(repo, commit, f.name).size());
    }
  }

  /** Stops `model`'s download after the chunk in flight; what was fetched stays kept. */
  cancel(model: string): void {
    const flight = this.flights.get(model);
    if (!flight) return;
    flight.cancelled = true;
    flight.abort.abort();
  }

  /** The kept models (complete or partial). */
  async list(): Promise<KeptModel[]> {
    return (await this.deps.store()).list();
  }

  /** Removes `model` (its download stopped first). */
  async remove(model: string): Promise<void> {
    const repo = parseHubId(model);
    this.cancel(model);
    await (await this.deps.store()).remove(repo.id, repo.revision);
  }

  /**
   * A file reader for runs: paths under a hub id (`org/name[@rev]/config.json`, as checkpointDir names them) are
   * read from the model's complete kept snapshot; a model not kept complete fails naming what to do; every other
   * path goes to `base`. Nothing is fetched from a hub here: a run never downloads by itself.
   */
  assets(base: AssetLoader): AssetLoader {
    const read = async (path: string): Promise<Uint8Array | null> => {
      const parts = path.split('/');
      if (parts.length < 3) return null;
      const model = hubModelOf(`${parts[0]}/${parts[1]}`);
      if (model === null) return null;
      const repo = parseHubId(model);
      const manifest = await this.requireKept(model);
      return (await this.deps.store()).read(repo, manifest.commit, parts.slice(2).join('/'));
    };
    return {
      bytes: async (p) => (await read(p)) ?? base.bytes(p),
      text: async (p) => {
        const b = await read(p);
        return b === null ? base.text(p) : decode(b);
      },
    };
  }

  /**
   * The manifest of `model`'s complete kept snapshot; throws saying what to do when it is partial or not kept
   * (checked before a run loads, so the message is the run's whole error).
   */
  async requireKept(model: string): Promise<SnapshotManifest> {
    const repo = parseHubId(model);
    const store = await this.deps.store();
    const manifest = await store.complete(repo);
    if (manifest) return manifest;
    const kept = (await store.list()).find((k) => k.repoId === repo.id && k.revision === repo.revision);
    throw new Error(
      kept
        ? `the hub model ${model} is only partly downloaded in this browser (${formatBytes(kept.bytes)}${kept.total !== null ? ` of ${formatBytes(kept.total)}` : ''}): resume its download (hub models, below the model field), then start the run`
        : `the hub model ${model} is not kept in this browser (never downloaded, or deleted): type it in the checkpoint field, Check it and confirm the download, then start the run`,
    );
  }

  /** A download's error in the person's words: what to do on a 401/403, the host and the kept models when offline. */
  private async explain(e: unknown, repo: HubRepo): Promise<Error> {
    if (e instanceof HubIdError || e instanceof CheckpointError) return e;
    if (!(e instanceof HubError)) return e instanceof Error ? e : new Error(String(e));
    if (e.status === 401 || e.status === 403)
      return new HubError(
        this.token
          ? `${repo.id} refused the token (${e.status}): the token has no access to this gated or private model; accept the model's terms on the hub with the account the token belongs to, or paste a token that has access`
          : `${repo.id} is gated or private (${e.status}): paste a hub token with access to it in the token field (it is kept in this page's memory only), after accepting the model's terms on the hub`,
        e.status,
      );
    if (e.status === null && e.message.startsWith('cannot reach')) {
      const kept = await this.list().catch(() => [] as KeptModel[]);
      const list = kept.map((k) => `${k.model}${k.complete ? '' : ' (partial)'}`).join(', ');
      return new HubError(
        `${e.message} (offline, or an address this page does not allow). ${list ? `Kept in this browser: ${list}.` : 'No hub model is kept in this browser yet.'}`,
      );
    }
    return e;
  }
}
