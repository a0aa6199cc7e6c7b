// Launch helper for row kernels (reductions, softmax): one workgroup per row of the last dimension.

import { Params, grid, type Recorder, type Tensor } from '../gpu';

export const ROW_WG = 64;

/** rows x cols of a tensor whose last dimension is the row. */
export function rowsCols(t: Tensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1] ?? 1;
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** Records a row kernel over `shapeOf`'s rows with bindings in the twin's order. */
export function rowDispatch(rec: Recorder, familyName: string, source: string, entry: string, shapeOf: Tensor, bindings: Tensor[]): void {
  const { rows, cols } = rowsCols(shapeOf);
  rec.dispatch({
    family: rec.ctx.family(familyName, source),
    entry,
    constants: { WG: ROW_WG },
    params: new Params().u32(rows).u32(cols),
    bindings,
    workgroups: grid(rows, rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}
