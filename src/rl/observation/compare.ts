// Same-batch A/B of two objectives: one scored batch (the same rollouts, rewards and per-token log-probs at the
// same parameters) evaluated under two RL configs with the objective kernel training uses (src/kernels/objective.ts,
// or its CPU twin on the CPU backend), each side with its own advantages from the same rewards and its own loss
// mask. On the GPU both evaluations are recorded in one command buffer and read back once. It runs only when asked,
// between steps; nothing here is on the training path. Not the explanation in words (compare-explain.ts).

import type { GpuContext, Tensor } from '../../gpu';
import {
  OBJECTIVE_METRICS,
  OBJECTIVE_RECORDS,
  objectiveForwardBackward,
  type ObjectiveTensors,
} from '../../kernels/objective';
import * as twin from '../../reference/objective';
import { host, type HostTensor } from '../../core/host-tensor';
import type { ObjectiveConfig } from '../../schema/objective';
import { computeAdvantages } from '../algorithm/advantages';
import { focalOptionsOf } from '../algorithm/pass-rate-advantages';
import { sequenceBatch } from '../algorithm/batch';
import { derive, type RLConfig } from '../../schema/config';
import type { Learner, ScoreResult } from '../learners/learner';
import type { RolloutSetting, StepRollouts } from '../algorithm/rollouts';
import { maxOf } from '../../schema/extremes';

/** Where the objective runs: the WGSL kernel on a device, or its CPU twin. */
export type ObjectiveBackend = { kind: 'webgpu'; ctx: GpuContext } | { kind: 'cpu' };

/**
 * One scored batch, N rows of S completion tokens (groups of `groupSize` contiguous rows). Per-token arrays are
 * (N*S) row-major. `logp` and `entropy` are the policy's at the parameters both sides share; `oldLogp` is the
 * policy that sampled (equal to `logp` for a batch sampled at those parameters: every ratio is then 1).
 */
export interface ComparedBatch {
  groupSize: number;
  S: number;
  /** (N) r_i, the same for both sides (the run's reward, with its shaping). */
  rewards: Float32Array;
  /** (N) 1 where the verifier judged the answer correct. */
  correct: Uint8Array;
  /** (N) completion tokens, EOS included. */
  lengths: Uint32Array;
  /** (N) ended with EOS (false: cut at max_completion_length; mask_truncated_completions drops those). */
  finished: boolean[];
  /** (N*S) 1 on completion tokens. */
  completionMask: Float32Array;
  logp: Float32Array;
  oldLogp: Float32Array;
  entropy: Float32Array;
  /** The sampler's log-probs (TIS, the sampling metrics). */
  samplerLogp: Float32Array;
  /** log pi_ref and the exact KL, when the run has a reference policy. */
  refLogp?: Float32Array;
  klExact?: Float32Array;
  /** V_old, when the run has a critic (gae). */
  values?: Float32Array;
  /** (B) greedy rewards, when the run's estimator is remax. */
  greedyRewards?: Float32Array;
}

/** One side's per-token values over the batch, each (N*S) (0 where that side's mask is 0). */
export interface ObjectiveSideValues {
  config: RLConfig;
  /** The aggregated loss of the whole batch as one optimizer step. */
  loss: number;
  metrics: Partial<Record<twin.ObjectiveMetricName, number>>;
  /** The loss mask of this side (mask_truncated_completions may differ). */
  mask: Float32Array;
  advantages: Float32Array;
  /** d loss / d log pi_theta of each token (what the backward pushes into the model). */
  dLogp: Float32Array;
  ratio: Float32Array;
  /** -1 clipped low, +1 clipped high (or CISPO-capped), 0 none. */
  clipSide: Int8Array;
  kl: Float32Array;
  /** The token's term of the loss: w m (policy + beta k - alpha H). */
  contribution: Float32Array;
  /** The aggregation weight w m. */
  weight: Float32Array;
  /** |contribution| / sum of |contribution|: the token's share of the total |loss|. */
  lossShare: Float32Array;
}

