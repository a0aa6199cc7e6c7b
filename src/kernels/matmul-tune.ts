// The matmul autotune: at startup, times each candidate variant (matmul.ts) on a few shapes per layout, keeps only
// candidates whose output matches the naive oracle on this device, and makes the fastest per layout matmul()'s
// default for the device. Results are cached per adapter (in memory, plus an optional key-value store such as a
// file or IndexedDB wrapper), so a second device on the same adapter skips the measurements. Until an adapter has
// been measured, shippedTuning gives the defaults measured per adapter class, so a page can train at once and
// measure later (a stop callback ends a measurement between two timed products). Not the benchmark.

import type { GpuContext, Tensor } from '../gpu';
import { vulkanDriverOf } from '../gpu/vulkan-drivers';
import { Rng, randomArray } from '../core/random';
import {
  MATMUL_VARIANTS,
  matmul,
  matmulVariantSupports,
  setMatmulTuning,
  type MatmulLayout,
  type MatmulTuning,
  type MatmulVariant,
} from './matmul';

/** Variants the autotune chooses between: every variant but 'naive', the oracle. */
export const TUNE_CANDIDATES: readonly MatmulVariant[] = MATMUL_VARIANTS.filter((v) => v !== 'naive');

/**
 * The candidates worth timing on an adapter. On software (CPU) adapters 'tiled' is left out, because workgroup
 * barriers are very slow there and compiling it costs about a second of startup on SwiftShader, and so are
 * 'strided' and 'vec4', which the larger register tiles beat at every shape there (docs/benchmarks/swiftshader.md's
 * sections), and the 16x8 tile 'tall', which the 16x16 'square' matched or beat at every shape measured on
 * SwiftShader (16 products of the nano and micro presets and of SmolLM2-135M, every layout, f32 and bf16: within 4%
 * at 6 small ones, 1.07-1.28x faster at the other 10) while the tune, whose shapes put the two within its noise,
 * chose 'tall' in some runs: each candidate left out saves three pipeline compiles and their timings on a first visit.
 */
export function tuneCandidates(ctx: GpuContext): MatmulVariant[] {
  if (isLlvmpipe(ctx)) return TUNE_CANDIDATES.filter((v) => QUICK_ON_LLVMPIPE.includes(v));
  const leftOutOnCpu: readonly MatmulVariant[] = ['tiled', 'tiled128', 'strided', 'vec4', 'tall'];
  return TUNE_CANDIDATES.filter((v) => !(ctx.report.isFallbackAdapter && leftOutOnCpu.includes(v)));
}

/**
 * Mesa's llvmpipe (lavapipe in Vulkan), the other CPU adapter: its LLVM compiles the register tiles slowly where
 * SwiftShader does not. Cold (Mesa's shader cache off), on an idle 2-core machine, a pipeline's creation plus first
 * dispatch took 0.53 s for 'blocked' and 0.66 s for 'vec4', but 3.2 s for the 8x8 tile ('wide'), 10.6 s for 16x8
 * ('tall') and 43.0 s for 16x16 ('square'), over the 2 s compile budget; and 'vec4' ran fastest at the tune shapes on
 * every layout there (NT 2.9 ms, NN 3.5, TN 2.0, against 'wide' 3.6, 3.9, 3.4; 'tiled' 13-15). docs/benchmarks/drivers.md.
 */
export function isLlvmpipe(ctx: GpuContext): boolean {
  return vulkanDriverOf(ctx.report) === 'lavapipe';
}

/** The candidates on llvmpipe: the variants that compile within the budget there (isLlvmpipe). */
const QUICK_ON_LLVMPIPE: readonly MatmulVariant[] = ['blocked', 'strided', 'vec4'];

/** The layouts the model uses: x W^T (forward), dY W (backward data), dY^T X (weight gradients). */
export const TUNED_LAYOUTS: readonly MatmulLayout[] = ['NT', 'NN', 'TN'];

