// The RL trainer: rollouts on the policy, verifiable rewards, advantages, and the unified objective's optimizer
// steps, as an `async *` generator yielding one StepRecord per optimizer step (stream.ts). Pausable (stop
// pulling), steppable (runStep) and resumable exactly (saveState / encodeTrainerState: policy, reference, critic,
// optimizer moments, RNG state, step counters). Backend-neutral: the learner (learner.ts, cpu-learner.ts) does
// the tensor work. Not the lab's worker plumbing (src/engine, src/worker) and not the CLI (src/cli/train.ts).

import type { GpuContext } from '../gpu';
import type { Checkpoint, ParamArrays } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import type { Rollout } from '../model/generate';
import { encodeExample } from './sft';
import type { Tokenizer } from '../model/tokenizer';
import { readSafetensors, writeSafetensors, type SafetensorsTensorInput } from '../model/safetensors';
import { Rng } from '../reference/random';
import { getTask, type Task, type TaskItem, type Verdict } from '../tasks';
import { computeAdvantages, groupRewardStats, meanPassAtK, type RunningBaseline } from './advantages';
import { sequenceBatch, takeRows, type SequenceBatch } from './batch';
import { derive, validateConfig, type DerivedConfig, type RLConfig } from './config';
import type { ObjectiveConfig } from '../schema/objective';
import { CpuLearner } from './cpu-learner';
import { VALUE_METRICS } from '../reference/value';
import { GpuLearner, type Learner, type LearnerState, type UpdateResult } from './learner';
import type { CompletionRecord, EvalRecord, GroupRecord, Metrics, StepRecord } from './stream';

export type { StepRecord, EvalRecord, GroupRecord, TrainerEvent } from './stream';

/** Where the tensor work runs. */
export type TrainerBackend = { kind: 'webgpu'; ctx: GpuContext } | { kind: 'cpu' };

export interface TrainerOptions {
  /** A validated RL config (resolveConfig / parseConfigJson / configFromUrlParams). */
  config: RLConfig;
  /** The starting policy: a warm-start checkpoint's or a fresh model's parameters. */
  init: { config: ModelConfig; params: ParamArrays };
  tokenizer: Tokenizer;
  backend: TrainerBackend;
  /** Groups per step whose per-token records are yielded for the inspector (default 2). */
  inspectGroups?: number;
  /** A saved state to continue from exactly (its config must equal `config`). */
  resume?: TrainerState;
}

/** The trainer's counters and host-side state (the tensors live in LearnerState). */
export interface TrainerMeta {
  version: 1;
  config: RLConfig;
  modelConfig: ModelConfig;
  /** Rollout steps done. */
  step: number;
  /** Optimizer steps done. */
  optimizerStep: number;
  /** State of the data RNG (prompt sampling). */
  rngState: number;
  /** The entropy coefficient in effect (moves when adaptive). */
  entropyCoef: number;
  /** REINFORCE's running baseline. */
  baseline: RunningBaseline | null;
  /** Adaptive curriculum: success rate (EMA) per difficulty. */
  successRate: Record<string, number>;
}

/** Everything needed to resume a run exactly. */
export interface TrainerState {
  meta: TrainerMeta;
  learner: LearnerState;
}

/** Rollouts of one step, with rewards, before advantages. */
interface StepRollouts {
  items: TaskItem[];
  /** (N) BOS-first prompt ids, each group's prompt repeated G times. */
  prompts: number[][];
  rollout: Rollout;
  verdicts: Verdict[];
  texts: string[];
  /** (N) r_i after shaping. */
  rewards: Float32Array;
  /** (N) the overlong penalty added to r_i. */
  overlong: Float32Array;
  /** (N) reward by function name (accuracy, format, overlong). */
  parts: Record<string, Float32Array>;
  /** Groups sampled and groups dropped by dynamic sampling. */
  groupsSampled: number;
  groupsDropped: number;
  /** (B) greedy rewards (remax). */
  greedyRewards?: Float32Array;
  rolloutTokens: number;
}

const EVAL_SEED_SALT = 0x5eed_e7a1;

/** The learning rate at optimizer step `t` (1-based) of `total`: linear warmup, then constant / cosine / linear decay. */
export function learningRateAt(c: Pick<RLConfig, 'learning_rate' | 'warmup_steps' | 'lr_schedule'>, t: number, total: number): number {
  if (c.warmup_steps > 0 && t <= c.warmup_steps) return (c.learning_rate * t) / c.warmup_steps;
  if (c.lr_schedule === 'constant') return c.learning_rate;
  const span = Math.max(1, total - c.warmup_steps);
  const progress = Math.min(1, Math.max(0, (t - c.warmup_steps) / span));
  return c.lr_schedule === 'cosine' ? 0.5 * c.learning_rate * (1 + Math.cos(Math.PI * progress)) : c.learning_rate * (1 - progress);
}

