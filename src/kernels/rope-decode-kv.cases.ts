// Cases of rope_decode_kv (src/kernels/rope.ts ropeDecodeKv): q rotated in place and the rotated keys and the values
// written into the KV cache, in one dispatch. Each case checks it twice: bit for bit against the kernels it replaces
// run on the GPU (ropeForward in place on q, ropeForward of k, kvWrite of k and v), and against the CPU twin
// (ropeDecodeKv of src/reference/rope.ts) to the rope cases' tolerance, a half cache widened and compared to a unit
// in its last place. Awkward shapes: one row and one position, prefill-like T > 1 with left-padded positions,
// grouped heads (NKV < NH), head dims 4, 12 and 64, a write that ends at the cache's last position, f32 and half
// caches whose untouched positions must keep their random contents, Llama 3 scaling at large positions, and a decode
// cursor (the positions and the cache row moved by its GPU value).

import type { GpuContext, Tensor } from '../gpu';
import { compareArrays } from '../reference/compare';
import { ropeDecodeKv as ropeDecodeKvTwin } from '../reference/rope';
import { halfBitsToF32, toHalfBits, type HalfDtype } from '../core/half';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import type { Llama3RopeScaling } from '../core/rope-frequencies';
import { kvWrite } from './decode';
import { ropeDecodeKv, ropeForward } from './rope';
import { randomHost, randomInts, seedOf, type CaseResult, type KernelCase } from './verify';

interface Shape {
  B: number;
  T: number;
  NH: number;
  NKV: number;
  HD: number;
  Tcap: number;
  pos: number;
  maxPos: number;
  theta?: number;
  scaling?: Llama3RopeScaling;
  /**
   * A decode cursor holding this value (src/kernels/decode.ts): the fused kernel then gets the positions less it
   * and adds the cursor's GPU value back to them and to pos.
   */
  cursor?: number;
}

const SCALED: Llama3RopeScaling = {
  ropeType: 'llama3',
  factor: 32,
  lowFreqFactor: 1,
  highFreqFactor: 4,
  originalMaxPositions: 8192,
};

const SHAPES: Shape[] = [
  { B: 1, T: 1, NH: 1, NKV: 1, HD: 4, Tcap: 1, pos: 0, maxPos: 3 },
  { B: 3, T: 1, NH: 4, NKV: 2, HD: 12, Tcap: 9, pos: 8, maxPos: 40 },
  { B: 2, T: 5, NH: 3, NKV: 1, HD: 8, Tcap: 7, pos: 1, maxPos: 9 },
  { B: 5, T: 1, NH: 9, NKV: 3, HD: 64, Tcap: 33, pos: 17, maxPos: 300_000, theta: 500_000, scaling: SCALED },
  { B: 3, T: 1, NH: 4, NKV: 2, HD: 12, Tcap: 9, pos: 8, maxPos: 40, cursor: 5 },
  {
    B: 5,
    T: 1,
    NH: 9,
    NKV: 3,
    HD: 64,
    Tcap: 33,
    pos: 17,
    maxPos: 300_000,
    theta: 500_000,
    scaling: SCALED,
    cursor: 17,
  },
];

type CacheDtype = 'f32' | HalfDtype;

/** Random cache contents: f32 values, or half bits of random values. */
function randomCache(rng: Rng, n: number, dtype: CacheDtype): Float32Array | Uint16Array {
  const values = randomHost(rng, [n]).data;
  return dtype === 'f32' ? values : toHalfBits(values, dtype);
}

function upload(ctx: GpuContext, data: Float32Array | Uint16Array, shape: number[], dtype: CacheDtype, label: string) {
  return dtype === 'f32'
    ? ctx.fromArray(data as Float32Array, shape, { label })
    : ctx.fromArray<HalfDtype>(data as Uint16Array, shape, { dtype, label });
}

function bitsEqual(a: ArrayBufferView, b: ArrayBufferView): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function widen(data: Float32Array | Uint16Array, dtype: CacheDtype): Float32Array {
  return dtype === 'f32' ? (data as Float32Array) : halfBitsToF32(data as Uint16Array, dtype);
}

