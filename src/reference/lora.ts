// LoRA (low-rank adapters) on the model's linear projections: which projections can carry one, the adapters'
// names and shapes, PEFT's initialization, the CPU twins of an adapted projection's forward and backward (built
// from the matmul twin), and merging the adapters into the base weights. For W (out, in): y = x W^T + s (x A^T) B^T
// with A (r, in), B (out, r), s = alpha / r. Not the GPU model (src/model/gpu-model.ts) and not the PEFT file format.

import {
  loraBaseWeight,
  loraNames,
  loraScale,
  projectionShape,
  type LoraDims,
  type LoraSpec,
} from '../core/lora-layout';
import { matmul } from './matmul';
import type { HostTensor } from '../core/host-tensor';

/**
 * The adapter's forward added onto a projection's output: xa = x A^T (kept for the backward), y += s xa B^T.
 * x (N, in), y (N, out), A (r, in), B (out, r), xa (N, r).
 */
export function loraForward(
  y: HostTensor,
  xa: HostTensor,
  x: HostTensor,
  A: HostTensor,
  B: HostTensor,
  scale: number,
): void {
  matmul(xa, x, A, { transB: true });
  matmul(y, xa, B, { transB: true, accumulate: true, alpha: scale });
}

/**
 * The adapter's backward given dY (N, out): dB += s dY^T xa, dA += (s dY B)^T x, dX += (s dY B) A. dXa (N, r) is
 * scratch. dX accumulates onto the base projection's input gradient.
 */
export function loraBackward(
  dX: HostTensor,
  dA: HostTensor,
  dB: HostTensor,
  dXa: HostTensor,
  dY: HostTensor,
  x: HostTensor,
  xa: HostTensor,
  A: HostTensor,
  B: HostTensor,
  scale: number,
): void {
  matmul(dB, dY, xa, { transA: true, accumulate: true, alpha: scale });
  matmul(dXa, dY, B, { alpha: scale });
  matmul(dA, dXa, x, { transA: true, accumulate: true });
  matmul(dX, dXa, A, { accumulate: true });
}

/**
 * The base weights with every adapter merged in, W + s B A, as a checkpoint of the original architecture loads
 * them. Arrays not adapted are shared with `base`, not copied.
 */
export function mergeLoraAdapters(
  d: LoraDims,
  spec: LoraSpec,
  base: Readonly<Record<string, Float32Array>>,
  adapters: Readonly<Record<string, Float32Array>>,
): Record<string, Float32Array> {
  const s = loraScale(spec);
  const out: Record<string, Float32Array> = { ...base };
  for (let l = 0; l < d.nLayers; l++) {
    for (const t of spec.targets) {
      const [o, i] = projectionShape(d, t);
      const n = loraNames(l, t);
      const wName = loraBaseWeight(l, t);
      const W = base[wName];
      const A = adapters[n.A];
      const B = adapters[n.B];
      if (!W || !A || !B) throw new Error(`lora merge: ${!W ? wName : !A ? n.A : n.B} is missing`);
      // In float64, then rounded once, so the merged weight is as close to W + sBA as f32 allows.
      const ba = { data: new Float64Array(o * i), shape: [o, i] };
      matmul(
        ba,
        { data: Float64Array.from(B), shape: [o, spec.rank] },
        { data: Float64Array.from(A), shape: [spec.rank, i] },
        { alpha: s },
      );
      const merged = new Float32Array(o * i);
      for (let k = 0; k < merged.length; k++) merged[k] = W[k] + ba.data[k];
      out[wName] = merged;
    }
  }
  return out;
}
