// Host-side tensors for the CPU twins: a flat typed array plus its shape, row-major.
// Twins accept Float32Array (to mirror the GPU exactly) or Float64Array (for finite-difference checks).

/** A flat float array in either precision. */
export type FloatArray = Float32Array | Float64Array;

/** A row-major host tensor; `data.length` equals the product of `shape`. */
export interface HostTensor<A extends FloatArray = FloatArray> {
  data: A;
  shape: readonly number[];
}

/** Number of elements of a shape. */
export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Wraps an array with a shape, checking that the sizes agree. */
export function host<A extends FloatArray>(data: A, shape: readonly number[]): HostTensor<A> {
  if (data.length !== numel(shape)) {
    throw new Error(
      `host tensor: data has ${data.length} elements but shape [${shape.join(', ')}] needs ${numel(shape)}`,
    );
  }
  return { data, shape: [...shape] };
}

/** An f64 (rows, columns) tensor from equal-length rows (a fixture's nested lists). */
export function hostRows(rows: readonly (readonly number[])[]): HostTensor<Float64Array> {
  return host(Float64Array.from(rows.flat()), [rows.length, rows[0]?.length ?? 0]);
}

/** A zero-filled host tensor of the same precision as `like` (Float32Array by default). */
export function zeros(shape: readonly number[], like: 'f32' | 'f64' = 'f32'): HostTensor {
  const n = numel(shape);
  return { data: like === 'f64' ? new Float64Array(n) : new Float32Array(n), shape: [...shape] };
}