function ropeDecodeKvCase(s: Shape, dtype: CacheDtype): KernelCase {
  const name = `ropeDecodeKv B=${s.B} T=${s.T} NH=${s.NH} NKV=${s.NKV} HD=${s.HD} cap=${s.Tcap} pos=${s.pos}${s.scaling ? ' llama3' : ''}${s.cursor === undefined ? '' : ` cursor=${s.cursor}`} ${dtype} cache`;
  return {
    name,
    family: 'rope',
    async run(ctx): Promise<CaseResult> {
      const rng = new Rng(seedOf(name));
      const { B, T, NH, NKV, HD, Tcap, pos } = s;
      const q = randomHost(rng, [B, T, NH, HD]);
      const k = randomHost(rng, [B, T, NKV, HD]);
      const v = randomHost(rng, [B, T, NKV, HD]);
      const cursor = s.cursor ?? 0;
      const positions = randomInts(rng, [B * T], s.maxPos);
      for (let i = 0; i < positions.data.length; i++) positions.data[i] += cursor;
      const cacheShape = [B, Tcap, NKV, HD];
      const kc = randomCache(rng, B * Tcap * NKV * HD, dtype);
      const vc = randomCache(rng, B * Tcap * NKV * HD, dtype);
      const made: Tensor[] = [];
      const keep = <T extends Tensor>(t: T) => (made.push(t), t);
      const gPos = keep(ctx.fromArray<'u32'>(positions.data, [B * T], { dtype: 'u32', label: `${name}:positions` }));
      const opts = { theta: s.theta ?? 10000, scaling: s.scaling, positions: gPos };
      // With a cursor the fused kernel reads the positions less its value and adds its GPU value back.
      const cursorOpts = () => {
        if (s.cursor === undefined) return opts;
        const lessCursor = positions.data.map((p) => p - cursor);
        const tensor = keep(
          ctx.fromArray<'u32'>(Uint32Array.of(cursor), [1], { dtype: 'u32', label: `${name}:cursor` }),
        );
        const moved = keep(ctx.fromArray<'u32'>(lessCursor, [B * T], { dtype: 'u32', label: `${name}:positions-c` }));
        return { ...opts, positions: moved, cursor: { tensor, value: cursor } };
      };
      // Fused, then the kernels it replaces on their own copies of the inputs.
      const run = (fused: boolean) => {
        const gq = keep(ctx.fromArray(q.data, q.shape, { label: `${name}:q` }));
        const gk = keep(ctx.fromArray(k.data, k.shape, { label: `${name}:k` }));
        const gv = keep(ctx.fromArray(v.data, v.shape, { label: `${name}:v` }));
        const gkc = keep(upload(ctx, kc, cacheShape, dtype, `${name}:kcache`));
        const gvc = keep(upload(ctx, vc, cacheShape, dtype, `${name}:vcache`));
        const rec = ctx.recorder(`${name}:${fused ? 'fused' : 'unfused'}`);
        if (fused) ropeDecodeKv(rec, gq, gk, gv, gkc, gvc, pos, cursorOpts());
        else {
          const rotated = keep(ctx.tensor(k.shape, { label: `${name}:k rotated` }));
          ropeForward(rec, gq, gq, opts);
          ropeForward(rec, rotated, gk, opts);
          kvWrite(rec, gkc, rotated, pos);
          kvWrite(rec, gvc, gv, pos);
        }
        rec.submit();
        return [gq, gkc, gvc];
      };
      const t0 = performance.now();
      const fused = await ctx.readMany(run(true));
      const ms = performance.now() - t0;
      const unfused = await ctx.readMany(run(false));
      for (const t of made) t.destroy();
      const twinQ = host(new Float32Array(q.data), q.shape);
      const twinK = kc.slice();
      const twinV = vc.slice();
      ropeDecodeKvTwin(twinQ, k, v, { k: twinK, v: twinV, Tcap, dtype }, pos, {
        theta: opts.theta,
        scaling: s.scaling,
        positions: positions.data,
      });
      const same = fused.every((a, i) => bitsEqual(a, unfused[i]));
      // One unit in the last place of a half cache (bf16 2^-7 relative, f16 2^-10): the twin rounds its f64 rotation
      // and the kernel its f32 one, which may sit across a rounding midpoint (seen at Llama 3 positions near 300,000:
      // a key of 0.09164 stored as 0.091614 vs 0.091675); the rope cases' 1e-5 for f32. The bit-for-bit check against
      // the unfused kernels is the exact one.
      const cacheTol = { atol: 1e-5, rtol: dtype === 'bf16' ? 2 ** -7 : dtype === 'f16' ? 2 ** -10 : 1e-5 };
      const checks = [
        compareArrays(fused[0] as Float32Array, twinQ.data, { atol: 1e-5, rtol: 1e-5 }),
        compareArrays(widen(fused[1] as Float32Array | Uint16Array, dtype), widen(twinK, dtype), cacheTol),
        compareArrays(widen(fused[2] as Float32Array | Uint16Array, dtype), widen(twinV, dtype), cacheTol),
      ];
      const pass = same && checks.every((c) => c.pass);
      const summary = `${same ? 'bit-identical to rope + rope + kvWrite x2' : 'DIFFERS from rope + rope + kvWrite x2'}; twin: q ${checks[0].summary}; kcache ${checks[1].summary}; vcache ${checks[2].summary}`;
      return { name, family: 'rope', pass, summary, maxAbsError: Math.max(...checks.map((c) => c.maxAbsError)), ms };
    },
  };
}

export function ropeDecodeKvCases(): KernelCase[] {
  return SHAPES.flatMap((s) => (['f32', 'bf16', 'f16'] as const).map((dtype) => ropeDecodeKvCase(s, dtype)));
}
