// The typed message protocol between the page and the engine worker. Every message the two sides exchange is
// listed here; both switch statements are exhaustive over these unions, so adding a message is a type error
// until both sides handle it. Typed arrays (metric columns, token planes, export bytes) are transferred.
// Every request travels with an id the page's client allocates (Envelope) and gets exactly one answer carrying
// that id back: its reply (Replies names which) or an 'error'. So two requests of one type in flight each get
// their own answer (src/worker/requests.ts keeps the id -> caller map). Events (progress, records, runs, alerts,
// notices, device errors) carry no id and go to the store's one listener.

import type { DownloadFile, ExportKind } from '../engine/lab-engine';
import type { MetricBatch } from '../schema/metric-batch';
import type { BackendKind, RunHeader, RunMode, RunProgress } from '../schema/run-types';
import type { ModelEstimate, ModelEstimateProblem } from '../engine/model-estimates';
import type { AdapterReport } from '../gpu/adapter';
import type { HubCheck, HubProgress, KeptModel } from '../hub/manager-types';
import type { CaseResult } from '../kernels/verify';
import type { Alert } from '../rl/observation/alerts';
import type { CompareSource, ObjectiveComparison } from '../rl/observation/compare';
import type { RewardFnProblem, RewardFnTrialRow } from '../rl/rewards/reward-fn-trial';
import type { PresetName, RLConfig } from '../schema/config';
import type { EvalRecord, GroupRecord, GroupSummary } from '../schema/stream';
import type { PromptLength } from '../export';

/**
 * What a browser test may set on the page before it loads (window.__rlLabTestHooks, through Playwright's
 * addInitScript; no link or field reaches it): `autosaveMs` replaces the engine's 30 s wall-clock autosave, so
 * that what a test asserts about saves is driven by steps (Infinity: saves at save_every, pauses and the end only).
 */
export interface EngineTestHooks {
  autosaveMs?: number;
}

/** The global a browser test sets its EngineTestHooks under. */
export const TEST_HOOKS_GLOBAL = '__rlLabTestHooks';

