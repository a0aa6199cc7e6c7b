// Layout and launch helpers for the row kernels (reductions, softmax, rmsnorm, cross-entropy, log-prob, sampler):
// each row of the last dimension is given LANES threads, and a workgroup takes ROWS rows (attention.ts's idea).

import { grid, uniforms, type KernelFamily, type Recorder, type Tensor } from '../gpu';

/** The uniforms of the row kernels launched by rowDispatch (softmax, reduce): their struct Params. */
export const ROW_PARAMS = uniforms('Params', { rows: 'u32', cols: 'u32' });

/** Threads per workgroup of the row kernels (ROWS * LANES, the shaders' WG). */
export const ROW_THREADS = 64;

/**
 * The fewest items a lane should loop over: a row gets 4x more lanes only while each lane keeps at least this
 * many. Merging the lanes costs a workgroup barrier per reduction, about 25 us per 64-thread workgroup on
 * SwiftShader (measured: a 1280 x 256 cross-entropy takes 3 ms with a thread per row, 8 ms with 4 lanes, 62 ms
 * with 64), which only rows of thousands of items amortize. From 16k items on, rows get all 64 lanes.
 */
export const ROW_MIN_ITEMS = 256;

export interface RowLayout {
  /** Threads per row: 1, 4, 16 or 64. 1 = a thread per row, no workgroup barriers at all. */
  LANES: number;
  /** Rows per workgroup: ROW_THREADS / LANES. */
  ROWS: number;
}

/**
 * How a row kernel spreads rows of `cols` items over threads: LANES threads per row (1, 4, 16 or 64, so that few
 * pipelines get compiled), ROWS = 64 / LANES rows per workgroup. Picked from the row length ONLY, never from the
 * row count: a row's result (the order of its sums) then does not depend on how many rows are in the batch, so
 * the sampler's log-probs at decode time equal logprobForward's over a whole rollout bit for bit, and rstd or a
 * row loss is the same whatever the batch. Rows shorter than 1024 (a 99-token vocabulary, C <= 512) get a thread
 * each: no barriers, which SwiftShader runs very slowly; longer rows get 4, 16, then (from 16384, e.g. a 50k
 * vocabulary) 64 lanes that split the row in strided order and merge in a fixed lane order (deterministic).
 * Lanes only ever split work that one thread could do: the edges trade barrier cost on SwiftShader against
 * parallelism for few long rows (a decode step) on a real GPU.
 */
export function rowLayout(cols: number): RowLayout {
  let lanes = 1;
  while (lanes < ROW_THREADS && cols >= 4 * lanes * ROW_MIN_ITEMS) lanes *= 4;
  return { LANES: lanes, ROWS: ROW_THREADS / lanes };
}

/** The row lengths at which rowLayout gives rows more lanes (1024, 4096, 16384): the edges cases test around. */
export function rowLaneEdges(): number[] {
  const edges: number[] = [];
  for (let lanes = 1; lanes < ROW_THREADS; lanes *= 4) edges.push(4 * lanes * ROW_MIN_ITEMS);
  return edges;
}

/**
 * (rows, cols) on both sides of each lane edge, each with one row more than a workgroup holds (so the last
 * workgroup is partial): [65, 1023], [17, 1024], [17, 4095], [5, 4096], [5, 16383], [2, 16384]. The row
 * kernels' cases run these shapes.
 */
export function rowEdgeShapes(): [number, number][] {
  return rowLaneEdges().flatMap((edge) =>
    [edge - 1, edge].map((cols): [number, number] => [rowLayout(cols).ROWS + 1, cols]),
  );
}

/**
 * Vocabulary sizes of real models the row kernels are tested at, with a few rows each (a decode step): SmolLM2's
 * 49,152 and Qwen2.5's 151,936. Both take rowLayout's 64 lanes, so a row is one workgroup looping over
 * 768 or 2,374 columns per lane.
 */
export const REAL_VOCABS = { smollm2: 49_152, qwen25: 151_936 } as const;

/** Workgroup counts for `rows` rows, ROWS per workgroup (x, y each within the device's per-dimension limit). */
export function rowWorkgroups(rec: Recorder, rows: number, layout: RowLayout): [number, number] {
  return grid(Math.ceil(rows / layout.ROWS), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension);
}

/** rows x cols of a tensor whose last dimension is the row. */
export function rowsCols(t: Tensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1] ?? 1;
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** Records a row kernel of `family` over `shapeOf`'s rows with bindings in the twin's order, laid out by rowLayout. */
export function rowDispatch(
  rec: Recorder,
  family: KernelFamily,
  entry: string,
  shapeOf: Tensor,
  bindings: Tensor[],
): void {
  const { rows, cols } = rowsCols(shapeOf);
  const layout = rowLayout(cols);
  rec.dispatch({
    family,
    entry,
    constants: { ...layout },
    params: ROW_PARAMS.pack({ rows, cols }),
    bindings,
    workgroups: rowWorkgroups(rec, rows, layout),
  });
}
