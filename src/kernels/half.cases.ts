// GPU-vs-twin cases of the kernels that read or write half-precision weights (bf16 or f16 storage, f32 arithmetic):
// matmul with a half B operand in every variant and each layout the weights take (A*B^T forward, A*B input
// gradient, A^T*B for completeness), at shapes with odd rows so two rows share a 32-bit word, and the embedding
// gather from a half table; packHalf, which writes f32 values into half storage (bit-exact against the host's
// rounding, edge values included), and unpackHalf, which widens half storage back to f32 (bit-exact: every half bit
// pattern's value, subnormals, infinities and signed zeros included). The twin is the f32 kernel's twin on the values rounded as the GPU stores them
// (roundToWeightDtype), so the tolerance is the f32 cases' own. Which f16 codec runs is the device's: native
// (shader-f16) where it has the feature, u32 words through unpack2x16float where not; each case names it.

import type { GpuContext } from '../gpu';
import { compareArrays } from '../reference/compare';
import { embeddingForward as embeddingTwin } from '../reference/embedding';
import { matmul as matmulTwin } from '../reference/matmul';
import { roundToWeightDtype, toHalfBits, type HalfDtype } from '../core/half';
import { host } from '../core/host-tensor';
import { Rng } from '../core/random';
import { embeddingForward } from './embedding';
import { packHalf, unpackHalf } from './half-pack';
import { packHalf as packHalfTwin, unpackHalf as unpackHalfTwin } from '../reference/half-pack';
import { halfCodec } from './half-operand';
import { MATMUL_VARIANTS, matmul, matmulVariantSupports } from './matmul';
import { randomHost, randomInts, seedOf, type CaseResult, type KernelCase } from './verify';

export const HALF_DTYPES: readonly HalfDtype[] = ['bf16', 'f16'];

const LAYOUTS = [
  { tag: 'A*B^T', transA: false, transB: true },
  { tag: 'A*B', transA: false, transB: false },
  { tag: 'A^T*B', transA: true, transB: false },
] as const;

/** Shapes: odd everything (rows of B share words), vec4-able, and a batch of rows over one shared weight. */
const SHAPES = [
  { M: 5, N: 7, K: 13, batch: 1 },
  { M: 9, N: 20, K: 12, batch: 1 },
  { M: 6, N: 12, K: 8, batch: 3 },
];

/** Uploads `values` rounded to `dtype` as half storage (the bits), returning the tensor and the rounded values. */
function uploadHalf(ctx: GpuContext, values: Float32Array, shape: readonly number[], dtype: HalfDtype, label: string) {
  const t = ctx.fromArray<HalfDtype>(toHalfBits(values, dtype), shape, { dtype, label });
  return { t, rounded: roundToWeightDtype(values, dtype) };
}

function result(name: string, family: string, got: ArrayLike<number>, want: ArrayLike<number>, K: number, ms: number) {
  const c = compareArrays(got, want, { atol: 1e-5 * Math.sqrt(K), rtol: 1e-5 });
  return { name, family, pass: c.pass, summary: c.summary, maxAbsError: c.maxAbsError, ms } satisfies CaseResult;
}

function matmulHalfCase(
  dtype: HalfDtype,
  variant: (typeof MATMUL_VARIANTS)[number],
  layout: (typeof LAYOUTS)[number],
  s: (typeof SHAPES)[number],
): KernelCase {
  const name = `matmul ${variant} ${layout.tag} ${s.batch > 1 ? `${s.batch}x` : ''}${s.M}x${s.N}x${s.K} ${dtype} B`;
  return {
    name,
    family: 'matmul',
    async run(ctx) {
      const rng = new Rng(seedOf(name));
      const lead = s.batch > 1 ? [s.batch] : [];
      const a = randomHost(rng, [...lead, ...(layout.transA ? [s.K, s.M] : [s.M, s.K])]);
      const b = randomHost(rng, layout.transB ? [s.N, s.K] : [s.K, s.N]);
      const out = host(new Float32Array(s.batch * s.M * s.N), [...lead, s.M, s.N]);
      const gA = ctx.fromArray(a.data, a.shape, { label: `${name}:a` });
      const gB = uploadHalf(ctx, b.data, b.shape, dtype, `${name}:b`);
      const gOut = ctx.tensor(out.shape, { label: `${name}:out` });
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      const opts = { transA: layout.transA, transB: layout.transB };
      matmul(rec, gOut, gA, gB.t, { ...opts, variant });
      rec.submit();
      const got = await ctx.read(gOut);
      const ms = performance.now() - t0;
      for (const t of [gA, gB.t, gOut]) t.destroy();
      matmulTwin(out, a, host(gB.rounded, b.shape), opts);
      const r = result(name, 'matmul', got, out.data, s.K, ms);
      return { ...r, summary: `${halfCodec(dtype, ctx.device)}: ${r.summary}` };
    },
  };
}

