// The memory plan of a training run on the GPU: from the model config, the rollout and minibatch shapes and the
// models a run holds (policy, frozen reference, critic), the bytes of weights, gradients, AdamW state, KV cache,
// activations kept for backward and logits, the peak of them that is allocated at once, and the largest single
// buffer, checked against the device's per-buffer limits and a memory budget BEFORE anything is allocated.
// Knows the buffers GpuModel, generate() and the GPU learner allocate; not the RL config (src/rl/memory.ts maps
// its knobs onto this plan and names them in the refusals).

import { formatBytes } from '../core/format';
import { loraShapes, type LoraSpec } from '../core/lora-layout';
import { headDim, paramShapes } from '../core/model-shapes';
import type { ModelConfig } from './config';

const F32 = 4;

/** The shapes a run allocates for, in tokens and sequences. */
export interface MemoryShape {
  /** Sequences sampled by one generate() call (a step's prompts x generations, or an evaluation chunk). */
  rolloutRows: number;
  /** Longest prompt, BOS included. */
  promptTokens: number;
  /** Longest completion (max_completion_length). */
  completionTokens: number;
  /** Sequences of one training forward (a minibatch; scoring runs the same minibatches). */
  trainRows: number;
  /** A frozen reference model runs beside the policy (KL): its weights, its (never used) gradients, its forward. */
  reference: boolean;
  /** A critic (a second model with an untied head) trains beside the policy: everything the policy has, again. */
  critic: boolean /** The run's starting weights W_0 are kept beside the policy (to measure how far each weight moved). */;
  startWeights?: boolean;
  /** Evaluations also run on the rank-1 update, with the policy's weights copied aside meanwhile. */
  rank1Backup?: boolean;
  /**
   * LoRA on the policy: the adapters add to the weights, the policy's gradients and AdamW moments are theirs instead
   * of every weight's, and each policy workspace keeps x A^T of every adapted projection and one gradient of it.
   */
  lora?: LoraSpec | null;
}

/** The settings of a run that scale each part of the plan, in the caller's words (the RL config's knob names). */
export interface MemoryKnobs {
  /** What sets MemoryShape.rolloutRows, e.g. "train_batch_size x num_generations". */
  rolloutRows: string;
  /** What sets MemoryShape.trainRows, e.g. "num_minibatches (raise it)". */
  trainRows: string;
  /** What sets MemoryShape.completionTokens, e.g. "max_completion_length". */
  completionTokens: string;
  /** What sets the model, e.g. "model (a smaller preset) or checkpoint". */
  model: string;
  /** What keeps W_0 beside the policy, e.g. "weight_stats_every 0 and rank1_eval false". */
  weightTracking: string;
}

/** What the device allows: WebGPU's per-buffer limits (it exposes no total) and the caller's budget for the run. */
export interface MemoryDevice {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  /** Bytes the run may use in all (e.g. the GPU's memory less a margin); null: no total is checked. */
  budgetBytes?: number | null;
}

export type MemoryPart = 'weights' | 'gradients' | 'adamw' | 'kvCache' | 'activations' | 'logits';

/** One part of the plan: its bytes at the peak and how they are made up, in words. */
export interface MemoryPlanPart {
  part: MemoryPart;
  bytes: number;
  detail: string;
  /** The knob names (MemoryKnobs' values) that shrink this part. */
  knobs: string[];
}

/** One buffer of the run (the largest of a kind), with the knobs that shrink it. */
export interface MemoryPlanBuffer {
  name: string;
  bytes: number;
  detail: string;
  knobs: string[];
}

export interface MemoryPlan {
  model: ModelConfig;
  shape: MemoryShape;
  /** Weights, gradients, AdamW state, KV cache, activations, logits: their bytes at the peak, in that order. */
  parts: MemoryPlanPart[];
  /** Bytes allocated at once at the worst moment: the sum of the parts. */
  peakBytes: number;
  /** The largest single buffer. */
  largest: MemoryPlanBuffer;
  /** Every buffer kind that is checked against the per-buffer limit, largest first. */
  buffers: MemoryPlanBuffer[];
  /** min(maxBufferSize, maxStorageBufferBindingSize): every tensor is bound as a storage buffer. */
  bufferLimit: number;
  budgetBytes: number | null;
  /** Why the run cannot be allocated, each naming the knobs to change; empty when it fits. */
  problems: string[];
}

/** A run whose buffers cannot exist on the device; the message lists every problem with the knobs to change. */
export class MemoryPlanError extends Error {
  override name = 'MemoryPlanError';
  constructor(readonly plan: MemoryPlan) {
    super(`the run does not fit this device's memory:\n  ${plan.problems.join('\n  ')}`);
  }
}

