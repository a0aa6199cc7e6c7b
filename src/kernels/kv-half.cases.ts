// GPU-vs-twin cases of the KV cache stored half (bf16 or f16, two values a 32-bit word): the write kernel (f32 keys
// and values rounded to nearest even into the cache) bit-exact against its twin kvWriteHalf over a prefill and two
// decode steps into one cache whose other positions hold random bits (kept), with ties, overflow, subnormals, signed
// zero, infinity and NaN among the values; and attention reading a half cache on both kernel paths against the f32
// twin on the rounded values (so the f32 cases' tolerance), at a head dim not a multiple of 4, odd lengths, GQA,
// left padding and a cache larger than its valid keys. Which f16 codec reads is the device's; each case names it.

import type { GpuContext, Tensor } from '../gpu';
import { attentionForward as attentionTwin } from '../reference/attention';
import { compareArrays } from '../reference/compare';
import { kvWriteHalf } from '../reference/decode';
import { halfBitsToF32, toHalfBits, type HalfDtype } from '../core/half';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import { attentionForward } from './attention';
import { attentionVariants, variantLabel, type AttentionVariant } from './attention.cases';
import { kvWrite } from './decode';
import { halfCodec } from './half-operand';
import { HALF_DTYPES } from './half.cases';
import { randomHost, seedOf, type CaseResult, type KernelCase } from './verify';

/**
 * Values whose rounding is the hard part, in both formats: ties to even (1 + 2^-11 and 1 + 3*2^-11 for f16; 1 + 2^-8,
 * 1 + 3*2^-8 for bf16), f16's overflow threshold 65520 and the largest value below it, f16 subnormals and the tie
 * below the smallest one (2^-25 rounds to 0, 3*2^-25 to 2^-23), an f32 subnormal, -0, infinities and NaN.
 */
const EDGE_VALUES = [
  1 + 2 ** -11,
  1 + 3 * 2 ** -11,
  1 + 2 ** -8,
  -(1 + 3 * 2 ** -8),
  65520,
  65519,
  2 ** -25,
  -3 * 2 ** -25,
  1e-40,
  -0,
  Infinity,
  -Infinity,
  Number.NaN,
  3e38,
];

function kvWriteHalfCase(dtype: HalfDtype): KernelCase {
  const [B, Tcap, NKV, HD] = [3, 9, 3, 6];
  const W = NKV * HD;
  const name = `kvWrite into a ${dtype} cache (${B},${Tcap},${NKV},${HD}): prefill 5, then steps at 5 and 6`;
  return {
    name,
    family: 'decode',
    async run(ctx) {
      const rng = new Rng(seedOf(name));
      // Random bits everywhere first (no NaN patterns needed: they are only copied), so positions never written are
      // proven kept.
      const start = Uint16Array.from({ length: B * Tcap * W }, () => rng.int(0x10000));
      const twin = start.slice();
      const cache = ctx.fromArray<HalfDtype>(start, [B, Tcap, NKV, HD], { dtype, label: `${name}:cache` });
      const t0 = performance.now();
      const own: Tensor[] = [cache];
      for (const [pos, T] of [
        [0, 5],
        [5, 1],
        [6, 1],
      ]) {
        const x = randomHost(rng, [B, T, NKV, HD], 4).data;
        if (pos === 0) x.set(EDGE_VALUES);
        const gx = ctx.fromArray(x, [B, T, NKV, HD], { label: `${name}:x${pos}` });
        own.push(gx);
        const rec = ctx.recorder(name);
        kvWrite(rec, cache, gx, pos);
        rec.submit();
        kvWriteHalf(twin, x, { B, T, Tcap, W }, pos, dtype);
      }
      const got = (await ctx.read(cache)) as Uint16Array;
      const ms = performance.now() - t0;
      for (const t of own) t.destroy();
      let wrong = 0;
      let first = -1;
      for (let i = 0; i < twin.length; i++)
        if (got[i] !== twin[i]) {
          wrong++;
          if (first < 0) first = i;
        }
      const summary =
        wrong === 0
          ? `${twin.length} half values bit-exact`
          : `${wrong} of ${twin.length} differ; first at ${first}: got 0x${got[first].toString(16)}, want 0x${twin[first].toString(16)}`;
      return { name, family: 'decode', pass: wrong === 0, summary, maxAbsError: wrong, ms } satisfies CaseResult;
    },
  };
}

