// The learner on the CPU twins: the same steps as GpuLearner (learner.ts) in plain TypeScript, row by row on
// unpadded sequences. It is the slow fallback where a browser has no WebGPU (the smallest presets only) and an
// oracle for the GPU learner in tests. Not fast: every forward is the reference model.

import type { ParamArrays } from '../../io/checkpoint';
import type { ModelConfig } from '../../schema/model-config';
import { CpuPolicy } from '../../model/policy';
import { cpuLearnerPolicy } from './learner-policy';
import { roundModelWeights } from '../../reference/half-weights';
import type { WeightDtype } from '../../core/half';
import { klExactBackward, klExactForward } from '../../reference/kl';
import { logprobBackward, logprobForward, logprobForwardSumPiSquared } from '../../reference/logprob';
import { modelBackward, modelForward, type ModelCache, type ModelLora } from '../../reference/model';
import type { ModelParams } from '../../core/model-shapes';
import { OBJECTIVE_METRICS, OBJECTIVE_RECORDS, objectiveForwardBackward } from '../../reference/objective';
import { host, type HostTensor } from '../../core/host-tensor';
import { VALUE_METRICS, valueLossForwardBackward } from '../../reference/value';
import type { SequenceBatch } from '../algorithm/batch';
import type { AggregationTotals } from '../../reference/objective';
import {
  type INSPECT_PLANES,
  STEP_SCALARS,
  combineMicroScalars,
  criticInit,
  microBatchesOf,
  type StepInputs,
  type Learner,
  type LearnerInit,
  type LearnerState,
  type ScoreResult,
  type StepScalar,
  type TokenPlanes,
  type UpdateInputs,
  type UpdateOptions,
  type UpdateResult,
} from './learner';

/** One row's forward: its logits (T_r, V) and the cache for its backward; `at(s)` is completion token s's logit row. */
interface RowForward {
  logits: HostTensor;
  cache: ModelCache;
  tokens: Uint32Array;
  /** Offset of completion token 0's logit row. */
  first: number;
}

function rowForward(
  config: ModelConfig,
  params: ModelParams,
  seq: SequenceBatch,
  n: number,
  lora?: ModelLora,
): RowForward {
  const prompt = seq.prompts[n];
  const S = seq.S;
  const T = prompt.length + S - 1;
  const tokens = new Uint32Array(T);
  tokens.set(prompt);
  for (let s = 0; s < S - 1; s++) tokens[prompt.length + s] = seq.completions[n * S + s];
  const { logits, cache } = modelForward(config, params, tokens, 1, T, lora);
  return { logits: host(logits.data as Float32Array, [T, config.vocabSize]), cache, tokens, first: prompt.length - 1 };
}

/** The completion rows (S, V) of a row's logits. */
function completionLogits(f: RowForward, S: number, V: number): HostTensor {
  return host((f.logits.data as Float32Array).slice(f.first * V, (f.first + S) * V), [S, V]);
}

export class CpuLearner implements Learner {
  readonly backend = 'cpu';
  readonly policy: CpuPolicy;
  private readonly ref: CpuPolicy | null;
  private readonly critic: CpuPolicy | null;
  private results: UpdateResult[] = [];
  /** The storage dtype of the frozen weights this learner mirrors. */
  private readonly dtype: WeightDtype;

  constructor(init: LearnerInit) {
    this.dtype = init.weightDtype ?? 'f32';
    // The twin of the GPU's half storage: a frozen base (LoRA) and the reference hold their weights rounded as the
    // GPU would store them (weight_dtype), then compute in f32 as before.
    const frozen = (p: ParamArrays) => roundModelWeights(init.config, p, this.dtype);
    this.policy = cpuLearnerPolicy(init);
    this.ref = init.needsReference ? new CpuPolicy(init.config, frozen(init.reference ?? init.params)) : null;
    if (init.needsCritic) {
      const c = criticInit(init.config, init.params);
      this.critic = new CpuPolicy(c.config, init.critic ?? c.params);
    } else this.critic = null;
  }

  get hasReference(): boolean {
    return this.ref !== null;
  }

  get hasCritic(): boolean {
    return this.critic !== null;
  }

  private logprobs(
    logits: HostTensor,
    targets: Uint32Array,
    temperature: number,
    sumPiSquared = false,
  ): { logp: Float32Array; entropy: Float32Array; sumPiSquared?: Float32Array } {
    const n = targets.length;
    const lp = host(new Float32Array(n), [n]);
    const ent = host(new Float32Array(n), [n]);
    const sq = sumPiSquared ? host(new Float32Array(n), [n]) : undefined;
    if (sq) logprobForwardSumPiSquared(lp, ent, sq, logits, targets, { temperature });
    else logprobForward(lp, ent, logits, targets, { temperature });
    return {
      logp: lp.data as Float32Array,
      entropy: ent.data as Float32Array,
      ...(sq ? { sumPiSquared: sq.data as Float32Array } : {}),
    };
  }

