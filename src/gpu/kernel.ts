// A kernel family: one WGSL file compiled once, with compute pipelines cached per entry point and set of
// override constants. Pipelines are labelled "<family>.<entry>" so validation errors name the kernel.

export type OverrideConstants = Record<string, number | boolean>;

export class KernelFamily {
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  readonly module: GPUShaderModule;
  /** Resolves to the compiler's error messages (empty when the WGSL compiled cleanly). */
  readonly compileErrors: Promise<string[]>;

  constructor(
    private readonly device: GPUDevice,
    readonly name: string,
    /** The WGSL compiled (after template expansion), e.g. to tell which variant a context chose. */
    readonly source: string,
  ) {
    this.module = device.createShaderModule({ label: `${name}.wgsl`, code: source });
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
      p = this.device.createComputePipeline({
        label: `${this.name}.${entry}${keys.length ? `{${keys.map((k) => `${k}=${numeric[k]}`).join(',')}}` : ''}`,
        layout: 'auto',
        compute: { module: this.module, entryPoint: entry, constants: numeric },
      });
      this.pipelines.set(key, p);
    }
    return p;
  }
}
