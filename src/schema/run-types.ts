// Plain data the lab engine, its run store and the page share: run headers, run states and the events the
// engine emits. No behaviour here, and nothing that needs a DOM, React or a GPU, so the worker protocol, the
// store and the tests can all name these types.

import { PRESET_INFO, type PresetName, type RLConfig } from './config';
import type { EvalRecord, GroupRecord, GroupSummary, StepHistograms, StepRecord } from './stream';
import type { MetricAlert } from './metrics';
import type { SeedGroupTag, SeedQueueProgress } from './seed-group';

/** Where the policy runs: the WGSL kernels on WebGPU, or the CPU twins (slow; smallest presets only). */
export type BackendKind = 'webgpu' | 'cpu';

/**
 * Life of a run. `interrupted`: it was running when the page closed or the device was lost; it resumes from its
 * last saved state. `failed`: the trainer threw (the message says why); it too can resume from the saved state.
 */
export type RunStatus = 'loading' | 'running' | 'pausing' | 'paused' | 'done' | 'interrupted' | 'failed' | 'imported';

/** What the runs store keeps about a run besides its records (the runs list shows this). */
export interface RunHeader {
  id: string;
  name: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  updatedAt: number;
  config: RLConfig;
  /** The preset the config started from (null: the defaults); shared links and config diffs use it. */
  preset: PresetName | null;
  backend: BackendKind;
  status: RunStatus;
  /** Rollout steps with stored metrics. */
  step: number;
  /** Rollout step of the last saved trainer state (resume point; 0: none saved). */
  savedStep: number;
  /** Milliseconds spent training (pauses excluded). */
  elapsedMs: number;
  /** The adapter description, for the record. */
  adapter: string;
  /** The last optimizer step's metrics (for the runs list). */
  lastMetrics: Record<string, number>;
  /** The last error, for failed runs; why a paused run paused (divergence, an alert). */
  message?: string;
  /** Where an imported run came from. */
  importedFrom?: string;
  /** A run imported from another trainer's log: which trainer, which file, and its metric names the catalog lacks. */
  origin?: RunOrigin;
  /** The seed group the run belongs to (src/schema/seed-group.ts); absent on a run trained alone and on older stored runs. */
  seedGroup?: SeedGroupTag;
  /** 'sft': a supervised run (src/engine/supervised-trainer.ts); absent on RL runs. */
  mode?: 'sft';
}

/** What a run does with its steps: 'rl' samples and trains on rewards (the trainer), 'sft' imitates demonstrations. */
export type RunMode = 'rl' | 'sft';

/** The name a run gets when nobody names it: preset, task and seed. A run whose name differs was named (by a person or a lesson). */
export function defaultRunName(config: RLConfig, preset: PresetName | null): string {
  const algo = preset ? PRESET_INFO[preset].label : 'custom';
  return `${algo} · ${config.task}${config.difficulty !== null ? ` ${config.difficulty}` : ''} · seed ${config.seed}`;
}

/** The longest name a person may give a run. */
export const MAX_RUN_NAME = 80;

/** Why `name` cannot name a run (empty, too long, a control character), or null when it can. */
export function runNameProblem(name: string): string | null {
  if (!name.trim()) return 'a run name cannot be empty';
  if (name.length > MAX_RUN_NAME)
    return `a run name has at most ${MAX_RUN_NAME} characters (this one has ${name.length})`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'a run name is one line of text (no line break or control character)';
  return null;
}

/** The trainers whose logs import as runs (src/io/foreign-logs.ts); their metric names are in the metric catalog. */
export type ForeignTrainer = 'trl' | 'verl' | 'openrlhf';

/** The trainers as a person names them (the runs panel says "imported from TRL"). */
export const TRAINER_TITLES: Readonly<Record<ForeignTrainer, string>> = {
  trl: 'TRL',
  verl: 'verl',
  openrlhf: 'OpenRLHF',
};

export interface RunOrigin {
  trainer: ForeignTrainer;
  file: string;
  /**
   * Metric names with no catalog entry for that trainer, kept under their own names and charted (at most
   * foreign-logs.ts MAX_CHARTED_UNCATALOGUED of them, the most reported).
   */
  uncatalogued: string[];
  /** Names the catalog lacks beyond those charted: how many, and the first of them (the picker's choices). */
  uncharted?: { count: number; names: string[] };
  /** Values that are not finite (NaN, Infinity), kept so: how many, and the first named ("step 37: grad_norm is NaN"). */
  nonFinite?: { count: number; notes: string[] };
  /**
   * The log's end-of-run summary, not a step's measurement (TRL's last log_history entry: train_runtime,
   * train_loss, train_samples_per_second, total_flos, ...), under the catalog's names where it has them.
   */
  summary?: Record<string, number>;
}

