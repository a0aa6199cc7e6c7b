// A profile of everything a context records while it is attached (GpuContext.profiler): every recorder is profiled
// (GPU timestamps around each dispatch where the adapter has them, else the phase's wall time from submit to
// completion), and each dispatch's time, bytes and FLOPs (Dispatch.cost, src/gpu/counters.ts) add up per phase
// (the recorder's label: rollout.decode, rl.update, ...) and kernel (the dispatch's label: family.entry). What
// `npm run profile` and the bench's real-size section print, with the roofline of src/bench/roofline.ts.

import type { DispatchCost } from './counters';
import type { KernelTiming } from './timer';

/** One kernel's totals in one phase. */
export interface KernelProfile {
  phase: string;
  kernel: string;
  calls: number;
  /** GPU milliseconds (timestamps); NaN where the adapter has none (the phase's wall time is in PhaseProfile). */
  ms: number;
  bytes: number;
  flops: number;
}

/**
 * One phase's totals: submits, steps (Recorder.countStep), dispatches, GPU time summed over dispatches, wall time
 * from submits to completion.
 */
export interface PhaseProfile {
  phase: string;
  submits: number;
  steps: number;
  dispatches: number;
  /** Sum of the dispatches' timestamped times; NaN without timestamps. */
  gpuMs: number;
  /** Sum over submits of submit-to-completion wall time (measured only without timestamps; else NaN). */
  wallMs: number;
}

export class GpuProfiler {
  private readonly kernels = new Map<string, KernelProfile>();
  private readonly phases = new Map<string, PhaseProfile>();
  private readonly pending: Promise<void>[] = [];

  private phase(name: string): PhaseProfile {
    let p = this.phases.get(name);
    if (!p) this.phases.set(name, (p = { phase: name, submits: 0, steps: 0, dispatches: 0, gpuMs: 0, wallMs: 0 }));
    return p;
  }

  /**
   * One submitted recorder: the steps of its phase it held, its dispatches' names and costs in order, and its
   * timings (one per dispatch with timestamps; one for the whole phase without).
   */
  collect(
    phase: string,
    steps: number,
    dispatches: readonly { name: string; cost: DispatchCost }[],
    timings: Promise<KernelTiming[]>,
  ): void {
    const p = this.phase(phase);
    p.submits++;
    p.steps += steps;
    p.dispatches += dispatches.length;
    for (const d of dispatches) {
      const key = `${phase}\u0000${d.name}`;
      let k = this.kernels.get(key);
      if (!k) this.kernels.set(key, (k = { phase, kernel: d.name, calls: 0, ms: 0, bytes: 0, flops: 0 }));
      k.calls++;
      k.bytes += d.cost.bytes;
      k.flops += d.cost.flops;
    }
    this.pending.push(
      timings.then((t) => {
        const perDispatch = t.length === dispatches.length && dispatches.length > 0;
        if (perDispatch) {
          t.forEach((x, i) => {
            this.kernels.get(`${phase}\u0000${dispatches[i].name}`)!.ms += x.ms;
            p.gpuMs += x.ms;
          });
          p.wallMs = Number.NaN;
        } else {
          for (const x of t) p.wallMs += x.ms;
          p.gpuMs = Number.NaN;
          for (const d of dispatches) this.kernels.get(`${phase}\u0000${d.name}`)!.ms = Number.NaN;
        }
      }),
    );
  }

  /** Every phase and kernel so far, once their timings have been read. */
  async result(): Promise<{ phases: PhaseProfile[]; kernels: KernelProfile[] }> {
    await Promise.all(this.pending.splice(0));
    return {
      phases: [...this.phases.values()].map((p) => ({ ...p })),
      kernels: [...this.kernels.values()].map((k) => ({ ...k })),
    };
  }

  /** Forgets everything collected (after awaiting what is pending). */
  async reset(): Promise<void> {
    await Promise.all(this.pending.splice(0));
    this.kernels.clear();
    this.phases.clear();
  }
}
