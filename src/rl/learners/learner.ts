// The learner: what the trainer asks of a backend for one RL step, and its WebGPU implementation. It owns the
// policy, the frozen reference policy (only when beta > 0) and PPO's critic (only for gae), scores batches
// (log pi_old, log pi_ref, V_old: one readback per batch) and records optimizer steps (forward, log-probs,
// unified objective, backward, clipped AdamW; critic value loss and step) with NO readback: every step's metrics
// land in a GPU buffer that collect() reads once per batch. The CPU twin is cpu-learner.ts.
// No (rows, T, V) logits exist: the models stop at their final norm and the LM head runs fused with the log-prob,
// entropy, reference log-prob and exact KL (and their backward) over row chunks of a bounded scratch
// (src/kernels/head-chunked.ts); the critic's V is the first row of its head, a (rows, C) x (C) product.
//
// The critic is a separate transformer of the policy's architecture, initialized from the policy's trunk, with an
// untied head whose first output is V (the head starts at zero, so V starts at 0; its other rows never receive a
// gradient and stay zero). A separate model rather than a value head on the policy's trunk: the value loss then
// never pulls the policy's features, the critic has its own learning rate, and the same GpuModel code, kernels,
// optimizer and checkpoint format serve both (as in the PPO-for-LLM trainers TRL, OpenRLHF and verl).

import type { GpuContext, Recorder, Tensor } from '../../gpu';
import { gatherRows } from '../../kernels/decode';
import { scale } from '../../kernels/elementwise';
import { ChunkedHead, scalarHeadBackward, scalarHeadForward } from '../../kernels/head-chunked';
import {
  OBJECTIVE_METRICS,
  OBJECTIVE_RECORDS,
  objectiveForwardBackward,
  type AggregationTotals,
} from '../../kernels/objective';
import { VALUE_METRICS, valueLossForwardBackward } from '../../kernels/value';
import type { WeightDtype } from '../../core/half';
import type { ParamArrays } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import { GpuModel, type ForwardInputs, type LoraInit, type StepOptions, type Workspace } from '../../model/gpu-model';
import type { GpuPolicy, Policy } from '../../model/policy';
import { gpuLearnerPolicy } from './learner-policy';
import type { ObjectiveConfig } from '../../schema/objective';
import type { SequenceBatch } from '../algorithm/batch';

/** Per-token inputs of one optimizer step, each (M*S) for the M rows of the minibatch. */
export interface UpdateInputs {
  seq: SequenceBatch;
  advantages: Float32Array;
  mask: Float32Array;
  samplerLogp: Float32Array;
  /** log pi_old; null when the step's own forward is pi_old (one update per batch: the ratio is exactly 1). */
  oldLogp: Float32Array | null;
  /** PPO: V_old and the GAE returns. */
  oldValues?: Float32Array;
  returns?: Float32Array;
}

/**
 * One optimizer step's inputs: a minibatch, or its micro-batches (gradient accumulation: each runs its forward and
 * backward in turn, the gradients add up, one optimizer step). Micro-batches are contiguous rows of the minibatch in
 * order and share one (N, S, T) shape.
 */
export type StepInputs = UpdateInputs | readonly UpdateInputs[];

/** A step's micro-batches (one without accumulation), their masked tokens and first rows, and the totals they share. */
export interface MicroBatches {
  micro: readonly UpdateInputs[];
  /** Masked tokens of each micro-batch. */
  tokens: number[];
  /** Each micro-batch's first row in the minibatch. */
  starts: number[];
  /** Rows of the minibatch. */
  rows: number;
  /** The minibatch's rows and masked tokens for the objective and value loss; undefined with one micro-batch. */
  totals: AggregationTotals | undefined;
}

/** Splits StepInputs into micro-batches and checks that they share one shape. */
export function microBatchesOf(kernel: string, inp: StepInputs): MicroBatches {
  const micro: readonly UpdateInputs[] = isMicroList(inp) ? inp : [inp];
  if (!micro.length) throw new Error(`${kernel}: no micro-batches`);
  const { N, S, T } = micro[0].seq;
  const tokens: number[] = [];
  const starts: number[] = [];
  let rows = 0;
  for (const m of micro) {
    if (m.seq.N !== N || m.seq.S !== S || m.seq.T !== T)
      throw new Error(
        `${kernel}: micro-batches must share one shape; got (${m.seq.N}, ${m.seq.S}, ${m.seq.T}) after (${N}, ${S}, ${T})`,
      );
    let n = 0;
    for (let i = 0; i < m.mask.length; i++) n += m.mask[i];
    tokens.push(n);
    starts.push(rows);
    rows += m.seq.N;
  }
  const total = tokens.reduce((a, b) => a + b, 0);
  return { micro, tokens, starts, rows, totals: micro.length > 1 ? { rows, tokens: total } : undefined };
}

function isMicroList(inp: StepInputs): inp is readonly UpdateInputs[] {
  return Array.isArray(inp);
}

