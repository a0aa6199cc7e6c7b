// A kernel family: one WGSL file compiled once, with compute pipelines cached per entry point and set of
// override constants. Pipelines are labelled "<family>.<entry>" so validation errors name the kernel.
// Each pipeline's creation is timed (Dawn compiles WGSL to the driver's code when the pipeline is made): the
// bench and the self-test print the slowest compiles, since a driver's compiler can take a minute over code
// another compiles in milliseconds. Some drivers compile later: lavapipe (llvmpipe) runs LLVM at a pipeline's first
// dispatch, so a context that measures first dispatches (GpuContext.measureFirstDispatches) also records that.

export type OverrideConstants = Record<string, number | boolean>;

/** One pipeline's compile: its label ("<family>.<entry>{constants}"), wall time and the WGSL it came from. */
export interface CompileRecord {
  pipeline: string;
  family: string;
  /** Wall time of createComputePipeline (plus the module's creation for the family's first pipeline). */
  ms: number;
  /** Size of the family's WGSL as compiled (specialized: src/gpu/specialize.ts), in characters. */
  wgslChars: number;
  /**
   * Wall time of the pipeline's first dispatch, submitted alone (from its submit, or the end of the work queued
   * before it, to its completion): the driver's deferred compile plus one small run. Set only where the context
   * measures first dispatches, once that dispatch has completed.
   */
  firstDispatchMs?: number;
}

export class KernelFamily {
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  readonly module: GPUShaderModule;
  /** Resolves to the compiler's error messages (empty when the WGSL compiled cleanly). */
  readonly compileErrors: Promise<string[]>;
  /** Module creation time, charged to the family's first pipeline. */
  private moduleMs: number;

  constructor(
    private readonly device: GPUDevice,
    readonly name: string,
    /** The WGSL compiled (specialized: src/gpu/specialize.ts), e.g. to tell which variant a context chose. */
    readonly source: string,
    /** Told of every pipeline compiled (the context's compile log). */
    private readonly onCompiled: (r: CompileRecord, pipeline: GPUComputePipeline) => void = () => {},
  ) {
    const t0 = performance.now();
    this.module = device.createShaderModule({ label: `${name}.wgsl`, code: source });
    this.moduleMs = performance.now() - t0;
    this.compileErrors = this.module
      .getCompilationInfo()
      .then((info) =>
        info.messages
          .filter((m) => m.type === 'error')
          .map((m) => `${name}.wgsl:${m.lineNum}:${m.linePos}: ${m.message}`),
      );
  }

  /** The pipeline for an entry point with the given override constants (created on first use, then cached). */
  pipeline(entry: string, constants: OverrideConstants = {}): GPUComputePipeline {
    const keys = Object.keys(constants).sort();
    const key = `${entry}|${keys.map((k) => `${k}=${Number(constants[k])}`).join(',')}`;
    let p = this.pipelines.get(key);
    if (!p) {
      const numeric: Record<string, number> = {};
      for (const k of keys) numeric[k] = Number(constants[k]);
      const label = `${this.name}.${entry}${keys.length ? `{${keys.map((k) => `${k}=${numeric[k]}`).join(',')}}` : ''}`;
      const t0 = performance.now();
      p = this.device.createComputePipeline({
        label,
        layout: 'auto',
        compute: { module: this.module, entryPoint: entry, constants: numeric },
      });
      const ms = performance.now() - t0 + this.moduleMs;
      this.moduleMs = 0;
      this.pipelines.set(key, p);
      this.onCompiled({ pipeline: label, family: this.name, ms, wgslChars: this.source.length }, p);
    }
    return p;
  }
}

/** The compile budget per pipeline: the bench and the self-test flag any pipeline that takes longer. */
export const COMPILE_BUDGET_MS = 2000;

/** A pipeline's compile cost: its creation plus, where measured, its first dispatch (a deferred compile). */
export function compileCostMs(r: CompileRecord): number {
  return r.ms + (r.firstDispatchMs ?? 0);
}

/** The `n` slowest compiles of a log, slowest first (by compileCostMs). */
export function slowestCompiles(log: readonly CompileRecord[], n = 10): CompileRecord[] {
  return [...log].sort((a, b) => compileCostMs(b) - compileCostMs(a)).slice(0, n);
}

/**
 * Lines for a report: the slowest compiles (n of them; all with n = Infinity), each flagged when over the budget,
 * and the total. Where first dispatches were measured, each line also splits the cost into creation + first dispatch.
 */
export function compileReport(log: readonly CompileRecord[], n = 10): string[] {
  const total = log.reduce((s, r) => s + compileCostMs(r), 0);
  const over = log.filter((r) => compileCostMs(r) > COMPILE_BUDGET_MS);
  const measured = log.some((r) => r.firstDispatchMs !== undefined);
  return [
    `${log.length} pipelines compiled in ${(total / 1000).toFixed(1)} s${measured ? ' (creation + first dispatch)' : ''}; ${over.length} over the ${COMPILE_BUDGET_MS / 1000} s budget; slowest:`,
    ...slowestCompiles(log, n).map(
      (r) =>
        `  ${compileCostMs(r).toFixed(0).padStart(7)} ms  ${r.pipeline}  (${measured ? `${r.ms.toFixed(0)} + ${(r.firstDispatchMs ?? 0).toFixed(0)} ms, ` : ''}${r.wgslChars} WGSL chars)${compileCostMs(r) > COMPILE_BUDGET_MS ? '  OVER BUDGET' : ''}`,
    ),
  ];
}
