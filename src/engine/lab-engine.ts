// The LabEngine: the page's driver of one run at a time, each a RunSession (run-session.ts) whose sink is the runs
// store (create, start, pause, single step, reset, resume from the last saved state), every step persisted, and the runs themselves (list, load,
// delete, export, import). A seed group queues one config over N seeds, run after run on the same device; pause
// and reset act on the queue, and a seed that fails is named while the others go on. Every step is watched: a non-finite metric rewinds the run to its last saved state (a
// saved state is always finite) and pauses it; an alert is reported and may pause it. It reports through an `emit`
// callback and never touches React, the DOM or postMessage: the worker wires it to the page, the tests to an
// in-memory store and a scripted trainer.

import { GpuDeviceLostError, type GpuContext } from '../gpu';
import { tokenizerFromFiles } from '../model/hf-folder';
import type { Tokenizer } from '../model/tokenizer';
import type { CompareSource, ObjectiveComparison } from '../rl/compare';
import { validateConfig, type PresetName, type RLConfig } from '../rl/config';
import { evalsOf, type EvalRecord, type GroupRecord } from '../rl/stream';
import type { Metrics } from '../schema/metrics';
import { metricsToCsv, metricsToJsonl, rolloutsToJsonl } from './formats';
import { chartedRows, parseRunOrTrainerLog } from './foreign-logs';
import { StorageFullError, type RunRecords, type RunStore } from './run-store';
import { CHAR_TOKENIZER_PATH, readSourceGenerationConfig, type AssetLoader } from './start-policy';
import { UserRewardError, type UserRewardSandbox } from '../rl/user-reward';
import { checkRewardFn, tryRewardFn, type RewardFnProblem, type RewardFnTrialRow } from '../rl/reward-fn-trial';
import {
  RunSession,
  exportPolicyFolder,
  createTrainer,
  policyFiles,
  type PolicyFiles,
  type RunSink,
  type SavedRun,
  type StepOutcome,
  type TrainerFactory,
} from './run-session';
import { groupSeeds, newSeedGroupId, seedCountError, seedGroupEndText, type SeedGroupTag } from './seed-group';
import {
  IDLE_PROGRESS,
  defaultRunName,
  runNameProblem,
  rowOf,
  type BackendKind,
  type EngineEvent,
  type RolloutRecord,
  type RunHeader,
  type RunMode,
  type RunPhase,
  type RunProgress,
  type RunStatus,
} from './types';
import { PACE_WINDOW, stepPace } from './step-pace';
import { PreparedRun } from './prepared-run';
import { matmulTuning } from '../kernels/matmul';

/** What a run is exported as. */
export type ExportKind = 'metrics-csv' | 'metrics-jsonl' | 'rollouts-jsonl' | 'checkpoint';

/** One file a run is downloaded as: a name to save it under, its MIME type and its content. */
export interface DownloadFile {
  name: string;
  mime: string;
  data: string | Uint8Array;
}

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

/** The least time between two progress events for kernels compiled in a first step. */
const COMPILE_PROGRESS_MS = 250;

/** Statuses in which a run has a trainer in memory. */
const LIVE: readonly RunStatus[] = ['loading', 'running', 'pausing', 'paused', 'done'];

interface Active {
  header: RunHeader;
  /** The run's session (null while it loads, after a stop, or when its trainer could not be made again). */
  session: RunSession | null;
  /** Steps the loop may still take (Infinity while running freely, 1 for a single step). */
  stepsLeft: number;
  /** Wall times of the session's latest steps (its first included while it is among them: see sessionSteps). */
  recentStepMs: number[];
  /** Steps trained since the session opened (a new run or a resume): the first of them compiles the kernels. */
  sessionSteps: number;
  /** Pipelines compiled on the device since the session opened; stopCountingCompiles unsubscribes. */
  kernelsCompiled: number;
  stopCountingCompiles: () => void;
  /** When the progress last went out for a compile (they are throttled: a first step compiles dozens). */
  compileEmittedAt: number;
  /** Who paused the run last (the status line says so). */
  pausedBy: 'person' | 'divergence' | 'alert';
  tokensPerSec: number;
  lastStepMs: number;
  /** The store refused the last write (a notice was shown; the next success clears it). */
  storageFailing: boolean;
}