/** Hyperparameters of one optimizer step. */
export interface UpdateOptions {
  objective: ObjectiveConfig;
  temperature: number;
  policy: StepOptions;
  critic?: StepOptions & { vfCoef: number; cliprange: number | null };
  /** Rows of this minibatch whose per-token planes collect() returns (the inspector's sample). */
  inspectRows: readonly number[];
}

/** Scalars of one optimizer step (STEP_SCALARS order). */
export const STEP_SCALARS = [...OBJECTIVE_METRICS, 'loss', 'grad_norm', ...VALUE_METRICS, 'critic/grad_norm'] as const;
export type StepScalar = (typeof STEP_SCALARS)[number];

/**
 * How a step scalar of a minibatch combines over its micro-batches (each computed with the minibatch's totals):
 * 'sum' for the token means (each micro-batch gives its share of the minibatch's mean) and the losses, 'max' and
 * 'min' for the extremes ('min' over the micro-batches that have masked tokens: low_min leaves out rows without
 * any), 'last' for what only the optimizer step, after the last micro-batch, measures (the accumulated gradient's norm).
 */
export const MICRO_COMBINE: Record<StepScalar, 'sum' | 'max' | 'min' | 'last'> = {
  policy_loss: 'sum',
  'clip_ratio/low_mean': 'sum',
  'clip_ratio/high_mean': 'sum',
  'clip_ratio/region_mean': 'sum',
  cispo_clip_ratio: 'sum',
  kl: 'sum',
  'kl/exact': 'sum',
  entropy: 'sum',
  approx_kl: 'sum',
  'sampling/sampling_logp_difference/mean': 'sum',
  'sampling/sampling_logp_difference/max': 'max',
  'token_selection/entropy_kept_frac': 'sum',
  'token_selection/cov_selected_frac': 'sum',
  'clip_ratio/low_min': 'min',
  'clip_ratio/high_max': 'max',
  'sampling/importance_sampling_ratio/mean': 'sum',
  'rollout_correction/truncated_frac': 'sum',
  'rollout_correction/masked_frac': 'sum',
  'off_policy_mask/masked_frac': 'sum',
  loss: 'sum',
  grad_norm: 'last',
  value_loss: 'sum',
  value_clipfrac: 'sum',
  vpred_mean: 'sum',
  return_mean: 'sum',
  'critic/grad_norm': 'last',
};

/** One step's scalars from its micro-batches' (MICRO_COMBINE; `tokens`: each micro-batch's masked tokens). */
export function combineMicroScalars(
  parts: readonly Record<StepScalar, number>[],
  tokens: readonly number[],
): Record<StepScalar, number> {
  if (parts.length === 1) return { ...parts[0] };
  const out = {} as Record<StepScalar, number>;
  for (const name of STEP_SCALARS) {
    const v = parts.map((p) => p[name]);
    switch (MICRO_COMBINE[name]) {
      case 'sum':
        out[name] = v.reduce((a, b) => a + b, 0);
        break;
      case 'max':
        out[name] = v.reduce((a, b) => Math.max(a, b), 0);
        break;
      case 'min': {
        const counted = v.filter((_, j) => tokens[j] > 0);
        out[name] = counted.length ? counted.reduce((a, b) => Math.min(a, b), Infinity) : 0;
        break;
      }
      case 'last':
        out[name] = v[v.length - 1];
        break;
    }
  }
  return out;
}

/** The per-token planes kept for an inspected row, each (S). */
export const INSPECT_PLANES = ['logp', 'entropy', ...OBJECTIVE_RECORDS] as const;

/** What collect() returns for one optimizer step. */
export interface UpdateResult {
  scalars: Record<StepScalar, number>;
  /** Inspected rows (indices into the minibatch) -> plane name -> (S). */
  inspected: Map<number, Record<(typeof INSPECT_PLANES)[number], Float32Array>>;
}

/** What score() returns, each (N*S) over the batch's rows in order. */
export interface ScoreResult {
  /** Absent when score() was asked not to run the policy (one update per batch: the update's forward is pi_old). */
  oldLogp?: Float32Array;
  /** sum_v pi_old(v)^2 at each token, when score() was asked for it (the optimal token baseline's input). */
  sumPiSquared?: Float32Array;
  refLogp?: Float32Array;
  values?: Float32Array;
}

/** The policy's per-token planes of a batch at the current parameters, each (N*S); the reference's when there is one. */
export interface TokenPlanes {
  logp: Float32Array;
  entropy: Float32Array;
  refLogp?: Float32Array;
  /** Exact KL(pi_theta || pi_ref) per token. */
  klExact?: Float32Array;
}

/** Everything needed to resume a learner exactly. */
export interface LearnerState {
  /** The policy's weights (under LoRA the frozen base, without the adapters). */
  policy: ParamArrays;
  /** Under LoRA, the adapters by name (their AdamW moments are policyOptimizer's). */
  lora?: ParamArrays;
  policyOptimizer: { m: ParamArrays; v: ParamArrays; step: number };
  reference?: ParamArrays;
  critic?: ParamArrays;
  criticOptimizer?: { m: ParamArrays; v: ParamArrays; step: number };
}

