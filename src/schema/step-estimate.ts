// The work of one GRPO step before it runs, and its seconds on an adapter: from the RL config and the model config
// alone (a real model's config.json is enough, nothing downloaded), the FLOPs and bytes of the rollouts (prefill and
// KV-cache decode, reading the weights and the cache once per decode step), the scoring forwards (old policy,
// reference, critic), the update's forward and backward (LoRA: no base weight gradients; gradient checkpointing: one
// more forward; the LM head over completion tokens in row chunks) and AdamW; then seconds with an adapter's measured
// throughput (src/bench/throughput-probe.ts, or the figures of BENCHMARKS.md for its kind of adapter). A roofline with
// a cost per submit and per dispatch: an estimate, not a measurement; docs/lab.md says how close it came. Pure: no device.

import { headDim } from '../core/model-shapes';
import { numel } from '../core/host-tensor';
import { parseLoraTargets, projectionShape, type LoraTarget } from '../core/lora-layout';
import { resolveWeightDtype, WEIGHT_DTYPE_BYTES } from '../core/half';
import { parameterCount, type ModelConfig } from './model-config';
import { SUM_PI_SQUARED_ESTIMATORS } from './algorithm-names';
import { derive, type RLConfig } from './config';

const F32 = 4;

/** The four phases of a step, named as the trainer's timing_s/ metrics name them. */
export type StepPhase = 'gen' | 'old_log_prob' | 'update_actor' | 'optimizer';

/** The work of one phase: arithmetic, memory traffic, and the host round trips and kernel launches it takes. */
export interface PhaseWork {
  phase: StepPhase;
  /** Floating-point operations (a multiply-add counts 2). */
  flops: number;
  /** Bytes read and written from GPU memory (weights, KV cache, logits, activations, optimizer state). */
  bytes: number;
  /** Command buffers submitted (the prefill's, one per DECODE_STEPS_PER_SUBMIT decode steps; a few per minibatch). */
  submits: number;
  /**
   * The rollout's submits with each decode step in its own command buffer, as the engine ran before 2026-12-07 and
   * the calibrations were measured (gen only).
   */
  unbatchedSubmits?: number;
  /** Compute passes dispatched. */
  dispatches: number;
  /** What was counted, in words. */
  detail: string;
}

export interface StepWork {
  phases: PhaseWork[];
  flops: number;
  bytes: number;
}

/** An adapter's speed, as the estimate uses it. */
export interface Throughput {
  /** FLOP/s of a training-shaped product (a thousand rows or more). */
  flopsPerSecond: number;
  /** Bytes/s of a decode-shaped product (few rows: it streams the weight matrix). */
  bytesPerSecond: number;
  /** Seconds of one submit-and-wait round trip of a small pass. */
  submitSeconds: number;
  /** Seconds a compute pass costs beyond its work (launch, barrier). */
  dispatchSeconds: number;
  /** Where the figures come from, in words. */
  source: string;
  /** How the roofline's seconds compare with measured steps on this kind of adapter; absent: taken as they are. */
  calibration?: EstimateCalibration;
}

/**
 * How far the roofline lands from measured steps on a kind of adapter (scripts/calibrate-step-estimate.ts:
 * `npm run calibrate-estimate` prints measured and estimated seconds of nano, micro and tiny-qwen2 steps): `factor`
 * is what the estimate is multiplied by (about the middle of measured / estimated over the runs calibrated), and
 * `spread` the lowest and highest measured / (estimated x factor) they gave, which the page shows as the range.
 */
export interface EstimateCalibration {
  factor: number;
  spread: readonly [number, number];
  /** The runs it came from, in words. */
  note: string;
  /**
   * Its runs submitted each decode step alone (before 2026-12-07): what sharing command buffers gains is not measured
   * on that kind of adapter, so the range's high end is the estimate at the unbatched submits.
   */
  measuredUnbatched?: boolean;
}

/**
 * SwiftShader with the probe's figures: the roofline counts too little of what a step costs beyond its products
 * (the host's work between submits, the sampler's readbacks, buffer writes): 0.44x, 0.70x and 0.31x the measured
 * step of nano, micro and tiny-qwen2 runs at load 24-25 on the 2-core machine, and 0.42x, 0.37x and 0.20x at load
 * 13-23. Times 2.6 (about their geometric middle), all six fall within 0.55-1.95x, so within 2x. Measured on a busy
 * shared machine (the probe measures the same load, so the ratio moves less than the seconds, but the load changed
 * during the runs); rerun `npm run calibrate-estimate` idle to tighten it.
 */
