// CPU twin of shaders/rope.wgsl: rotary position embedding in Hugging Face Llama's rotate_half convention,
// on (B,T,H,HD) tensors (H = NH for queries, NKV for keys). Pairs are (i, i + HD/2), not adjacent (i, i+1)
// as in the original RoPE paper / Meta's complex-number code. Not the attention itself (attention.ts).
// GPU entry points: rope_forward, rope_forward_inplace, rope_forward_positions, rope_forward_inplace_positions
// (ropeForward) and rope_backward, rope_backward_inplace, rope_backward_positions, rope_backward_inplace_positions
// (ropeBackward): _inplace when out === x, _positions with explicit per-token positions; rope_decode_kv
// (ropeDecodeKv: the rotations and the KV-cache writes of a forward against a cache, in one dispatch).

import { host, type HostTensor } from '../core/host-tensor';
import type { HalfDtype } from '../core/half';
import { kvWrite, kvWriteHalf } from './decode';
import { ropeInverseFrequencies, type Llama3RopeScaling } from '../core/rope-frequencies';

export interface RopeOptions {
  /** RoPE base (HF `rope_theta`, e.g. 10000). inv_freq[i] = theta^(-2i/HD) for i < HD/2. */
  theta: number;
  /** Llama 3 frequency scaling (HF rope_scaling, rope_type llama3); absent: plain inv_freq. */
  scaling?: Llama3RopeScaling;
  /** Position of token t is posOffset + t (default 0): the number of tokens already in the KV cache. */
  posOffset?: number;
  /** Explicit position of every token, (B*T); overrides posOffset (per-sequence offsets, left padding). */
  positions?: Uint32Array;
}

/** Checks the rope shapes and returns (B, T, H heads, HD head dim). */
function ropeDims(kernel: string, out: HostTensor, x: HostTensor, opts: RopeOptions) {
  if (x.shape.length !== 4) throw new Error(`${kernel}: input must be (B,T,H,HD), got [${x.shape.join(', ')}]`);
  const [B, T, H, HD] = x.shape;
  if (out.shape.length !== 4 || out.shape.some((d, i) => d !== x.shape[i])) {
    throw new Error(
      `${kernel}: output shape [${out.shape.join(', ')}] differs from input shape [${x.shape.join(', ')}]`,
    );
  }
  if (HD % 2 !== 0) throw new Error(`${kernel}: head dim ${HD} must be even`);
  if (opts.positions && opts.positions.length !== B * T) {
    throw new Error(`${kernel}: positions has ${opts.positions.length} entries, want B*T=${B * T}`);
  }
  return { B, T, H, HD };
}

/**
 * Rotates every pair (x_i, x_{i+HD/2}) of every head by angle pos * inv_freq[i]; sign = +1 forward, -1 backward
 * (the transpose of a rotation is the rotation by the opposite angle). Reads both halves before writing,
 * so out may alias x.
 */
function rotate(kernel: string, out: HostTensor, x: HostTensor, opts: RopeOptions, sign: 1 | -1): void {
  const { B, T, H, HD } = ropeDims(kernel, out, x, opts);
  const half = HD / 2;
  const invFreq = ropeInverseFrequencies(opts, HD);
  const posOffset = opts.posOffset ?? 0;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const pos = opts.positions ? opts.positions[b * T + t] : posOffset + t;
      for (let i = 0; i < half; i++) {
        const angle = pos * invFreq[i];
        const cos = Math.cos(angle);
        const sin = sign * Math.sin(angle);
        for (let h = 0; h < H; h++) {
          const o = ((b * T + t) * H + h) * HD;
          const x1 = x.data[o + i];
          const x2 = x.data[o + i + half];
          // q*cos + rotate_half(q)*sin, rotate_half(q) = cat(-q2, q1)
          out.data[o + i] = x1 * cos - x2 * sin;
          out.data[o + i + half] = x2 * cos + x1 * sin;
        }
      }
    }
  }
}

/**
 * out = x * cos + rotate_half(x) * sin with cos/sin of (pos * inv_freq) duplicated over both halves.
 * @param out (B,T,H,HD) rotated, overwritten; may be the same tensor as x (in place).
 * @param x   (B,T,H,HD) queries (H = NH) or keys (H = NKV).
 */
export function ropeForward(out: HostTensor, x: HostTensor, opts: RopeOptions): void {
  rotate('ropeForward', out, x, opts, 1);
}

/**
 * Backward of ropeForward: dx = R^T dOut, the rotation by the opposite angle. Needs no saved activations.
 * @param dx   (B,T,H,HD) input gradient, overwritten; may be the same tensor as dOut (in place).
 * @param dOut (B,T,H,HD) upstream gradient.
 */
export function ropeBackward(dx: HostTensor, dOut: HostTensor, opts: RopeOptions): void {
  rotate('ropeBackward', dx, dOut, opts, -1);
}

/**
 * Twin of rope_decode_kv: a forward against a KV cache in one step. q is rotated in place (ropeForward); k rotated
 * (into a copy: k itself is left as it is) and written into kcache at positions pos..pos+T-1, v into vcache, each
 * as kvWrite (an f32 cache) or kvWriteHalf (a cache of half bits, `dtype`) writes them.
 * @param q       (B,T,NH,HD), rotated in place.
 * @param k, v    (B,T,NKV,HD).
 * @param caches  k and v caches (B*Tcap*NKV*HD values: f32, or half bits with `dtype`), and Tcap.
 */
export function ropeDecodeKv(
  q: HostTensor,
  k: HostTensor,
  v: HostTensor,
  caches: { k: Float32Array | Uint16Array; v: Float32Array | Uint16Array; Tcap: number; dtype: 'f32' | HalfDtype },
  pos: number,
  opts: RopeOptions,
): void {
  ropeForward(q, q, opts);
  const rotated = host(new Float32Array(k.data.length), k.shape);
  ropeForward(rotated, k, opts);
  const [B, T, H, HD] = k.shape;
  const dims = { B, T, Tcap: caches.Tcap, W: H * HD };
  for (const [cache, x] of [
    [caches.k, rotated.data as Float32Array],
    [caches.v, v.data as Float32Array],
  ] as const) {
    if (caches.dtype === 'f32') kvWrite(cache as Float32Array, x, dims, pos);
    else kvWriteHalf(cache as Uint16Array, x, dims, pos, caches.dtype);
  }
}
