// The list of kernel verification cases (each runs one WGSL kernel on random inputs at an awkward shape and
// compares it with its CPU twin), with the cases of the first families. Families with more elaborate cases keep
// them in <family>.cases.ts beside their wrapper; this file gathers them all.

import type { Recorder, Tensor } from '../gpu';
import * as refElementwise from '../reference/elementwise';
import { matmul as matmulTwin } from '../reference/matmul';
import * as refReduce from '../reference/reduce';
import { F32_EPS } from '../reference/compare';
import * as refSoftmax from '../reference/softmax';
import { host, type HostTensor } from '../core/host-tensor';
import * as elementwise from './elementwise';
import { MATMUL_VARIANTS, matmul, matmulVariantSupports } from './matmul';
import { halfCases } from './half.cases';
import * as reduce from './reduce';
import { REAL_VOCABS, rowEdgeShapes } from './rows';
import * as softmax from './softmax';
import { attentionCases } from './attention.cases';
import { biasCases } from './bias.cases';
import { projectionCases } from './projection.cases';
import { ropeDecodeKvCases } from './rope-decode-kv.cases';
import { decodeCases } from './decode.cases';
import { headCases } from './head.cases';
import { klCases } from './kl.cases';
import { layerCases } from './layers.cases';
import { objectiveCases } from './objective.cases';
import { bradleyTerryCases } from './bradley-terry.cases';
import { valueCases } from './value.cases';
import { weightStatsCases } from './weight-stats.cases';
import { simpleCase, type KernelCase } from './verify';

export { runKernelCases, type CaseResult, type KernelCase } from './verify';

const MATMUL_SHAPES: { M: number; N: number; K: number; batch: number; shareB?: boolean }[] = [
  { M: 1, N: 1, K: 1, batch: 1 },
  { M: 3, N: 17, K: 5, batch: 1 },
  { M: 17, N: 65, K: 33, batch: 2, shareB: true },
  { M: 65, N: 3, K: 129, batch: 3 },
  // Shapes the 'vec4' variant takes (its contiguous dimensions divide by 4), with ragged M or N elsewhere.
  { M: 4, N: 4, K: 4, batch: 1 },
  { M: 17, N: 68, K: 36, batch: 2, shareB: true },
  { M: 20, N: 12, K: 65, batch: 3 },
  // More than one 64x64 block of C per workgroup of 'wide' (8x8 per invocation) and 'tiled', and more than one
  // 128-column block of 'square' (16x16), ragged in both.
  { M: 76, N: 136, K: 20, batch: 1 },
  // More than one 128-row block of C per workgroup of 'tall' (16x8 per invocation), ragged rows, batched.
  { M: 140, N: 20, K: 12, batch: 2 },
  // Columns that divide by 16 ('square' takes only those): over one 128-column block, ragged rows (and over one
  // 128x128 block of 'tiled128' both ways, K ragged against its slices of 8); and batched.
  { M: 140, N: 144, K: 20, batch: 1 },
  { M: 36, N: 32, K: 40, batch: 2 },
  // A small output over a long K (the weight gradients' shape), A ragged (scalar A loads on A^T*B) or not.
  { M: 20, N: 12, K: 600, batch: 1 },
  { M: 18, N: 12, K: 601, batch: 1 },
];

const LAYOUTS = [
  { tag: 'A*B', transA: false, transB: false },
  { tag: 'A*B^T', transA: false, transB: true },
  { tag: 'A^T*B', transA: true, transB: false },
] as const;

function matmulCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  for (const variant of MATMUL_VARIANTS) {
    for (const layout of LAYOUTS) {
      for (const s of MATMUL_SHAPES) {
        // A variant is only tested on shapes it runs itself (on others the wrapper falls back to 'blocked').
        if (!matmulVariantSupports(variant, { ...s, ...layout })) continue;
        const lead = (shape: number[], batched: boolean) => (s.batch > 1 && batched ? [s.batch, ...shape] : shape);
        const aShape = lead(layout.transA ? [s.K, s.M] : [s.M, s.K], true);
        const bShape = lead(layout.transB ? [s.N, s.K] : [s.K, s.N], !s.shareB);
        const opts = { transA: layout.transA, transB: layout.transB };
        cases.push(
          simpleCase({
            name: `matmul ${variant} ${layout.tag} ${s.batch > 1 ? `${s.batch}x` : ''}${s.M}x${s.N}x${s.K}${s.shareB ? ' shared B' : ''}`,
            family: 'matmul',
            out: lead([s.M, s.N], true),
            inputs: [{ shape: aShape }, { shape: bShape }],
            gpu: (rec, out, a, b) => matmul(rec, out, a, b, { ...opts, variant }),
            twin: (out, a, b) => matmulTwin(out, a, b, opts),
            tol: { atol: 1e-5 * Math.sqrt(s.K), rtol: 1e-5 },
          }),
        );
      }
    }
    const accTN = { transA: true, accumulate: true, alpha: -0.75 };
    if (matmulVariantSupports(variant, { M: 18, N: 12, K: 601, ...accTN })) {
      // The weight gradients' form: dW += alpha dY^T X over a long K, A ragged.
      cases.push(
        simpleCase({
          name: `matmul ${variant} accumulate alpha=-0.75 A^T*B 18x12x601`,
          family: 'matmul',
          out: [18, 12],
          inputs: [{ shape: [601, 18] }, { shape: [601, 12] }],
          randomOutput: true,
          gpu: (rec, out, a, b) => matmul(rec, out, a, b, { ...accTN, variant }),
          twin: (out, a, b) => matmulTwin(out, a, b, accTN),
          tol: { atol: 1e-5 * Math.sqrt(601), rtol: 1e-5 },
        }),
      );
    }
    const acc = { transB: true, accumulate: true, alpha: -0.75 };
    cases.push(
      simpleCase({
        name: `matmul ${variant} accumulate alpha=-0.75 A*B^T 2x31x9x16`,
        family: 'matmul',
        out: [2, 31, 9],
        inputs: [{ shape: [2, 31, 16] }, { shape: [2, 9, 16] }],
        randomOutput: true,
        gpu: (rec, out, a, b) => matmul(rec, out, a, b, { ...acc, variant }),
        twin: (out, a, b) => matmulTwin(out, a, b, acc),
        tol: { atol: 1e-5, rtol: 1e-5 },
      }),
    );
  }
  return cases;
}

