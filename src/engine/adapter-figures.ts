// The adapter figures every step estimate of a page uses (src/schema/step-estimate.ts): one method from the first
// estimate to the last. The probe (src/bench/throughput-probe.ts) measures the adapter once, at the first estimate
// asked for while the device is idle (at page load, before any run); until it has, an estimate waits for it rather
// than showing a number from another source that the probe would then replace (0.1 s before, 3 s after, issue 39).
// Asked while a step runs and before any probe, the estimate says it waits for the device; a failed probe falls
// back to the figures BENCHMARKS.md measured on the adapter's kind, saying so, for the page's life.
import type { Throughput } from '../schema/step-estimate';

/** The figures an estimate takes, or why there are none yet. */
export type Figures = { throughput: Throughput } | { waiting: string };

export class AdapterFigures {
  private measured: Promise<Throughput> | null = null;

  constructor(
    /** Measures the adapter (the probe). */
    private readonly probe: () => Promise<Throughput>,
    /** The adapter kind's figures, used only when the probe failed. */
    private readonly assumed: () => Throughput,
    /** Whether the device can take a short measurement now (no step, no objective comparison running). */
    private readonly idle: () => boolean,
  ) {}

  /** The figures for an estimate: the probe's (measured now if the device is idle), or why there are none yet. */
  async figures(): Promise<Figures> {
    if (!this.measured) {
      if (!this.idle())
        return { waiting: "this adapter's speed is measured once the device is idle (no step running)" };
      const assumed = this.assumed();
      this.measured = this.probe().catch(
        (e: unknown): Throughput => ({
          ...assumed,
          source: `${assumed.source}; the probe failed: ${e instanceof Error ? e.message : String(e)}`,
        }),
      );
    }
    return { throughput: await this.measured };
  }
}
