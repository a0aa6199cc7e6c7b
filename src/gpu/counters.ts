// Counted proxies of speed that hold on every adapter (a CPU one included): dispatches, submits, readbacks,
// pipelines compiled and bind groups created (the host's largest cost of recording a dispatch), and the bytes and FLOPs each dispatch moves by its kernel's own account (Dispatch.cost), or
// by default every bound tensor once. GpuContext keeps one GpuCounts; Recorder and readMany feed it. The tests
// assert today's counts of a decode step and a GRPO step (src/model/counts.test.ts) so a regression fails a test
// whatever the timing noise; the bench and `npm run profile` print them.

/** What a dispatch costs by its kernel's own model: bytes read + written and floating-point operations. */
export interface DispatchCost {
  bytes: number;
  flops: number;
}

/** The tallies of one phase (a recorder label such as "rollout.decode") or of a kernel family. */
export interface PhaseCounts {
  dispatches: number;
  submits: number;
  /**
   * Steps of the phase: what a recorder marked with Recorder.countStep (several decode token steps in one command
   * buffer), or one per submit where it marked none.
   */
  steps: number;
  /** Bind groups created for the phase's dispatches (the rest were cached: GpuContext.bindGroup). */
  bindGroups: number;
  bytes: number;
  flops: number;
}

/** A snapshot of the counters (GpuCounts.snapshot); subtract two with countsSince. */
export interface CountsSnapshot {
  dispatches: number;
  submits: number;
  readbacks: number;
  pipelines: number;
  bindGroups: number;
  bytes: number;
  flops: number;
  /** Per recorder label. */
  phases: Record<string, PhaseCounts>;
  /** Per dispatch label (kernel family and entry, e.g. "matmul.matmul_blocked"). */
  kernels: Record<string, PhaseCounts>;
  /**
   * Per recorder label, host milliseconds spent inside the recorder's calls (dispatch, copy, submit): the CPU's
   * cost of recording the phase. A time, not a count: it varies with the machine and the run.
   */
  recordingMs: Record<string, number>;
}

const empty = (): PhaseCounts => ({ dispatches: 0, submits: 0, steps: 0, bindGroups: 0, bytes: 0, flops: 0 });

export class GpuCounts {
  dispatches = 0;
  submits = 0;
  readbacks = 0;
  pipelines = 0;
  bindGroups = 0;
  bytes = 0;
  flops = 0;
  private readonly phases = new Map<string, PhaseCounts>();
  private readonly kernels = new Map<string, PhaseCounts>();
  private readonly recordingMs = new Map<string, number>();

  private phase(label: string): PhaseCounts {
    let p = this.phases.get(label);
    if (!p) this.phases.set(label, (p = empty()));
    return p;
  }

  private kernel(label: string): PhaseCounts {
    let p = this.kernels.get(label);
    if (!p) this.kernels.set(label, (p = empty()));
    return p;
  }

  /** One dispatch recorded in phase `phase` by kernel `kernel`. */
  dispatch(phase: string, kernel: string, cost: DispatchCost): void {
    this.dispatches++;
    this.bytes += cost.bytes;
    this.flops += cost.flops;
    for (const p of [this.phase(phase), this.kernel(kernel)]) {
      p.dispatches++;
      p.bytes += cost.bytes;
      p.flops += cost.flops;
    }
  }

  /** One command buffer submitted by phase `phase`, holding `steps` of its steps. */
  submit(phase: string, steps: number): void {
    this.submits++;
    const p = this.phase(phase);
    p.submits++;
    p.steps += steps;
  }

  readback(): void {
    this.readbacks++;
  }

  pipeline(): void {
    this.pipelines++;
  }

  /** Host time spent recording phase `phase` (a recorder call's duration). */
  recording(phase: string, ms: number): void {
    this.recordingMs.set(phase, (this.recordingMs.get(phase) ?? 0) + ms);
  }

  /** One bind group created for a dispatch of phase `phase`. */
  bindGroup(phase: string): void {
    this.bindGroups++;
    this.phase(phase).bindGroups++;
  }

  snapshot(): CountsSnapshot {
    const copy = (m: Map<string, PhaseCounts>) => Object.fromEntries([...m].map(([k, v]) => [k, { ...v }]));
    return {
      dispatches: this.dispatches,
      submits: this.submits,
      readbacks: this.readbacks,
      pipelines: this.pipelines,
      bindGroups: this.bindGroups,
      bytes: this.bytes,
      flops: this.flops,
      phases: copy(this.phases),
      kernels: copy(this.kernels),
      recordingMs: Object.fromEntries(this.recordingMs),
    };
  }
}

/** The counts between two snapshots (`before` taken first); phases and kernels with nothing new are left out. */
export function countsSince(before: CountsSnapshot, after: CountsSnapshot): CountsSnapshot {
  const diff = (a: Record<string, PhaseCounts>, b: Record<string, PhaseCounts>) => {
    const out: Record<string, PhaseCounts> = {};
    for (const [k, v] of Object.entries(b)) {
      const o = a[k] ?? empty();
      const d = {
        dispatches: v.dispatches - o.dispatches,
        submits: v.submits - o.submits,
        steps: v.steps - o.steps,
        bindGroups: v.bindGroups - o.bindGroups,
        bytes: v.bytes - o.bytes,
        flops: v.flops - o.flops,
      };
      if (d.dispatches || d.submits) out[k] = d;
    }
    return out;
  };
  return {
    dispatches: after.dispatches - before.dispatches,
    submits: after.submits - before.submits,
    readbacks: after.readbacks - before.readbacks,
    pipelines: after.pipelines - before.pipelines,
    bindGroups: after.bindGroups - before.bindGroups,
    bytes: after.bytes - before.bytes,
    flops: after.flops - before.flops,
    phases: diff(before.phases, after.phases),
    kernels: diff(before.kernels, after.kernels),
    recordingMs: Object.fromEntries(
      Object.entries(after.recordingMs)
        .map(([k, ms]) => [k, ms - (before.recordingMs[k] ?? 0)] as const)
        .filter(([, ms]) => ms > 0),
    ),
  };
}

/** The default cost of a dispatch: every distinct bound tensor's bytes once, no FLOPs counted. */
export function boundBytes(bindings: readonly { buffer: object; byteOffset: number; byteLength: number }[]): number {
  const seen = new Set<string>();
  let bytes = 0;
  const ids = new Map<object, number>();
  for (const t of bindings) {
    let id = ids.get(t.buffer);
    if (id === undefined) ids.set(t.buffer, (id = ids.size));
    const key = `${id}@${t.byteOffset}+${t.byteLength}`;
    if (seen.has(key)) continue;
    seen.add(key);
    bytes += t.byteLength;
  }
  return bytes;
}