/** One matmul shape: out (M,N) = op(A) op(B); A stored (K,M) when transA, B stored (N,K) when transB. */
export interface MatmulShape {
  M: number;
  N: number;
  K: number;
  transA?: boolean;
  transB?: boolean;
}

/** A candidate's time on one layout (summed over that layout's shapes), or why it was dropped. */
export interface TuneMeasurement {
  layout: MatmulLayout;
  variant: MatmulVariant;
  ms: number;
  /** Max |candidate - naive| / (max |naive| + 1e-6) over the shapes; candidates above 1e-4 are dropped. */
  relError: number;
  rejected?: string;
}

export interface TuneResult {
  /** The adapter the result belongs to. */
  adapterKey: string;
  tuning: MatmulTuning;
  /** Empty when the tuning came from the cache. */
  measurements: TuneMeasurement[];
  fromCache: boolean;
  ms: number;
}

/** A place to keep results between runs (e.g. a JSON file in Node, IndexedDB in a page). */
export interface TuneStore {
  get(key: string): Promise<string | null> | string | null;
  set(key: string, value: string): Promise<void> | void;
}

export interface TuneOptions {
  /**
   * Shapes to time; default tuneShapes(64, 176, 1024): the micro preset's layers over a training batch of 16 x 64
   * tokens, as many multiply-adds as a mid-size model's layers over 256 tokens but with the row counts training
   * has (a batch of 256 rows left the 16-row tiles 2 workgroups on some products, and chose them wrongly).
   */
  shapes?: MatmulShape[];
  /** Timed repetitions per shape (default 5: the register tiles differ by 10-25% on SwiftShader, about what a median of 3 reps on a loaded 2-core machine could not resolve). */
  reps?: number;
  store?: TuneStore;
  /** Measure even when a cached result exists. */
  force?: boolean;
  /**
   * Asked before each product the measurement submits, and once more just before the winners are installed: true
   * ends the measurement with a TuneStopped error and installs nothing (a page measuring while no run trains).
   */
  stop?: () => boolean;
  /**
   * Measurements of a stopped tune on this device, and where this one adds its own: layouts already measured in it
   * are not measured again, so a tune stopped several times still finishes.
   */
  partial?: TuneMeasurement[];
}

/** A measurement ended by TuneOptions.stop: nothing was installed. */
export class TuneStopped extends Error {
  constructor() {
    super('the matmul autotune was stopped before it finished');
    this.name = 'TuneStopped';
  }
}

/**
 * The variants per adapter class for an adapter not measured yet, chosen for the time to a first step. Both CPU
 * adapters take 'vec4' on every layout (unaligned products fall back to 'blocked'): its pipelines compile in a tenth
 * of the register tiles' time and it runs the first lesson's step as fast. On SwiftShader in Node, the first lesson's
 * five matmul pipelines took 2.0-2.4 s with the 8x8 tile ('wide') and 0.34-0.41 s with 'vec4' (created back to back,
 * machine shared), and the later steps took 1.17 s with 'vec4' against 1.24-1.32 s with 'wide'. On llvmpipe 'vec4' is
 * also the fastest to run at the tune shapes (isLlvmpipe). At larger shapes SwiftShader runs the register tiles faster
 * (docs/benchmarks/swiftshader.md), which its own tune measures while no run trains and installs for the next run. A GPU keeps
 * matmul()'s default ('blocked'), since the autotune's rankings on the GPUs measured so far were within the
 * timestamps' quantization.
 */
export function shippedTuning(ctx: GpuContext): MatmulTuning {
  return ctx.report.isFallbackAdapter || isLlvmpipe(ctx) ? { NT: 'vec4', NN: 'vec4', TN: 'vec4' } : {};
}

/** This adapter's measured tuning if memory or the store holds one (installed on ctx's device then), else null. */
export async function cachedMatmulTuning(ctx: GpuContext, store?: TuneStore): Promise<MatmulTuning | null> {
  const key = adapterKey(ctx);
  let cached = memoryCache.get(key) ?? null;
  if (!cached && store) {
    const text = await store.get(STORE_PREFIX + key);
    if (text) cached = parseTuning(text);
  }
  if (!cached) return null;
  memoryCache.set(key, cached);
  setMatmulTuning(ctx.device, cached);
  return cached;
}

