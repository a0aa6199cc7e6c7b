// The engine slice: the worker's device (adapter, autotune, errors), the kernel self-test, the current run's
// progress and the run controls (start or continue, pause, step, reset, resume). It connects the store's engine
// link and receives every worker event (handleResponse), keeping its own and handing the rest to the slice that
// owns them; answers to requests come back to the call that sent them (a refused configure to the lessons, a failed
// self-test to its flag). Whether a control may act is decided by selectors.ts, as for the buttons.

import { IDLE_PROGRESS, type RunMode, type RunProgress } from '../../schema/run-types';
import type { AdapterReport } from '../../gpu/adapter';
import type { RLConfig } from '../../schema/config';
import type { CaseResult } from '../../kernels/verify';
import {
  assertNever,
  TEST_HOOKS_GLOBAL,
  type EngineTestHooks,
  type TuneState,
  type WorkerEvent,
} from '../../worker/protocol';
import { markStartup } from '../../worker/startup-marks';
import { canContinue, canPause, canReset, engineStartBlocker, startBlocker } from '../selectors';
import type { LabSlice } from '../slice';
import { isFunctionProblem } from './reward-fn';

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export { IDLE_PROGRESS } from '../../schema/run-types';

export interface EngineState {
  /** starting: the device is requested; ready: runs can start (with the cached tune, or the shipped variants). */
  gpuStatus: 'idle' | 'starting' | 'ready' | 'unavailable' | 'error';
  adapter: AdapterReport | null;
  /** The matmul variants runs get now, in words (null before the device is ready). */
  tuning: string | null;
  /** The background matmul tune of an adapter measured for the first time (null: none, the tune was cached). */
  tuneState: TuneState | null;
  /** The last error or the reason WebGPU is unavailable, shown as is. */
  gpuMessage: string | null;
  selftestRunning: boolean;
  selftestResults: CaseResult[];
  selftestTotal: number;
  selftestSummary: { passed: number; failed: number; ms: number } | null;
  /** The engine's current run (IDLE_PROGRESS before there is one). */
  progress: RunProgress;
}

export interface EngineActions {
  /** Starts the engine worker (once per store) and asks for a device. */
  startEngine(): void;
  /** Runs the kernel cases whose name contains `filter` (all when absent); with `sample`, their representative sample. */
  runSelfTest(filter?: string, sample?: boolean): void;
  /** Every event of the worker (a message that answers no request) comes in here. */
  handleResponse(r: WorkerEvent): void;
  /** Continues the current paused run when its config is the edited one, else starts a new run from the edited config. */
  startRun(): void;
  pauseRun(): void;
  /**
   * A new run from the edited config, named `name`, trained to its last step (never continues the paused run); in
   * `mode` 'sft' a supervised run (a lesson's SFT run). False when it could not start.
   */
  startNewRun(name: string, mode?: RunMode): boolean;
  /** One rollout step (of the current paused run, or of a new run), then pause. */
  stepRun(): void;
  /**
   * Tells the engine the run the page will most likely start next (`config`, on the chosen backend), so it can be
   * opened and its first step trained while the person reads (LabEngine.prepare). Only while the device is ready
   * and no run is loading or training.
   */
  prepareRun(config: RLConfig): void;
  resetRun(): void;
  /** Continues a saved run from its last saved state, and edits and shows its config. */
  resumeRun(runId: string): void;
}

export type EngineSlice = EngineState & EngineActions;

/** The hooks a browser test set before the page loaded (protocol.ts EngineTestHooks), numbers only; else none. */
function testHooks(): EngineTestHooks | null {
  const set = (globalThis as Record<string, unknown>)[TEST_HOOKS_GLOBAL];
  if (typeof set !== 'object' || set === null) return null;
  const autosaveMs = (set as EngineTestHooks).autosaveMs;
  return typeof autosaveMs === 'number' && autosaveMs > 0 ? { autosaveMs } : null;
}

