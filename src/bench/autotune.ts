// The matmul section of the benchmark: every autotune candidate at the model's characteristic shapes (a forward
// projection, a backward data product, a weight gradient, the LM head), timed round-robin, with the variant the
// device's autotune chose marked. The autotune itself is src/kernels/matmul-tune.ts.

import type { GpuContext } from '../gpu';
import { layoutOf, matmulTuning, matmulVariantSupports } from '../kernels/matmul';
import { TUNE_CANDIDATES, measureLayout, type MatmulShape } from '../kernels/matmul-tune';
import type { ModelConfig } from '../model/config';
import type { BenchRow, BenchShape } from './report';

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
export async function benchMatmulVariants(ctx: GpuContext, config: ModelConfig, shape: BenchShape, reps: number): Promise<Omit<BenchRow, 'preset'>[]> {
  const rows: Omit<BenchRow, 'preset'>[] = [];
  const tuned = matmulTuning(ctx.device);
  for (const s of modelMatmulShapes(config, shape.B * shape.T)) {
    const layout = layoutOf(s);
    const flop = 2 * s.M * s.N * s.K;
    const label = `${s.M}x${s.N}x${s.K} ${s.transA ? 'A^T' : 'A'}*${s.transB ? 'B^T' : 'B'}`;
    const variants = TUNE_CANDIDATES.filter((v) => matmulVariantSupports(v, s));
    const chosen = tuned[layout] && matmulVariantSupports(tuned[layout], s) ? tuned[layout] : 'blocked';
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
