// Verification cases of the LM-head and optimizer families: logprob, cross-entropy, optimizer (grad norm, clip,
// AdamW) and sampler, each on the GPU against its CPU twin at awkward shapes (N = 1, 7, 33; V = 2, 37, 300),
// temperatures 1 and 0.7, logits of magnitude 1e4, masks with zeros, gradient tensors of odd sizes, AdamW over
// several steps. Sampler cases compare tokens exactly (same Philox draws), floats with a tolerance.
// The row kernels' layouts (rows.ts, rowLayout: 1, 4, 16 or 64 lanes per row by the row length) are covered at
// both sides of every lane edge (V = 1023/1024, 4095/4096, 16383/16384), each with a partial last workgroup.
// Real vocabularies (rows.ts, REAL_VOCABS: SmolLM2's 49,152 and Qwen2.5's 151,936) run with 1-3 rows, as a decode
// step does: log-prob, cross-entropy and the sampler's top-k, top-p and min-p, including ties at the thresholds.

import type { GpuContext, Recorder, Tensor } from '../gpu';
import { F32_EPS, compareArrays, type Tolerance } from '../reference/compare';
import * as refCe from '../reference/cross-entropy';
import { adamwStep as adamwStepTwin, type AdamwOptions } from '../reference/adamw';
import { gradClip as gradClipTwin, gradNorm as gradNormTwin } from '../reference/grad-norm';
import * as refLogprob from '../reference/logprob';
import * as refOpt from '../reference/optimizer';
import { Rng } from '../core/random';
import * as refSampler from '../reference/sampler';
import { host, type HostTensor } from '../core/host-tensor';
import { crossEntropyBackward, crossEntropyForward } from './cross-entropy';
import { logprobBackward, logprobForward } from './logprob';
import {
  adamwStep,
  adamwStepScaled,
  clippedAdamwStep,
  gradClip,
  gradClipScale,
  gradNorm,
  packedOptimizerOf,
} from './optimizer';
import { REAL_VOCABS, rowEdgeShapes, rowLayout } from './rows';
import { samplerRandom, sampleTokens } from './sampler';
import {
  gpuTwinCase,
  randomHost,
  randomInts,
  seedOf,
  type CaseResult,
  type HostInput,
  type KernelCase,
} from './verify';

const SHAPES: [number, number][] = [
  [1, 2],
  [7, 37],
  [33, 300],
];
const TEMPS = [1, 0.7];
/** (N, V) on both sides of each lane edge of rowLayout, N one row past a full workgroup. */
const EDGES = rowEdgeShapes();
/** " (L lanes)" for a case name: which layout an edge case runs. */
const lanesTag = (V: number) => {
  const { LANES } = rowLayout(V);
  return ` (${LANES} lane${LANES > 1 ? 's' : ''} per row)`;
};

const f32In = (x: HostInput) => x as HostTensor<Float32Array>;
const u32In = (x: HostInput) => x.data as Uint32Array;

// ---------------------------------------------------------------------------------------------- logprob

function logprobCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const configs: { N: number; V: number; tau: number; scale: number; edge?: boolean }[] = [
    ...SHAPES.flatMap(([N, V]) => TEMPS.map((tau) => ({ N, V, tau, scale: 3 }))),
    ...TEMPS.map((tau) => ({ N: 7, V: 300, tau, scale: 1e4 })),
    { N: 3, V: 50257, tau: 0.7, scale: 3 },
    { N: 2, V: REAL_VOCABS.smollm2, tau: 0.7, scale: 3 },
    { N: 3, V: REAL_VOCABS.qwen25, tau: 0.7, scale: 3 },
    { N: 1, V: REAL_VOCABS.qwen25, tau: 1, scale: 1e4 },
    ...EDGES.map(([N, V]) => ({ N, V, tau: 0.7, scale: 3, edge: true })),
    { N: 17, V: 1024, tau: 1, scale: 1e4, edge: true },
  ];
  for (const { N, V, tau, scale, edge } of configs) {
    const tag = `${N}x${V} tau=${tau}${scale >= 1e4 ? ' logits 1e4' : ''}${edge ? lanesTag(V) : ''}`;
    const opts = { temperature: tau };
    cases.push(
      gpuTwinCase({
        name: `logprobForward ${tag}`,
        family: 'logprob',
        inputs: (rng) => [randomHost(rng, [N, V], scale), randomInts(rng, [N], V)],
        outputs: [{ shape: [N] }, { shape: [N] }],
        gpu: (rec, [lp, h], [logits, targets]) => logprobForward(rec, lp, h, logits, targets as Tensor<'u32'>, opts),
        twin: ([lp, h], [logits, targets]) => refLogprob.logprobForward(lp, h, f32In(logits), u32In(targets), opts),
        tol: { atol: 2e-5, rtol: 1e-5 },
      }),
      gpuTwinCase({
        name: `logprobBackward ${tag}`,
        family: 'logprob',
        inputs: (rng) => [
          randomHost(rng, [N]),
          randomHost(rng, [N]),
          randomHost(rng, [N, V], scale),
          randomInts(rng, [N], V),
        ],
        outputs: [{ shape: [N, V], random: true }],
        gpu: (rec, [dl], [gl, gh, logits, targets]) =>
          logprobBackward(rec, dl, gl, gh, logits, targets as Tensor<'u32'>, opts),
        twin: ([dl], [gl, gh, logits, targets]) =>
          refLogprob.logprobBackward(dl, f32In(gl), f32In(gh), f32In(logits), u32In(targets), opts),
        tol: { atol: 2e-6, rtol: 1e-5 },
      }),
    );
  }
  return cases;
}

