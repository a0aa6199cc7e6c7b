// The pace of a run for its status line: seconds per rollout step and the time left, from the recent steps only.
// The first step of a session (a new run, a resume) compiles the GPU pipelines and evaluates step 0, so it can take
// ten times a later step; it counts only while it is the only step there is, and then gives no pace at all.

/** How many of the latest steps the pace is the median of. */
export const PACE_WINDOW = 10;

/**
 * Median wall time (ms) of the last `window` steps of a session, or 0 when there is no step to go by.
 * `stepMs`: the session's most recent step times, oldest first; `startsSession`: whether stepMs[0] is the session's
 * first step (it is then left out; alone, it gives 0: no pace before a step that is not the first).
 */
export function stepPace(stepMs: readonly number[], startsSession: boolean, window = PACE_WINDOW): number {
  const usable = (startsSession ? stepMs.slice(1) : stepMs).filter((ms) => Number.isFinite(ms) && ms >= 0);
  const recent = [...usable.slice(-window)].sort((a, b) => a - b);
  if (!recent.length) return 0;
  const mid = recent.length >> 1;
  return recent.length % 2 ? recent[mid] : (recent[mid - 1] + recent[mid]) / 2;
}

/** Milliseconds left for `stepsLeft` steps at `paceMs` a step; NaN when the pace is not known (0). */
export function timeLeftMs(paceMs: number, stepsLeft: number): number {
  return paceMs > 0 ? Math.max(0, stepsLeft) * paceMs : NaN;
}
