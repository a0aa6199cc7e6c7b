// Which weights RL moves: a copy of the run's starting weights W_0 kept beside the policy (on the GPU for WebGPU,
// in memory for the CPU twins), and per weight the relative update ||W - W_0||_F / ||W_0||_F and the share of
// ||dW||_F^2 in its top singular direction, measured with the weight-stats kernels in one command buffer and ONE
// readback (src/kernels/weight-stats.ts); and the rank-1 evaluation: each matrix set to W_0 + sigma_1 u_1 v_1^T for
// the length of a callback, then restored exactly. Not the trainer's schedule of measurements (trainer.ts).

import type { GpuContext, Recorder, Tensor } from '../../gpu';
import {
  RANK1_ITERATIONS,
  rank1Apply,
  rank1Share,
  relativeUpdate,
  weightUpdateStats,
} from '../../kernels/weight-stats';
import type { ParamArrays } from '../../io/checkpoint';
import { CpuPolicy, GpuPolicy, type Policy } from '../../model/policy';
import { host, type HostTensor } from '../../core/host-tensor';
import * as twin from '../../reference/weight-stats';
import { weightMetricName } from '../../schema/weight-names';
import type { Metrics } from '../../schema/stream';

export { weightMetricName };

/** One tracked weight: its metric name and whether it is a matrix (a norm's gain is a vector: no rank-1 share). */
export interface TrackedWeight {
  name: string;
  matrix: boolean;
}

/**
 * The metrics of one measurement from the (weights * 3) stats WEIGHT_STATS order: weights/<name>/rel_update for
 * every weight, weights/<name>/rank1_share for the matrices.
 */
export function weightMetrics(weights: readonly TrackedWeight[], stats: ArrayLike<number>): Metrics {
  const m: Metrics = {};
  weights.forEach((w, i) => {
    const [deltaSq, startSq, sigmaSq] = [stats[3 * i], stats[3 * i + 1], stats[3 * i + 2]];
    m[`weights/${w.name}/rel_update`] = relativeUpdate(deltaSq, startSq);
    if (w.matrix) m[`weights/${w.name}/rank1_share`] = rank1Share(deltaSq, sigmaSq);
  });
  return m;
}