// ----------------------------------------------------------------------------------------- cross-entropy

/** Targets in range, with every third row masked (target deliberately out of range there) or all rows masked. */
function ceInputs(rng: Rng, N: number, V: number, scale: number, allMasked: boolean): HostInput[] {
  const logits = randomHost(rng, [N, V], scale);
  const targets = randomInts(rng, [N], V);
  const mask = host(new Float32Array(N), [N]);
  for (let n = 0; n < N; n++) {
    mask.data[n] = allMasked || n % 3 === 1 ? 0 : 1;
    if (mask.data[n] === 0) targets.data[n] = V + 3; // padding may hold any id; must never be read
  }
  return [logits, targets, mask];
}

function crossEntropyCases(): KernelCase[] {
  const configs: { N: number; V: number; scale: number; allMasked: boolean; edge?: boolean }[] = [
    ...SHAPES.map(([N, V]) => ({ N, V, scale: 3, allMasked: false })),
    { N: 7, V: 300, scale: 1e4, allMasked: false },
    { N: 7, V: 37, scale: 3, allMasked: true },
    { N: 3, V: REAL_VOCABS.qwen25, scale: 3, allMasked: false },
    ...EDGES.map(([N, V]) => ({ N, V, scale: 3, allMasked: false, edge: true })),
    { N: 17, V: 1024, scale: 1e4, allMasked: false, edge: true },
    { N: 5, V: 4096, scale: 3, allMasked: true, edge: true },
  ];
  return configs.flatMap(({ N, V, scale, allMasked, edge }) => {
    const tag = `${N}x${V}${scale >= 1e4 ? ' logits 1e4' : ''}${allMasked ? ' all masked' : ' mask zeros'}${edge ? lanesTag(V) : ''}`;
    const dLoss = 0.5;
    return [
      gpuTwinCase({
        name: `crossEntropyForward ${tag}`,
        family: 'cross-entropy',
        inputs: (rng) => ceInputs(rng, N, V, scale, allMasked),
        outputs: [{ shape: [1], random: true }],
        gpu: (rec, [loss], [logits, targets, mask]) =>
          crossEntropyForward(rec, loss, logits, targets as Tensor<'u32'>, mask),
        twin: ([loss], [logits, targets, mask]) =>
          refCe.crossEntropyForward(loss, f32In(logits), u32In(targets), f32In(mask).data),
        tol: { atol: 1e-5, rtol: 1e-5 },
      }),
      gpuTwinCase({
        name: `crossEntropyBackward ${tag} dLoss=${dLoss}`,
        family: 'cross-entropy',
        inputs: (rng) => ceInputs(rng, N, V, scale, allMasked),
        outputs: [{ shape: [N, V], random: true }],
        gpu: (rec, [dl], [logits, targets, mask]) =>
          crossEntropyBackward(rec, dl, logits, targets as Tensor<'u32'>, mask, { dLoss }),
        twin: ([dl], [logits, targets, mask]) =>
          refCe.crossEntropyBackward(dl, f32In(logits), u32In(targets), f32In(mask).data, { dLoss }),
        tol: { atol: 1e-7, rtol: 1e-5 },
      }),
    ];
  });
}

// --------------------------------------------------------------------------------------------- optimizer

