// The RL trainer: the loop of rollout steps (sampling, rewards, advantages, num_iterations x num_minibatches
// optimizer steps of the unified objective) as an `async *` generator yielding one StepRecord per optimizer step
// (stream.ts). Pausable (stop pulling), steppable (runStep) and resumable exactly (saveState, trainer-state.ts).
// Backend-neutral: the learner (learner.ts, cpu-learner.ts) does the tensor work; rollouts.ts, step-metrics.ts,
// inspector-records.ts, evaluate.ts and schedule.ts hold the pieces. Not the worker plumbing or the CLI.

import type { Checkpoint, ParamArrays } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import type { Tokenizer } from '../../io/tokenizer';
import { promptTokenBound } from '../learners/sft';
import { Rng } from '../../core/random';
import type { LoraSpec } from '../../core/lora-layout';
import { CpuPolicy, GpuPolicy } from '../../model/policy';
import type { Task } from '../../tasks';
import { SUM_PI_SQUARED_ESTIMATORS } from '../../schema/algorithm-names';
import { computeAdvantages, mean, rewardPartsOf, type RunningBaseline } from './advantages';
import { focalOptionsOf } from './pass-rate-advantages';
import { appliedEntropyCoef, nextEntropyCoef } from './entropy-control';
import { sequenceBatch, takeRows, type SequenceBatch } from './batch';
import { RLConfigError, derive, taskOf, validateConfig, type DerivedConfig, type RLConfig } from '../../schema/config';
import type { ObjectiveConfig } from '../../schema/objective';
import { compareOnRollouts, type CompareSource, type ObjectiveComparison } from '../observation/compare';
import { CpuLearner } from '../learners/cpu-learner';
import { evaluateHeldOut } from './evaluate';
import { stepDynamics } from '../observation/dynamics';
import { groupRecords, groupSummaries, inspectedRows } from '../observation/inspector-records';
import { GpuLearner, type Learner, type ScoreResult } from '../learners/learner';
import { sampleStepRollouts, type StepRollouts } from './rollouts';
import { learnerPolicyInit, type PolicyBackend } from '../learners/learner-policy';
import { curriculumDifficulty, learningRateAt, microBatchRows, minibatchRows } from './schedule';
import {
  PhaseTimes,
  explainedVariance,
  maskedTokens,
  rolloutMetrics,
  timingMetrics,
  updateMetrics,
} from '../observation/step-metrics';
import type { EvalRecord, Metrics, StepRecord } from '../../schema/stream';
import type { TrainerState } from './trainer-state';
import { createWeightTracker, type WeightTracker } from '../observation/weight-tracker';
import type { LearnedReward } from '../rewards/learned-reward';
import type { UserRewardFunction, UserRewardSandbox } from '../rewards/user-reward';
import { maxOf } from '../../schema/extremes';
import { createStaleSampler, samplerVersion, stalenessActive, type StaleSampler } from './staleness';
import { diagnosticThreshold, mismatchDiagnostics } from '../../reference/mismatch-diagnostics';
import { DEFAULT_TEACHER_ID, distills, teacherIdFor } from '../../schema/distillation';
import { distillAdvantages, reverseKlByTeacher, teacherLogprobs } from './distillation';
import { Teacher, type TeacherWeights } from '../learners/teacher';

/** Where the tensor work runs: WebGPU with its context, or the CPU twins. */
export type TrainerBackend = PolicyBackend;

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
  /** Where the config's reward_fn runs (a Blob worker in the browser, a worker thread in Node); needed when it has one. */
  rewardSandbox?: UserRewardSandbox;
  /** The config's reward_model, loaded by the caller (src/engine/learned-reward.ts); needed when it names one. */
  learnedReward?: LearnedReward;
  /** Bytes the run may use on the GPU; the memory plan (src/rl/observation/memory.ts) refuses a run that needs more. */
  memoryBudgetBytes?: number | null;
  /** The config's teacher, loaded by the caller (src/engine/teacher.ts); needed when it names one. */
  teacher?: TeacherWeights;
  /** The config's teachers by id (multi-teacher distillation), loaded by the caller; needed when it names some. */
  teachers?: Readonly<Record<string, TeacherWeights>>;
}