export const SOFTWARE_CALIBRATION: EstimateCalibration = {
  factor: 2.6,
  spread: [0.55, 1.95],
  note: 'SwiftShader, nano/micro/tiny-qwen2 steps on a loaded 2-core machine',
  measuredUnbatched: true,
};

/** A GPU's default figures were fitted to an H100's nano-to-base steps (0.86-1.04x) and gave 0.83-0.90x an H200's SmolLM2-135M steps. */
export const GPU_CALIBRATION: EstimateCalibration = {
  factor: 1,
  spread: [0.95, 1.25],
  note: "an H100's nano-to-base steps and an H200's SmolLM2-135M steps",
  measuredUnbatched: true,
};

/** The calibration of an adapter's kind: a software adapter (SwiftShader) or a GPU. */
export function calibrationFor(software: boolean): EstimateCalibration {
  return software ? SOFTWARE_CALIBRATION : GPU_CALIBRATION;
}

/** A step's seconds, by phase, and how they were reached. */
export interface StepEstimate {
  seconds: number;
  /**
   * The seconds measured steps may take, low and high: the calibration's spread around `seconds`, the high end taken
   * at the unbatched submits where the calibration was measured so (EstimateCalibration.measuredUnbatched).
   */
  range: readonly [number, number];
  phases: { phase: StepPhase; seconds: number; bound: 'compute' | 'memory' | 'launch' }[];
  work: StepWork;
  throughput: Throughput;
}

/** The model's widths the counts use. */
function widths(m: ModelConfig) {
  const hd = headDim(m);
  return { C: m.dModel, F: m.dFF, V: m.vocabSize, L: m.nLayers, q: m.nHeads * hd, kv: m.nKvHeads * hd, NH: m.nHeads };
}

/** (out, in) of each projection of a layer. */
function projections(m: ModelConfig): Record<LoraTarget, [number, number]> {
  const { C, F, q, kv } = widths(m);
  return {
    q_proj: [q, C],
    k_proj: [kv, C],
    v_proj: [kv, C],
    o_proj: [C, q],
    gate_proj: [F, C],
    up_proj: [F, C],
    down_proj: [C, F],
  };
}

/** Multiply-adds of one token through one layer's seven projections (the weights of a layer, biases aside). */
export function layerMatmulMacsPerToken(m: ModelConfig): number {
  return Object.values(projections(m)).reduce((s, [o, i]) => s + o * i, 0);
}

/** Multiply-adds of one token's attention at one layer over `keys` positions: q.k and the weighted sum of v. */
export function attentionMacsPerToken(m: ModelConfig, keys: number): number {
  const { q } = widths(m);
  return 2 * q * keys;
}

/** Multiply-adds of the causal attention of a row of `tokens` positions at one layer: position t sees t + 1 keys. */
export function causalAttentionMacs(m: ModelConfig, tokens: number): number {
  return attentionMacsPerToken(m, (tokens * (tokens + 1)) / 2);
}

/** LoRA adapters' multiply-adds per token of one layer, forward: x A^T then (x A^T) B^T on each target. */
export function loraMacsPerToken(m: ModelConfig, rank: number, targets: readonly LoraTarget[]): number {
  const p = projections(m);
  return targets.reduce((s, t) => s + rank * (p[t][0] + p[t][1]), 0);
}

/** Kernels a layer's forward dispatches (two norms, q/k/v, RoPE, attention, o, residuals, gate/up, SwiGLU, down). */
const FORWARD_DISPATCHES_PER_LAYER = 12;
/**
 * Kernels a layer of a decode step dispatches (src/model/counts.test.ts asserts the same): q/k/v with the norm folded
 * in, RoPE with the KV writes, attention, o with the residual, gate/up with the norm and SwiGLU folded in, down.
 * LoRA: see decodeDispatches.
 */
const DECODE_DISPATCHES_PER_LAYER = 6;
/** The embedding lookup, the final norm, the head and the sampler's passes of a decode step. */
const DECODE_DISPATCHES_EXTRA = 7;
/**
 * Decode steps recorded into one command buffer (src/model/generate.ts): the early-stop check's period, so a check
 * never waits on a half-filled batch of steps.
 */
export const DECODE_STEPS_PER_SUBMIT = 8;

