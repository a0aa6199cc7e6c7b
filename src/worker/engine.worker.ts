// The engine worker: owns the GPUDevice, the LabEngine (trainer + runs store on IndexedDB) and everything that
// runs on them, so the page's main thread only draws. Answers each request of protocol.ts once, with its id (its
// reply, or an 'error'), after the events it caused; sends the trainer's
// records to the page a few times a second (typed arrays transferred), and turns device loss and uncaptured GPU
// errors into 'error' messages (a lost device interrupts the run; resume continues from its saved state).

import { RecordQueue, tokenStrings, tokenTexts, transferableGroups } from '../engine/batcher';
import { IdbRunStore } from '../engine/idb-run-store';
import { idbTuneStore } from '../engine/idb-tune-store';
import { AdapterFigures } from '../engine/adapter-figures';
import { LabEngine } from '../engine/lab-engine';
import { batchTransfer, packRows } from '../schema/metric-batch';
import { MemoryRunStore, type RunRecords, type RunStore } from '../engine/run-store';
import { loadStartTokenizerFiles, type AssetLoader } from '../engine/start-policy';
import type { EngineEvent, RolloutRecord } from '../schema/run-types';
import { acquireDevice, describeAdapter, GpuDeviceLostError, WebGpuUnavailableError, type GpuContext } from '../gpu';
import { kernelCases } from '../kernels/cases';
import { sampleCases } from '../kernels/case-sample';
import { setMatmulTuning, type MatmulTuning } from '../kernels/matmul';
import {
  TuneStopped,
  autotuneMatmul,
  cachedMatmulTuning,
  describeTuning,
  shippedTuning,
  type TuneMeasurement,
  type TuneStore,
} from '../kernels/matmul-tune';
import { runKernelCases } from '../kernels/verify';
import { assertNever, type Envelope, type Replies, type Request, type Response, type TuneState } from './protocol';
import { browserRewardSandbox } from './reward-sandbox';
import { checkRewardFn, tryRewardFn } from '../rl/rewards/reward-fn-trial';
import { sandboxClient, type StartSandbox } from './sandbox-host';
import { IdbFolderStore, LOCAL_FOLDER_PREFIX, isModelFile, localFolderName } from '../engine/idb-folder-store';
import { markStartup } from './startup-marks';
import { estimateDraft } from '../engine/model-estimates';
import { probeThroughput } from '../bench/throughput-probe';
import { assumedThroughput, estimateStepSeconds, stepWork } from '../schema/step-estimate';
import { followingFetch, HubManager } from '../engine/hub-manager';
import type { TransferPolicy } from '../hub/download';
import { hubModelOf } from '../schema/checkpoint-path';
import { pageHubSources } from '../schema/hub-origins';
import { OfflineFileError } from '../io/hf-layout';
import { opfsSnapshotStore } from '../io/opfs-snapshot-store';
import { tokenizerFromFiles } from '../io/hf-folder';
import { verlPromptLengthOf } from '../export';

/** How often queued records go to the page. */
const FLUSH_MS = 250;

let ctx: GpuContext | null = null;
let acquiring: Promise<GpuContext> | null = null;
/**
 * The adapter and device asked for as this worker loads, before the page's init (the page starts this worker ahead
 * of its own bundle: worker/client.ts startEngineWorker), so the device comes while the page renders. The first
 * device() takes it; a device asked for after a loss is a fresh one.
 */
let early: Promise<GpuContext> | null = acquireDevice({ runtime: 'browser' });
early.catch(() => {}); // its failure is reported when device() takes it