export interface LearnerInit {
  config: ModelConfig;
  params: ParamArrays;
  /** Reference parameters (default: a copy of params) when beta > 0. */
  reference?: ParamArrays | null;
  needsReference: boolean;
  /**
   * The reference reads the policy's frozen LoRA base instead of a copy (derive().referenceIsBase: LoRA, no reference
   * resets); `reference` is then not read. The CPU twins keep a copy (the same values).
   */
  referenceIsBase?: boolean;
  needsCritic: boolean;
  /** Critic parameters when resuming (default: the policy's trunk with a zero head). */
  critic?: ParamArrays | null;
  /** Largest number of rows of one forward (a minibatch, a scoring chunk, a rollout batch). */
  maxRows: number;
  /** LoRA adapters on the policy (the base frozen); the reference and the critic stay full models. */
  lora?: LoraInit | null;
  /**
   * How the frozen weights are stored (the weight_dtype knob, resolved): the policy's base under LoRA and the
   * reference. The critic and a policy trained in full keep f32 (AdamW's masters; see gpu-model.ts). Default f32.
   */
  weightDtype?: WeightDtype;
  /**
   * The precision the policy's rollouts read its weights in (the rollout_dtype knob): f32, or a bf16/f16 copy
   * refreshed before each rollout (GpuModelOptions.rolloutDtype; the CPU twin samples from the rounded weights).
   */
  rolloutDtype?: WeightDtype;
  /**
   * Under LoRA, the rollouts read each adapted matrix merged with its adapter, in rolloutDtype (the
   * rollout_merge_lora knob; GpuModelOptions.rolloutMergeLora). Default false.
   */
  rolloutMergeLora?: boolean;
  /** Per-layer activation recomputation in the policy's and the critic's training backward (gradient_checkpointing). */
  recompute?: boolean;
  /** Bytes of (rows, V) scratch the chunked LM head may hold (default HEAD_SCRATCH_BYTES; tests force small chunks). */
  headScratchBytes?: number;
  /**
   * A policy that only scores (a distillation teacher, src/rl/learners/teacher.ts): frozen, no gradients or AdamW
   * moments, its weights stored at weightDtype. Never updated.
   */
  frozen?: boolean;
}

/** The backend-neutral learner the trainer drives. */
export interface Learner {
  readonly backend: 'webgpu' | 'cpu';
  readonly policy: Policy;
  readonly hasReference: boolean;
  readonly hasCritic: boolean;
  /**
   * log pi_old (when `policy`), log pi_ref and V_old (when present) of every completion token of the batches, and
   * sum_v pi_old(v)^2 when `sumPiSquared` (needs `policy`; computed in the same head pass, nothing more otherwise).
   */
  score(batches: SequenceBatch[], temperature: number, policy: boolean, sumPiSquared?: boolean): Promise<ScoreResult>;
  /** log pi_theta and H of every completion token at the current parameters (and log pi_ref, exact KL), one readback; not used by training. */
  tokenPlanes(seq: SequenceBatch, temperature: number): Promise<TokenPlanes>;
  /** Records one optimizer step, over its micro-batches when given several (no readback on the GPU). */
  update(inp: StepInputs, opts: UpdateOptions): void;
  /** Results of every update() since the last collect(), in order (one readback). */
  collect(): Promise<UpdateResult[]>;
  /** Copies the policy into the reference (periodic reference reset). */
  syncReference(): Promise<void>;
  saveState(): Promise<LearnerState>;
  loadOptimizerState(state: LearnerState): void;
  destroy(): void;
}

/** The critic's initial parameters: the policy's trunk, an untied head of zeros (V = head output 0). */
export function criticInit(config: ModelConfig, policy: ParamArrays): { config: ModelConfig; params: ParamArrays } {
  const params: ParamArrays = {};
  for (const [k, v] of Object.entries(policy)) if (k !== 'lm_head.weight') params[k] = Float32Array.from(v);
  params['lm_head.weight'] = new Float32Array(config.vocabSize * config.dModel);
  return { config: { ...config, tiedEmbeddings: false }, params };
}

// ---------------------------------------------------------------------------------------------------------

interface SeqTensors {
  key: string;
  tokens: Tensor<'u32'>;
  positions: Tensor<'u32'>;
  kvStart: Tensor<'u32'>;
  targets: Tensor<'u32'>;
  gatherIdx: Tensor<'u32'>;
  scatterIdx: Tensor<'u32'>;
  /** The LM head's chunk scratch for M*T rows (with the reference's when there is one). */
  head: ChunkedHead;
  // (M*T) per-position scratch
  lpFull: Tensor;
  entFull: Tensor;
  refLpFull: Tensor;
  klFull: Tensor;
  dLpFull: Tensor;
  dEntFull: Tensor;
  dKlFull: Tensor;
  /** The critic's V and its gradient at every position (critic only). */
  valuesFull: Tensor | null;
  dValuesFull: Tensor | null;
  // (M*S) per-token
  logp: Tensor;
  entropy: Tensor;
  oldLogp: Tensor;
  refLogp: Tensor;
  klExact: Tensor;
  advantages: Tensor;
  mask: Tensor;
  samplerLogp: Tensor;
  /** (M*S + 1): gradients with a zero tail slot for the scatter-by-gather. */
  dLogpExt: Tensor;
  dEntExt: Tensor;
  dKlExt: Tensor;
  dValuesExt: Tensor;
  dLogp: Tensor;
  dEnt: Tensor;
  dKl: Tensor;
  dValues: Tensor;
  records: Tensor;
  weightPlane: Tensor;
  values: Tensor;
  oldValues: Tensor;
  returns: Tensor;
  objectiveMetrics: Tensor;
  valueMetrics: Tensor;
  loss: Tensor;
  valueLoss: Tensor;
}

