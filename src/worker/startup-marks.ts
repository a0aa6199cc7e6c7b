// Time to first step, as User Timing marks: the page and the engine worker each set `rl-lab:<stage>` once, at the
// first time it happens (performance.mark, so a browser's performance panel and the e2e e2e/first-step.spec.ts
// read them). The page's marks count from its navigation start; the worker's from the worker's own start
// (add performance.timeOrigin to compare them). Measurement only: nothing reads them to decide anything.

/** Stages in the order they happen: page (engine-start ... first-point) and engine worker (device ... step-2). */
export type StartupStage =
  // page: the worker is asked for a device, the device is ready (autotune done), a run is configured, the first
  // metric rows arrive, and a chart has drawn its first point after them (a reload draws its restored run's points
  // at once: those are not a step of this page's run).
  | 'engine-start'
  | 'gpu-ready'
  | 'configure'
  | 'first-metrics'
  | 'first-point'
  // engine worker: device acquired, matmul autotune done (measured or cached), the page's likely next run is being
  // prepared (LabEngine.prepare: its first step trains before Run), a configure request arrives, the run is created
  // (warm start fetched, model built; or the prepared run adopted), the first and second rollout steps finished.
  | 'device'
  | 'autotune'
  | 'prepare'
  | 'run-configure'
  | 'run-created'
  | 'step-1'
  | 'step-2';

export const STARTUP_MARK_PREFIX = 'rl-lab:';

const marked = new Set<StartupStage>();

/** Whether `stage` has been reached in this page or worker. */
export function startupMarked(stage: StartupStage): boolean {
  return marked.has(stage);
}

/** Marks `stage` the first time it is reached in this page or worker; later calls do nothing. */
export function markStartup(stage: StartupStage): void {
  if (marked.has(stage) || typeof performance === 'undefined' || typeof performance.mark !== 'function') return;
  marked.add(stage);
  performance.mark(STARTUP_MARK_PREFIX + stage);
}
