// The page's run in memory (the LabEngine's current run): its header as the runs store keeps it, its RunSession,
// what its progress line shows (pace, tokens per second, the kernels its first step compiles, who paused it), and
// what happens to it between the engine's decisions: each trained step's bookkeeping and events, the runs store as
// its session's sink (a write the store refuses becomes a notice and training goes on in memory), the rewind after a
// divergence, a pause with a message, and a stop as failed or interrupted. The engine (lab-engine.ts) decides when
// a run opens, trains, pauses and goes; this file keeps one run's state straight.

import { GpuDeviceLostError, type GpuContext } from '../gpu';
import { UserRewardError } from '../rl/rewards/user-reward';
import { evalsOf, type EvalRecord, type GroupRecord } from '../schema/stream';
import type { Metrics } from '../schema/metrics';
import type { RunSession, RunSink, StepOutcome } from './run-session';
import { StorageFullError, type RunRecords, type RunStore } from './run-store';
import type { SeedQueueProgress } from '../schema/seed-group';
import { PACE_WINDOW, stepPace } from '../schema/step-pace';
import {
  rowOf,
  type EngineEvent,
  type RunHeader,
  type RunPhase,
  type RunProgress,
  type RunStatus,
} from '../schema/run-types';

/** The least time between two progress events for kernels compiled in a first step. */
const COMPILE_PROGRESS_MS = 250;

/** Statuses in which a run has a trainer in memory. */
const LIVE: readonly RunStatus[] = ['loading', 'running', 'pausing', 'paused', 'done'];

export const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** What a run reports through and writes to: the engine's store, events and clocks. */
export interface ActiveRunIo {
  store: RunStore;
  emit(e: EngineEvent): void;
  /** The engine's progress event (it adds what the engine knows: the seed queue). */
  emitProgress(): void;
  /** Milliseconds clock. */
  now(): number;
  /** Wall clock for headers. */
  wall(): number;
}

export class ActiveRun {
  /** The run's session (null while it loads, after a stop, or when its trainer could not be made again). */
  session: RunSession | null = null;
  /** Steps the loop may still take (Infinity while running freely, 1 for a single step). */
  stepsLeft = 0;
  /** Wall times of the session's latest steps (its first included while it is among them: see sessionSteps). */
  private recentStepMs: number[] = [];
  /** Steps trained since the session opened (a new run or a resume): the first of them compiles the kernels. */
  private sessionSteps = 0;
  /** Pipelines compiled on the device since the session opened; stopCountingCompiles unsubscribes. */
  private kernelsCompiled = 0;
  stopCountingCompiles: () => void = () => undefined;
  /** When the progress last went out for a compile (they are throttled: a first step compiles dozens). */
  private compileEmittedAt = Number.NEGATIVE_INFINITY;
  /** Who paused the run last (the status line says so). */
  pausedBy: 'person' | 'divergence' | 'alert' = 'person';
  private tokensPerSec = 0;
  private lastStepMs = 0;
  /** The store refused the last write (a notice was shown; the next success clears it). */
  private storageFailing = false;

  constructor(
    readonly header: RunHeader,
    private readonly io: ActiveRunIo,
  ) {}

  /** The run's progress; `seedQueue` while the run is part of a seed queue that goes on. */
  progress(seedQueue: SeedQueueProgress | null): RunProgress {
    const h = this.header;
    const recent = this.recentStepMs;
    return {
      runId: h.id,
      name: h.name,
      status: h.status,
      step: h.step,
      totalSteps: h.config.steps,
      elapsedMs: h.elapsedMs,
      lastStepMs: this.lastStepMs,
      paceMs: stepPace(recent, this.sessionSteps === recent.length),
      tokensPerSec: this.tokensPerSec,
      backend: h.backend,
      savedStep: h.savedStep,
      message: h.message,
      ...(seedQueue && { seedQueue }),
      phase: this.phase(),
    };
  }