/**
 * Command buffers a rollout of up to `maxNewTokens` tokens submits when it runs to the end (generate's loop): the
 * prefill's, then one after every `stepsPerSubmit`-th token step (the prefill counted) and one after the last.
 */
export function rolloutSubmits(maxNewTokens: number, stepsPerSubmit = DECODE_STEPS_PER_SUBMIT): number {
  if (maxNewTokens <= 1) return 1;
  // Token steps 2..S end a command buffer at each multiple of stepsPerSubmit, and at S.
  const atMultiples = Math.floor(maxNewTokens / stepsPerSubmit) - (stepsPerSubmit === 1 ? 1 : 0);
  return 1 + atMultiples + (maxNewTokens % stepsPerSubmit === 0 ? 0 : 1);
}
/** Submit-and-wait round trips of a training forward + backward + objective on one minibatch. */
const UPDATE_SUBMITS_PER_MINIBATCH = 8;
/** AdamW's floating-point operations per trained value (moments, bias corrections, the update, weight decay). */
const ADAMW_FLOPS_PER_VALUE = 12;
/** AdamW's memory traffic per trained value: read weight, gradient and two moments; write weight and moments. */
const ADAMW_VALUES_MOVED = 7;

/**
 * The dispatches of one decode step: per layer and outside the layers, with LoRA of `rank` on `targets` or without
 * (src/model/counts.test.ts checks these against the counted decode step), as src/model/gpu-model.ts records them.
 * At a rank divisible by 4 each adapted product adds its adapters' delta in its own epilogue after one x A^T product:
 * q, k and v all adapted share one (+1; +3 more where the device binds fewer than 10 storage buffers,
 * `qkvEpilogue` false, and their deltas stay products of their own), gate and up both adapted one pair (+1), o and
 * down one each (+1). Otherwise an adapted projection adds its two products (x A^T, y += s xa B^T), adapted q/k/v
 * their input norm (+1) and adapted gate/up their norm, two products and SwiGLU apart (+3).
 */
export function decodeDispatches(
  lora: { rank: number; targets: readonly LoraTarget[] } | null,
  qkvEpilogue = true,
): { perLayer: number; fixed: number } {
  const fixed = DECODE_DISPATCHES_EXTRA;
  if (!lora) return { perLayer: DECODE_DISPATCHES_PER_LAYER, fixed };
  const count = (...tgs: LoraTarget[]) => tgs.filter((t) => lora.targets.includes(t)).length;
  const fused = lora.rank % 4 === 0;
  const qkv = count('q_proj', 'k_proj', 'v_proj');
  const gateUp = count('gate_proj', 'up_proj');
  let perLayer = DECODE_DISPATCHES_PER_LAYER;
  if (qkv === 3 && fused) perLayer += qkvEpilogue ? 1 : 4;
  else if (qkv > 0) perLayer += 1 + 2 * qkv;
  if (gateUp === 2 && fused) perLayer += 1;
  else if (gateUp > 0) perLayer += 3 + 2 * gateUp;
  perLayer += (fused ? 1 : 2) * count('o_proj', 'down_proj');
  return { perLayer, fixed };
}

/** Prompt tokens the estimate assumes: the config's bound, as the memory plan takes it. */
export interface StepWorkOptions {
  /** Longest prompt in tokens (default: derive()'s bound, one token a character, as the memory plan assumes). */
  promptTokens?: number;
  /**
   * Decode steps per command buffer (default DECODE_STEPS_PER_SUBMIT, as generate records them; 1 is the engine
   * before 2026-12-07, which the GPU figures were fitted to).
   */
  decodeStepsPerSubmit?: number;
}

/**
 * The work of one rollout step of `config` on `model`, phase by phase, counted as the trainer runs it
 * (src/rl/algorithm/trainer.ts): N = B*G rows sampled from P prompt tokens for S completion tokens; scoring passes only when
 * the ratio is not 1 or a reference, critic or pi_old statistic needs them; num_iterations passes of the update over
 * every row, a forward and backward per micro-batch (gradient_accumulation_steps a minibatch); one AdamW step per
 * minibatch per pass.
 */
