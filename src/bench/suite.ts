// The benchmark suite: for each model preset at its real shapes, the training step by phase, the same step in
// TensorFlow.js and jax-js (WebGPU, same device) and in the CPU twin, our matmul against jax-js's at the model's
// shapes, rollouts (prefill and decode tokens/s), one GRPO step
// of the RL trainer by phase, the matmul variants and attention's kernel paths against the adapter's measured
// peak, and every kernel of the step. Takes a GpuContext, so Node (src/cli/bench.ts) and the browser
// (src/worker/bench.worker.ts) run exactly this code. No DOM, no React, no Node APIs.

import { COMPILE_BUDGET_MS, compileReport, countsSince, describeAdapter, type GpuContext, type Recorder } from '../gpu';
import {
  defaultVariantFor,
  layoutOf,
  matmul,
  matmulSplitK,
  matmulSplitKFits,
  matmulTuning,
  setMatmulTuning,
} from '../kernels/matmul';

import { autotuneMatmul, type TuneStore } from '../kernels/matmul-tune';
import { MODEL_PRESETS, parameterCount, type ModelConfig, type ModelPresetName } from '../schema/model-config';
import { generate } from '../model/generate';
import { assumedThroughput, DECODE_STEPS_PER_SUBMIT } from '../schema/step-estimate';
import { Rng, randomArray } from '../core/random';
import { benchAttentionPaths, benchMatmulVariants, modelMatmulShapes } from './autotune';
import { CpuTwinStep } from './cpu-twin';
import { benchGrpoStep, grpoBenchConfig, grpoShape } from './grpo';
import { estimateCheck, type EstimateFigures } from './estimate-check';
import { probeThroughput } from './throughput-probe';
import { benchRealSizeStep, realSizeConfig, realSizeFolder, realSizeShape } from './real-size';
import { SMOLLM2_135M } from '../io/real-models.fixture';
import { captureDispatches, groupDispatches, timeGroup } from './kernels';
import { hasTimestamps, interleavedSamples, median, wallSamples, yieldToEventLoop } from './measure';
import { measurePeak } from './peak';
import { measureBandwidth } from './roofline';
import {
  FIRST_STEP,
  REAL_SIZE_MODE_NAMES,
  REPORT_SCHEMA,
  type BenchReport,
  type BenchRow,
  type BenchShape,
  type EstimateCheck,
  type PresetInfo,
  type RealSizeResult,
} from '../schema/bench-report';
import { BENCH_STEP, OurStep, benchParams, randomBatch } from './step';

/**
 * The parts of the suite, in the order they run ('autotune': the matmul variants and attention paths at the model's
 * shapes, and the peak; 'real': one GRPO step of SmolLM2-135M's architecture with LoRA and full fine-tuning,
 * src/bench/real-size.ts, after the presets; 'matmul-4096': one 4096^2 x 4096 matmul against the measured peak).
 */
export const SUITE_SECTIONS = [
  'phase',
  'compare',
  'rollout',
  'grpo',
  'autotune',
  'kernel',
  'real',
  'matmul-4096',
] as const;
export type SuiteSection = (typeof SUITE_SECTIONS)[number];

/**
 * What runBench runs unless told (the page's ?bench, the tests): all but 'real' (a 135M model: 0.5 GiB of weights
 * before the optimizer) and 'matmul-4096' (137 GFLOP a repetition: a GPU's figure, `npm run bench:gpu`).
 */
export const DEFAULT_SECTIONS: readonly SuiteSection[] = SUITE_SECTIONS.filter(
  (s) => s !== 'real' && s !== 'matmul-4096',
);

/** What `npm run bench` runs unless told: the defaults and the real-size section. */
export const CLI_SECTIONS: readonly SuiteSection[] = SUITE_SECTIONS.filter((s) => s !== 'matmul-4096');

