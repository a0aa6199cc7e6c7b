// Recorder: one phase of work (a decode step, a forward, a backward, an update) recorded into one command
// buffer and submitted once. Dispatches share one compute pass unless profiling, which gives each its own
// pass with GPU timestamps.

import type { GpuContext } from './context';
import type { KernelFamily, OverrideConstants } from './kernel';
import { boundBytes, type DispatchCost } from './counters';
import type { Params } from './params';
import type { Tensor } from './tensor';
import { GpuTimer, type KernelTiming } from './timer';

export interface RecorderOptions {
  /** Time every dispatch (GPU timestamps when the device has them, else the whole phase by wall clock). */
  profile?: boolean;
}

/**
 * One kernel launch. Bindings: uniform params at @binding(0) when given, then tensors at 1, 2, ... in order, a null
 * standing for a binding number the entry point does not use (entry points of one shader may share variables at
 * fixed numbers and leave others out).
 */
export interface Dispatch {
  family: KernelFamily;
  entry: string;
  constants?: OverrideConstants;
  params?: Params;
  /** Outputs first, then inputs: the argument order of the kernel's CPU twin. */
  bindings: readonly (Tensor | null)[];
  /** Workgroup counts; x and y must each be at most the device's maxComputeWorkgroupsPerDimension. */
  workgroups: readonly [number, number?, number?];
  /** Name shown in timings (defaults to family.entry). */
  label?: string;
  /**
   * Bytes moved and FLOPs by the kernel's own model (the profile's roofline and the counted bytes per step);
   * default: every distinct bound tensor's bytes once, no FLOPs.
   */
  cost?: DispatchCost;
}

export class Recorder {
  private encoder: GPUCommandEncoder;
  private pass: GPUComputePassEncoder | null = null;
  private readonly timer: GpuTimer | null;
  private submitted = false;
  private wallStart = 0;
  private wallDone: Promise<number> | null = null;
  /** Number of dispatches recorded (for tests asserting the shape of a phase). */
  dispatchCount = 0;
  /** Steps of the phase marked with countStep (0: the command buffer counts as one step). */
  private steps = 0;
  /** Each dispatch's kernel name and bound tensor labels, to say which kernel a validation error is about. */
  private readonly dispatched: { name: string; buffers: string[] }[] = [];

  constructor(
    /** The context the recorder belongs to (wrappers get kernel families from it). */
    readonly ctx: GpuContext,
    readonly label: string,
    options: RecorderOptions,
  ) {
    this.encoder = ctx.device.createCommandEncoder({ label });
    // An attached profiler (GpuContext.profiler) profiles every recorder.
    const profile = options.profile ?? Boolean(ctx.profiler);
    this.timer = profile && ctx.device.features.has('timestamp-query') ? new GpuTimer(ctx.device, label) : null;
    this.profileWall = profile && !this.timer;
    this.profiled = ctx.profiler ? [] : null;
  }
  private readonly profileWall: boolean;
  /** Each dispatch's name and cost, for the context's profiler (null when none is attached). */
  private readonly profiled: { name: string; cost: DispatchCost }[] | null;

  /** Records one dispatch. Validation problems surface at submit/flush with the pipeline's label. */
  dispatch(d: Dispatch): this {
    const start = performance.now();
    this.recordDispatch(d);
    this.ctx.counts.recording(this.label, performance.now() - start);
    return this;
  }

  private recordDispatch(d: Dispatch): void {
    this.assertOpen();
    const [x, y = 1, z = 1] = d.workgroups;
    if (x === 0 || y === 0 || z === 0) return;
    const maxDim = this.ctx.device.limits.maxComputeWorkgroupsPerDimension;
    if (x > maxDim || y > maxDim || z > maxDim) {
      throw new Error(
        `${d.family.name}.${d.entry}: workgroups (${x}, ${y}, ${z}) exceed the device limit ${maxDim} per dimension`,
      );
    }
    const pipeline = d.family.pipeline(d.entry, d.constants);
    const params = d.params ? this.ctx.paramBuffer(d.params) : null;
    const group = this.ctx.bindGroup(pipeline, params, d.bindings, this.label);
    const name = d.label ?? `${d.family.name}.${d.entry}`;
    const bound = d.bindings.filter((t): t is Tensor => t !== null);
    const cost = d.cost ?? { bytes: boundBytes(bound), flops: 0 };
    this.ctx.counts.dispatch(this.label, name, cost);
    this.profiled?.push({ name, cost });
    if (!this.timer && this.ctx.wantsFirstDispatchProbe(pipeline)) {
      // Measuring compiles: the work so far, then this dispatch alone, each in its own command buffer (same order).
      this.endPass();
      const probe = this.ctx.device.createCommandEncoder({ label: `${this.label}: first dispatch of ${name}` });
      const probePass = probe.beginComputePass({ label: name });
      probePass.setPipeline(pipeline);
      probePass.setBindGroup(0, group);
      probePass.dispatchWorkgroups(x, y, z);
      probePass.end();
      this.ctx.submitFirstDispatchProbe(pipeline, this.encoder.finish(), probe.finish());
      this.encoder = this.ctx.device.createCommandEncoder({ label: this.label });
      this.dispatched.push({ name, buffers: bound.map((t) => t.label) });
      this.dispatchCount++;
      return;
    }
    const pass = this.timer
      ? this.encoder.beginComputePass({ label: name, timestampWrites: this.timer.next(name) })
      : this.computePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(x, y, z);
    if (this.timer) pass.end();
    this.dispatched.push({ name, buffers: bound.map((t) => t.label) });
    this.dispatchCount++;
  }

