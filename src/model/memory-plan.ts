// The memory plan of a training run on the GPU: from the model config, the rollout and minibatch shapes and the
// models a run holds (policy, frozen reference, critic), the bytes of weights, gradients, AdamW state, KV cache,
// activations kept for backward and the LM head's buffers, the peak of them that is allocated at once, and the largest
// single buffer, checked against the device's per-buffer limits and a memory budget BEFORE anything is allocated.
// No (rows, T, V) logits exist: training runs the head in row chunks of a bounded scratch (kernels/head-chunked.ts);
// only a decode step holds whole logits, (rows, V). Frozen weights (the LoRA base and the reference) are counted at
// MemoryShape.storageBytes per value and the KV cache at kvCacheBytes, so half-precision storage can be planned.
// Knows the buffers GpuModel, generate() and the GPU learner allocate; not the RL config (src/rl/observation/memory.ts maps
// its knobs onto this plan and names them in the refusals).

import { formatBytes } from '../core/format';
import { numel } from '../core/host-tensor';
import { loraShapes, projectionShape, type LoraSpec } from '../core/lora-layout';
import { storesHalf } from '../core/half';
import { headDim, paramShapes } from '../core/model-shapes';
import { HEAD_SCRATCH_BYTES, chunkedHeadBytes, headChunkRows } from '../kernels/head-chunked';
import type { ModelConfig } from '../schema/model-config';

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
  /** The reference reads the policy's frozen LoRA base (derive().referenceIsBase): no weights of its own. */
  referenceIsBase?: boolean;
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
  /**
   * Bytes per value of the frozen weights (under LoRA the policy's base; the reference): 4 (f32, the default) or 2
   * (bf16 / f16). Trained weights, their gradients and moments, and activations stay f32.
   */
  storageBytes?: 2 | 4;
  /** Bytes per value of the KV cache: 4 (f32, the default) or 2 (stored half). */
  kvCacheBytes?: 2 | 4;
  /** Per-layer activation recomputation: training workspaces keep each layer's input and one layer's activations. */
  recompute?: boolean;
  /**
   * The sampler reads a copy of the policy's matrices at `bytes` a value: the half copy of a policy trained in full
   * (rollout_dtype bf16/f16), or under LoRA the merged copy of each adapted matrix (rollout_merge_lora, in
   * rollout_dtype), with, where that copy is half, an f32 scratch of each distinct adapted shape to sum W + s B A in.
   */
  rolloutCopy?: { bytes: 2 | 4 };
  /**
   * Stale rollouts (max_staleness, weight_sync_steps): copies of the policy's weights kept for the sampler, the
   * snapshots plus the one backup of the live weights while a snapshot samples (src/rl/algorithm/staleness.ts).
   */
  samplerCopies?: number;
  /**
   * The distillation teachers (src/rl/learners/teacher.ts; several under multi-teacher distillation), any size, the
   * policy's vocabulary: each one's weights at storageBytes, a forward-only workspace of the training shape, its own
   * LM head chunk scratch and per-token planes (each teacher is a learner of its own, all held for the run).
   */
  teachers?: readonly ModelConfig[];
}