/**
 * The LM head at Qwen2.5's vocabulary: logits = nf E^T (3 rows), its input gradient dLogits E (a reduction over
 * 151,936) and the weight gradient dE += dLogits^T nf (151,936 output rows): the dispatch grids at a real
 * vocabulary's size. Every variant but 'naive' and the two 'tiled', whose grids follow the same formula and whose
 * loops the shapes above cover: on SwiftShader they take 0.5-3 s ('naive') and 4-8 s ('tiled') per product at 3 rows.
 */
function lmHeadCases(): KernelCase[] {
  const R = 3;
  const C = 32;
  const V = REAL_VOCABS.qwen25;
  const products = [
    {
      tag: `logits = nf E^T ${R}x${V}x${C}`,
      out: [R, V],
      a: [R, C],
      b: [V, C],
      M: R,
      N: V,
      K: C,
      opts: { transB: true },
    },
    { tag: `dnf = dLogits E ${R}x${C}x${V}`, out: [R, C], a: [R, V], b: [V, C], M: R, N: C, K: V, opts: {} },
    {
      tag: `dE += dLogits^T nf ${V}x${C}x${R}`,
      out: [V, C],
      a: [R, V],
      b: [R, C],
      M: V,
      N: C,
      K: R,
      opts: { transA: true, accumulate: true },
    },
  ];
  return MATMUL_VARIANTS.filter((v) => v !== 'naive' && v !== 'tiled' && v !== 'tiled128').flatMap((variant) =>
    products
      .filter((p) => matmulVariantSupports(variant, { M: p.M, N: p.N, K: p.K, ...p.opts }))
      .map((p) =>
        simpleCase({
          name: `matmul ${variant} LM head ${p.tag}`,
          family: 'matmul',
          out: p.out,
          inputs: [{ shape: p.a }, { shape: p.b }],
          randomOutput: p.opts.accumulate === true,
          gpu: (rec, out, a, b) => matmul(rec, out, a, b, { ...p.opts, variant }),
          twin: (out, a, b) => matmulTwin(out, a, b, p.opts),
          // A sequential f32 sum of K unit-scale products drifts by about 2^-24 K / 7 (its partial sums grow like
          // sqrt(K / 9)): 1.3e-3 at K = 151,936, which 1e-5 sqrt(K) no longer covers; 2^-24 K is about 7 sigma.
          tol: { atol: Math.max(1e-5 * Math.sqrt(p.K), 2 ** -24 * p.K), rtol: 1e-5 },
        }),
      ),
  );
}

function elementwiseCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const exact = { atol: 0, rtol: 0 };
  for (const n of [1, 1031, 1032]) {
    // 1032: four values per invocation
    cases.push(
      simpleCase({
        name: `add n=${n}`,
        family: 'elementwise',
        out: [n],
        inputs: [{ shape: [n] }, { shape: [n] }],
        gpu: elementwise.add,
        twin: refElementwise.add,
        tol: exact,
      }),
      simpleCase({
        name: `scale n=${n}`,
        family: 'elementwise',
        out: [n],
        inputs: [{ shape: [n] }],
        gpu: (rec, out, a) => elementwise.scale(rec, out, a, -2.5),
        twin: (out, a) => refElementwise.scale(out, a, -2.5),
        tol: { atol: 0, rtol: 1e-7 },
      }),
      simpleCase({
        name: `fill n=${n}`,
        family: 'elementwise',
        out: [n],
        inputs: [],
        randomOutput: true,
        gpu: (rec, out) => elementwise.fill(rec, out, 0.375),
        twin: (out) => refElementwise.fill(out, 0.375),
        tol: exact,
      }),
      simpleCase({
        name: `copy n=${n}`,
        family: 'elementwise',
        out: [n],
        inputs: [{ shape: [n] }],
        gpu: elementwise.copy,
        twin: refElementwise.copy,
        tol: exact,
      }),
    );
  }
  return cases;
}

