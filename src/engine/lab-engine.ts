// The LabEngine: the page's driver of one run at a time, each a RunSession (run-session.ts) whose sink is the runs
// store: create, start, pause, single step, reset, resume from the last saved state. A seed group (seed-group-run.ts)
// queues one config over N seeds, run after run on the same device; pause and reset act on the queue, and a seed
// that fails is named while the others go on. Every step is watched: a non-finite metric rewinds the run to its
// last saved state (a saved state is always finite) and pauses it; an alert is reported and may pause it. The run
// in memory is an ActiveRun (active-run.ts); the stored runs (list, load, rename, delete, export, import) are the
// runs library's (run-library.ts). It reports through an `emit` callback and never touches React, the DOM or
// postMessage: the worker wires it to the page, the tests to an in-memory store and a scripted trainer.

import type { GpuContext } from '../gpu';
import type { CompareSource, ObjectiveComparison } from '../rl/observation/compare';
import { validateConfig, type PresetName, type RLConfig } from '../schema/config';
import { checkRewardFn } from '../rl/rewards/reward-fn-trial';
import { UserRewardError, type UserRewardSandbox } from '../rl/rewards/user-reward';
import { ActiveRun, type ActiveRunIo } from './active-run';
import { PreparedRun, PreparedSlot } from './prepared-run';
import { RunLibrary, newRunId } from './run-library';
import { RunSession, createTrainer, type RunSink, type SavedRun, type TrainerFactory } from './run-session';
import type { RunRecords, RunStore } from './run-store';
import { newSeedGroupId, seedCountError, type SeedGroupTag } from '../schema/seed-group';
import { SeedGroupRun, SeedQueue } from './seed-group-run';
import type { AssetLoader } from './start-policy';
import {
  IDLE_PROGRESS,
  defaultRunName,
  type BackendKind,
  type EngineEvent,
  type RunHeader,
  type RunMode,
  type RunProgress,
} from '../schema/run-types';

export { newRunId, slug, type DownloadFile, type ExportKind } from './run-library';

export interface LabEngineDeps {
  store: RunStore;
  assets: AssetLoader;
  /** The device for WebGPU runs (acquired again after a loss); throws when there is none. */
  gpu(): Promise<GpuContext>;
  emit(e: EngineEvent): void;
  /** The trainer factory (default: the real trainer, run-session.ts). */
  createTrainer?: TrainerFactory;
  /** Where a config's reward_fn runs (the engine worker passes its Blob-worker sandbox); every trainer gets it. */
  rewardSandbox?: UserRewardSandbox;
  /** Milliseconds clock (default: performance.now). */
  now?: () => number;
  /** Wall clock for run headers (default: Date.now). */
  wallClock?: () => number;
  /** Save the trainer state at least this often while running (default 30 s), besides every pause and the end. */
  autosaveMs?: number;
  /** Groups per step with per-token records (default 2). */
  inspectGroups?: number;
}

/** What a new run is made of: its config, the preset it came from, the backend, a name (default: from the config). */
export interface NewRun {
  config: RLConfig;
  preset: PresetName | null;
  backend: BackendKind;
  name?: string;
  /** 'sft': a supervised run (run-session.ts's mode), trained through the same session; default 'rl'. */
  mode?: RunMode;
}

/** The default name of a run: preset, task and seed (schema/run-types.ts defaultRunName). */
export const runName = defaultRunName;

export class LabEngine {
  private active: ActiveRun | null = null;
  private looping: Promise<void> | null = null;
  private resetRequested = false;
  private seedQueue: SeedQueue | null = null;
  /** An objective comparison is using the trainer (training waits for it: both would sample on the same buffers). */
  private comparing = false;
  /** The page's next run, opened and its first step trained ahead (prepare), until a run adopts or replaces it. */
  private readonly prepared = new PreparedSlot();
  private readonly now: () => number;
  private readonly wall: () => number;
  private adapter = '';
  /** The stored runs (list, load, rename, delete, export, import), this engine's current run live among them. */
  readonly runs: RunLibrary;
  private readonly io: ActiveRunIo;