/** Splits rows 0..N-1 into `parts` contiguous minibatches as even as possible. */
export function minibatchRows(N: number, parts: number): number[][] {
  const out: number[][] = [];
  const k = Math.min(parts, N);
  for (let p = 0; p < k; p++) {
    const a = Math.floor((p * N) / k);
    const b = Math.floor(((p + 1) * N) / k);
    out.push(Array.from({ length: b - a }, (_, i) => a + i));
  }
  return out;
}

export class Trainer {
  readonly config: RLConfig;
  readonly derived: DerivedConfig;
  readonly learner: Learner;
  /** Rollout steps done. */
  step = 0;
  /** Optimizer steps done. */
  optimizerStep = 0;
  private readonly rng: Rng;
  private entropyCoef: number;
  private baseline: RunningBaseline | null = null;
  private successRate: Record<string, number> = {};
  private readonly tasks = new Map<number, Task>();
  private readonly inspectGroups: number;
  private stopped = false;

  private constructor(
    opts: TrainerOptions,
    readonly tokenizer: Tokenizer,
    readonly modelConfig: ModelConfig,
  ) {
    this.config = validateConfig(opts.config);
    this.derived = derive(this.config);
    this.inspectGroups = opts.inspectGroups ?? 2;
    this.rng = new Rng(this.config.seed);
    this.entropyCoef = this.config.entropy_coef;
    const resume = opts.resume;
    const init = {
      config: opts.init.config,
      params: resume ? resume.learner.policy : opts.init.params,
      reference: resume?.learner.reference ?? null,
      critic: resume?.learner.critic ?? null,
      needsReference: this.derived.needsReference,
      needsCritic: this.derived.needsCritic,
      maxRows: Math.max(this.derived.minibatchSize, this.config.train_batch_size * this.config.num_generations, this.config.eval_items),
    };
    const need = this.derived.maxPromptTokens + this.derived.maxCompletionLength;
    if (need > opts.init.config.contextLength) {
      throw new Error(
        `max_completion_length: the longest prompt (${this.derived.maxPromptTokens} tokens with BOS) + ${this.derived.maxCompletionLength} completion tokens = ${need} exceeds the model's context length ${opts.init.config.contextLength}`,
      );
    }
    this.learner = opts.backend.kind === 'webgpu' ? new GpuLearner(opts.backend.ctx, init) : new CpuLearner(init);
    if (resume) {
      const m = resume.meta;
      this.step = m.step;
      this.optimizerStep = m.optimizerStep;
      this.rng.setState(m.rngState);
      this.entropyCoef = m.entropyCoef;
      this.baseline = m.baseline;
      this.successRate = { ...m.successRate };
      this.learner.loadOptimizerState(resume.learner);
    }
  }

  /** A trainer for `opts.config` starting from `opts.init` (or continuing `opts.resume`). */
  static async create(opts: TrainerOptions): Promise<Trainer> {
    if (opts.resume) {
      const a = JSON.stringify(opts.resume.meta.config);
      const b = JSON.stringify(validateConfig(opts.config));
      if (a !== b) throw new Error('resume: the saved state was made with a different config; resume with the config it saved (state.meta.config)');
    }
    return new Trainer(opts, opts.tokenizer, opts.init.config);
  }

  /** True once every configured step has run. */
  get done(): boolean {
    return this.step >= this.config.steps;
  }

  /** Asks run() to return after the current step. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Runs the remaining steps, yielding each optimizer step's record as its batch finishes. Pausing is not
   * pulling; stop() ends the loop after the current step.
   */
  async *run(): AsyncGenerator<StepRecord> {
    this.stopped = false;
    while (!this.done && !this.stopped) {
      for (const r of await this.runStep()) yield r;
    }
  }

  private taskAt(difficulty: number): Task {
    let t = this.tasks.get(difficulty);
    if (!t) this.tasks.set(difficulty, (t = getTask(this.config.task, difficulty)));
    return t;
  }

  /** The difficulty of the next step under the curriculum. */
  private nextDifficulty(): number {
    const c = this.config;
    const target = this.derived.difficulty;
    const min = this.taskAt(target).difficultyRange.min;
    if (c.curriculum === 'fixed' || target === min) return target;
    if (c.curriculum === 'easy_to_hard') return min + Math.round(((target - min) * this.step) / Math.max(1, c.steps - 1));
    // adaptive: weight 1 - success rate (unseen difficulties count as 0 success), never below 0.05.
    const ds = Array.from({ length: target - min + 1 }, (_, i) => min + i);
    const w = ds.map((d) => Math.max(0.05, 1 - (this.successRate[d] ?? 0)));
    let u = this.rng.next() * w.reduce((a, b) => a + b, 0);
    for (let i = 0; i < ds.length; i++) if ((u -= w[i]) < 0) return ds[i];
    return target;
  }

