// The real-size section of the bench: one GRPO step (rollouts + update) of the full SmolLM2-135M architecture
// (30 layers, hidden 576, 9/3 heads, head dim 64, intermediate 1536, vocabulary 49,152, tied; random weights),
// with LoRA and with full fine-tuning, driven as every run is (a RunSession over a Hugging Face folder served from
// memory, so the weights load through the checkpoint path and keep the dtype the run's config gives them). Reports
// s/step, tokens/s, the peak of the GPU tensor bytes (GpuContext.tensorBytes, what the memory-measured test
// compares with the plan) and the pipelines' compile time. On a CPU adapter (SwiftShader, lavapipe) the batch is
// small so a step takes minutes; on a GPU it is the issue's 8 prompts x 8 completions x 256 new tokens.

import { GpuProfiler, countsSince, type GpuContext } from '../gpu';
import { compileReport } from '../gpu/kernel';
import { NO_SINK, RunSession } from '../engine/run-session';
import { CHAR_TOKENIZER_PATH, type AssetLoader } from '../engine/start-policy';
import { encodeCheckpoint } from '../io/checkpoint';
import { parameterCount, type ModelConfig } from '../schema/model-config';
import { SMOLLM2_135M } from '../io/real-models.fixture';
import { buildCharTokenizerJson } from '../io/tokenizer';
import { resolveConfig, type RLConfig } from '../schema/config';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { benchParams } from './step';
import type { GrpoShape } from './grpo';
import type { RealSizeMode, RealSizeResult } from '../schema/bench-report';
import { phaseTable, type Roof } from './roofline';

/** Options of benchRealSizeStep: profile the measured step against `roof` (null: no roofline columns). */
export interface RealSizeOptions {
  profile?: { roof: Roof | null; top?: number };
}

/** The name the in-memory folder is served under (checkpoints/<name>/). */
const FOLDER = 'real-size-smollm2-135m';

/** The batch of one real-size step: small on a CPU adapter, the issue's on a GPU. */
export function realSizeShape(ctx: GpuContext, quick = false): GrpoShape {
  if (quick) return { prompts: 1, generations: 2, maxTokens: 4 };
  return ctx.report.isFallbackAdapter
    ? { prompts: 2, generations: 2, maxTokens: 16 }
    : { prompts: 8, generations: 8, maxTokens: 256 };
}

/** Serves one Hugging Face folder from memory (config.json, model.safetensors) and the character tokenizer. */
function memoryFolder(files: Record<string, string | Uint8Array>): AssetLoader {
  const get = (path: string) => {
    const name = path.startsWith(`checkpoints/${FOLDER}/`) ? path.slice(`checkpoints/${FOLDER}/`.length) : null;
    const f = name !== null ? files[name] : undefined;
    if (f !== undefined) return f;
    if (path === CHAR_TOKENIZER_PATH) return JSON.stringify(buildCharTokenizerJson());
    throw new Error(`the real-size bench has no file ${path}`);
  };
  return {
    text: async (path) => {
      const f = get(path);
      return typeof f === 'string' ? f : new TextDecoder().decode(f);
    },
    bytes: async (path) => {
      const f = get(path);
      return typeof f === 'string' ? new TextEncoder().encode(f) : f;
    },
  };
}

/** A random model's folder in memory, and its architecture. */
export interface RealSizeFolder {
  assets: AssetLoader;
  model: ModelConfig;
}

/**
 * The random SmolLM2-135M folder (f32 safetensors; the run's config decides how the weights are stored), or a
 * folder of another architecture (a test runs the section on a narrow one).
 */
export function realSizeFolder(model: ModelConfig = SMOLLM2_135M): RealSizeFolder {
  const { safetensors, configJson } = encodeCheckpoint({
    config: model,
    params: benchParams(model),
    // The character vocabulary's ids (tokenizer.ts's CHAR_SPECIAL_TOKENS order), the tokenizer the run falls back to.
    special: { padId: 0, bosId: 1, eosId: 2 },
    metadata: { made_by: 'the real-size bench: random weights' },
  });
  return { assets: memoryFolder({ 'config.json': configJson, 'model.safetensors': safetensors }), model };
}