export interface WeightTracker {
  /** The tracked weights, in the model's parameter order. */
  readonly weights: readonly TrackedWeight[];
  /** Bytes held for W_0 (one f32 copy of every parameter) plus the power iteration's vectors. */
  readonly bytes: number;
  /** The relative update and rank-1 share of every weight now (one readback on the GPU). */
  measure(): Promise<Metrics>;
  /**
   * Runs `fn` with every matrix W set to its rank-1 update W_0 + sigma_1 u_1 v_1^T (norm gains keep their values: a
   * vector's update is already rank 1), then puts the exact weights back, bit for bit, even when `fn` throws.
   */
  withRank1<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` with every tracked weight (all of the policy's) at W_0, the run's start, then puts the exact weights
   * back, bit for bit, even when `fn` throws: the step-0 evaluation, run after the first step (Trainer.runStep).
   */
  withStart<T>(fn: () => Promise<T>): Promise<T>;
  destroy(): void;
}

/** A tracker of `policy`'s weights against `start` (W_0, by Hugging Face name), on the policy's backend. */
export function createWeightTracker(policy: Policy, start: ParamArrays): WeightTracker {
  if (policy instanceof GpuPolicy) return new GpuWeightTracker(policy.model.ctx, policy.model.params, start);
  if (policy instanceof CpuPolicy) return new CpuWeightTracker(policy.params, start);
  throw new Error(`createWeightTracker: no weight tracker for a ${policy.backend} policy`);
}

function startOf(start: ParamArrays, hfName: string, size: number): Float32Array {
  const data = start[hfName];
  if (!data || data.length !== size)
    throw new Error(`weight tracker: the starting weights lack ${hfName} of ${size} values`);
  return data;
}

interface GpuEntry extends TrackedWeight {
  w: Tensor;
  w0: Tensor;
  u: Tensor;
  v: Tensor;
}

class GpuWeightTracker implements WeightTracker {
  private readonly entries: GpuEntry[];
  private readonly stats: Tensor;
  readonly weights: readonly TrackedWeight[];
  readonly bytes: number;

  constructor(
    private readonly ctx: GpuContext,
    params: ReadonlyMap<string, Tensor>,
    start: ParamArrays,
  ) {
    this.entries = [...params].map(([hf, w]) => {
      const { R, C } = twin.matrixDims(w, hf);
      const name = weightMetricName(hf);
      return {
        name,
        matrix: w.shape.length === 2,
        w,
        w0: ctx.fromArray(startOf(start, hf, w.size), w.shape, { label: `w0:${hf}` }),
        u: ctx.tensor([R], { label: `weights.u:${name}` }),
        v: ctx.tensor([C], { label: `weights.v:${name}` }),
      };
    });
    this.stats = ctx.tensor([this.entries.length * 3], { label: 'weights.stats' });
    this.weights = this.entries.map(({ name, matrix }) => ({ name, matrix }));
    this.bytes = 4 * this.entries.reduce((a, e) => a + e.w0.size + e.u.size + e.v.size, 0) + this.stats.byteLength;
  }

  async measure(): Promise<Metrics> {
    const rec = this.ctx.recorder('weights.stats');
    this.entries.forEach((e, i) =>
      weightUpdateStats(rec, this.stats, e.u, e.v, e.w, e.w0, { slot: i, iterations: RANK1_ITERATIONS }),
    );
    rec.submit();
    const [stats] = await this.ctx.readMany([this.stats]);
    return weightMetrics(this.weights, stats);
  }

  async withRank1<T>(fn: () => Promise<T>): Promise<T> {
    const matrices = this.entries.filter((e) => e.matrix);
    return this.withWeights(
      matrices,
      'weights.rank1',
      (rec, e) => {
        // The statistics read W before it is replaced (the backup's copy is recorded first, from the same W).
        weightUpdateStats(rec, this.stats, e.u, e.v, e.w, e.w0, {
          slot: this.entries.indexOf(e),
          iterations: RANK1_ITERATIONS,
        });
        rank1Apply(rec, e.w, e.w0, e.u, e.v);
      },
      fn,
    );
  }

  async withStart<T>(fn: () => Promise<T>): Promise<T> {
    return this.withWeights(this.entries, 'weights.start', (rec, e) => rec.copy(e.w, e.w0), fn);
  }

  /**
   * Backs up `entries`' weights, records `set` for each into one submit, runs `fn`, and copies the backups back
   * (after `fn`, also when it throws; nothing is changed when recording `set` throws).
   */
  private async withWeights<T>(
    entries: readonly GpuEntry[],
    label: string,
    set: (rec: Recorder, e: GpuEntry) => void,
    fn: () => Promise<T>,
  ): Promise<T> {
    const { ctx } = this;
    const backups = entries.map((e) => ctx.tensor(e.w.shape, { label: `weights.backup:${e.name}` }));
    try {
      const rec = ctx.recorder(label);
      entries.forEach((e, k) => {
        rec.copy(backups[k], e.w);
        set(rec, e);
      });
      rec.submit();
    } catch (e) {
      // Nothing was submitted: the weights are untouched.
      for (const b of backups) b.destroy();
      throw e;
    }
    try {
      return await fn();
    } finally {
      const rec = ctx.recorder('weights.restore');
      entries.forEach((e, k) => rec.copy(e.w, backups[k]));
      rec.submit();
      // The copies must have run before their sources go.
      await ctx.flush();
      for (const b of backups) b.destroy();
    }
  }

  destroy(): void {
    for (const e of this.entries) for (const t of [e.w0, e.u, e.v]) t.destroy();
    this.stats.destroy();
  }
}

interface CpuEntry extends TrackedWeight {
  w: HostTensor;
  w0: HostTensor;
  u: HostTensor;
  v: HostTensor;
}

/** The same measurements on the CPU twins, for the CPU learner. */
class CpuWeightTracker implements WeightTracker {
  private readonly entries: CpuEntry[];
  readonly weights: readonly TrackedWeight[];
  readonly bytes: number;

  constructor(params: Readonly<Record<string, HostTensor>>, start: ParamArrays) {
    this.entries = Object.entries(params).map(([hf, w]) => {
      const { R, C } = twin.matrixDims(w, hf);
      const w0 = Float32Array.from(startOf(start, hf, w.data.length));
      return {
        name: weightMetricName(hf),
        matrix: w.shape.length === 2,
        w,
        w0: host(w0, w.shape),
        u: host(new Float32Array(R), [R]),
        v: host(new Float32Array(C), [C]),
      };
    });
    this.weights = this.entries.map(({ name, matrix }) => ({ name, matrix }));
    this.bytes = 4 * this.entries.reduce((a, e) => a + e.w0.data.length + e.u.data.length + e.v.data.length, 0);
  }

  private statsOf(entries: readonly { e: CpuEntry; i: number }[]): Float32Array {
    const out = host(new Float32Array(this.entries.length * 3), [this.entries.length * 3]);
    for (const { e, i } of entries)
      twin.weightUpdateStats(out, e.u, e.v, e.w, e.w0, { slot: i, iterations: RANK1_ITERATIONS });
    return out.data as Float32Array;
  }

  async measure(): Promise<Metrics> {
    return weightMetrics(this.weights, this.statsOf(this.entries.map((e, i) => ({ e, i }))));
  }

  async withRank1<T>(fn: () => Promise<T>): Promise<T> {
    const matrices = this.entries.map((e, i) => ({ e, i })).filter(({ e }) => e.matrix);
    return this.withWeights(
      matrices.map(({ e }) => e),
      () => {
        this.statsOf(matrices);
        for (const { e } of matrices) twin.rank1Apply(e.w, e.w0, e.u, e.v);
      },
      fn,
    );
  }

  async withStart<T>(fn: () => Promise<T>): Promise<T> {
    return this.withWeights(this.entries, () => this.entries.forEach((e) => e.w.data.set(e.w0.data)), fn);
  }

  /** Backs up `entries`' weights, runs `set` then `fn`, and puts the backups back (also when either throws). */
  private async withWeights<T>(entries: readonly CpuEntry[], set: () => void, fn: () => Promise<T>): Promise<T> {
    const backups = entries.map((e) => e.w.data.slice());
    try {
      set();
      return await fn();
    } finally {
      entries.forEach((e, k) => e.w.data.set(backups[k]));
    }
  }

  /** Nothing to free: the copies are host arrays. */
  destroy(): void {}
}