  private samplerOptions(seedSalt: number, greedy = false) {
    const c = this.config;
    // One seed per (run seed, step, salt): the same config and seed give the same tokens on the same device.
    const seed = (Math.imul(c.seed ^ 0x2545f491, 0x9e3779b1) + Math.imul(this.step + 1, 0x85ebca6b) + seedSalt) >>> 0;
    return { temperature: c.temperature, topK: c.top_k, topP: c.top_p, minP: c.min_p, greedy, seed };
  }

  /** Samples B prompts' groups and scores them; with dynamic sampling, refills dropped groups. */
  private async rollouts(task: Task): Promise<StepRollouts> {
    const c = this.config;
    const G = c.num_generations;
    const L = this.derived.maxCompletionLength;
    const tok = this.tokenizer;
    const kept: StepRollouts[] = [];
    let sampled = 0;
    let dropped = 0;
    let keptGroups = 0;
    const attempts = c.dynamic_sampling ? 1 + c.max_resample : 1;
    let last: StepRollouts | null = null;
    for (let a = 0; a < attempts && keptGroups < c.train_batch_size; a++) {
      const B = c.train_batch_size;
      const items = Array.from({ length: B }, () => task.sample(this.rng, 'train'));
      const prompts = items.flatMap((it) => Array.from({ length: G }, () => encodeExample(tok, it.prompt, '').prompt));
      const rollout = await this.learner.policy.generate(prompts, {
        maxNewTokens: L,
        sampler: this.samplerOptions(a * 7919),
        eosId: tok.eosId,
        padId: tok.padId,
      });
      const r = this.score(task, items, prompts, rollout);
      if (c.adv_estimator === 'remax') {
        const greedyPrompts = items.map((it) => encodeExample(tok, it.prompt, '').prompt);
        const g = await this.learner.policy.generate(greedyPrompts, { maxNewTokens: L, sampler: this.samplerOptions(a * 7919 + 1, true), eosId: tok.eosId, padId: tok.padId });
        r.greedyRewards = this.score(task, items, greedyPrompts, g).rewards;
      }
      sampled += B;
      last = r;
      if (!c.dynamic_sampling) {
        kept.push(r);
        keptGroups += B;
        break;
      }
      const stats = groupRewardStats(r.rewards, G);
      const keep = stats.zeroStd.map((z) => !z);
      dropped += keep.filter((k) => !k).length;
      const room = c.train_batch_size - keptGroups;
      const groups = keep.map((k, g) => (k ? g : -1)).filter((g) => g >= 0).slice(0, room);
      if (groups.length) {
        kept.push(selectGroups(r, groups, G));
        keptGroups += groups.length;
      }
    }
    // Nothing survived dynamic sampling: train on the last batch as is (its advantages are all 0 for group estimators).
    const out = kept.length ? mergeRollouts(kept) : last!;
    out.groupsSampled = sampled;
    out.groupsDropped = dropped;
    return out;
  }

  /** Rewards of a batch of completions: the task's verdicts, weighted, plus overlong shaping. */
  private score(task: Task, items: TaskItem[], prompts: number[][], rollout: Rollout): StepRollouts {
    const c = this.config;
    const tok = this.tokenizer;
    const L = this.derived.maxCompletionLength;
    const Lc = this.derived.overlongBufferLen;
    const R = rollout.rows;
    const perItem = R / items.length;
    const weights = this.derived.rewardWeights;
    const rewards = new Float32Array(R);
    const overlong = new Float32Array(R);
    const parts: Record<string, Float32Array> = {};
    const verdicts: Verdict[] = [];
    const texts: string[] = [];
    let rolloutTokens = 0;
    for (let r = 0; r < R; r++) {
      const item = items[Math.floor(r / perItem)];
      const len = rollout.lengths[r];
      rolloutTokens += len;
      const ids = Array.from(rollout.tokens.subarray(r * L, r * L + len)).filter((id) => id !== tok.eosId);
      const text = tok.decode(ids, { skipSpecialTokens: true });
      texts.push(text);
      // Truncated completions are judged like any other (as TRL does); the task rejects text beyond its longest answer.
      const v: Verdict = task.verify(item, text);
      verdicts.push(v);
      let reward = 0;
      for (const [name, w] of Object.entries(weights)) {
        const part = v.parts[name] ?? 0;
        reward += w * part;
        (parts[name] ??= new Float32Array(R))[r] = part;
      }
      if (c.overlong_buffer_enable && Lc > 0 && len > L - Lc) overlong[r] = (L - Lc - len) / Lc;
      rewards[r] = reward + overlong[r];
    }
    if (c.overlong_buffer_enable) parts.overlong = overlong;
    return { items, prompts, rollout, verdicts, texts, rewards, overlong, parts, groupsSampled: items.length, groupsDropped: 0, rolloutTokens };
  }