  constructor(private readonly deps: LabEngineDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.wall = deps.wallClock ?? (() => Date.now());
    this.runs = new RunLibrary({
      store: deps.store,
      assets: deps.assets,
      wallClock: this.wall,
      onChange: (live) => {
        deps.emit({ type: 'runs-changed' });
        if (live) this.emitProgress();
      },
      live: () => this.active && { header: this.active.header, session: this.active.session, training: this.busy() },
      releaseLive: () => {
        if (this.busy()) throw new Error('pause the run before deleting it');
        this.dropSeedQueue();
        this.release();
      },
    });
    this.io = {
      store: deps.store,
      emit: deps.emit,
      emitProgress: () => this.emitProgress(),
      now: this.now,
      wall: this.wall,
    };
  }

  /** The adapter description recorded in new runs' headers. */
  setAdapter(description: string): void {
    this.adapter = description;
  }

  /** The current run's progress (status 'idle' when there is none). */
  progress(): RunProgress {
    const a = this.active;
    if (!a) return { ...IDLE_PROGRESS };
    const group = this.seedQueue?.group;
    return a.progress(group && a.header.seedGroup?.id === group.id ? group.progress() : null);
  }

  private emitProgress(): void {
    this.deps.emit({ type: 'progress', progress: this.progress() });
  }

  private notice(level: 'warning' | 'error', text: string): void {
    this.deps.emit({ type: 'notice', level, message: text });
  }

  private busy(): boolean {
    return this.looping !== null;
  }

  /** No step and no objective comparison is running (a loaded, paused run may wait): a short measurement can use the device. */
  deviceIdle(): boolean {
    return !this.busy() && !this.comparing;
  }

  /**
   * No loaded run can train on (none is loaded, or the current one finished, failed or was interrupted) and nothing
   * uses the trainer: a change of the device's default kernel variants now reaches only runs started later, so a
   * run never mixes variants (the worker installs its background matmul tune only then).
   */
  trainerIdle(): boolean {
    const a = this.active;
    if (this.busy() || this.comparing || this.prepared.busy) return false;
    return !a || a.header.status === 'done' || a.header.status === 'failed' || a.header.status === 'interrupted';
  }

  /** Drops the trainer of the current run (its saved records stay in the store); `quiet`: the next run's progress follows at once. */
  private release(quiet = false): void {
    const a = this.active;
    this.active = null;
    this.resetRequested = false;
    a?.close();
    if (!quiet) this.emitProgress();
  }

  /** A new current run of `header` (its session opens after). */
  private activate(header: RunHeader): ActiveRun {
    const a = new ActiveRun(header, this.io);
    this.active = a;
    this.emitProgress();
    return a;
  }

  /**
   * Opens the run that `create` with this config would make and trains its first step now, while nothing else uses
   * the device (the page sends the open lesson's first run while the person reads its question): the pipelines
   * compile and the step-0 evaluation and step 1 train before Run is pressed. A create with the same config (and
   * the same matmul variants) adopts it; any other run discards it. Does nothing while a run is loaded and can
   * train, or for a config with a reward_fn (nobody's code runs unasked). RL runs only (a lesson's supervised run
   * is not prepared).
   */
  prepare(o: { config: RLConfig; backend: BackendKind }): void {
    if (!this.trainerIdle()) return;
    const config = validateConfig(o.config);
    if (config.reward_fn !== null || this.prepared.holds(config, o.backend)) return;
    this.prepared.replace(
      PreparedRun.onDevice({
        config,
        backend: o.backend,
        createTrainer: this.deps.createTrainer ?? createTrainer,
        gpu: () => this.deps.gpu(),
        open: (sink, factory, device) =>
          openRunSession(this.deps, { config, backend: o.backend, mode: 'rl', sink, device, factory }),
      }),
    );
  }

  /**
   * Creates a new run from a config: loads the start policy and the trainer, saves the run's header, and leaves
   * it paused at step 0 (start or step runs it). A paused current run is released first (it stays saved).
   */
  async create(o: NewRun): Promise<RunHeader> {
    if (this.busy()) throw new Error('a run is training: pause or reset it before starting another');
    this.dropSeedQueue();
    return this.open(o);
  }

