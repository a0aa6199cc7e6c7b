// Stale rollouts (max_staleness, weight_sync_steps; docs/algorithms.md#stale-rollouts): the sampler of an
// asynchronous trainer, made deterministic. The learner's weights reach the sampler once every weight_sync_steps
// optimizer steps (one weight sync, one model version, as TRL's AsyncGRPOTrainer counts them), and each batch is
// sampled by the version max_staleness syncs behind the learner's (the queue of TRL's default max_inflight_tasks kept
// full). The versions still needed are kept as a ring of weight snapshots beside the policy: GPU buffers filled by
// copies recorded after the optimizer step that makes them (queue order: no readback), or host arrays for the CPU
// twins. Sampling swaps the wanted snapshot into the policy's weights and puts the exact weights back after it. A
// saved state keeps the snapshots (trainer-state.ts), so a resumed run samples from the same weights.
// Not the trainer's loop (trainer.ts) nor the memory plan's arithmetic (src/model/memory-plan.ts).

import type { GpuContext, Recorder, Tensor } from '../../gpu';
import { CpuPolicy, GpuPolicy, type Policy } from '../../model/policy';
import type { HostTensor } from '../../core/host-tensor';
import { weightToF32, weightToHalf } from '../../core/half';
import type { ParamArrays } from '../../io/checkpoint';

/** The staleness knobs as the sampler reads them. */
export interface StalenessConfig {
  max_staleness: number;
  weight_sync_steps: number;
}

/** True when the sampler may read other weights than the learner's current ones. */
export function stalenessActive(c: StalenessConfig): boolean {
  return c.max_staleness > 0 || c.weight_sync_steps > 1;
}

/** Snapshots a run of `c` keeps: the versions from max_staleness syncs behind up to the newest (0 when on-policy). */
export function snapshotSlots(c: StalenessConfig): number {
  return stalenessActive(c) ? c.max_staleness + 1 : 0;
}

/** The learner's model version after `optimizerStep` optimizer steps: the weight syncs done (version 0: the start). */
export function modelVersion(optimizerStep: number, c: StalenessConfig): number {
  return Math.floor(optimizerStep / c.weight_sync_steps);
}

/** Which weights sample the batch drawn after `optimizerStep` optimizer steps, and how old they are. */
export interface SamplerVersion {
  /** The model version the sampler holds: max(0, modelVersion - max_staleness). */
  version: number;
  /** Optimizer steps between those weights (made at version x weight_sync_steps) and the learner's now. */
  stepsBehind: number;
  /** Weight syncs between them: the staleness TRL compares with max_staleness. */
  versionsBehind: number;
}

export function samplerVersion(optimizerStep: number, c: StalenessConfig): SamplerVersion {
  const now = modelVersion(optimizerStep, c);
  const version = Math.max(0, now - c.max_staleness);
  return { version, stepsBehind: optimizerStep - version * c.weight_sync_steps, versionsBehind: now - version };
}

/** One kept model version's weights, as a saved state holds them (f32, by parameter name). */
export interface StaleSnapshot {
  version: number;
  params: ParamArrays;
}

/** The ring of snapshots of one policy's weights, on its backend. */
export interface StaleSampler {
  /** Bytes held: the snapshots and the one backup of the current weights used while sampling. */
  readonly bytes: number;
  /** After each optimizer step: takes a snapshot when the step ends a weight sync (optimizerStep % weight_sync_steps 0). */
  afterOptimizerStep(optimizerStep: number): void;
  /** Runs `fn` (the sampling) with the policy's weights at the sampler's version, then puts the exact weights back. */
  withSamplerWeights<T>(optimizerStep: number, fn: () => Promise<T>): Promise<T>;
  /** The versions kept, read back (for a saved state: a resumed run samples from the same weights). */
  snapshots(): Promise<StaleSnapshot[]>;
  destroy(): void;
}

/**
 * The stale sampler of `policy` under `c`, or null when the run samples on-policy (max_staleness 0,
 * weight_sync_steps 1). A new run's ring holds the current weights as the version of `optimizerStep` (0); a resumed
 * run's holds the snapshots its saved state kept (`saved`), so it samples from the same weights as if never stopped.
 */