  /** One rollout batch: sampling, rewards, advantages, num_iterations x num_minibatches optimizer steps. */
  async runStep(): Promise<StepRecord[]> {
    if (this.done) return [];
    const c = this.config;
    const d = this.derived;
    const tStep = performance.now();
    const timing: Record<string, number> = {};
    const time = async <T>(name: string, f: () => Promise<T> | T): Promise<T> => {
      const t0 = performance.now();
      const out = await f();
      timing[name] = (timing[name] ?? 0) + (performance.now() - t0) / 1000;
      return out;
    };
    const difficulty = this.nextDifficulty();
    const task = this.taskAt(difficulty);
    const ro = await time('gen', () => this.rollouts(task));
    const { rollout } = ro;
    const N = rollout.rows;
    const G = c.num_generations;
    const S = d.maxCompletionLength;
    const tok = this.tokenizer;

    // The loss mask: completion tokens, minus truncated completions when asked.
    const mask = Float32Array.from(rollout.mask);
    const truncatedRows: boolean[] = Array.from({ length: N }, (_, r) => !rollout.finished[r]);
    if (c.mask_truncated_completions) for (let r = 0; r < N; r++) if (truncatedRows[r]) mask.fill(0, r * S, (r + 1) * S);

    // Minibatches (contiguous rows, the same split every epoch) in the training layout.
    const P = Math.max(...ro.prompts.map((p) => p.length));
    const mbs = minibatchRows(N, c.num_minibatches);
    const seqs: SequenceBatch[] = mbs.map((rows) => sequenceBatch(ro.prompts, rollout.tokens, S, rows, P, tok.padId));

    const ratioIsOne = c.num_iterations === 1 && mbs.length === 1;
    const needScore = !ratioIsOne || this.learner.hasReference || this.learner.hasCritic;
    // With one update per batch the update's own forward is pi_old, so the policy is scored only when the KL-in-reward
    // needs log pi_old before the update (k1 = log pi_old - log pi_ref).
    const scorePolicy = !ratioIsOne || d.klInReward;
    const scored = needScore ? await time('old_log_prob', () => this.learner.score(seqs, c.temperature, scorePolicy)) : null;

    const adv = await time('adv', () => {
      let k1: Float32Array | undefined;
      if (scored?.refLogp && d.klInReward) {
        const old = scored.oldLogp!; // scored whenever klInReward
        k1 = new Float32Array(N * S);
        for (let i = 0; i < k1.length; i++) k1[i] = mask[i] ? old[i] - scored.refLogp[i] : 0;
      }
      const res = computeAdvantages(
        c.adv_estimator,
        { rewards: ro.rewards, mask, groupSize: G, k1, values: scored?.values, greedyRewards: ro.greedyRewards },
        { scaleRewards: c.scale_rewards, beta: d.klInReward ? c.beta : 0, gamma: c.gamma, lam: c.lam, baselineMomentum: c.reinforce_baseline_momentum, baseline: this.baseline },
      );
      if (res.baseline) this.baseline = res.baseline;
      return res;
    });

    // Inspected groups: the first `inspectGroups` groups (their rows are contiguous).
    const inspectRows = new Set<number>();
    for (let g = 0; g < Math.min(this.inspectGroups, N / G); g++) for (let i = 0; i < G; i++) inspectRows.add(g * G + i);

    // The RL config is an objective config; only alpha moves during a run (the adaptive entropy controller).
    const objective: ObjectiveConfig = { ...c, entropy_coef: this.entropyCoef };
    const updates: { epoch: number; minibatch: number; lr: number; rows: number[] }[] = [];
    await time('update_actor', async () => {
      for (let epoch = 0; epoch < c.num_iterations; epoch++) {
        mbs.forEach((rows, mb) => {
          this.optimizerStep++;
          const lr = learningRateAt(c, this.optimizerStep, d.totalOptimizerSteps);
          const criticLr = learningRateAt({ ...c, learning_rate: d.criticLearningRate }, this.optimizerStep, d.totalOptimizerSteps);
          const step = { lr, weightDecay: c.weight_decay, beta1: c.adam_beta1, beta2: c.adam_beta2, eps: c.adam_epsilon, maxGradNorm: c.max_grad_norm > 0 ? c.max_grad_norm : undefined };
          const last = epoch === c.num_iterations - 1;
          this.learner.update(
            {
              seq: seqs[mb],
              advantages: takeRows(adv.advantages, S, rows),
              mask: takeRows(mask, S, rows),
              samplerLogp: takeRows(rollout.logprobs, S, rows),
              oldLogp: scored?.oldLogp && !ratioIsOne ? takeRows(scored.oldLogp, S, rows) : null,
              oldValues: scored?.values ? takeRows(scored.values, S, rows) : undefined,
              returns: adv.returns ? takeRows(adv.returns, S, rows) : undefined,
            },
            {
              objective,
              temperature: c.temperature,
              policy: step,
              critic: this.learner.hasCritic ? { ...step, lr: criticLr, vfCoef: c.vf_coef, cliprange: c.cliprange_value } : undefined,
              inspectRows: last ? rows.map((r, i) => (inspectRows.has(r) ? i : -1)).filter((i) => i >= 0) : [],
            },
          );
          updates.push({ epoch, minibatch: mb, lr, rows });
        });
      }
    });
    const results = await time('update_actor', () => this.learner.collect());
    this.step++;

    // Host-side state that follows the batch.
    const meanEntropy = results.reduce((a, r) => a + r.scalars.entropy, 0) / results.length;
    if (d.adaptiveEntropy && c.entropy_target !== null) {
      this.entropyCoef = Math.min(1, Math.max(-1, this.entropyCoef + (meanEntropy < c.entropy_target ? c.entropy_coef_step : -c.entropy_coef_step)));
    }
    const accuracy = mean(ro.parts.accuracy ?? new Float32Array(N));
    this.successRate[difficulty] = 0.9 * (this.successRate[difficulty] ?? accuracy) + 0.1 * accuracy;
    if (c.ref_model_sync_steps > 0 && this.step % c.ref_model_sync_steps === 0) await this.learner.syncReference();
    let evalRecord: EvalRecord | undefined;
    if (c.eval_every > 0 && (this.step % c.eval_every === 0 || this.step === c.steps)) evalRecord = await time('testing', () => this.evaluate());
    timing.step = (performance.now() - tStep) / 1000;

    const batchMetrics = this.rolloutMetrics(ro, mask, difficulty);
    if (scored?.values && adv.returns) batchMetrics.vf_explained_var = explainedVariance(scored.values, adv.returns, mask);
    batchMetrics['perf/rollout_tokens_per_s'] = ro.rolloutTokens / Math.max(1e-9, timing.gen);
    let trained = 0;
    for (let i = 0; i < mask.length; i++) trained += mask[i];
    batchMetrics['perf/train_tokens_per_s'] = (trained * c.num_iterations) / Math.max(1e-9, timing.update_actor);
    batchMetrics['perf/step_ms'] = timing.step * 1000;
    for (const [k, v] of Object.entries(timing)) batchMetrics[`timing_s/${k}`] = v;
    batchMetrics.entropy_coef = objective.entropy_coef;

    const groups = this.groupRecords(ro, adv.advantages, mask, scored, results, updates, inspectRows);
    return results.map((res, u) => {
      const up = updates[u];
      const metrics: Metrics = { ...batchMetrics, ...updateMetrics(res, this.learner.hasCritic), learning_rate: up.lr };
      const record: StepRecord = {
        kind: 'step',
        step: this.step,
        optimizerStep: this.optimizerStep - results.length + u + 1,
        epoch: up.epoch,
        minibatch: up.minibatch,
        metrics,
      };
      if (u === results.length - 1) {
        record.groups = groups;
        if (evalRecord) record.eval = evalRecord;
      }
      return record;
    });
  }