const memoryCache = new Map<string, MatmulTuning>();
/**
 * Cached results are keyed by the candidate list too, so adding a variant re-measures; and by a version, raised
 * when the measurement changes (v2: least time per shape at 1024 rows), so a choice measured the old way is not kept.
 */
const STORE_PREFIX = `rl-lab.matmul-tune.v2[${TUNE_CANDIDATES.join(',')}]:`;

/** The adapter a tuning belongs to (vendor, architecture, description, runtime). */
export function adapterKey(ctx: GpuContext): string {
  const r = ctx.report;
  return [r.runtime, r.vendor, r.architecture, r.device, r.description].join('|');
}

/** Per layout, the shapes of a model with residual width C, MLP width F, and N rows per batch. */
export function tuneShapes(C: number, F: number, N: number): MatmulShape[] {
  return [
    { M: N, N: F, K: C, transB: true },
    { M: N, N: C, K: C, transB: true },
    { M: N, N: C, K: F },
    { M: N, N: F, K: C },
    { M: F, N: C, K: N, transA: true },
    { M: C, N: C, K: N, transA: true },
  ];
}

function layoutOfShape(s: MatmulShape): MatmulLayout {
  return `${s.transA ? 'T' : 'N'}${s.transB ? 'T' : 'N'}` as MatmulLayout;
}

/**
 * Measures the candidates and installs the fastest per layout as matmul()'s default on ctx's device (or installs
 * the cached choice for this adapter). Candidates that disagree with the naive oracle are never chosen.
 */
export async function autotuneMatmul(ctx: GpuContext, options: TuneOptions = {}): Promise<TuneResult> {
  const t0 = performance.now();
  const key = adapterKey(ctx);
  if (!options.force) {
    const cached = await cachedMatmulTuning(ctx, options.store);
    if (cached)
      return { adapterKey: key, tuning: cached, measurements: [], fromCache: true, ms: performance.now() - t0 };
  }
  const shapes = options.shapes ?? tuneShapes(64, 176, 1024);
  const reps = options.reps ?? 5;
  const measurements = options.partial ?? [];
  const tuning: MatmulTuning = {};
  for (const layout of TUNED_LAYOUTS) {
    const mine = shapes.filter((s) => layoutOfShape(s) === layout);
    const variants = tuneCandidates(ctx).filter(
      (v) => mine.length > 0 && mine.every((s) => matmulVariantSupports(v, s)),
    );
    if (variants.length === 0) continue;
    let results = measurements.filter((m) => m.layout === layout);
    if (results.length === 0) {
      results = await measureLayout(ctx, layout, mine, variants, reps, options.stop);
      measurements.push(...results);
    }
    const best = results.filter((r) => !r.rejected).sort((a, b) => a.ms - b.ms)[0];
    if (best) tuning[layout] = best.variant;
  }
  if (options.stop?.()) throw new TuneStopped();
  memoryCache.set(key, tuning);
  setMatmulTuning(ctx.device, tuning);
  if (options.store) await options.store.set(STORE_PREFIX + key, JSON.stringify(tuning));
  return { adapterKey: key, tuning, measurements, fromCache: false, ms: performance.now() - t0 };
}

/** One line for a log or a page: the choice per layout and where it came from. */
export function describeTuning(r: TuneResult): string {
  const choice =
    Object.entries(r.tuning)
      .map(([layout, v]) => `${layout} ${v}`)
      .join(', ') || 'no candidate (naive kernels)';
  return `matmul autotune: ${choice} (${r.fromCache ? 'cached for this adapter' : `measured in ${(r.ms / 1000).toFixed(1)} s`})`;
}

/** Forgets cached tunings (tests). */
export function clearMatmulTuneCache(): void {
  memoryCache.clear();
}

