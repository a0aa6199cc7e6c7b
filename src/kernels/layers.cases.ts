// GPU-vs-twin cases of the transformer-layer kernel families: embedding, rmsnorm, rope, swiglu. Awkward shapes
// (rows 1, 7, 65, plus 4096 for long column sums and token chains; C 1, 3, 17, 64, 65; V 1, 37; head dims 2, 6, 16;
// NH 1, 4), random inputs (never zeros), random initial contents in every output so overwrite-vs-accumulate is
// checked too. rmsnorm also runs at both sides of each lane edge of its row layout (rows.ts, rowLayout: C =
// 1023/1024, 4095/4096, 16383/16384), each with a partial last workgroup.

import type { Recorder, Tensor } from '../gpu';
import * as refEmbedding from '../reference/embedding';
import * as refRmsnorm from '../reference/rmsnorm';
import * as refRope from '../reference/rope';
import * as refSwiglu from '../reference/swiglu';
import type { Tolerance } from '../reference/compare';
import type { Rng } from '../core/random';
import { host, type HostTensor } from '../core/host-tensor';
import * as embedding from './embedding';
import * as rmsnorm from './rmsnorm';
import * as rope from './rope';
import { rowEdgeShapes, rowLayout } from './rows';
import * as swiglu from './swiglu';
import { gpuTwinCase, randomHost, randomInts, type HostInput, type KernelCase } from './verify';

const EXACT: Tolerance = { atol: 0, rtol: 0 };
const TOL: Tolerance = { atol: 1e-5, rtol: 1e-5 };

const f32 = (x: HostInput) => x as HostTensor<Float32Array>;
const u32 = (x: HostInput) => x.data as Uint32Array;
const gpuU32 = (t: Tensor) => t as Tensor<'u32'>;

/** B*T rows as (B, T): 1, 7 and 65 rows in the cases. */
const tagRows = ([B, T]: [number, number]) => `B=${B} T=${T}`;

/** n token ids drawn from `distinct` fixed ids in [0, V): many tokens hit the same rows. */
function repeatedTokens(
  rng: Rng,
  n: number,
  V: number,
  distinct: number,
): { data: Uint32Array; shape: readonly number[] } {
  const ids = randomInts(rng, [distinct], V).data;
  const data = new Uint32Array(n);
  for (let i = 0; i < n; i++) data[i] = ids[rng.int(distinct)];
  return { data, shape: [n] };
}

function embeddingCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const forwardShapes: { rows: [number, number]; C: number; V: number }[] = [
    { rows: [1, 1], C: 64, V: 37 },
    { rows: [1, 7], C: 3, V: 1 },
    { rows: [1, 7], C: 1, V: 37 },
    { rows: [5, 13], C: 17, V: 37 },
    { rows: [5, 13], C: 64, V: 37 },
  ];
  for (const { rows, C, V } of forwardShapes) {
    const [B, T] = rows;
    cases.push(
      gpuTwinCase({
        name: `embeddingForward ${tagRows(rows)} C=${C} V=${V}`,
        family: 'embedding',
        inputs: (rng) => [randomHost(rng, [V, C]), randomInts(rng, [B * T], V)],
        outputs: [{ shape: [B, T, C], random: true }],
        gpu: (rec, [out], [table, tokens]) => embedding.embeddingForward(rec, out, table, gpuU32(tokens)),
        twin: ([out], [table, tokens]) => refEmbedding.embeddingForward(out, f32(table), u32(tokens)),
        tol: EXACT,
      }),
    );
  }
  // Backward: dTable starts random (accumulation), tokens repeat; bit-identical to the twin by construction.
  const backwardShapes: { rows: [number, number]; C: number; V: number; distinct: number; tag: string }[] = [
    { rows: [1, 1], C: 17, V: 37, distinct: 1, tag: '' },
    { rows: [1, 7], C: 3, V: 37, distinct: 7, tag: '' },
    { rows: [5, 13], C: 17, V: 1, distinct: 1, tag: ' all tokens 0' },
    { rows: [5, 13], C: 64, V: 37, distinct: 4, tag: ' 4 distinct tokens' },
    { rows: [5, 13], C: 1, V: 37, distinct: 37, tag: '' },
    { rows: [5, 13], C: 65, V: 37, distinct: 1, tag: ' one token' },
    { rows: [8, 512], C: 3, V: 37, distinct: 37, tag: ' long chains' },
  ];
  for (const { rows, C, V, distinct, tag } of backwardShapes) {
    const [B, T] = rows;
    cases.push(
      gpuTwinCase({
        name: `embeddingBackward ${tagRows(rows)} C=${C} V=${V}${tag}`,
        family: 'embedding',
        inputs: (rng) => [randomHost(rng, [B, T, C]), repeatedTokens(rng, B * T, V, distinct)],
        outputs: [{ shape: [V, C], random: true }],
        gpu: (rec, [dTable], [dOut, tokens]) => embedding.embeddingBackward(rec, dTable, dOut, gpuU32(tokens)),
        twin: ([dTable], [dOut, tokens]) => refEmbedding.embeddingBackward(dTable, f32(dOut), u32(tokens)),
        tol: EXACT,
      }),
    );
  }
  return cases;
}

function rmsnormCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const shapes: { rows: [number, number]; C: number; eps: number; edge?: boolean }[] = [
    { rows: [1, 1], C: 64, eps: 1e-5 },
    { rows: [1, 7], C: 17, eps: 1e-6 },
    { rows: [1, 7], C: 1, eps: 1e-5 },
    { rows: [5, 13], C: 3, eps: 1e-5 },
    { rows: [5, 13], C: 64, eps: 1e-6 },
    { rows: [8, 512], C: 17, eps: 1e-5 }, // dWeight sums 4096 rows
    // Qwen3's q/k norm: rows are (B*T*heads) of head dim (B=3, T=7, 16 query heads of 128; 1 x 5 x 8 kv heads).
    { rows: [3, 7 * 16], C: 128, eps: 1e-6 },
    { rows: [1, 5 * 8], C: 128, eps: 1e-6 },
    // Lane edges: (1, N) rows of C channels, N one row past a full workgroup of the layout.
    ...rowEdgeShapes().map(([N, C]) => ({ rows: [1, N] as [number, number], C, eps: 1e-5, edge: true })),
  ];
  for (const { rows, C, eps, edge } of shapes) {
    const [B, T] = rows;
    const N = B * T;
    const { LANES } = rowLayout(C);
    const tagLayout = edge ? ` (${LANES} lane${LANES > 1 ? 's' : ''} per row)` : '';
    cases.push(
      gpuTwinCase({
        name: `rmsnormForward ${tagRows(rows)} C=${C} eps=${eps}${tagLayout}`,
        family: 'rmsnorm',
        inputs: (rng) => [randomHost(rng, [B, T, C], 2), randomHost(rng, [C])],
        outputs: [
          { shape: [B, T, C], random: true },
          { shape: [N], random: true },
        ],
        gpu: (rec, [out, rstd], [x, w]) => rmsnorm.rmsnormForward(rec, out, rstd, x, w, { eps }),
        twin: ([out, rstd], [x, w]) => refRmsnorm.rmsnormForward(out, rstd, f32(x), f32(w), { eps }),
        tol: TOL,
      }),
    );
    for (const accumulate of [false, true]) {
      if (C === 1 && accumulate) continue;
      cases.push(
        gpuTwinCase({
          name: `rmsnormBackward ${tagRows(rows)} C=${C} accumulate=${accumulate}${tagLayout}`,
          family: 'rmsnorm',
          // dOut, x, weight, and rstd from the twin's forward of x (as the backward receives it).
          inputs: (rng) => {
            const dOut = randomHost(rng, [B, T, C]);
            const x = randomHost(rng, [B, T, C], 2);
            const w = randomHost(rng, [C]);
            const rstd = host(new Float32Array(N), [N]);
            refRmsnorm.rmsnormForward(host(new Float32Array(N * C), [B, T, C]), rstd, x, w, { eps });
            return [dOut, x, w, rstd];
          },
          // dx starts random: overwritten without accumulate, added to with it; dWeight is always added to.
          outputs: [
            { shape: [B, T, C], random: true },
            { shape: [C], random: true },
          ],
          gpu: (rec, [dx, dW], [dOut, x, w, rstd]) =>
            rmsnorm.rmsnormBackward(rec, dx, dW, dOut, x, w, rstd, { accumulate }),
          twin: ([dx, dW], [dOut, x, w, rstd]) =>
            refRmsnorm.rmsnormBackward(dx, dW, f32(dOut), f32(x), f32(w), f32(rstd), { accumulate }),
          tol: TOL,
        }),
      );
    }
  }
  return cases;
}

interface RopeCase {
  shape: [number, number, number, number]; // (B, T, H, HD)
  theta?: number;
  posOffset?: number;
  /** Explicit positions, random in [0, maxPos). */
  maxPos?: number;
  inPlace?: boolean;
  /** Llama 3 frequency scaling (kernel and twin read the same host-built frequencies). */
  scaling?: refRope.RopeOptions['scaling'];
}

/** Llama 3.2's scaling (factor 32, bands at 8192 / 4 and 8192 / 1): at HD 64 and theta 500000 all three bands hold pairs. */
const LLAMA32_SCALING = {
  ropeType: 'llama3',
  factor: 32,
  lowFreqFactor: 1,
  highFreqFactor: 4,
  originalMaxPositions: 8192,
} as const;