/** One stored optimizer step: a StepRecord without its groups and eval (those have their own tables). */
export interface MetricRow {
  step: number;
  optimizerStep: number;
  /**
   * StepRecord's update (0-based index of the optimizer step within its rollout step) and updates (optimizer steps
   * of that rollout step); a chart's x is step - 1 + (update + 1) / updates. Optional: rows read from files and
   * metric batches that do not carry them have neither.
   */
  update?: number;
  updates?: number;
  epoch: number;
  minibatch: number;
  metrics: Record<string, number>;
  /** The rollout step's histograms (StepRecord.histograms), on its last optimizer step's row only. */
  histograms?: StepHistograms;
}

/** The sampled groups of one rollout step. */
export interface RolloutRecord {
  step: number;
  groups: GroupRecord[];
  /** Every group of the step in brief (StepRecord.batch); absent in runs recorded before it was kept. */
  batch?: GroupSummary[];
}

/** A run as it goes in and out of the store, exports and imports. */
export interface RunData {
  header: RunHeader;
  rows: MetricRow[];
  evals: EvalRecord[];
  rollouts: RolloutRecord[];
}

/** The engine's view of the current run, sent to the page on every change of state and after every step. */
export interface RunProgress {
  runId: string | null;
  name: string;
  status: RunStatus | 'idle';
  step: number;
  totalSteps: number;
  /** Training time so far (pauses excluded). */
  elapsedMs: number;
  /** Wall time of the last rollout step. */
  lastStepMs: number;
  /**
   * Median wall time of the recent rollout steps, the first step of the session left out once a later one exists
   * (step-pace.ts); 0 while there is none (no ETA then).
   */
  paceMs: number;
  /** Completion tokens sampled per second over the recent steps. */
  tokensPerSec: number;
  backend: BackendKind;
  savedStep: number;
  /** Why the run stopped: failed, interrupted, or paused by a divergence or an alert. */
  message?: string;
  /** The seed queue this run is part of, while the queue goes on (absent for a run trained alone). */
  seedQueue?: SeedQueueProgress;
  /** What the run is doing now (the status line's phase; src/store/status-line.ts words it). */
  phase: RunPhase;
}

/**
 * What the current run is doing. `loading`: its model or saved state loads (and the device is acquired);
 * `warming-up`: the first step of a session is in flight: it compiles the GPU kernels (kernelsCompiled: the
 * pipelines compiled so far in this session; the total is not known before, each compiles on first use) and, on a
 * fresh run with eval_every > 0, evaluates step 0 first (so it is slower than the steps after it); `training`: a later step;
 * `paused`: by the person (Pause, Step), by a divergence (the run went back to its saved state) or by an alert;
 * `done`: all steps trained; `stopped`: failed or interrupted (the message says why).
 */
export type RunPhase =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'warming-up'; evaluatesStep0: boolean; kernelsCompiled: number }
  | { kind: 'training' }
  | { kind: 'paused'; by: 'person' | 'divergence' | 'alert' }
  | { kind: 'done' }
  | { kind: 'stopped' };

/** What the engine reports; the worker turns these into protocol messages. */
export type EngineEvent =
  | { type: 'progress'; progress: RunProgress }
  /** The records of one rollout step (metrics of each optimizer step; the last carries groups and maybe eval). */
  | { type: 'records'; runId: string; records: StepRecord[] }
  /** A storage or other recoverable problem: shown to the person, training goes on. */
  | { type: 'notice'; level: 'warning' | 'error'; message: string }
  /** The runs list changed (a run was created, saved, deleted or imported). */
  | { type: 'runs-changed' }
  /** A warning sign in the current run's metrics (src/rl/observation/alerts.ts), at the step it fired. */
  | { type: 'alert'; runId: string; alert: Alert }
  /** All records of a run, replacing what the page shows (a diverged run went back to its last saved state). */
  | { type: 'run-data'; runId: string; records: RunRecords };

/** The fields of a StepRecord that the metric tables keep. */
export function rowOf(r: StepRecord): MetricRow {
  const row: MetricRow = {
    step: r.step,
    optimizerStep: r.optimizerStep,
    update: r.update,
    updates: r.updates,
    epoch: r.epoch,
    minibatch: r.minibatch,
    metrics: r.metrics,
  };
  if (r.histograms) row.histograms = r.histograms;
  return row;
}

/** The progress when no run is loaded: what the engine reports and the page starts from. */
export const IDLE_PROGRESS: RunProgress = {
  runId: null,
  name: '',
  status: 'idle',
  step: 0,
  totalSteps: 0,
  elapsedMs: 0,
  lastStepMs: 0,
  paceMs: 0,
  tokensPerSec: 0,
  backend: 'webgpu',
  savedStep: 0,
  phase: { kind: 'idle' },
};

/** A run's records for charts: metric rows, evaluations, and the steps that have sampled groups. */
export interface RunRecords {
  rows: MetricRow[];
  evals: EvalRecord[];
  rolloutSteps: number[];
}

/** An alert condition of the catalog, with the metric it watches. */
export interface AlertRule extends MetricAlert {
  metric: string;
}

/** An alert that fired: the rule, the step it fired at and the value that made it fire. */
export interface Alert extends AlertRule {
  step: number;
  value: number;
  /** Everything above in a few sentences (the notice, the CLI's warning, the message of a paused run). */
  message: string;
}
