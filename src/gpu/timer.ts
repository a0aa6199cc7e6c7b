// GPU timer: timestamp queries around each compute pass of a profiled recorder.
// Present only when the device has 'timestamp-query'; otherwise recorders fall back to wall-clock timing.
// A query set holds at most 4096 timestamps (WebGPU's limit), so the timer opens one more set per 2048 dispatches:
// a whole update of a 30-layer model in one recorder is several thousand dispatches.

export interface KernelTiming {
  label: string;
  ms: number;
}

/** Timestamps per query set (WebGPU's maximum query set size): two per dispatch. */
const SET_CAPACITY = 4096;

interface QueryBlock {
  querySet: GPUQuerySet;
  resolveBuffer: GPUBuffer;
  readBuffer: GPUBuffer;
}

export class GpuTimer {
  private readonly blocks: QueryBlock[] = [];
  private readonly labels: string[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly label: string,
  ) {}

  private block(i: number): QueryBlock {
    while (this.blocks.length <= i) {
      const n = this.blocks.length;
      this.blocks.push({
        querySet: this.device.createQuerySet({
          label: `timer:${this.label}:${n}`,
          type: 'timestamp',
          count: SET_CAPACITY,
        }),
        resolveBuffer: this.device.createBuffer({
          label: `timer-resolve:${this.label}:${n}`,
          size: SET_CAPACITY * 8,
          usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
        }),
        readBuffer: this.device.createBuffer({
          label: `timer-read:${this.label}:${n}`,
          size: SET_CAPACITY * 8,
          usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
        }),
      });
    }
    return this.blocks[i];
  }

  /** Timestamp writes for the next pass. */
  next(label: string): GPUComputePassTimestampWrites {
    const i = this.labels.length;
    const perSet = SET_CAPACITY / 2;
    const { querySet } = this.block(Math.floor(i / perSet));
    const j = i % perSet;
    this.labels.push(label);
    return { querySet, beginningOfPassWriteIndex: 2 * j, endOfPassWriteIndex: 2 * j + 1 };
  }

  /** Queries used in block `b`. */
  private used(b: number): number {
    const perSet = SET_CAPACITY / 2;
    return 2 * Math.min(perSet, this.labels.length - b * perSet);
  }

  /** Records the query resolution into the recorder's command buffer. */
  resolve(encoder: GPUCommandEncoder): void {
    this.blocks.forEach((blk, b) => {
      const n = this.used(b);
      if (n <= 0) return;
      encoder.resolveQuerySet(blk.querySet, 0, n, blk.resolveBuffer, 0);
      encoder.copyBufferToBuffer(blk.resolveBuffer, 0, blk.readBuffer, 0, n * 8);
    });
  }

  /** Reads the timings after the recorder was submitted. */
  async read(): Promise<KernelTiming[]> {
    const out: KernelTiming[] = [];
    for (let b = 0; b < this.blocks.length; b++) {
      const blk = this.blocks[b];
      const n = this.used(b);
      if (n > 0) {
        await blk.readBuffer.mapAsync(GPUMapMode.READ, 0, n * 8);
        const t = new BigUint64Array(blk.readBuffer.getMappedRange(0, n * 8).slice(0));
        blk.readBuffer.unmap();
        const first = b * (SET_CAPACITY / 2);
        for (let j = 0; j < n / 2; j++)
          out.push({ label: this.labels[first + j], ms: Math.max(0, Number(t[2 * j + 1] - t[2 * j])) / 1e6 });
      }
      blk.querySet.destroy();
      blk.resolveBuffer.destroy();
      blk.readBuffer.destroy();
    }
    return out;
  }
}