function embeddingHalfCase(dtype: HalfDtype, V: number, C: number, N: number): KernelCase {
  const name = `embedding forward ${dtype} table ${V}x${C} rows ${N}`;
  return {
    name,
    family: 'embedding',
    async run(ctx) {
      const rng = new Rng(seedOf(name));
      const table = randomHost(rng, [V, C], 3);
      const tokens = randomInts(rng, [N], V).data;
      const out = host(new Float32Array(N * C), [1, N, C]);
      const gTable = uploadHalf(ctx, table.data, [V, C], dtype, `${name}:table`);
      const gTokens = ctx.fromArray<'u32'>(tokens, [N], { dtype: 'u32', label: `${name}:tokens` });
      const gOut = ctx.tensor([1, N, C], { label: `${name}:out` });
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      embeddingForward(rec, gOut, gTable.t, gTokens);
      rec.submit();
      const got = await ctx.read(gOut);
      const ms = performance.now() - t0;
      for (const t of [gTable.t, gTokens, gOut]) t.destroy();
      embeddingTwin(out, host(gTable.rounded, [V, C]), tokens);
      // A gather moves stored values: bit-exact.
      const c = compareArrays(got, out.data, { atol: 0, rtol: 0 });
      const summary = `${halfCodec(dtype, ctx.device)}: ${c.summary}`;
      return { name, family: 'embedding', pass: c.pass, summary, maxAbsError: c.maxAbsError, ms };
    },
  };
}

/**
 * Values where rounding is easy to get wrong, put at the front of a pack case's input: ties for bf16 (1 + 2^-8,
 * 1 + 3 * 2^-8) and f16 (1 + 2^-11, 1 + 3 * 2^-11), f16's subnormals and the ones that round into its smallest normal
 * or to zero, f16's overflow (65519 stays finite, 65520 rounds to infinity), signed zeros, infinities, NaN, a value
 * past bf16's largest finite, and an f32 subnormal.
 */
const PACK_EDGES = [
  1 + 2 ** -8,
  1 + 3 * 2 ** -8,
  1 + 2 ** -11,
  1 + 3 * 2 ** -11,
  -(2 ** -24),
  3 * 2 ** -25,
  2 ** -25,
  2 ** -14 - 2 ** -25,
  6.1e-5,
  65519,
  65520,
  -70000,
  0,
  -0,
  Infinity,
  -Infinity,
  NaN,
  3.4e38,
  1e-40,
];

/** packHalf on `n` values (the edges first, then random ones of scale 3): the bits must match the twin's exactly. */
function packHalfCase(dtype: HalfDtype, n: number): KernelCase {
  const name = `packHalf ${dtype} n=${n}`;
  return {
    name,
    family: 'half-pack',
    async run(ctx) {
      const a = randomHost(new Rng(seedOf(name)), [n], 3);
      a.data.set(PACK_EDGES.slice(0, n));
      const gA = ctx.fromArray(a.data, [n], { label: `${name}:a` });
      const gOut = ctx.tensor<HalfDtype>([n], { dtype, label: `${name}:out` });
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      packHalf(rec, gOut, gA);
      rec.submit();
      const got = await ctx.read(gOut);
      const ms = performance.now() - t0;
      for (const t of [gA, gOut]) t.destroy();
      const want = new Uint16Array(n);
      packHalfTwin(want, a, dtype);
      const bad = [...want.keys()].filter((i) => got[i] !== want[i]);
      const summary =
        got.length !== n
          ? `read ${got.length} elements, want ${n}`
          : bad.length === 0
            ? `${n} bit patterns equal`
            : `${bad.length} of ${n} differ, first at ${bad[0]}: ${a.data[bad[0]]} -> 0x${got[bad[0]].toString(16)}, want 0x${want[bad[0]].toString(16)}`;
      return { name, family: 'half-pack', pass: got.length === n && bad.length === 0, summary, maxAbsError: 0, ms };
    },
  };
}