/** The learner on WebGPU. */
export class GpuLearner implements Learner {
  readonly backend = 'webgpu';
  readonly policy: GpuPolicy;
  private readonly ref: GpuModel | null;
  /** Whether `ref` is a view of the policy's frozen base (LearnerInit.referenceIsBase). */
  private readonly refIsBase: boolean;
  private readonly critic: GpuModel | null;
  private readonly headScratchBytes: number | undefined;
  private seqs = new Map<string, SeqTensors>();
  /** Per-update scalars (STEP_SCALARS each), grown as needed; collect() reads [0, pending). */
  private stats: Tensor;
  private statsCapacity = 0;
  /** Per pending update: its inspected rows, S, their planes, its first stats slot and its micro-batches' masked tokens. */
  private pending: { rows: readonly number[]; S: number; inspect: Tensor | null; first: number; tokens: number[] }[] =
    [];
  /** Stats buffers replaced by a larger one; submitted work may still read them, so they die at collect(). */
  private retired: Tensor[] = [];

  constructor(
    private readonly ctx: GpuContext,
    init: LearnerInit,
  ) {
    const weightDtype = init.weightDtype ?? 'f32';
    const recompute = init.recompute ?? false;
    this.policy = gpuLearnerPolicy(ctx, init);
    this.headScratchBytes = init.headScratchBytes;
    // The reference and the critic run training batches only: one workspace each (the memory plan counts one). The
    // reference is frozen: no gradients, and its forward keeps one layer's activations.
    this.refIsBase = init.needsReference && (init.referenceIsBase ?? false);
    if (this.refIsBase && !init.lora)
      throw new Error("GpuLearner: the reference reads the policy's frozen base only under LoRA");
    this.ref = !init.needsReference
      ? null
      : this.refIsBase
        ? this.policy.model.frozenView()
        : GpuModel.create(ctx, init.config, init.reference ?? init.params, init.maxRows, 1, undefined, {
            weightDtype,
            frozen: true,
          });
    if (init.needsCritic) {
      const c = criticInit(init.config, init.params);
      this.critic = GpuModel.create(ctx, c.config, init.critic ?? c.params, init.maxRows, 1, undefined, { recompute });
    } else this.critic = null;
    this.stats = this.growStats(16);
  }

  get hasReference(): boolean {
    return this.ref !== null;
  }

  get hasCritic(): boolean {
    return this.critic !== null;
  }

  private get model(): GpuModel {
    return this.policy.model;
  }

  private growStats(updates: number): Tensor {
    this.statsCapacity = updates;
    return this.ctx.tensor([updates, STEP_SCALARS.length], { label: 'rl.step_scalars' });
  }