export interface BenchOptions {
  presets: readonly ModelPresetName[];
  /** Tiny shapes and 2 repetitions: checks that everything runs, measures little. */
  quick?: boolean;
  /** Timed repetitions per figure (after warm-up); default 5, quick 2. */
  reps?: number;
  sections?: readonly SuiteSection[];
  /** Include the TensorFlow.js peer in 'compare' (default true; it needs navigator.gpu). */
  tfjs?: boolean;
  /** Include the jax-js peer in 'compare': its step, and its matmul at the model's shapes (default true; it needs navigator). */
  jaxjs?: boolean;
  /** Include the CPU twin's step in 'compare' (default true). */
  cpuTwin?: boolean;
  /** Run the startup matmul autotune (autotuneMatmul) first (default true); false measures untuned kernels. */
  autotune?: boolean;
  /** Where the autotune keeps its per-adapter result between runs (optional). */
  tuneStore?: TuneStore;
  /** Re-measure the autotune even when a cached result exists. */
  retune?: boolean;
  /** Recorded in the report (the CLI command line, or the page). */
  command?: string;
  onRow?: (row: BenchRow) => void;
  onProgress?: (message: string) => void;
  /** Checked between measurements; when it returns true the suite stops and returns what it has. */
  cancelled?: () => boolean;
}

/** The shapes a preset is measured at: training batches near what SFT/RL use, the rollout shape. */
export function benchShape(preset: ModelPresetName, quick = false): BenchShape {
  if (quick) return { B: 2, T: 16, rollout: { rows: 4, prompt: 8, newTokens: 8 } };
  const ctxLen = MODEL_PRESETS[preset].contextLength;
  const prompt = 16;
  const newTokens = Math.min(64, ctxLen - prompt);
  const B = preset === 'nano' || preset === 'micro' ? 16 : preset === 'base' ? 4 : 8;
  return { B, T: 64, rollout: { rows: 64, prompt, newTokens } };
}