/** Bytes of a model's parameters (and so of its gradients, and of each AdamW moment), and its largest tensor. */
export function weightBytes(model: ModelConfig): { total: number; largest: { name: string; bytes: number } } {
  let total = 0;
  let largest = { name: '', bytes: 0 };
  for (const { name, shape } of paramShapes(model)) {
    const bytes = F32 * shape.reduce((a, b) => a * b, 1);
    total += bytes;
    if (bytes > largest.bytes) largest = { name, bytes };
  }
  return { total, largest };
}

/** The weight tracker's vectors beside W_0: u (rows) and v (columns) of each weight, and three sums per weight. */
function trackerScratchBytes(model: ModelConfig): number {
  let floats = 0;
  for (const { shape } of paramShapes(model))
    floats += shape[0] + (shape.length > 1 ? shape.slice(1).reduce((a, b) => a * b, 1) : 1) + 3;
  return F32 * floats;
}

/**
 * Refuses a model whose buffers cannot exist on the device, before uploading it: its largest parameter tensor, and
 * the logits of one position for `rows` sequences (a decode step's). The run's own shapes (minibatch, lengths)
 * are checked by the whole plan (planMemory) before the model is created.
 */
export function checkModelFitsDevice(
  model: ModelConfig,
  rows: number,
  device: Omit<MemoryDevice, 'budgetBytes'>,
): void {
  const limit = Math.min(device.maxBufferSize, device.maxStorageBufferBindingSize);
  const { largest } = weightBytes(model);
  const logits = F32 * rows * model.vocabSize;
  if (largest.bytes > limit) {
    throw new Error(
      `${largest.name} needs ${formatBytes(largest.bytes)} in one buffer, more than this device's per-buffer limit of ${formatBytes(limit)}; use a smaller model`,
    );
  }
  if (logits > limit) {
    throw new Error(
      `the logits of ${rows} sequences x ${model.vocabSize} vocabulary need ${formatBytes(logits)} in one buffer, more than this device's per-buffer limit of ${formatBytes(limit)}; sample fewer sequences at once`,
    );
  }
}

/**
 * The activations of one GpuModel workspace of B x T positions (gpu-model.ts, workspaceFor): per layer x, n1, q,
 * k, v, attention out, h, n2 (C or NKV*HD each), gate, up, their product (F each), two rstd and NH lse; then
 * the last layer's output, the final norm and its rstd, and the backward's scratch (dRes, dn, dAtt, dq, dk, dv,
 * dAct, dGate, dUp). The logits (B, T, V) are counted apart (logitsBytes).
 */
function workspaceActivationBytes(m: ModelConfig, B: number, T: number): number {
  const C = m.dModel;
  const KV = m.nKvHeads * headDim(m);
  const F = m.dFF;
  const perLayer = 6 * C + 2 * KV + 3 * F + 2 + m.nHeads;
  const rest = 6 * C + 2 * KV + 3 * F + 1;
  return F32 * B * T * (m.nLayers * perLayer + rest);
}

/** Floats per position of the GPU learner's own per-token planes (ids, log-probs, their gradients, records). */
const LEARNER_FLOATS_PER_TOKEN = 48;

/**
 * The plan: what a run allocates at its peak and whether each buffer and the total fit. The peak is rollouts
 * while the training workspace is still cached: GpuModel keeps two workspaces (the training minibatch's and the
 * prefill's, or the prefill's and the decode step's), plus the KV cache and the sampled rows' logits; the
 * learner's minibatch buffers (its logits gradient and per-token planes) stay allocated across steps.
 */