// Plus both sides of each lane edge of the row layout (rows.ts, rowLayout), each with a partial last workgroup,
// and two rows of Qwen2.5's vocabulary.
const ROW_SHAPES: number[][] = [[1, 1], [3, 17], [2, 33, 300], ...rowEdgeShapes(), [2, REAL_VOCABS.qwen25]];

function reduceCases(): KernelCase[] {
  return ROW_SHAPES.flatMap((shape) => {
    const out = shape.slice(0, -1);
    const tag = shape.join('x');
    return [
      simpleCase({
        name: `reduceSumRows ${tag}`,
        family: 'reduce',
        out,
        inputs: [{ shape }],
        gpu: reduce.reduceSumRows,
        twin: refReduce.reduceSumRows,
        // Conditioned on Σ|x| (compare.ts): the lanes' order of addition is the compiler's, and cancellation in a
        // row of mixed signs makes |sum| small while the rounding error stays ∝ Σ|x|.
        tol: { atol: 0, rtol: F32_EPS, sumTerms: shape[shape.length - 1] },
      }),
      simpleCase({
        name: `reduceMaxRows ${tag}`,
        family: 'reduce',
        out,
        inputs: [{ shape }],
        gpu: reduce.reduceMaxRows,
        twin: refReduce.reduceMaxRows,
        tol: { atol: 0, rtol: 0 },
      }),
    ];
  });
}

function softmaxCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const shapes: { shape: number[]; scale: number }[] = [
    ...ROW_SHAPES.map((shape) => ({ shape, scale: 3 })),
    { shape: [7, 65], scale: 1e4 },
    { shape: [17, 1024], scale: 1e4 },
  ];
  for (const { shape, scale } of shapes) {
    const tag = `${shape.join('x')}${scale >= 1e4 ? ' logits 1e4' : ''}`;
    cases.push(
      simpleCase({
        name: `softmaxForward ${tag}`,
        family: 'softmax',
        out: shape,
        inputs: [{ shape, scale }],
        gpu: softmax.softmaxForward,
        twin: refSoftmax.softmaxForward,
        tol: { atol: 1e-6, rtol: 1e-5 },
      }),
      simpleCase({
        name: `logSoftmaxForward ${tag}`,
        family: 'softmax',
        out: shape,
        inputs: [{ shape, scale }],
        gpu: softmax.logSoftmaxForward,
        twin: refSoftmax.logSoftmaxForward,
        tol: { atol: 1e-5, rtol: 1e-5 },
      }),
    );
    if (scale >= 1e4) continue;
    // Backward cases take y = the forward output (computed by the twin), then compare dx.
    cases.push(
      backwardCase(
        'softmaxBackward',
        shape,
        softmax.softmaxBackward,
        refSoftmax.softmaxBackward,
        refSoftmax.softmaxForward,
      ),
    );
    cases.push(
      backwardCase(
        'logSoftmaxBackward',
        shape,
        softmax.logSoftmaxBackward,
        refSoftmax.logSoftmaxBackward,
        refSoftmax.logSoftmaxForward,
      ),
    );
  }
  return cases;
}

/** A row-kernel backward case: y comes from the twin's forward on random x, dy is random. */
function backwardCase(
  name: string,
  shape: number[],
  gpu: (rec: Recorder, dx: Tensor, y: Tensor, dy: Tensor) => void,
  twin: (dx: HostTensor, y: HostTensor, dy: HostTensor) => void,
  forward: (out: HostTensor, x: HostTensor) => void,
): KernelCase {
  return simpleCase({
    name: `${name} ${shape.join('x')}`,
    family: 'softmax',
    out: shape,
    inputs: [{ shape, scale: 3 }, { shape }],
    prepare: ([x]) => {
      const y = host(new Float32Array(x.data.length), shape);
      forward(y, x);
      x.data.set(y.data);
    },
    gpu,
    twin,
    tol: { atol: 1e-5, rtol: 1e-5 },
  });
}

/** The cases of the families that have no test file of their own (kernels.test.ts runs these in Node). */
export function coreCases(): KernelCase[] {
  return [
    ...matmulCases(),
    ...lmHeadCases(),
    ...elementwiseCases(),
    ...reduceCases(),
    ...softmaxCases(),
    ...decodeCases(),
  ];
}

/**
 * Every kernel case, in a stable order (the browser self-test and `npm run selftest` run them all). In Node, the
 * families with their own test file (attention, layers, head, objective, kl, value, weight-stats, bias, bradley-terry,
 * half-precision weights, the fused decode projections, rope_decode_kv) run there, so each case runs once.
 */
export function kernelCases(): KernelCase[] {
  return [
    ...coreCases(),
    ...attentionCases(),
    ...layerCases(),
    ...headCases(),
    ...objectiveCases(),
    ...klCases(),
    ...valueCases(),
    ...weightStatsCases(),
    ...biasCases(),
    ...bradleyTerryCases(),
    ...halfCases(),
    ...projectionCases(),
    ...ropeDecodeKvCases(),
  ];
}