/** Runs the suite on `ctx` and returns the report; rows are also streamed through options.onRow. */
export async function runBench(ctx: GpuContext, options: BenchOptions): Promise<BenchReport> {
  const t0 = performance.now();
  const quick = options.quick ?? false;
  const reps = options.reps ?? (quick ? 2 : 5);
  const sections = new Set(options.sections ?? DEFAULT_SECTIONS);
  const rows: BenchRow[] = [];
  const notes: string[] = [];
  const presets: PresetInfo[] = [];
  const progress = options.onProgress ?? (() => {});
  const stop = options.cancelled ?? (() => false);
  const emit = (row: BenchRow) => {
    rows.push(row);
    options.onRow?.(row);
  };
  let autotune: BenchReport['autotune'];
  if (options.autotune ?? true) {
    progress('matmul autotune');
    const r = await autotuneMatmul(ctx, { store: options.tuneStore, force: options.retune, reps: quick ? 2 : 3 });
    autotune = { tuning: r.tuning, fromCache: r.fromCache, seconds: r.ms / 1000, measurements: r.measurements };
  } else setMatmulTuning(ctx.device, null);
  let peak: BenchReport['peak'];
  if (sections.has('autotune')) {
    progress('adapter arithmetic peak');
    peak = await measurePeak(ctx, reps);
  }
  // The figures the page's step estimate would take on this adapter, measured as the page measures them, so each
  // GRPO step measured below is set beside what the estimate says of it.
  const estimates: EstimateCheck[] = [];
  let figures: EstimateFigures | null = null;
  if ((sections.has('grpo') || sections.has('real')) && !stop()) {
    progress("the step estimate's throughput probe");
    figures = { probe: await probeThroughput(ctx), assumed: assumedThroughput(ctx.report.isFallbackAdapter) };
  }
  // A peer that cannot start is left out with a note; the rest of the suite runs.
  const startPeer = async <M>(
    name: string,
    load: () => Promise<M>,
    bind: (m: M) => Promise<string>,
  ): Promise<M | null> => {
    try {
      if (typeof navigator === 'undefined' || !navigator.gpu)
        throw new Error('navigator.gpu is missing (in Node, call installNavigatorGpu first)');
      const m = await load();
      progress(`${name}: ${await bind(m)} on our device`);
      return m;
    } catch (e) {
      notes.push(`${name} peer not run: ${(e as Error).message}`);
      return null;
    }
  };
  const tfjs =
    sections.has('compare') && (options.tfjs ?? true)
      ? await startPeer(
          'TensorFlow.js',
          () => import('./peer-tfjs'),
          (m) => m.useTfjsOnDevice(ctx),
        )
      : null;
  const jax =
    sections.has('compare') && (options.jaxjs ?? true)
      ? await startPeer(
          'jax-js',
          () => import('./peer-jaxjs'),
          (m) => m.useJaxOnDevice(ctx),
        )
      : null;
  try {
    for (const preset of options.presets) {
      if (stop()) break;
      const config = MODEL_PRESETS[preset];
      const shape = benchShape(preset, quick);
      const info: PresetInfo = { preset, parameters: parameterCount(config), shape };
      presets.push(info);
      const params = benchParams(config);
      const batch = randomBatch(config, shape.B, shape.T);
      const tokens = shape.B * shape.T;
      const batchShape = `B=${shape.B} T=${shape.T}`;
      const ours = OurStep.create(ctx, config, params, batch);
      try {
        progress(`${preset}: ${FIRST_STEP}`);
        const firstStart = performance.now();
        await ours.step();
        const firstMs = performance.now() - firstStart;
        // One recorder, submitted and waited for: the wall time of a phase as the trainer experiences it.
        const phase = (name: string, record: (rec: Recorder) => void) => async () => {
          const rec = ctx.recorder(`bench.${name}`);
          record(rec);
          rec.submit();
          await ctx.flush();
        };
        if (sections.has('phase') && !stop()) {
          progress(`${preset}: training step by phase`);
          const parts: [string, (rec: Recorder) => void][] = [
            ['forward', (rec) => ours.forward(rec)],
            ['loss (cross-entropy + dlogits)', (rec) => ours.lossAndGrad(rec)],
            ['backward', (rec) => ours.backward(rec)],
            ['optimizer (clip + AdamW)', (rec) => ours.optimizer(rec)],
            ['step', (rec) => ours.record(rec)],
          ];
          const samples = await interleavedSamples(
            parts.map(([name, record]) => [name, phase(name, record)]),
            reps,
          );
          for (const [name] of parts) {
            const ms = median(samples[name]);
            emit({
              preset,
              section: 'phase',
              name,
              shape: batchShape,
              ms,
              samples: samples[name].length,
              method: 'wall',
              tokensPerS: name === 'step' ? tokens / (ms / 1000) : undefined,
            });
          }
          // The preset's first step, once: it also compiles the pipelines the autotune and earlier presets did not.
          emit({
            preset,
            section: 'phase',
            name: FIRST_STEP,
            shape: batchShape,
            ms: firstMs,
            samples: 1,
            method: 'wall',
          });
          await yieldToEventLoop();
        }
        if (sections.has('compare') && !stop()) {
          progress(`${preset}: ours vs TensorFlow.js vs jax-js vs the CPU twin`);
          const tuning = matmulTuning(ctx.device);
          const tuned = Object.entries(tuning)
            .map(([layout, v]) => `${layout} ${v}`)
            .join(', ');
          const runs: [string, () => Promise<void>][] = [['ours', phase('step', (rec) => ours.record(rec))]];
          const notesOf: Record<string, string> = {
            ours: tuned ? `tuned matmul: ${tuned}` : 'untuned matmul (blocked)',
          };
          if (tuned) {
            // The same step with every matmul on the default 'blocked' variant: what the autotune bought.
            const untuned = phase('step', (rec) => ours.record(rec));
            runs.push([
              'untuned',
              async () => {
                setMatmulTuning(ctx.device, null);
                try {
                  await untuned();
                } finally {
                  setMatmulTuning(ctx.device, tuning);
                }
              },
            ]);
          }
          let peer: InstanceType<NonNullable<typeof tfjs>['TfjsLlama']> | null = null;
          let peerInputs: ReturnType<NonNullable<typeof tfjs>['tfjsBatch']> | null = null;
          if (tfjs) {
            const t = tfjs;
            peer = new t.TfjsLlama(config, params);
            peerInputs = t.tfjsBatch(batch.tokens, batch.targets);
            const [p, inp] = [peer, peerInputs];
            runs.push([
              'tfjs',
              async () => {
                p.trainStep(inp.tokens, inp.targets, shape.B, shape.T, BENCH_STEP).dispose();
                await t.tfjsSync(ctx.device);
              },
            ]);
            notesOf.tfjs = 'same device, f32, autograd';
          }
          let jaxPeer: InstanceType<NonNullable<typeof jax>['JaxLlama']> | null = null;
          let jaxInputs: ReturnType<NonNullable<typeof jax>['jaxBatch']> | null = null;
          if (jax) {
            const j = jax;
            jaxPeer = new j.JaxLlama(config, params);
            jaxInputs = j.jaxBatch(batch.tokens, batch.targets);
            const [p, inp] = [jaxPeer, jaxInputs];
            runs.push([
              'jax',
              async () => {
                const loss = p.trainStep(inp.tokens, inp.targets, shape.B, shape.T, BENCH_STEP);
                await j.jaxSync(ctx.device, [loss]);
                loss.dispose();
              },
            ]);
            notesOf.jax = 'same device, f32, one jit of valueAndGrad + AdamW (fused kernels)';
          }
          if (options.cpuTwin ?? true) {
            const twin = new CpuTwinStep(config, params, batch);
            runs.push(['cpu', async () => void twin.step(BENCH_STEP)]);
            notesOf.cpu = 'single-threaded';
          }
          try {
            // Round-robin, so that load from other processes drifting during the run biases no side; at most 3 reps,
            // as the peer and the twin are the slow sides here. The warm-up round compiles tfjs's shaders.
            const samples = await interleavedSamples(runs, Math.min(reps, 3), 1);
            const oursMs = median(samples.ours);
            const names: Record<string, string> = {
              ours: 'ours (WGSL)',
              untuned: 'ours, matmul untuned (blocked)',
              tfjs: 'TensorFlow.js WebGPU',
              jax: 'jax-js WebGPU (jit)',
              cpu: 'CPU twin (reference JS, f32)',
            };
            for (const [key] of runs) {
              const ms = median(samples[key]);
              emit({
                preset,
                section: 'compare',
                name: names[key],
                shape: batchShape,
                ms,
                samples: samples[key].length,
                method: 'wall',
                vsOurs: ms / oursMs,
                note: notesOf[key],
              });
            }
          } catch (e) {
            notes.push(`${preset}: comparison failed: ${(e as Error).message.split('\n')[0]}`);
          } finally {
            peerInputs?.dispose();
            peer?.dispose();
            jaxInputs?.dispose();
            jaxPeer?.dispose();
          }
          if (jax && !stop()) {
            progress(`${preset}: our matmul vs jax-js's at the model's shapes`);
            try {
              for (const row of await benchMatmulVsJax(ctx, jax, config, shape.B * shape.T, Math.max(reps, 3)))
                emit({ preset, ...row });
            } catch (e) {
              notes.push(`${preset}: matmul comparison with jax-js failed: ${(e as Error).message.split('\n')[0]}`);
            }
          }
          await yieldToEventLoop();
        }
        if (sections.has('rollout') && !stop()) {
          progress(`${preset}: rollouts`);
          for (const row of await benchRollout(ours, shape, reps)) emit({ preset, ...row });
        }
        if (sections.has('grpo') && !stop()) {
          progress(`${preset}: GRPO steps (trainer)`);
          try {
            const grpoReps = Math.max(1, Math.min(reps, 2));
            const grpoRows = await benchGrpoStep(ctx, preset, grpoShape(preset, quick), grpoReps);
            for (const row of grpoRows) emit({ preset, ...row });
            if (figures) {
              const seconds = (name: string) => (grpoRows.find((r) => r.name === name)?.ms ?? 0) / 1000;
              estimates.push(
                estimateCheck(
                  `${preset} GRPO`,
                  grpoBenchConfig(preset, grpoShape(preset, quick), grpoReps),
                  MODEL_PRESETS[preset],
                  {
                    stepS: seconds('step'),
                    phases: {
                      gen: seconds('gen'),
                      old_log_prob: seconds('old_log_prob'),
                      update: seconds('update_actor'),
                    },
                  },
                  figures,
                ),
              );
            }
          } catch (e) {
            notes.push(`${preset}: GRPO step failed: ${(e as Error).message.split('\n')[0]}`);
          }
        }
        if (sections.has('autotune') && !stop()) {
          progress(`${preset}: matmul variants at the model's shapes`);
          for (const row of await benchMatmulVariants(ctx, config, shape, reps)) emit({ preset, ...row });
          progress(`${preset}: attention kernel paths at the training shape`);
          for (const row of await benchAttentionPaths(ctx, config, shape, reps)) emit({ preset, ...row });
        }
        if (sections.has('kernel') && !stop()) {
          const rec = ctx.recorder('bench.capture');
          const captured = captureDispatches(rec, (r) => ours.record(r));
          rec.submit();
          await ctx.flush();
          const groups = groupDispatches(captured);
          let sum = 0;
          for (const [i, g] of groups.entries()) {
            if (stop()) break;
            if (i % 10 === 0)
              progress(`${preset}: kernels ${i + 1}-${Math.min(i + 10, groups.length)} of ${groups.length}`);
            const k = await timeGroup(ctx, g, reps);
            sum += k.ms * g.count;
            emit({
              preset,
              section: 'kernel',
              name: g.name,
              shape: g.shape,
              ms: k.ms,
              samples: k.samples,
              method: k.method,
              perStep: g.count,
              gflops: k.gflops,
              gbps: k.gbps,
            });
            if (i % 4 === 3) await yieldToEventLoop();
          }
          if (sections.has('phase')) {
            emit({
              preset,
              section: 'phase',
              name: 'kernel sum',
              shape: `${captured.length} dispatches`,
              ms: sum,
              samples: reps,
              method: hasTimestamps(ctx) ? 'timestamp' : 'wall',
            });
          }
        }
      } finally {
        ours.destroy();
      }
    }
  } finally {
    if (tfjs) tfjs.releaseTfjs();
  }
  let bigMatmul: BenchReport['bigMatmul'];
  if (sections.has('matmul-4096') && !stop()) {
    progress('matmul 4096^2 x 4096');
    bigMatmul = await benchBigMatmul(ctx, quick ? 512 : 4096, reps, peak?.gflops);
  }
  let modelMatmuls: BenchReport['modelMatmuls'];
  if (sections.has('matmul-4096') && !stop()) {
    progress("SmolLM2-135M's own matmuls");
    modelMatmuls = await benchModelMatmuls(ctx, quick, reps, peak?.gflops);
  }
  const realSize: RealSizeResult[] = [];
  if (sections.has('real') && !stop()) {
    progress('real size: the copy bandwidth, and encoding a random SmolLM2-135M folder');
    // Each mode's third step is profiled against the adapter's ceilings (the report's roofline tables).
    const roof = { gbps: await measureBandwidth(ctx), gflops: peak?.gflops ?? (await measurePeak(ctx, reps)).gflops };
    const folder = realSizeFolder();
    for (const mode of REAL_SIZE_MODE_NAMES) {
      if (stop()) break;
      try {
        const shape = realSizeShape(ctx, quick);
        const result = await benchRealSizeStep(ctx, mode, shape, folder, progress, { profile: { roof } });
        realSize.push(result);
        if (figures)
          estimates.push(
            estimateCheck(
              `real size, ${mode}`,
              realSizeConfig(mode, shape),
              folder.model,
              {
                stepS: result.stepS,
                phases: {
                  gen: result.phases.gen ?? 0,
                  old_log_prob: result.phases.old_log_prob ?? 0,
                  update: result.phases.update_actor ?? 0,
                },
              },
              figures,
            ),
          );
      } catch (e) {
        notes.push(`real size, ${mode}: failed: ${(e as Error).message.split('\n')[0]}`);
      }
    }
  }
  return {
    schema: REPORT_SCHEMA,
    createdAt: new Date().toISOString(),
    command: options.command ?? 'runBench',
    adapter: ctx.report,
    device: describeAdapter(ctx.report),
    kernelTiming: hasTimestamps(ctx) ? 'timestamp' : 'wall',
    options: { presets: [...options.presets], quick, reps, sections: [...sections] },
    presets,
    rows,
    notes,
    autotune,
    peak,
    realSize,
    ...(estimates.length ? { estimates, probeSource: figures?.probe.source } : {}),
    bigMatmul,
    modelMatmuls,
    compiles: compileSummary(ctx),
    totalSeconds: (performance.now() - t0) / 1000,
  };
}