export function planMemory(
  model: ModelConfig,
  shape: MemoryShape,
  knobs: MemoryKnobs,
  device: MemoryDevice,
): MemoryPlan {
  const m = model;
  const V = m.vocabSize;
  const R = shape.rolloutRows;
  const P = shape.promptTokens;
  const S = shape.completionTokens;
  const M = shape.trainRows;
  const T = P + S; // the training layout: left-padded prompt, then the completion
  const KV = m.nKvHeads * headDim(m);
  const criticModel: ModelConfig = { ...m, tiedEmbeddings: false };

  const policyW = weightBytes(m);
  const criticW = weightBytes(criticModel);
  // Under LoRA the optimizer trains the adapters only: the policy's gradients and moments are theirs.
  const lora = shape.lora ?? null;
  const loraW = lora ? F32 * loraShapes(m, lora).reduce((n, s) => n + s.shape[0] * s.shape[1], 0) : 0;
  const policyTrained = lora ? loraW : policyW.total;
  const loraActs = (rows: number) => (lora ? F32 * rows * lora.rank * (m.nLayers * lora.targets.length + 1) : 0);
  const refW = shape.reference ? policyW.total : 0;
  const critW = shape.critic ? criticW.total : 0;
  // W_0, plus the tracker's two power-iteration vectors per weight (rows + columns) and three sums per weight.
  const startW = shape.startWeights ? policyW.total + trackerScratchBytes(m) : 0;
  const backupW = shape.rank1Backup ? policyW.total : 0;
  const nModels = 1 + (shape.reference ? 1 : 0) + (shape.critic ? 1 : 0);
  const who = (parts: [boolean, string][]) =>
    parts
      .filter(([on]) => on)
      .map(([, s]) => s)
      .join(' + ');
  const models = who([
    [true, 'policy'],
    [shape.reference, 'reference'],
    [shape.critic, 'critic'],
  ]);

  // Logits-shaped buffers, (rows, positions, V) each. Only a training forward's workspace holds (M, T, V); a
  // KV-cache forward computes the last position's logits of each row, (R, V), into generate()'s own buffer.
  const trainLogits = F32 * M * T * V;
  const sampledLogits = F32 * R * V;
  // Policy workspaces: the two largest of training (M, T), prefill (R, P) and decode (R, 1) stay cached together.
  const ws = [
    { acts: workspaceActivationBytes(m, M, T) + loraActs(M * T), logits: trainLogits },
    { acts: workspaceActivationBytes(m, R, P) + loraActs(R * P), logits: 0 },
    { acts: workspaceActivationBytes(m, R, 1) + loraActs(R), logits: 0 },
  ].sort((a, b) => b.acts + b.logits - (a.acts + a.logits));
  const cached = ws.slice(0, 2);
  // The reference and the critic only ever run the training shape.
  const otherActs = (nModels - 1) * workspaceActivationBytes(m, M, T);
  const otherLogits = (nModels - 1) * trainLogits;
  // The learner: dLogits (M, T, V); the critic adds its logits' gradient and its u32 scatter index, (M, T, V) each.
  const learnerLogits = trainLogits * (shape.critic ? 3 : 1);
  const learnerPlanes = F32 * LEARNER_FLOATS_PER_TOKEN * M * T;
  const kvCache = F32 * 2 * m.nLayers * R * T * KV;

  const parts: MemoryPlanPart[] = [
    {
      part: 'weights',
      bytes: policyW.total + loraW + refW + critW + startW + backupW,
      detail:
        `${models}: ${formatBytes(policyW.total)}${shape.reference ? ` + ${formatBytes(refW)}` : ''}${shape.critic ? ` + ${formatBytes(critW)}` : ''}` +
        `${shape.lora ? `; LoRA adapters ${formatBytes(loraW)}` : ''}` +
        `${shape.startWeights ? `; W_0 ${formatBytes(startW)}` : ''}${shape.rank1Backup ? `; the rank-1 evaluation's copy ${formatBytes(backupW)}` : ''}`,
      knobs: [knobs.model, ...(shape.startWeights ? [knobs.weightTracking] : [])],
    },
    {
      part: 'gradients',
      bytes: policyTrained + refW + critW,
      detail: `one per weight (${models})${shape.lora ? "; the policy's for its LoRA adapters only (its base is frozen)" : ''}`,
      knobs: [knobs.model],
    },
    {
      part: 'adamw',
      bytes: 2 * (policyTrained + critW),
      detail: `first and second moments (${who([
        [true, shape.lora ? "policy's LoRA adapters" : 'policy'],
        [shape.critic, 'critic'],
      ])})`,
      knobs: [knobs.model],
    },
    {
      part: 'kvCache',
      bytes: kvCache,
      detail: `${R} sequences x ${T} positions x ${m.nLayers} layers x 2 x ${KV}`,
      knobs: [knobs.rolloutRows, knobs.completionTokens],
    },
    {
      part: 'activations',
      bytes: cached[0].acts + cached[1].acts + otherActs + learnerPlanes,
      detail: `training ${M} x ${T} positions (${models}), prefill ${R} x ${P}, decode ${R} x 1`,
      knobs: [knobs.trainRows, knobs.completionTokens, knobs.rolloutRows],
    },
    {
      part: 'logits',
      bytes: cached[0].logits + cached[1].logits + otherLogits + learnerLogits + sampledLogits,
      detail: `${M} x ${T} x ${V} per training forward (${models}) and the policy's gradient${shape.critic ? ", the critic's gradient and index" : ''}, ${R} x ${V} sampled`,
      knobs: [knobs.trainRows, knobs.completionTokens, knobs.rolloutRows],
    },
  ];
  const peakBytes = parts.reduce((a, p) => a + p.bytes, 0);

  const buffers: MemoryPlanBuffer[] = [
    {
      name: 'training logits',
      bytes: trainLogits,
      detail: `${M} sequences x ${T} tokens x ${V} vocabulary x 4 B`,
      knobs: [knobs.trainRows, knobs.completionTokens],
    },
    {
      name: 'sampled logits',
      bytes: sampledLogits,
      detail: `${R} sequences x ${V} vocabulary x 4 B`,
      knobs: [knobs.rolloutRows],
    },
    {
      name: `${policyW.largest.name} (and its gradient and moments)`,
      bytes: Math.max(policyW.largest.bytes, shape.critic ? criticW.largest.bytes : 0),
      detail: 'the largest parameter tensor',
      knobs: [knobs.model],
    },
    {
      name: 'KV cache of one layer',
      bytes: F32 * R * T * KV,
      detail: `${R} sequences x ${T} positions x ${KV}`,
      knobs: [knobs.rolloutRows, knobs.completionTokens],
    },
    {
      name: 'MLP activation',
      bytes: F32 * Math.max(M * T, R * P) * m.dFF,
      detail: `${Math.max(M * T, R * P)} positions x ${m.dFF}`,
      knobs: [knobs.trainRows, knobs.completionTokens],
    },
  ].sort((a, b) => b.bytes - a.bytes);

  const bufferLimit = Math.min(device.maxBufferSize, device.maxStorageBufferBindingSize);
  const limitName =
    device.maxStorageBufferBindingSize <= device.maxBufferSize ? 'maxStorageBufferBindingSize' : 'maxBufferSize';
  const problems: string[] = [];
  for (const b of buffers) {
    if (b.bytes <= bufferLimit) continue;
    problems.push(
      `${b.name}: ${b.detail} = ${formatBytes(b.bytes)} in one buffer, more than this device's ${formatBytes(bufferLimit)} (${limitName}); ` +
        `lower ${b.knobs.join(', or ')}`,
    );
  }
  const budgetBytes = device.budgetBytes ?? null;
  if (budgetBytes !== null && peakBytes > budgetBytes) {
    const biggest = [...parts].sort((a, b) => b.bytes - a.bytes).slice(0, 2);
    const knobList = [...new Set(biggest.flatMap((p) => p.knobs))];
    problems.push(
      `the run needs ${formatBytes(peakBytes)} at its peak, more than the budget of ${formatBytes(budgetBytes)}; ` +
        `the largest parts are ${biggest.map((p) => `${PART_NAMES[p.part]} ${formatBytes(p.bytes)}`).join(' and ')}: lower ${knobList.join(', or ')}`,
    );
  }
  return { model, shape, parts, peakBytes, largest: buffers[0], buffers, bufferLimit, budgetBytes, problems };
}