/** Gradient tensors of odd sizes (not multiples of the norm's 4-element quads); 32771 spans two partial-sum chunks. */
const GRAD_SHAPES: number[][] = [[1], [37], [5000], [3, 7, 11], [2049], [32771]];

function optimizerCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  const grads = (rng: Rng) => GRAD_SHAPES.map((s) => randomHost(rng, s, 0.1));
  cases.push(
    gpuTwinCase({
      name: `gradNorm ${GRAD_SHAPES.length} tensors (${GRAD_SHAPES.map((s) => s.join('x')).join(', ')})`,
      family: 'optimizer',
      inputs: grads,
      outputs: [{ shape: [1], random: true }],
      gpu: (rec, [out], gs) => gradNorm(rec, out, gs),
      twin: ([out], gs) => void gradNormTwin(out, gs.map(f32In)),
      tol: { atol: 0, rtol: 2e-6 },
    }),
  );
  // norm of these grads is about 0.1 * sqrt(12k / 3) = 6.4: maxNorm 1 clips, 100 does not.
  for (const maxNorm of [1, 100]) {
    cases.push(
      gpuTwinCase({
        name: `gradClipScale maxNorm=${maxNorm} (norm and factor stay on the GPU)`,
        family: 'optimizer',
        inputs: grads,
        outputs: [{ shape: [1] }, { shape: [1], random: true }],
        gpu: (rec, [norm, scale], gs) => {
          gradNorm(rec, norm, gs);
          gradClipScale(rec, scale, norm, { maxNorm });
        },
        twin: ([norm, scale], gs) => {
          gradNormTwin(norm, gs.map(f32In));
          refOpt.gradClipScale(scale, norm, { maxNorm });
        },
        tol: { atol: 0, rtol: 2e-6 },
      }),
      gpuTwinCase({
        name: `gradClip maxNorm=${maxNorm} in place`,
        family: 'optimizer',
        inputs: grads,
        outputs: [{ shape: [1] }, ...GRAD_SHAPES.map((shape) => ({ shape }))],
        gpu: (rec, [norm, ...outs], gs) => {
          gs.forEach((g, i) => rec.copy(outs[i], g));
          gradNorm(rec, norm, outs);
          gradClip(rec, outs, norm, { maxNorm });
        },
        twin: ([norm, ...outs], gs) => {
          gs.forEach((g, i) => outs[i].data.set(g.data as Float32Array));
          gradClipTwin(outs, gradNormTwin(norm, outs), { maxNorm });
        },
        tol: { atol: 1e-9, rtol: 2e-6 },
      }),
    );
  }
  // AdamW single steps: params, m, v (v >= 0) and grads as inputs, copied into the outputs and stepped in place.
  const adamTol: Tolerance = { atol: 1e-7, rtol: 1e-5 };
  for (const n of [1, 1031]) {
    for (const t of [1, 7]) {
      const opts: AdamwOptions = {
        lr: 1e-2,
        t,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0.01,
        gradScale: 0.5,
      };
      const inputs = (rng: Rng): HostInput[] => {
        const v = randomHost(rng, [n], 1e-2);
        for (let i = 0; i < n; i++) v.data[i] = Math.abs(v.data[i]);
        return [
          randomHost(rng, [n]),
          randomHost(rng, [n], 1e-1),
          v,
          randomHost(rng, [n], 0.3),
          host(Float32Array.of(0.25), [1]),
        ];
      };
      const copyIn = (rec: Recorder, outs: Tensor[], ins: Tensor[]) => outs.forEach((o, i) => rec.copy(o, ins[i]));
      const copyHost = (outs: HostTensor[], ins: HostInput[]) =>
        outs.forEach((o, i) => o.data.set(ins[i].data as Float32Array));
      cases.push(
        gpuTwinCase({
          name: `adamwStep n=${n} t=${t} gradScale=0.5`,
          family: 'optimizer',
          inputs,
          outputs: [{ shape: [n] }, { shape: [n] }, { shape: [n] }],
          gpu: (rec, outs, ins) => {
            copyIn(rec, outs, ins);
            adamwStep(rec, outs[0], outs[1], outs[2], ins[3], opts);
          },
          twin: (outs, ins) => {
            copyHost(outs, ins);
            adamwStepTwin(outs[0], outs[1], outs[2], f32In(ins[3]), opts);
          },
          tol: adamTol,
        }),
        gpuTwinCase({
          name: `adamwStepScaled n=${n} t=${t} scale tensor=0.25`,
          family: 'optimizer',
          inputs,
          outputs: [{ shape: [n] }, { shape: [n] }, { shape: [n] }],
          gpu: (rec, outs, ins) => {
            copyIn(rec, outs, ins);
            adamwStepScaled(rec, outs[0], outs[1], outs[2], ins[3], ins[4], opts);
          },
          twin: (outs, ins) => {
            copyHost(outs, ins);
            refOpt.adamwStepScaled(outs[0], outs[1], outs[2], f32In(ins[3]), f32In(ins[4]), opts);
          },
          tol: adamTol,
        }),
      );
    }
  }
  // Whole clipped AdamW steps t = 1..STEPS in one command buffer, fresh gradients each step, m = v = 0 at first.
  const STEPS = 4;
  const K = GRAD_SHAPES.length;
  for (const maxNorm of [1, undefined]) {
    const opts = { lr: 3e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxNorm };
    cases.push(
      gpuTwinCase({
        name: `clippedAdamwStep ${STEPS} steps over ${K} tensors maxNorm=${maxNorm ?? 'none'}`,
        family: 'optimizer',
        // params (K), then grads for step 1 (K), step 2 (K), ...
        inputs: (rng) => [
          ...GRAD_SHAPES.map((s) => randomHost(rng, s)),
          ...Array.from({ length: STEPS }, () => GRAD_SHAPES.map((s) => randomHost(rng, s, 0.1))).flat(),
        ],
        // params, m, v (K each), then the last step's norm and clip factor
        outputs: [...[0, 1, 2].flatMap(() => GRAD_SHAPES.map((shape) => ({ shape }))), { shape: [1] }, { shape: [1] }],
        gpu: (rec, outs, ins) => {
          const [params, m, v] = [0, 1, 2].map((j) => outs.slice(j * K, (j + 1) * K));
          params.forEach((p, i) => rec.copy(p, ins[i]));
          for (let s = 0; s < STEPS; s++) {
            const grads = ins.slice(K * (s + 1), K * (s + 2));
            clippedAdamwStep(rec, outs[3 * K], outs[3 * K + 1], { params, m, v, grads }, { ...opts, t: s + 1 });
          }
        },
        twin: (outs, ins) => {
          const [params, m, v] = [0, 1, 2].map((j) => outs.slice(j * K, (j + 1) * K));
          params.forEach((p, i) => p.data.set(ins[i].data as Float32Array));
          for (let s = 0; s < STEPS; s++) {
            const grads = ins.slice(K * (s + 1), K * (s + 2)).map(f32In);
            refOpt.clippedAdamwStep(outs[3 * K], outs[3 * K + 1], { params, m, v, grads }, { ...opts, t: s + 1 });
          }
        },
        tol: { atol: 1e-6, rtol: 1e-5 },
      }),
    );
    // The same steps with the tensors packed in arenas (one AdamW and one norm-partials dispatch for all of them).
    cases.push(
      gpuTwinCase({
        name: `clippedAdamwStep packed ${STEPS} steps over ${K} tensors maxNorm=${maxNorm ?? 'none'}`,
        family: 'optimizer',
        inputs: (rng) => [
          ...GRAD_SHAPES.map((s) => randomHost(rng, s)),
          ...Array.from({ length: STEPS }, () => GRAD_SHAPES.map((s) => randomHost(rng, s, 0.1))).flat(),
        ],
        outputs: [...[0, 1, 2].flatMap(() => GRAD_SHAPES.map((shape) => ({ shape }))), { shape: [1] }, { shape: [1] }],
        gpu: (rec, outs, ins) => {
          const packed = packedOptimizerOf(rec.ctx, GRAD_SHAPES);
          packed.params.views.forEach((p, i) => rec.copy(p, ins[i]));
          for (let s = 0; s < STEPS; s++) {
            packed.grads.views.forEach((g, i) => rec.copy(g, ins[K * (s + 1) + i]));
            clippedAdamwStep(
              rec,
              outs[3 * K],
              outs[3 * K + 1],
              {
                params: packed.params.views,
                m: packed.m.views,
                v: packed.v.views,
                grads: packed.grads.views,
                packed: [packed],
              },
              { ...opts, t: s + 1 },
            );
          }
          [packed.params, packed.m, packed.v].forEach((a, j) =>
            a.views.forEach((t, i) => rec.copy(outs[j * K + i], t)),
          );
        },
        twin: (outs, ins) => {
          const [params, m, v] = [0, 1, 2].map((j) => outs.slice(j * K, (j + 1) * K));
          params.forEach((p, i) => p.data.set(ins[i].data as Float32Array));
          for (let s = 0; s < STEPS; s++) {
            const grads = ins.slice(K * (s + 1), K * (s + 2)).map(f32In);
            refOpt.clippedAdamwStep(outs[3 * K], outs[3 * K + 1], { params, m, v, grads }, { ...opts, t: s + 1 });
          }
        },
        tol: { atol: 1e-6, rtol: 1e-5 },
      }),
    );
  }
  return cases;
}