export function stepWork(config: RLConfig, model: ModelConfig, options: StepWorkOptions = {}): StepWork {
  const d = derive(config);
  const { C, V, L, kv } = widths(model);
  const N = d.sequencesPerStep;
  const P = options.promptTokens ?? d.maxPromptTokens;
  const S = d.maxCompletionLength;
  const T = P + S;
  const lora = config.lora_rank > 0 ? { rank: config.lora_rank, targets: parseLoraTargets(config.lora_targets) } : null;
  const layerMacs = layerMatmulMacsPerToken(model);
  const loraMacs = lora ? loraMacsPerToken(model, lora.rank, lora.targets) : 0;
  const params = parameterCount(model);
  // rank x (in + out) values per target per layer: the adapters' multiply-adds per token are their values.
  const loraParams = loraMacs * L;
  const trained = lora ? loraParams : params;
  // Frozen weights (the LoRA base, the reference) at weight_dtype's width; 'auto' is taken as f32 here (the memory
  // plan decides it against the device; a half store halves only these reads).
  const frozenBytes = WEIGHT_DTYPE_BYTES[resolveWeightDtype(config.weight_dtype, () => true)];
  const policyWeightBytes = lora ? params * frozenBytes + loraParams * F32 : params * F32;
  // A merged LoRA rollout (rollout_merge_lora) reads each adapted matrix from its merged copy (in rollout_dtype) and
  // runs no adapter product; the copy is refreshed once per rollout: W read, s B A summed onto it, the copy written.
  const merged = lora !== null && config.rollout_merge_lora;
  const copyBytes = WEIGHT_DTYPE_BYTES[config.rollout_dtype];
  const adaptedValues = merged ? L * lora.targets.reduce((n, t) => n + numel(projectionShape(model, t)), 0) : 0;
  const samplerWeightBytes = merged
    ? policyWeightBytes + adaptedValues * (copyBytes - frozenBytes) - loraParams * F32
    : config.rollout_dtype !== 'f32'
      ? params * 2
      : policyWeightBytes;
  const samplerLoraMacs = merged ? 0 : loraMacs;
  const mergeBytes = merged ? adaptedValues * (frozenBytes + copyBytes + (copyBytes < F32 ? 2 * F32 : 0)) : 0;
  const mergeFlops = merged ? 2 * lora.rank * adaptedValues : 0;
  const mergeDispatches = merged ? (copyBytes < F32 ? 3 : 2) * L * lora.targets.length : 0;
  const kvBytes = frozenBytes;
  const loraDispatches = lora ? 2 * lora.targets.length : 0;
  const layerDispatches = FORWARD_DISPATCHES_PER_LAYER + loraDispatches;
  const prefillLayerDispatches = FORWARD_DISPATCHES_PER_LAYER + (merged ? 0 : loraDispatches);
  const decode = decodeDispatches(merged ? null : lora);

  // Rollouts: a prefill of P tokens per row (the head on its last position), then S - 1 decode steps of N rows,
  // each reading every weight once and the KV cache of the positions so far.
  const prefillFlops = 2 * N * (P * L * (layerMacs + samplerLoraMacs) + L * causalAttentionMacs(model, P) + C * V);
  let decodeFlops = 0;
  let decodeBytes = 0;
  const decodeSteps = Math.max(0, S - 1);
  for (let s = 1; s <= decodeSteps; s++) {
    const keys = P + s;
    decodeFlops += 2 * N * (L * (layerMacs + samplerLoraMacs + attentionMacsPerToken(model, keys)) + C * V);
    decodeBytes += samplerWeightBytes + 2 * L * N * keys * kv * kvBytes + 2 * N * V * F32;
  }
  const gen: PhaseWork = {
    phase: 'gen',
    flops: mergeFlops + prefillFlops + decodeFlops,
    bytes: mergeBytes + samplerWeightBytes + 2 * L * N * P * kv * kvBytes + decodeBytes,
    submits: rolloutSubmits(S, options.decodeStepsPerSubmit),
    unbatchedSubmits: rolloutSubmits(S, 1),
    dispatches:
      mergeDispatches +
      L * prefillLayerDispatches +
      DECODE_DISPATCHES_EXTRA +
      decodeSteps * (L * decode.perLayer + decode.fixed),
    detail: `${N} rows: ${merged ? "the adapters merged into the sampler's copy, " : ''}prefill ${P} tokens, ${decodeSteps} decode steps reading the weights and the KV cache`,
  };

  // One training forward over every row: the layers on all T positions, the head on the S completion positions.
  const forwardFlops = 2 * N * (T * L * (layerMacs + loraMacs) + L * causalAttentionMacs(model, T) + S * C * V);
  const activationBytes = N * T * L * (C * 10 + kv * 2) * F32;
  const minibatches = config.num_minibatches;
  // Forwards (and backwards) of a pass: one per micro-batch; the optimizer steps once per minibatch.
  const micro = config.gradient_accumulation_steps;
  const chunks = minibatches * micro;

  const ratioIsOne = d.ratioIsOne;
  const sumPiSquared = SUM_PI_SQUARED_ESTIMATORS.includes(config.adv_estimator);
  const needScore = !ratioIsOne || d.needsReference || d.needsCritic || sumPiSquared;
  const scorePolicy = !ratioIsOne || d.klInReward || sumPiSquared;
  const scoringModels = needScore ? (scorePolicy ? 1 : 0) + (d.needsReference ? 1 : 0) + (d.needsCritic ? 1 : 0) : 0;
  const score: PhaseWork = {
    phase: 'old_log_prob',
    flops: scoringModels * forwardFlops,
    bytes: scoringModels * chunks * (policyWeightBytes + activationBytes / chunks),
    submits: scoringModels * chunks,
    dispatches: scoringModels * chunks * L * layerDispatches,
    detail: needScore
      ? `${scoringModels} forward(s) over ${N} x ${T} tokens (${[scorePolicy && 'old policy', d.needsReference && 'reference', d.needsCritic && 'critic'].filter(Boolean).join(', ')})`
      : 'none: one update per batch makes its own forward pi_old',
  };

  // The update: forward, then a backward of twice the forward's products (data gradients, and weight gradients of
  // every weight, or under LoRA of the adapters only: the base's data gradients alone), the head's data and (full
  // fine-tuning) weight gradients, attention's backward twice its forward; gradient checkpointing adds a forward
  // of the layers but their down products and the down adapters' B products (the recompute makes only what the
  // backward reads: src/model/gpu-model.ts). Critic runs train a second model the same way.
  const layerFwd = 2 * N * (T * L * (layerMacs + loraMacs) + L * causalAttentionMacs(model, T));
  const headFwd = 2 * N * S * C * V;
  const baseGrad = lora ? 0 : 2 * N * T * L * layerMacs;
  const backward =
    2 * N * T * L * layerMacs + baseGrad + 2 * 2 * N * T * L * loraMacs + 2 * 2 * N * L * causalAttentionMacs(model, T);
  const headBack = headFwd * (lora ? 1 : 2);
  const [downOut, downIn] = projections(model).down_proj;
  const downMacs = downOut * downIn + (lora?.targets.includes('down_proj') ? lora.rank * downOut : 0);
  const recompute = config.gradient_checkpointing ? layerFwd - 2 * N * T * L * downMacs : 0;
  const models = d.needsCritic ? 2 : 1;
  const passes = config.num_iterations;
  const update: PhaseWork = {
    phase: 'update_actor',
    flops: passes * models * (layerFwd + headFwd + backward + headBack + recompute),
    bytes:
      passes *
      models *
      (chunks * (3 * policyWeightBytes + 2 * trained * F32) + 2 * activationBytes + 2 * N * S * V * F32),
    submits: passes * models * chunks * UPDATE_SUBMITS_PER_MINIBATCH,
    dispatches: passes * models * chunks * (3 * L * layerDispatches + 8),
    detail: `${passes} pass(es) x ${minibatches} minibatch(es)${micro > 1 ? ` of ${micro} micro-batches` : ''}: forward + backward of ${N} x ${T} tokens${lora ? ` (LoRA r=${lora.rank}: ${trained.toLocaleString('en-US')} trained values)` : ''}${config.gradient_checkpointing ? ', layers recomputed' : ''}`,
  };
  const optimizerSteps = passes * minibatches;
  const optimizer: PhaseWork = {
    phase: 'optimizer',
    flops: optimizerSteps * models * ADAMW_FLOPS_PER_VALUE * trained,
    bytes: optimizerSteps * models * ADAMW_VALUES_MOVED * trained * F32,
    submits: 0,
    dispatches: optimizerSteps * models * 2,
    detail: `${optimizerSteps} AdamW step(s) over ${trained.toLocaleString('en-US')} values`,
  };
  const phases = [gen, score, update, optimizer];
  return {
    phases,
    flops: phases.reduce((s, p) => s + p.flops, 0),
    bytes: phases.reduce((s, p) => s + p.bytes, 0),
  };
}