function ropeCases(): KernelCase[] {
  const shapes: RopeCase[] = [
    { shape: [1, 1, 1, 2] },
    { shape: [1, 1, 4, 16], posOffset: 5 },
    { shape: [1, 7, 4, 6], posOffset: 5 },
    { shape: [1, 7, 1, 2], maxPos: 50 },
    { shape: [5, 13, 1, 16] },
    { shape: [5, 13, 4, 6], maxPos: 200 },
    { shape: [5, 13, 4, 16], posOffset: 5, inPlace: true },
    { shape: [1, 7, 4, 16], maxPos: 100, inPlace: true },
    { shape: [5, 13, 1, 16], posOffset: 4000, theta: 500000 },
    { shape: [1, 7, 4, 16], maxPos: 1_000_000 },
    { shape: [1, 65, 1, 6], maxPos: 2 ** 24 },
    { shape: [1, 7, 3, 64], maxPos: 131_072, theta: 500_000, scaling: LLAMA32_SCALING },
    { shape: [5, 13, 2, 64], posOffset: 9000, theta: 500_000, scaling: LLAMA32_SCALING, inPlace: true },
    { shape: [1, 3, 2, 128], posOffset: 3, theta: 1_000_000, scaling: { ...LLAMA32_SCALING, factor: 8 } },
  ];
  const cases: KernelCase[] = [];
  for (const dir of ['forward', 'backward'] as const) {
    for (const s of shapes) {
      const [B, T, H, HD] = s.shape;
      const theta = s.theta ?? 10000;
      const tag =
        `${dir === 'forward' ? 'ropeForward' : 'ropeBackward'} B=${B} T=${T} H=${H} HD=${HD}` +
        (s.theta ? ` theta=${theta}` : '') +
        (s.maxPos ? ` positions<${s.maxPos}` : ` posOffset=${s.posOffset ?? 0}`) +
        (s.inPlace ? ' in place' : '') +
        (s.scaling ? ` llama3 x${s.scaling.factor}` : '');
      const gpuFn = dir === 'forward' ? rope.ropeForward : rope.ropeBackward;
      const twinFn = dir === 'forward' ? refRope.ropeForward : refRope.ropeBackward;
      cases.push(
        gpuTwinCase({
          name: tag,
          family: 'rope',
          inputs: (rng) => {
            const ins: HostInput[] = [randomHost(rng, s.shape)];
            if (s.maxPos) ins.push(randomInts(rng, [B * T], s.maxPos));
            return ins;
          },
          outputs: [{ shape: s.shape, random: true }],
          gpu: (rec: Recorder, [out], [x, positions]) => {
            const opts = {
              theta,
              scaling: s.scaling,
              posOffset: s.posOffset,
              positions: positions ? gpuU32(positions) : undefined,
            };
            if (s.inPlace) {
              rec.copy(out, x);
              gpuFn(rec, out, out, opts);
            } else {
              gpuFn(rec, out, x, opts);
            }
          },
          twin: ([out], [x, positions]) =>
            twinFn(out, f32(x), {
              theta,
              scaling: s.scaling,
              posOffset: s.posOffset,
              positions: positions ? u32(positions) : undefined,
            }),
          tol: TOL,
        }),
      );
    }
  }
  return cases;
}

function swigluCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const shapes: { shape: number[]; gateScale: number }[] = [
    { shape: [1, 1, 1], gateScale: 3 },
    { shape: [1, 7, 17], gateScale: 3 },
    { shape: [5, 13, 64], gateScale: 3 },
    { shape: [7, 65], gateScale: 120 }, // sigmoid tails: exp(-g) overflows to inf for g < -88
    { shape: [4, 65], gateScale: 120 }, // the same, four values per invocation (n divides by 4, as 5x13x64)
  ];
  for (const { shape, gateScale } of shapes) {
    const tag = `${shape.join('x')} gate scale ${gateScale}`;
    cases.push(
      gpuTwinCase({
        name: `swigluForward ${tag}`,
        family: 'swiglu',
        inputs: (rng) => [randomHost(rng, shape, gateScale), randomHost(rng, shape)],
        outputs: [{ shape, random: true }],
        gpu: (rec, [out], [gate, up]) => swiglu.swigluForward(rec, out, gate, up),
        twin: ([out], [gate, up]) => refSwiglu.swigluForward(out, f32(gate), f32(up)),
        tol: TOL,
      }),
      gpuTwinCase({
        name: `swigluBackward ${tag}`,
        family: 'swiglu',
        inputs: (rng) => [randomHost(rng, shape), randomHost(rng, shape, gateScale), randomHost(rng, shape)],
        outputs: [
          { shape, random: true },
          { shape, random: true },
        ],
        gpu: (rec, [dGate, dUp], [dOut, gate, up]) => swiglu.swigluBackward(rec, dGate, dUp, dOut, gate, up),
        twin: ([dGate, dUp], [dOut, gate, up]) => refSwiglu.swigluBackward(dGate, dUp, f32(dOut), f32(gate), f32(up)),
        tol: TOL,
      }),
    );
  }
  return cases;
}

/** Every case of the layer families, in a stable order. */
export function layerCases(): KernelCase[] {
  return [...embeddingCases(), ...rmsnormCases(), ...ropeCases(), ...swigluCases()];
}
