// A GPU tensor: a labelled storage buffer (or an aligned view into one) with a shape and a dtype: 32-bit
// (f32, u32, i32) or a 16-bit float storage (bf16, f16: two elements per 32-bit word, element 2i in the low half of
// word i, whatever the shape, so rows of odd length share a word with the next row; kernels index elements by their
// flat index). Knows nothing of kernels; created, filled and read through GpuContext.

export type HalfStorage = 'bf16' | 'f16';
export type DType = 'f32' | 'u32' | 'i32' | HalfStorage;

/** The typed array a dtype reads back into (half dtypes as their raw bits). */
export type HostArrayOf<D extends DType> = D extends 'f32'
  ? Float32Array
  : D extends 'u32'
    ? Uint32Array
    : D extends 'i32'
      ? Int32Array
      : Uint16Array;

/** Bytes per element of a dtype. */
export function dtypeBytes(dtype: DType): number {
  return dtype === 'bf16' || dtype === 'f16' ? 2 : 4;
}

export function isHalfStorage(dtype: DType): dtype is HalfStorage {
  return dtype === 'bf16' || dtype === 'f16';
}

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

  /** Bytes the tensor covers (4 per element; 2 for half dtypes, rounded up to a whole 32-bit word). */
  get byteLength(): number {
    return Math.ceil((this.size * dtypeBytes(this.dtype)) / 4) * 4;
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
    if (isHalfStorage(this.dtype) && offset % 2 !== 0)
      throw new Error(`view of ${this.describe()} at ${offset}: a half-precision view must start on a 32-bit word`);
    return new Tensor(
      this.buffer,
      shape,
      this.dtype,
      this.label,
      this.byteOffset + offset * dtypeBytes(this.dtype),
      false,
    );
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