/**
 * Seconds of a step's work on an adapter: each phase takes the longer of its arithmetic at flopsPerSecond and its
 * memory traffic at bytesPerSecond, plus its round trips and launches. The phases run one after the other.
 */
export function estimateStepSeconds(work: StepWork, t: Throughput): StepEstimate {
  const phases = phaseSeconds(work.phases, t);
  const seconds = phases.reduce((s, p) => s + p.seconds, 0);
  const [low, high] = t.calibration?.spread ?? [1, 1];
  const unbatched = t.calibration?.measuredUnbatched
    ? phaseSeconds(
        work.phases.map((p) => ({ ...p, submits: p.unbatchedSubmits ?? p.submits })),
        t,
      ).reduce((s, p) => s + p.seconds, 0)
    : seconds;
  return { seconds, range: [seconds * low, Math.max(seconds, unbatched) * high], phases, work, throughput: t };
}

/** Each phase's seconds: the longer of its arithmetic and its traffic, plus its launches, times the calibration. */
function phaseSeconds(work: readonly PhaseWork[], t: Throughput): StepEstimate['phases'] {
  const factor = t.calibration?.factor ?? 1;
  return work.map((p) => {
    const compute = p.flops / t.flopsPerSecond;
    const memory = p.bytes / t.bytesPerSecond;
    const launch = p.submits * t.submitSeconds + p.dispatches * t.dispatchSeconds;
    const seconds = (Math.max(compute, memory) + launch) * factor;
    const bound: 'compute' | 'memory' | 'launch' =
      launch > Math.max(compute, memory) ? 'launch' : compute >= memory ? 'compute' : 'memory';
    return { phase: p.phase, seconds, bound };
  });
}

