// GpuContext: the device plus everything the engine keeps per device: kernel families, cached uniform
// parameter buffers and bind groups, tensor creation, upload and readback, and error collection.
// It knows nothing about transformers or RL.

import type { AdapterReport } from './adapter';
import { GpuDeviceLostError, GpuValidationError } from './errors';
import { GpuCounts } from './counters';
import type { GpuProfiler } from './profiler';
import { KernelFamily, type CompileRecord } from './kernel';
import type { Params } from './params';
import { Recorder, type RecorderOptions } from './recorder';
import { Tensor, dtypeBytes, shapeSize, type DType, type HostArrayOf } from './tensor';

const MAX_CACHED_BIND_GROUPS = 8192;
const MAX_CACHED_PARAMS = 4096;

export interface TensorOptions<D extends DType> {
  dtype?: D;
  label?: string;
}

export class GpuContext {
  private readonly familyCache = new Map<string, KernelFamily>();
  private readonly paramBuffers = new Map<string, GPUBuffer>();
  private readonly bindGroups = new Map<string, GPUBindGroup>();
  /** Each pipeline's bind group layout, asked of Dawn once (asking costs about as much as creating a bind group). */
  private readonly bindGroupLayouts = new WeakMap<GPUComputePipeline, GPUBindGroupLayout>();
  private readonly objectIds = new WeakMap<object, number>();
  private nextId = 1;
  private readonly pendingErrors: Promise<string[]>[] = [];
  private readonly uncaptured: string[] = [];
  private openRecorder: Recorder | null = null;
  private lostMessage: string | null = null;
  private readonly errorListeners = new Set<(e: Error) => void>();
  /** Set by destroy(): the device going away after it is expected, not a loss. */
  private released = false;
  private liveBytes = 0;
  private peakBytes = 0;
  private readonly compiled: CompileRecord[] = [];
  /** Dispatches, submits, readbacks, pipelines, bytes and FLOPs so far (src/gpu/counters.ts). */
  readonly counts = new GpuCounts();
  /** While set, every recorder is profiled into it (src/gpu/profiler.ts; `npm run profile`, the bench). */
  profiler: GpuProfiler | null = null;
  private readonly compileListeners = new Set<(r: CompileRecord) => void>();
  /** Each pipeline's compile record, and the pipelines whose first dispatch has been recorded (first-dispatch probe). */
  private readonly compileRecords = new WeakMap<GPUComputePipeline, CompileRecord>();
  private readonly dispatchedPipelines = new WeakSet<GPUComputePipeline>();
  private readonly firstDispatchTimings: Promise<void>[] = [];
  /**
   * When set, every pipeline's first dispatch is submitted alone and timed into its CompileRecord
   * (firstDispatchMs): drivers such as lavapipe compile there, not in createComputePipeline. For measuring compile
   * times (the self-test's --compiles); it splits recorders' command buffers (same order of dispatches, same
   * results) and makes no difference without it. Not with profiling recorders. While it is set, an upload made
   * between a recorder's dispatches reaches the queue after the dispatches submitted so far, not after all of them.
   */
  measureFirstDispatches = false;

  constructor(
    readonly device: GPUDevice,
    readonly report: AdapterReport,
  ) {
    device.addEventListener('uncapturederror', (ev) => {
      const message = (ev as GPUUncapturedErrorEvent).error.message;
      this.uncaptured.push(message);
      this.emit(new GpuValidationError(message));
    });
    void device.lost.then((info) => {
      // Our own destroy() is not a loss; a destroy by anyone else (or a test standing in for a driver reset) is.
      if (info.reason === 'destroyed' && this.released) return;
      this.lostMessage = `GPU device lost (${info.reason}): ${info.message}`;
      this.emit(new GpuDeviceLostError(this.lostMessage));
    });
  }

  /** Subscribe to asynchronous device errors (device loss, uncaptured validation errors). Returns an unsubscribe. */
  onError(listener: (e: Error) => void): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  private emit(e: Error): void {
    for (const l of this.errorListeners) l(e);
  }