/**
 * Refuses a config whose longest prompt and completion do not fit the model's context (RLConfigError: refused input),
 * checked before a device is acquired. derive(config).maxPromptTokens counts the task's longest prompt in characters
 * plus BOS; the tokenizer (and the chat template, when on) decide what it takes in tokens.
 */
export function assertPromptsFit(config: RLConfig, tokenizer: Tokenizer, contextLength: number): void {
  const derived = derive(config);
  const promptTokens = promptTokenBound(tokenizer, derived.maxPromptTokens - 1, config.chat_template);
  const need = promptTokens + derived.maxCompletionLength;
  if (need > contextLength) {
    const around = config.chat_template ? 'in its chat template' : tokenizer.prependsBos ? 'with BOS' : 'without BOS';
    throw new RLConfigError([
      `max_completion_length: the longest prompt (up to ${promptTokens} tokens ${around}) + ${derived.maxCompletionLength} completion tokens = ${need} exceeds the model's context length ${contextLength}`,
    ]);
  }
}

export class Trainer {
  readonly config: RLConfig;
  readonly derived: DerivedConfig;
  readonly learner: Learner;
  /** The config's reward_fn in its sandbox, or null. */
  readonly userReward: UserRewardFunction | null;
  /** The config's reward_model, or null. */
  readonly learnedReward: LearnedReward | null;
  /** The config's teacher on the run's backend (on-policy distillation), or null. */
  readonly teacher: Teacher | null;
  /**
   * Multi-teacher distillation: every teacher on the run's backend by id (the teacher knob's under 'teacher'), loaded
   * once for the run; null when the config has no teachers.
   */
  readonly teachers: ReadonlyMap<string, Teacher> | null;
  /** Rollout steps done. */
  step = 0;
  /** Optimizer steps done. */
  optimizerStep = 0;
  /** Prompt and completion tokens of every completion sampled for training so far (TRL's num_tokens). */
  numTokens = 0;
  private readonly rng: Rng;
  private entropyCoef: number;
  /** Adaptive entropy: the last rollout step's mean entropy (null before the first), for entropy_bonus_gate. */
  private lastEntropy: number | null = null;
  private baseline: RunningBaseline | null = null;
  private successRate: Record<string, number> = {};
  private readonly tasks = new Map<number, Task>();
  private readonly inspectGroups: number;
  private stopped = false;
  /** The step-0 evaluation waits for the next step (runStep): it runs at W_0 after the first step. */
  private initialEvalPending: boolean;
  /** The run's starting weights W_0 (host arrays) and their copy beside the policy, when weights are tracked. */
  private readonly startParams: ParamArrays | null;
  private readonly weights: WeightTracker | null;
  /** The ring of weight snapshots the sampler reads under max_staleness / weight_sync_steps, or null (on-policy). */
  private readonly stale: StaleSampler | null;
  private readonly backend: TrainerBackend;
  /** The LoRA spec when lora_rank > 0. */
  readonly lora: LoraSpec | null;
  /** The last rollout step's rollouts and what was scored before its updates: the A/B's "latest step" (references, no copy). */
  private latest: { ro: StepRollouts; scored: ScoreResult | null } | null = null;