export const engineSlice: LabSlice<EngineSlice> =
  ({ link }) =>
  (set, get) => {
    /**
     * Start or Step: continues the current paused run when its config is the edited one, else configures a new run
     * from the edited config; either way then trains ('start') or takes one step and pauses ('step'). `fresh` always
     * configures a new run, named `name` (the engine's default name otherwise). Says whether it sent anything.
     */
    const launch = (then: 'start' | 'step', fresh?: { name: string; mode?: RunMode }): boolean => {
      const s = get();
      // A named fresh run is an open lesson's own launch: the lesson is no reason to refuse it.
      const blocker = fresh ? engineStartBlocker(s) : startBlocker(s);
      if (blocker === 'config') {
        const errors = [...Object.entries(s.check.fieldErrors).map(([k, v]) => `${k}: ${v}`), ...s.check.otherErrors];
        s.addNotice('error', `The config has errors; fix the marked fields first. ${errors.join('; ')}`);
      }
      if (blocker) return false;
      if (!fresh && canContinue(s)) link.send({ type: then });
      else if (
        s.rewardFnCheck?.problem &&
        isFunctionProblem(s.rewardFnCheck.problem) &&
        s.rewardFnCheck.source === s.check.config!.reward_fn
      ) {
        // A reward_fn known not to compile makes no run (the engine refuses it too): its one notice says where.
        s.addNotice('error', s.rewardFnCheck.problem.message);
        return false;
      } else {
        markStartup('configure');
        link
          .request({
            type: 'configure',
            config: s.check.config!,
            preset: s.preset,
            backend: s.backend,
            then,
            ...(fresh && { name: fresh.name }),
            ...(fresh?.mode === 'sft' && { mode: fresh.mode }),
          })
          .catch((e: unknown) => {
            const message = messageOf(e);
            get().lessonRunRefused(message);
            get().addNotice('error', message);
          });
      }
      return true;
    };
    return {
      gpuStatus: 'idle',
      adapter: null,
      tuning: null,
      tuneState: null,
      gpuMessage: null,
      selftestRunning: false,
      selftestResults: [],
      selftestTotal: 0,
      selftestSummary: null,
      progress: IDLE_PROGRESS,

      startEngine() {
        if (!link.connect((r) => get().handleResponse(r))) return;
        markStartup('engine-start');
        set({ gpuStatus: 'starting', gpuMessage: null });
        const hooks = testHooks();
        link.send(hooks ? { type: 'init', hooks } : { type: 'init' });
      },

      runSelfTest(filter, sample) {
        const s = get();
        if (s.gpuStatus !== 'ready' || s.selftestRunning) return;
        set({ selftestRunning: true, selftestResults: [], selftestSummary: null, selftestTotal: 0 });
        link.request({ type: 'selftest', filter, sample }).catch((e: unknown) => {
          set({ selftestRunning: false });
          get().addNotice('error', messageOf(e));
        });
      },

      startRun() {
        launch('start');
      },

      startNewRun(name, mode) {
        return launch('start', { name, mode });
      },

      pauseRun() {
        if (canPause(get())) link.send({ type: 'pause' });
      },

      stepRun() {
        launch('step');
      },

      prepareRun(config) {
        const s = get();
        if (s.gpuStatus !== 'ready' || s.backend !== 'webgpu') return;
        if (['loading', 'running', 'pausing'].includes(s.progress.status)) return;
        link.send({ type: 'prepare', config, backend: s.backend });
      },

      resetRun() {
        if (canReset(get())) link.send({ type: 'reset' });
      },

      resumeRun(runId) {
        const h = get().runs.find((r) => r.id === runId);
        if (h) get().editRunConfig(h);
        get().showRun(runId);
        link.send({ type: 'resume', runId });
      },

      handleResponse(r) {
        const s = get();
        switch (r.type) {
          case 'tuning':
            return set({ tuneState: r.state, tuning: r.tuning });
          case 'ready':
            markStartup('gpu-ready');
            set({ gpuStatus: 'ready', adapter: r.report, tuning: r.tuning ?? null, gpuMessage: null });
            // The open lesson's first run starts preparing while its question is read.
            return get().prepareLessonRun();
          case 'unavailable':
            // Without WebGPU the CPU backend is the only one; the page says so and labels it slow.
            set({ gpuStatus: 'unavailable', gpuMessage: r.message });
            return s.setBackend('cpu');
          case 'selftest-case':
            return set({ selftestResults: [...s.selftestResults, r.result], selftestTotal: r.total });
          case 'selftest-done':
            return set({ selftestRunning: false, selftestSummary: { passed: r.passed, failed: r.failed, ms: r.ms } });
          case 'progress': {
            const runId = r.progress.runId;
            const isNew = runId !== null && runId !== s.progress.runId;
            set({ progress: r.progress });
            // A new current run: the charts and the inspector follow it.
            if (isNew) s.followRun(runId);
            // An open lesson launches its next run or takes its verdict when its current run finishes.
            return get().lessonRunProgressed(r.progress);
          }
          case 'metrics':
            markStartup('first-metrics');
            return s.appendMetrics(r.runId, r.batch);
          case 'rollouts':
            s.cacheRollouts(r.runId, r.step, r.groups, r.texts, r.batch);
            return s.addRolloutStep(r.runId, r.step);
          case 'evals':
            return s.mergeEvals(r.runId, r.evals);
          case 'run-data':
            s.forgetAlertsAfter(
              r.runId,
              r.batch.step.reduce((m, x) => Math.max(m, x), 0),
            );
            return s.replaceRunData(r.runId, r.batch, r.evals, r.rolloutSteps);
          case 'runs':
            return s.setRuns(r.runs, r.storage, r.persistent);
          case 'notice':
            return s.addNotice(r.level, r.message);
          case 'alert':
            return s.addAlert(r.runId, r.alert);
          case 'hub-progress':
            return s.hubProgressed(r.progress);
          case 'error':
            if (r.fatal) set({ gpuStatus: 'error', gpuMessage: r.message, selftestRunning: false });
            return s.addNotice('error', r.message);
          default:
            return assertNever(r);
        }
      },
    };
  };
