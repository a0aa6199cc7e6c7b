// Timing primitives of the benchmark: medians, wall-clock submit-and-wait samples, and GPU-timestamp samples of
// one dispatch repeated. Runs the same in Node (Dawn) and the browser; it takes a GpuContext and knows no model.

import type { Dispatch, GpuContext } from '../gpu';

/** How a figure was timed: GPU timestamps around each dispatch, or wall clock from submit to completion. */
/**
 * How a figure was timed: GPU timestamps, wall clock around submit-and-wait, or 'host': the CPU's time inside the
 * engine's recording calls (src/gpu/counters.ts recordingMs), which the GPU's work can overlap.
 */
export type TimingMethod = 'timestamp' | 'wall' | 'host';

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** True when the device can time dispatches with GPU timestamps. */
export function hasTimestamps(ctx: GpuContext): boolean {
  return ctx.device.features.has('timestamp-query');
}

/**
 * Wall-clock samples of an async piece of work that ends with its GPU work completed (e.g. record, submit,
 * ctx.flush()): `warmup` untimed runs, then `reps` timed ones, in milliseconds.
 */
export async function wallSamples(run: () => Promise<void>, reps: number, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await run();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await run();
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Wall-clock samples of several pieces of work, round-robin: `warmup` untimed rounds, then `reps` rounds that time
 * each piece once, in turn. On a machine whose load drifts (shared CI runners, CPU adapters), drift then spreads
 * over every piece instead of biasing the ones measured last. Each round starts one piece later than the one before,
 * so no piece always runs right after the same other one: a cost one piece leaves behind (a garbage collection after
 * a framework peer's step, say) lands on a different piece each round, and the medians drop it.
 * Returns the samples by name, in milliseconds.
 */
export async function interleavedSamples(
  runs: readonly (readonly [string, () => Promise<void>])[],
  reps: number,
  warmup = 1,
): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = Object.fromEntries(runs.map(([name]) => [name, []]));
  for (let r = 0; r < warmup + reps; r++) {
    for (let i = 0; i < runs.length; i++) {
      const [name, run] = runs[(i + r) % runs.length];
      const t0 = performance.now();
      await run();
      if (r >= warmup) out[name].push(performance.now() - t0);
    }
    await yieldToEventLoop();
  }
  return out;
}

/**
 * Samples of one dispatch, in milliseconds per dispatch. With timestamp-query: the dispatch recorded `reps` times
 * in one profiled recorder (a timestamped pass each) after one untimed warm-up submit. Without: `reps` submits of
 * `inner` copies each, waited for, the wall time divided by `inner` (submit overhead amortized, not removed).
 */
export async function dispatchSamples(
  ctx: GpuContext,
  d: Dispatch,
  reps: number,
  inner = 4,
): Promise<{ samples: number[]; method: TimingMethod }> {
  const warm = ctx.recorder('bench.warmup');
  warm.dispatch(d);
  warm.submit();
  await ctx.flush();
  if (hasTimestamps(ctx)) {
    const rec = ctx.recorder('bench.kernel', { profile: true });
    for (let i = 0; i < reps; i++) rec.dispatch(d);
    rec.submit();
    await ctx.flush();
    const timings = await rec.timings();
    return { samples: timings.map((t) => t.ms), method: 'timestamp' };
  }
  const samples = await wallSamples(
    async () => {
      const rec = ctx.recorder('bench.kernel');
      for (let i = 0; i < inner; i++) rec.dispatch(d);
      rec.submit();
      await ctx.flush();
    },
    reps,
    0,
  );
  return { samples: samples.map((s) => s / inner), method: 'wall' };
}

/** Yields to the event loop so a page stays responsive and progress messages get out between measurements. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
