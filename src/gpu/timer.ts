// GPU timer: timestamp queries around each compute pass of a profiled recorder.
// Present only when the device has 'timestamp-query'; otherwise recorders fall back to wall-clock timing.

export interface KernelTiming {
  label: string;
  ms: number;
}

const CAPACITY = 2048; // timestamps per recorder (two per dispatch)

export class GpuTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolveBuffer: GPUBuffer;
  private readonly readBuffer: GPUBuffer;
  private readonly labels: string[] = [];

  constructor(device: GPUDevice, label: string) {
    this.querySet = device.createQuerySet({ label: `timer:${label}`, type: 'timestamp', count: CAPACITY });
    this.resolveBuffer = device.createBuffer({
      label: `timer-resolve:${label}`,
      size: CAPACITY * 8,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.readBuffer = device.createBuffer({
      label: `timer-read:${label}`,
      size: CAPACITY * 8,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /** Timestamp writes for the next pass. */
  next(label: string): GPUComputePassTimestampWrites {
    const i = this.labels.length;
    if (2 * i + 2 > CAPACITY) throw new Error(`profiled recorder holds more than ${CAPACITY / 2} dispatches`);
    this.labels.push(label);
    return { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
  }

  /** Records the query resolution into the recorder's command buffer. */
  resolve(encoder: GPUCommandEncoder): void {
    const n = this.labels.length * 2;
    if (n === 0) return;
    encoder.resolveQuerySet(this.querySet, 0, n, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, n * 8);
  }

  /** Reads the timings after the recorder was submitted. */
  async read(): Promise<KernelTiming[]> {
    const n = this.labels.length;
    if (n === 0) return [];
    await this.readBuffer.mapAsync(GPUMapMode.READ, 0, n * 16);
    const t = new BigUint64Array(this.readBuffer.getMappedRange(0, n * 16).slice(0));
    this.readBuffer.unmap();
    this.querySet.destroy();
    this.resolveBuffer.destroy();
    this.readBuffer.destroy();
    return this.labels.map((label, i) => ({ label, ms: Math.max(0, Number(t[2 * i + 1] - t[2 * i])) / 1e6 }));
  }
}