/** Page -> worker. */
export type Request =
  | { type: 'init'; hooks?: EngineTestHooks }
  | {
      type: 'selftest';
      /** Only cases whose name contains this text (all when empty). */
      filter?: string;
      /** Only the representative sample of them (src/kernels/case-sample.ts); all when absent. */
      sample?: boolean;
    }
  /** A new run from a config (the current paused run, if any, stays saved); then start, single-step, or wait. `name`: the run's name (default: preset, task and seed). */
  | {
      type: 'configure';
      config: RLConfig;
      preset: PresetName | null;
      backend: BackendKind;
      then: 'start' | 'step' | 'none';
      name?: string;
      /** 'sft': a supervised run on the task's demonstrations instead of RL (a lesson's SFT run); default 'rl'. */
      mode?: RunMode;
    }
  /** The run the page will most likely configure next (the open lesson's first run): opened and its first step trained ahead (LabEngine.prepare); no reply but 'done'. */
  | { type: 'prepare'; config: RLConfig; backend: BackendKind }
  /** A seed group: the config over `seeds` seeds (its seed, seed + 1, ...), run after run; pause and reset act on the queue. */
  | { type: 'start-seeds'; config: RLConfig; preset: PresetName | null; backend: BackendKind; seeds: number }
  /** Train the current run until its last step or a pause. */
  | { type: 'start' }
  /** Pause the current run after the step in progress (its state is saved). */
  | { type: 'pause' }
  /** One rollout step of the current run, then pause. */
  | { type: 'step' }
  /** Drop the current run's trainer (the run stays saved). */
  | { type: 'reset' }
  /** Continue a saved run from its last saved state. */
  | { type: 'resume'; runId: string }
  | { type: 'list-runs' }
  /**
   * A saved run's metrics, evaluations and rollout steps (for charts, overlay, inspector); `metrics`: names of an
   * imported log beyond the charted ones that the person picked to chart.
   */
  | { type: 'load-run'; runId: string; metrics?: string[] }
  | { type: 'load-rollouts'; runId: string; step: number }
  | { type: 'delete-run'; runId: string }
  | { type: 'export'; runId: string; kind: ExportKind }
  | { type: 'import'; fileName: string; text: string }
  /** A/B of the current run's objective and `config` (B) on its latest step or a fresh batch, between steps. */
  | { type: 'compare-objectives'; source: CompareSource; config: RLConfig }
  /** Open a saved run at its saved state without training (a finished one too), to compare objectives on it. */
  | { type: 'open-run'; runId: string }
  /** Give a saved run a name (empty: its default name back). */
  | { type: 'rename-run'; runId: string; name: string }
  /** Compile a reward_fn in its sandbox, calling nothing. */
  | { type: 'check-reward-fn'; source: string }
  /** Score one batch of the config's task with its reward_fn, in its sandbox. */
  | { type: 'try-reward-fn'; config: RLConfig }
  /** verl's data.max_prompt_length of the export of `config`, in the tokens of the model it trains (export/render.ts). */
  | { type: 'verl-prompt-length'; config: RLConfig }
  /** A model folder picked from disk (paths inside it), kept in IndexedDB as local/<name>/. */
  | { type: 'import-folder'; name: string; files: { path: string; bytes: Uint8Array }[] }
  /** The port on which the page starts reward-function sandboxes for the engine (src/worker/sandbox-host.ts). */
  | { type: 'sandbox-host'; port: MessagePort }
  /** Parameters, memory plan and seconds-per-step estimate of each config's model on this adapter (nothing downloaded). */
  | { type: 'estimate'; configs: RLConfig[] }
  /**
   * Fetch a hub model's small files (config.json first, then tokenizer files, generation_config.json, the
   * safetensors index, a HEAD of each weight file) into the browser's storage and check them against `config`.
   * `endpoint`: the hub's address (the hf_endpoint knob). No weight is fetched.
   */
  | { type: 'hub-check'; model: string; endpoint: string; config: RLConfig }
  /** Fetch (or resume) a checked model's weights into the browser's storage; progress arrives as hub-progress. */
  | { type: 'hub-download'; model: string; endpoint: string }
  /** Stop a download after the chunk in flight; what was fetched stays kept for a later resume. */
  | { type: 'hub-cancel'; model: string }
  /** The person's hub token, kept in the worker's memory until the page closes (null forgets it). */
  | { type: 'hub-token'; token: string | null }
  /** The kept models, the storage quota; the answer is the hub-models reply. */
  | { type: 'hub-list' }
  /** Remove a kept model (complete or partial) from the browser's storage. */
  | { type: 'hub-delete'; model: string };

/** Token strings of sampled groups: [group][completion][token]. */
export type TokenTexts = string[][][];

/** A request on the wire: the id the client allocated rides along and comes back with the answer. */
export type Envelope = Request & { id: number };

/** Done: the request was carried out; what it changed arrives as events (progress, run-data, runs, ...). */
export type Done = { type: 'done' };

/** The reply each request gets when it succeeds (an 'error' with its id when it fails). */
export interface Replies {
  init: Done;
  selftest: Done;
  configure: Done;
  prepare: Done;
  'start-seeds': Done;
  start: Done;
  pause: Done;
  step: Done;
  reset: Done;
  /** After the run's records (run-data) went out. */
  resume: Done;
  'list-runs': Done;
  /** After the run's records (run-data) went out. */
  'load-run': Done;
  /** After the step's groups (rollouts) went out. */
  'load-rollouts': Done;
  'delete-run': Done;
  export: { type: 'export-ready'; runId: string; kind: ExportKind; files: DownloadFile[] };
  import: { type: 'imported'; header: RunHeader };
  /** Both sides' per-token values, and each completion's token texts. */
  'compare-objectives': {
    type: 'objective-comparison';
    runId: string;
    comparison: ObjectiveComparison;
    texts: string[][];
  };
  /** After the run's records (run-data) went out. */
  'open-run': Done;
  'rename-run': Done;
  /** null: it compiles to a function. */
  'check-reward-fn': { type: 'reward-fn-checked'; problem: RewardFnProblem | null };
  'try-reward-fn': { type: 'reward-fn-tried'; rows: RewardFnTrialRow[] | null; problem: RewardFnProblem | null };
  'verl-prompt-length': { type: 'verl-prompt-length'; promptLength: PromptLength };
  /** Where the folder is kept (local/<name>/) and the files kept. */
  'import-folder': { type: 'folder-imported'; path: string; files: string[] };
  'sandbox-host': Done;
  /** One estimate (or why none) per config, in order; `throughput`: where the adapter's speed figures come from. */
  estimate: { type: 'estimates'; estimates: (ModelEstimate | ModelEstimateProblem)[]; throughput: string };
  'hub-check': { type: 'hub-checked'; check: HubCheck };
  /** After every file is kept and verified (a cancel answers with an error naming the pause). */
  'hub-download': Done;
  'hub-cancel': Done;
  'hub-token': Done;
  'hub-list': HubModels;
  /** The kept models after the removal. */
  'hub-delete': HubModels;
}