function parseTuning(text: string): MatmulTuning | null {
  try {
    const o = JSON.parse(text) as Record<string, string>;
    const out: MatmulTuning = {};
    for (const layout of TUNED_LAYOUTS) {
      const v = o[layout];
      if (v && (TUNE_CANDIDATES as readonly string[]).includes(v)) out[layout] = v as MatmulVariant;
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * The candidates on one layout's shapes: each checked once against the naive oracle, then timed round-robin
 * (every rep times every variant on every shape) so that a machine whose load drifts biases no candidate.
 * ms is the sum over the shapes of each shape's least time over the reps (GPU timestamps when present, else wall
 * per submit): other work on the machine only ever adds time, so the least is the most repeatable figure.
 */
export async function measureLayout(
  ctx: GpuContext,
  layout: MatmulLayout,
  shapes: readonly MatmulShape[],
  variants: readonly MatmulVariant[],
  reps: number,
  stop?: () => boolean,
): Promise<TuneMeasurement[]> {
  const check = () => {
    if (stop?.()) throw new TuneStopped();
  };
  const owned: Tensor[] = [];
  const t = <T extends Tensor>(x: T) => (owned.push(x), x);
  try {
    const ops = shapes.map((s) => {
      const rng = new Rng(s.M * 7919 + s.N * 31 + s.K);
      return {
        s,
        a: t(ctx.fromArray(randomArray(rng, s.M * s.K), s.transA ? [s.K, s.M] : [s.M, s.K], { label: 'tune.a' })),
        b: t(ctx.fromArray(randomArray(rng, s.K * s.N), s.transB ? [s.N, s.K] : [s.K, s.N], { label: 'tune.b' })),
        out: t(ctx.tensor([s.M, s.N], { label: 'tune.out' })),
        ref: t(ctx.tensor([s.M, s.N], { label: 'tune.ref' })),
      };
    });
    const relError = new Map<MatmulVariant, number>();
    for (const v of variants) {
      let worst = 0;
      for (const o of ops) {
        check();
        const opts = { transA: o.s.transA, transB: o.s.transB };
        const rec = ctx.recorder('tune.check');
        matmul(rec, o.ref, o.a, o.b, { ...opts, variant: 'naive' });
        matmul(rec, o.out, o.a, o.b, { ...opts, variant: v });
        rec.submit();
        const [want, got] = (await ctx.readMany([o.ref, o.out])) as Float32Array[];
        let maxDiff = 0;
        let maxRef = 0;
        for (let i = 0; i < want.length; i++) {
          maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]));
          maxRef = Math.max(maxRef, Math.abs(want[i]));
        }
        worst = Math.max(worst, maxDiff / (maxRef + 1e-6));
      }
      relError.set(v, worst);
    }
    const profile = ctx.device.features.has('timestamp-query');
    const least = new Map<MatmulVariant, number[]>(variants.map((v) => [v, ops.map(() => Infinity)]));
    for (let r = 0; r < reps; r++) {
      for (const v of variants) {
        const mins = least.get(v)!;
        for (const [i, o] of ops.entries()) {
          check();
          const rec = ctx.recorder('tune.time', { profile });
          const t1 = performance.now();
          matmul(rec, o.out, o.a, o.b, { transA: o.s.transA, transB: o.s.transB, variant: v });
          rec.submit();
          await ctx.flush();
          const wall = performance.now() - t1;
          mins[i] = Math.min(mins[i], profile ? (await rec.timings())[0].ms : wall);
        }
      }
    }
    return variants.map((variant) => {
      const err = relError.get(variant)!;
      const ms = least.get(variant)!.reduce((a, b) => a + b, 0);
      return {
        layout,
        variant,
        ms,
        relError: err,
        rejected: err > 1e-4 ? `differs from the naive oracle (${err.toExponential(1)})` : undefined,
      };
    });
  } finally {
    for (const x of owned) x.destroy();
  }
}