  private constructor(
    opts: TrainerOptions,
    readonly tokenizer: Tokenizer,
    readonly modelConfig: ModelConfig,
  ) {
    this.config = validateConfig(opts.config);
    this.derived = derive(this.config);
    this.inspectGroups = opts.inspectGroups ?? 2;
    this.backend = opts.backend;
    this.rng = new Rng(this.config.seed);
    this.entropyCoef = this.config.entropy_coef;
    const resume = opts.resume;
    // The prompts' fit in the context is said before the memory plan's refusal.
    assertPromptsFit(this.config, tokenizer, opts.init.config.contextLength);
    const policy = learnerPolicyInit(this.config, opts.init.config, opts.backend, {
      memoryBudgetBytes: opts.memoryBudgetBytes,
      adapters: resume?.learner.lora,
      // Each distinct teacher once: ids that share a folder share its weights (src/engine/teacher.ts loadTeachers).
      teachers: [...new Set([...(opts.teacher ? [opts.teacher] : []), ...Object.values(opts.teachers ?? {})])].map(
        (t) => t.config,
      ),
    });
    this.lora = policy.lora?.spec ?? null;
    const init = {
      config: opts.init.config,
      params: resume ? resume.learner.policy : opts.init.params,
      reference: resume?.learner.reference ?? null,
      critic: resume?.learner.critic ?? null,
      needsReference: this.derived.needsReference,
      referenceIsBase: this.derived.referenceIsBase,
      needsCritic: this.derived.needsCritic,
      ...policy,
    };
    if (this.config.reward_fn !== null && !opts.rewardSandbox)
      throw new Error('reward_fn: this trainer was given no sandbox to run the reward function in');
    if (this.config.reward_model !== null && !opts.learnedReward)
      throw new Error(`reward_model: ${this.config.reward_model} was not loaded for this trainer`);
    this.learner = opts.backend.kind === 'webgpu' ? new GpuLearner(opts.backend.ctx, init) : new CpuLearner(init);
    this.userReward =
      this.config.reward_fn !== null && opts.rewardSandbox ? opts.rewardSandbox(this.config.reward_fn) : null;
    this.learnedReward = this.config.reward_model !== null ? (opts.learnedReward ?? null) : null;
    if (this.config.teacher !== null && !opts.teacher)
      throw new Error(`teacher: ${this.config.teacher} was not loaded for this trainer`);
    const teacherOpts = { maxRows: this.derived.microBatchSize, weightDtype: policy.weightDtype ?? 'f32' };
    this.teacher =
      this.config.teacher !== null && opts.teacher ? new Teacher(opts.teacher, opts.backend, teacherOpts) : null;
    if (this.config.teachers !== null) {
      // One Teacher per distinct weights: ids sharing a folder (or the default teacher's) share its scorer.
      const made = new Map<TeacherWeights, Teacher>(this.teacher && opts.teacher ? [[opts.teacher, this.teacher]] : []);
      const byId = new Map<string, Teacher>(this.teacher ? [[DEFAULT_TEACHER_ID, this.teacher]] : []);
      for (const id of Object.keys(this.config.teachers)) {
        const weights = opts.teachers?.[id];
        if (!weights) {
          for (const t of new Set(made.values())) t.destroy();
          throw new Error(`teachers: ${id} (${this.config.teachers[id]}) was not loaded for this trainer`);
        }
        if (!made.has(weights)) made.set(weights, new Teacher(weights, opts.backend, teacherOpts));
        byId.set(id, made.get(weights)!);
      }
      this.teachers = byId;
    } else this.teachers = null;
    if (resume) {
      const m = resume.meta;
      this.step = m.step;
      this.optimizerStep = m.optimizerStep;
      this.numTokens = m.numTokens;
      this.rng.setState(m.rngState);
      this.entropyCoef = m.entropyCoef;
      this.lastEntropy = m.lastEntropy;
      this.baseline = m.baseline;
      this.successRate = { ...m.successRate };
      this.learner.loadOptimizerState(resume.learner);
    }
    // W_0 is the run's start, also after a resume (the state carries it; a state saved without it measures from
    // where it resumed).
    // Not under LoRA: the tracker measures the base weights, which do not move (validate.ts warns).
    const tracked =
      this.lora === null &&
      (this.config.weight_stats_every > 0 || (this.config.rank1_eval && this.config.eval_every > 0));
    this.startParams = tracked ? (resume ? (resume.start ?? resume.learner.policy) : opts.init.params) : null;
    this.weights = this.startParams ? createWeightTracker(this.learner.policy, this.startParams) : null;
    this.initialEvalPending = resume?.meta.initialEvalPending === true && this.weights !== null;
    if (resume && stalenessActive(this.config) && !resume.stale)
      throw new Error(
        'resume: this saved state keeps no sampler snapshots (it was saved before they were kept), so a run with max_staleness or weight_sync_steps cannot continue exactly; start it again',
      );
    this.stale = createStaleSampler(this.learner.policy, this.config, this.optimizerStep, resume?.stale);
  }