/** Why a config cannot be evaluated on this batch (an input it needs is absent), or null. */
export function comparisonProblem(batch: ComparedBatch, c: RLConfig): string | null {
  const d = derive(c);
  const klName = `beta ${c.beta} with kl_estimator ${c.kl_estimator}`;
  if (d.needsReference && (c.kl_estimator === 'exact' ? !batch.klExact : !batch.refLogp)) {
    return `${klName} needs log-probs of a reference policy, and this run has none (its beta is 0); set beta to 0 to compare`;
  }
  if (c.adv_estimator === 'gae' && !batch.values)
    return 'adv_estimator gae needs a critic, and this run has none; pick another estimator';
  if (c.adv_estimator === 'remax' && !batch.greedyRewards)
    return 'adv_estimator remax needs greedy rollouts, and this batch has none; pick another estimator';
  if (c.num_generations !== batch.groupSize)
    return `num_generations must stay ${batch.groupSize}: the batch's groups have ${batch.groupSize} completions`;
  return null;
}

/**
 * A config's loss mask and advantages on the batch, as the trainer computes them: completion tokens minus truncated
 * rows under mask_truncated_completions; the estimator on the shared rewards (k1 from oldLogp - refLogp when the
 * KL sits in the reward). A `reinforce` baseline starts from this batch's own mean (the run's running state is not
 * shared between configs).
 */
export function sideInputs(batch: ComparedBatch, c: RLConfig): { mask: Float32Array; advantages: Float32Array } {
  const problem = comparisonProblem(batch, c);
  if (problem) throw new Error(problem);
  const S = batch.S;
  const mask = Float32Array.from(batch.completionMask);
  if (c.mask_truncated_completions) batch.finished.forEach((done, r) => done || mask.fill(0, r * S, (r + 1) * S));
  const klInReward = derive(c).klInReward;
  let k1: Float32Array | undefined;
  if (klInReward && batch.refLogp) {
    k1 = new Float32Array(mask.length);
    for (let i = 0; i < k1.length; i++) k1[i] = mask[i] ? batch.oldLogp[i] - batch.refLogp[i] : 0;
  }
  const res = computeAdvantages(
    c.adv_estimator,
    {
      rewards: batch.rewards,
      mask,
      groupSize: batch.groupSize,
      k1,
      values: batch.values,
      greedyRewards: batch.greedyRewards,
    },
    {
      scaleRewards: c.scale_rewards,
      beta: klInReward ? c.beta : 0,
      gamma: c.gamma,
      lam: c.lam,
      baselineMomentum: c.reinforce_baseline_momentum,
      baseline: null,
      focal: focalOptionsOf(c),
    },
  );
  return { mask, advantages: res.advantages };
}

/** The objective's inputs of one side, as host tensors (N, S). */
export function objectiveHostInputs(
  batch: ComparedBatch,
  side: { mask: Float32Array; advantages: Float32Array },
): twin.ObjectiveInputs {
  const N = batch.rewards.length;
  const t = (x: Float32Array) => host(x, [N, batch.S]);
  return {
    logp: t(batch.logp),
    oldLogp: t(batch.oldLogp),
    advantages: t(side.advantages),
    mask: t(side.mask),
    entropy: t(batch.entropy),
    samplerLogp: t(batch.samplerLogp),
    ...(batch.refLogp ? { refLogp: t(batch.refLogp) } : {}),
    ...(batch.klExact ? { klExact: t(batch.klExact) } : {}),
  };
}

/** The raw outputs of one evaluation: loss (1), dLogp (N*S), records (5*N*S), metrics (K). */
interface RawOutputs {
  loss: Float32Array;
  dLogp: Float32Array;
  records: Float32Array;
  metrics: Float32Array;
}

function sideValues(
  config: RLConfig,
  inputs: twin.ObjectiveInputs,
  side: { mask: Float32Array; advantages: Float32Array },
  raw: RawOutputs,
): ObjectiveSideValues {
  const NS = side.mask.length;
  const plane = (p: (typeof OBJECTIVE_RECORDS)[number]) =>
    raw.records.slice(OBJECTIVE_RECORDS.indexOf(p) * NS, (OBJECTIVE_RECORDS.indexOf(p) + 1) * NS);
  const contribution = plane('contribution');
  let total = 0;
  for (let i = 0; i < NS; i++) total += Math.abs(contribution[i]);
  const lossShare = contribution.map((x) => (total > 0 ? Math.abs(x) / total : 0));
  const plan = twin.objectivePlan('compareObjectives', inputs, config, (t) => t.shape);
  return {
    config,
    loss: raw.loss[0],
    metrics: twin.objectiveMetricRecord(raw.metrics, plan),
    mask: side.mask,
    advantages: side.advantages,
    dLogp: raw.dLogp,
    ratio: plane('ratio'),
    clipSide: Int8Array.from(plane('clip_side')),
    kl: plane('kl'),
    contribution,
    weight: plane('weight'),
    lossShare,
  };
}