/** The settings of a run that scale each part of the plan, in the caller's words (the RL config's knob names). */
export interface MemoryKnobs {
  /** What sets MemoryShape.rolloutRows, e.g. "train_batch_size x num_generations". */
  rolloutRows: string;
  /** What sets MemoryShape.samplerCopies, e.g. "max_staleness (lower it)". */
  samplerCopies?: string;
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

export type MemoryPart = 'weights' | 'gradients' | 'adamw' | 'kvCache' | 'activations' | 'head';

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
  /** Weights, gradients, AdamW state, KV cache, activations, the head's buffers: their bytes at the peak, in that order. */
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

/**
 * Bytes of a model's parameters at `bytesPerValue` (4: f32, as its gradients and each AdamW moment are; 2: stored
 * half), and its largest tensor.
 */
export function weightBytes(
  model: ModelConfig,
  bytesPerValue = F32,
): { total: number; largest: { name: string; bytes: number } } {
  let total = 0;
  let largest = { name: '', bytes: 0 };
  for (const { name, shape } of paramShapes(model)) {
    const bytes = bytesPerValue * shape.reduce((a, b) => a * b, 1);
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
 * the last layer's output, the final norm and its rstd, and in a 'train' workspace the backward's scratch (dRes,
 * dn, dAtt, dq, dk, dv, dAct, dGate, dUp). An 'infer' workspace (KV-cache prefill and decode, a frozen reference)
 * holds one layer's activations for all layers and no backward scratch.
 */
function workspaceActivationBytes(m: ModelConfig, B: number, T: number, mode: WorkspaceMode = 'train'): number {
  const C = m.dModel;
  const KV = m.nKvHeads * headDim(m);
  const F = m.dFF;
  const perLayer = 6 * C + 2 * KV + 3 * F + 2 + m.nHeads;
  // 'infer': one layer's activations without h (the residual stream is accumulated in x), then xOut, nf, rstdf.
  if (mode === 'infer') return F32 * B * T * (perLayer - C + 2 * C + 1);
  const rest = 6 * C + 2 * KV + 3 * F + 1;
  // 'recompute': one layer's activations, and every other layer's input x.
  if (mode === 'recompute') return F32 * B * T * (perLayer + (m.nLayers - 1) * C + rest);
  return F32 * B * T * (m.nLayers * perLayer + rest);
}

type WorkspaceMode = 'train' | 'recompute' | 'infer';

/** Floats per position of the GPU learner's own per-token planes (ids, log-probs, their gradients, records). */
const LEARNER_FLOATS_PER_TOKEN = 48;

/**
 * The plan: what a run allocates at its peak and whether each buffer and the total fit. The peak is rollouts
 * while the training workspace is still cached: GpuModel keeps two workspaces (the training minibatch's and the
 * prefill's, or the prefill's and the decode step's), plus the KV cache and the sampled rows' logits; the
 * learner's minibatch buffers (the head's chunk scratch and the per-token planes) stay allocated across steps.
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
  const half = shape.storageBytes ?? F32;

  const policyW = weightBytes(m);
  const frozenW = weightBytes(m, half);
  const criticW = weightBytes(criticModel);
  // Under LoRA the optimizer trains the adapters only: the policy's gradients and moments are theirs, and its base
  // is frozen (stored at `half`).
  const lora = shape.lora ?? null;
  const loraW = lora ? F32 * loraShapes(m, lora).reduce((n, s) => n + s.shape[0] * s.shape[1], 0) : 0;
  const policyTrained = lora ? loraW : policyW.total;
  const policyStored = lora ? frozenW.total : policyW.total;
  // x A^T of every adapted projection: per layer in a training workspace (and one gradient of it), one layer's worth
  // in a forward-only one.
  const loraActs = (rows: number, mode: WorkspaceMode) =>
    lora
      ? F32 *
        rows *
        lora.rank *
        (mode === 'train' ? m.nLayers * lora.targets.length + 1 : lora.targets.length + (mode === 'infer' ? 0 : 1))
      : 0;
  const trainMode: WorkspaceMode = shape.recompute ? 'recompute' : 'train';
  // Under LoRA without reference resets the reference reads the policy's frozen base: no weights of its own.
  const sharedRef = shape.reference && shape.referenceIsBase === true;
  const ownRef = shape.reference && !sharedRef;
  const refW = ownRef ? frozenW.total : 0;
  const critW = shape.critic ? criticW.total : 0;
  // W_0, plus the tracker's two power-iteration vectors per weight (rows + columns) and three sums per weight.
  const startW = shape.startWeights ? policyW.total + trackerScratchBytes(m) : 0;
  const backupW = shape.rank1Backup ? policyW.total : 0;
  const rolloutW = shape.rolloutCopy ? rolloutCopyBytes(m, shape.rolloutCopy.bytes, lora) : 0;
  const staleW = (shape.samplerCopies ?? 0) * policyW.total;
  const who = (parts: [boolean, string][]) =>
    parts
      .filter(([on]) => on)
      .map(([, s]) => s)
      .join(' + ');
  const models = who([
    [true, 'policy'],
    [ownRef, 'reference'],
    [shape.critic, 'critic'],
  ]);

  // The LM head: the learner's chunk scratch for its M*T rows (the reference's logits beside the policy's when there
  // is a reference), and a decode step's whole logits (R, V) with its rows' last hidden states, in generate().
  const headShape = { dModel: m.dModel, vocabSize: V, maxRows: M * T, reference: shape.reference };
  const headRows = headChunkRows(headShape);
  const headScratch = chunkedHeadBytes(headShape);
  const sampledLogits = F32 * R * V;
  const sampledRows = F32 * R * (3 * m.dModel + 1);
  // Policy workspaces: the two largest of training (M, T), prefill (R, P) and decode (R, 1) stay cached together;
  // the rollouts' two are forward-only.
  const ws = [
    workspaceActivationBytes(m, M, T, trainMode) + loraActs(M * T, trainMode),
    workspaceActivationBytes(m, R, P, 'infer') + loraActs(R * P, 'infer'),
    workspaceActivationBytes(m, R, 1, 'infer') + loraActs(R, 'infer'),
  ].sort((a, b) => b - a);
  const cached = ws.slice(0, 2);
  // The reference (frozen: forward-only) and the critic only ever run the training shape.
  const otherActs =
    (shape.reference ? workspaceActivationBytes(m, M, T, 'infer') : 0) +
    (shape.critic ? workspaceActivationBytes(m, M, T, trainMode) : 0);
  const learnerPlanes = F32 * LEARNER_FLOATS_PER_TOKEN * M * T;
  // The teacher scores the training shape with a learner of its own: frozen weights, one forward-only workspace,
  // its head's chunk scratch (its width) and the learner's per-token planes.
  const teachers = shape.teachers ?? [];
  const sum = (f: (t: ModelConfig) => number) => teachers.reduce((a, t) => a + f(t), 0);
  const teacherW = sum((t) => weightBytes(t, half).total);
  const teacherActs = sum((t) => workspaceActivationBytes(t, M, T, 'infer') + learnerPlanes);
  const teacherHead = sum((t) =>
    chunkedHeadBytes({ dModel: t.dModel, vocabSize: t.vocabSize, maxRows: M * T, reference: false }),
  );
  const teacherLargest = teachers
    .map((t) => weightBytes(t, half).largest)
    .reduce<{ name: string; bytes: number } | null>((a, b) => (a && a.bytes >= b.bytes ? a : b), null);
  const kvBytes = shape.kvCacheBytes ?? F32;
  const kvCache = kvBytes * 2 * m.nLayers * R * T * KV;

  const parts: MemoryPlanPart[] = [
    {
      part: 'weights',
      bytes: policyStored + loraW + refW + critW + startW + backupW + rolloutW + staleW + teacherW,
      detail:
        `${models}: ${formatBytes(policyStored)}${ownRef ? ` + ${formatBytes(refW)}` : ''}${shape.critic ? ` + ${formatBytes(critW)}` : ''}` +
        `${sharedRef ? " (the reference reads the policy's frozen base)" : ''}` +
        `${half !== F32 ? ` (frozen weights ${half} B a value)` : ''}` +
        `${shape.lora ? `; LoRA adapters ${formatBytes(loraW)}` : ''}` +
        `${shape.startWeights ? `; W_0 ${formatBytes(startW)}` : ''}${shape.rank1Backup ? `; the rank-1 evaluation's copy ${formatBytes(backupW)}` : ''}` +
        `${shape.rolloutCopy ? `; the sampler's ${lora ? 'merged LoRA' : 'half'} copy ${formatBytes(rolloutW)}` : ''}` +
        `${staleW > 0 ? `; the sampler's ${shape.samplerCopies} weight copies (snapshots and a backup) ${formatBytes(staleW)}` : ''}` +
        `${teachers.length === 1 ? `; the teacher ${formatBytes(teacherW)}` : teachers.length > 1 ? `; the ${teachers.length} teachers ${formatBytes(teacherW)}` : ''}`,
      knobs: [
        knobs.model,
        ...(shape.startWeights ? [knobs.weightTracking] : []),
        ...(staleW > 0 && knobs.samplerCopies ? [knobs.samplerCopies] : []),
      ],
    },
    {
      part: 'gradients',
      bytes: policyTrained + critW,
      detail: `one per trained weight (${who([
        [true, 'policy'],
        [shape.critic, 'critic'],
      ])}; the reference has none)${shape.lora ? "; the policy's for its LoRA adapters only (its base is frozen)" : ''}`,
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
      detail: `${R} sequences x ${T} positions x ${m.nLayers} layers x 2 x ${KV} x ${kvBytes} B`,
      knobs: [knobs.rolloutRows, knobs.completionTokens],
    },
    {
      part: 'activations',
      bytes: cached[0] + cached[1] + otherActs + learnerPlanes + teacherActs,
      detail: `training ${M} x ${T} positions (${who([
        [true, 'policy'],
        [shape.reference, 'reference'],
        [shape.critic, 'critic'],
      ])}; the reference forward-only${shape.recompute ? ', the rest recomputed per layer' : ''}), prefill ${R} x ${P} and decode ${R} x 1 (forward-only)`,
      knobs: [knobs.trainRows, knobs.completionTokens, knobs.rolloutRows],
    },
    {
      part: 'head',
      bytes: headScratch + sampledLogits + sampledRows + teacherHead,
      detail: `chunks of ${headRows} of ${M * T} training rows x ${V} (${shape.reference ? "logits, the reference's, their gradient" : 'logits and their gradient'}), ${R} x ${V} sampled logits`,
      knobs: [knobs.rolloutRows],
    },
  ];
  const peakBytes = parts.reduce((a, p) => a + p.bytes, 0);

  const buffers: MemoryPlanBuffer[] = [
    {
      name: 'LM head chunk',
      bytes: F32 * headRows * V,
      detail: `${headRows} rows x ${V} vocabulary x 4 B (the chunk shrinks to fit ${formatBytes(HEAD_SCRATCH_BYTES)} of scratch)`,
      knobs: [knobs.model],
    },
    {
      name: 'sampled logits',
      bytes: sampledLogits,
      detail: `${R} sequences x ${V} vocabulary x 4 B`,
      knobs: [knobs.rolloutRows],
    },
    {
      name: `${policyW.largest.name} (and its gradient and moments)`,
      bytes: Math.max(lora ? frozenW.largest.bytes : policyW.largest.bytes, shape.critic ? criticW.largest.bytes : 0),
      detail: 'the largest parameter tensor',
      knobs: [knobs.model],
    },
    ...(teacherLargest
      ? [
          {
            name: `the teacher's ${teacherLargest.name}`,
            bytes: teacherLargest.bytes,
            detail: `the ${teachers.length > 1 ? "teachers' " : "teacher's "}largest parameter tensor`,
            knobs: [knobs.model],
          },
        ]
      : []),
    {
      name: 'KV cache of one layer',
      bytes: kvBytes * R * T * KV,
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
  head: 'LM head',
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

/**
 * The bytes of the sampler's copy of the matrices at `bytes` a value: every matrix of a model trained in full, or under
 * `lora` each adapted matrix merged, plus (a half merged copy) an f32 scratch of each distinct adapted shape.
 */
function rolloutCopyBytes(m: ModelConfig, bytes: 2 | 4, lora: Pick<LoraSpec, 'targets'> | null): number {
  if (!lora) return bytes * paramShapes(m).reduce((n, p) => n + (storesHalf(p.shape) ? numel(p.shape) : 0), 0);
  const shapes = lora.targets.map((t) => projectionShape(m, t));
  const scratch =
    bytes === 2
      ? F32 * [...new Map(shapes.map((s) => [s.join('x'), numel(s)])).values()].reduce((a, b) => a + b, 0)
      : 0;
  return bytes * m.nLayers * shapes.reduce((n, s) => n + numel(s), 0) + scratch;
}
