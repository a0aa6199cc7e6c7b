// Typed wrappers of shaders/rope.wgsl (rotary position embedding, Hugging Face rotate_half convention).
// Same names and argument order as src/reference/rope.ts, after the recorder; `positions` is a u32 GPU tensor
// here. out may be the same tensor as x (in place). Not attention.
//
// Bindings: (out, freqs, x[, positions]), or (out, freqs[, positions]) in place. `freqs` is a small per-(theta, HD)
// table this module builds in f64 and caches per context (see the shader's header: it makes angles exact to
// ~1e-6 rad for positions < 2^24); it sits right after out so the in-place variants keep contiguous bindings.

import raw from '../../shaders/rope.wgsl?raw';
import { declareShader, grid, uniforms, type GpuContext, type Recorder, type Tensor } from '../gpu';
import { checkCursor, zeroCursor, type DecodeCursor } from './decode';
import { WGSL_BLOCKS } from './wgsl-blocks';
import { ropeInverseFrequencies, type Llama3RopeScaling, type RopeFrequencySpec } from '../core/rope-frequencies';

const WG = 64;

export interface GpuRopeOptions {
  /** RoPE base (HF `rope_theta`, e.g. 10000). inv_freq[i] = theta^(-2i/HD) for i < HD/2. */
  theta: number;
  /** Llama 3 frequency scaling (HF rope_scaling, rope_type llama3); absent: plain inv_freq. */
  scaling?: Llama3RopeScaling;
  /** Position of token t is posOffset + t (default 0): the number of tokens already in the KV cache. */
  posOffset?: number;
  /** Explicit position of every token, (B*T) u32; overrides posOffset, as in the twin. */
  positions?: Tensor<'u32'>;
}

/** Floats per pair in the frequency table (six used, padded to eight). */
const TABLE_STRIDE = 8;

const PARAMS = uniforms('Params', {
  rows: 'u32', // N = B*T
  T: 'u32',
  H: 'u32',
  half: 'u32', // HD / 2
  pos_offset: 'u32', // without positions: position of token t is pos_offset + t
  Hkv: 'u32', // rope_decode_kv: key/value heads
  Tcap: 'u32', // rope_decode_kv: cache positions per row
});
export const ROPE_SHADER = declareShader('rope.wgsl', raw, {
  uniforms: [PARAMS],
  consts: { TABLE_STRIDE },
  blocks: WGSL_BLOCKS,
});

/**
 * The shader's frequency table for (theta, scaling, HD): per pair i, the turn rate f = inv_freq[i] / 2pi
 * (ropeInverseFrequencies: theta^(-2i/HD), Llama 3 scaled when asked) as A = frac(4096 f) and B = f, each split
 * into three chunks of 12 significant bits (exact in f32). Exported for tests.
 */
export function ropeFreqTable(spec: RopeFrequencySpec | number, HD: number): Float32Array {
  const invFreq = ropeInverseFrequencies(typeof spec === 'number' ? { theta: spec } : spec, HD);
  const half = HD / 2;
  const table = new Float32Array(half * TABLE_STRIDE);
  const split = (v: number, out: number) => {
    let rest = v;
    for (let k = 1; k <= 3; k++) {
      const scale = 2 ** (12 * k);
      const chunk = Math.floor(rest * scale) / scale;
      table[out + k - 1] = chunk; // exact: at most 12 significant bits
      rest -= chunk;
    }
  };
  for (let i = 0; i < half; i++) {
    const f = invFreq[i] / (2 * Math.PI); // the twin's inv_freq, in turns
    const a = 4096 * f;
    split(a - Math.floor(a), i * TABLE_STRIDE);
    split(f, i * TABLE_STRIDE + 3);
  }
  return table;
}

const tables = new WeakMap<GpuContext, Map<string, Tensor>>();

function freqTensor(ctx: GpuContext, spec: RopeFrequencySpec, HD: number): Tensor {
  let byKey = tables.get(ctx);
  if (!byKey) tables.set(ctx, (byKey = new Map()));
  const s = spec.scaling;
  const scaled = s ? `,llama3=${s.factor}/${s.lowFreqFactor}/${s.highFreqFactor}/${s.originalMaxPositions}` : '';
  const key = `theta=${spec.theta},HD=${HD}${scaled}`;
  let t = byKey.get(key);
  if (!t) {
    t = ctx.fromArray(ropeFreqTable(spec, HD), [HD / 2, TABLE_STRIDE], { label: `rope.freqs[${key}]` });
    byKey.set(key, t);
  }
  return t;
}