const PART_NAMES: Record<MemoryPart, string> = {
  weights: 'weights',
  gradients: 'gradients',
  adamw: 'AdamW state',
  kvCache: 'KV cache',
  activations: 'activations kept for backward',
  logits: 'logits',
};

/** Throws MemoryPlanError when the plan has problems; returns it otherwise. */
export function assertPlanFits(plan: MemoryPlan): MemoryPlan {
  if (plan.problems.length) throw new MemoryPlanError(plan);
  return plan;
}

/** The plan as lines of text: one per part, the peak, the largest buffer against the limit, and the verdict. */
export function describePlan(plan: MemoryPlan): string[] {
  const w = Math.max(...plan.parts.map((p) => PART_NAMES[p.part].length));
  const lines = plan.parts.map(
    (p) => `${PART_NAMES[p.part].padEnd(w)}  ${formatBytes(p.bytes).padStart(10)}  ${p.detail}`,
  );
  lines.push(
    `${'peak'.padEnd(w)}  ${formatBytes(plan.peakBytes).padStart(10)}${plan.budgetBytes !== null ? ` of a ${formatBytes(plan.budgetBytes)} budget` : ''}`,
  );
  lines.push(
    `largest buffer: ${plan.largest.name}, ${formatBytes(plan.largest.bytes)} (${plan.largest.detail}); per-buffer limit ${formatBytes(plan.bufferLimit)}`,
  );
  // Without a budget only the per-buffer limits were checked (WebGPU exposes no total): the verdict says so.
  lines.push(
    plan.problems.length
      ? `does not fit: ${plan.problems.join('; ')}`
      : plan.budgetBytes !== null
        ? 'fits'
        : `every buffer is within the per-buffer limit; the peak of ${formatBytes(plan.peakBytes)} was not checked against the device's memory (no budget was set: give one, e.g. --memory-budget)`,
  );
  return lines;
}
