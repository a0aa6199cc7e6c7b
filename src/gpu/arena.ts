// One buffer holding many tensors (an arena): each tensor a view at an offset aligned for binding, so a kernel can
// treat them all as one array (the multi-tensor optimizer step: one AdamW dispatch over every LoRA adapter) while
// every other kernel binds them one at a time. The padding between views is zero and stays zero under elementwise
// kernels that map zero to zero (AdamW with zero gradients, fills of zero).

import type { GpuContext } from './context';
import { Tensor, shapeSize } from './tensor';

/** A buffer of f32 tensors: the whole buffer as one tensor and the views, with each view's first element. */
export interface TensorArena {
  /** The whole buffer as one 1-D f32 tensor (owns the buffer: destroy it, not the views). */
  all: Tensor<'f32'>;
  views: Tensor<'f32'>[];
  /** Each view's first element in `all`. */
  starts: number[];
}

/** Elements of f32 between view starts: the device's storage-binding offset alignment. */
function alignment(ctx: GpuContext): number {
  return Math.max(1, ctx.device.limits.minStorageBufferOffsetAlignment / 4);
}

/**
 * Where each view of an arena of these shapes starts (element offsets aligned for binding) and the arena's length, a
 * whole number of vec4 (a kernel may read the arena as quads: the optimizer's packed entry points).
 */
function arenaLayout(ctx: GpuContext, shapes: readonly (readonly number[])[]): { starts: number[]; size: number } {
  const a = alignment(ctx);
  const starts: number[] = [];
  let n = 0;
  for (const s of shapes) {
    n = Math.ceil(n / a) * a;
    starts.push(n);
    n += shapeSize(s);
  }
  return { starts, size: Math.max(4, Math.ceil(n / 4) * 4) };
}

/** Elements an arena of these shapes takes on this device (with the padding that aligns each view). */
export function arenaSize(ctx: GpuContext, shapes: readonly (readonly number[])[]): number {
  return arenaLayout(ctx, shapes).size;
}

/** A zeroed arena holding one f32 tensor per shape, labelled `labels[i]`. */
export function tensorArena(
  ctx: GpuContext,
  shapes: readonly (readonly number[])[],
  labels: readonly string[],
  label: string,
): TensorArena {
  const { starts, size } = arenaLayout(ctx, shapes);
  const all = ctx.tensor<'f32'>([size], { label });
  const views = shapes.map(
    (s, i) => new Tensor(all.buffer, s, 'f32', labels[i], all.byteOffset + 4 * starts[i], false),
  );
  return { all, views, starts };
}

/**
 * One tensor spanning views of one buffer (bound once by a kernel that reads or writes them all) and each view's
 * first element in it (0 for a missing part), or null where the views lie in different buffers. The span is typed
 * f32; the kernel binds the bytes as whatever array it declares.
 */
export function spanOf(parts: readonly (Tensor | null)[]): { bound: Tensor; at: number[] } | null {
  const present = parts.filter((t): t is Tensor => t !== null);
  if (present.length === 0) return null;
  const buffer = present[0].buffer;
  if (present.some((t) => t.buffer !== buffer)) return null;
  const start = Math.min(...present.map((t) => t.byteOffset));
  const end = Math.max(...present.map((t) => t.byteOffset + t.byteLength));
  const bound =
    present.length === 1 ? present[0] : new Tensor(buffer, [(end - start) / 4], 'f32', 'span', start, false);
  return { bound, at: parts.map((t) => (t ? (t.byteOffset - start) / 4 : 0)) };
}