interface CacheShape {
  B: number;
  T: number;
  Tk: number;
  Tcap: number;
  NH: number;
  NKV: number;
  HD: number;
  kvStart: number[];
  tag: string;
}

/** Decode steps (T = 1) and a prefill, GQA throughout; HD 6 (not a multiple of 4: the lanes path only) and 8. */
const CACHE_SHAPES: CacheShape[] = [
  { B: 3, T: 1, Tk: 13, Tcap: 20, NH: 6, NKV: 2, HD: 6, kvStart: [0, 4, 12], tag: 'decode step' },
  { B: 3, T: 1, Tk: 13, Tcap: 20, NH: 4, NKV: 2, HD: 8, kvStart: [0, 4, 12], tag: 'decode step' },
  { B: 2, T: 5, Tk: 5, Tcap: 11, NH: 6, NKV: 3, HD: 6, kvStart: [2, 0], tag: 'prefill' },
  { B: 2, T: 3, Tk: 7, Tcap: 9, NH: 4, NKV: 1, HD: 8, kvStart: [1, 0], tag: 'prefix' },
];

const TOL = { atol: 1e-5, rtol: 1e-4 };

function attentionHalfCase(dtype: HalfDtype, s: CacheShape, variant: AttentionVariant): KernelCase {
  const name =
    `attentionForward [${variantLabel(variant)}] ${dtype} cache ${s.tag} B=${s.B} T=${s.T} Tk=${s.Tk} Tcap=${s.Tcap} ` +
    `NH=${s.NH} NKV=${s.NKV} HD=${s.HD} kvStart=[${s.kvStart.join(',')}]`;
  return {
    name,
    family: 'attention',
    async run(ctx: GpuContext) {
      const rng = new Rng(seedOf(name));
      const q = randomHost(rng, [s.B, s.T, s.NH, s.HD], 2);
      const kvShape = [s.B, s.Tcap, s.NKV, s.HD];
      const kBits = toHalfBits(randomHost(rng, kvShape, 2).data, dtype);
      const vBits = toHalfBits(randomHost(rng, kvShape).data, dtype);
      const kvStart = Uint32Array.from(s.kvStart);
      const gq = ctx.fromArray(q.data, q.shape, { label: `${name}:q` });
      const gk = ctx.fromArray<HalfDtype>(kBits, kvShape, { dtype, label: `${name}:k` });
      const gv = ctx.fromArray<HalfDtype>(vBits, kvShape, { dtype, label: `${name}:v` });
      const gStart = ctx.fromArray<'u32'>(kvStart, [s.B], { dtype: 'u32', label: `${name}:kvStart` });
      const gOut = ctx.tensor(q.shape, { label: `${name}:out` });
      const gLse = ctx.tensor([s.B, s.NH, s.T], { label: `${name}:lse` });
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      attentionForward(rec, gOut, gLse, gq, gk, gv, { kvStart: gStart, keys: s.Tk, ...variant });
      rec.submit();
      const [out, lse] = await ctx.readMany([gOut, gLse]);
      const ms = performance.now() - t0;
      for (const t of [gq, gk, gv, gStart, gOut, gLse]) t.destroy();
      const wantOut = host(new Float32Array(q.data.length), q.shape);
      const wantLse = host(new Float32Array(s.B * s.NH * s.T), [s.B, s.NH, s.T]);
      const k = host(halfBitsToF32(kBits, dtype), kvShape);
      const v = host(halfBitsToF32(vBits, dtype), kvShape);
      attentionTwin(wantOut, wantLse, q, k, v, { keys: s.Tk, kvStart });
      const a = compareArrays(out, wantOut.data, TOL);
      const b = compareArrays(lse, wantLse.data, TOL);
      return {
        name,
        family: 'attention',
        pass: a.pass && b.pass,
        summary: `${halfCodec(dtype, ctx.device)}: out ${a.summary}; lse ${b.summary}`,
        maxAbsError: Math.max(a.maxAbsError, b.maxAbsError),
        ms,
      };
    },
  };
}

/** Every half-KV-cache case, both half dtypes, attention on each kernel variant that takes the head dim. */
export function kvHalfCases(): KernelCase[] {
  return HALF_DTYPES.flatMap((dtype) => [
    kvWriteHalfCase(dtype),
    ...CACHE_SHAPES.flatMap((s) => attentionVariants(s.HD).map((variant) => attentionHalfCase(dtype, s, variant))),
  ]);
}