  /** The kernel family for a WGSL source, compiled once per context. */
  family(name: string, source: string): KernelFamily {
    let f = this.familyCache.get(name);
    if (!f) {
      f = new KernelFamily(this.device, name, source, (r, pipeline) => {
        this.compiled.push(r);
        this.counts.pipeline();
        this.compileRecords.set(pipeline, r);
        for (const l of this.compileListeners) l(r);
      });
      this.familyCache.set(name, f);
      this.pendingErrors.push(f.compileErrors);
    }
    return f;
  }

  /**
   * Every pipeline compiled on this context so far, in order (src/gpu/kernel.ts times each one). The bench and
   * the self-test print the slowest (compileReport).
   */
  compileLog(): readonly CompileRecord[] {
    return this.compiled;
  }

  /** Whether the recorder should submit this pipeline's dispatch alone and time it (measureFirstDispatches). */
  wantsFirstDispatchProbe(pipeline: GPUComputePipeline): boolean {
    return this.measureFirstDispatches && !this.dispatchedPipelines.has(pipeline);
  }

  /**
   * Submits `before` (the work recorded ahead of the probed dispatch), then `probe` (that dispatch alone), and
   * times the probe from the later of its submit and the end of `before` to its completion.
   */
  submitFirstDispatchProbe(pipeline: GPUComputePipeline, before: GPUCommandBuffer, probe: GPUCommandBuffer): void {
    this.dispatchedPipelines.add(pipeline);
    const queue = this.device.queue;
    queue.submit([before]);
    const beforeDone = queue.onSubmittedWorkDone().then(() => performance.now());
    const submitted = performance.now();
    queue.submit([probe]);
    const record = this.compileRecords.get(pipeline);
    this.firstDispatchTimings.push(
      Promise.all([beforeDone, queue.onSubmittedWorkDone().then(() => performance.now())]).then(([start, end]) => {
        if (record) record.firstDispatchMs = end - Math.max(start, submitted);
      }),
    );
  }

  /** Resolves once every probed first dispatch so far has completed and been written to its CompileRecord. */
  async firstDispatchesTimed(): Promise<void> {
    await Promise.all(this.firstDispatchTimings);
  }

  /** Told of each pipeline as it is compiled (the lab's status line counts them). Returns an unsubscribe. */
  onCompiled(listener: (r: CompileRecord) => void): () => void {
    this.compileListeners.add(listener);
    return () => this.compileListeners.delete(listener);
  }

  /** A new zero-initialized tensor. */
  tensor<D extends DType = 'f32'>(shape: readonly number[], options: TensorOptions<D> = {}): Tensor<D> {
    const dtype = (options.dtype ?? 'f32') as D;
    const label = options.label ?? 'tensor';
    const bytes = Math.max(16, Math.ceil((shapeSize(shape) * dtypeBytes(dtype)) / 16) * 16);
    const max = this.device.limits.maxBufferSize;
    if (bytes > max) {
      throw new Error(
        `tensor ${label} (${shape.join(', ')}) needs ${bytes} bytes, more than this device's buffer limit of ${max}`,
      );
    }
    // GPUBufferUsage is a global that Dawn installs at acquisition, so it is read here, not at module load.
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const buffer = this.device.createBuffer({ label, size: bytes, usage });
    this.liveBytes += bytes;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    return new Tensor(buffer, shape, dtype, label, 0, true, (b) => this.forget(b));
  }

  /** A tensor holding a copy of `data`. */
  fromArray<D extends DType = 'f32'>(
    data: HostArrayOf<D> | number[],
    shape: readonly number[],
    options: TensorOptions<D> = {},
  ): Tensor<D> {
    const t = this.tensor<D>(shape, options);
    this.upload(t, data);
    return t;
  }

