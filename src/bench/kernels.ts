// Per-kernel benchmark at the model's real shapes: records one training step, captures every dispatch it makes,
// groups them by kernel and tensor roles (layer numbers dropped, so the q projection of every layer is one row),
// and times each group's dispatch alone. Arithmetic (GFLOP/s) for matmul and attention from their parameters;
// memory (GB/s, every bound tensor counted once) for the rest. Not a profiler of whole phases (suite.ts).

import type { Dispatch, Recorder, Tensor } from '../gpu';
import { dispatchSamples, median, type TimingMethod } from './measure';

/** The dispatches of a step with the same kernel, parameters and tensor roles. */
export interface KernelGroup {
  name: string;
  shape: string;
  dispatch: Dispatch;
  count: number;
  flop?: number;
  bytes: number;
}

/**
 * Runs `record` on `rec`, remembering every dispatch it makes. Wraps the recorder's dispatch method for this one
 * recorder (a spy); the recorder behaves exactly as before.
 */
export function captureDispatches(rec: Recorder, record: (rec: Recorder) => void): Dispatch[] {
  const captured: Dispatch[] = [];
  const original = rec.dispatch.bind(rec);
  rec.dispatch = (d: Dispatch) => {
    captured.push(d);
    return original(d);
  };
  try {
    record(rec);
  } finally {
    rec.dispatch = original;
  }
  return captured;
}

/**
 * A tensor label without its layer, so every layer's tensor of a role reads the same:
 * "L3.q" -> "q", "grad:model.layers.3.self_attn.q_proj.weight" -> "grad:q_proj", "adam_m:model.norm.weight" -> "adam_m:norm".
 */
export function tensorRole(label: string): string {
  return label
    .replace(/\bL\d+\./g, '')
    .replace(/model\.layers\.\d+\.(self_attn\.|mlp\.)?/g, '')
    .replace(/model\./g, '')
    .replace(/\.weight\b/g, '');
}

/** A dispatch's kernel as tables show it: its label's entry part when labelled (matmul's 'tall' runs matmul_wide of its own module), else its entry. */
function kernelName(d: Dispatch): string {
  return d.label ? d.label.slice(d.label.indexOf('.') + 1) : d.entry;
}

function isMatmul(d: Dispatch): boolean {
  return d.family.name === 'matmul' || d.family.name.startsWith('matmul-');
}

function words(d: Dispatch): number[] {
  return d.params ? Array.from(d.params.toUint32Array()) : [];
}

/** Floating-point work of a dispatch where it is well defined (matmul, attention), else undefined. */
function flopOf(d: Dispatch): number | undefined {
  const w = words(d);
  if (isMatmul(d)) {
    const [M, N, K, batch] = w;
    return 2 * M * N * K * batch;
  }
  if (
    d.family.name.startsWith('attention') &&
    (d.entry === 'attention_forward' || d.entry.startsWith('attention_backward_d'))
  ) {
    const [B, T, Tk, , NH, , HD] = w;
    // Query t (of the last T of Tk positions) sees t + Tk - T + 1 keys (causal, no padding).
    const pairs = B * NH * (T * (Tk - T) + (T * (T + 1)) / 2);
    // forward: q.k and p.v; dq: q.k, dO.v, dS.k; dk/dv: q.k, dO.v, p.dO, dS.q (2 flop per multiply-add).
    const perPair = d.entry === 'attention_forward' ? 4 : d.entry === 'attention_backward_dq' ? 6 : 8;
    return perPair * HD * pairs;
  }
  return undefined;
}

function shapeOf(d: Dispatch): string {
  const w = words(d);
  if (isMatmul(d)) {
    const [M, N, K, batch, , , , , accumulate] = w;
    const c = d.constants ?? {};
    const layout = `${c.TRANS_A ? 'A^T' : 'A'}*${c.TRANS_B ? 'B^T' : 'B'}${accumulate ? ' +=' : ''}`;
    return `${batch > 1 ? `${batch}x` : ''}${M}x${N}x${K} ${layout}`;
  }
  return d.bindings[0] ? `(${d.bindings[0].shape.join(',')})` : '';
}

/** Groups a step's dispatches by kernel, parameters and tensor roles, in first-seen order. */
export function groupDispatches(dispatches: readonly Dispatch[]): KernelGroup[] {
  const groups = new Map<string, KernelGroup>();
  for (const d of dispatches) {
    const bound = d.bindings.filter((t): t is Tensor => t !== null);
    const roles = bound.map((t) => tensorRole(t.label));
    const name = `${kernelName(d)}(${roles.join(', ')})`;
    const key = `${name}|${d.params?.key() ?? ''}|${JSON.stringify(d.constants ?? {})}|${bound.map((t) => t.shape.join('x')).join(',')}`;
    const g = groups.get(key);
    if (g) g.count++;
    else {
      const bytes = bound.reduce((s, t) => s + t.byteLength, 0);
      groups.set(key, { name, shape: shapeOf(d), dispatch: d, count: 1, flop: flopOf(d), bytes });
    }
  }
  return [...groups.values()];
}

export interface KernelTime {
  group: KernelGroup;
  ms: number;
  samples: number;
  method: TimingMethod;
  gflops?: number;
  gbps?: number;
}

/** Times one group's dispatch alone (median of `reps`). */
export async function timeGroup(ctx: Recorder['ctx'], g: KernelGroup, reps: number): Promise<KernelTime> {
  const { samples, method } = await dispatchSamples(ctx, g.dispatch, reps);
  const ms = median(samples);
  const s = ms / 1000;
  return {
    group: g,
    ms,
    samples: samples.length,
    method,
    gflops: g.flop !== undefined && s > 0 ? g.flop / s / 1e9 : undefined,
    gbps: g.flop === undefined && s > 0 ? g.bytes / s / 1e9 : undefined,
  };
}