  /**
   * The buffers of an (M, S, T) minibatch shape, allocated once per shape. Only the latest shape is kept: every
   * minibatch of a step has one shape, but T follows the step's longest prompt, so shapes change between steps,
   * and each set holds the head's chunk scratch (the memory plan, memory-plan.ts, counts one set).
   */
  private tensors(seq: SequenceBatch): SeqTensors {
    const key = `${seq.N}x${seq.S}x${seq.T}`;
    const have = this.seqs.get(key);
    if (have) return have;
    // The previous shape's work has completed: the trainer collects a step's updates before the next step starts.
    this.dropSeqs();
    const { ctx } = this;
    const { dModel, vocabSize } = this.model.config;
    const M = seq.N;
    const MS = M * seq.S;
    const MT = M * seq.T;
    const f = (n: number, label: string) => ctx.tensor([n], { label: `rl.${label}` });
    const u = (n: number, label: string) => ctx.tensor<'u32'>([n], { dtype: 'u32', label: `rl.${label}` });
    const ext = (label: string) => ctx.tensor([MS + 1], { label: `rl.${label}` });
    const dLogpExt = ext('dLogp');
    const dEntExt = ext('dEntropy');
    const dKlExt = ext('dKlExact');
    const dValuesExt = ext('dValues');
    const t: SeqTensors = {
      key,
      tokens: u(MT, 'tokens'),
      positions: u(MT, 'positions'),
      kvStart: u(M, 'kvStart'),
      targets: u(MT, 'targets'),
      gatherIdx: u(MS, 'gatherIdx'),
      scatterIdx: u(MT, 'scatterIdx'),
      head: new ChunkedHead(ctx, {
        dModel,
        vocabSize,
        maxRows: MT,
        reference: this.ref !== null,
        ...(this.headScratchBytes !== undefined ? { budgetBytes: this.headScratchBytes } : {}),
      }),
      lpFull: f(MT, 'logp.full'),
      entFull: f(MT, 'entropy.full'),
      refLpFull: f(MT, 'ref_logp.full'),
      klFull: f(MT, 'kl_exact.full'),
      dLpFull: f(MT, 'dLogp.full'),
      dEntFull: f(MT, 'dEntropy.full'),
      dKlFull: f(MT, 'dKlExact.full'),
      valuesFull: this.critic ? f(MT, 'values.full') : null,
      dValuesFull: this.critic ? f(MT, 'dValues.full') : null,
      logp: ctx.tensor([M, seq.S], { label: 'rl.logp' }),
      entropy: ctx.tensor([M, seq.S], { label: 'rl.entropy' }),
      oldLogp: ctx.tensor([M, seq.S], { label: 'rl.old_logp' }),
      refLogp: ctx.tensor([M, seq.S], { label: 'rl.ref_logp' }),
      klExact: ctx.tensor([M, seq.S], { label: 'rl.kl_exact' }),
      advantages: ctx.tensor([M, seq.S], { label: 'rl.advantages' }),
      mask: ctx.tensor([M, seq.S], { label: 'rl.mask' }),
      samplerLogp: ctx.tensor([M, seq.S], { label: 'rl.sampler_logp' }),
      dLogpExt,
      dEntExt,
      dKlExt,
      dValuesExt,
      dLogp: dLogpExt.view(0, [M, seq.S]),
      dEnt: dEntExt.view(0, [M, seq.S]),
      dKl: dKlExt.view(0, [M, seq.S]),
      dValues: dValuesExt.view(0, [M, seq.S]),
      records: ctx.tensor([OBJECTIVE_RECORDS.length, M, seq.S], { label: 'rl.records' }),
      weightPlane: ctx.tensor([M, seq.S], { label: 'rl.weight' }),
      values: ctx.tensor([M, seq.S], { label: 'rl.values' }),
      oldValues: ctx.tensor([M, seq.S], { label: 'rl.old_values' }),
      returns: ctx.tensor([M, seq.S], { label: 'rl.returns' }),
      objectiveMetrics: f(OBJECTIVE_METRICS.length, 'objective_metrics'),
      valueMetrics: f(VALUE_METRICS.length, 'value_metrics'),
      loss: f(1, 'loss'),
      valueLoss: f(1, 'value_loss'),
    };
    // The zero tail slots: written once, never overwritten (kernels write only the (M*S) prefix views).
    for (const e of [dLogpExt, dEntExt, dKlExt, dValuesExt]) ctx.upload(e, new Float32Array(MS + 1));
    this.seqs.set(key, t);
    return t;
  }

  private uploadSeq(t: SeqTensors, seq: SequenceBatch): ForwardInputs {
    const { ctx } = this;
    ctx.upload(t.tokens, seq.tokens);
    ctx.upload(t.positions, seq.positions);
    ctx.upload(t.kvStart, seq.kvStart);
    ctx.upload(t.targets, seq.targets);
    ctx.upload(t.gatherIdx, seq.gatherIdx);
    ctx.upload(t.scatterIdx, seq.scatterIdx);
    return { tokens: t.tokens, positions: t.positions, kvStart: t.kvStart };
  }