  /** Copies src into dst (same element count). */
  copy(dst: Tensor, src: Tensor): this {
    const start = performance.now();
    this.assertOpen();
    if (dst.byteLength !== src.byteLength) throw new Error(`copy ${src.describe()} -> ${dst.describe()}: sizes differ`);
    this.endPass();
    this.encoder.copyBufferToBuffer(src.buffer, src.byteOffset, dst.buffer, dst.byteOffset, src.byteLength);
    this.ctx.counts.recording(this.label, performance.now() - start);
    return this;
  }

  /**
   * Marks one more step of the phase recorded into this command buffer, where one submit holds several (decode
   * token steps): the counters and the profile then report per step, not per submit.
   */
  countStep(): this {
    this.assertOpen();
    this.steps++;
    return this;
  }

  /** Finishes the command buffer and submits it. The recorder cannot be used afterwards. */
  submit(): void {
    const start = performance.now();
    this.assertOpen();
    this.endPass();
    this.timer?.resolve(this.encoder);
    if (this.profileWall) this.wallStart = performance.now();
    this.ctx.device.queue.submit([this.encoder.finish()]);
    const steps = Math.max(1, this.steps);
    this.ctx.counts.submit(this.label, steps);
    this.ctx.counts.recording(this.label, performance.now() - start);
    this.submitted = true;
    this.ctx.closeRecorder(this);
    if (this.profileWall) {
      this.wallDone = this.ctx.device.queue.onSubmittedWorkDone().then(() => performance.now() - this.wallStart);
    }
    if (this.profiled && this.ctx.profiler) this.ctx.profiler.collect(this.label, steps, this.profiled, this.timings());
  }

  /** Per-dispatch GPU times (profiling only); without timestamp-query, one entry for the whole phase. */
  async timings(): Promise<KernelTiming[]> {
    if (!this.submitted) throw new Error(`timings of "${this.label}" requested before submit`);
    if (this.timer) return this.timer.read();
    if (this.wallDone) return [{ label: this.label, ms: await this.wallDone }];
    return [];
  }

  /**
   * Adds to a device error message the kernels of this phase that bound the buffers it names
   * (Dawn names the buffer and the command encoder, not the dispatch).
   */
  explain(message: string): string {
    const named = [...message.matchAll(/\[Buffer "([^"]+)"\]/g)].map((m) => m[1]);
    const lines = [...new Set(named)].map((label) => {
      const users = this.dispatched
        .filter((d) => d.buffers.includes(label))
        .map((d) => `${d.name}(${d.buffers.join(', ')})`);
      return users.length
        ? `\n  kernels in "${this.label}" binding buffer "${label}": ${[...new Set(users)].join('; ')}`
        : '';
    });
    return message.trimEnd() + lines.join('');
  }

  private computePass(): GPUComputePassEncoder {
    if (!this.pass) this.pass = this.encoder.beginComputePass({ label: this.label });
    return this.pass;
  }

  private endPass(): void {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
  }

  private assertOpen(): void {
    if (this.submitted) throw new Error(`recorder "${this.label}" was already submitted`);
  }
}

/**
 * Spreads `count` workgroups over x and y so neither exceeds `maxPerDim`; kernels recover the linear index
 * as wid.x + wid.y * nwg.x and ignore the overhang.
 */
export function grid(count: number, maxPerDim = 65535): [number, number] {
  if (count <= maxPerDim) return [count, 1];
  const y = Math.ceil(count / maxPerDim);
  return [Math.ceil(count / y), y];
}