  /** What the run is doing now, from its status and its session's steps. */
  private phase(): RunPhase {
    const h = this.header;
    switch (h.status) {
      case 'loading':
        return { kind: 'loading' };
      case 'running':
      case 'pausing':
        return this.sessionSteps === 0
          ? {
              kind: 'warming-up',
              evaluatesStep0: h.step === 0 && h.config.eval_every > 0,
              kernelsCompiled: this.kernelsCompiled,
            }
          : { kind: 'training' };
      case 'paused':
        return { kind: 'paused', by: this.pausedBy };
      case 'done':
        return { kind: 'done' };
      default:
        return { kind: 'stopped' };
    }
  }

  notice(level: 'warning' | 'error', text: string): void {
    this.io.emit({ type: 'notice', level, message: text });
  }

  /** Runs a store write; a failure becomes a notice (once until a write succeeds again) and `false`. */
  async persist(what: string, write: () => Promise<void>): Promise<boolean> {
    try {
      await write();
      this.storageFailing = false;
      return true;
    } catch (e) {
      if (!this.storageFailing) {
        const full = e instanceof StorageFullError;
        this.notice(
          'error',
          full
            ? `Storage is full: ${what} was not saved. Runs saved before are intact; training goes on in memory. Delete or export old runs to free space. (${errorText(e)})`
            : `Could not save ${what}: ${errorText(e)}. Runs saved before are intact.`,
        );
      }
      this.storageFailing = true;
      return false;
    }
  }

  /** Saves the header (a copy: the store may keep what it is given). */
  saveHeader(): Promise<boolean> {
    const h = this.header;
    return this.persist(`run "${h.name}"`, () => this.io.store.putHeader({ ...h }));
  }

  /** Sets the run to train `steps` steps (Infinity: until its end or a pause); refused unless it is paused with steps left. */
  beginTraining(steps: number): void {
    const h = this.header;
    if (h.status === 'done' || this.session?.done)
      throw new Error(`the run has done all its ${h.config.steps} steps; start a new run (or raise steps)`);
    if (h.status !== 'paused') throw new Error(`the run is ${h.status}; it cannot train now`);
    this.stepsLeft = steps;
    h.status = 'running';
    h.message = undefined;
    this.pausedBy = 'person';
  }

  /** Asks a running run to pause after the step in progress (its state is saved then); false when it is not running. */
  requestPause(): boolean {
    if (this.header.status !== 'running') return false;
    this.header.status = 'pausing';
    this.stepsLeft = 0;
    return true;
  }

  /** Counts the pipelines the session compiles; during its first step each count goes out (at most 4 a second). */
  countCompiles(ctx: GpuContext, isCurrent: () => boolean): void {
    this.stopCountingCompiles();
    this.stopCountingCompiles = ctx.onCompiled(() => {
      this.kernelsCompiled += 1;
      const t = this.io.now();
      if (!isCurrent() || this.sessionSteps > 0 || t - this.compileEmittedAt < COMPILE_PROGRESS_MS) return;
      if (this.header.status !== 'running' && this.header.status !== 'pausing') return;
      this.compileEmittedAt = t;
      this.io.emitProgress();
    });
  }

  /** A trained step (already in the store through the session's sink): progress, records and alerts to the page. */
  afterStep(o: Extract<StepOutcome, { kind: 'trained' }>): void {
    const { records, ms, alerts } = o;
    const h = this.header;
    this.lastStepMs = ms;
    this.sessionSteps += 1;
    this.recentStepMs.push(ms);
    // The window, and the session's first step while it is still the oldest kept (stepPace leaves it out).
    if (this.recentStepMs.length > PACE_WINDOW + 1) this.recentStepMs.shift();
    // Read through the catalog's type, so renaming either metric breaks typecheck here rather than the progress line.
    const m: Metrics = records[records.length - 1].metrics;
    const perSecond = m['perf/rollout_tokens_per_s'] ?? NaN;
    const rows = (m['completions/mean_length'] ?? 0) * h.config.train_batch_size * h.config.num_generations;
    this.tokensPerSec = Number.isFinite(perSecond) && perSecond > 0 ? perSecond : ms > 0 ? (rows * 1000) / ms : 0;
    this.io.emit({ type: 'records', runId: h.id, records });
    for (const alert of alerts) this.io.emit({ type: 'alert', runId: h.id, alert });
    if (alerts.length && h.config.alert_action === 'pause' && h.status === 'running') {
      // As a pause: the loop stops after this step and saves its state (its metrics are finite).
      h.status = 'pausing';
      this.pausedBy = 'alert';
      h.message = `Paused by an alert (alert_action pause). ${alerts.map((x) => x.message).join(' ')}`;
      this.stepsLeft = 0;
    }
    this.io.emitProgress();
  }

