// The kernel-variant section of the benchmark: every matmul autotune candidate at the model's characteristic
// shapes (a forward projection, a backward data product, a weight gradient, the LM head), timed round-robin, with
// the variant the device's autotune chose marked; and attention's two kernel paths at the training shape. The
// autotune itself is src/kernels/matmul-tune.ts.

import type { GpuContext, Tensor } from '../gpu';
import {
  attentionBackward,
  attentionForward,
  defaultAttentionPath,
  rowsPathSupports,
  type AttentionPath,
} from '../kernels/attention';
import { defaultVariantFor, layoutOf, matmulTuning, matmulVariantSupports } from '../kernels/matmul';
import { TUNE_CANDIDATES, measureLayout, type MatmulShape } from '../kernels/matmul-tune';
import type { ModelConfig } from '../schema/model-config';
import { Rng, randomArray } from '../core/random';
import { hasTimestamps, median } from './measure';
import type { BenchRow, BenchShape } from '../schema/bench-report';

/** The four matmul shapes that dominate a training step of `config` at N = B*T rows. */
export function modelMatmulShapes(config: ModelConfig, N: number): (MatmulShape & { role: string })[] {
  const C = config.dModel;
  const F = config.dFF;
  return [
    { role: 'gate/up forward x W^T', M: N, N: F, K: C, transB: true },
    { role: 'down backward dY W', M: N, N: F, K: C },
    { role: 'gate/up weight grad dY^T X', M: F, N: C, K: N, transA: true },
    { role: 'LM head forward', M: N, N: config.vocabSize, K: C, transB: true },
  ];
}

/** Rows: every candidate at each of the model's matmul shapes; 'chosen' marks the device's tuned variant. */
export async function benchMatmulVariants(
  ctx: GpuContext,
  config: ModelConfig,
  shape: BenchShape,
  reps: number,
): Promise<Omit<BenchRow, 'preset'>[]> {
  const rows: Omit<BenchRow, 'preset'>[] = [];
  const tuned = matmulTuning(ctx.device);
  for (const s of modelMatmulShapes(config, shape.B * shape.T)) {
    const layout = layoutOf(s);
    const flop = 2 * s.M * s.N * s.K;
    const label = `${s.M}x${s.N}x${s.K} ${s.transA ? 'A^T' : 'A'}*${s.transB ? 'B^T' : 'B'}`;
    const variants = TUNE_CANDIDATES.filter((v) => matmulVariantSupports(v, s));
    const chosen = defaultVariantFor(tuned[layout] ?? 'blocked', s);
    for (const m of await measureLayout(ctx, layout, [s], variants, reps)) {
      rows.push({
        section: 'autotune',
        name: `${m.variant}: ${s.role}`,
        shape: label,
        ms: m.ms,
        samples: reps,
        method: ctx.device.features.has('timestamp-query') ? 'timestamp' : 'wall',
        gflops: flop / (m.ms / 1000) / 1e9,
        note: [m.variant === chosen ? 'chosen' : '', m.rejected ?? ''].filter(Boolean).join('; '),
      });
    }
  }
  return rows;
}

/**
 * Rows: attention forward and backward at the training shape (B, T) of `config` on each kernel path that takes
 * its head dim, timed round-robin; 'chosen' marks the path the model takes (per kernel: the forward's, and the
 * backward's key-row kernel, the heavier one). GFLOP/s counts the useful work of
 * causal attention, P = B*NH*T(T+1)/2 query-key pairs: 4*P*HD forward, 10*P*HD backward (flash attention's
 * convention; the kernels recompute scores, so they execute more).
 */
export async function benchAttentionPaths(
  ctx: GpuContext,
  config: ModelConfig,
  shape: BenchShape,
  reps: number,
): Promise<Omit<BenchRow, 'preset'>[]> {
  const { B, T } = shape;
  const NH = config.nHeads;
  const NKV = config.nKvHeads;
  const HD = config.dModel / NH;
  const rng = new Rng(11);
  const owned: Tensor[] = [];
  const t = (s: number[], random = true) => {
    const x = random
      ? ctx.fromArray(
          randomArray(
            rng,
            s.reduce((a, b) => a * b),
          ),
          s,
          { label: 'bench.att' },
        )
      : ctx.tensor(s, { label: 'bench.att' });
    owned.push(x);
    return x;
  };
  try {
    const q = t([B, T, NH, HD]);
    const k = t([B, T, NKV, HD]);
    const v = t([B, T, NKV, HD]);
    const dOut = t([B, T, NH, HD]);
    const out = t([B, T, NH, HD], false);
    const lse = t([B, NH, T], false);
    const dq = t([B, T, NH, HD], false);
    const dk = t([B, T, NKV, HD], false);
    const dv = t([B, T, NKV, HD], false);
    const paths: AttentionPath[] = rowsPathSupports(HD) ? ['lanes', 'rows'] : ['lanes'];
    const chosen: Record<string, AttentionPath> = {
      forward: defaultAttentionPath(ctx, HD, B * NH * T, T),
      backward: defaultAttentionPath(ctx, HD, B * NKV * T, T * (NH / NKV)),
    };
    const profile = hasTimestamps(ctx);
    const samples = new Map<string, number[]>();
    const add = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
    for (let r = 0; r <= reps; r++) {
      for (const path of paths) {
        const rec = ctx.recorder('bench.attention', { profile });
        const t0 = performance.now();
        attentionForward(rec, out, lse, q, k, v, { path });
        attentionBackward(rec, dq, dk, dv, dOut, q, k, v, out, lse, { path });
        rec.submit();
        await ctx.flush();
        const wall = performance.now() - t0;
        if (r === 0) continue; // warm-up: compiles the pipelines
        if (profile) {
          const ms = (await rec.timings()).map((x) => x.ms);
          add(`${path}:forward`, ms[0]);
          add(
            `${path}:backward`,
            ms.slice(1).reduce((a, b) => a + b, 0),
          );
        } else {
          add(`${path}:forward+backward`, wall);
        }
      }
    }
    const pairs = (B * NH * T * (T + 1)) / 2;
    const flop: Record<string, number> = {
      forward: 4 * pairs * HD,
      backward: 10 * pairs * HD,
      'forward+backward': 14 * pairs * HD,
    };
    return [...samples.entries()].map(([key, xs]) => {
      const [path, part] = key.split(':');
      const ms = median(xs);
      return {
        section: 'autotune' as const,
        name: `attention ${path}: ${part}`,
        shape: `(${B},${T},${NH},${HD}) NKV=${NKV}`,
        ms,
        samples: xs.length,
        method: profile ? ('timestamp' as const) : ('wall' as const),
        gflops: flop[part] / (ms / 1000) / 1e9,
        note: path === (chosen[part] ?? chosen.forward) ? 'chosen' : '',
      };
    });
  } finally {
    for (const x of owned) x.destroy();
  }
}