/**
 * Our matmul (the variant the device's tuning picks) against jax-js's jit-compiled matmul, at the model's four
 * characteristic shapes, on the same data. Both sides are timed the same way: `inner` products submitted, then
 * waited for (wall clock; jax-js submits one command buffer per kernel, we record the `inner` into one), round-robin.
 */
async function benchMatmulVsJax(
  ctx: GpuContext,
  jax: typeof import('./peer-jaxjs'),
  config: ModelConfig,
  N: number,
  reps: number,
  inner = 4,
): Promise<Omit<BenchRow, 'preset'>[]> {
  const rows: Omit<BenchRow, 'preset'>[] = [];
  const tuning = matmulTuning(ctx.device);
  for (const s of modelMatmulShapes(config, N)) {
    const rng = new Rng(s.M * 7919 + s.N * 31 + s.K);
    const aData = randomArray(rng, s.M * s.K);
    const bData = randomArray(rng, s.K * s.N);
    const a = ctx.fromArray(aData, s.transA ? [s.K, s.M] : [s.M, s.K], { label: 'bench.mm.a' });
    const b = ctx.fromArray(bData, s.transB ? [s.N, s.K] : [s.K, s.N], { label: 'bench.mm.b' });
    const out = ctx.tensor([s.M, s.N], { label: 'bench.mm.out' });
    const peer = new jax.JaxMatmul(s, aData, bData);
    const tuned = tuning[layoutOf(s)];
    const variant = defaultVariantFor(tuned ?? 'blocked', s);
    try {
      const samples = await interleavedSamples(
        [
          [
            'ours',
            async () => {
              const rec = ctx.recorder('bench.matmul');
              for (let i = 0; i < inner; i++) matmul(rec, out, a, b, { transA: s.transA, transB: s.transB });
              rec.submit();
              await ctx.flush();
            },
          ],
          [
            'jax',
            async () => {
              const products = Array.from({ length: inner }, () => peer.run());
              await jax.jaxSync(ctx.device, products);
              for (const p of products) p.dispose();
            },
          ],
        ],
        reps,
      );
      const label = `${s.M}x${s.N}x${s.K} ${s.transA ? 'A^T' : 'A'}*${s.transB ? 'B^T' : 'B'}`;
      const flop = 2 * s.M * s.N * s.K;
      const oursMs = median(samples.ours) / inner;
      for (const [key, name, note] of [
        ['ours', `ours (${variant}): ${s.role}`, 'tuned variant'],
        ['jax', `jax-js (jit): ${s.role}`, ''],
      ] as const) {
        const ms = median(samples[key]) / inner;
        rows.push({
          section: 'matmul-peer',
          name,
          shape: label,
          ms,
          samples: samples[key].length,
          method: 'wall',
          gflops: flop / (ms / 1000) / 1e9,
          vsOurs: ms / oursMs,
          note,
        });
      }
    } finally {
      peer.dispose();
      for (const t of [a, b, out]) t.destroy();
    }
  }
  return rows;
}