  /** The batch's reward, length and sampling metrics (ALGORITHMS.md names). */
  private rolloutMetrics(ro: StepRollouts, mask: Float32Array, difficulty: number): Metrics {
    const G = this.config.num_generations;
    const N = ro.rollout.rows;
    const stats = groupRewardStats(ro.rewards, G);
    const m: Metrics = {
      reward: stats.reward,
      reward_std: stats.reward_std,
      frac_reward_zero_std: stats.frac_reward_zero_std,
      accuracy: mean(ro.parts.accuracy ?? new Float32Array(N)),
      difficulty,
      'dynamic_sampling/filtered_frac': ro.groupsSampled ? ro.groupsDropped / ro.groupsSampled : 0,
    };
    for (const [name, v] of Object.entries(ro.parts)) {
      m[`rewards/${name}/mean`] = mean(v);
      m[`rewards/${name}/std`] = std(v);
    }
    const lengths = Array.from(ro.rollout.lengths);
    const terminated = lengths.filter((_, r) => ro.rollout.finished[r]);
    m['completions/mean_length'] = mean(lengths);
    m['completions/min_length'] = Math.min(...lengths);
    m['completions/max_length'] = Math.max(...lengths);
    m['completions/clipped_ratio'] = 1 - terminated.length / N;
    m['completions/mean_terminated_length'] = terminated.length ? mean(terminated) : 0;
    let masked = 0;
    for (let i = 0; i < mask.length; i++) masked += mask[i];
    m['completions/loss_tokens'] = masked;
    return m;
  }

