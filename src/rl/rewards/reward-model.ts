// A reward model trained in the lab: a transformer of the policy's architecture, started from the policy's trunk,
// whose head's first output at a sequence's last token is its scalar reward (the critic's construction, see
// criticInit), trained with the Bradley-Terry loss on preference pairs (shaders/bradley-terry.wgsl). Scoring a batch is
// one forward and one readback; a training step is recorded without readback and its metrics collected later.
// Also: preference pairs from groups of a policy's completions labelled by a verifier. Not the RL trainer.

import type { GpuContext, Recorder, Tensor } from '../../gpu';
import { BT_METRICS, bradleyTerryForwardBackward, type BradleyTerryOptions } from '../../kernels/bradley-terry';
import { gatherRows } from '../../kernels/decode';
import { scalarHeadBackward, scalarHeadForward } from '../../kernels/head-chunked';
import type { ParamArrays } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import { leftPad } from '../../model/generate';
import { GpuModel, type ForwardInputs, type StepOptions } from '../../model/gpu-model';
import { criticInit } from '../learners/learner';

/** One sequence to score: its prompt (BOS first) and completion token ids. */
export interface ScoredSequence {
  prompt: readonly number[];
  completion: readonly number[];
}

/** A preference: `chosen` is better than `rejected`, both completions of `prompt`. */
export interface PreferencePair {
  prompt: readonly number[];
  chosen: readonly number[];
  rejected: readonly number[];
}

/** config.json's "rl_lab": { "kind": ... } of a saved lab reward model. */
export const REWARD_MODEL_KIND = 'reward-model';

/** The metrics of one training step. */
export interface RewardModelStepMetrics {
  /** Mean -log sigmoid(r_chosen - r_rejected) (without the centering term). */
  loss: number;
  /** Fraction of pairs the model ranks right. */
  accuracy: number;
  /** Mean r_chosen - r_rejected. */
  margin: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

export type RewardModelStepOptions = StepOptions & BradleyTerryOptions;

/**
 * The layout of a batch of whole sequences for scoring: each row is prompt + completion, LEFT-padded to T, so every
 * row's last token sits at position T - 1 and its score is the head's first output there.
 */
export interface ScoreBatch {
  B: number;
  T: number;
  tokens: Uint32Array;
  positions: Uint32Array;
  kvStart: Uint32Array;
  /** (B) the position (row of the (B*T, C) hidden states) of each row's score: its last token. */
  scoreIdx: Uint32Array;
}

export function scoreBatch(sequences: readonly ScoredSequence[], padId: number): ScoreBatch {
  const rows = sequences.map((s, b) => {
    if (s.prompt.length + s.completion.length === 0)
      throw new Error(`reward model: sequence ${b} is empty (no prompt and no completion)`);
    return [...s.prompt, ...s.completion];
  });
  const { R: B, P: T, tokens, positions, kvStart } = leftPad(rows, padId);
  const scoreIdx = Uint32Array.from({ length: B }, (_, b) => b * T + T - 1);
  return { B, T, tokens, positions, kvStart, scoreIdx };
}

export class LabRewardModel {
  private constructor(
    private readonly ctx: GpuContext,
    readonly model: GpuModel,
    private readonly padId: number,
    readonly maxRows: number,
  ) {}

  /**
   * A reward model started from the policy's parameters: its trunk, and an untied head of zeros (every score starts
   * at 0), as the critic starts. `params` given: those instead (a saved reward model).
   */
  static create(
    ctx: GpuContext,
    policyConfig: ModelConfig,
    policyParams: ParamArrays,
    opts: { padId: number; maxRows?: number; params?: ParamArrays },
  ): LabRewardModel {
    const init = criticInit(policyConfig, policyParams);
    const maxRows = opts.maxRows ?? 64;
    return new LabRewardModel(
      ctx,
      GpuModel.create(ctx, init.config, opts.params ?? init.params, maxRows),
      opts.padId,
      maxRows,
    );
  }