/**
 * Figures for an adapter nothing was measured on yet, by kind, from BENCHMARKS.md: a software adapter as
 * SwiftShader on the 2-core machine measured it (tuned matmuls 2.3-3.8 GFLOP/s at the micro preset's shapes), a
 * GPU as the H100 through Dawn's Vulkan measured it (a decode step of 64 rows 1.65 ms at nano, launch-bound).
 */
export function assumedThroughput(software: boolean): Throughput {
  return software
    ? {
        flopsPerSecond: 3e9,
        bytesPerSecond: 2e9,
        submitSeconds: 2e-4,
        dispatchSeconds: 5e-5,
        source: "SwiftShader's figures in BENCHMARKS.md (this adapter not measured)",
        calibration: SOFTWARE_CALIBRATION,
      }
    : {
        flopsPerSecond: 2.5e12,
        bytesPerSecond: 1.2e11,
        submitSeconds: 3.4e-3,
        dispatchSeconds: 2e-5,
        source: "an H100's figures in BENCHMARKS.md (this adapter not measured)",
        calibration: GPU_CALIBRATION,
      };
}

/**
 * How close the estimate came to measured steps, for the page's tooltip and docs/lab.md (scripts/calibrate-step-
 * estimate.ts measures it).
 */
export const ESTIMATE_ACCURACY =
  "How good it is: on SwiftShader the probe's roofline gave 0.2-0.7x the measured step of nano, micro and tiny-qwen2 runs (on a busy 2-core machine), so it is multiplied by 2.6 and the range is where those runs then fell (0.55-1.95x of it); a GPU's figures were fitted to an H100's nano-to-base steps (0.86-1.04x) and gave 0.83-0.90x an H200's SmolLM2-135M steps (range 0.95-1.25x). Those runs submitted each decode step alone; 8 share a submit now, a gain not yet measured, so the range reaches up to the unbatched estimate.";

/** A range of seconds in words: "0.6-1.4 s", "12-30 s", "2-5 min" (the unit of the high end). */
export function describeSecondsRange([low, high]: readonly [number, number]): string {
  const unit = high < 90 ? 1 : high < 5400 ? 60 : 3600;
  const name = unit === 1 ? 's' : unit === 60 ? 'min' : 'h';
  const show = (x: number) => {
    const v = x / unit;
    return v < 1 ? v.toFixed(v < 0.1 ? 2 : 1) : v < 10 && unit !== 1 ? v.toFixed(1) : String(Math.round(v));
  };
  return `${show(low)}-${show(high)} ${name}`;
}

/** Seconds in words for the page and the CLI: "about 12 s", "about 0.4 s", "about 3 min". */
export function describeSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return 'unknown';
  if (seconds < 1) return `about ${seconds.toFixed(seconds < 0.1 ? 2 : 1)} s`;
  if (seconds < 90) return `about ${Math.round(seconds)} s`;
  if (seconds < 5400) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}