  /** The inspected groups with per-token records from the last optimizer step that used each row. */
  private groupRecords(
    ro: StepRollouts,
    advantages: Float32Array,
    mask: Float32Array,
    scored: { oldLogp?: Float32Array; values?: Float32Array } | null,
    results: UpdateResult[],
    updates: { rows: number[] }[],
    inspectRows: Set<number>,
  ): GroupRecord[] {
    const G = this.config.num_generations;
    const S = this.derived.maxCompletionLength;
    const rollout = ro.rollout;
    // Row -> planes, from the last update that inspected it.
    const planes = new Map<number, Record<string, Float32Array>>();
    results.forEach((res, u) => {
      for (const [i, rec] of res.inspected) planes.set(updates[u].rows[i], rec);
    });
    const groups: GroupRecord[] = [];
    const rowsByGroup = new Map<number, number[]>();
    for (const r of [...inspectRows].sort((a, b) => a - b)) {
      const g = Math.floor(r / G);
      rowsByGroup.set(g, [...(rowsByGroup.get(g) ?? []), r]);
    }
    for (const [g, rows] of rowsByGroup) {
      const item = ro.items[Math.floor((g * G) / (rollout.rows / ro.items.length))];
      const completions: CompletionRecord[] = rows.map((r) => {
        const len = rollout.lengths[r];
        const pl = planes.get(r);
        const sl = (x: Float32Array | undefined) => (x ? Float32Array.from(x.subarray(0, len)) : new Float32Array(len));
        const rowSlice = (x: Float32Array | undefined) => (x ? Float32Array.from(x.subarray(r * S, r * S + len)) : new Float32Array(0));
        const logpOld = scored?.oldLogp ? rowSlice(scored.oldLogp) : sl(pl?.logp);
        return {
          text: ro.texts[r],
          length: len,
          finished: rollout.finished[r],
          reward: ro.rewards[r],
          rewards: Object.fromEntries(Object.entries(ro.parts).map(([k, v]) => [k, v[r]])),
          reason: ro.verdicts[r].reason,
          masked: mask[r * S] === 0 && len > 0,
          tokens: {
            tokens: Uint32Array.from(rollout.tokens.subarray(r * S, r * S + len)),
            logpOld,
            logp: sl(pl?.logp),
            logpSampler: Float32Array.from(rollout.logprobs.subarray(r * S, r * S + len)),
            entropy: sl(pl?.entropy),
            ratio: sl(pl?.ratio),
            advantage: Float32Array.from(advantages.subarray(r * S, r * S + len)),
            clipSide: Int8Array.from(sl(pl?.clip_side)),
            kl: sl(pl?.kl),
            loss: sl(pl?.contribution),
            weight: sl(pl?.weight),
            value: scored?.values ? rowSlice(scored.values) : new Float32Array(0),
          },
        };
      });
      groups.push({ index: g, prompt: item.prompt, answer: item.answer, completions });
    }
    return groups;
  }

  /**
   * Held-out evaluation: greedy accuracy on eval_items prompts, and pass@k (k = 1..eval_num_generations) from
   * eval_num_generations samples per prompt at the training temperature. The same prompts every time.
   */
  async evaluate(): Promise<EvalRecord> {
    const c = this.config;
    const task = this.taskAt(this.derived.difficulty);
    const tok = this.tokenizer;
    const L = this.derived.maxCompletionLength;
    const rng = new Rng((c.seed ^ EVAL_SEED_SALT) >>> 0);
    const items = Array.from({ length: c.eval_items }, () => task.sample(rng, 'heldout'));
    if (!items.length) return { step: this.step, items: 0, accuracy: 0, reward: 0, passAtK: [] };
    const n = c.eval_num_generations;
    const chunk = Math.max(1, Math.floor(Math.max(64, c.train_batch_size * c.num_generations) / n));
    let correct = 0;
    let reward = 0;
    const counts: number[] = [];
    for (let i = 0; i < items.length; i += chunk) {
      const part = items.slice(i, i + chunk);
      const prompts = part.map((it) => encodeExample(tok, it.prompt, '').prompt);
      const greedy = await this.learner.policy.generate(prompts, { maxNewTokens: L, sampler: { ...this.samplerOptions(0xe7a1, true), seed: 0 }, eosId: tok.eosId, padId: tok.padId });
      const g = this.score(task, part, prompts, greedy);
      for (let r = 0; r < part.length; r++) {
        correct += g.verdicts[r].parts.accuracy === 1 && greedy.finished[r] ? 1 : 0;
        reward += g.rewards[r];
      }
      const many = prompts.flatMap((p) => Array.from({ length: n }, () => p));
      const samples = await this.learner.policy.generate(many, {
        maxNewTokens: L,
        sampler: { ...this.samplerOptions(0xe7a2), seed: (c.seed * 31 + 0xe7a2 + i) >>> 0 },
        eosId: tok.eosId,
        padId: tok.padId,
      });
      const s = this.score(task, part, many, samples);
      for (let p = 0; p < part.length; p++) {
        let k = 0;
        for (let j = 0; j < n; j++) if (s.verdicts[p * n + j].parts.accuracy === 1 && samples.finished[p * n + j]) k++;
        counts.push(k);
      }
    }
    const passAtK = Array.from({ length: n }, (_, k) => meanPassAtK(counts, n, k + 1));
    return { step: this.step, items: items.length, accuracy: correct / items.length, reward: reward / items.length, passAtK };
  }