/** The twin's outputs for one side (the CPU backend, and the definition the GPU is tested against). */
export function twinOutputs(inputs: twin.ObjectiveInputs, config: ObjectiveConfig): RawOutputs {
  const [N, S] = inputs.logp.shape;
  const NS = N * S;
  const out = {
    loss: new Float32Array(1),
    dLogp: new Float32Array(NS),
    records: new Float32Array(OBJECTIVE_RECORDS.length * NS),
    metrics: new Float32Array(OBJECTIVE_METRICS.length),
  };
  twin.objectiveForwardBackward(
    host(out.loss, [1]),
    host(out.dLogp, [N, S]),
    host(new Float32Array(NS), [N, S]),
    host(out.records, [OBJECTIVE_RECORDS.length, N, S]),
    host(out.metrics, [OBJECTIVE_METRICS.length]),
    inputs,
    config,
  );
  return out;
}

/** Both sides on the GPU: shared inputs uploaded once, both objectives in one command buffer, one readback. */
async function gpuOutputs(
  ctx: GpuContext,
  sides: twin.ObjectiveInputs[],
  configs: ObjectiveConfig[],
): Promise<RawOutputs[]> {
  const [N, S] = sides[0].logp.shape;
  const owned: Tensor[] = [];
  const upload = (x: HostTensor, label: string) => {
    const t = ctx.fromArray(x.data as Float32Array, [N, S], { label: `compare.${label}` });
    owned.push(t);
    return t;
  };
  const output = (shape: number[], label: string) => {
    const t = ctx.tensor(shape, { label: `compare.${label}` });
    owned.push(t);
    return t;
  };
  const shared = sides[0];
  const common = {
    logp: upload(shared.logp, 'logp'),
    oldLogp: upload(shared.oldLogp, 'old_logp'),
    entropy: upload(shared.entropy, 'entropy'),
    ...(shared.samplerLogp ? { samplerLogp: upload(shared.samplerLogp, 'sampler_logp') } : {}),
    ...(shared.refLogp ? { refLogp: upload(shared.refLogp, 'ref_logp') } : {}),
    ...(shared.klExact ? { klExact: upload(shared.klExact, 'kl_exact') } : {}),
  };
  const rec = ctx.recorder('compare.objectives');
  const outs = sides.map((side, k) => {
    const o = {
      loss: output([1], `loss${k}`),
      dLogp: output([N, S], `dLogp${k}`),
      dEntropy: output([N, S], `dEntropy${k}`),
      records: output([OBJECTIVE_RECORDS.length, N, S], `records${k}`),
      metrics: output([OBJECTIVE_METRICS.length], `metrics${k}`),
    };
    const inputs: ObjectiveTensors = {
      ...common,
      advantages: upload(side.advantages, `advantages${k}`),
      mask: upload(side.mask, `mask${k}`),
    };
    objectiveForwardBackward(rec, o.loss, o.dLogp, o.dEntropy, o.records, o.metrics, inputs, configs[k]);
    return o;
  });
  rec.submit();
  try {
    const flat = outs.flatMap((o) => [o.loss, o.dLogp, o.records, o.metrics]);
    const arrays = (await ctx.readMany(flat)) as Float32Array[];
    return outs.map((_, k) => ({
      loss: arrays[4 * k],
      dLogp: arrays[4 * k + 1],
      records: arrays[4 * k + 2],
      metrics: arrays[4 * k + 3],
    }));
  } finally {
    for (const t of owned) t.destroy();
  }
}

/**
 * Evaluates configs `a` and `b` on the same batch: each side's mask and advantages (sideInputs), then the
 * objective kernel on `backend` (both in one command buffer and one readback on the GPU).
 */
export async function compareObjectives(
  backend: ObjectiveBackend,
  batch: ComparedBatch,
  a: RLConfig,
  b: RLConfig,
): Promise<{ a: ObjectiveSideValues; b: ObjectiveSideValues }> {
  const sides = [sideInputs(batch, a), sideInputs(batch, b)];
  const inputs = sides.map((s) => objectiveHostInputs(batch, s));
  const configs = [a, b];
  const raw =
    backend.kind === 'webgpu'
      ? await gpuOutputs(backend.ctx, inputs, configs)
      : inputs.map((x, k) => twinOutputs(x, configs[k]));
  return { a: sideValues(a, inputs[0], sides[0], raw[0]), b: sideValues(b, inputs[1], sides[1], raw[1]) };
}