/**
 * unpackHalf on `n` half bit patterns (counting up from 0, so n = 65536 is every pattern: subnormals, infinities, NaNs
 * and both zeros; fewer: the first n, then a ragged last word): each f32 must be the twin's bit for bit, NaN for NaN.
 */
function unpackHalfCase(dtype: HalfDtype, n: number): KernelCase {
  const name = `unpackHalf ${dtype} n=${n}`;
  return {
    name,
    family: 'half-pack',
    async run(ctx) {
      const bits = Uint16Array.from({ length: n }, (_, i) => i & 0xffff);
      const gA = ctx.fromArray<HalfDtype>(bits, [n], { dtype, label: `${name}:a` });
      const gOut = ctx.tensor([n], { label: `${name}:out` });
      const t0 = performance.now();
      const rec = ctx.recorder(name);
      unpackHalf(rec, gOut, gA);
      rec.submit();
      const read = (await ctx.read(gOut)) as Float32Array;
      const got = new Uint32Array(read.buffer, read.byteOffset, read.length);
      const ms = performance.now() - t0;
      for (const t of [gA, gOut]) t.destroy();
      const want = new Float32Array(n);
      unpackHalfTwin(want, bits, dtype);
      const wantBits = new Uint32Array(want.buffer);
      const same = (i: number) => got[i] === wantBits[i] || (Number.isNaN(want[i]) && Number.isNaN(read[i]));
      const bad = [...want.keys()].filter((i) => !same(i));
      const summary =
        got.length !== n
          ? `read ${got.length} values, want ${n}`
          : bad.length === 0
            ? `${n} values equal bit for bit`
            : `${bad.length} of ${n} differ, first at 0x${bits[bad[0]].toString(16)}: 0x${got[bad[0]].toString(16)}, want 0x${wantBits[bad[0]].toString(16)}`;
      return { name, family: 'half-pack', pass: got.length === n && bad.length === 0, summary, maxAbsError: 0, ms };
    },
  };
}

/**
 * Which variants each dtype runs, to keep SwiftShader's compile time down (seconds per module and layout for 'tiled'
 * and the larger tiles): bf16 every variant (both 'tiled' in the weights' two layouts); f16 the variants that read B one
 * element at a time (naive, blocked) and as vec4 (vec4, wide), the two loaders every other variant calls.
 */
function covered(dtype: HalfDtype, variant: (typeof MATMUL_VARIANTS)[number], transA: boolean): boolean {
  if (dtype === 'f16') return ['naive', 'blocked', 'vec4', 'wide'].includes(variant);
  return !((variant === 'tiled' || variant === 'tiled128') && transA);
}

/** Every half-weight case, both half dtypes. */
export function halfCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  for (const dtype of HALF_DTYPES) {
    for (const variant of MATMUL_VARIANTS)
      for (const layout of LAYOUTS)
        for (const s of SHAPES)
          if (matmulVariantSupports(variant, { ...s, ...layout }) && covered(dtype, variant, layout.transA))
            cases.push(matmulHalfCase(dtype, variant, layout, s));
    // Odd C: a row of the table starts in the middle of a word every other row.
    cases.push(embeddingHalfCase(dtype, 11, 7, 19), embeddingHalfCase(dtype, 5, 8, 6));
    // One element (a lone low half), the edges alone (odd), and a ragged last workgroup of words.
    for (const n of [1, PACK_EDGES.length, 1031]) cases.push(packHalfCase(dtype, n));
    // A lone low half, a ragged last workgroup of words, and every half bit pattern.
    for (const n of [1, 1031, 65536]) cases.push(unpackHalfCase(dtype, n));
  }
  return cases;
}