/**
 * Each mode's run: the configuration of the issue's memory targets (src/rl/observation/memory.test.ts asserts their plans at
 * 8 x 8 x 256): bf16 storage, gradient checkpointing, a reference model (beta 0.04), no weight-update maps, one
 * minibatch (the trainer's default: one optimizer step per batch) and the micro-batch that fits, 4 sequences under
 * LoRA (rank 16) and 1 under full fine-tuning (gradient_accumulation_steps = rows / micro-batch: the gradients of
 * the micro-batches add up before the one step). `targetBytes` is the issue's budget for the peak at that batch.
 * docs/benchmarks/nvidia.md's figures up to 2026-11-28 were measured with minibatches of those sizes instead (num_minibatches =
 * rows / minibatch, so rows / minibatch optimizer steps a batch), at the same planned memory.
 */
export const REAL_SIZE_MODES = {
  lora: {
    label: 'LoRA r=16, micro-batch 4',
    microBatchRows: 4,
    targetBytes: 1.5 * 2 ** 30,
    extra: { lora_rank: 16, lora_alpha: 32 },
  },
  // The same run with the adapters merged into an f32 copy the sampler reads (rollout_merge_lora): decode steps
  // without adapter products, the sampler off the learner by float rounding only (no scoring pass added). The copy's
  // 405 MiB fit the target because the reference reads the policy's frozen base (derive().referenceIsBase).
  'lora-merged': {
    label: 'LoRA r=16 merged into an f32 sampler copy, micro-batch 4',
    microBatchRows: 4,
    targetBytes: 1.5 * 2 ** 30,
    extra: { lora_rank: 16, lora_alpha: 32, rollout_merge_lora: true },
  },
  full: { label: 'full fine-tune, micro-batch 1', microBatchRows: 1, targetBytes: 3 * 2 ** 30, extra: {} },
} as const satisfies Record<RealSizeMode, unknown>;

/** The run of one mode at `shape` (REAL_SIZE_MODES): `steps` GRPO steps (default two) on the in-memory folder. */
export function realSizeConfig(mode: RealSizeMode, shape: GrpoShape, steps = 2): RLConfig {
  const settings = REAL_SIZE_MODES[mode];
  const rows = shape.prompts * shape.generations;
  return resolveConfig('grpo', {
    checkpoint: FOLDER,
    task: 'copy',
    train_batch_size: shape.prompts,
    num_generations: shape.generations,
    max_completion_length: shape.maxTokens,
    steps,
    eval_every: 0,
    seed: 1,
    // The issue's storage: bf16 weights (and KV cache), f32 arithmetic; 'auto' would pick f32 wherever it fits.
    weight_dtype: 'bf16',
    beta: 0.04,
    gradient_checkpointing: true,
    // The weight-update maps keep an f32 copy of the starting weights (514.6 MiB here); the targets are without them.
    weight_stats_every: 0,
    gradient_accumulation_steps: rows / Math.min(rows, settings.microBatchRows),
    ...settings.extra,
  });
}

/**
 * Two GRPO steps of the real-size model in one mode: the first compiles the pipelines, the second is measured.
 * `folder` is shared between modes (building it encodes 135M weights).
 */