  /**
   * The runs store as the session's sink: a step's rows, groups and evaluations with the updated header in one write,
   * the resume point with the header's saved step, the rewind's truncation.
   */
  sink(): RunSink {
    const store = this.io.store;
    return {
      appendStep: async (records, ms) => {
        const h = this.header;
        const last = records[records.length - 1];
        h.step = last.step;
        h.lastMetrics = { ...last.metrics };
        h.updatedAt = this.io.wall();
        h.elapsedMs += ms;
        const withGroups = records.find((r) => r.groups?.length);
        const groups: GroupRecord[] | undefined = withGroups?.groups;
        const evals: EvalRecord[] = records.flatMap(evalsOf);
        const rollout = groups
          ? { step: last.step, groups, ...(withGroups?.batch && { batch: withGroups.batch }) }
          : null;
        await this.persist(`step ${h.step} of "${h.name}"`, () =>
          store.appendStep({ ...h }, records.map(rowOf), rollout, evals),
        );
      },
      save: async (saved) => {
        const header = { ...this.header, savedStep: saved.step, updatedAt: this.io.wall() };
        const ok = await this.persist(`the trainer state at step ${saved.step}`, () =>
          store.putState(header, { runId: this.header.id, ...saved }),
        );
        if (ok) this.header.savedStep = saved.step;
        return ok;
      },
      lastSaved: async () => {
        const s = await store.getState(this.header.id);
        return s && { ...s, tokenizerConfigJson: s.tokenizerConfigJson ?? null };
      },
      truncate: async (step) => {
        const h = this.header;
        const stored = await store.readRecords(h.id);
        const kept = stored.rows.filter((r) => r.step <= step);
        h.step = step;
        h.savedStep = step;
        h.lastMetrics = kept.length ? { ...kept[kept.length - 1].metrics } : {};
        h.updatedAt = this.io.wall();
        await this.persist(`run "${h.name}"`, () => store.truncate({ ...h }, step));
      },
    };
  }

  /**
   * A diverged run (the session kept nothing of the update and went back to its last saved state): the page gets the
   * run's records as of that state, and the run pauses with the session's message; Start continues from it.
   */
  async rewound(o: Extract<StepOutcome, { kind: 'diverged' }>): Promise<void> {
    const h = this.header;
    const stored = await this.io.store.readRecords(h.id);
    const records: RunRecords = {
      rows: stored.rows.filter((r) => r.step <= o.savedStep),
      evals: stored.evals.filter((e) => e.step <= o.savedStep),
      rolloutSteps: stored.rolloutSteps.filter((s) => s <= o.savedStep),
    };
    h.status = 'paused';
    h.message = o.message;
    h.updatedAt = this.io.wall();
    this.stepsLeft = 0;
    this.pausedBy = 'divergence';
    await this.saveHeader();
    this.io.emit({ type: 'run-data', runId: h.id, records });
    this.notice('error', o.message);
    this.io.emit({ type: 'runs-changed' });
    this.io.emitProgress();
  }

  /** Pauses the run with a message (shown on the page and kept in its header); Start tries again. */
  async pauseWith(text: string): Promise<void> {
    const h = this.header;
    h.status = 'paused';
    h.message = text;
    h.updatedAt = this.io.wall();
    this.stepsLeft = 0;
    await this.saveHeader();
    this.notice('error', text);
    this.io.emit({ type: 'runs-changed' });
    this.io.emitProgress();
  }

  /** Stops the run as failed or interrupted, why kept in its header; its session goes when it is still the current run. */
  async stopWith(status: 'failed' | 'interrupted', why: string, isCurrent: () => boolean): Promise<void> {
    this.header.status = status;
    this.header.message = why;
    this.header.updatedAt = this.io.wall();
    await this.saveHeader();
    if (isCurrent()) {
      this.session?.destroy();
      this.session = null;
    }
    this.io.emit({ type: 'runs-changed' });
    this.io.emitProgress();
  }