function post(message: Response, transfer: Transferable[] = []): void {
  (self as unknown as { postMessage(m: Response, t: Transferable[]): void }).postMessage(message, transfer);
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Posts in order even when a message needs asynchronous preparation (token texts). */
let outbox: Promise<void> = Promise.resolve();
function enqueue(task: () => void | Promise<void>): void {
  outbox = outbox.then(task).catch((e: unknown) => post({ type: 'error', message: messageOf(e), fatal: false }));
}

// ---------------------------------------------------------------------------------------------------------
// Device

async function device(): Promise<GpuContext> {
  if (ctx) return ctx;
  if (acquiring) return acquiring;
  const asked = early ?? acquireDevice({ runtime: 'browser' });
  early = null;
  acquiring = asked
    .then(async (c) => {
      markStartup('device');
      ctx = c;
      c.onError((e) => {
        const lost = e instanceof GpuDeviceLostError;
        post({ type: 'error', message: e.message, fatal: lost });
        if (lost) {
          if (ctx === c) ctx = null;
          void engine.deviceLost(e.message);
        }
      });
      engine.setAdapter(describeAdapter(c.report));
      // The matmul variants for this adapter before any model records a pass: its tune cached in IndexedDB, else
      // the defaults measured for its class, so a first visit trains at once; the adapter's own tune is measured in
      // the background while no run can train, and reaches runs started after it (tuneInBackground).
      const store = idbTuneStore() ?? undefined;
      let tuning: string;
      let measure = false;
      try {
        const cached = await cachedMatmulTuning(c, store);
        if (cached) tuning = describeVariants(cached, 'measured on this adapter before, cached');
        else {
          const shipped = shippedTuning(c);
          setMatmulTuning(c.device, shipped);
          tuning = describeVariants(shipped, 'defaults for this kind of adapter until its own tune is measured');
          measure = true;
        }
      } catch (e) {
        tuning = `not tuned (${messageOf(e)}); default variants`;
      }
      markStartup('autotune');
      post({ type: 'ready', report: c.report, tuning });
      if (measure) void tuneInBackground(c, store, tuning);
      return c;
    })
    .finally(() => {
      acquiring = null;
    });
  return acquiring;
}

/**
 * The adapter's figures for every step estimate (src/engine/adapter-figures.ts): one probe, at the first estimate
 * asked while the device is idle, awaited by every estimate; the kind's figures only if it failed.
 */
let adapterFigures: { ctx: GpuContext; figures: AdapterFigures } | null = null;
function figuresOf(c: GpuContext): AdapterFigures {
  if (adapterFigures?.ctx !== c)
    adapterFigures = {
      ctx: c,
      figures: new AdapterFigures(
        () => probeThroughput(c),
        () => assumedThroughput(c.report.isFallbackAdapter),
        () => engine.deviceIdle(),
      ),
    };
  return adapterFigures.figures;
}

/** How often the background tune looks whether a run still holds the trainer. */
const TUNE_POLL_MS = 1000;

/**
 * Measures this adapter's matmul variants while no run can train (LabEngine.trainerIdle), stopping at the next
 * product once a run is loaded and going on, from the layouts already measured, once none can train again. The
 * winners are installed only while none can train, so every run trains on one set of variants from start to end
 * (the variants differ in summation order, so a switch mid-run would change its numbers); they reach the next run.
 */
async function tuneInBackground(c: GpuContext, store: TuneStore | undefined, shipped: string): Promise<void> {
  const partial: TuneMeasurement[] = [];
  const gone = () => ctx !== c;
  const sleep = () => new Promise<void>((r) => setTimeout(r, TUNE_POLL_MS));
  let state: TuneState | null = null;
  const tell = (next: TuneState, tuning: string) => {
    if (next !== state) post({ type: 'tuning', state: next, tuning });
    state = next;
  };
  // Two looks a poll apart: a run configured right after a finished one does not start a measurement first.
  const staysIdle = async () => {
    if (!engine.trainerIdle()) return false;
    await sleep();
    return engine.trainerIdle();
  };
  for (;;) {
    while (!gone() && !(await staysIdle())) {
      if (state === 'measuring') tell('waiting', shipped);
      await sleep();
    }
    if (gone()) return;
    tell('measuring', shipped);
    try {
      const r = await autotuneMatmul(c, { store, force: true, partial, stop: () => gone() || !engine.trainerIdle() });
      return tell('done', `${describeTuning(r)}; runs started from now on use it`);
    } catch (e) {
      if (e instanceof TuneStopped) continue;
      return tell('failed', `${shipped}; the tune failed (${messageOf(e)})`);
    }
  }
}

/** The variants of a tuning in words, and where they come from. */
function describeVariants(t: MatmulTuning, from: string): string {
  const choice = Object.entries(t)
    .map(([layout, v]) => `${layout} ${v}`)
    .join(', ');
  return `matmul: ${choice || 'default variants'} (${from})`;
}

// ---------------------------------------------------------------------------------------------------------
// Files of the site (checkpoints, tokenizers), fetched from the page's own origin.

const siteBase = new URL(import.meta.env.BASE_URL, self.location.origin);

async function fetchAsset(path: string): Promise<Response_> {
  const url = new URL(path, siteBase);
  // A request that gets no answer while the browser is offline: a file the offline copy does not keep.
  const r = await fetch(url).catch((e: unknown) => {
    throw navigator.onLine === false ? new OfflineFileError(url.pathname) : e;
  });
  // A static server answers a missing file with the page itself (SPA fallback): that is a missing file too.
  if (!r.ok || (r.headers.get('content-type') ?? '').includes('text/html'))
    throw new Error(`${url.pathname}: ${r.ok ? 'not found' : `${r.status} ${r.statusText}`}`);
  return r;
}
type Response_ = globalThis.Response;

// Folders imported from disk live in IndexedDB under local/<name>/ (src/engine/idb-folder-store.ts).
let folders: Promise<IdbFolderStore> | null = null;
const folderStore = () => (folders ??= IdbFolderStore.open());

const siteAssets: AssetLoader = {
  bytes: async (p) =>
    p.startsWith(LOCAL_FOLDER_PREFIX)
      ? (await folderStore()).get(p)
      : new Uint8Array(await (await fetchAsset(p)).arrayBuffer()),
  text: async (p) =>
    p.startsWith(LOCAL_FOLDER_PREFIX)
      ? new TextDecoder().decode(await (await folderStore()).get(p))
      : (await fetchAsset(p)).text(),
};

// Hub models: kept in the Origin Private File System under hub/ (src/io/opfs-snapshot-store.ts); the token in
// the manager's memory only. A checkpoint named by hub id is read from there, never fetched by a run.
let hubRoot: ReturnType<typeof openHubStore> | null = null;
async function openHubStore() {
  if (!navigator.storage?.getDirectory)
    throw new Error(
      'this browser has no Origin Private File System here (private mode?), so hub models cannot be kept',
    );
  const root = await navigator.storage.getDirectory();
  return opfsSnapshotStore(await root.getDirectoryHandle('hub', { create: true }));
}
/** The hub origins this build's CSP lists: the manager refuses any other before a request. */
const hubSources = pageHubSources();
/** This build's RL_LAB_HUB_TIMEOUT (scripts/hub-origins-plugin.ts), as a transfer policy; absent: the defaults. */
declare const __RL_LAB_HUB_TRANSFER__: Partial<TransferPolicy> | undefined;
const hub = new HubManager({
  ...(typeof __RL_LAB_HUB_TRANSFER__ !== 'undefined' && { transfer: __RL_LAB_HUB_TRANSFER__ }),
  store: () => (hubRoot ??= openHubStore()),
  // The browser follows the hub's redirect to its download host (a manual redirect's Location is hidden from a page).
  fetch: followingFetch((input, init) => fetch(input, init), hubSources),
  sources: hubSources,
  now: () => performance.now(),
  emit: (progress) => enqueue(() => post({ type: 'hub-progress', progress })),
  limits: () => (ctx ? ctx.device.limits : null),
  estimate: async (config, model) => {
    // The page opens the device at load; a check before it is ready waits for it. No WebGPU: no estimate.
    const c = await device().catch(() => null);
    if (!c) return null;
    const f = await figuresOf(c).figures();
    if (!('throughput' in f)) return null;
    const t = f.throughput;
    return { seconds: estimateStepSeconds(stepWork(config, model), t).seconds, source: t.source };
  },
});

/** The kept hub models and the browser's storage, as the storage panel shows them. */
async function hubModels(): Promise<Replies['hub-list']> {
  const [models, storage, persistent] = await Promise.all([
    hub.list(),
    (navigator.storage?.estimate?.() ?? Promise.resolve(null))
      .then((e) => (e ? { usage: e.usage ?? 0, quota: e.quota ?? 0 } : null))
      .catch(() => null),
    (navigator.storage?.persisted?.() ?? Promise.resolve(false)).catch(() => false),
  ]);
  return { type: 'hub-models', models, storage, persistent };
}

const assets = hub.assets(siteAssets);

/** A run's checkpoint, reward model or teachers named by hub id must be kept complete: refused before anything loads. */
async function requireKeptModels(config: {
  checkpoint: string | null;
  reward_model: string | null;
  teacher?: string | null;
  teachers?: Readonly<Record<string, string>> | null;
}): Promise<void> {
  for (const value of [
    config.checkpoint,
    config.reward_model,
    config.teacher ?? null,
    ...Object.values(config.teachers ?? {}),
  ]) {
    const model = hubModelOf(value);
    if (model !== null) await hub.requireKept(model);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Engine and its store

/** Starts a reward-function sandbox in the page (set when the page sends its sandbox host's port). */
let startSandbox: StartSandbox | null = null;

let store: RunStore = new MemoryRunStore();
const queue = new RecordQueue();

/** Where every reward_fn runs: the runs' and the editor's checks and trials. */
const rewardSandbox = browserRewardSandbox((scripts) => {
  if (!startSandbox) throw new Error('reward_fn: the page has not connected its sandbox host yet');
  return startSandbox(scripts);
});

const engine = new LabEngine({
  rewardSandbox,
  store: {
    // The store is opened asynchronously at init; every call goes to whichever store is current.
    listRuns: () => store.listRuns(),
    getRun: (id) => store.getRun(id),
    putHeader: (h) => store.putHeader(h),
    appendStep: (h, rows, rollout, evals) => store.appendStep(h, rows, rollout, evals),
    putState: (h, s) => store.putState(h, s),
    getState: (id) => store.getState(id),
    readRecords: (id) => store.readRecords(id),
    readRollouts: (id, step) => store.readRollouts(id, step),
    readAllRollouts: (id) => store.readAllRollouts(id),
    putRun: (d) => store.putRun(d),
    truncate: (h, step) => store.truncate(h, step),
    deleteRun: (id) => store.deleteRun(id),
    estimate: () => store.estimate(),
  },
  assets,
  // The wall-clock autosave interval a browser test set (EngineTestHooks); undefined: the engine's default.
  get autosaveMs() {
    return testAutosaveMs;
  },
  gpu: device,
  emit: onEngineEvent,
});

/** The autosave interval from the page's init (a browser test's hook); undefined: the engine's 30 s. */
let testAutosaveMs: number | undefined;

let recordEvents = 0;

function onEngineEvent(e: EngineEvent): void {
  switch (e.type) {
    case 'records':
      // Time to first step: the first two steps' records (the first one also compiles the pipelines).
      recordEvents++;
      if (recordEvents <= 2) markStartup(recordEvents === 1 ? 'step-1' : 'step-2');
      queue.push(e.runId, e.records);
      return;
    case 'progress':
      flush();
      enqueue(() => post({ type: 'progress', progress: e.progress }));
      return;
    case 'notice':
      flush();
      enqueue(() => post({ type: 'notice', level: e.level, message: e.message }));
      return;
    case 'runs-changed':
      enqueue(postRuns);
      return;
    case 'alert':
      // After the records of its step, so the chart has the step it marks.
      flush();
      enqueue(() => post({ type: 'alert', runId: e.runId, alert: e.alert }));
      return;
    case 'run-data': {
      // Records still queued are older than these and are replaced by them.
      flush();
      const batch = packRows(e.records.rows);
      enqueue(() =>
        post(
          { type: 'run-data', runId: e.runId, batch, evals: e.records.evals, rolloutSteps: e.records.rolloutSteps },
          batchTransfer(batch),
        ),
      );
      return;
    }
    default:
      assertNever(e);
  }
}

async function postRollouts(runId: string, { step, groups, batch }: RolloutRecord): Promise<void> {
  const texts = tokenTexts(groups, await engine.runs.tokenizerFor(runId));
  const t = transferableGroups(groups);
  post({ type: 'rollouts', runId, step, groups: t.groups, texts, ...(batch && { batch }) }, t.transfer);
}

/** Sends everything queued: metric columns (transferred), sampled groups, evaluations. */
function flush(): void {
  if (queue.empty) return;
  for (const d of queue.drain()) {
    enqueue(() => post({ type: 'metrics', runId: d.runId, batch: d.metrics }, batchTransfer(d.metrics)));
    for (const r of d.rollouts) enqueue(() => postRollouts(d.runId, r));
    if (d.evals.length) enqueue(() => post({ type: 'evals', runId: d.runId, evals: d.evals }));
  }
}
setInterval(flush, FLUSH_MS);

async function postRuns(): Promise<void> {
  const [runs, storage, persistent] = await Promise.all([
    engine.runs.list(),
    store.estimate().catch(() => null),
    (navigator.storage?.persisted?.() ?? Promise.resolve(false)).catch(() => false),
  ]);
  post({ type: 'runs', runs, storage, persistent });
}

let storeOpened: Promise<void> | null = null;
/** A run's records (resumed, opened or loaded) to the page, queued behind the events already posted. */
function postRunData(runId: string, r: RunRecords): void {
  const batch = packRows(r.rows);
  enqueue(() =>
    post({ type: 'run-data', runId, batch, evals: r.evals, rolloutSteps: r.rolloutSteps }, batchTransfer(batch)),
  );
}

function openStore(): Promise<void> {
  storeOpened ??= (async () => {
    try {
      store = await IdbRunStore.open();
    } catch (e) {
      post({
        type: 'notice',
        level: 'error',
        message: `Runs cannot be saved in this browser: ${messageOf(e)}. Runs are kept in memory until the page closes.`,
      });
    }
    await engine.runs
      .recover()
      .catch((e: unknown) =>
        post({ type: 'notice', level: 'warning', message: `Could not check saved runs: ${messageOf(e)}` }),
      );
    enqueue(postRuns);
  })();
  return storeOpened;
}

// ---------------------------------------------------------------------------------------------------------
// Requests

async function init(): Promise<void> {
  const opened = openStore();
  try {
    await device();
  } catch (e) {
    const message = messageOf(e);
    post(
      e instanceof WebGpuUnavailableError ? { type: 'unavailable', message } : { type: 'error', message, fatal: true },
    );
  }
  await opened;
}

async function selftest(filter: string | undefined, sample: boolean): Promise<void> {
  const c = await device();
  const matching = kernelCases().filter((k) => !filter || k.name.includes(filter));
  const cases = sample ? sampleCases(matching) : matching;
  const t0 = performance.now();
  let index = 0;
  const results = await runKernelCases(c, cases, (result) =>
    post({ type: 'selftest-case', result, index: index++, total: cases.length }),
  );
  const failed = results.filter((r) => !r.pass).length;
  post({ type: 'selftest-done', passed: results.length - failed, failed, ms: performance.now() - t0 });
}

/** Answers request `req` with `reply` (its id added), after everything already queued for the page. */
function answer<T extends Request['type']>(
  req: Envelope & { type: T },
  reply: Replies[T],
  transfer: Transferable[] = [],
): void {
  enqueue(() => post({ ...reply, id: req.id } as Response, transfer));
}

const DONE = { type: 'done' } as const;

async function handle(req: Envelope): Promise<void> {
  switch (req.type) {
    case 'init':
      testAutosaveMs = req.hooks?.autosaveMs;
      await init();
      return answer(req, DONE);
    case 'selftest':
      await selftest(req.filter, req.sample ?? false);
      return answer(req, DONE);
    case 'configure': {
      markStartup('run-configure');
      await requireKeptModels(req.config);
      await openStore();
      await engine.create({
        config: req.config,
        preset: req.preset,
        backend: req.backend,
        name: req.name,
        mode: req.mode,
      });
      markStartup('run-created');
      if (req.then === 'start') engine.start();
      else if (req.then === 'step') engine.stepOnce();
      return answer(req, DONE);
    }
    case 'prepare':
      markStartup('prepare');
      engine.prepare({ config: req.config, backend: req.backend });
      return answer(req, DONE);
    case 'start-seeds':
      await requireKeptModels(req.config);
      await openStore();
      await engine.startSeeds({ config: req.config, preset: req.preset, backend: req.backend, seeds: req.seeds });
      return answer(req, DONE);
    case 'start':
      engine.start();
      return answer(req, DONE);
    case 'pause':
      engine.pause();
      return answer(req, DONE);
    case 'step':
      engine.stepOnce();
      return answer(req, DONE);
    case 'reset':
      engine.reset();
      return answer(req, DONE);
    case 'resume': {
      await openStore();
      postRunData(req.runId, await engine.resume(req.runId));
      enqueue(() => engine.start());
      return answer(req, DONE);
    }
    case 'list-runs':
      await openStore();
      enqueue(postRuns);
      return answer(req, DONE);
    case 'load-run': {
      await openStore();
      postRunData(req.runId, await engine.runs.load(req.runId, req.metrics));
      return answer(req, DONE);
    }
    case 'load-rollouts': {
      const rollout = await engine.runs.loadRollouts(req.runId, req.step);
      enqueue(() => postRollouts(req.runId, rollout));
      return answer(req, DONE);
    }
    case 'delete-run':
      await engine.runs.delete(req.runId);
      return answer(req, DONE);
    case 'export': {
      const files = await engine.runs.export(req.runId, req.kind);
      const transfer = files.flatMap((f) => (typeof f.data === 'string' ? [] : [f.data.buffer as ArrayBuffer]));
      return answer(req, { type: 'export-ready', runId: req.runId, kind: req.kind, files }, transfer);
    }
    case 'import': {
      await openStore();
      const header = await engine.runs.import(req.fileName, req.text);
      return answer(req, { type: 'imported', header });
    }
    case 'compare-objectives': {
      const { runId, comparison } = await engine.compareObjectives(req.config, req.source);
      const tok = await engine.runs.tokenizerFor(runId);
      const texts = comparison.rows.map((r) => tokenStrings(r.tokens, tok));
      return answer(req, { type: 'objective-comparison', runId, comparison, texts });
    }
    case 'open-run': {
      await openStore();
      postRunData(req.runId, await engine.openSaved(req.runId));
      return answer(req, DONE);
    }
    case 'rename-run':
      await openStore();
      await engine.runs.rename(req.runId, req.name);
      return answer(req, DONE);
    case 'check-reward-fn':
      return answer(req, { type: 'reward-fn-checked', problem: await checkRewardFn(rewardSandbox, req.source) });
    case 'try-reward-fn': {
      const r = await tryRewardFn(rewardSandbox, req.config);
      return answer(req, {
        type: 'reward-fn-tried',
        rows: 'rows' in r ? r.rows : null,
        problem: 'problem' in r ? r.problem : null,
      });
    }
    case 'verl-prompt-length': {
      const files = await loadStartTokenizerFiles(req.config, assets);
      const tok = await tokenizerFromFiles(files.tokenizerJson, files.tokenizerConfigJson);
      return answer(req, { type: 'verl-prompt-length', promptLength: verlPromptLengthOf(req.config, tok) });
    }
    case 'import-folder': {
      const name = localFolderName(req.name);
      const files = req.files.filter((f) => isModelFile(f.path));
      if (!files.some((f) => f.path === 'config.json'))
        throw new Error(`the folder ${req.name} has no config.json at its top: pick the model's own folder`);
      await (await folderStore()).put(name, files);
      return answer(req, {
        type: 'folder-imported',
        path: `${LOCAL_FOLDER_PREFIX}${name}/`,
        files: files.map((f) => f.path),
      });
    }
    case 'sandbox-host':
      startSandbox = sandboxClient(req.port);
      return answer(req, DONE);
    case 'estimate': {
      const c = await device();
      const f = await figuresOf(c).figures();
      if (!('throughput' in f)) throw new Error(f.waiting);
      const t = f.throughput;
      const limits = {
        maxBufferSize: c.device.limits.maxBufferSize,
        maxStorageBufferBindingSize: c.device.limits.maxStorageBufferBindingSize,
      };
      const estimates = await Promise.all(req.configs.map((config) => estimateDraft(config, assets, limits, t)));
      return answer(req, { type: 'estimates', estimates, throughput: t.source });
    }
    case 'hub-check':
      return answer(req, { type: 'hub-checked', check: await hub.check(req.model, req.endpoint, req.config) });
    case 'hub-download':
      await hub.download(req.model, req.endpoint);
      return answer(req, DONE);
    case 'hub-cancel':
      hub.cancel(req.model);
      return answer(req, DONE);
    case 'hub-token':
      hub.setToken(req.token);
      return answer(req, DONE);
    case 'hub-list':
      return answer(req, await hubModels());
    case 'hub-delete':
      await hub.remove(req.model);
      return answer(req, await hubModels());
    default:
      return assertNever(req);
  }
}

self.onmessage = (ev: MessageEvent<Envelope>) => {
  const req = ev.data;
  handle(req).catch((e: unknown) =>
    enqueue(() => post({ type: 'error', id: req.id, message: messageOf(e), fatal: false })),
  );
};

// Destroys the engine's device the way a driver reset or a long background tab does, so the browser tests can check
// that a run survives it (the page says what happened; Resume continues from the last saved state).
(self as unknown as { rlLabLoseDevice?: () => boolean }).rlLabLoseDevice = () => {
  if (!ctx) return false;
  ctx.device.destroy();
  return true;
};