  async score(
    batches: SequenceBatch[],
    temperature: number,
    policy: boolean,
    sumPiSquared = false,
  ): Promise<ScoreResult> {
    if (sumPiSquared && !policy) throw new Error('score: sumPiSquared comes from the policy pass; pass policy true');
    const kinds = [
      policy ? 'oldLogp' : null,
      sumPiSquared ? 'sumPiSquared' : null,
      this.ref ? 'refLogp' : null,
      this.critic ? 'values' : null,
    ].filter((k): k is keyof ScoreResult => k !== null);
    const scratch: Tensor[] = [];
    const outs: Tensor[][] = kinds.map(() => []);
    for (const seq of batches) {
      const t = this.tensors(seq);
      const inp = this.uploadSeq(t, seq);
      const out = () => this.ctx.tensor([seq.N * seq.S], { label: 'rl.score' });
      const rec = this.ctx.recorder('rl.score');
      if (policy) {
        const o = out();
        const ws = this.model.forward(rec, seq.N, seq.T, inp);
        // (N*T) per-position sum pi^2, only when asked: the head computes it from each chunk's logits.
        const sqFull = sumPiSquared ? this.ctx.tensor([seq.N * seq.T], { label: 'rl.sum_pi_sq.full' }) : undefined;
        if (sqFull) scratch.push(sqFull);
        t.head.forward(rec, {
          policy: { h: ws.nf, W: this.model.headWeightTensor },
          targets: t.targets,
          logp: t.lpFull,
          entropy: t.entFull,
          ...(sqFull ? { sumPiSquared: sqFull } : {}),
          temperature,
        });
        gather(rec, o, t.lpFull, t.gatherIdx);
        outs[kinds.indexOf('oldLogp')].push(o);
        if (sqFull) {
          const q = out();
          gather(rec, q, sqFull, t.gatherIdx);
          outs[kinds.indexOf('sumPiSquared')].push(q);
        }
      }
      if (this.ref) {
        const o = out();
        const rws = this.ref.forward(rec, seq.N, seq.T, inp);
        // The reference's own log-prob: its head on its hidden states (the entropy lands in scratch).
        t.head.forward(rec, {
          policy: { h: rws.nf, W: this.ref.headWeightTensor },
          targets: t.targets,
          logp: t.refLpFull,
          entropy: t.klFull,
          temperature,
        });
        gather(rec, o, t.refLpFull, t.gatherIdx);
        outs[kinds.indexOf('refLogp')].push(o);
      }
      if (this.critic && t.valuesFull) {
        const o = out();
        const cws = this.critic.forward(rec, seq.N, seq.T, inp);
        scalarHeadForward(rec, t.valuesFull, cws.nf, this.critic.headWeightTensor);
        gather(rec, o, t.valuesFull, t.gatherIdx);
        outs[kinds.indexOf('values')].push(o);
      }
      rec.submit();
    }
    const flat = outs.flat();
    const arrays = (await this.ctx.readMany(flat)) as Float32Array[];
    for (const x of [...flat, ...scratch]) x.destroy();
    const result: ScoreResult = {};
    let i = 0;
    kinds.forEach((k, j) => {
      result[k] = concat(arrays.slice(i, i + outs[j].length));
      i += outs[j].length;
    });
    return result;
  }

  async tokenPlanes(seq: SequenceBatch, temperature: number): Promise<TokenPlanes> {
    const t = this.tensors(seq);
    const inp = this.uploadSeq(t, seq);
    const MS = seq.N * seq.S;
    const outs: Tensor[] = [];
    const out = (label: string) => {
      const o = this.ctx.tensor([MS], { label: `rl.planes.${label}` });
      outs.push(o);
      return o;
    };
    const rec = this.ctx.recorder('rl.token_planes');
    this.headForward(rec, t, this.model.forward(rec, seq.N, seq.T, inp), inp, seq, temperature);
    gather(rec, out('logp'), t.lpFull, t.gatherIdx);
    gather(rec, out('entropy'), t.entFull, t.gatherIdx);
    if (this.ref) {
      gather(rec, out('ref_logp'), t.refLpFull, t.gatherIdx);
      gather(rec, out('kl_exact'), t.klFull, t.gatherIdx);
    }
    rec.submit();
    const [logp, entropy, refLogp, klExact] = (await this.ctx.readMany(outs)) as Float32Array[];
    for (const o of outs) o.destroy();
    return this.ref ? { logp, entropy, refLogp, klExact } : { logp, entropy };
  }