/** The seeds of a seed group still to run, in order; the engine's current run is the one at `index`. */
interface SeedQueue {
  groupId: string;
  config: RLConfig;
  preset: PresetName | null;
  backend: BackendKind;
  seeds: number[];
  index: number;
  /** Seeds whose run failed, was interrupted, or could not start, and why. */
  failed: { seed: number; why: string }[];
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A run id that sorts by creation time. */
export function newRunId(now: number): string {
  return `run-${now.toString(36)}-${Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
}

/** The default name of a run: preset, task and seed (engine/types.ts defaultRunName). */
export const runName = defaultRunName;

/** A file-name-safe form of a run name. */
export function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'run'
  );
}

export class LabEngine {
  private active: Active | null = null;
  private looping: Promise<void> | null = null;
  private resetRequested = false;
  private seedQueue: SeedQueue | null = null;
  /** An objective comparison is using the trainer (training waits for it: both would sample on the same buffers). */
  private comparing = false;
  /** The page's next run, opened and its first step trained ahead (prepare), until a run adopts or replaces it. */
  private prepared: PreparedRun | null = null;
  private readonly now: () => number;
  private readonly wall: () => number;
  private adapter = '';

  constructor(private readonly deps: LabEngineDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.wall = deps.wallClock ?? (() => Date.now());
  }

  /** The adapter description recorded in new runs' headers. */
  setAdapter(description: string): void {
    this.adapter = description;
  }

  /** Marks runs that were training when the page went away as interrupted (they resume from their saved state). */
  async recover(): Promise<void> {
    const runs = await this.deps.store.listRuns();
    for (const h of runs) {
      if (h.status === 'running' || h.status === 'pausing' || h.status === 'loading') {
        const fixed: RunHeader = {
          ...h,
          status: 'interrupted',
          message:
            h.savedStep > 0
              ? `the page closed while it trained; resume continues from the saved state at step ${h.savedStep}`
              : 'the page closed before any state was saved',
        };
        await this.deps.store.putHeader(fixed).catch(() => undefined);
      }
    }
  }

  /** The current run's progress (status 'idle' when there is none). */
  progress(): RunProgress {
    const a = this.active;
    if (!a) return { ...IDLE_PROGRESS };
    const h = a.header;
    const recent = a.recentStepMs;
    const q = this.seedQueue;
    const queued =
      q && h.seedGroup?.id === q.groupId
        ? {
            seedQueue: {
              groupId: q.groupId,
              index: q.index,
              size: q.seeds.length,
              failedSeeds: q.failed.map((f) => f.seed),
            },
          }
        : {};
    return {
      runId: h.id,
      name: h.name,
      status: h.status,
      step: h.step,
      totalSteps: h.config.steps,
      elapsedMs: h.elapsedMs,
      lastStepMs: a.lastStepMs,
      paceMs: stepPace(recent, a.sessionSteps === recent.length),
      tokensPerSec: a.tokensPerSec,
      backend: h.backend,
      savedStep: h.savedStep,
      message: h.message,
      ...queued,
      phase: phaseOf(a),
    };
  }

  private emitProgress(): void {
    this.deps.emit({ type: 'progress', progress: this.progress() });
  }

  private notice(level: 'warning' | 'error', text: string): void {
    this.deps.emit({ type: 'notice', level, message: text });
  }

  /** Runs a store write; a failure becomes a notice (once until a write succeeds again) and `false`. */
  private async persist(a: Active | null, what: string, write: () => Promise<void>): Promise<boolean> {
    try {
      await write();
      if (a) a.storageFailing = false;
      return true;
    } catch (e) {
      if (!a?.storageFailing) {
        const full = e instanceof StorageFullError;
        this.notice(
          'error',
          full
            ? `Storage is full: ${what} was not saved. Runs saved before are intact; training goes on in memory. Delete or export old runs to free space. (${message(e)})`
            : `Could not save ${what}: ${message(e)}. Runs saved before are intact.`,
        );
      }
      if (a) a.storageFailing = true;
      return false;
    }
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
    if (this.busy() || this.comparing || this.prepared?.busy) return false;
    return !a || a.header.status === 'done' || a.header.status === 'failed' || a.header.status === 'interrupted';
  }

  /** Drops the trainer of the current run (its saved records stay in the store); `quiet`: the next run's progress follows at once. */
  private release(quiet = false): void {
    const a = this.active;
    this.active = null;
    this.resetRequested = false;
    a?.stopCountingCompiles();
    try {
      a?.session?.destroy();
    } catch {
      /* a lost device may refuse to destroy; nothing to keep */
    }
    if (!quiet) this.emitProgress();
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
    if (config.reward_fn !== null) return;
    if (this.prepared?.matches(config, o.backend)) return;
    this.dropPrepared();
    let ctx: GpuContext | null = null;
    const open = (sink: RunSink, factory: TrainerFactory, device: () => Promise<GpuContext>) =>
      this.sessionOf(config, o.backend, 'rl', sink, device, factory);
    this.prepared = new PreparedRun({
      config,
      backend: o.backend,
      createTrainer: this.deps.createTrainer ?? createTrainer,
      // On WebGPU the device first, so the matmul variants the step trains with are known from the start.
      open: ({ sink, createTrainer: factory }) =>
        o.backend === 'webgpu'
          ? this.deps.gpu().then((c) => {
              ctx = c;
              return open(sink, factory, async () => c);
            })
          : open(sink, factory, () => this.deps.gpu()),
      variants: () => (ctx ? JSON.stringify(Object.entries(matmulTuning(ctx.device)).sort()) : null),
    });
  }

  /** Discards the prepared run, if any (its session goes once its first step is over). */
  private dropPrepared(): void {
    this.prepared?.discard();
    this.prepared = null;
  }

  /** The prepared run when it is the first step of a run of `config` (taken: a second create does not get it). */
  private takePrepared(config: RLConfig, backend: BackendKind, mode: RunMode | undefined): PreparedRun | null {
    const p = this.prepared;
    if (!p) return null;
    this.prepared = null;
    if ((mode ?? 'rl') === 'rl' && p.matches(config, backend)) return p;
    p.discard();
    return null;
  }

  /**
   * Creates a new run from a config: loads the start policy and the trainer, saves the run's header, and leaves
   * it paused at step 0 (start or step runs it). A paused current run is released first (it stays saved).
   */
  async create(o: {
    config: RLConfig;
    preset: PresetName | null;
    backend: BackendKind;
    name?: string;
    /** 'sft': a supervised run (run-session.ts's mode), trained through the same session; default 'rl'. */
    mode?: RunMode;
  }): Promise<RunHeader> {
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
  async startSeeds(o: {
    config: RLConfig;
    preset: PresetName | null;
    backend: BackendKind;
    seeds: number;
  }): Promise<void> {
    if (this.busy()) throw new Error('a run is training: pause or reset it before starting a seed group');
    const refused = seedCountError(o.seeds);
    if (refused) throw new Error(refused);
    const config = validateConfig(o.config);
    this.dropSeedQueue();
    const q: SeedQueue = {
      groupId: newSeedGroupId(this.wall()),
      config,
      preset: o.preset,
      backend: o.backend,
      seeds: groupSeeds(config.seed, o.seeds),
      index: 0,
      failed: [],
    };
    this.seedQueue = q;
    if (await this.openQueuedSeed(q)) this.go(Infinity);
  }

  /** Stops a seed queue (reset, a new run, a resume): the seeds not started yet are named. */
  private dropSeedQueue(): void {
    const q = this.seedQueue;
    this.seedQueue = null;
    if (!q) return;
    const left = q.seeds.slice(q.index + 1);
    if (left.length)
      this.notice(
        'warning',
        `The seed group stopped: seed${left.length > 1 ? 's' : ''} ${left.join(', ')} ${left.length > 1 ? 'were' : 'was'} not run.`,
      );
  }

  /** Creates the run of the queue's seed at `index`, or of the next that can start; false when none is left (the queue ends). */
  private async openQueuedSeed(q: SeedQueue): Promise<boolean> {
    while (q.index < q.seeds.length) {
      if (this.seedQueue !== q) return false;
      const seed = q.seeds[q.index];
      const seedGroup: SeedGroupTag = { id: q.groupId, index: q.index, size: q.seeds.length };
      try {
        await this.open({ config: { ...q.config, seed }, preset: q.preset, backend: q.backend, seedGroup });
        return this.seedQueue === q;
      } catch (e) {
        if (this.seedQueue !== q) return false;
        this.seedFailed(q, seed, `could not start: ${message(e)}`);
        q.index++;
      }
    }
    this.finishSeedQueue(q);
    return false;
  }

  private seedFailed(q: SeedQueue, seed: number, why: string): void {
    q.failed.push({ seed, why });
    const left = q.seeds.length - q.index - 1;
    this.notice(
      'error',
      `Seed ${seed} of the seed group ${why}.${left > 0 ? ` The other seed${left > 1 ? 's go' : ' goes'} on.` : ''}`,
    );
  }

  private finishSeedQueue(q: SeedQueue): void {
    if (this.seedQueue === q) this.seedQueue = null;
    const ended = seedGroupEndText(q.seeds.length, q.failed);
    if (ended) this.notice('warning', ended);
    this.emitProgress();
  }

  /**
   * After a run of the seed queue stopped: done or failed moves the queue to the next seed (created, and training
   * when `free`); paused holds the queue. True when the next seed's run is the active one and set to train.
   */
  private async nextSeed(run: Active, free: boolean): Promise<boolean> {
    const q = this.seedQueue;
    if (!q || this.resetRequested || this.active !== run || run.header.seedGroup?.id !== q.groupId) return false;
    const { status, config, message: why } = run.header;
    if (status === 'failed' || status === 'interrupted')
      this.seedFailed(
        q,
        config.seed,
        `${status === 'failed' ? 'failed' : 'was interrupted'}${why ? `: ${why.replace(/\.\s*$/, '')}` : ''}`,
      );
    else if (status !== 'done') return false;
    q.index++;
    if (!(await this.openQueuedSeed(q)) || !free) return false;
    const next = this.active!;
    next.stepsLeft = Infinity;
    next.header.status = 'running';
    this.emitProgress();
    return true;
  }

  /** create() without the busy check and the queue's end: the seed queue creates its runs through it. */
  private async open(o: {
    config: RLConfig;
    preset: PresetName | null;
    backend: BackendKind;
    name?: string;
    mode?: RunMode;
    seedGroup?: SeedGroupTag;
  }): Promise<RunHeader> {
    const config = validateConfig(o.config);
    // A reward_fn that does not compile is refused input: no run is created for it (the page shows where it fails).
    if (config.reward_fn !== null && this.deps.rewardSandbox) {
      const problem = await this.checkRewardFn(config.reward_fn);
      if (problem) throw new UserRewardError(problem.message, problem.at);
    }
    // The next seed of a queue replaces the previous one without an idle moment in between (the page would offer Start).
    if (this.active) this.release(o.seedGroup !== undefined && o.seedGroup.index > 0);
    const t = this.wall();
    const header: RunHeader = {
      id: newRunId(t),
      name: o.name ?? runName(config, o.preset),
      createdAt: t,
      updatedAt: t,
      config,
      preset: o.preset,
      backend: o.backend,
      status: 'loading',
      step: 0,
      savedStep: 0,
      elapsedMs: 0,
      adapter: o.backend === 'cpu' ? 'CPU reference backend (slow)' : this.adapter,
      lastMetrics: {},
      ...(o.mode === 'sft' && { mode: 'sft' as const }),
      ...(o.seedGroup && { seedGroup: o.seedGroup }),
    };
    const a = newActive(header);
    this.active = a;
    this.emitProgress();
    let session: RunSession;
    const prepared = this.takePrepared(config, o.backend, o.mode);
    try {
      // A prepared session that could not open (a fetch that failed then, say) leaves the run to open its own.
      const adopted = prepared ? await prepared.adopt(this.sinkOf(a)).catch(() => null) : null;
      if (adopted) {
        session = adopted;
        // The run's kernel count from now on (those its prepared step compiled are already built).
        if (o.backend === 'webgpu') this.countCompiles(a, await this.deps.gpu());
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
    await this.persist(a, `run "${header.name}"`, () => this.deps.store.putHeader(header));
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
    if (a.header.status === 'done' || a.session.done)
      throw new Error(`the run has done all its ${a.header.config.steps} steps; start a new run (or raise steps)`);
    if (a.header.status !== 'paused') throw new Error(`the run is ${a.header.status}; it cannot train now`);
    a.stepsLeft = steps;
    a.header.status = 'running';
    a.header.message = undefined;
    a.pausedBy = 'person';
    this.emitProgress();
    this.looping = this.drive(a, steps === Infinity).finally(() => {
      this.looping = null;
      if (this.resetRequested) this.release();
    });
  }

  /**
   * A/B of the current run's objective and `b` on one batch at its current parameters (src/rl/compare.ts): its latest
   * rollout step or a fresh batch. Only between steps (paused or done); the run itself does not change.
   */
  async compareObjectives(
    b: RLConfig,
    source: CompareSource,
  ): Promise<{ runId: string; comparison: ObjectiveComparison }> {
    const a = this.active;
    const trainer = a?.session?.trainer;
    if (!a || !trainer)
      throw new Error(
        'no run is loaded: start a run, or open a saved one (A/B in the runs list), to compare objectives on it',
      );
    if (this.busy())
      throw new Error('the run is training: pause it (or let it finish) to compare objectives between steps');
    if (this.comparing) throw new Error('a comparison is already running');
    if (!trainer.compareObjectives) throw new Error("this run's trainer cannot compare objectives");
    this.comparing = true;
    try {
      return { runId: a.header.id, comparison: await trainer.compareObjectives(validateConfig(b), source) };
    } finally {
      this.comparing = false;
    }
  }

  /** Compiles `source` in the reward sandbox (calling nothing): null when it compiles to a function, else where and why not. */
  async checkRewardFn(source: string): Promise<RewardFnProblem | null> {
    if (!this.deps.rewardSandbox) return { message: 'reward_fn: this engine has no reward sandbox', at: null };
    return checkRewardFn(this.deps.rewardSandbox, source);
  }

  /** Scores one batch of `config`'s task (its answers, right and altered) with its reward_fn, in the sandbox. */
  async tryRewardFn(config: RLConfig): Promise<{ rows: RewardFnTrialRow[] } | { problem: RewardFnProblem }> {
    if (!this.deps.rewardSandbox)
      return { problem: { message: 'reward_fn: this engine has no reward sandbox', at: null } };
    return tryRewardFn(this.deps.rewardSandbox, config);
  }

  /** Gives a saved run the name `name` (an empty name gives it back its default name). */
  async renameRun(runId: string, name: string): Promise<RunHeader> {
    const h = this.active?.header.id === runId ? this.active.header : await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    const text = name.trim() || defaultRunName(h.config, h.preset);
    const problem = runNameProblem(text);
    if (problem) throw new Error(problem);
    h.name = text;
    const stored = this.active?.header === h ? { ...h } : h;
    await this.deps.store.putHeader(stored);
    this.deps.emit({ type: 'runs-changed' });
    if (this.active?.header === h) this.emitProgress();
    return { ...h };
  }

  /**
   * Opens a saved run at its last saved state to compare objectives on it, without training: a run that can go on
   * is resumed (paused, as resume() does); a finished run is opened done (nothing to train, but its parameters and
   * task are there for a fresh batch). Its records are returned. Refused for a run with no saved state.
   */
  async openSaved(runId: string): Promise<RunRecords> {
    if (this.busy()) throw new Error('a run is training: pause or reset it first');
    const h = await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    if (h.status === 'imported' || h.origin)
      throw new Error(`"${h.name}" is an imported run: it has metrics but no trainer state to compare on`);
    if (!(h.step >= h.config.steps && h.savedStep >= h.config.steps)) return this.resume(runId);
    const saved = await this.deps.store.getState(runId);
    if (!saved) throw new Error(`"${h.name}" has no saved trainer state to compare on`);
    this.dropSeedQueue();
    this.dropPrepared();
    if (this.active) this.release();
    const header: RunHeader = { ...h, status: 'loading' };
    const a = newActive(header);
    this.active = a;
    this.emitProgress();
    try {
      a.session = await this.openSession(a, { ...saved, tokenizerConfigJson: saved.tokenizerConfigJson ?? null });
    } catch (e) {
      if (this.active === a) this.release();
      throw e;
    }
    header.status = 'done';
    this.emitProgress();
    return this.deps.store.readRecords(runId);
  }

  /** Asks the current run to pause after the step in progress (its state is saved then). */
  pause(): void {
    const a = this.active;
    if (a?.header.status !== 'running') return;
    a.header.status = 'pausing';
    a.stepsLeft = 0;
    this.emitProgress();
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
  private async drive(a: Active, free: boolean): Promise<void> {
    let run = a;
    await this.loop(run);
    while (await this.nextSeed(run, free)) {
      run = this.active!;
      await this.loop(run);
    }
  }

  private async loop(a: Active): Promise<void> {
    const session = a.session!;
    try {
      while (this.active === a && a.header.status === 'running' && a.stepsLeft > 0 && !session.done) {
        const outcome = await session.runStep();
        a.stepsLeft--;
        if (outcome.kind === 'diverged') return await this.rewound(a, outcome);
        this.afterStep(a, outcome);
      }
      if (this.active !== a || (a.header.status !== 'running' && a.header.status !== 'pausing')) return;
      const saved = await session.save();
      if (saved.kind === 'diverged') return await this.rewound(a, saved);
      a.header.status = session.done ? 'done' : 'paused';
      a.header.updatedAt = this.wall();
      await this.persist(a, `run "${a.header.name}"`, () => this.deps.store.putHeader(a.header));
      this.deps.emit({ type: 'runs-changed' });
      this.emitProgress();
    } catch (e) {
      // The user's reward function failed (an error, a bad value, a batch past its time limit): nothing of the step
      // was kept, so the run pauses where it is, with the function's own message.
      if (e instanceof UserRewardError)
        return await this.pauseWith(
          a,
          `${e.message}. The run is paused at step ${a.header.step}; fix reward_fn in a new run`,
        );
      // A lost device interrupts (resumable on a new device) even when the step's own failure (a buffer unmapped
      // under a readback) arrives before the device's lost event: give that event a moment to land first.
      if (a.header.backend === 'webgpu' && !(e instanceof GpuDeviceLostError))
        await new Promise((r) => setTimeout(r, 100));
      const lost = a.header.status === 'interrupted' || e instanceof GpuDeviceLostError;
      const why = a.header.message ?? (e instanceof GpuDeviceLostError ? lostText(a, message(e)) : message(e));
      await this.stopWith(a, lost ? 'interrupted' : 'failed', why);
    }
  }

  /** A trained step (already in the store through the session's sink): progress, records and alerts to the page. */
  private afterStep(a: Active, o: Extract<StepOutcome, { kind: 'trained' }>): void {
    const { records, ms, alerts } = o;
    const h = a.header;
    a.lastStepMs = ms;
    a.sessionSteps += 1;
    a.recentStepMs.push(ms);
    // The window, and the session's first step while it is still the oldest kept (stepPace leaves it out).
    if (a.recentStepMs.length > PACE_WINDOW + 1) a.recentStepMs.shift();
    // Read through the catalog's type, so renaming either metric breaks typecheck here rather than the progress line.
    const m: Metrics = records[records.length - 1].metrics;
    const perSecond = m['perf/rollout_tokens_per_s'] ?? NaN;
    const rows = (m['completions/mean_length'] ?? 0) * h.config.train_batch_size * h.config.num_generations;
    a.tokensPerSec = Number.isFinite(perSecond) && perSecond > 0 ? perSecond : ms > 0 ? (rows * 1000) / ms : 0;
    this.deps.emit({ type: 'records', runId: h.id, records });
    for (const alert of alerts) this.deps.emit({ type: 'alert', runId: h.id, alert });
    if (alerts.length && h.config.alert_action === 'pause' && h.status === 'running') {
      // As pause(): the loop stops after this step and saves its state (its metrics are finite).
      h.status = 'pausing';
      a.pausedBy = 'alert';
      h.message = `Paused by an alert (alert_action pause). ${alerts.map((x) => x.message).join(' ')}`;
      a.stepsLeft = 0;
    }
    this.emitProgress();
  }

  /**
   * The runs store as a session's sink: a step's rows, groups and evaluations with the updated header in one write,
   * the resume point with the header's saved step, the rewind's truncation. A write the store refuses becomes a
   * notice and training goes on in memory (persist).
   */
  private sinkOf(a: Active): RunSink {
    const store = this.deps.store;
    return {
      appendStep: async (records, ms) => {
        const h = a.header;
        const last = records[records.length - 1];
        h.step = last.step;
        h.lastMetrics = { ...last.metrics };
        h.updatedAt = this.wall();
        h.elapsedMs += ms;
        const withGroups = records.find((r) => r.groups?.length);
        const groups: GroupRecord[] | undefined = withGroups?.groups;
        const evals: EvalRecord[] = records.flatMap(evalsOf);
        const rollout = groups
          ? { step: last.step, groups, ...(withGroups?.batch && { batch: withGroups.batch }) }
          : null;
        await this.persist(a, `step ${h.step} of "${h.name}"`, () =>
          store.appendStep({ ...h }, records.map(rowOf), rollout, evals),
        );
      },
      save: async (saved) => {
        const header = { ...a.header, savedStep: saved.step, updatedAt: this.wall() };
        const ok = await this.persist(a, `the trainer state at step ${saved.step}`, () =>
          store.putState(header, { runId: a.header.id, ...saved }),
        );
        if (ok) a.header.savedStep = saved.step;
        return ok;
      },
      lastSaved: async () => {
        const s = await store.getState(a.header.id);
        return s && { ...s, tokenizerConfigJson: s.tokenizerConfigJson ?? null };
      },
      truncate: async (step) => {
        const h = a.header;
        const stored = await store.readRecords(h.id);
        const kept = stored.rows.filter((r) => r.step <= step);
        h.step = step;
        h.savedStep = step;
        h.lastMetrics = kept.length ? { ...kept[kept.length - 1].metrics } : {};
        h.updatedAt = this.wall();
        await this.persist(a, `run "${h.name}"`, () => store.truncate({ ...h }, step));
      },
    };
  }

  /** The session of a run: at its saved resume point, or (never saved) at its config's start policy. */
  private openSession(a: Active, from: SavedRun | null): Promise<RunSession> {
    const h = a.header;
    const device = async () => {
      const ctx = await this.deps.gpu();
      this.countCompiles(a, ctx);
      return ctx;
    };
    return this.sessionOf(h.config, h.backend, h.mode ?? 'rl', this.sinkOf(a), device, this.deps.createTrainer, from);
  }

  /** A session as the engine opens every run's (a run's own, or a prepared one with its forwarding sink). */
  private sessionOf(
    config: RLConfig,
    backend: BackendKind,
    mode: RunMode,
    sink: RunSink,
    device: () => Promise<GpuContext>,
    trainerFactory: TrainerFactory | undefined,
    from: SavedRun | null = null,
  ): Promise<RunSession> {
    return RunSession.open(
      {
        config,
        backend,
        divergence: 'pause',
        mode,
        inspectGroups: this.deps.inspectGroups ?? 2,
        autosaveMs: this.deps.autosaveMs ?? 30_000,
      },
      {
        assets: this.deps.assets,
        sink,
        device,
        now: this.now,
        ...(this.deps.rewardSandbox && { rewardSandbox: this.deps.rewardSandbox }),
        ...(trainerFactory && { createTrainer: trainerFactory }),
      },
      from,
    );
  }

  /** Counts the pipelines the session compiles; during its first step each count goes out (at most 4 a second). */
  private countCompiles(a: Active, ctx: GpuContext): void {
    a.stopCountingCompiles();
    a.stopCountingCompiles = ctx.onCompiled(() => {
      a.kernelsCompiled += 1;
      const t = this.now();
      if (this.active !== a || a.sessionSteps > 0 || t - a.compileEmittedAt < COMPILE_PROGRESS_MS) return;
      if (a.header.status !== 'running' && a.header.status !== 'pausing') return;
      a.compileEmittedAt = t;
      this.emitProgress();
    });
  }

  /**
   * A diverged run (the session kept nothing of the update and went back to its last saved state): the page gets the
   * run's records as of that state, and the run pauses with the session's message; Start continues from it.
   */
  private async rewound(a: Active, o: Extract<StepOutcome, { kind: 'diverged' }>): Promise<void> {
    const h = a.header;
    const stored = await this.deps.store.readRecords(h.id);
    const records: RunRecords = {
      rows: stored.rows.filter((r) => r.step <= o.savedStep),
      evals: stored.evals.filter((e) => e.step <= o.savedStep),
      rolloutSteps: stored.rolloutSteps.filter((s) => s <= o.savedStep),
    };
    h.status = 'paused';
    h.message = o.message;
    h.updatedAt = this.wall();
    a.stepsLeft = 0;
    a.pausedBy = 'divergence';
    await this.persist(a, `run "${h.name}"`, () => this.deps.store.putHeader({ ...h }));
    this.deps.emit({ type: 'run-data', runId: h.id, records });
    this.notice('error', o.message);
    this.deps.emit({ type: 'runs-changed' });
    this.emitProgress();
  }

  /** Pauses the current run with a message (shown on the page and kept in its header); Start tries again. */
  private async pauseWith(a: Active, text: string): Promise<void> {
    const h = a.header;
    h.status = 'paused';
    h.message = text;
    h.updatedAt = this.wall();
    a.stepsLeft = 0;
    await this.persist(a, `run "${h.name}"`, () => this.deps.store.putHeader({ ...h }));
    this.notice('error', text);
    this.deps.emit({ type: 'runs-changed' });
    this.emitProgress();
  }

  private async stopWith(a: Active, status: 'failed' | 'interrupted', why: string): Promise<void> {
    a.header.status = status;
    a.header.message = why;
    a.header.updatedAt = this.wall();
    await this.persist(a, `run "${a.header.name}"`, () => this.deps.store.putHeader({ ...a.header }));
    if (this.active === a) {
      a.session?.destroy();
      a.session = null;
    }
    this.deps.emit({ type: 'runs-changed' });
    this.emitProgress();
  }

  /**
   * The device was lost (or the GPU reported an error the trainer cannot survive): the current run stops as
   * interrupted; resume continues from its last saved state on a new device.
   */
  async deviceLost(why: string): Promise<void> {
    this.dropPrepared();
    const a = this.active;
    if (a?.header.backend !== 'webgpu' || !LIVE.includes(a.header.status)) return;
    const text = lostText(a, why);
    if (this.busy()) {
      a.header.status = 'interrupted';
      a.header.message = text;
      this.emitProgress(); // the loop's step fails next and records the stop
      return;
    }
    await this.stopWith(a, 'interrupted', text);
  }

  /**
   * Reopens a saved run from its last saved state (after a reload, a device loss or a failure), paused: start()
   * trains on. Records after the saved step are dropped, so the curves continue from the state the trainer
   * resumes; the run's remaining records are returned (the page replaces what it showed with them).
   */
  async resume(runId: string): Promise<RunRecords> {
    if (this.busy()) throw new Error('a run is training: pause or reset it first');
    this.dropPrepared();
    const h = await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    if (h.status === 'imported')
      throw new Error(`"${h.name}" is an imported run: it has metrics but no trainer state to continue from`);
    if (h.step >= h.config.steps && h.savedStep >= h.config.steps)
      throw new Error(`"${h.name}" has done all its ${h.config.steps} steps`);
    const saved = await this.deps.store.getState(runId);
    this.dropSeedQueue();
    if (this.active) this.release();
    const header: RunHeader = { ...h, status: 'loading', message: undefined };
    const a = newActive(header);
    this.active = a;
    this.emitProgress();
    try {
      a.session = await this.openSession(
        a,
        saved && { ...saved, tokenizerConfigJson: saved.tokenizerConfigJson ?? null },
      );
    } catch (e) {
      if (this.active === a) {
        a.header.status = h.status;
        this.release();
      }
      throw e;
    }
    const savedStep = saved?.step ?? 0;
    if (header.step > savedStep)
      this.notice(
        'warning',
        `"${h.name}": steps ${savedStep + 1}-${header.step} were after the last saved state and are dropped; training continues from step ${savedStep}.`,
      );
    header.step = savedStep;
    header.savedStep = savedStep;
    header.status = 'paused';
    await this.persist(a, `run "${h.name}"`, () => this.deps.store.truncate({ ...header }, savedStep));
    const records = await this.deps.store.readRecords(runId);
    this.deps.emit({ type: 'runs-changed' });
    this.emitProgress();
    return records;
  }

  private readonly tokenizers = new Map<string, Tokenizer>();

  /** The tokenizer of a run (the current run's, the one saved with its state, else the character tokenizer). */
  async tokenizerFor(runId: string): Promise<Tokenizer> {
    const cached = this.tokenizers.get(runId);
    if (cached) return cached;
    const live = this.active?.header.id === runId ? this.active.session : null;
    let json = live?.tokenizerJson ?? '';
    let configJson = live?.tokenizerConfigJson ?? null;
    if (!json) {
      const saved = await this.deps.store.getState(runId).catch(() => null);
      json = saved?.tokenizerJson ?? '';
      configJson = saved?.tokenizerConfigJson ?? null;
    }
    if (!json) json = await this.deps.assets.text(CHAR_TOKENIZER_PATH);
    const tok = await tokenizerFromFiles(json, configJson);
    if (this.tokenizers.size > 32) this.tokenizers.clear();
    this.tokenizers.set(runId, tok);
    return tok;
  }

  /** Every saved run, newest first, with the current run's live status. */
  async listRuns(): Promise<RunHeader[]> {
    const runs = await this.deps.store.listRuns();
    const a = this.active;
    return runs.map((h) => (a && h.id === a.header.id ? { ...a.header } : h));
  }

  /**
   * A saved run's metric rows, evaluations and the steps that have sampled groups. A run imported from another
   * trainer's log gives the charts' names only (foreign-logs.ts chartedRows): the catalog's, its charted
   * uncatalogued ones and `picked`.
   */
  async loadRun(runId: string, picked: readonly string[] = []): Promise<RunRecords> {
    const records = await this.deps.store.readRecords(runId);
    const origin = (await this.deps.store.getRun(runId))?.origin;
    return origin ? { ...records, rows: chartedRows(records.rows, origin, picked) } : records;
  }

  /** The sampled groups of one step of a saved run. */
  async loadRollouts(runId: string, step: number): Promise<RolloutRecord> {
    const g = await this.deps.store.readRollouts(runId, step);
    if (!g) throw new Error(`no sampled groups are saved for step ${step}`);
    return g;
  }

  /** Deletes a saved run (the current run is reset first). */
  async deleteRun(runId: string): Promise<void> {
    if (this.active?.header.id === runId) {
      if (this.busy()) throw new Error('pause the run before deleting it');
      this.dropSeedQueue();
      this.release();
    }
    await this.deps.store.deleteRun(runId);
    this.tokenizers.delete(runId);
    this.deps.emit({ type: 'runs-changed' });
  }

  /** The files of an export of a saved run. */
  async exportRun(runId: string, kind: ExportKind): Promise<DownloadFile[]> {
    const a = this.active;
    const h = a?.header.id === runId ? { ...a.header } : await this.deps.store.getRun(runId);
    if (!h) throw new Error(`no saved run ${runId}`);
    const base = slug(h.name);
    switch (kind) {
      case 'metrics-csv': {
        const r = await this.deps.store.readRecords(runId);
        return [{ name: `${base}.metrics.csv`, mime: 'text/csv', data: metricsToCsv(h, r.rows, r.evals) }];
      }
      case 'metrics-jsonl': {
        const r = await this.deps.store.readRecords(runId);
        return [
          { name: `${base}.metrics.jsonl`, mime: 'application/x-ndjson', data: metricsToJsonl(h, r.rows, r.evals) },
        ];
      }
      case 'rollouts-jsonl': {
        const rollouts = await this.deps.store.readAllRollouts(runId);
        return [{ name: `${base}.rollouts.jsonl`, mime: 'application/x-ndjson', data: rolloutsToJsonl(h, rollouts) }];
      }
      case 'checkpoint': {
        // The live session's policy when the run is between steps, else the saved resume point; a LoRA run's adapters
        // come from its trainer state (the checkpoint holds the merged weights).
        const live = a && a.header.id === runId && a.session && !this.busy() ? a.session : null;
        let policy: PolicyFiles;
        if (live) policy = await live.exportFiles();
        else {
          const s = await this.deps.store.getState(runId);
          if (!s)
            throw new Error(
              h.mode === 'sft'
                ? `"${h.name}" is a supervised run, which keeps no saved checkpoint: download it while it is the open run`
                : `"${h.name}" has no saved checkpoint yet (pause it to save one)`,
            );
          policy = policyFiles(
            { ...s, tokenizerConfigJson: s.tokenizerConfigJson ?? null },
            h.config.lora_rank > 0 ? s.state : null,
          );
        }
        // The folders transformers and PEFT load: <run>-step<N>/ (and <run>-step<N>-adapter/), paths under the
        // folder the page zips or writes into (ui/Downloads.tsx).
        const out = exportPolicyFolder(
          h.name,
          policy,
          await readSourceGenerationConfig(h.config.checkpoint, this.deps.assets),
          h.config.checkpoint,
        );
        return out.files.map((f) => ({
          name: f.path,
          mime: f.path.endsWith('.json') ? 'application/json' : 'application/octet-stream',
          data: f.data,
        }));
      }
    }
  }

  /**
   * Imports an exported run file, or a TRL, verl or OpenRLHF metrics log, as a new saved run; returns its header.
   * Throws RunFileError for a file that is none of them.
   */
  async importRun(fileName: string, text: string): Promise<RunHeader> {
    const data = parseRunOrTrainerLog(fileName, text);
    const t = this.wall();
    data.header = {
      ...data.header,
      id: newRunId(t),
      name: `${data.header.name} (imported)`,
      status: 'imported',
      updatedAt: t,
      savedStep: 0,
    };
    await this.deps.store.putRun(data);
    this.deps.emit({ type: 'runs-changed' });
    return data.header;
  }
}

/** A run's in-memory part, before its session is open. */
function newActive(header: RunHeader): Active {
  return {
    header,
    session: null,
    stepsLeft: 0,
    recentStepMs: [],
    sessionSteps: 0,
    kernelsCompiled: 0,
    stopCountingCompiles: () => undefined,
    compileEmittedAt: Number.NEGATIVE_INFINITY,
    pausedBy: 'person',
    tokensPerSec: 0,
    lastStepMs: 0,
    storageFailing: false,
  };
}

/** What the run is doing now, from its status and its session's steps. */
function phaseOf(a: Active): RunPhase {
  const h = a.header;
  switch (h.status) {
    case 'loading':
      return { kind: 'loading' };
    case 'running':
    case 'pausing':
      return a.sessionSteps === 0
        ? {
            kind: 'warming-up',
            evaluatesStep0: h.step === 0 && h.config.eval_every > 0,
            kernelsCompiled: a.kernelsCompiled,
          }
        : { kind: 'training' };
    case 'paused':
      return { kind: 'paused', by: a.pausedBy };
    case 'done':
      return { kind: 'done' };
    default:
      return { kind: 'stopped' };
  }
}

/** What a person reads when the device went away under a run. */
function lostText(a: Active, why: string): string {
  return `${why.replace(/\.\s*$/, '')}. Resume continues from the last saved state${a.header.savedStep ? ` (step ${a.header.savedStep})` : ''}.`;
}