// ----------------------------------------------------------------------------------------------- sampler

/** Result helper for cases that are not plain GPU-vs-twin float comparisons. */
function result(
  name: string,
  family: string,
  parts: { pass: boolean; summary: string; maxAbsError: number }[],
  ms: number,
): CaseResult {
  return {
    name,
    family,
    pass: parts.every((p) => p.pass),
    summary: parts.map((p) => p.summary).join('; '),
    maxAbsError: Math.max(0, ...parts.map((p) => p.maxAbsError)),
    ms,
  };
}

function compareTokens(got: Uint32Array, want: Uint32Array): { pass: boolean; summary: string; maxAbsError: number } {
  const bad: string[] = [];
  let count = 0;
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) {
      count++;
      if (bad.length < 5) bad.push(`[${i}] got ${got[i]} want ${want[i]}`);
    }
  }
  return {
    pass: count === 0 && got.length === want.length,
    summary:
      count === 0
        ? `tokens: ${want.length} identical`
        : `tokens: ${count} of ${want.length} differ, first ${bad.join(', ')}`,
    maxAbsError: 0,
  };
}

/** Outputs of one sampler run (host side). */
export interface SamplerRun {
  tokens: Uint32Array;
  logprob: Float32Array;
  entropy: Float32Array;
  filteredLogprob: Float32Array;
}