  async score(
    batches: SequenceBatch[],
    temperature: number,
    policy: boolean,
    sumPiSquared = false,
  ): Promise<ScoreResult> {
    if (sumPiSquared && !policy) throw new Error('score: sumPiSquared comes from the policy pass; pass policy true');
    const old: number[] = [];
    const sq: number[] = [];
    const ref: number[] = [];
    const values: number[] = [];
    const V = this.policy.config.vocabSize;
    for (const seq of batches) {
      for (let n = 0; n < seq.N; n++) {
        const targets = seq.completions.subarray(n * seq.S, (n + 1) * seq.S);
        if (policy) {
          const f = rowForward(this.policy.config, this.policy.params, seq, n, this.policy.lora ?? undefined);
          const planes = this.logprobs(completionLogits(f, seq.S, V), targets, temperature, sumPiSquared);
          old.push(...planes.logp);
          if (planes.sumPiSquared) sq.push(...planes.sumPiSquared);
        }
        if (this.ref) {
          const r = rowForward(this.ref.config, this.ref.params, seq, n);
          ref.push(...this.logprobs(completionLogits(r, seq.S, V), targets, temperature).logp);
        }
        if (this.critic) {
          const c = rowForward(this.critic.config, this.critic.params, seq, n);
          const cl = c.logits.data;
          for (let s = 0; s < seq.S; s++) values.push(cl[(c.first + s) * V]);
        }
      }
    }
    return {
      oldLogp: policy ? Float32Array.from(old) : undefined,
      ...(sumPiSquared ? { sumPiSquared: Float32Array.from(sq) } : {}),
      refLogp: this.ref ? Float32Array.from(ref) : undefined,
      values: this.critic ? Float32Array.from(values) : undefined,
    };
  }

  async tokenPlanes(seq: SequenceBatch, temperature: number): Promise<TokenPlanes> {
    const { S, N } = seq;
    const V = this.policy.config.vocabSize;
    const planes = { logp: new Float32Array(N * S), entropy: new Float32Array(N * S) };
    const ref = this.ref ? { refLogp: new Float32Array(N * S), klExact: new Float32Array(N * S) } : null;
    for (let n = 0; n < N; n++) {
      const targets = seq.completions.subarray(n * S, (n + 1) * S);
      const l = completionLogits(
        rowForward(this.policy.config, this.policy.params, seq, n, this.policy.lora ?? undefined),
        S,
        V,
      );
      const o = this.logprobs(l, targets, temperature);
      planes.logp.set(o.logp, n * S);
      planes.entropy.set(o.entropy, n * S);
      if (this.ref && ref) {
        const rl = completionLogits(rowForward(this.ref.config, this.ref.params, seq, n), S, V);
        ref.refLogp.set(this.logprobs(rl, targets, temperature).logp, n * S);
        const kl = host(new Float32Array(S), [S]);
        klExactForward(kl, l, rl, { temperature });
        ref.klExact.set(kl.data, n * S);
      }
    }
    return { ...planes, ...ref };
  }

  update(step: StepInputs, opts: UpdateOptions): void {
    const mb = microBatchesOf('CpuLearner.update', step);
    // Each micro-batch's forward and backward in turn, its gradients summed with the others', one optimizer step.
    const parts = mb.micro.map((inp) => this.microStep(inp, opts, mb.totals));
    const scalars = combineMicroScalars(
      parts.map((p) => p.scalars),
      mb.tokens,
    );
    scalars.grad_norm = this.policy.optimizerStep(sumGrads(parts.map((p) => p.grads)), opts.policy);
    if (this.critic && opts.critic)
      scalars['critic/grad_norm'] = this.critic.optimizerStep(sumGrads(parts.map((p) => p.criticGrads!)), opts.critic);
    const inspected: UpdateResult['inspected'] = new Map();
    const S = mb.micro[0].seq.S;
    for (const row of opts.inspectRows) {
      const j = mb.starts.findLastIndex((start) => start <= row);
      const r = row - mb.starts[j];
      const { records, logp, entropy } = parts[j];
      const MS = mb.micro[j].seq.N * S;
      const plane = (p: number) => records.slice(p * MS + r * S, p * MS + (r + 1) * S);
      const rec = {} as Record<(typeof INSPECT_PLANES)[number], Float32Array>;
      rec.logp = logp.slice(r * S, (r + 1) * S);
      rec.entropy = entropy.slice(r * S, (r + 1) * S);
      OBJECTIVE_RECORDS.forEach((name, p) => (rec[name] = plane(p)));
      inspected.set(row, rec);
    }
    this.results.push({ scalars, inspected });
  }