  /** A trainer for `opts.config` starting from `opts.init` (or continuing `opts.resume`). */
  static async create(opts: TrainerOptions): Promise<Trainer> {
    if (opts.resume) {
      const a = JSON.stringify(opts.resume.meta.config);
      const b = JSON.stringify(validateConfig(opts.config));
      if (a !== b)
        throw new Error(
          'resume: the saved state was made with a different config; resume with the config it saved (state.meta.config)',
        );
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
    if (!t) this.tasks.set(difficulty, (t = taskOf(this.config, difficulty)));
    return t;
  }

  /** The difficulty of the next step under the curriculum. */
  private nextDifficulty(): number {
    const target = this.derived.difficulty;
    const min = this.taskAt(target).difficultyRange.min;
    return curriculumDifficulty(this.config, { min, target }, this.step, this.successRate, this.rng);
  }

  /** One rollout batch: sampling, rewards, advantages, num_iterations x num_minibatches optimizer steps. */
  async runStep(): Promise<StepRecord[]> {
    if (this.done) return [];
    const c = this.config;
    const d = this.derived;
    // The held-out score before any training, so a chart can answer "did RL help?" from step 0. Only a run that
    // starts at step 0 has it (a resumed run already evaluated, or never will); it is not part of a step's time.
    // A run that keeps W_0 beside the policy (weight tracking) runs it after its first step, at W_0, and the second
    // step's first record carries it: the first step's figures then come without waiting for an evaluation (on a
    // first visit, the compile of its pipelines too). Not when step 1 evaluates anyway (eval_every 1) or is the last.
    const deferInitialEval = c.eval_every > 1 && c.steps > 1 && this.step === 0 && this.weights !== null;
    let initialEval: EvalRecord | undefined;
    if (this.initialEvalPending) {
      initialEval = await this.evaluateStart();
      this.initialEvalPending = false;
    } else if (c.eval_every > 0 && this.step === 0 && !deferInitialEval) initialEval = await this.evaluate();
    const tStep = performance.now();
    const phases = new PhaseTimes();
    const time = phases.time.bind(phases);
    const difficulty = this.nextDifficulty();
    const task = this.taskAt(difficulty);
    const sampler = samplerVersion(this.optimizerStep, c);
    const sample = () => sampleStepRollouts(this, this.learner.policy, task, this.rng, this.step);
    const ro = await time('gen', () =>
      this.stale ? this.stale.withSamplerWeights(this.optimizerStep, sample) : sample(),
    );
    const { rollout } = ro;
    const N = rollout.rows;
    const G = c.num_generations;
    const S = d.maxCompletionLength;
    const tok = this.tokenizer;

    // The loss mask: completion tokens, minus truncated completions when asked.
    const mask = Float32Array.from(rollout.mask);
    const truncatedRows: boolean[] = Array.from({ length: N }, (_, r) => !rollout.finished[r]);
    if (c.mask_truncated_completions)
      for (let r = 0; r < N; r++) if (truncatedRows[r]) mask.fill(0, r * S, (r + 1) * S);

    // Minibatches (contiguous rows, the same split every epoch), each as its gradient_accumulation_steps micro-batches
    // (contiguous rows of it, one shape, at most the planned size), in the training layout. Scoring runs micro-batch
    // by micro-batch too.
    const P = maxOf(ro.prompts.map((p) => p.length));
    const mbs = minibatchRows(N, c.num_minibatches);
    const micro = mbs.map((rows) => microBatchRows(rows, d.microBatchSize));
    const seqs: SequenceBatch[][] = micro.map((parts) =>
      parts.map((rows) => sequenceBatch(ro.prompts, rollout.tokens, S, rows, P, tok.padId)),
    );

    const ratioIsOne = c.num_iterations === 1 && mbs.length === 1;
    // The optimal token baseline reads log pi_old and sum_v pi_old(v)^2 of every token before the update.
    const sumPiSquared = SUM_PI_SQUARED_ESTIMATORS.includes(c.adv_estimator);
    // The mismatch diagnostics (src/reference/mismatch-diagnostics.ts) read log pi_old beside the sampler's
    // log-probs: the policy is scored whenever the sampler is not the learner (half or stale weights, filtered
    // log-probs). Distillation reads log pi_S = log pi_old of every token before the update.
    const samplerDiffers = c.rollout_dtype !== 'f32' || c.rollout_logprobs === 'filtered' || this.stale !== null;
    const distilling = distills(c);
    const needScore =
      !ratioIsOne ||
      this.learner.hasReference ||
      this.learner.hasCritic ||
      sumPiSquared ||
      samplerDiffers ||
      distilling;
    // With one update per batch the update's own forward is pi_old, so the policy is scored only when the KL-in-reward
    // needs log pi_old before the update (k1 = log pi_old - log pi_ref), or the advantage needs pi_old itself.
    const scorePolicy = !ratioIsOne || d.klInReward || sumPiSquared || samplerDiffers || distilling;
    const scored = needScore
      ? await time('old_log_prob', () => this.learner.score(seqs.flat(), c.temperature, scorePolicy, sumPiSquared))
      : null;

    // Multi-teacher distillation: each row's teacher, by its prompt's teacher_id (validated: every row has one).
    const teacherOfRow = (r: number): string => {
      const item = ro.items[Math.floor(r / G)];
      const id = teacherIdFor(task.teacherId(item), c);
      if (id === null)
        throw new Error(
          `teachers: no teacher scores the prompt ${JSON.stringify(item.prompt)} (teacher_id ${task.teacherId(item)})`,
        );
      return id;
    };
    const teacherLogp = distilling
      ? await time('teacher', () =>
          teacherLogprobs({
            seqs: seqs.flat(),
            rows: micro.flat(),
            temperature: c.temperature,
            teacher: this.teacher,
            ...(this.teachers && {
              teachers: {
                byId: this.teachers,
                teacherOfRow,
                batch: (rows: readonly number[]) => sequenceBatch(ro.prompts, rollout.tokens, S, rows, P, tok.padId),
                S,
              },
            }),
            self: {
              learner: this.learner,
              prompts: ro.prompts,
              completions: rollout.tokens,
              S,
              demonstration: (r) => task.solve(ro.items[Math.floor(r / G)]),
              tokenizer: tok,
              contextLength: this.modelConfig.contextLength,
            },
          }),
        )
      : null;
    let distillMetrics: Metrics = {};

    const adv = await time('adv', () => {
      let k1: Float32Array | undefined;
      if (scored?.refLogp && d.klInReward) {
        const old = scored.oldLogp!; // scored whenever klInReward
        k1 = new Float32Array(N * S);
        for (let i = 0; i < k1.length; i++) k1[i] = mask[i] ? old[i] - scored.refLogp[i] : 0;
      }
      const res = computeAdvantages(
        c.adv_estimator,
        {
          rewards: ro.rewards,
          mask,
          groupSize: G,
          k1,
          values: scored?.values,
          greedyRewards: ro.greedyRewards,
          oldLogp: scored?.oldLogp,
          sumPiSquared: scored?.sumPiSquared,
        },
        {
          scaleRewards: c.scale_rewards,
          beta: d.klInReward ? c.beta : 0,
          gamma: c.gamma,
          lam: c.lam,
          baselineMomentum: c.reinforce_baseline_momentum,
          baseline: this.baseline,
          focal: focalOptionsOf(c),
          multiObjectiveAggregation: c.multi_objective_aggregation,
          rewardParts: rewardPartsOf(ro.parts, d.rewardWeights),
        },
      );
      if (res.baseline) this.baseline = res.baseline;
      if (!teacherLogp) return res;
      // On-policy distillation: lambda * (log pi_T - log pi_S) added to each token's advantage (distillation.ts).
      const dist = distillAdvantages(res.advantages, teacherLogp, scored!.oldLogp!, mask, c.distill_coef);
      distillMetrics = { 'distill/reverse_kl': dist.reverseKl, 'distill/adv_share': dist.share };
      if (this.teachers)
        for (const [id, kl] of reverseKlByTeacher(teacherLogp, scored!.oldLogp!, mask, S, teacherOfRow))
          distillMetrics[`distill/reverse_kl/${id}`] = kl;
      return { ...res, advantages: dist.advantages };
    });

    const inspectRows = inspectedRows(this.inspectGroups, N, G);

    // The RL config is an objective config; only alpha moves during a run (the adaptive entropy controller).
    const objective: ObjectiveConfig = {
      ...c,
      entropy_coef: appliedEntropyCoef(c, this.entropyCoef, this.lastEntropy),
    };
    const updates: { epoch: number; minibatch: number; lr: number; rows: number[] }[] = [];
    await time('update_actor', async () => {
      for (let epoch = 0; epoch < c.num_iterations; epoch++) {
        mbs.forEach((rows, mb) => {
          this.optimizerStep++;
          const lr = learningRateAt(c, this.optimizerStep, d.totalOptimizerSteps);
          const criticLr = learningRateAt(
            { ...c, learning_rate: d.criticLearningRate },
            this.optimizerStep,
            d.totalOptimizerSteps,
          );
          const step = {
            lr,
            weightDecay: c.weight_decay,
            beta1: c.adam_beta1,
            beta2: c.adam_beta2,
            eps: c.adam_epsilon,
            maxGradNorm: c.max_grad_norm > 0 ? c.max_grad_norm : undefined,
          };
          const last = epoch === c.num_iterations - 1;
          this.learner.update(
            micro[mb].map((part, j) => ({
              seq: seqs[mb][j],
              advantages: takeRows(adv.advantages, S, part),
              mask: takeRows(mask, S, part),
              samplerLogp: takeRows(rollout.logprobs, S, part),
              oldLogp: scored?.oldLogp && !ratioIsOne ? takeRows(scored.oldLogp, S, part) : null,
              oldValues: scored?.values ? takeRows(scored.values, S, part) : undefined,
              returns: adv.returns ? takeRows(adv.returns, S, part) : undefined,
            })),
            {
              objective,
              temperature: c.temperature,
              policy: step,
              critic: this.learner.hasCritic
                ? { ...step, lr: criticLr, vfCoef: c.vf_coef, cliprange: c.cliprange_value }
                : undefined,
              inspectRows: last ? rows.map((r, i) => (inspectRows.has(r) ? i : -1)).filter((i) => i >= 0) : [],
            },
          );
          this.stale?.afterOptimizerStep(this.optimizerStep);
          updates.push({ epoch, minibatch: mb, lr, rows });
        });
      }
    });
    const results = await time('update_actor', () => this.learner.collect());
    this.latest = { ro, scored };
    this.step++;
    if (deferInitialEval) this.initialEvalPending = true;
    this.numTokens += ro.sampledTokens;

    // Host-side state that follows the batch.
    const meanEntropy = results.reduce((a, r) => a + r.scalars.entropy, 0) / results.length;
    if (d.adaptiveEntropy) {
      this.entropyCoef = nextEntropyCoef(c, this.entropyCoef, meanEntropy);
      this.lastEntropy = meanEntropy;
    }
    const accuracy = mean(ro.parts.accuracy ?? new Float32Array(N));
    this.successRate[difficulty] = 0.9 * (this.successRate[difficulty] ?? accuracy) + 0.1 * accuracy;
    if (c.ref_model_sync_steps > 0 && this.step % c.ref_model_sync_steps === 0) await this.learner.syncReference();
    let evalRecord: EvalRecord | undefined;
    if (c.eval_every > 0 && (this.step % c.eval_every === 0 || this.step === c.steps))
      evalRecord = await time('testing', () => this.evaluate());
    // After the batch's updates and outside their command buffers: one small dispatch per weight, one readback.
    const weightMetrics =
      this.weights && c.weight_stats_every > 0 && this.step % c.weight_stats_every === 0
        ? await time('weights', () => this.weights!.measure())
        : undefined;
    const stepSeconds = (performance.now() - tStep) / 1000;

    const batchMetrics = rolloutMetrics(ro, mask, difficulty, G);
    if (scored?.values && adv.returns)
      batchMetrics.vf_explained_var = explainedVariance(scored.values, adv.returns, mask);
    Object.assign(
      batchMetrics,
      timingMetrics(phases.seconds, stepSeconds, ro.rolloutTokens, maskedTokens(mask) * c.num_iterations),
    );
    batchMetrics.entropy_coef = objective.entropy_coef;
    if (this.stale) {
      batchMetrics['off_policy/steps_behind'] = sampler.stepsBehind;
      batchMetrics['off_policy/versions_behind'] = sampler.versionsBehind;
    }
    if (scored?.oldLogp)
      Object.assign(
        batchMetrics,
        mismatchDiagnostics(scored.oldLogp, rollout.logprobs, mask, adv.advantages, S, diagnosticThreshold(c)),
      );
    Object.assign(batchMetrics, distillMetrics);
    batchMetrics.num_tokens = this.numTokens;
    // From values already on the host: the rollout's per-token entropies (read back with its tokens), the verdicts,
    // the lengths and the advantages; no readback of its own.
    const dynamics = stepDynamics({
      // The verifier's verdict, whatever reward_weights makes of it.
      accuracy: ro.verdicts.map((v) => v.parts.accuracy),
      finished: rollout.finished,
      lengths: rollout.lengths,
      entropies: rollout.entropies,
      advantages: adv.advantages,
      mask,
      groupSize: G,
      S,
    });
    Object.assign(batchMetrics, dynamics.metrics);
    if (weightMetrics) Object.assign(batchMetrics, weightMetrics);

    const groups = groupRecords(ro, adv.advantages, mask, scored, results, updates, inspectRows, G, S);
    return results.map((res, u) => {
      const up = updates[u];
      const metrics: Metrics = { ...batchMetrics, ...updateMetrics(res, this.learner.hasCritic), learning_rate: up.lr };
      const record: StepRecord = {
        kind: 'step',
        step: this.step,
        optimizerStep: this.optimizerStep - results.length + u + 1,
        update: u,
        updates: results.length,
        epoch: up.epoch,
        minibatch: up.minibatch,
        metrics,
      };
      if (u === 0 && initialEval) record.initialEval = initialEval;
      if (u === results.length - 1) {
        record.groups = groups;
        record.batch = groupSummaries(ro, adv.advantages, mask, G, S);
        record.histograms = dynamics.histograms;
        if (evalRecord) record.eval = evalRecord;
      }
      return record;
    });
  }

  /**
   * Held-out evaluation: greedy accuracy on eval_items prompts, and pass@k (k = 1..eval_num_generations) from
   * eval_num_generations samples per prompt at the training temperature. The same prompts every time.
   */
  async evaluate(): Promise<EvalRecord> {
    const task = this.taskAt(this.derived.difficulty);
    const record = await evaluateHeldOut(this, this.learner.policy, task, this.step);
    // The same evaluation with every matrix at W_0 + sigma_1 u_1 v_1^T (at step 0 that is W_0 itself: nothing to add).
    if (this.weights && this.config.rank1_eval && this.step > 0) {
      const rank1 = await this.weights.withRank1(() => evaluateHeldOut(this, this.learner.policy, task, this.step));
      record.rank1 = { accuracy: rank1.accuracy, reward: rank1.reward };
    }
    return record;
  }

  /** The held-out evaluation of the run's start (step 0) at W_0, the exact weights put back after it. */
  private async evaluateStart(): Promise<EvalRecord> {
    const task = this.taskAt(this.derived.difficulty);
    return this.weights!.withStart(() => evaluateHeldOut(this, this.learner.policy, task, 0));
  }

  /**
   * A/B of the run's objective (A, with the current entropy coefficient) and `b` on one batch at the current
   * parameters (src/rl/observation/compare.ts): the latest step's rollouts, or a batch sampled now on its own RNG stream (the
   * run's stream, and so an exact resume, is untouched). Only between steps; nothing of the run changes.
   */
  async compareObjectives(b: RLConfig, source: CompareSource): Promise<ObjectiveComparison> {
    const a: RLConfig = { ...this.config, entropy_coef: this.entropyCoef };
    const setting = {
      config: this.config,
      derived: this.derived,
      tokenizer: this.tokenizer,
      learner: this.learner,
      backend: this.backend,
      userReward: this.userReward,
      learnedReward: this.learnedReward,
    };
    if (source === 'latest') {
      if (!this.latest)
        throw new Error(
          'no step has run yet in this session of the run (a resumed run keeps no batch): run a step first, or compare on a fresh batch',
        );
      return compareOnRollouts(
        setting,
        this.latest.ro,
        this.latest.scored ?? {},
        a,
        validateConfig(b),
        'latest',
        this.step,
      );
    }
    const rng = new Rng(Math.imul(this.config.seed + 1, 0x27d4eb2d) ^ (this.step + 1));
    const ro = await sampleStepRollouts(
      this,
      this.learner.policy,
      this.taskAt(this.derived.difficulty),
      rng,
      this.step,
    );
    return compareOnRollouts(setting, ro, null, a, validateConfig(b), 'fresh', this.step);
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
        numTokens: this.numTokens,
        rngState: this.rng.getState(),
        entropyCoef: this.entropyCoef,
        lastEntropy: this.lastEntropy,
        baseline: this.baseline ? { ...this.baseline } : null,
        successRate: { ...this.successRate },
        ...(this.initialEvalPending ? { initialEvalPending: true as const } : {}),
      },
      learner: await this.learner.saveState(),
      ...(this.startParams ? { start: this.startParams } : {}),
      ...(this.stale ? { stale: await this.stale.snapshots() } : {}),
    };
  }

  /** Under LoRA (lora_rank > 0) the spec and the adapters as trained so far, for PEFT's layout; null otherwise. */
  async exportLoraAdapters(): Promise<{ spec: LoraSpec; adapters: ParamArrays } | null> {
    const policy = this.learner.policy;
    if (!this.lora) return null;
    if (policy instanceof GpuPolicy) return { spec: this.lora, adapters: await policy.model.downloadAdapters() };
    if (policy instanceof CpuPolicy && policy.lora)
      return {
        spec: this.lora,
        adapters: Object.fromEntries(
          Object.entries(policy.lora.adapters).map(([k, t]) => [k, Float32Array.from(t.data)]),
        ),
      };
    return null;
  }

  /**
   * The current policy as a Hugging Face checkpoint (encodeCheckpoint writes model.safetensors + config.json); under
   * LoRA the merged weights W + s B A.
   */
  async exportCheckpoint(): Promise<Checkpoint> {
    const tok = this.tokenizer;
    return {
      config: this.modelConfig,
      params: await this.learner.policy.download(),
      metadata: {
        made_by: 'rl-lab trainer',
        task: this.config.task,
        steps: String(this.step),
        seed: String(this.config.seed),
      },
      special: {
        bosId: tok.bosId,
        eosId: tok.eosId,
        padId: tok.padId,
        ...(tok.eosIds ? { eosIds: [...tok.eosIds] } : {}),
      },
    };
  }

  destroy(): void {
    this.stale?.destroy();
    this.weights?.destroy();
    this.userReward?.destroy();
    this.learnedReward?.destroy();
    // Every distinct teacher once (the default teacher is one of them under teachers).
    for (const t of new Set([...(this.teacher ? [this.teacher] : []), ...(this.teachers?.values() ?? [])])) t.destroy();
    this.learner.destroy();
  }
}