  /**
   * A seed group: the config over `seeds` seeds (its seed, seed + 1, ...), one run after the other, each named as
   * a run of its own and tagged with the group. The first seed's run is created and starts training at once; each
   * next one is created when the previous is done. A seed whose run fails (or cannot start) is named in a notice and
   * the queue goes on; pause holds the queue at the current seed (start continues it), reset drops it.
   */
  async startSeeds(o: Omit<NewRun, 'name' | 'mode'> & { seeds: number }): Promise<void> {
    if (this.busy()) throw new Error('a run is training: pause or reset it before starting a seed group');
    const refused = seedCountError(o.seeds);
    if (refused) throw new Error(refused);
    const config = validateConfig(o.config);
    this.dropSeedQueue();
    const q: SeedQueue = new SeedQueue(new SeedGroupRun(newSeedGroupId(this.wall()), config, o.seeds), {
      open: async (c, seedGroup) => {
        await this.open({ config: c, preset: o.preset, backend: o.backend, seedGroup });
      },
      notice: (level, text) => this.notice(level, text),
      ended: () => {
        if (this.seedQueue === q) this.seedQueue = null;
      },
      progress: () => this.emitProgress(),
    });
    this.seedQueue = q;
    if (await q.openNext()) this.go(Infinity);
  }

  /** Stops a seed queue (reset, a new run, a resume): the seeds not started yet are named. */
  private dropSeedQueue(): void {
    this.seedQueue?.drop();
    this.seedQueue = null;
  }

  /**
   * After a run of the seed queue stopped: done or failed moves the queue to the next seed (created, and training
   * when `free`); paused holds the queue. True when the next seed's run is the active one and set to train.
   */
  private async nextSeed(run: ActiveRun, free: boolean): Promise<boolean> {
    const q = this.seedQueue;
    if (!q || this.resetRequested || this.active !== run || run.header.seedGroup?.id !== q.group.id) return false;
    if (!q.runStopped(run.header.status, run.header.message)) return false;
    if (!(await q.openNext()) || !free) return false;
    const next = this.active!;
    next.stepsLeft = Infinity;
    next.header.status = 'running';
    this.emitProgress();
    return true;
  }

  /** create() without the busy check and the queue's end: the seed queue creates its runs through it. */
  private async open(o: NewRun & { seedGroup?: SeedGroupTag }): Promise<RunHeader> {
    const config = validateConfig(o.config);
    // A reward_fn that does not compile is refused input: no run is created for it (the page shows where it fails).
    if (config.reward_fn !== null && this.deps.rewardSandbox) {
      const problem = await checkRewardFn(this.deps.rewardSandbox, config.reward_fn);
      if (problem) throw new UserRewardError(problem.message, problem.at);
    }
    // The next seed of a queue replaces the previous one without an idle moment in between (the page would offer Start).
    if (this.active) this.release(o.seedGroup !== undefined && o.seedGroup.index > 0);
    const header = newRunHeader({ ...o, config }, this.wall(), this.adapter);
    const a = this.activate(header);
    let session: RunSession;
    const prepared = this.prepared.take(config, o.backend, (o.mode ?? 'rl') === 'rl');
    try {
      // A prepared session that could not open (a fetch that failed then, say) leaves the run to open its own.
      const adopted = prepared ? await prepared.adopt(a.sink()).catch(() => null) : null;
      if (adopted) {
        session = adopted;
        // The run's kernel count from now on (those its prepared step compiled are already built).
        if (o.backend === 'webgpu') a.countCompiles(await this.deps.gpu(), () => this.active === a);
      } else session = await this.openSession(a, null);
    } catch (e) {
      if (this.active === a) this.release();
      throw e;
    }
    if (this.active !== a) {
      session.destroy();
      throw new Error('the run was reset while it loaded');
    }
    a.session = session;
    // The config as the session resolved it (sampling_defaults 'model' fills the sampling knobs from the checkpoint).
    header.config = session.config;
    header.status = 'paused';
    await a.saveHeader();
    this.deps.emit({ type: 'runs-changed' });
    this.emitProgress();
    return { ...header };
  }