  /**
   * Trains the session's steps while the run is current and running, with steps left and not done; then, unless it
   * was paused by a divergence or stopped, saves and ends paused or done. A reward_fn that fails pauses the run with
   * its message; any other failure stops it (interrupted when the device went away, else failed).
   */
  async train(isCurrent: () => boolean): Promise<void> {
    const session = this.session!;
    const h = this.header;
    try {
      while (isCurrent() && h.status === 'running' && this.stepsLeft > 0 && !session.done) {
        const outcome = await session.runStep();
        this.stepsLeft--;
        if (outcome.kind === 'diverged') return await this.rewound(outcome);
        this.afterStep(outcome);
      }
      if (!isCurrent() || (h.status !== 'running' && h.status !== 'pausing')) return;
      const saved = await session.save();
      if (saved.kind === 'diverged') return await this.rewound(saved);
      h.status = session.done ? 'done' : 'paused';
      h.updatedAt = this.io.wall();
      await this.saveHeader();
      this.io.emit({ type: 'runs-changed' });
      this.io.emitProgress();
    } catch (e) {
      // The user's reward function failed (an error, a bad value, a batch past its time limit): nothing of the step
      // was kept, so the run pauses where it is, with the function's own message.
      if (e instanceof UserRewardError)
        return await this.pauseWith(`${e.message}. The run is paused at step ${h.step}; fix reward_fn in a new run`);
      // A lost device interrupts (resumable on a new device) even when the step's own failure (a buffer unmapped
      // under a readback) arrives before the device's lost event: give that event a moment to land first.
      if (h.backend === 'webgpu' && !(e instanceof GpuDeviceLostError)) await new Promise((r) => setTimeout(r, 100));
      const lost = h.status === 'interrupted' || e instanceof GpuDeviceLostError;
      const why = h.message ?? (e instanceof GpuDeviceLostError ? this.lostText(errorText(e)) : errorText(e));
      await this.stopWith(lost ? 'interrupted' : 'failed', why, isCurrent);
    }
  }

  /**
   * The run reopened at its saved resume point `savedStep`: records after it are dropped (said in a notice), so the
   * curves continue from the state the trainer resumes; paused. Returns the records kept.
   */
  async resumedAt(savedStep: number): Promise<RunRecords> {
    const h = this.header;
    if (h.step > savedStep)
      this.notice(
        'warning',
        `"${h.name}": steps ${savedStep + 1}-${h.step} were after the last saved state and are dropped; training continues from step ${savedStep}.`,
      );
    h.step = savedStep;
    h.savedStep = savedStep;
    h.status = 'paused';
    await this.persist(`run "${h.name}"`, () => this.io.store.truncate({ ...h }, savedStep));
    const records = await this.io.store.readRecords(h.id);
    this.io.emit({ type: 'runs-changed' });
    this.io.emitProgress();
    return records;
  }

  /** Lets go of the run's trainer (its saved records stay in the store). */
  close(): void {
    this.stopCountingCompiles();
    try {
      this.session?.destroy();
    } catch {
      /* a lost device may refuse to destroy; nothing to keep */
    }
  }

  /**
   * The device went away (or the GPU reported an error the trainer cannot survive) under a WebGPU run with a trainer:
   * it stops as interrupted (while `training`, its step in flight fails next and the loop records the stop); resume
   * continues from its last saved state on a new device.
   */
  async deviceLost(why: string, training: boolean, isCurrent: () => boolean): Promise<void> {
    const h = this.header;
    if (h.backend !== 'webgpu' || !LIVE.includes(h.status)) return;
    const text = this.lostText(why);
    if (!training) return this.stopWith('interrupted', text, isCurrent);
    h.status = 'interrupted';
    h.message = text;
    this.io.emitProgress();
  }

  /** What a person reads when the device went away under the run. */
  lostText(why: string): string {
    const saved = this.header.savedStep;
    return `${why.replace(/\.\s*$/, '')}. Resume continues from the last saved state${saved ? ` (step ${saved})` : ''}.`;
  }
}
