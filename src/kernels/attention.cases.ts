// Verification cases of shaders/attention.wgsl against src/reference/attention.ts: forward (out and lse) and
// backward (dq, dk, dv) at awkward shapes: single element, GQA, multi-query, T not a multiple of the workgroup,
// KV-cache decode (T=1) and prefix (T < Tk), a custom scale, large scores, left padding (kvStart, with pad
// queries that see no key) and keys in a larger cache buffer (Tcap > Tk). Each shape on every kernel variant
// that takes its head dim (attentionVariants: lanes, and the rows path in both its forms), on whatever driver runs.

import type { Tensor } from '../gpu';
import type { Tolerance } from '../reference/compare';
import * as ref from '../reference/attention';
import { host, type HostTensor } from '../core/host-tensor';
import * as gpu from './attention';
import { gpuTwinCase, randomHost, type HostInput, type KernelCase } from './verify';

interface AttentionShape {
  B: number;
  T: number;
  NH: number;
  NKV: number;
  HD: number;
  /** Valid key positions (default T); queries are the last T of them. */
  Tk?: number;
  /** Key positions allocated per sequence in k and v (a KV cache's capacity; default Tk): passed as keys = Tk. */
  Tcap?: number;
  /** Per batch row, the first visible key (left padding); passed as a u32 input when given. */
  kvStart?: number[];
  /** Score scale (default 1/sqrt(HD)). */
  scale?: number;
  /** Uniform range of q and k (default 2: scaled scores with a standard deviation of about 1.3). */
  qkScale?: number;
  tag?: string;
  /** Tolerance when the default does not apply (say why beside the shape). */
  tol?: Tolerance;
  /**
   * The forward only: a decode cursor holding this value (src/kernels/decode.ts), bound as a u32 input after
   * kvStart; the kernel's parameters then count Tk less it and the kernel adds its GPU value back.
   */
  cursor?: number;
}

export const ATTENTION_SHAPES: AttentionShape[] = [
  { B: 1, T: 1, NH: 1, NKV: 1, HD: 2 },
  { B: 2, T: 5, NH: 4, NKV: 2, HD: 6 },
  { B: 1, T: 17, NH: 4, NKV: 1, HD: 8, tag: 'multi-query' },
  { B: 2, T: 33, NH: 3, NKV: 3, HD: 4 },
  { B: 2, T: 1, Tk: 19, NH: 4, NKV: 2, HD: 8, tag: 'decode' },
  { B: 1, T: 5, Tk: 12, NH: 2, NKV: 1, HD: 6, tag: 'prefix' },
  { B: 1, T: 1, Tk: 300, NH: 2, NKV: 1, HD: 64, tag: 'decode, long cache' },
  { B: 1, T: 9, NH: 2, NKV: 2, HD: 5, scale: 0.7, tag: 'scale 0.7' },
  // Scaled scores of magnitude ~100: an f32 score carries an absolute error of ~1e-5 (its ulp at 64..128 is
  // 7.6e-6; the twin scores in f64), so every probability a relative ~1e-5 and gradients summing O(1) of them
  // ~3e-5 absolute. The forward passes at the default tolerance; the wider one is for the backward.
  { B: 1, T: 40, NH: 2, NKV: 1, HD: 8, qkScale: 12, tag: 'large scores', tol: { atol: 1e-4, rtol: 1e-4 } },
  { B: 1, T: 3, Tk: 7, NH: 2, NKV: 1, HD: 70, tag: 'two dim blocks' },
  { B: 1, T: 2, Tk: 600, NH: 2, NKV: 1, HD: 70, tag: '64 lanes, two dim blocks' },
  { B: 2, T: 64, NH: 4, NKV: 2, HD: 16 },
  // Left padding: row 1 has 3 pad queries, row 2 has 8 of 9 (each sees no key: out = lse = 0, no gradient).
  { B: 3, T: 9, NH: 4, NKV: 2, HD: 6, kvStart: [0, 3, 8], tag: 'left-padded' },
  // A decode step against a KV cache of capacity 20 holding 13 valid positions, left-padded prompts.
  { B: 3, T: 1, Tk: 13, Tcap: 20, NH: 4, NKV: 2, HD: 8, kvStart: [0, 4, 12], tag: 'decode from cache, left-padded' },
  // A prefill: the prompts' k/v written into a larger cache buffer, the tensors passed cache-shaped.
  { B: 2, T: 5, Tk: 5, Tcap: 16, NH: 4, NKV: 2, HD: 6, tag: 'prefill into cache' },
  { B: 2, T: 5, Tk: 5, Tcap: 16, NH: 4, NKV: 2, HD: 6, kvStart: [2, 0], tag: 'prefill into cache, left-padded' },
  { B: 1, T: 3, Tk: 9, Tcap: 12, NH: 2, NKV: 1, HD: 4, tag: 'prefix in cache' },
  // 16 lanes per row: row 1's 10 visible keys leave 6 lanes empty; row 2's query is a pad query (no lane sees a key).
  {
    B: 3,
    T: 1,
    Tk: 300,
    Tcap: 320,
    NH: 2,
    NKV: 1,
    HD: 64,
    kvStart: [0, 290, 300],
    tag: 'decode, long cache, left-padded',
  },
  // The presets' head dims (nano 12, small 32, base 64) with ragged row counts, for both paths.
  { B: 3, T: 21, NH: 4, NKV: 2, HD: 12, kvStart: [0, 5, 20], tag: 'nano head dim, left-padded' },
  { B: 2, T: 7, Tk: 11, Tcap: 13, NH: 8, NKV: 4, HD: 32, kvStart: [1, 0], tag: 'small head dim, prefix in cache' },
  { B: 1, T: 13, NH: 6, NKV: 2, HD: 64, tag: 'base head dim, groups of 3' },
  // Qwen3's head dim: the rows path's looped form only (one row's registers would be 32 vec4 per array).
  { B: 2, T: 9, NH: 4, NKV: 2, HD: 128, kvStart: [0, 3], tag: 'Qwen3 head dim, left-padded' },
  { B: 1, T: 1, Tk: 11, Tcap: 12, NH: 2, NKV: 1, HD: 128, tag: 'Qwen3 head dim, decode from cache' },
  { B: 3, T: 1, Tk: 13, Tcap: 20, NH: 4, NKV: 2, HD: 8, kvStart: [0, 4, 12], cursor: 6, tag: 'decode, cursor' },
  { B: 2, T: 1, Tk: 19, Tcap: 19, NH: 9, NKV: 3, HD: 64, kvStart: [3, 0], cursor: 18, tag: 'decode, cursor' },
];