  /** Everything needed to continue exactly (policy, reference, critic, optimizer moments, RNG, counters). */
  async saveState(): Promise<TrainerState> {
    return {
      meta: {
        version: 1,
        config: { ...this.config },
        modelConfig: { ...this.modelConfig },
        step: this.step,
        optimizerStep: this.optimizerStep,
        rngState: this.rng.getState(),
        entropyCoef: this.entropyCoef,
        baseline: this.baseline ? { ...this.baseline } : null,
        successRate: { ...this.successRate },
      },
      learner: await this.learner.saveState(),
    };
  }

  /** The current policy as a Hugging Face checkpoint (encodeCheckpoint writes model.safetensors + config.json). */
  async exportCheckpoint(): Promise<Checkpoint> {
    const tok = this.tokenizer;
    return {
      config: this.modelConfig,
      params: await this.learner.policy.download(),
      metadata: { made_by: 'rl-lab trainer', task: this.config.task, steps: String(this.step), seed: String(this.config.seed) },
      special: { bosId: tok.bosId, eosId: tok.eosId, padId: tok.padId },
    };
  }

  destroy(): void {
    this.learner.destroy();
  }
}

/** An update's scalars under their metric names (the critic's only when there is one). */
function updateMetrics(res: UpdateResult, critic: boolean): Metrics {
  const criticOnly = new Set<string>([...VALUE_METRICS, 'critic/grad_norm']);
  return Object.fromEntries(Object.entries(res.scalars).filter(([k]) => critic || !criticOnly.has(k)));
}

function selectGroups(r: StepRollouts, groups: number[], G: number): StepRollouts {
  const rows = groups.flatMap((g) => Array.from({ length: G }, (_, i) => g * G + i));
  return subsetRollouts(r, rows, groups);
}

function subsetRollouts(r: StepRollouts, rows: number[], groups: number[]): StepRollouts {
  const S = r.rollout.maxNewTokens;
  const ro = r.rollout;
  const pick = <T>(xs: ArrayLike<T>) => rows.map((i) => xs[i]);
  return {
    items: groups.map((g) => r.items[g]),
    prompts: rows.map((i) => r.prompts[i]),
    rollout: {
      rows: rows.length,
      maxNewTokens: S,
      tokens: takeRows(ro.tokens, S, rows),
      logprobs: takeRows(ro.logprobs, S, rows),
      entropies: takeRows(ro.entropies, S, rows),
      mask: takeRows(ro.mask, S, rows),
      lengths: Uint32Array.from(pick(ro.lengths)),
      finished: pick(ro.finished),
      steps: ro.steps,
      readbacks: ro.readbacks,
    },
    verdicts: pick(r.verdicts),
    texts: pick(r.texts),
    rewards: Float32Array.from(pick(r.rewards)),
    overlong: Float32Array.from(pick(r.overlong)),
    parts: Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, Float32Array.from(pick(v))])),
    greedyRewards: r.greedyRewards ? Float32Array.from(groups.map((g) => r.greedyRewards![g])) : undefined,
    groupsSampled: r.groupsSampled,
    groupsDropped: r.groupsDropped,
    rolloutTokens: rows.reduce((a, i) => a + ro.lengths[i], 0),
  };
}

function mergeRollouts(parts: StepRollouts[]): StepRollouts {
  if (parts.length === 1) return parts[0];
  const cat = <A extends Float32Array | Uint32Array>(xs: A[]): A => {
    const out = new (xs[0].constructor as new (n: number) => A)(xs.reduce((a, x) => a + x.length, 0));
    let o = 0;
    for (const x of xs) {
      out.set(x, o);
      o += x.length;
    }
    return out;
  };
  const ro = parts.map((p) => p.rollout);
  const names = [...new Set(parts.flatMap((p) => Object.keys(p.parts)))];
  return {
    items: parts.flatMap((p) => p.items),
    prompts: parts.flatMap((p) => p.prompts),
    rollout: {
      rows: ro.reduce((a, r) => a + r.rows, 0),
      maxNewTokens: ro[0].maxNewTokens,
      tokens: cat(ro.map((r) => r.tokens)),
      logprobs: cat(ro.map((r) => r.logprobs)),
      entropies: cat(ro.map((r) => r.entropies)),
      mask: cat(ro.map((r) => r.mask)),
      lengths: cat(ro.map((r) => r.lengths)),
      finished: ro.flatMap((r) => r.finished),
      steps: ro.reduce((a, r) => a + r.steps, 0),
      readbacks: ro.reduce((a, r) => a + r.readbacks, 0),
    },
    verdicts: parts.flatMap((p) => p.verdicts),
    texts: parts.flatMap((p) => p.texts),
    rewards: cat(parts.map((p) => p.rewards)),
    overlong: cat(parts.map((p) => p.overlong)),
    parts: Object.fromEntries(names.map((n) => [n, cat(parts.map((p) => p.parts[n] ?? new Float32Array(p.rollout.rows)))])),
    greedyRewards: parts[0].greedyRewards ? cat(parts.map((p) => p.greedyRewards!)) : undefined,
    groupsSampled: 0,
    groupsDropped: 0,
    rolloutTokens: parts.reduce((a, p) => a + p.rolloutTokens, 0),
  };
}