  /** Copies host data into a tensor (queued; ordered before later submits). */
  upload<D extends DType>(t: Tensor<D>, data: HostArrayOf<D> | number[]): void {
    if (data.length !== t.size)
      throw new Error(`upload to ${t.describe()}: got ${data.length} elements, want ${t.size}`);
    const arr = Array.isArray(data) ? hostArray(t.dtype, data) : data;
    if (arr.byteLength !== t.byteLength) {
      // A half tensor of odd length: writeBuffer moves whole 32-bit words, so the last one is padded with zero bits.
      const padded = new Uint8Array(t.byteLength);
      padded.set(new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength));
      this.device.queue.writeBuffer(t.buffer, t.byteOffset, padded.buffer, 0, t.byteLength);
      return;
    }
    this.device.queue.writeBuffer(t.buffer, t.byteOffset, arr.buffer, arr.byteOffset, t.byteLength);
  }

  /** Reads tensors back in one submit. The only way data leaves the GPU; never call it inside a loop of kernels. */
  async readMany(tensors: readonly Tensor[]): Promise<(Float32Array | Uint32Array | Int32Array | Uint16Array)[]> {
    if (this.openRecorder)
      throw new Error(`readback while recorder "${this.openRecorder.label}" is open: submit it first`);
    const encoder = this.device.createCommandEncoder({ label: 'readback' });
    const staging = tensors.map((t) => {
      const s = this.device.createBuffer({
        label: `readback:${t.label}`,
        size: Math.max(16, Math.ceil(t.byteLength / 16) * 16),
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      if (t.byteLength > 0) encoder.copyBufferToBuffer(t.buffer, t.byteOffset, s, 0, Math.ceil(t.byteLength / 4) * 4);
      return s;
    });
    this.device.queue.submit([encoder.finish()]);
    this.counts.readback();
    await Promise.all(staging.map((s) => s.mapAsync(GPUMapMode.READ)));
    const out = tensors.map((t, i) => {
      const copy = staging[i].getMappedRange().slice(0, t.byteLength);
      staging[i].unmap();
      staging[i].destroy();
      return t.dtype === 'f32'
        ? new Float32Array(copy)
        : t.dtype === 'u32'
          ? new Uint32Array(copy)
          : t.dtype === 'i32'
            ? new Int32Array(copy)
            : new Uint16Array(copy, 0, t.size);
    });
    await this.flush();
    return out;
  }

  /** Reads one tensor back. */
  async read<D extends DType>(t: Tensor<D>): Promise<HostArrayOf<D>> {
    const [a] = await this.readMany([t]);
    return a as HostArrayOf<D>;
  }

  /** Starts recording one phase (one command buffer). Only one recorder may be open at a time. */
  recorder(label: string, options: RecorderOptions = {}): Recorder {
    if (this.openRecorder)
      throw new Error(`recorder "${label}" opened while "${this.openRecorder.label}" is still open`);
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    const rec = new Recorder(this, label, options);
    this.openRecorder = rec;
    return rec;
  }

  /** Called by Recorder.submit: closes the recorder's error scopes and remembers their outcome. */
  closeRecorder(rec: Recorder): void {
    if (this.openRecorder !== rec) throw new Error(`recorder "${rec.label}" is not the open one`);
    this.openRecorder = null;
    const scopeError = (p: Promise<GPUError | null>) =>
      p.then((e) => (e ? [`in phase "${rec.label}": ${rec.explain(e.message)}`] : []));
    const validation = scopeError(this.device.popErrorScope());
    const oom = scopeError(this.device.popErrorScope());
    this.pendingErrors.push(Promise.all([validation, oom]).then((a) => a.flat()));
  }

  /** Waits for all submitted work and throws the first GPU error it produced (naming the kernel's label). */
  async flush(): Promise<void> {
    await this.device.queue.onSubmittedWorkDone();
    const pending = this.pendingErrors.splice(0);
    const messages = (await Promise.all(pending)).flat();
    messages.push(...this.uncaptured.splice(0));
    if (this.lostMessage) throw new GpuDeviceLostError(this.lostMessage);
    if (messages.length) throw new GpuValidationError(messages.join('\n'));
  }

  /** A cached uniform buffer holding these parameter words. */
  paramBuffer(params: Params): GPUBuffer {
    const key = params.key();
    let b = this.paramBuffers.get(key);
    if (!b) {
      if (this.paramBuffers.size >= MAX_CACHED_PARAMS) this.evictParams();
      const words = params.toUint32Array();
      b = this.device.createBuffer({
        label: `params[${key}]`,
        size: words.byteLength,
        usage: GPUBufferUsage.UNIFORM,
        mappedAtCreation: true,
      });
      new Uint32Array(b.getMappedRange()).set(words);
      b.unmap();
      this.paramBuffers.set(key, b);
    }
    return b;
  }

  /**
   * A cached bind group: binding 0 is the uniform parameters (when given), then tensors at 1, 2, ... A new one is
   * counted against `phase` (the recorder's label): creating it is the largest host cost of recording a dispatch.
   */
  bindGroup(
    pipeline: GPUComputePipeline,
    params: GPUBuffer | null,
    tensors: readonly (Tensor | null)[],
    phase = 'unrecorded',
  ): GPUBindGroup {
    const key = [
      this.id(pipeline),
      params ? this.id(params) : 0,
      ...tensors.map((t) => (t ? `${this.id(t.buffer)}@${t.byteOffset}+${t.byteLength}` : '-')),
    ].join('|');
    let g = this.bindGroups.get(key);
    if (!g) {
      if (this.bindGroups.size >= MAX_CACHED_BIND_GROUPS) this.bindGroups.clear();
      const entries: GPUBindGroupEntry[] = [];
      if (params) entries.push({ binding: 0, resource: { buffer: params } });
      tensors.forEach((t, i) => {
        if (t) entries.push({ binding: i + 1, resource: t.binding });
      });
      let layout = this.bindGroupLayouts.get(pipeline);
      if (!layout) this.bindGroupLayouts.set(pipeline, (layout = pipeline.getBindGroupLayout(0)));
      g = this.device.createBindGroup({ label: pipeline.label, layout, entries });
      this.bindGroups.set(key, g);
      this.counts.bindGroup(phase);
    }
    return g;
  }

  private id(o: object): number {
    let i = this.objectIds.get(o);
    if (i === undefined) {
      i = this.nextId++;
      this.objectIds.set(o, i);
    }
    return i;
  }

  /**
   * Bytes of the tensors alive now, and the most alive at once since the context was made or resetTensorPeak()
   * (what the memory plan, src/model/memory-plan.ts, predicts; uniform and staging buffers are not counted).
   */
  tensorBytes(): { live: number; peak: number } {
    return { live: this.liveBytes, peak: this.peakBytes };
  }

  /** Starts a new peak at the bytes alive now. */
  resetTensorPeak(): void {
    this.peakBytes = this.liveBytes;
  }

  /** Drops cached bind groups that reference a destroyed buffer, and stops counting its bytes. */
  private forget(buffer: GPUBuffer): void {
    this.liveBytes -= buffer.size;
    const id = this.objectIds.get(buffer);
    if (id === undefined) return;
    const needle = `|${id}@`;
    for (const k of this.bindGroups.keys()) if (k.includes(needle)) this.bindGroups.delete(k);
  }

  private evictParams(): void {
    // Parameter buffers are tiny; dropping the oldest half keeps the cache bounded during long decodes.
    const keys = [...this.paramBuffers.keys()].slice(0, MAX_CACHED_PARAMS / 2);
    for (const k of keys) this.paramBuffers.delete(k);
    this.bindGroups.clear();
  }

  /** Releases the device; required in Node or the process may not exit. */
  destroy(): void {
    this.released = true;
    this.device.destroy();
  }
}

function hostArray(dtype: DType, data: number[]): Float32Array | Uint32Array | Int32Array | Uint16Array {
  if (dtype === 'bf16' || dtype === 'f16') return Uint16Array.from(data); // raw bits
  return dtype === 'f32' ? Float32Array.from(data) : dtype === 'u32' ? Uint32Array.from(data) : Int32Array.from(data);
}