export function createStaleSampler(
  policy: Policy,
  c: StalenessConfig,
  optimizerStep = 0,
  saved?: readonly StaleSnapshot[],
): StaleSampler | null {
  if (!stalenessActive(c)) return null;
  const slots = snapshotSlots(c);
  const ring = (weights: WeightSlots) => {
    try {
      return new RingSampler(c, slots, weights, optimizerStep, saved);
    } catch (e) {
      weights.destroy(); // a saved snapshot that does not fit: nothing stays allocated
      throw e;
    }
  };
  if (policy instanceof GpuPolicy) {
    if (policy.model.lora)
      throw new Error('max_staleness: the snapshots are of a policy trained in full, not under LoRA');
    return ring(new GpuWeights(policy.model.ctx, policy.model.params, slots));
  }
  if (policy instanceof CpuPolicy) {
    if (policy.lora) throw new Error('max_staleness: the snapshots are of a policy trained in full, not under LoRA');
    return ring(new CpuWeights(policy.params, slots));
  }
  throw new Error(`max_staleness: no weight snapshots for a ${policy.backend} policy`);
}

/** The backend's copies: snapshot slots, a backup, and copies between them and the live weights. */
interface WeightSlots {
  readonly bytes: number;
  /** Copies the live weights into `slot` (after the work already submitted). */
  save(slot: number): void;
  /** Backs the live weights up and puts `slot` in their place. */
  swapIn(slot: number): void;
  /** Puts the backup back into the live weights. */
  restore(): Promise<void>;
  /** Reads `slot` back as f32 arrays by parameter name. */
  read(slot: number): Promise<ParamArrays>;
  /** Fills `slot` with `params` (a saved snapshot); every parameter must be there, at its size. */
  write(slot: number, params: ParamArrays): void;
  destroy(): void;
}

/** The problem of a saved snapshot's parameter against the live one it replaces, or null. */
function snapshotProblem(name: string, data: Float32Array | undefined, size: number): string | null {
  if (!data) return `max_staleness: the saved snapshot has no ${name}`;
  if (data.length !== size) return `max_staleness: the saved snapshot's ${name} has ${data.length} values, not ${size}`;
  return null;
}

class RingSampler implements StaleSampler {
  /** versionOf[slot]: the model version a slot holds (-1: empty). */
  private readonly versionOf: number[];

  constructor(
    private readonly c: StalenessConfig,
    private readonly slots: number,
    private readonly weights: WeightSlots,
    optimizerStep: number,
    saved?: readonly StaleSnapshot[],
  ) {
    this.versionOf = new Array<number>(slots).fill(-1);
    if (!saved) {
      this.store(modelVersion(optimizerStep, c));
      return;
    }
    // A resumed run: the versions its sampler may still read, each in the slot it had.
    for (const { version, params } of saved) {
      const slot = version % slots;
      this.weights.write(slot, params);
      this.versionOf[slot] = version;
    }
  }

  get bytes(): number {
    return this.weights.bytes;
  }

  private store(version: number): void {
    const slot = version % this.slots;
    this.weights.save(slot);
    this.versionOf[slot] = version;
  }

  afterOptimizerStep(optimizerStep: number): void {
    if (optimizerStep % this.c.weight_sync_steps === 0) this.store(modelVersion(optimizerStep, this.c));
  }

  async withSamplerWeights<T>(optimizerStep: number, fn: () => Promise<T>): Promise<T> {
    const { version, stepsBehind } = samplerVersion(optimizerStep, this.c);
    if (stepsBehind === 0) return fn();
    const slot = version % this.slots;
    if (this.versionOf[slot] !== version)
      throw new Error(
        `max_staleness: the sampler's version ${version} is not among the snapshots kept (slot ${slot} holds ${this.versionOf[slot]})`,
      );
    this.weights.swapIn(slot);
    try {
      return await fn();
    } finally {
      await this.weights.restore();
    }
  }

  async snapshots(): Promise<StaleSnapshot[]> {
    const kept = this.versionOf.flatMap((version, slot) => (version < 0 ? [] : [{ version, slot }]));
    const out: StaleSnapshot[] = [];
    for (const { version, slot } of kept) out.push({ version, params: await this.weights.read(slot) });
    return out.sort((a, b) => a.version - b.version);
  }

  destroy(): void {
    this.weights.destroy();
  }
}