/**
 * Rollout throughput with the engine's generate(): a prefill-only call (one sampled token) and a full call
 * (newTokens decode steps, no early stop). The full call waits for the GPU once its prefill is submitted and times
 * the rest (newTokens - 1 decode steps and the final readback) from there: the decode's time per step is the median
 * of those times over newTokens - 1, one clock's interval, never a difference of two runs. The full call runs again
 * with each decode step submitted alone (stepsPerSubmit 1, the engine before 2026-12-07), so the row's vsOurs says
 * what sharing command buffers gains on this adapter. The whole rollout's time includes that one wait.
 */
async function benchRollout(ours: OurStep, shape: BenchShape, reps: number): Promise<Omit<BenchRow, 'preset'>[]> {
  const { rows, prompt, newTokens } = shape.rollout;
  const V = ours.model.config.vocabSize;
  const rng = new Rng(5);
  const prompts = Array.from({ length: rows }, () => [
    1,
    ...Array.from({ length: prompt - 1 }, () => 3 + rng.int(V - 3)),
  ]);
  // The full calls' host time recording their decode steps, per step (GpuCounts.recordingMs).
  const hostPerStep: number[] = [];
  // Each full call's decode time, from the prefill's completion to the end, keyed by the call's name.
  const decodeMs: Record<'full' | 'alone', number[]> = { full: [], alone: [] };
  const ctx = ours.model.ctx;
  const gen = (S: number, decode?: { key: 'full' | 'alone'; stepsPerSubmit?: number }) => async () => {
    const before = ctx.counts.snapshot();
    let decodeStart = 0;
    await generate(ours.model, prompts, {
      maxNewTokens: S,
      sampler: { temperature: 1, seed: 1 },
      eosId: 2,
      padId: 0,
      checkEvery: 0,
      stepsPerSubmit: decode?.stepsPerSubmit,
      afterPrefill: decode
        ? async () => {
            await ctx.flush();
            decodeStart = performance.now();
          }
        : undefined,
    });
    if (!decode) return;
    decodeMs[decode.key].push(performance.now() - decodeStart);
    if (decode.key !== 'full') return;
    const c = countsSince(before, ctx.counts.snapshot());
    const steps = c.phases['rollout.decode']?.steps ?? 0;
    if (steps > 0) hostPerStep.push((c.recordingMs['rollout.decode'] ?? 0) / steps);
  };
  // At least 3 rounds, so one stall in a round does not become the figure.
  const { pre, full, alone } = await interleavedSamples(
    [
      ['pre', gen(1)],
      ['full', gen(newTokens, { key: 'full' })],
      ['alone', gen(newTokens, { key: 'alone', stepsPerSubmit: 1 })],
    ],
    Math.max(reps, 3),
  );
  const preMs = median(pre);
  const fullMs = median(full);
  // The timed rounds' decode times (the warm-up rounds' come first).
  const perStepOf = (xs: number[], n: number) => median(xs.slice(-n)) / Math.max(1, newTokens - 1);
  const perStep = perStepOf(decodeMs.full, full.length);
  const perStepAlone = perStepOf(decodeMs.alone, alone.length);
  /** A row of `tokens` tokens in `ms`, from `samples` timings. */
  const row = (name: string, shape: string, ms: number, samples: number, tokens: number) => ({
    section: 'rollout' as const,
    name,
    shape,
    ms,
    samples,
    method: 'wall' as const,
    tokensPerS: tokens / (ms / 1000),
  });
  return [
    row('prefill (+ first token)', `${rows} x ${prompt}`, preMs, pre.length, rows * prompt),
    row('decode, per step', `${rows} rows`, perStep, full.length, rows),
    {
      ...row('decode, per step, each submitted alone', `${rows} rows`, perStepAlone, alone.length, rows),
      vsOurs: perStepAlone / perStep,
      note: `${DECODE_STEPS_PER_SUBMIT} steps share a submit in the engine's rollouts`,
    },
    {
      ...row('decode, host time recording a step', `${rows} rows`, median(hostPerStep), hostPerStep.length, rows),
      method: 'host' as const,
      tokensPerS: undefined, // a share of a step's time, not a rate of tokens
      note: "the CPU's share of a decode step (the GPU's work overlaps it): near the step's time, the host bounds it",
    },
    row('whole rollout', `${rows} x (${prompt} + ${newTokens})`, fullMs, full.length, rows * newTokens),
  ];
}