/** A kernel variant a case runs on: the path and, for 'rows', its form. */
export interface AttentionVariant {
  path: gpu.AttentionPath;
  rowsForm?: gpu.RowsForm;
}

/** Every kernel variant that takes head dim HD: lanes; rows in its registers form (HD <= 64) and its looped form. */
export function attentionVariants(HD: number): AttentionVariant[] {
  if (!gpu.rowsPathSupports(HD)) return [{ path: 'lanes' }];
  const registers = Math.ceil(HD / 4) <= gpu.ROWS_MAX_REGISTER_VEC4;
  return [
    { path: 'lanes' },
    ...(registers ? [{ path: 'rows' as const, rowsForm: 'registers' as const }] : []),
    { path: 'rows', rowsForm: 'looped' },
  ];
}

/** The variant as a case name shows it: [lanes], [rows], [rows looped]. */
export function variantLabel(v: AttentionVariant): string {
  return v.rowsForm === 'looped' ? `${v.path} looped` : v.path;
}

// Outputs are f32 sums of up to Tk terms against the twin's f64; a few ulps of exp() per term on top.
const TOL: Tolerance = { atol: 1e-5, rtol: 1e-4 };

function label(s: AttentionShape): string {
  const tk = s.Tk !== undefined && s.Tk !== s.T ? ` Tk=${s.Tk}` : '';
  const cap = s.Tcap !== undefined ? ` Tcap=${s.Tcap}` : '';
  const start = s.kvStart ? ` kvStart=[${s.kvStart.join(',')}]` : '';
  return `B=${s.B} T=${s.T}${tk}${cap} NH=${s.NH} NKV=${s.NKV} HD=${s.HD}${start}${s.tag ? ` (${s.tag})` : ''}`;
}

function shapes(s: AttentionShape) {
  const Tk = s.Tk ?? s.T;
  return { q: [s.B, s.T, s.NH, s.HD], kv: [s.B, s.Tcap ?? Tk, s.NKV, s.HD], lse: [s.B, s.NH, s.T] };
}

/** kvStart as the last input (u32), when the shape has one. */
function startInput(s: AttentionShape): HostInput[] {
  return s.kvStart ? [{ data: Uint32Array.from(s.kvStart), shape: [s.B] }] : [];
}

/** The twin's options; kvStart comes from the inputs (the last one, when the shape has it). */
function twinOpts(s: AttentionShape, ins: HostInput[]): ref.AttentionOptions {
  return {
    ...(s.scale === undefined ? {} : { scale: s.scale }),
    ...(s.Tcap === undefined ? {} : { keys: s.Tk ?? s.T }),
    ...(s.kvStart ? { kvStart: ins[ins.length - 1].data as Uint32Array } : {}),
  };
}