  update(step: StepInputs, opts: UpdateOptions): void {
    const { ctx } = this;
    const mb = microBatchesOf('GpuLearner.update', step);
    const K = STEP_SCALARS.length;
    const first = this.pendingSlots();
    this.reserveStats(first + mb.micro.length);
    const S = mb.micro[0].seq.S;
    const planes = INSPECT_PLANES.length;
    // The inspected rows' per-token planes, copied out of each micro-batch before the next overwrites them.
    const inspect = opts.inspectRows.length
      ? ctx.tensor([opts.inspectRows.length, planes, S], { label: 'rl.inspect' })
      : null;
    const last = mb.micro.length - 1;
    const crit = this.critic && opts.critic ? opts.critic : null;
    const cfg = opts.objective;
    const exact = cfg.beta > 0 && cfg.kl_placement === 'in_loss' && cfg.kl_estimator === 'exact';
    const temperature = opts.temperature;
    // One command buffer per micro-batch: the next one's uploads reuse the same buffers, and a queue write lands
    // before the next submit. The gradients accumulate across them (zeroed by the first), the optimizer steps once
    // after the last.
    mb.micro.forEach((inp, j) => {
      const seq = inp.seq;
      const t = this.tensors(seq);
      const fwd = this.uploadSeq(t, seq);
      ctx.upload(t.advantages, inp.advantages);
      ctx.upload(t.mask, inp.mask);
      ctx.upload(t.samplerLogp, inp.samplerLogp);
      if (inp.oldLogp) ctx.upload(t.oldLogp, inp.oldLogp);
      if (crit) {
        if (!inp.oldValues || !inp.returns)
          throw new Error('GpuLearner.update: the critic needs oldValues and returns');
        ctx.upload(t.oldValues, inp.oldValues);
        ctx.upload(t.returns, inp.returns);
      }
      const at = (offset: number, n: number) => this.stats.view((first + j) * K + offset, [n]);

      const rec = ctx.recorder('rl.update');
      // Policy forward and the per-token log-probs and entropies of the completion tokens.
      const ws = this.model.forward(rec, seq.N, seq.T, fwd);
      const rws = this.headForward(rec, t, ws, fwd, seq, temperature);
      gather(rec, t.logp, t.lpFull, t.gatherIdx);
      gather(rec, t.entropy, t.entFull, t.gatherIdx);
      if (!inp.oldLogp) rec.copy(t.oldLogp, t.logp); // the step's own forward is pi_old: rho = 1 exactly
      if (this.ref) {
        gather(rec, t.refLogp, t.refLpFull, t.gatherIdx);
        gather(rec, t.klExact, t.klFull, t.gatherIdx);
      }
      objectiveForwardBackward(
        rec,
        t.loss,
        t.dLogp,
        t.dEnt,
        t.records,
        t.objectiveMetrics,
        {
          logp: t.logp,
          oldLogp: t.oldLogp,
          advantages: t.advantages,
          mask: t.mask,
          entropy: t.entropy,
          samplerLogp: t.samplerLogp,
          ...(this.ref ? { refLogp: t.refLogp, klExact: t.klExact } : {}),
        },
        cfg,
        mb.totals,
      );
      // d loss / d (per-token logp, entropy) back to every position, then through the fused head to the hidden states.
      gather(rec, t.dLpFull, t.dLogpExt, t.scatterIdx);
      gather(rec, t.dEntFull, t.dEntExt, t.scatterIdx);
      const klRef = exact && this.ref && rws;
      if (klRef) {
        // The exact KL's gradient (not in dLogp): d loss / d klExact = beta * the aggregation weight (records plane 4).
        const MS = seq.N * S;
        rec.copy(t.weightPlane, t.records.view(4 * MS, [MS]));
        scale(rec, t.dKl, t.weightPlane, cfg.beta);
        gather(rec, t.dKlFull, t.dKlExt, t.scatterIdx);
      }
      if (j === 0) this.model.zeroGrads(rec);
      t.head.backward(rec, {
        policy: { h: ws.nf, W: this.model.headWeightTensor },
        targets: t.targets,
        dLogp: t.dLpFull,
        dEntropy: t.dEntFull,
        ...(klRef ? { reference: { h: rws.nf, W: this.ref!.headWeightTensor, dKl: t.dKlFull } } : {}),
        dH: this.model.dHidden(ws),
        dW: this.model.headGradTensor,
        temperature,
      });
      this.model.backward(rec, ws, fwd);
      if (j === last) {
        this.model.optimizerStep(rec, opts.policy);
        rec.copy(at(OBJECTIVE_METRICS.length + 1, 1), this.model.gradNorm);
      }
      rec.copy(at(0, OBJECTIVE_METRICS.length), t.objectiveMetrics);
      rec.copy(at(OBJECTIVE_METRICS.length, 1), t.loss);
      if (crit && this.critic && t.valuesFull && t.dValuesFull) {
        const cws = this.critic.forward(rec, seq.N, seq.T, fwd);
        scalarHeadForward(rec, t.valuesFull, cws.nf, this.critic.headWeightTensor);
        gather(rec, t.values, t.valuesFull, t.gatherIdx);
        valueLossForwardBackward(
          rec,
          t.valueLoss,
          t.dValues,
          t.valueMetrics,
          t.values,
          t.oldValues,
          t.returns,
          t.mask,
          {
            coef: crit.vfCoef,
            ...(crit.cliprange !== null ? { cliprange: crit.cliprange } : {}),
            ...(mb.totals ? { totalTokens: mb.totals.tokens } : {}),
          },
        );
        gather(rec, t.dValuesFull, t.dValuesExt, t.scatterIdx);
        if (j === 0) this.critic.zeroGrads(rec);
        scalarHeadBackward(
          rec,
          this.critic.dHidden(cws),
          this.critic.headGradTensor,
          t.dValuesFull,
          cws.nf,
          this.critic.headWeightTensor,
        );
        this.critic.backward(rec, cws, fwd);
        if (j === last) {
          this.critic.optimizerStep(rec, crit);
          rec.copy(at(OBJECTIVE_METRICS.length + 2 + VALUE_METRICS.length, 1), this.critic.gradNorm);
        }
        rec.copy(at(OBJECTIVE_METRICS.length + 2, VALUE_METRICS.length), t.valueMetrics);
      }
      if (inspect) {
        const MS = seq.N * S;
        opts.inspectRows.forEach((row, k) => {
          const r = row - mb.starts[j];
          if (r < 0 || r >= seq.N) return;
          const dst = (p: number) => inspect.view((k * planes + p) * S, [S]);
          rec.copy(dst(0), t.logp.view(r * S, [S]));
          rec.copy(dst(1), t.entropy.view(r * S, [S]));
          OBJECTIVE_RECORDS.forEach((_, p) => rec.copy(dst(2 + p), t.records.view(p * MS + r * S, [S])));
        });
      }
      rec.submit();
    });
    this.pending.push({ rows: opts.inspectRows, S, inspect, first, tokens: mb.tokens });
  }