  /**
   * One micro-batch's forward, objective (over the minibatch's totals when given) and backward: its summed
   * gradients (the critic's too), scalars (grad norms left 0: the optimizer step sets them) and per-token planes.
   */
  private microStep(
    inp: UpdateInputs,
    opts: UpdateOptions,
    totals: AggregationTotals | undefined,
  ): {
    grads: ModelParams;
    criticGrads: ModelParams | null;
    scalars: Record<StepScalar, number>;
    records: Float32Array;
    logp: Float32Array;
    entropy: Float32Array;
  } {
    const { seq } = inp;
    const { S, N: M } = seq;
    const MS = M * S;
    const V = this.policy.config.vocabSize;
    const temperature = opts.temperature;
    const forwards: RowForward[] = [];
    const logits: HostTensor[] = [];
    const refLogits: HostTensor[] = [];
    const logp = new Float32Array(MS);
    const entropy = new Float32Array(MS);
    const refLogp = new Float32Array(MS);
    const klExact = new Float32Array(MS);
    for (let n = 0; n < M; n++) {
      const f = rowForward(this.policy.config, this.policy.params, seq, n, this.policy.lora ?? undefined);
      forwards.push(f);
      const l = completionLogits(f, S, V);
      logits.push(l);
      const targets = seq.completions.subarray(n * S, (n + 1) * S);
      const o = this.logprobs(l, targets, temperature);
      logp.set(o.logp, n * S);
      entropy.set(o.entropy, n * S);
      if (this.ref) {
        const rl = completionLogits(rowForward(this.ref.config, this.ref.params, seq, n), S, V);
        refLogits.push(rl);
        refLogp.set(this.logprobs(rl, targets, temperature).logp, n * S);
        const kl = host(new Float32Array(S), [S]);
        klExactForward(kl, l, rl, { temperature });
        klExact.set(kl.data, n * S);
      }
    }
    const shape = [M, S];
    const loss = host(new Float32Array(1), [1]);
    const dLogp = host(new Float32Array(MS), shape);
    const dEnt = host(new Float32Array(MS), shape);
    const records = host(new Float32Array(OBJECTIVE_RECORDS.length * MS), [OBJECTIVE_RECORDS.length, M, S]);
    const metrics = host(new Float32Array(OBJECTIVE_METRICS.length), [OBJECTIVE_METRICS.length]);
    objectiveForwardBackward(
      loss,
      dLogp,
      dEnt,
      records,
      metrics,
      {
        logp: host(logp, shape),
        oldLogp: host(inp.oldLogp ?? logp, shape),
        advantages: host(inp.advantages, shape),
        mask: host(inp.mask, shape),
        entropy: host(entropy, shape),
        samplerLogp: host(inp.samplerLogp, shape),
        ...(this.ref ? { refLogp: host(refLogp, shape), klExact: host(klExact, shape) } : {}),
      },
      opts.objective,
      totals,
    );
    const cfg = opts.objective;
    const exact = cfg.beta > 0 && cfg.kl_placement === 'in_loss' && cfg.kl_estimator === 'exact';
    const grads: ModelParams[] = [];
    for (let n = 0; n < M; n++) {
      const f = forwards[n];
      const rows = f.logits.shape[0];
      const dLogits = host(new Float32Array(rows * V), [1, rows, V]);
      const d = host(new Float32Array(S * V), [S, V]);
      const targets = seq.completions.subarray(n * S, (n + 1) * S);
      logprobBackward(
        d,
        host(dLogp.data.slice(n * S, (n + 1) * S), [S]),
        host(dEnt.data.slice(n * S, (n + 1) * S), [S]),
        logits[n],
        targets,
        { temperature },
      );
      if (exact) {
        const dKl = host(
          Float32Array.from({ length: S }, (_, s) => cfg.beta * records.data[4 * MS + n * S + s]),
          [S],
        );
        klExactBackward(d, dKl, logits[n], refLogits[n], { temperature, accumulate: true });
      }
      dLogits.data.set(d.data, f.first * V);
      grads.push(
        modelBackward(this.policy.config, this.policy.params, f.cache, dLogits, this.policy.lora ?? undefined),
      );
    }
    const scalars = Object.fromEntries(STEP_SCALARS.map((k) => [k, 0])) as Record<StepScalar, number>;
    OBJECTIVE_METRICS.forEach((k, i) => (scalars[k] = metrics.data[i]));
    scalars.loss = loss.data[0];
    let criticGrads: ModelParams | null = null;
    if (this.critic && opts.critic) {
      if (!inp.oldValues || !inp.returns) throw new Error('CpuLearner.update: the critic needs oldValues and returns');
      const cf: RowForward[] = [];
      const values = new Float32Array(MS);
      for (let n = 0; n < M; n++) {
        const c = rowForward(this.critic.config, this.critic.params, seq, n);
        cf.push(c);
        for (let s = 0; s < S; s++) values[n * S + s] = c.logits.data[(c.first + s) * V];
      }
      const vLoss = host(new Float32Array(1), [1]);
      const dValues = host(new Float32Array(MS), shape);
      const vMetrics = host(new Float32Array(VALUE_METRICS.length), [VALUE_METRICS.length]);
      valueLossForwardBackward(
        vLoss,
        dValues,
        vMetrics,
        host(values, shape),
        host(inp.oldValues, shape),
        host(inp.returns, shape),
        host(inp.mask, shape),
        {
          coef: opts.critic.vfCoef,
          ...(opts.critic.cliprange !== null ? { cliprange: opts.critic.cliprange } : {}),
          ...(totals ? { totalTokens: totals.tokens } : {}),
        },
      );
      const cg: ModelParams[] = [];
      for (let n = 0; n < M; n++) {
        const c = cf[n];
        const rows = c.logits.shape[0];
        const dLogits = host(new Float32Array(rows * V), [1, rows, V]);
        for (let s = 0; s < S; s++) dLogits.data[(c.first + s) * V] = dValues.data[n * S + s];
        cg.push(modelBackward(this.critic.config, this.critic.params, c.cache, dLogits));
      }
      criticGrads = sumGrads(cg);
      VALUE_METRICS.forEach((k, i) => (scalars[k] = vMetrics.data[i]));
    }
    return {
      grads: sumGrads(grads),
      criticGrads,
      scalars,
      records: records.data as Float32Array,
      logp,
      entropy,
    };
  }

