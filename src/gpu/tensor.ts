// A GPU tensor: a labelled storage buffer (or an aligned view into one) with a shape and a 32-bit dtype.
// Knows nothing of kernels; created, filled and read through GpuContext.

export type DType = 'f32' | 'u32' | 'i32';

/** The typed array a dtype reads back into. */
export type HostArrayOf<D extends DType> = D extends 'f32' ? Float32Array : D extends 'u32' ? Uint32Array : Int32Array;

export function shapeSize(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0)
      throw new Error(`tensor shape [${shape.join(', ')}] has a dimension that is not a non-negative integer`);
    n *= d;
  }
  return n;
}

export class Tensor<D extends DType = DType> {
  /** Bytes from the start of the buffer (a multiple of the device's storage offset alignment). */
  readonly byteOffset: number;
  private destroyed = false;

  constructor(
    readonly buffer: GPUBuffer,
    readonly shape: readonly number[],
    readonly dtype: D,
    readonly label: string,
    byteOffset = 0,
    /** False for views: destroying a view does not destroy the buffer. */
    readonly ownsBuffer = true,
    private readonly onDestroy?: (b: GPUBuffer) => void,
  ) {
    this.byteOffset = byteOffset;
  }

  /** Number of elements. */
  get size(): number {
    return shapeSize(this.shape);
  }

  /** Bytes the tensor covers (4 per element). */
  get byteLength(): number {
    return this.size * 4;
  }

  /** The binding resource for a bind group entry. */
  get binding(): GPUBufferBinding {
    return { buffer: this.buffer, offset: this.byteOffset, size: Math.max(4, this.byteLength) };
  }

  /** "name (2, 3, 4) f32" for messages. */
  describe(): string {
    return `${this.label} (${this.shape.join(', ')}) ${this.dtype}`;
  }

  /** Same storage, another shape with the same element count. */
  reshape(shape: readonly number[]): Tensor<D> {
    if (shapeSize(shape) !== this.size) {
      throw new Error(`reshape ${this.describe()} to (${shape.join(', ')}): element counts differ`);
    }
    return new Tensor(this.buffer, shape, this.dtype, this.label, this.byteOffset, false);
  }

  /**
   * `shape`'s worth of elements starting `offset` elements in: a view of the same buffer (not owned). Copies accept
   * any offset; as a kernel binding the byte offset must be a multiple of the device's storage offset alignment.
   */
  view(offset: number, shape: readonly number[]): Tensor<D> {
    if (!Number.isInteger(offset) || offset < 0 || offset + shapeSize(shape) > this.size) {
      throw new Error(`view of ${this.describe()} at ${offset} with shape (${shape.join(', ')}): out of range`);
    }
    return new Tensor(this.buffer, shape, this.dtype, this.label, this.byteOffset + offset * 4, false);
  }

  /** (B, T, ...rest) viewed as the matrix (B*T, prod(rest)); 2-D tensors as they are. For matmuls over rows. */
  reshape2d(): Tensor<D> {
    if (this.shape.length <= 2) return this;
    const [b, t, ...rest] = this.shape;
    return this.reshape([b * t, shapeSize(rest)]);
  }

  destroy(): void {
    if (this.destroyed || !this.ownsBuffer) return;
    this.destroyed = true;
    this.onDestroy?.(this.buffer);
    this.buffer.destroy();
  }
}