/** 1 - Var(R - V) / Var(R) over the masked tokens (verl's vf_explained_var); 0 when Var(R) is 0. */
export function explainedVariance(values: ArrayLike<number>, returns: ArrayLike<number>, mask: ArrayLike<number>): number {
  const r: number[] = [];
  const e: number[] = [];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    r.push(returns[i]);
    e.push(returns[i] - values[i]);
  }
  const vr = variance(r);
  return vr > 0 ? 1 - variance(e) / vr : 0;
}

function variance(x: number[]): number {
  const m = mean(x);
  return mean(x.map((v) => (v - m) ** 2));
}

function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return x.length ? s / x.length : 0;
}

function std(x: ArrayLike<number>): number {
  if (x.length < 2) return 0;
  const m = mean(x);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (x[i] - m) ** 2;
  return Math.sqrt(s / (x.length - 1));
}

// ---------------------------------------------------------------------------------------------------------
// Saved state: one safetensors file; the meta as JSON in its header, tensors named <part>/<HF name>.

/** Serializes a trainer state (policy, reference, critic, AdamW moments, counters, RNG) into one safetensors file. */
export function encodeTrainerState(state: TrainerState): Uint8Array {
  const tensors = new Map<string, SafetensorsTensorInput>();
  const add = (prefix: string, arrays: ParamArrays | undefined) => {
    if (!arrays) return;
    for (const [name, data] of Object.entries(arrays)) tensors.set(`${prefix}/${name}`, { dtype: 'F32', shape: [data.length], data });
  };
  const l = state.learner;
  add('policy', l.policy);
  add('policy_adam_m', l.policyOptimizer.m);
  add('policy_adam_v', l.policyOptimizer.v);
  add('reference', l.reference);
  add('critic', l.critic);
  add('critic_adam_m', l.criticOptimizer?.m);
  add('critic_adam_v', l.criticOptimizer?.v);
  const meta = { ...state.meta, policyOptimizerStep: l.policyOptimizer.step, criticOptimizerStep: l.criticOptimizer?.step ?? null };
  return writeSafetensors(tensors, { format: 'rl-lab-trainer-state', trainer: JSON.stringify(meta) });
}

/** Reads a file written by encodeTrainerState; a foreign or damaged file fails with what is wrong. */
export function decodeTrainerState(bytes: Uint8Array): TrainerState {
  const file = readSafetensors(bytes, { toFloat32: true, copy: true });
  if (file.metadata.format !== 'rl-lab-trainer-state' || !file.metadata.trainer) {
    throw new Error('trainer state: not an RL Lab trainer state (its safetensors header has no "trainer" metadata)');
  }
  let meta: TrainerMeta & { policyOptimizerStep: number; criticOptimizerStep: number | null };
  try {
    meta = JSON.parse(file.metadata.trainer);
  } catch (e) {
    throw new Error(`trainer state: the "trainer" metadata is not valid JSON: ${(e as Error).message}`);
  }
  if (meta.version !== 1) throw new Error(`trainer state: version ${String(meta.version)} is not supported (expected 1)`);
  const parts: Record<string, ParamArrays> = {};
  for (const [key, t] of file.tensors) {
    const slash = key.indexOf('/');
    const part = key.slice(0, slash);
    (parts[part] ??= {})[key.slice(slash + 1)] = t.data as Float32Array;
  }
  if (!parts.policy) throw new Error('trainer state: no policy tensors');
  const { policyOptimizerStep, criticOptimizerStep, ...rest } = meta;
  const learner: LearnerState = {
    policy: parts.policy,
    policyOptimizer: { m: parts.policy_adam_m ?? {}, v: parts.policy_adam_v ?? {}, step: policyOptimizerStep },
  };
  if (parts.reference) learner.reference = parts.reference;
  if (parts.critic) {
    learner.critic = parts.critic;
    learner.criticOptimizer = { m: parts.critic_adam_m ?? {}, v: parts.critic_adam_v ?? {}, step: criticOptimizerStep ?? 0 };
  }
  return { meta: rest, learner };
}