/** The models the browser keeps and its storage, as the storage panel shows them. */
export type HubModels = {
  type: 'hub-models';
  models: KeptModel[];
  storage: { usage: number; quota: number } | null;
  persistent: boolean;
};

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** A compile-time check: every request type has a reply in Replies, and Replies names no other. */
export type RepliesCoverRequests = Same<keyof Replies, Request['type']> extends true ? true : never;
export const REPLIES_COVER_REQUESTS: RepliesCoverRequests = true;

/** The reply to a request of type `T`, with the request's id. */
export type ReplyOf<T extends Request['type']> = Replies[T] & { id: number };
/** Any reply. */
export type Reply = { [T in Request['type']]: ReplyOf<T> }[Request['type']];
/** A failed request: `id` names it. */
export type Failure = { type: 'error'; id: number; message: string; fatal: boolean };

/** Where the background matmul tune stands (WorkerEvent 'tuning'). */
export type TuneState = 'measuring' | 'waiting' | 'done' | 'failed';

/** Worker -> page messages that answer no request. */
export type WorkerEvent =
  /** tuning: the matmul variants runs get now on this adapter (its cached tune, or the shipped defaults), in words. */
  | { type: 'ready'; report: AdapterReport; tuning?: string }
  /**
   * The background matmul tune of an adapter not measured before: measuring (no run can train), waiting (a run is
   * loaded; it goes on once none can train), done (the winners are installed for runs started from now on) or
   * failed (the variants stay); tuning: the variants runs get now, in words.
   */
  | { type: 'tuning'; state: TuneState; tuning: string }
  | { type: 'unavailable'; message: string }
  | { type: 'selftest-case'; result: CaseResult; index: number; total: number }
  | { type: 'selftest-done'; passed: number; failed: number; ms: number }
  /** The current run's state, after every step and every change. */
  | { type: 'progress'; progress: RunProgress }
  /** New metric rows of a run (columns transferred), sent a few times a second while it trains. */
  | { type: 'metrics'; runId: string; batch: MetricBatch }
  /** Sampled groups of one step with per-token records (planes transferred) and each token's text; every group of the step in brief where recorded. */
  | { type: 'rollouts'; runId: string; step: number; groups: GroupRecord[]; texts: TokenTexts; batch?: GroupSummary[] }
  | { type: 'evals'; runId: string; evals: EvalRecord[] }
  /** Every saved run, newest first; storage use when the browser says. */
  | { type: 'runs'; runs: RunHeader[]; storage: { usage: number; quota: number } | null; persistent: boolean }
  /** All records of a saved run (replaces what the page had for it). */
  | { type: 'run-data'; runId: string; batch: MetricBatch; evals: EvalRecord[]; rolloutSteps: number[] }
  /** A recoverable problem (storage full, a step not saved): shown, and training goes on. */
  | { type: 'notice'; level: 'warning' | 'error'; message: string }
  /** A warning sign in a run's metrics at a step (src/rl/observation/alerts.ts): shown, and marked on its metric's chart. */
  | { type: 'alert'; runId: string; alert: Alert }
  /** A hub download's progress, a few times a second while it runs, and once when it ends, pauses or fails. */
  | { type: 'hub-progress'; progress: HubProgress }
  /** A problem no request asked about: a device loss, an uncaptured GPU error, a failed device start. */
  | { type: 'error'; message: string; fatal: boolean };

/** Worker -> page: an answer (reply or failure, with the request's id) or an event (no id). */
export type Response = Reply | Failure | WorkerEvent;

/** Exhaustiveness guard for switch statements over the unions above. */
export function assertNever(x: never): never {
  throw new Error(`unhandled message: ${JSON.stringify(x)}`);
}