  async collect(): Promise<UpdateResult[]> {
    const r = this.results;
    this.results = [];
    return r;
  }

  async syncReference(): Promise<void> {
    if (!this.ref) return;
    // The current policy: under LoRA its merged weights.
    const merged = roundModelWeights(this.ref.config, await this.policy.download(), this.dtype);
    for (const [name, t] of Object.entries(merged)) this.ref.params[name].data.set(t);
  }

  async saveState(): Promise<LearnerState> {
    const arrays = (p: ModelParams): ParamArrays =>
      Object.fromEntries(Object.entries(p).map(([k, t]) => [k, Float32Array.from(t.data)]));
    const state: LearnerState = {
      policy: arrays(this.policy.params),
      policyOptimizer: { m: arrays(this.policy.m), v: arrays(this.policy.v), step: this.policy.step },
    };
    if (this.policy.lora) state.lora = arrays(this.policy.lora.adapters);
    if (this.ref) state.reference = arrays(this.ref.params);
    if (this.critic) {
      state.critic = arrays(this.critic.params);
      state.criticOptimizer = { m: arrays(this.critic.m), v: arrays(this.critic.v), step: this.critic.step };
    }
    return state;
  }

  loadOptimizerState(state: LearnerState): void {
    const load = (p: CpuPolicy, o: { m: ParamArrays; v: ParamArrays; step: number }) => {
      for (const [k, t] of Object.entries(o.m)) p.m[k]?.data.set(t);
      for (const [k, t] of Object.entries(o.v)) p.v[k]?.data.set(t);
      p.step = o.step;
    };
    load(this.policy, state.policyOptimizer);
    if (this.critic && state.criticOptimizer) load(this.critic, state.criticOptimizer);
  }

  destroy(): void {}
}

/** Sums per-row gradients (the rows of one minibatch) into one gradient per parameter. */
function sumGrads(parts: ModelParams[]): ModelParams {
  const out: ModelParams = {};
  for (const [k, t] of Object.entries(parts[0])) {
    const acc = new Float32Array(t.data.length);
    for (const g of parts) {
      const d = g[k].data;
      for (let i = 0; i < acc.length; i++) acc[i] += d[i];
    }
    out[k] = host(acc, t.shape);
  }
  return out;
}