  /** Trains the current run until its last step or a pause. */
  start(): void {
    this.go(Infinity);
  }

  /** Trains exactly one rollout step of the current run, then pauses. */
  stepOnce(): void {
    this.go(1);
  }

  private go(steps: number): void {
    const a = this.active;
    if (!a?.session) throw new Error('no run to train: configure one and press Start');
    if (this.comparing)
      throw new Error('an objective comparison is running on this run; train on when it has finished');
    if (this.busy()) {
      if (a.header.status === 'pausing' && steps === Infinity) {
        a.header.status = 'running';
        a.stepsLeft = Infinity;
        this.emitProgress();
      }
      return;
    }
    a.beginTraining(steps);
    this.emitProgress();
    this.looping = this.drive(a, steps === Infinity).finally(() => {
      this.looping = null;
      if (this.resetRequested) this.release();
    });
  }

  /**
   * A/B of the current run's objective and `b` on one batch at its current parameters (src/rl/observation/compare.ts): its latest
   * rollout step or a fresh batch. Only between steps (paused or done); the run itself does not change.
   */
  async compareObjectives(
    b: RLConfig,
    source: CompareSource,
  ): Promise<{ runId: string; comparison: ObjectiveComparison }> {
    const a = this.active;
    const session = a?.session;
    if (!a || !session)
      throw new Error(
        'no run is loaded: start a run, or open a saved one (A/B in the runs list), to compare objectives on it',
      );
    if (this.busy())
      throw new Error('the run is training: pause it (or let it finish) to compare objectives between steps');
    if (this.comparing) throw new Error('a comparison is already running');
    this.comparing = true;
    try {
      return { runId: a.header.id, comparison: await session.compareObjectives(validateConfig(b), source) };
    } finally {
      this.comparing = false;
    }
  }

  /**
   * Opens a saved run at its last saved state, paused, for resume() (`done` false: records after the saved step are
   * dropped, so the curves continue from the state the trainer resumes) or openSaved() (`done` true: a finished run
   * opened to compare objectives on, nothing to train). The run's remaining records are returned.
   */
  private async reopen(h: RunHeader, saved: SavedRun | null, done: boolean): Promise<RunRecords> {
    this.dropSeedQueue();
    if (done) this.prepared.drop();
    if (this.active) this.release();
    const header: RunHeader = done ? { ...h, status: 'loading' } : { ...h, status: 'loading', message: undefined };
    const a = this.activate(header);
    try {
      a.session = await this.openSession(a, saved);
    } catch (e) {
      if (this.active === a) {
        if (!done) a.header.status = h.status;
        this.release();
      }
      throw e;
    }
    if (done) {
      header.status = 'done';
      this.emitProgress();
      return this.deps.store.readRecords(h.id);
    }
    return a.resumedAt(saved?.step ?? 0);
  }

  /**
   * Opens a saved run at its last saved state to compare objectives on it, without training: a run that can go on
   * is resumed (paused, as resume() does); a finished run is opened done (nothing to train, but its parameters and
   * task are there for a fresh batch). Its records are returned. Refused for a run with no saved state.
   */
  async openSaved(runId: string): Promise<RunRecords> {
    if (this.busy()) throw new Error('a run is training: pause or reset it first');
    const h = await this.runs.header(runId);
    if (h.status === 'imported' || h.origin)
      throw new Error(`"${h.name}" is an imported run: it has metrics but no trainer state to compare on`);
    if (!(h.step >= h.config.steps && h.savedStep >= h.config.steps)) return this.resume(runId);
    const saved = await this.runs.resumePoint(runId);
    if (!saved) throw new Error(`"${h.name}" has no saved trainer state to compare on`);
    return this.reopen(h, saved, true);
  }