/** The run's pipeline compiles: count, total seconds, and the slowest (compileReport's lines). */
function compileSummary(ctx: GpuContext): NonNullable<BenchReport['compiles']> {
  const log = ctx.compileLog();
  return {
    pipelines: log.length,
    seconds: log.reduce((s, r) => s + r.ms, 0) / 1000,
    overBudget: log.filter((r) => r.ms > COMPILE_BUDGET_MS).length,
    slowest: compileReport(log, 10),
  };
}

/**
 * One N x N x N matmul (A*B, the tuned variant for that layout) timed by wall clock: `reps` submits of 4 matmuls
 * each, waited for, after a warm-up; GFLOP/s and the fraction of the measured peak (when there is one).
 */
/**
 * SmolLM2-135M's products (autotune.ts's modelMatmulShapes, the forward's weights stored bf16 as the real-size runs
 * store them) at a decode step's 64 rows and a training micro-batch's 1024 rows (8 and 64 when `quick`), each timed
 * like benchBigMatmul with the variant matmul() picks by default.
 */
async function benchModelMatmuls(
  ctx: GpuContext,
  quick: boolean,
  reps: number,
  peakGflops: number | undefined,
): Promise<NonNullable<BenchReport['modelMatmuls']>> {
  const out: NonNullable<BenchReport['modelMatmuls']> = [];
  const rng = new Rng(8);
  const tuning = matmulTuning(ctx.device);
  // A decode step's rows, then a training micro-batch's (each shape at both: the weight-gradient product too).
  for (const rows of quick ? [8, 64] : [64, 1024]) {
    for (const s of modelMatmulShapes(SMOLLM2_135M, rows)) {
      // The forward's weight operand (x W^T) is stored bf16 under LoRA and in the rollout; the rest are f32.
      const half = Boolean(s.transB);
      const a = ctx.fromArray(randomArray(rng, s.M * s.K), s.transA ? [s.K, s.M] : [s.M, s.K], { label: 'bench.mm.a' });
      const bShape = s.transB ? [s.N, s.K] : [s.K, s.N];
      const b = half
        ? ctx.tensor(bShape, { dtype: 'bf16', label: 'bench.mm.b' })
        : ctx.fromArray(randomArray(rng, s.K * s.N), bShape, { label: 'bench.mm.b' });
      const c = ctx.tensor([s.M, s.N], { label: 'bench.mm.out' });
      const inner = 4;
      // x W^T at a decode step's rows: the split-K product beside matmul()'s (matmulSplitK).
      const kernels: { variant: string; record: (rec: Recorder) => void }[] = [
        {
          variant: defaultVariantFor(tuning[layoutOf(s)] ?? 'blocked', s),
          record: (rec) => matmul(rec, c, a, b, { transA: s.transA, transB: s.transB }),
        },
      ];
      if (s.transB && !s.transA && rows <= 64 && matmulSplitKFits(s.M, s.N, s.K))
        kernels.push({ variant: 'split-k', record: (rec) => matmulSplitK(rec, c, a, b) });
      try {
        for (const { variant, record } of kernels) {
          const samples = await wallSamples(async () => {
            const rec = ctx.recorder('bench.model-matmul');
            for (let i = 0; i < inner; i++) record(rec);
            rec.submit();
            await ctx.flush();
          }, reps);
          const ms = median(samples) / inner;
          const gflops = (2 * s.M * s.N * s.K) / (ms / 1000) / 1e9;
          out.push({
            role: `${rows} rows: ${s.role}`,
            shape: `${s.M}x${s.N}x${s.K}${half ? ' (B bf16)' : ''}`,
            variant,
            ms,
            gflops,
            ofPeak: peakGflops ? gflops / peakGflops : undefined,
          });
        }
      } finally {
        for (const t of [a, b, c]) t.destroy();
      }
    }
  }
  return out;
}

async function benchBigMatmul(
  ctx: GpuContext,
  N: number,
  reps: number,
  peakGflops: number | undefined,
): Promise<NonNullable<BenchReport['bigMatmul']>> {
  const rng = new Rng(7);
  const a = ctx.fromArray(randomArray(rng, N * N), [N, N], { label: 'bench.big.a' });
  const b = ctx.fromArray(randomArray(rng, N * N), [N, N], { label: 'bench.big.b' });
  const out = ctx.tensor([N, N], { label: 'bench.big.out' });
  const inner = 4;
  try {
    const samples = await wallSamples(async () => {
      const rec = ctx.recorder('bench.big-matmul');
      for (let i = 0; i < inner; i++) matmul(rec, out, a, b);
      rec.submit();
      await ctx.flush();
    }, reps);
    const ms = median(samples) / inner;
    const gflops = (2 * N ** 3) / (ms / 1000) / 1e9;
    const variant = defaultVariantFor(matmulTuning(ctx.device)[layoutOf({})] ?? 'blocked', { M: N, N, K: N });
    return { N, variant, ms, gflops, ofPeak: peakGflops ? gflops / peakGflops : undefined, samples: samples.length };
  } finally {
    for (const t of [a, b, out]) t.destroy();
  }
}