export async function benchRealSizeStep(
  ctx: GpuContext,
  mode: RealSizeMode,
  shape: GrpoShape,
  folder: RealSizeFolder,
  progress: (m: string) => void = () => {},
  options: RealSizeOptions = {},
): Promise<RealSizeResult> {
  const settings = REAL_SIZE_MODES[mode];
  // A profile runs a third step (the second stays the unprofiled measurement: timestamps split the passes).
  const steps = options.profile ? 3 : 2;
  const config = realSizeConfig(mode, shape, steps);
  const planned = rlResolvedMemoryPlan(config, folder.model, {
    maxBufferSize: ctx.device.limits.maxBufferSize,
    maxStorageBufferBindingSize: ctx.device.limits.maxStorageBufferBindingSize,
  }).plan;
  const compiledBefore = ctx.compileLog().length;
  const liveBefore = ctx.tensorBytes().live;
  ctx.resetTensorPeak();
  const session = await RunSession.open(
    { config, backend: 'webgpu', divergence: 'stop', inspectGroups: 0 },
    { assets: folder.assets, sink: NO_SINK, device: async () => ctx },
  );
  const metrics: Record<string, number>[] = [];
  const wall: number[] = [];
  const profiler = options.profile ? new GpuProfiler() : null;
  let profile: string[] | undefined;
  try {
    for (let i = 0; i < steps; i++) {
      progress(
        `real size, ${mode}: step ${i + 1} of ${steps}${i === 0 ? ' (compiles the pipelines)' : i === 2 ? ' (profiled)' : ''}`,
      );
      if (i === 2 && profiler) ctx.profiler = profiler;
      const before = ctx.counts.snapshot();
      const t0 = performance.now();
      const o = await session.runStep().finally(() => {
        ctx.profiler = null;
      });
      wall.push((performance.now() - t0) / 1000);
      if (o.kind === 'diverged') throw new Error(o.message);
      metrics.push(o.records[o.records.length - 1].metrics);
      if (i === 2 && profiler && options.profile)
        profile = await profileLines(profiler, countsSince(before, ctx.counts.snapshot()), folder.model.nLayers, {
          roof: options.profile.roof,
          top: options.profile.top,
        });
    }
  } finally {
    ctx.profiler = null;
    session.destroy();
  }
  const peakBytes = ctx.tensorBytes().peak - liveBefore;
  const compiled = ctx.compileLog().slice(compiledBefore);
  const m = metrics[1];
  const phases: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) if (k.startsWith('timing_s/')) phases[k.slice('timing_s/'.length)] = v;
  return {
    mode,
    shape: `${shape.prompts} prompts x ${shape.generations} completions, up to ${shape.maxTokens} new tokens`,
    parameters: parameterCount(folder.model),
    firstStepS: wall[0],
    stepS: wall[1],
    rolloutTokensPerS: m['perf/rollout_tokens_per_s'] ?? Number.NaN,
    trainTokensPerS: m['perf/train_tokens_per_s'] ?? Number.NaN,
    phases,
    peakBytes,
    plannedPeakBytes: planned.peakBytes,
    label: settings.label,
    targetBytes: settings.targetBytes,
    pipelines: compiled.length,
    compileS: compiled.reduce((s, r) => s + r.ms, 0) / 1000,
    slowestCompiles: compileReport(compiled, 5),
    ...(profile ? { profile } : {}),
  };
}

/** Decode per token step, prefill and the update and scoring passes per GRPO step: the phases a profile reports. */
const PROFILED_PHASES: readonly { phase: string; perStep: boolean; stepName: string }[] = [
  { phase: 'rollout.decode', perStep: true, stepName: 'decode token step' },
  { phase: 'rl.update', perStep: false, stepName: 'GRPO step' },
  { phase: 'rl.score', perStep: false, stepName: 'GRPO step' },
  { phase: 'rollout.prefill', perStep: false, stepName: 'GRPO step' },
];

/**
 * A profiled step's lines: the counts (dispatches per decode step and per layer, submits and readbacks per step,
 * pipelines), then the top kernels of each phase with the roofline columns.
 */
export async function profileLines(
  profiler: GpuProfiler,
  counts: ReturnType<typeof countsSince>,
  layers: number,
  opts: { roof: Roof | null; top?: number },
): Promise<string[]> {
  const { phases, kernels } = await profiler.result();
  const decode = counts.phases['rollout.decode'];
  const lines = [
    `counts of the step: ${counts.dispatches} dispatches, ${counts.submits} submits, ${counts.readbacks} readbacks, ${counts.pipelines} pipelines compiled, ${counts.bindGroups} bind groups made; ${Object.entries(
      counts.phases,
    )
      .map(([k, v]) => `${k} ${v.dispatches} dispatches in ${v.submits} submits`)
      .join(', ')}`,
    ...(decode
      ? [
          `decode: ${(decode.dispatches / decode.steps).toFixed(1)} dispatches per token step over ${layers} layers, ${(decode.bytes / decode.steps / 1e6).toFixed(2)} MB moved per token step, ${(decode.steps / decode.submits).toFixed(1)} token steps per submit, ${(decode.bindGroups / decode.steps).toFixed(1)} bind groups made (the first decode step's included) and ${((counts.recordingMs['rollout.decode'] ?? 0) / decode.steps).toFixed(2)} ms of host time recording per token step (timestamps on)`,
        ]
      : []),
    ...(opts.roof
      ? [
          `roof: copy bandwidth ${opts.roof.gbps.toFixed(2)} GB/s, arithmetic peak ${opts.roof.gflops.toFixed(1)} GFLOP/s`,
        ]
      : []),
  ];
  for (const want of PROFILED_PHASES) {
    const phase = phases.find((p) => p.phase === want.phase);
    if (!phase) continue;
    lines.push(
      '',
      ...phaseTable(phase, kernels, opts.roof, {
        steps: want.perStep ? phase.steps : 1,
        stepName: want.stepName,
        top: opts.top,
      }),
    );
  }
  return lines;
}