/** Runs the GPU sampler once on host logits (N,V); used by the cases and the statistical test. */
export async function runGpuSampler(
  ctx: GpuContext,
  logits: HostTensor<Float32Array>,
  opts: refSampler.SamplerOptions,
  label = 'sampler',
  cursor?: number,
): Promise<SamplerRun> {
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  const gl = ctx.fromArray(logits.data, logits.shape, { label: `${label}:logits` });
  const tokens = ctx.tensor<'u32'>([N], { dtype: 'u32', label: `${label}:tokens` });
  const outs = ['logprob', 'entropy', 'filteredLogprob'].map((n) => ctx.tensor([N], { label: `${label}:${n}` }));
  // A decode cursor holding `cursor`: the kernel's step parameter is opts.step less it, its GPU value added back.
  const gc =
    cursor === undefined
      ? null
      : ctx.fromArray<'u32'>(Uint32Array.of(cursor), [1], { dtype: 'u32', label: `${label}:cursor` });
  const rec = ctx.recorder(label);
  sampleTokens(rec, tokens, outs[0], outs[1], outs[2], gl, opts, gc ? { tensor: gc, value: cursor ?? 0 } : undefined);
  rec.submit();
  const [t, lp, h, flp] = await ctx.readMany([tokens, ...outs]);
  for (const x of [gl, tokens, ...outs, ...(gc ? [gc] : [])]) x.destroy();
  return {
    tokens: t as Uint32Array,
    logprob: lp as Float32Array,
    entropy: h as Float32Array,
    filteredLogprob: flp as Float32Array,
  };
}

/** The twin on the same logits. */
export function runTwinSampler(logits: HostTensor<Float32Array>, opts: refSampler.SamplerOptions): SamplerRun {
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.data.length / V;
  const r = {
    tokens: new Uint32Array(N),
    logprob: new Float32Array(N),
    entropy: new Float32Array(N),
    filteredLogprob: new Float32Array(N),
  };
  refSampler.sampleTokens(
    r.tokens,
    host(r.logprob, [N]),
    host(r.entropy, [N]),
    host(r.filteredLogprob, [N]),
    logits,
    opts,
  );
  return r;
}

/**
 * A sampler case: N rows of V random logits in [-scale, scale]; with `tieStep`, each logit rounded to a multiple of
 * it, so that many tokens tie at every top-k / top-p / min-p threshold (ties are kept: the kept set may exceed k).
 */