/** The forward's cursor input (u32, one element), after kvStart, when the shape has one. */
function cursorInput(s: AttentionShape): HostInput[] {
  return s.cursor === undefined ? [] : [{ data: Uint32Array.of(s.cursor), shape: [1] }];
}

/**
 * The wrapper's options on one kernel variant; kvStart is the last GPU input when the shape has one, or the one
 * before the cursor (the forward's last input) when `withCursor`.
 */
function gpuOpts(
  s: AttentionShape,
  ins: Tensor[],
  variant: AttentionVariant,
  withCursor = false,
): gpu.AttentionOptions {
  const cursor = withCursor && s.cursor !== undefined;
  const last = ins.length - 1;
  return {
    ...variant,
    ...(s.scale === undefined ? {} : { scale: s.scale }),
    ...(s.Tcap === undefined ? {} : { keys: s.Tk ?? s.T }),
    ...(s.kvStart ? { kvStart: ins[cursor ? last - 1 : last] as Tensor<'u32'> } : {}),
    ...(cursor ? { cursor: { tensor: ins[last] as Tensor<'u32'>, value: s.cursor ?? 0 } } : {}),
  };
}

function forwardCase(s: AttentionShape, variant: AttentionVariant): KernelCase {
  const sh = shapes(s);
  const qk = s.qkScale ?? 2;
  return gpuTwinCase({
    name: `attentionForward [${variantLabel(variant)}] ${label(s)}`,
    family: 'attention',
    inputs: (rng) => [
      randomHost(rng, sh.q, qk),
      randomHost(rng, sh.kv, qk),
      randomHost(rng, sh.kv),
      ...startInput(s),
      ...cursorInput(s),
    ],
    // Random starting values: the kernel must overwrite every element.
    outputs: [
      { shape: sh.q, random: true },
      { shape: sh.lse, random: true },
    ],
    gpu: (rec, [out, lse], ins) =>
      gpu.attentionForward(rec, out, lse, ins[0], ins[1], ins[2], gpuOpts(s, ins, variant, true)),
    twin: ([out, lse], ins) => {
      const [q, k, v] = ins as HostTensor[];
      ref.attentionForward(out, lse, q, k, v, twinOpts(s, s.cursor === undefined ? ins : ins.slice(0, -1)));
    },
    tol: s.tol ?? TOL,
  });
}

function backwardCase(s: AttentionShape, variant: AttentionVariant): KernelCase {
  const sh = shapes(s);
  const qk = s.qkScale ?? 2;
  return gpuTwinCase({
    name: `attentionBackward [${variantLabel(variant)}] ${label(s)}`,
    family: 'attention',
    // dOut, q, k, v random; out and lse from the twin's forward, as the backward sees them in training.
    inputs: (rng) => {
      const dOut = randomHost(rng, sh.q);
      const q = randomHost(rng, sh.q, qk);
      const k = randomHost(rng, sh.kv, qk);
      const v = randomHost(rng, sh.kv);
      const out = host(new Float32Array(dOut.data.length), sh.q);
      const lse = host(new Float32Array(s.B * s.NH * s.T), sh.lse);
      const start = startInput(s);
      ref.attentionForward(out, lse, q, k, v, twinOpts(s, start));
      return [dOut, q, k, v, out, lse, ...start];
    },
    // dk and dv start random everywhere, so the zeros at masked keys and past Tk are proven written.
    outputs: [
      { shape: sh.q, random: true },
      { shape: sh.kv, random: true },
      { shape: sh.kv, random: true },
    ],
    gpu: (rec, [dq, dk, dv], ins) => {
      const [dOut, q, k, v, out, lse] = ins;
      gpu.attentionBackward(rec, dq, dk, dv, dOut, q, k, v, out, lse, gpuOpts(s, ins, variant));
    },
    twin: ([dq, dk, dv], ins) => {
      const [dOut, q, k, v, out, lse] = ins as HostTensor[];
      ref.attentionBackward(dq, dk, dv, dOut, q, k, v, out, lse, twinOpts(s, ins));
    },
    tol: s.tol ?? TOL,
  });
}

/** Forward and backward cases for every shape in ATTENTION_SHAPES, on each kernel variant that takes the shape. */
export function attentionCases(): KernelCase[] {
  return ATTENTION_SHAPES.flatMap((s) =>
    attentionVariants(s.HD).flatMap((v) =>
      s.cursor === undefined ? [forwardCase(s, v), backwardCase(s, v)] : [forwardCase(s, v)],
    ),
  );
}