  /** A saved reward model (its own config, untied head) on the GPU. */
  static load(
    ctx: GpuContext,
    config: ModelConfig,
    params: ParamArrays,
    opts: { padId: number; maxRows?: number },
  ): LabRewardModel {
    const maxRows = opts.maxRows ?? 64;
    return new LabRewardModel(ctx, GpuModel.create(ctx, config, params, maxRows), opts.padId, maxRows);
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  private upload(batch: ScoreBatch): { inp: ForwardInputs; scoreIdx: Tensor<'u32'>; temps: Tensor[] } {
    const u = (data: Uint32Array, label: string) =>
      this.ctx.fromArray(data, [data.length], { dtype: 'u32', label }) as Tensor<'u32'>;
    const tokens = u(batch.tokens, 'rm.tokens');
    const positions = u(batch.positions, 'rm.positions');
    const kvStart = u(batch.kvStart, 'rm.kvStart');
    const scoreIdx = u(batch.scoreIdx, 'rm.scoreIdx');
    return { inp: { tokens, positions, kvStart }, scoreIdx, temps: [tokens, positions, kvStart, scoreIdx] };
  }

  private checkRows(rows: number, what: string): void {
    if (rows > this.maxRows)
      throw new Error(`reward model: ${rows} sequences in one ${what}, more than the ${this.maxRows} it was made for`);
  }

  /** The scores of `sequences`: one forward and one readback per maxRows of them. */
  async score(sequences: readonly ScoredSequence[]): Promise<Float32Array> {
    const out = new Float32Array(sequences.length);
    for (let i = 0; i < sequences.length; i += this.maxRows)
      out.set(await this.scoreChunk(sequences.slice(i, i + this.maxRows)), i);
    return out;
  }

  private async scoreChunk(sequences: readonly ScoredSequence[]): Promise<Float32Array> {
    const batch = scoreBatch(sequences, this.padId);
    const { inp, scoreIdx, temps } = this.upload(batch);
    const scores = this.ctx.tensor([batch.B], { label: 'rm.scores' });
    const last = this.ctx.tensor([batch.B, this.config.dModel], { label: 'rm.last' });
    const rec = this.ctx.recorder('reward model score');
    const ws = this.model.forward(rec, batch.B, batch.T, inp);
    gatherRows(rec, last, ws.nf.reshape2d(), scoreIdx);
    scalarHeadForward(rec, scores, last, this.model.headWeightTensor);
    rec.submit();
    const [out] = await this.ctx.readMany([scores]);
    for (const t of [...temps, scores, last]) t.destroy();
    return out as Float32Array;
  }

  /**
   * Records the Bradley-Terry forward and backward of `pairs` into the gradients (zeroed first), without an optimizer
   * step, on `rec` (submitted here when not given). Returns the loss and metrics tensors the step writes, and every
   * tensor it made (`temps`, those two included), which the caller destroys once it has read what it wants.
   */
  recordBackward(
    pairs: readonly PreferencePair[],
    opts: BradleyTerryOptions = {},
    given?: Recorder,
  ): { loss: Tensor; metrics: Tensor; temps: Tensor[] } {
    if (pairs.length === 0) throw new Error('reward model: a training step needs at least one preference pair');
    this.checkRows(2 * pairs.length, 'training step (two sequences per pair)');
    const sequences: ScoredSequence[] = pairs.flatMap((p) => [
      { prompt: p.prompt, completion: p.chosen },
      { prompt: p.prompt, completion: p.rejected },
    ]);
    const batch = scoreBatch(sequences, this.padId);
    const N = batch.B;
    const { inp, scoreIdx, temps } = this.upload(batch);
    const pairIdx = this.ctx.fromArray(
      Uint32Array.from({ length: 2 * pairs.length }, (_, i) => i),
      [pairs.length, 2],
      { dtype: 'u32', label: 'rm.pairs' },
    ) as Tensor<'u32'>;
    // Every position's score gradient is taken from dScoresExt: its row's slot at the row's last position, the zero
    // slot N elsewhere. The index is (N*T) u32, one per position (the scores are the head's first row, no logits).
    const spread = new Uint32Array(N * batch.T).fill(N);
    batch.scoreIdx.forEach((pos, b) => (spread[pos] = b));
    const spreadIdx = this.ctx.fromArray(spread, [spread.length], {
      dtype: 'u32',
      label: 'rm.spreadIdx',
    }) as Tensor<'u32'>;
    const scores = this.ctx.tensor([N], { label: 'rm.scores' });
    const dScoresExt = this.ctx.tensor([N + 1], { label: 'rm.dScoresExt' }); // zero-filled; the tail stays 0
    const loss = this.ctx.tensor([1], { label: 'rm.loss' });
    const metrics = this.ctx.tensor([BT_METRICS.length], { label: 'rm.metrics' });
    const last = this.ctx.tensor([N, this.config.dModel], { label: 'rm.last' });
    const dScores = this.ctx.tensor([N * batch.T], { label: 'rm.dScores' });

    const rec = given ?? this.ctx.recorder('reward model step');
    const ws = this.model.forward(rec, N, batch.T, inp);
    const W = this.model.headWeightTensor;
    gatherRows(rec, last, ws.nf.reshape2d(), scoreIdx);
    scalarHeadForward(rec, scores, last, W);
    bradleyTerryForwardBackward(rec, loss, dScoresExt.view(0, [N]), metrics, scores, pairIdx, opts);
    gatherRows(rec, dScores, dScoresExt, spreadIdx);
    this.model.zeroGrads(rec);
    scalarHeadBackward(rec, this.model.dHidden(ws), this.model.headGradTensor, dScores, ws.nf, W);
    this.model.backward(rec, ws, inp);
    if (!given) rec.submit();
    return {
      loss,
      metrics,
      temps: [...temps, pairIdx, spreadIdx, scores, dScoresExt, last, dScores, loss, metrics],
    };
  }

  /** One training step on `pairs` (Bradley-Terry backward, clipped AdamW), recorded at once; its metrics are read when awaited. */
  trainStep(pairs: readonly PreferencePair[], opts: RewardModelStepOptions): Promise<RewardModelStepMetrics> {
    // One command buffer for the whole step: forward, loss, backward and AdamW.
    const rec = this.ctx.recorder('reward model step');
    const { metrics, temps } = this.recordBackward(pairs, opts, rec);
    this.model.optimizerStep(rec, opts);
    rec.submit();
    const gradNorm = this.model.gradNorm;
    return (async () => {
      const [m, g] = (await this.ctx.readMany([metrics, gradNorm])) as Float32Array[];
      for (const t of temps) t.destroy();
      return { loss: m[0], accuracy: m[1], margin: m[2], gradNorm: g[0] };
    })();
  }

  download(): Promise<ParamArrays> {
    return this.model.download();
  }

  destroy(): void {
    this.model.destroy();
  }
}

/** A group of completions of one prompt with the verifier's judgement of each. */
export interface JudgedGroup {
  prompt: readonly number[];
  completions: readonly (readonly number[])[];
  correct: readonly boolean[];
}

/**
 * Preference pairs from judged groups: every (correct, incorrect) pair within a group, in order, at most
 * `perGroup` per group (taken round-robin over the correct ones, so one correct completion does not fill the quota).
 * Groups that are all correct or all wrong give none: they hold no preference.
 */
export function preferencePairs(groups: readonly JudgedGroup[], perGroup = Infinity): PreferencePair[] {
  const out: PreferencePair[] = [];
  for (const g of groups) {
    const good = g.completions.filter((_, i) => g.correct[i]);
    const bad = g.completions.filter((_, i) => !g.correct[i]);
    const all: PreferencePair[] = [];
    for (let j = 0; j < bad.length; j++)
      for (let i = 0; i < good.length; i++)
        all.push({ prompt: g.prompt, chosen: good[i], rejected: bad[(i + j) % bad.length] });
    out.push(...all.slice(0, perGroup));
  }
  return out;
}