function samplerCase(
  N: number,
  V: number,
  scale: number,
  opts: refSampler.SamplerOptions,
  tieStep = 0,
  cursor?: number,
): KernelCase {
  const parts = [`tau=${opts.temperature}`];
  if (opts.topK) parts.push(`topK=${opts.topK}`);
  if (opts.topP !== undefined) parts.push(`topP=${opts.topP}`);
  if (opts.minP) parts.push(`minP=${opts.minP}`);
  if (opts.greedy) parts.push('greedy');
  const ties = tieStep > 0 ? ` ties (logits in steps of ${tieStep})` : '';
  const moved = cursor === undefined ? '' : ` (a decode cursor of ${cursor})`;
  const name = `sampleTokens ${N}x${V}${scale >= 1e4 ? ' logits 1e4' : ''}${ties} ${parts.join(' ')} seed=${opts.seed} step=${opts.step}${moved}`;
  return {
    name,
    family: 'sampler',
    async run(ctx) {
      const logits = randomHost(new Rng(seedOf(name)), [N, V], scale);
      if (tieStep > 0)
        for (let i = 0; i < logits.data.length; i++) logits.data[i] = Math.round(logits.data[i] / tieStep) * tieStep;
      const t0 = performance.now();
      const got = await runGpuSampler(ctx, logits, opts, name, cursor);
      const ms = performance.now() - t0;
      const want = runTwinSampler(logits, opts);
      // A log-prob is a difference of scaled logits z = x / tau and a log-sum-exp of them, each rounded at |z|'s
      // magnitude: drivers that round x / tau or fuse multiply-adds differently (an NVIDIA driver did, at logits
      // of 1e4) differ by about one ulp of max |z|, so the absolute bound scales with it (4 eps max|z|; 2e-5 floors
      // it, and it is the bound whenever |z| < 40).
      const tau = opts.temperature > 0 ? opts.temperature : 1; // the twin's z: tau 1 when temperature is 0
      let maxZ = 0;
      for (const x of logits.data) maxZ = Math.max(maxZ, Math.abs(x) / tau);
      const tol: Tolerance = { atol: Math.max(2e-5, 4 * F32_EPS * maxZ), rtol: 1e-5 };
      const cmp = (what: string, g: Float32Array, w: Float32Array) => {
        const c = compareArrays(g, w, tol);
        return { pass: c.pass, summary: `${what}: ${c.summary}`, maxAbsError: c.maxAbsError };
      };
      return result(
        name,
        'sampler',
        [
          compareTokens(got.tokens, want.tokens),
          cmp('logprob', got.logprob, want.logprob),
          cmp('entropy', got.entropy, want.entropy),
          cmp('filteredLogprob', got.filteredLogprob, want.filteredLogprob),
        ],
        ms,
      );
    },
  };
}

/**
 * The sampler's logprob/entropy equal logprobForward's bit for bit on the same rows, with logprobForward run on
 * a batch of a different size: `copies` stacked copies of the sampler's N rows plus one extra row (the row
 * layout depends on V only, so a row's sums do not depend on the batch).
 */
function matchCase(N: number, V: number, copies: number, opts: refSampler.SamplerOptions): KernelCase {
  const name = `sampleTokens logprob/entropy equal logprobForward bit for bit, ${N}x${V}${lanesTag(V)} vs a batch of ${copies * N + 1} rows`;
  return {
    name,
    family: 'sampler',
    async run(ctx) {
      const logits = randomHost(new Rng(seedOf(name)), [N, V], 3);
      const t0 = performance.now();
      const s = await runGpuSampler(ctx, logits, opts, 'sampler-vs-logprob');
      const M = copies * N + 1;
      const batch = new Float32Array(M * V);
      const targets = new Uint32Array(M);
      for (let k = 0; k < copies; k++) {
        batch.set(logits.data, k * N * V);
        targets.set(s.tokens, k * N);
      }
      batch.fill(0.25, copies * N * V); // the extra row
      const gl = ctx.fromArray(batch, [M, V], { label: 'svl:logits' });
      const gt = ctx.fromArray<'u32'>(targets, [M], { dtype: 'u32', label: 'svl:targets' });
      const lp = ctx.tensor([M], { label: 'svl:logprob' });
      const h = ctx.tensor([M], { label: 'svl:entropy' });
      const rec = ctx.recorder('sampler-vs-logprob');
      logprobForward(rec, lp, h, gl, gt, { temperature: opts.temperature });
      rec.submit();
      const [glp, gh] = await ctx.readMany([lp, h]);
      const ms = performance.now() - t0;
      for (const x of [gl, gt, lp, h]) x.destroy();
      const exact = { atol: 0, rtol: 0 };
      const parts = [];
      for (let k = 0; k < copies; k++) {
        const a = compareArrays(s.logprob, glp.subarray(k * N, (k + 1) * N), exact);
        const b = compareArrays(s.entropy, gh.subarray(k * N, (k + 1) * N), exact);
        parts.push(
          { pass: a.pass, summary: `copy ${k} logprob: ${a.summary}`, maxAbsError: a.maxAbsError },
          { pass: b.pass, summary: `copy ${k} entropy: ${b.summary}`, maxAbsError: b.maxAbsError },
        );
      }
      return result(name, 'sampler', parts, ms);
    },
  };
}