  /** Stats slots taken by the pending updates (one per micro-batch). */
  private pendingSlots(): number {
    const p = this.pending[this.pending.length - 1];
    return p ? p.first + p.tokens.length : 0;
  }

  /** Makes the stats buffer hold `slots` slots; the old buffer may still be read by submitted work (dies at collect()). */
  private reserveStats(slots: number): void {
    if (slots <= this.statsCapacity) return;
    const old = this.stats;
    let capacity = this.statsCapacity;
    while (capacity < slots) capacity *= 2;
    const grown = this.growStats(capacity);
    const rec0 = this.ctx.recorder('rl.stats.grow');
    rec0.copy(grown.view(0, [old.size]), old);
    rec0.submit();
    this.retired.push(old);
    this.stats = grown;
  }

  /**
   * The policy's head on a forward's hidden states, and the reference's in lockstep when there is one: per-position
   * log-prob and entropy (lpFull, entFull), the reference's log-prob and the exact KL (refLpFull, klFull). Returns
   * the reference's workspace (its hidden states feed the KL's backward), or null.
   */
  private headForward(
    rec: Recorder,
    t: SeqTensors,
    ws: Workspace,
    inp: ForwardInputs,
    seq: SequenceBatch,
    temperature: number,
  ): Workspace | null {
    const rws = this.ref ? this.ref.forward(rec, seq.N, seq.T, inp) : null;
    t.head.forward(rec, {
      policy: { h: ws.nf, W: this.model.headWeightTensor },
      targets: t.targets,
      logp: t.lpFull,
      entropy: t.entFull,
      ...(rws && this.ref
        ? { reference: { h: rws.nf, W: this.ref.headWeightTensor, logp: t.refLpFull, kl: t.klFull } }
        : {}),
      temperature,
    });
    return rws;
  }

  async collect(): Promise<UpdateResult[]> {
    const pending = this.pending;
    this.pending = [];
    if (!pending.length) return [];
    const K = STEP_SCALARS.length;
    const inspects = pending.map((p) => p.inspect).filter((x): x is Tensor => x !== null);
    const [stats, ...insp] = (await this.ctx.readMany([this.stats, ...inspects])) as Float32Array[];
    for (const x of [...inspects, ...this.retired]) x.destroy();
    this.retired = [];
    let k = 0;
    return pending.map((p) => {
      const parts = p.tokens.map(
        (_, j) =>
          Object.fromEntries(STEP_SCALARS.map((name, i) => [name, stats[(p.first + j) * K + i]])) as Record<
            StepScalar,
            number
          >,
      );
      const scalars = combineMicroScalars(parts, p.tokens);
      const inspected: UpdateResult['inspected'] = new Map();
      if (p.inspect) {
        const data = insp[k++];
        const planes = INSPECT_PLANES.length;
        p.rows.forEach((row, r) => {
          const rec = {} as Record<(typeof INSPECT_PLANES)[number], Float32Array>;
          INSPECT_PLANES.forEach(
            (name, pl) => (rec[name] = data.slice((r * planes + pl) * p.S, (r * planes + pl + 1) * p.S)),
          );
          inspected.set(row, rec);
        });
      }
      return { scalars, inspected };
    });
  }

  async syncReference(): Promise<void> {
    if (!this.ref) return;
    if (this.refIsBase) throw new Error("syncReference: the reference is the policy's frozen base (referenceIsBase)");
    // Converted to the reference's storage (rounded to half when it is half).
    this.ref.uploadBase(await this.model.download());
  }

  async saveState(): Promise<LearnerState> {
    const state: LearnerState = {
      policy: await this.model.downloadBase(),
      policyOptimizer: await this.model.downloadOptimizerState(),
    };
    if (this.model.lora) state.lora = await this.model.downloadAdapters();
    if (this.ref) state.reference = await this.ref.download();
    if (this.critic) {
      state.critic = await this.critic.download();
      state.criticOptimizer = await this.critic.downloadOptimizerState();
    }
    return state;
  }

  loadOptimizerState(state: LearnerState): void {
    if (state.policyOptimizer.step > 0) this.model.uploadOptimizerState(state.policyOptimizer);
    if (this.critic && state.criticOptimizer && state.criticOptimizer.step > 0)
      this.critic.uploadOptimizerState(state.criticOptimizer);
  }

  private dropSeqs(): void {
    for (const t of this.seqs.values())
      for (const v of Object.values(t)) if (v && typeof v === 'object' && 'destroy' in v) (v as Tensor).destroy();
    this.seqs.clear();
  }

  destroy(): void {
    this.dropSeqs();
    this.stats.destroy();
    for (const x of this.retired) x.destroy();
    // The reference first: a view of the policy's base (referenceIsBase) must not outlive it.
    this.ref?.destroy();
    this.policy.destroy();
    this.critic?.destroy();
  }
}

/** out[i] = x[idx[i]] over flat element indices (one 32-bit word per row). */
function gather(rec: Recorder, out: Tensor, x: Tensor, idx: Tensor<'u32'>): void {
  gatherRows(rec, out.reshape([idx.size]), x.reshape([x.size]), idx);
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
