// How Dawn in Node waits for the GPU without taking a CPU core from it. While any of its promises is pending
// (a readback's mapAsync, onSubmittedWorkDone), dawn.node processes events from a native callback it schedules
// again and again with the global setImmediate: a busy loop that keeps one core at 100% for the whole wait. On a
// GPU machine that costs a core; on a CPU adapter (SwiftShader, lavapipe), whose "GPU" is the other cores, it takes
// one of the cores doing the work: on this project's 2-core machines a 30-layer rollout took 18-21 s spinning and
// 11-14 s backing off (docs/benchmarks/counts.md).
// So, for native callbacks only (a JS caller of setImmediate is never delayed): each wait spins for its first
// SPIN_MS, which keeps a short wait as quick as before, then ticks once a millisecond (setTimeout), which adds at
// most about a millisecond to a longer one. Set RL_LAB_DAWN_BUSY_POLL=1 to keep Dawn's busy loop (to compare).

/** How long a wait polls at full speed before backing off to one tick a millisecond. */
export const SPIN_MS = 1;

/** A gap longer than this between two native ticks starts a new wait (a backed-off wait ticks every ~1 ms). */
const NEW_WAIT_GAP_MS = 4;

let installed = false;

/** Whether a callback is a native function (dawn.node's event tick), checked once per function. */
const natives = new WeakMap<object, boolean>();
function isNative(fn: unknown): boolean {
  if (typeof fn !== 'function') return false;
  let native = natives.get(fn);
  if (native === undefined) {
    native = Function.prototype.toString.call(fn).includes('[native code]');
    natives.set(fn, native);
  }
  return native;
}

type Scheduler = (fn: (...args: unknown[]) => void, ...args: unknown[]) => unknown;

/**
 * setImmediate as Dawn's waits should see it: native callbacks run at once for the first SPIN_MS of a wait, then
 * through `later` (a one-millisecond timeout); every other callback through `immediate`. `now` is the clock.
 */
export function backedOffScheduler(immediate: Scheduler, later: Scheduler, now: () => number): Scheduler {
  let waitStart = 0;
  let lastTick = Number.NEGATIVE_INFINITY;
  return (fn, ...args) => {
    if (!isNative(fn)) return immediate(fn, ...args);
    const t = now();
    if (t - lastTick > NEW_WAIT_GAP_MS) waitStart = t;
    lastTick = t;
    return t - waitStart < SPIN_MS ? immediate(fn, ...args) : later(fn, ...args);
  };
}

/** Makes this thread's setImmediate back off for native callbacks (backedOffScheduler); idempotent, Node only. */
export function backOffDawnPolling(): void {
  if (installed || process.env.RL_LAB_DAWN_BUSY_POLL === '1') return;
  installed = true;
  const immediate = globalThis.setImmediate;
  const scheduler = backedOffScheduler(
    (fn, ...args) => immediate(fn, ...args),
    (fn, ...args) => setTimeout(fn, 1, ...args),
    () => performance.now(),
  );
  globalThis.setImmediate = Object.assign(scheduler, immediate) as unknown as typeof setImmediate;
}
