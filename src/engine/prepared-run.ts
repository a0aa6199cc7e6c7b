// A run prepared before anyone asks for it: the page's next run (the open lesson's first run) opened as a RunSession
// while the person reads the lesson's question, its first rollout step (the step-0 held-out evaluation with it)
// trained at once, so that pressing Run finds the pipelines compiled and the first step done or under way. The
// step is the one a run created from the same config would train first (the same seed, weights and kernel variants),
// so LabEngine adopts the session as that run's own (records go to the run's sink once it is adopted); a run with
// another config, a change of the device's matmul variants or a lost device discards it (after its step, so no
// buffer goes while the GPU still reads it). Only RL runs without a reward_fn are prepared: nothing a person wrote
// runs before they press Run.

import type { GpuContext } from '../gpu';
import { matmulTuning } from '../kernels/matmul';
import type { StepRecord } from '../schema/stream';
import { sameConfig, type RLConfig } from '../schema/config';
import type { RunSession, RunSink, TrainerFactory, TrainerLike } from './run-session';
import type { BackendKind } from '../schema/run-types';

/**
 * A trainer whose first runStep was started when it was made: runStep hands that step's records to the first
 * caller, then trains as usual. `settled` resolves when the first step has finished or failed.
 */
function startingFirstStep(t: TrainerLike): { trainer: TrainerLike; settled: Promise<void> } {
  let first: Promise<StepRecord[]> | null = t.runStep();
  const settled = first.then(
    () => undefined,
    () => undefined,
  );
  const trainer: TrainerLike = {
    get step() {
      return t.step;
    },
    get setting() {
      return t.setting;
    },
    runStep() {
      const f = first;
      first = null;
      return f ?? t.runStep();
    },
    evaluate: () => t.evaluate(),
    saveStateBytes: () => t.saveStateBytes(),
    exportCheckpoint: () => t.exportCheckpoint(),
    ...(t.compareObjectives && { compareObjectives: t.compareObjectives.bind(t) }),
    destroy: () => t.destroy(),
  };
  return { trainer, settled };
}

export interface PreparedRunOptions {
  config: RLConfig;
  backend: BackendKind;
  /** The factory the session would use (the engine's, else run-session.ts's createTrainer). */
  createTrainer: TrainerFactory;
  /** Opens the session with these ports (the engine's openSession, with a sink that forwards to the adopter's). */
  open(ports: { sink: RunSink; createTrainer: TrainerFactory }): Promise<RunSession>;
  /** What the run's kernels depend on beyond the config (the device's matmul variants, as a value compared with ===), read at prepare and adopt. */
  variants(): string | null;
}

export class PreparedRun {
  readonly config: RLConfig;
  readonly backend: BackendKind;
  /** The variants the first step trains with, read once the session is open (undefined before). */
  private variantsAtStart: string | null | undefined;
  private sinkTarget: RunSink | null = null;
  private stepping = true;
  private readonly session: Promise<RunSession>;
  /** Resolves when the session is open and its first step finished or failed (or the session failed to open). */
  private readonly settled: Promise<void>;

  constructor(private readonly o: PreparedRunOptions) {
    this.config = o.config;
    this.backend = o.backend;
    // Until adopted nothing reaches a sink: the session's only work is the first step, which writes nowhere.
    const refuse = () => {
      throw new Error('a prepared run has no sink until a run adopts it');
    };
    const sink: RunSink = {
      appendStep: (records, ms) => (this.sinkTarget ?? refuse()).appendStep(records, ms),
      save: (saved) => (this.sinkTarget ?? refuse()).save(saved),
      lastSaved: () => (this.sinkTarget ?? refuse()).lastSaved(),
      truncate: (step) => (this.sinkTarget ?? refuse()).truncate(step),
    };
    let firstStep: Promise<void> = Promise.resolve();
    const createTrainer: TrainerFactory = async (req) => {
      const started = startingFirstStep(await o.createTrainer(req));
      firstStep = started.settled;
      return started.trainer;
    };
    this.session = o.open({ sink, createTrainer }).then((session) => {
      this.variantsAtStart = o.variants();
      return session;
    });
    this.settled = this.session.then(
      () => firstStep,
      () => undefined,
    );
    void this.settled.then(() => {
      this.stepping = false;
    });
    // A session that failed to open is a prepared run nobody adopts: the run created later says why itself.
    this.session.catch(() => undefined);
  }

  /**
   * A prepared run on the device `gpu` gives: on WebGPU the device is acquired first, so the matmul variants the
   * step trains with are known from the start (a later change of them discards the run: matches).
   */
  static onDevice(o: {
    config: RLConfig;
    backend: BackendKind;
    createTrainer: TrainerFactory;
    gpu(): Promise<GpuContext>;
    open(sink: RunSink, factory: TrainerFactory, device: () => Promise<GpuContext>): Promise<RunSession>;
  }): PreparedRun {
    let ctx: GpuContext | null = null;
    return new PreparedRun({
      config: o.config,
      backend: o.backend,
      createTrainer: o.createTrainer,
      open: ({ sink, createTrainer: factory }) =>
        o.backend === 'webgpu'
          ? o.gpu().then((c) => {
              ctx = c;
              return o.open(sink, factory, async () => c);
            })
          : o.open(sink, factory, () => o.gpu()),
      variants: () => (ctx ? JSON.stringify(Object.entries(matmulTuning(ctx.device)).sort()) : null),
    });
  }

  /** The first step is still training (the device is busy with it). */
  get busy(): boolean {
    return this.stepping;
  }

  /**
   * This prepared run is the first step of a run of `config` on `backend`, on the kernel variants it started with
   * (they cannot change before the session is open: the device counts as busy until the first step is over).
   */
  matches(config: RLConfig, backend: BackendKind): boolean {
    const variantsKept = this.variantsAtStart === undefined || this.o.variants() === this.variantsAtStart;
    return backend === this.backend && variantsKept && sameConfig(config, this.config);
  }

  /** The session, its records and saves now going to `sink`; rejects when it could not be opened. */
  adopt(sink: RunSink): Promise<RunSession> {
    this.sinkTarget = sink;
    return this.session;
  }

  /** Destroys the session once its first step is over (nothing adopted it). */
  discard(): void {
    void this.settled.then(async () => {
      try {
        (await this.session).destroy();
      } catch {
        /* never opened, or a lost device refusing to destroy: nothing to free */
      }
    });
  }
}

/** The engine's one prepared run: replaced by a run of another config, taken by the run it is the first step of, or dropped. */
export class PreparedSlot {
  private run: PreparedRun | null = null;

  /** The prepared run's first step is still training. */
  get busy(): boolean {
    return this.run?.busy ?? false;
  }

  /** A run of `config` on `backend` is prepared already. */
  holds(config: RLConfig, backend: BackendKind): boolean {
    return this.run?.matches(config, backend) ?? false;
  }

  /** Prepares `run`, discarding the one prepared before. */
  replace(run: PreparedRun): void {
    this.drop();
    this.run = run;
  }

  /** Discards the prepared run, if any (its session goes once its first step is over). */
  drop(): void {
    this.run?.discard();
    this.run = null;
  }

  /** The prepared run when it is the first step of an RL run of `config` (taken: a second create does not get it); any other is discarded. */
  take(config: RLConfig, backend: BackendKind, rl: boolean): PreparedRun | null {
    const p = this.run;
    this.run = null;
    if (!p) return null;
    if (rl && p.matches(config, backend)) return p;
    p.discard();
    return null;
  }
}