  /**
   * Reopens a saved run from its last saved state (after a reload, a device loss or a failure), paused: start()
   * trains on. Records after the saved step are dropped, so the curves continue from the state the trainer
   * resumes; the run's remaining records are returned (the page replaces what it showed with them).
   */
  async resume(runId: string): Promise<RunRecords> {
    if (this.busy()) throw new Error('a run is training: pause or reset it first');
    this.prepared.drop();
    const h = await this.runs.header(runId);
    if (h.status === 'imported')
      throw new Error(`"${h.name}" is an imported run: it has metrics but no trainer state to continue from`);
    if (h.step >= h.config.steps && h.savedStep >= h.config.steps)
      throw new Error(`"${h.name}" has done all its ${h.config.steps} steps`);
    return this.reopen(h, await this.runs.resumePoint(runId), false);
  }

  /** Asks the current run to pause after the step in progress (its state is saved then). */
  pause(): void {
    if (this.active?.requestPause()) this.emitProgress();
  }

  /** Drops the current run's trainer after the step in progress (the run stays saved, resumable). */
  reset(): void {
    this.dropSeedQueue();
    if (!this.active) return;
    if (this.busy()) {
      this.resetRequested = true;
      this.pause();
      return;
    }
    this.release();
  }

  /** Resolves when the current training loop (if any) has stopped. */
  async idle(): Promise<void> {
    while (this.looping) await this.looping;
  }

  /** Trains the run, then (in a seed queue) each next seed's run while the queue goes on. */
  private async drive(a: ActiveRun, free: boolean): Promise<void> {
    let run = a;
    await a.train(() => this.active === a);
    while (await this.nextSeed(run, free)) {
      const next = this.active!;
      run = next;
      await next.train(() => this.active === next);
    }
  }

  /** The session of a run: at its saved resume point, or (never saved) at its config's start policy. */
  private openSession(a: ActiveRun, from: SavedRun | null): Promise<RunSession> {
    const h = a.header;
    const device = async () => {
      const ctx = await this.deps.gpu();
      a.countCompiles(ctx, () => this.active === a);
      return ctx;
    };
    const { config, backend, mode = 'rl' } = h;
    return openRunSession(
      this.deps,
      { config, backend, mode, sink: a.sink(), device, factory: this.deps.createTrainer },
      from,
    );
  }

  /**
   * The device was lost (or the GPU reported an error the trainer cannot survive): the current run stops as
   * interrupted; resume continues from its last saved state on a new device.
   */
  async deviceLost(why: string): Promise<void> {
    this.prepared.drop();
    const a = this.active;
    await a?.deviceLost(why, this.busy(), () => this.active === a);
  }
}

/** A session as the engine opens every run's (a run's own, or a prepared one with its forwarding sink). */
function openRunSession(
  deps: LabEngineDeps,
  o: {
    config: RLConfig;
    backend: BackendKind;
    mode: RunMode;
    sink: RunSink;
    device: () => Promise<GpuContext>;
    factory: TrainerFactory | undefined;
  },
  from: SavedRun | null = null,
): Promise<RunSession> {
  return RunSession.open(
    {
      config: o.config,
      backend: o.backend,
      divergence: 'pause',
      mode: o.mode,
      inspectGroups: deps.inspectGroups ?? 2,
      autosaveMs: deps.autosaveMs ?? 30_000,
    },
    {
      assets: deps.assets,
      sink: o.sink,
      device: o.device,
      now: deps.now ?? (() => performance.now()),
      ...(deps.rewardSandbox && { rewardSandbox: deps.rewardSandbox }),
      ...(o.factory && { createTrainer: o.factory }),
    },
    from,
  );
}

/** A new run's header, loading: named by `name` or by its config, on `adapter`, in a seed group or not. */
function newRunHeader(o: NewRun & { seedGroup?: SeedGroupTag }, t: number, adapter: string): RunHeader {
  return {
    id: newRunId(t),
    name: o.name ?? runName(o.config, o.preset),
    createdAt: t,
    updatedAt: t,
    config: o.config,
    preset: o.preset,
    backend: o.backend,
    status: 'loading',
    step: 0,
    savedStep: 0,
    elapsedMs: 0,
    adapter: o.backend === 'cpu' ? 'CPU reference backend (slow)' : adapter,
    lastMetrics: {},
    ...(o.mode === 'sft' && { mode: 'sft' as const }),
    ...(o.seedGroup && { seedGroup: o.seedGroup }),
  };
}