interface GpuEntry {
  name: string;
  w: Tensor;
  ring: Tensor[];
  backup: Tensor;
}

class GpuWeights implements WeightSlots {
  private readonly entries: GpuEntry[];
  readonly bytes: number;

  constructor(
    private readonly ctx: GpuContext,
    params: ReadonlyMap<string, Tensor>,
    slots: number,
  ) {
    this.entries = [...params].map(([name, w]) => ({
      name,
      w,
      ring: Array.from({ length: slots }, (_, k) =>
        ctx.tensor(w.shape, { dtype: w.dtype, label: `stale.${k}:${name}` }),
      ),
      backup: ctx.tensor(w.shape, { dtype: w.dtype, label: `stale.backup:${name}` }),
    }));
    this.bytes = this.entries.reduce((a, e) => a + e.backup.byteLength * (slots + 1), 0);
  }

  private record(label: string, each: (rec: Recorder, e: GpuEntry) => void): void {
    const rec = this.ctx.recorder(label);
    for (const e of this.entries) each(rec, e);
    rec.submit();
  }

  save(slot: number): void {
    this.record('stale.snapshot', (rec, e) => rec.copy(e.ring[slot], e.w));
  }

  swapIn(slot: number): void {
    this.record('stale.swap', (rec, e) => {
      rec.copy(e.backup, e.w);
      rec.copy(e.w, e.ring[slot]);
    });
  }

  async restore(): Promise<void> {
    this.record('stale.restore', (rec, e) => rec.copy(e.w, e.backup));
  }

  async read(slot: number): Promise<ParamArrays> {
    const arrays = await this.ctx.readMany(this.entries.map((e) => e.ring[slot]));
    return Object.fromEntries(
      this.entries.map((e, i) => {
        const dtype = e.w.dtype;
        const a = arrays[i];
        return [e.name, dtype === 'bf16' || dtype === 'f16' ? weightToF32({ dtype, bits: a as Uint16Array }) : a];
      }),
    ) as ParamArrays;
  }

  write(slot: number, params: ParamArrays): void {
    for (const e of this.entries) {
      const problem = snapshotProblem(
        e.name,
        params[e.name],
        e.w.shape.reduce((a, b) => a * b, 1),
      );
      if (problem) throw new Error(problem);
    }
    for (const e of this.entries) {
      const dtype = e.w.dtype;
      const data = params[e.name];
      this.ctx.upload(e.ring[slot], dtype === 'bf16' || dtype === 'f16' ? weightToHalf(data, dtype) : data);
    }
  }

  destroy(): void {
    for (const e of this.entries) for (const t of [...e.ring, e.backup]) t.destroy();
  }
}

class CpuWeights implements WeightSlots {
  private readonly entries: { name: string; w: HostTensor; ring: Float32Array[]; backup: Float32Array }[];
  readonly bytes: number;

  constructor(params: Readonly<Record<string, HostTensor>>, slots: number) {
    this.entries = Object.entries(params).map(([name, w]) => ({
      name,
      w,
      ring: Array.from({ length: slots }, () => new Float32Array(w.data.length)),
      backup: new Float32Array(w.data.length),
    }));
    this.bytes = 4 * this.entries.reduce((a, e) => a + e.backup.length * (slots + 1), 0);
  }

  save(slot: number): void {
    for (const e of this.entries) e.ring[slot].set(e.w.data);
  }

  swapIn(slot: number): void {
    for (const e of this.entries) {
      e.backup.set(e.w.data);
      e.w.data.set(e.ring[slot]);
    }
  }

  async restore(): Promise<void> {
    for (const e of this.entries) e.w.data.set(e.backup);
  }

  async read(slot: number): Promise<ParamArrays> {
    return Object.fromEntries(this.entries.map((e) => [e.name, Float32Array.from(e.ring[slot])])) as ParamArrays;
  }

  write(slot: number, params: ParamArrays): void {
    for (const e of this.entries) {
      const problem = snapshotProblem(e.name, params[e.name], e.ring[slot].length);
      if (problem) throw new Error(problem);
    }
    for (const e of this.entries) e.ring[slot].set(params[e.name]);
  }

  /** Nothing to free: the copies are host arrays. */
  destroy(): void {}
}