function rotate(
  kernel: string,
  dir: 'forward' | 'backward',
  rec: Recorder,
  out: Tensor,
  x: Tensor,
  opts: GpuRopeOptions,
): void {
  if (x.shape.length !== 4) throw new Error(`${kernel}: input must be (B,T,H,HD), got ${x.describe()}`);
  const [B, T, H, HD] = x.shape;
  if (out.shape.length !== 4 || out.shape.some((d, i) => d !== x.shape[i])) {
    throw new Error(`${kernel}: output ${out.describe()} differs in shape from input ${x.describe()}`);
  }
  if (x.dtype !== 'f32' || out.dtype !== 'f32')
    throw new Error(`${kernel}: ${x.describe()} and ${out.describe()} must be f32`);
  if (HD % 2 !== 0) throw new Error(`${kernel}: head dim ${HD} must be even`);
  if (!(opts.theta > 0)) throw new Error(`${kernel}: theta ${opts.theta} must be positive`);
  const posOffset = opts.posOffset ?? 0;
  if (!Number.isInteger(posOffset) || posOffset < 0)
    throw new Error(`${kernel}: posOffset ${posOffset} must be a non-negative integer`);
  const pos = opts.positions;
  if (pos && (pos.dtype !== 'u32' || pos.size !== B * T)) {
    throw new Error(`${kernel}: positions ${pos.describe()} must be u32 with B*T=${B * T} entries`);
  }
  let inPlace = false;
  if (out.buffer === x.buffer) {
    const same = out.byteOffset === x.byteOffset && out.byteLength === x.byteLength;
    const overlap = out.byteOffset < x.byteOffset + x.byteLength && x.byteOffset < out.byteOffset + out.byteLength;
    if (overlap && !same)
      throw new Error(
        `${kernel}: ${out.describe()} partly overlaps ${x.describe()}; pass the same tensor or disjoint ones`,
      );
    inPlace = same;
  }
  const N = B * T;
  const half = HD / 2;
  const freqs = freqTensor(rec.ctx, { theta: opts.theta, scaling: opts.scaling }, HD);
  const entry = `rope_${dir}${inPlace ? '_inplace' : ''}${pos ? '_positions' : ''}`;
  const bindings = [out, freqs, ...(inPlace ? [] : [x]), ...(pos ? [pos] : [])];
  rec.dispatch({
    family: rec.ctx.family('rope', ROPE_SHADER.source),
    entry,
    constants: { WG },
    params: PARAMS.pack({ rows: N, T, H, half, pos_offset: posOffset, Hkv: 0, Tcap: 0 }),
    bindings,
    workgroups: grid(Math.ceil((N * half) / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}

/**
 * out = x * cos + rotate_half(x) * sin with cos/sin of (pos * inv_freq) duplicated over both halves.
 * @param out (B,T,H,HD) rotated, overwritten; may be the same tensor as x (in place).
 * @param x   (B,T,H,HD) queries (H = NH) or keys (H = NKV).
 */
export function ropeForward(rec: Recorder, out: Tensor, x: Tensor, opts: GpuRopeOptions): void {
  rotate('ropeForward', 'forward', rec, out, x, opts);
}

/**
 * Backward of ropeForward: dx = R^T dOut, the rotation by the opposite angle. Needs no saved activations.
 * @param dx   (B,T,H,HD) input gradient, overwritten; may be the same tensor as dOut (in place).
 * @param dOut (B,T,H,HD) upstream gradient.
 */
export function ropeBackward(rec: Recorder, dx: Tensor, dOut: Tensor, opts: GpuRopeOptions): void {
  rotate('ropeBackward', 'backward', rec, dx, dOut, opts);
}

/** The cache storages rope_decode_kv writes, by KV_MODE. */
const KV_MODES = { f32: 0, bf16: 1, f16: 2 } as const;

/**
 * A forward against a KV cache in one dispatch: q rotated in place, k rotated and written into `kcache` and v into
 * `vcache` at cache positions pos..pos+T-1 (twin: ropeDecodeKv; the same rotations as ropeForward and the same
 * writes as kvWrite, bit for bit). k and v themselves are left as they are.
 * @param q       (B,T,NH,HD) queries, rotated in place.
 * @param k       (B,T,NKV,HD) new keys.
 * @param v       (B,T,NKV,HD) new values.
 * @param kcache  (B,Tcap,NKV,HD) f32, bf16 or f16; vcache the same.
 * @param pos     the cache position of each row's first new token.
 * @param opts    theta, scaling and the RoPE position of every token (positions, required); with a decode cursor
 *                (decode.ts) the kernel reads pos - cursor.value and positions - cursor.value and adds the cursor's
 *                GPU value, so the positions tensor and the parameters stay the same from step to step.
 */
export function ropeDecodeKv(
  rec: Recorder,
  q: Tensor,
  k: Tensor,
  v: Tensor,
  kcache: Tensor,
  vcache: Tensor,
  pos: number,
  opts: GpuRopeOptions & { positions: Tensor<'u32'>; cursor?: DecodeCursor },
): void {
  const kernel = 'ropeDecodeKv';
  if (q.shape.length !== 4 || k.shape.length !== 4) throw new Error(`${kernel}: q and k must be (B,T,H,HD)`);
  const [B, T, H, HD] = q.shape;
  const Hkv = k.shape[2];
  for (const [t, what] of [
    [k, 'k'],
    [v, 'v'],
  ] as const)
    if (t.shape.length !== 4 || t.shape[0] !== B || t.shape[1] !== T || t.shape[2] !== Hkv || t.shape[3] !== HD)
      throw new Error(`${kernel}: ${what} ${t.describe()} must be (${B}, ${T}, ${Hkv}, ${HD})`);
  for (const t of [q, k, v]) if (t.dtype !== 'f32') throw new Error(`${kernel}: ${t.describe()} must be f32`);
  if (HD % 4 !== 0) throw new Error(`${kernel}: head dim ${HD} must divide by 4`);
  const Tcap = kcache.shape[1];
  for (const c of [kcache, vcache]) {
    if (c.shape.length !== 4 || c.shape[0] !== B || c.shape[2] !== Hkv || c.shape[3] !== HD)
      throw new Error(`${kernel}: cache ${c.describe()} must be (${B}, Tcap, ${Hkv}, ${HD})`);
    if (c.shape[1] !== Tcap || c.dtype !== kcache.dtype)
      throw new Error(`${kernel}: the caches ${kcache.describe()} and ${c.describe()} must match`);
  }
  if (!Object.hasOwn(KV_MODES, kcache.dtype)) throw new Error(`${kernel}: a ${kcache.dtype} cache is not supported`);
  if (!Number.isInteger(pos) || pos < 0 || pos + T > Tcap)
    throw new Error(`${kernel}: positions ${pos}..${pos + T - 1} exceed the capacity ${Tcap} of ${kcache.describe()}`);
  if (!(opts.theta > 0)) throw new Error(`${kernel}: theta ${opts.theta} must be positive`);
  const positions = opts.positions;
  if (positions.dtype !== 'u32' || positions.size !== B * T)
    throw new Error(`${kernel}: positions ${positions.describe()} must be u32 with B*T=${B * T} entries`);
  if (opts.cursor) checkCursor(kernel, opts.cursor, pos);
  const N = B * T;
  const half = HD / 2;
  const freqs = freqTensor(rec.ctx, { theta: opts.theta, scaling: opts.scaling }, HD);
  rec.dispatch({
    family: rec.ctx.family('rope', ROPE_SHADER.source),
    entry: 'rope_decode_kv',
    constants: { WG, KV_MODE: KV_MODES[kcache.dtype as keyof typeof KV_MODES] },
    // The kernel adds the cursor's GPU value to pos_offset and to every position.
    params: PARAMS.pack({ rows: N, T, H, half, pos_offset: pos - (opts.cursor?.value ?? 0), Hkv, Tcap }),
    bindings: [q, freqs, positions, k, v, kcache, vcache, opts.cursor?.tensor ?? zeroCursor(rec.ctx)],
    workgroups: grid(Math.ceil((N * half) / 2 / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
    // q read and written; k and v read; their rows of the caches written.
    cost: {
      bytes:
        2 * q.byteLength +
        k.byteLength +
        v.byteLength +
        ((k.byteLength + v.byteLength) * (kcache.dtype === 'f32' ? 2 : 1)) / 2 +
        freqs.byteLength +
        positions.byteLength,
      flops: 0,
    },
  });
}