const RANDOM_CASE = 'samplerRandom 33 rows: Philox4x32-10 words identical to the twin';
const MATCH_CASE = 'sampleTokens logprob/entropy equal logprobForward bit for bit (33x300 tau=0.7)';

function samplerCases(): KernelCase[] {
  const seed = 1234;
  const cases: KernelCase[] = [];
  for (const [N, V] of SHAPES) {
    for (const temperature of TEMPS) cases.push(samplerCase(N, V, 3, { temperature, seed, step: 0 }));
  }
  cases.push(
    samplerCase(33, 300, 3, { temperature: 0.7, topK: 5, seed, step: 3 }),
    samplerCase(7, 37, 3, { temperature: 1, topK: 1, seed, step: 3 }),
    samplerCase(7, 2, 3, { temperature: 1, topK: 3, seed, step: 3 }),
    samplerCase(33, 300, 3, { temperature: 1, topP: 0.9, seed, step: 4 }),
    samplerCase(7, 37, 3, { temperature: 0.7, topP: 0.5, seed, step: 4 }),
    samplerCase(33, 300, 3, { temperature: 1, minP: 0.1, seed, step: 5 }),
    samplerCase(33, 300, 3, { temperature: 0.7, topK: 50, topP: 0.9, minP: 0.05, seed, step: 6 }),
    samplerCase(33, 300, 3, { temperature: 0.7, greedy: true, seed, step: 7 }),
    samplerCase(7, 37, 3, { temperature: 0, seed, step: 7 }),
    samplerCase(7, 300, 1e4, { temperature: 0.7, seed, step: 8 }),
    samplerCase(7, 300, 1e4, { temperature: 1, topP: 0.9, topK: 10, seed, step: 8 }),
    samplerCase(33, 37, 0.3, { temperature: 1, seed: 0xdeadbeef, step: 0xffffffff }),
    samplerCase(33, 300, 3, { temperature: 0.7, topK: 50, topP: 0.9, seed, step: 9 }, 0, 8),
    samplerCase(7, 37, 3, { temperature: 1, seed: 0xdeadbeef, step: 0xffffffff }, 0, 0xfffffffe),
    // A GPT-2-sized vocabulary: the threshold searches at scale (twin sorts 50k values per row).
    samplerCase(3, 50257, 3, { temperature: 0.8, topK: 40, topP: 0.95, seed, step: 10 }),
    samplerCase(3, 50257, 3, { temperature: 1, topP: 0.9, minP: 0.01, seed, step: 11 }),
    // Real vocabularies, a few rows each as in a decode step: each filter alone and together, and ties at the
    // thresholds. Tokens must equal the twin's under the same Philox draw, and filteredLogprob (the token's
    // log-prob renormalised over the kept set) must match it, which pins the kept set's mass.
    samplerCase(3, REAL_VOCABS.smollm2, 3, { temperature: 0.8, topK: 40, topP: 0.95, seed, step: 50 }),
    samplerCase(2, REAL_VOCABS.smollm2, 3, { temperature: 1, topP: 0.9, minP: 0.01, seed, step: 51 }),
    samplerCase(3, REAL_VOCABS.qwen25, 3, { temperature: 1, seed, step: 52 }),
    samplerCase(3, REAL_VOCABS.qwen25, 3, { temperature: 0.7, topK: 50, topP: 0.9, minP: 0.05, seed, step: 53 }),
    samplerCase(2, REAL_VOCABS.qwen25, 3, { temperature: 1, topK: 1000, seed, step: 54 }),
    samplerCase(2, REAL_VOCABS.qwen25, 3, { temperature: 1, topP: 0.95, seed, step: 55 }),
    samplerCase(2, REAL_VOCABS.qwen25, 3, { temperature: 1, minP: 0.1, seed, step: 56 }),
    samplerCase(3, REAL_VOCABS.qwen25, 3, { temperature: 0.7, topK: 1000, topP: 0.5, seed, step: 57 }, 0.5),
    // Temperature 0 (greedy, tau = 1): at 1e4 and tau != 1 the rounding of logits / tau (1e-3) over the many
    // near-max tokens of a 151,936 row moves the log-prob by more than an f32 tolerance against the twin.
    samplerCase(1, REAL_VOCABS.qwen25, 1e4, { temperature: 0, seed, step: 58 }),
    // Both sides of each lane edge of the row layout, with a partial last workgroup: every merge of the lanes
    // (argmax, sums, top-k counts, top-p masses, the inverse CDF's chunk sums and the owner's pick).
    ...EDGES.flatMap(([N, V], i) => [
      samplerCase(N, V, 3, { temperature: 0.8, seed, step: 20 + i }),
      samplerCase(N, V, 3, { temperature: 1, topK: 40, topP: 0.9, minP: 0.01, seed, step: 30 + i }),
    ]),
    samplerCase(17, 1024, 3, { temperature: 0.7, greedy: true, seed, step: 40 }),
    samplerCase(5, 4096, 1e4, { temperature: 1, topP: 0.9, topK: 10, seed, step: 41 }),
    samplerCase(65, 37, 3, { temperature: 1, topK: 5, topP: 0.8, seed, step: 42 }),
    matchCase(33, 300, 2, { temperature: 0.7, topK: 20, seed: 5, step: 12 }),
    matchCase(1, REAL_VOCABS.qwen25, 2, { temperature: 0.7, topP: 0.9, seed: 5, step: 14 }),
    ...EDGES.filter(([, V]) => rowLayout(V).LANES > 1).map(([N, V]) =>
      matchCase(N, V, 3, { temperature: 0.7, topP: 0.9, seed: 5, step: 13 }),
    ),
    {
      name: RANDOM_CASE,
      family: 'sampler',
      async run(ctx) {
        const N = 33;
        const opts = { seed: 0x9e3779b9, step: 17 };
        const words = ctx.tensor<'u32'>([N, 4], { dtype: 'u32', label: 'samplerRandom:words' });
        const t0 = performance.now();
        const rec = ctx.recorder('samplerRandom');
        samplerRandom(rec, words, N, opts);
        rec.submit();
        const got = await ctx.read(words);
        const ms = performance.now() - t0;
        words.destroy();
        const want = new Uint32Array(N * 4);
        refSampler.samplerRandom(want, N, opts);
        return result(RANDOM_CASE, 'sampler', [compareTokens(got, want)], ms);
      },
    },
    {
      name: MATCH_CASE,
      family: 'sampler',
      async run(ctx) {
        const N = 33;
        const V = 300;
        const opts = { temperature: 0.7, topK: 20, seed: 5, step: 9 };
        const logits = randomHost(new Rng(seedOf(MATCH_CASE)), [N, V], 3);
        const t0 = performance.now();
        const s = await runGpuSampler(ctx, logits, opts, 'sampler-vs-logprob');
        const gl = ctx.fromArray(logits.data, [N, V], { label: 'svl:logits' });
        const targets = ctx.fromArray<'u32'>(s.tokens, [N], { dtype: 'u32', label: 'svl:targets' });
        const lp = ctx.tensor([N], { label: 'svl:logprob' });
        const h = ctx.tensor([N], { label: 'svl:entropy' });
        const rec = ctx.recorder('sampler-vs-logprob');
        logprobForward(rec, lp, h, gl, targets, { temperature: 0.7 });
        rec.submit();
        const [glp, gh] = await ctx.readMany([lp, h]);
        const ms = performance.now() - t0;
        for (const x of [gl, targets, lp, h]) x.destroy();
        const exact = { atol: 0, rtol: 0 };
        const a = compareArrays(s.logprob, glp, exact);
        const b = compareArrays(s.entropy, gh, exact);
        return result(
          MATCH_CASE,
          'sampler',
          [
            { pass: a.pass, summary: `logprob: ${a.summary}`, maxAbsError: a.maxAbsError },
            { pass: b.pass, summary: `entropy: ${b.summary}`, maxAbsError: b.maxAbsError },
          ],
          ms,
        );
      },
    },
  );
  return cases;
}

/** Every head and optimizer case, in a stable order. */
export function headCases(): KernelCase[] {
  return [...logprobCases(), ...crossEntropyCases(), ...optimizerCases(), ...samplerCases()];
}
