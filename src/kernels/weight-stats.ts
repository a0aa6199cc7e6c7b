// Typed wrappers of shaders/weight-stats.wgsl: a weight's update statistics against its starting copy (||dW||_F^2,
// ||W_0||_F^2, sigma_1^2 by power iteration, the top right singular vector) and the rank-1 update W_0 + u v^T.
// Same names and argument order as src/reference/weight-stats.ts. Not the bookkeeping over a whole model
// (src/rl/observation/weight-tracker.ts).

import raw from '../../shaders/weight-stats.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import { matrixDims, type WeightStatsOptions } from '../reference/weight-stats';

export {
  RANK1_ITERATIONS,
  WEIGHT_STATS,
  matrixDims,
  rank1Share,
  relativeUpdate,
  type WeightStatsOptions,
} from '../reference/weight-stats';

const APPLY_WG = 256;

const PARAMS = uniforms('Params', { rows: 'u32', cols: 'u32', slot: 'u32', iterations: 'u32' });
export const WEIGHT_STATS_SHADER = declareShader('weight-stats.wgsl', raw, { uniforms: [PARAMS] });

function checkArgs(what: string, w: Tensor, w0: Tensor, u: Tensor, v: Tensor): { R: number; C: number } {
  const { R, C } = matrixDims(w, what);
  for (const [t, name] of [
    [w, 'w'],
    [w0, 'w0'],
    [u, 'u'],
    [v, 'v'],
  ] as const) {
    if (t.dtype !== 'f32') throw new Error(`${what}: ${name} must be f32, got ${t.describe()}`);
  }
  if (w0.size !== w.size) throw new Error(`${what}: w0 ${w0.describe()} must have the size of w ${w.describe()}`);
  if (u.size !== R) throw new Error(`${what}: u ${u.describe()} must have one element per row of w (${R})`);
  if (v.size !== C) throw new Error(`${what}: v ${v.describe()} must have one element per column of w (${C})`);
  return { R, C };
}

/**
 * Statistics of dW = w - w0 (R, C) or (C), one workgroup:
 *   out[3 slot] = ||dW||_F^2, out[3 slot + 1] = ||w0||_F^2, out[3 slot + 2] = sigma_1^2,
 * with v (C) the unit top right singular vector after `iterations` power steps and u (R) = dW v.
 * @param out (matrices * 3) the measurement's stats buffer; only the slot's three words are written.
 */
export function weightUpdateStats(
  rec: Recorder,
  out: Tensor,
  u: Tensor,
  v: Tensor,
  w: Tensor,
  w0: Tensor,
  opts: WeightStatsOptions,
): void {
  const what = 'weightUpdateStats';
  const { R, C } = checkArgs(what, w, w0, u, v);
  const { slot, iterations } = opts;
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error(`${what}: iterations must be a whole number >= 1, got ${iterations}`);
  if (!Number.isInteger(slot) || slot < 0 || 3 * slot + 3 > out.size)
    throw new Error(`${what}: slot ${slot} is outside ${out.describe()}`);
  rec.dispatch({
    family: rec.ctx.family('weight-stats', WEIGHT_STATS_SHADER.source),
    entry: 'weight_update_stats',
    params: PARAMS.pack({ rows: R, cols: C, slot, iterations }),
    bindings: [out, u, v, w, w0],
    workgroups: [1],
  });
}

/** w[r, c] = w0[r, c] + u[r] v[c]: the starting weights plus the rank-1 update (u, v from weightUpdateStats). */
export function rank1Apply(rec: Recorder, w: Tensor, w0: Tensor, u: Tensor, v: Tensor): void {
  const { R, C } = checkArgs('rank1Apply', w, w0, u, v);
  rec.dispatch({
    family: rec.ctx.family('weight-stats', WEIGHT_STATS_SHADER.source),
    entry: 'rank1_apply',
    constants: { APPLY_WG },
    params: PARAMS.pack({ rows: R, cols: C, slot: 0, iterations: 0 }),
    bindings: [w, w0, u, v],
    workgroups: grid(Math.ceil((R * C) / APPLY_WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}