/** Which batch an A/B evaluates: the run's latest rollout step, or a batch sampled now from the current policy. */
export type CompareSource = 'latest' | 'fresh';

/** One completion of the compared batch, for display. */
export interface ComparedRow {
  /** Index of its group (G consecutive rows share a prompt). */
  group: number;
  prompt: string;
  text: string;
  /** Token ids of the completion (EOS included), `length` of them. */
  tokens: Uint32Array;
  length: number;
  reward: number;
  correct: boolean;
  finished: boolean;
}

/** An A/B of two objectives on one batch: plain data (crosses the worker boundary as is). */
export interface ObjectiveComparison {
  source: CompareSource;
  /** Rollout steps the run had done: the latest step's number, or the step a fresh batch was sampled after. */
  step: number;
  /** Padded completion length (the per-token arrays are (rows * S)). */
  S: number;
  groupSize: number;
  /** Every ratio is exactly 1: the batch was sampled at the parameters it is evaluated at. */
  ratioIsOne: boolean;
  rows: ComparedRow[];
  a: ObjectiveSideValues;
  b: ObjectiveSideValues;
}

/** What an A/B reads from a trainer. */
export interface CompareSetting extends RolloutSetting {
  learner: Learner;
  backend: ObjectiveBackend;
}

/**
 * Scores rollouts at the current parameters (log pi_theta, H, and the reference's log-probs and exact KL: one
 * readback) and evaluates `a` and `b` on them. `before` is what the run scored before the step's updates: its
 * log pi_old (absent when the step made one update per batch; the sampler's log-probs, the same policy, stand in)
 * and its critic values. Without `before` (a fresh batch) pi_old is the current policy, so every ratio is 1.
 */
export async function compareOnRollouts(
  s: CompareSetting,
  ro: StepRollouts,
  before: Pick<ScoreResult, 'oldLogp' | 'values'> | null,
  a: RLConfig,
  b: RLConfig,
  source: CompareSource,
  step: number,
): Promise<ObjectiveComparison> {
  const rollout = ro.rollout;
  const N = rollout.rows;
  const S = rollout.maxNewTokens;
  const G = s.config.num_generations;
  const rowIds = Array.from({ length: N }, (_, r) => r);
  const seq = sequenceBatch(
    ro.prompts,
    rollout.tokens,
    S,
    rowIds,
    maxOf(ro.prompts.map((p) => p.length)),
    s.tokenizer.padId,
  );
  const planes = await s.learner.tokenPlanes(seq, s.config.temperature);
  const values = before
    ? before.values
    : s.learner.hasCritic
      ? (await s.learner.score([seq], s.config.temperature, false)).values
      : undefined;
  const correct = Uint8Array.from(ro.verdicts, (v) => (v.parts.accuracy > 0.5 ? 1 : 0));
  const batch: ComparedBatch = {
    groupSize: G,
    S,
    rewards: ro.rewards,
    correct,
    lengths: rollout.lengths,
    finished: rollout.finished,
    completionMask: rollout.mask,
    logp: planes.logp,
    oldLogp: before ? (before.oldLogp ?? rollout.logprobs) : planes.logp,
    entropy: planes.entropy,
    samplerLogp: rollout.logprobs,
    refLogp: planes.refLogp,
    klExact: planes.klExact,
    values,
    greedyRewards: ro.greedyRewards,
  };
  for (const [name, c] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const problem = comparisonProblem(batch, c);
    if (problem) throw new Error(`objective ${name}: ${problem}`);
  }
  const sides = await compareObjectives(s.backend, batch, a, b);
  const perItem = N / ro.items.length;
  const rows: ComparedRow[] = rowIds.map((r) => ({
    group: Math.floor(r / G),
    prompt: ro.items[Math.floor(r / perItem)].prompt,
    text: ro.texts[r],
    tokens: Uint32Array.from(rollout.tokens.subarray(r * S, r * S + rollout.lengths[r])),
    length: rollout.lengths[r],
    reward: ro.rewards[r],
    correct: correct[r] === 1,
    finished: rollout.finished[r],
  }));
  return { source, step, S, groupSize: G, ratioIsOne: !before, rows, ...sides };
}
