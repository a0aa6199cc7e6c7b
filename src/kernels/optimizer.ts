// Typed wrappers of shaders/optimizer.wgsl: global gradient norm, clip factor, clipping and AdamW, with every
// step-dependent scalar except lr and t (norm, clip factor) kept in GPU tensors, so a whole optimizer step is
// one command buffer and nothing is read back. Twins: src/reference/grad-norm.ts, adamw.ts, optimizer.ts
// (same names and argument order; where a twin takes a number the GPU wrapper takes a 1-element tensor).

import raw from '../../shaders/optimizer.wgsl?raw';
import {
  declareShader,
  grid,
  uniforms,
  type Params,
  type GpuContext,
  type Recorder,
  type Tensor,
  type TensorArena,
  tensorArena,
  arenaSize,
} from '../gpu';
import type { AdamwOptions } from '../reference/adamw';

/**
 * Threads per workgroup of the reductions: 64, not 256, because each tree level is a workgroup barrier and a CPU
 * adapter runs a barrier by switching between all the workgroup's invocations (measured on SwiftShader at the
 * small preset: the norm's partial sums took 1.09 s of a 9.1 s step with 256 threads, 0.12 s with 64).
 */
const WG = 64;
/**
 * Elements a thread of the norm's partial sums reads (ELEMS / 4 quads): at 32 (2,048-element chunks) the workgroups'
 * reduction trees, not the reads, were most of the time on SwiftShader (16M elements: 312 ms; 43 ms at 512 as vec4).
 */
const ELEMS = 512;
/** Threads per workgroup of the packed AdamW, a vec4 each (SwiftShader, 16M elements: 265 ms at 64, 138 at 256). */
const ADAM_WG = 256;
/** Elements per partial sum of squares in gradNorm. */
export const GRAD_NORM_CHUNK = WG * ELEMS;

const NORM_PARAMS = uniforms('NormParams', {
  n: 'u32', // partial: elements of this tensor; finalize: number of partials
  offset: 'u32', // partial: first slot of this tensor's chunks in partials
  chunks: 'u32', // partial: chunks of this tensor
  maxNorm: 'f32', // clip_scale, clip
});
const ADAM_PARAMS = uniforms('AdamParams', {
  n: 'u32',
  lr: 'f32',
  beta1: 'f32',
  beta2: 'f32',
  oneMinusBeta1: 'f32', // 1 - beta1 and 1 - beta2 computed on the host in double precision
  oneMinusBeta2: 'f32',
  eps: 'f32',
  weightDecay: 'f32',
  bc1: 'f32', // 1 - beta1^t
  bc2: 'f32', // 1 - beta2^t
  gradScale: 'f32', // adamw_step only; adamw_step_scaled reads scale[0]
});
export const OPTIMIZER_SHADER = declareShader('optimizer.wgsl', raw, { uniforms: [NORM_PARAMS, ADAM_PARAMS] });

const partialsCache = new WeakMap<GpuContext, Map<number, Tensor>>();

/** The context's scratch buffer of `size` partial sums (kept for the device's lifetime, reused by every call). */
function partialsScratch(ctx: GpuContext, size: number): Tensor {
  let m = partialsCache.get(ctx);
  if (!m) partialsCache.set(ctx, (m = new Map()));
  let t = m.get(size);
  if (!t) m.set(size, (t = ctx.tensor([Math.max(1, size)], { label: `gradNorm partials (${size})` })));
  return t;
}

function family(rec: Recorder) {
  return rec.ctx.family('optimizer', OPTIMIZER_SHADER.source);
}

function maxDim(rec: Recorder): number {
  return rec.ctx.device.limits.maxComputeWorkgroupsPerDimension;
}

function scalarTensor(kernel: string, name: string, t: Tensor): void {
  if (t.size !== 1 || t.dtype !== 'f32')
    throw new Error(`${kernel}: ${name} must be a 1-element f32 tensor, got ${t.describe()}`);
}

/** Number of partial sums gradNorm needs for these tensors (size of `opts.partials`). */
export function gradNormPartials(grads: readonly Tensor[]): number {
  return grads.reduce((s, g) => s + Math.ceil(g.size / GRAD_NORM_CHUNK), 0);
}

export interface GradNormOptions {
  /** Scratch tensor of gradNormPartials(grads) elements (default: one kept by the context). */
  partials?: Tensor;
}

/**
 * out[0] = sqrt(sum over every tensor and element of g^2). One partial-sum dispatch per tensor (chunks of
 * GRAD_NORM_CHUNK elements into a small buffer), then one workgroup sums the partials in a fixed order.
 * @param out   (1) overwritten with the norm; stays on the GPU (feed it to gradClipScale / gradClip).
 * @param grads the gradient tensors, any shapes (f32).
 */
export function gradNorm(rec: Recorder, out: Tensor, grads: readonly Tensor[], opts: GradNormOptions = {}): void {
  const kernel = 'gradNorm';
  scalarTensor(kernel, 'out', out);
  const total = gradNormPartials(grads);
  const partials = opts.partials ?? partialsScratch(rec.ctx, total);
  if (partials.size < total)
    throw new Error(`${kernel}: partials ${partials.describe()} needs at least ${total} elements`);
  let offset = 0;
  for (const g of grads) {
    if (g.dtype !== 'f32') throw new Error(`${kernel}: gradients must be f32, got ${g.describe()}`);
    const chunks = Math.ceil(g.size / GRAD_NORM_CHUNK);
    if (chunks === 0) continue;
    rec.dispatch({
      family: family(rec),
      entry: 'grad_norm_partial',
      constants: { WG, ELEMS },
      params: NORM_PARAMS.pack({ n: g.size, offset, chunks, maxNorm: 0 }),
      bindings: [partials, g],
      workgroups: grid(chunks, maxDim(rec)),
    });
    offset += chunks;
  }
  finalizeNorm(rec, out, partials, total);
}

/** norm[0] = sqrt(sum of the first n partial sums), one workgroup in a fixed order (gradNorm's last dispatch). */
function finalizeNorm(rec: Recorder, out: Tensor, partials: Tensor, n: number): void {
  rec.dispatch({
    family: family(rec),
    entry: 'grad_norm_finalize',
    constants: { WG, ELEMS },
    params: NORM_PARAMS.pack({ n, offset: 0, chunks: 0, maxNorm: 0 }),
    bindings: [out, partials],
    workgroups: [1],
  });
}

export interface ClipOptions {
  /** Clip threshold on the global norm (TRL `max_grad_norm`, e.g. 1.0). */
  maxNorm: number;
}

function checkMaxNorm(kernel: string, opts: ClipOptions): void {
  if (!(opts.maxNorm > 0) || !Number.isFinite(opts.maxNorm))
    throw new Error(`${kernel}: maxNorm must be positive, got ${opts.maxNorm}`);
}

/**
 * scale[0] = maxNorm / (norm[0] + 1e-6) when norm[0] > maxNorm, else 1 (computed on the GPU).
 * @param scale (1) overwritten; pass it to adamwStepScaled.
 * @param norm  (1) from gradNorm.
 */
export function gradClipScale(rec: Recorder, scale: Tensor, norm: Tensor, opts: ClipOptions): void {
  const kernel = 'gradClipScale';
  scalarTensor(kernel, 'scale', scale);
  scalarTensor(kernel, 'norm', norm);
  checkMaxNorm(kernel, opts);
  rec.dispatch({
    family: family(rec),
    entry: 'grad_clip_scale',
    constants: { WG, ELEMS },
    params: NORM_PARAMS.pack({ n: 0, offset: 0, chunks: 0, maxNorm: opts.maxNorm }),
    bindings: [scale, norm],
    workgroups: [1],
  });
}

/**
 * Scales every gradient in place by the clip factor of norm[0] (the twin takes the norm as a number).
 * Prefer gradClipScale + adamwStepScaled, which saves a pass over the gradients.
 * @param grads the gradient tensors, scaled in place.
 * @param norm  (1) their global norm, from gradNorm.
 */
export function gradClip(rec: Recorder, grads: readonly Tensor[], norm: Tensor, opts: ClipOptions): void {
  const kernel = 'gradClip';
  scalarTensor(kernel, 'norm', norm);
  checkMaxNorm(kernel, opts);
  for (const g of grads) {
    if (g.size === 0) continue;
    rec.dispatch({
      family: family(rec),
      entry: 'grad_clip',
      constants: { WG, ELEMS },
      params: NORM_PARAMS.pack({ n: g.size, offset: 0, chunks: 0, maxNorm: opts.maxNorm }),
      bindings: [g, norm],
      workgroups: grid(Math.ceil(g.size / WG), maxDim(rec)),
    });
  }
}

function adamParams(kernel: string, n: number, opts: AdamwOptions): Params {
  if (!(opts.t >= 1) || !Number.isInteger(opts.t))
    throw new Error(`${kernel}: step count t must be an integer >= 1, got ${opts.t}`);
  const b1 = opts.beta1 ?? 0.9;
  const b2 = opts.beta2 ?? 0.999;
  // Bias corrections and 1 - beta in double precision on the host (1 - f32(0.999) would be off by 6e-5).
  return ADAM_PARAMS.pack({
    n,
    lr: opts.lr,
    beta1: b1,
    beta2: b2,
    oneMinusBeta1: 1 - b1,
    oneMinusBeta2: 1 - b2,
    eps: opts.eps ?? 1e-8,
    weightDecay: opts.weightDecay ?? 0.01,
    bc1: 1 - Math.pow(b1, opts.t),
    bc2: 1 - Math.pow(b2, opts.t),
    gradScale: opts.gradScale ?? 1,
  });
}

function checkSame(kernel: string, params: Tensor, others: [Tensor, string][]): void {
  for (const [t, name] of others) {
    if (t.size !== params.size)
      throw new Error(`${kernel}: ${name} ${t.describe()} must match params ${params.describe()}`);
  }
}

/**
 * One AdamW update in place (PyTorch semantics; see src/reference/adamw.ts), gradients times opts.gradScale.
 * @param params (any shape) updated in place.
 * @param m      (same) first moment, updated in place.
 * @param v      (same) second moment, updated in place.
 * @param grads  (same) gradient.
 */
export function adamwStep(
  rec: Recorder,
  params: Tensor,
  m: Tensor,
  v: Tensor,
  grads: Tensor,
  opts: AdamwOptions,
): void {
  const kernel = 'adamwStep';
  checkSame(kernel, params, [
    [m, 'm'],
    [v, 'v'],
    [grads, 'grads'],
  ]);
  const p = adamParams(kernel, params.size, opts);
  if (params.size === 0) return;
  rec.dispatch({
    family: family(rec),
    entry: 'adamw_step',
    constants: { WG, ELEMS },
    params: p,
    bindings: [params, m, v, grads],
    workgroups: grid(Math.ceil(params.size / WG), maxDim(rec)),
  });
}

/**
 * adamwStep with the gradient scale read on the GPU from gradScale[0] (e.g. gradClipScale's output).
 * @param gradScale (1) multiplies every gradient.
 */
export function adamwStepScaled(
  rec: Recorder,
  params: Tensor,
  m: Tensor,
  v: Tensor,
  grads: Tensor,
  gradScale: Tensor,
  opts: Omit<AdamwOptions, 'gradScale'>,
): void {
  const kernel = 'adamwStepScaled';
  checkSame(kernel, params, [
    [m, 'm'],
    [v, 'v'],
    [grads, 'grads'],
  ]);
  scalarTensor(kernel, 'gradScale', gradScale);
  const p = adamParams(kernel, params.size, opts);
  if (params.size === 0) return;
  rec.dispatch({
    family: family(rec),
    entry: 'adamw_step_scaled',
    constants: { WG, ELEMS },
    params: p,
    bindings: [params, m, v, grads, gradScale],
    workgroups: grid(Math.ceil(params.size / WG), maxDim(rec)),
  });
}

/** The tensors of one clipped AdamW step: parallel lists, one entry per parameter tensor. */
export interface OptimizerState {
  params: readonly Tensor[];
  m: readonly Tensor[];
  v: readonly Tensor[];
  grads: readonly Tensor[];
  /**
   * The same tensors packed in groups of four arenas of one layout (packedOptimizerOf), the lists above being their
   * views, group after group in list order: the step is then two dispatches a group plus two whatever the number of
   * tensors, with the same results bit for bit.
   */
  packed?: readonly PackedOptimizer[];
}

/**
 * A run of tensors packed as params and gradients in two arenas of one layout, and the gradient norm's chunk bounds
 * over them; AdamW's moments join at the first step (momentsOf), so a model that never steps does not hold them.
 */
export interface PackedTensors {
  params: TensorArena;
  grads: TensorArena;
  /** (2 per chunk) u32: each GRAD_NORM_CHUNK chunk's first element in the arena and its tensor's end. */
  chunkBounds: Tensor<'u32'>;
  chunks: number;
  /** The tensors' names (the params views' labels; `grad:`, `adam_m:` and `adam_v:` before them for the others). */
  names: readonly string[];
}

/** AdamW's first and second moments of packed tensors: two more arenas of their layout. */
export interface PackedMoments {
  m: TensorArena;
  v: TensorArena;
}

/** Packed tensors with their moments: one group clippedAdamwStep steps. */
export type PackedOptimizer = PackedTensors & PackedMoments;

/**
 * The chunk bounds of gradients packed in an arena (one per GRAD_NORM_CHUNK elements of each tensor, in order), as
 * gradNorm would cut each tensor alone. Upload them once: the layout does not change.
 */
function packedChunkBounds(grads: TensorArena): Uint32Array {
  const out: number[] = [];
  grads.views.forEach((g, i) => {
    const start = grads.starts[i];
    for (let c = 0; c < Math.ceil(g.size / GRAD_NORM_CHUNK); c++) out.push(start + c * GRAD_NORM_CHUNK, start + g.size);
  });
  return Uint32Array.from(out);
}

function packedArena(
  ctx: GpuContext,
  shapes: readonly (readonly number[])[],
  names: readonly string[],
  prefix: string,
) {
  return tensorArena(
    ctx,
    shapes,
    names.map((n) => `${prefix}${n}`),
    `${prefix || 'params:'}packed ${names[0]}${names.length > 1 ? ` .. ${names[names.length - 1]}` : ''}`,
  );
}

/** Zeroed params and gradient arenas of `shapes` (labelled `names[i]` and `grad:...`) and their chunk bounds. */
export function packedTensorsOf(
  ctx: GpuContext,
  shapes: readonly (readonly number[])[],
  names: readonly string[] = shapes.map((_, i) => `packed.${i}`),
): PackedTensors {
  const grads = packedArena(ctx, shapes, names, 'grad:');
  const bounds = packedChunkBounds(grads);
  return {
    params: packedArena(ctx, shapes, names, ''),
    grads,
    chunkBounds: ctx.fromArray<'u32'>(bounds.length ? bounds : new Uint32Array(2), [Math.max(2, bounds.length)], {
      dtype: 'u32',
      label: 'grad_norm.chunk_bounds',
    }),
    chunks: bounds.length / 2,
    names,
  };
}

/** Zeroed moment arenas of the packed tensors' layout (labelled `adam_m:...` and `adam_v:...`). */
export function momentsOf(ctx: GpuContext, p: PackedTensors): PackedMoments {
  const shapes = p.params.views.map((t) => t.shape);
  return { m: packedArena(ctx, shapes, p.names, 'adam_m:'), v: packedArena(ctx, shapes, p.names, 'adam_v:') };
}

/** All four arenas of `shapes` at once (packedTensorsOf and momentsOf). */
export function packedOptimizerOf(
  ctx: GpuContext,
  shapes: readonly (readonly number[])[],
  names?: readonly string[],
): PackedOptimizer {
  const p = packedTensorsOf(ctx, shapes, names);
  return { ...p, ...momentsOf(ctx, p) };
}

/**
 * How to cut tensors into packed groups: consecutive runs [start, end) whose arenas each hold at most `maxElements`
 * (default: one storage binding of this device), filled greedily in order, never splitting a unit (consecutive
 * tensors of one `units` key, e.g. one layer's, which a kernel binds as one span). Null where one unit alone does not
 * fit (then pack nothing).
 */
export function packedRuns(
  ctx: GpuContext,
  shapes: readonly (readonly number[])[],
  units: readonly string[],
  maxElements = Math.floor(
    Math.min(ctx.device.limits.maxStorageBufferBindingSize, ctx.device.limits.maxBufferSize) / 4,
  ),
): [number, number][] | null {
  const fits = (start: number, end: number) => arenaSize(ctx, shapes.slice(start, end)) <= maxElements;
  const runs: [number, number][] = [];
  let start = 0;
  for (let i = 0; i < shapes.length; ) {
    let end = i + 1;
    while (end < shapes.length && units[end] === units[i]) end++;
    if (!fits(i, end)) return null;
    if (!fits(start, end)) {
      runs.push([start, i]);
      start = i;
    }
    i = end;
  }
  if (shapes.length > start) runs.push([start, shapes.length]);
  return runs;
}

/** Destroys packed buffers (the views go with them). */
export function destroyPacked(p: PackedTensors & Partial<PackedMoments>): void {
  for (const a of [p.params, p.grads, p.m, p.v]) a?.all.destroy();
  p.chunkBounds.destroy();
}

/**
 * Checks that each group's four arenas share one layout, that its chunk bounds cover its gradients, and that the
 * groups' views are the state's lists in order.
 */
function checkPacked(groups: readonly PackedOptimizer[], state: OptimizerState): void {
  let at = 0;
  for (const p of groups) {
    const { params, m, v, grads } = p;
    for (const [name, a] of [
      ['m', m],
      ['v', v],
      ['grads', grads],
    ] as const)
      if (a.all.size !== params.all.size || a.starts.some((s, i) => s !== params.starts[i]))
        throw new Error(`clippedAdamwStep: the packed ${name} arena is laid out unlike the params arena`);
    if (p.chunks !== gradNormPartials(grads.views) || p.chunkBounds.size < 2 * p.chunks)
      throw new Error(`clippedAdamwStep: ${p.chunkBounds.describe()} does not bound the ${p.chunks} gradient chunks`);
    const isView = (t: Tensor | undefined, arena: TensorArena, i: number) =>
      t?.buffer === arena.all.buffer && t.byteOffset === arena.views[i].byteOffset;
    params.views.forEach((_, i) => {
      if (!isView(state.params[at + i], params, i) || !isView(state.grads[at + i], grads, i))
        throw new Error(`clippedAdamwStep: tensor ${at + i} of the state is not a view of the packed arenas`);
    });
    at += params.views.length;
  }
  if (at !== state.params.length)
    throw new Error(`clippedAdamwStep: the packed groups hold ${at} tensors, the state ${state.params.length}`);
}

/**
 * A whole optimizer step recorded into `rec` with no readback: norm = gradNorm(grads); scale = clip factor
 * (1 when maxNorm is undefined); AdamW on every tensor with gradients times scale[0]. norm keeps the
 * pre-clip global norm for the `grad_norm` metric, read back whenever the caller likes.
 * @param norm  (1) overwritten with the global gradient norm.
 * @param scale (1) overwritten with the clip factor.
 */
export function clippedAdamwStep(
  rec: Recorder,
  norm: Tensor,
  scale: Tensor,
  state: OptimizerState,
  opts: Omit<AdamwOptions, 'gradScale'> & { maxNorm?: number },
): void {
  const n = state.params.length;
  if (state.m.length !== n || state.v.length !== n || state.grads.length !== n) {
    throw new Error(
      `clippedAdamwStep: params, m, v and grads must be parallel lists (${n}, ${state.m.length}, ${state.v.length}, ${state.grads.length})`,
    );
  }
  const packed = state.packed;
  if (packed) {
    checkPacked(packed, state);
    gradNormPacked(rec, norm, packed);
  } else gradNorm(rec, norm, state.grads);
  // maxNorm undefined means no clipping: an infinite threshold gives the factor 1 on the GPU.
  gradClipScale(rec, scale, norm, { maxNorm: opts.maxNorm ?? 3.4e38 });
  if (packed) {
    // One AdamW over each group's arenas: elementwise, so each tensor's values are the per-tensor step's; the zero
    // padding (zero gradient, moments and parameter) stays zero.
    for (const p of packed) adamwStepPacked(rec, p, scale, opts);
    return;
  }
  for (let i = 0; i < n; i++)
    adamwStepScaled(rec, state.params[i], state.m[i], state.v[i], state.grads[i], scale, opts);
}

/** adamwStepScaled over one group's arenas, a vec4 a thread (their length divides by 4: src/gpu/arena.ts). */
function adamwStepPacked(
  rec: Recorder,
  p: PackedOptimizer,
  gradScale: Tensor,
  opts: Omit<AdamwOptions, 'gradScale'>,
): void {
  const n = p.params.all.size;
  rec.dispatch({
    family: family(rec),
    entry: 'adamw_step_packed',
    constants: { WG: ADAM_WG, ELEMS },
    params: adamParams('adamwStepScaled', n, opts),
    bindings: [p.params.all, p.m.all, p.v.all, p.grads.all, gradScale],
    workgroups: grid(Math.ceil(n / 4 / ADAM_WG), maxDim(rec)),
  });
}

/**
 * gradNorm over gradients packed in groups of arenas: one partial-sum dispatch over every chunk of a group, writing
 * after the groups before it (the per-tensor partials' order), then the finalize over all of them.
 */
function gradNormPacked(rec: Recorder, out: Tensor, groups: readonly PackedTensors[]): void {
  scalarTensor('gradNorm', 'out', out);
  const total = groups.reduce((s, p) => s + p.chunks, 0);
  const partials = partialsScratch(rec.ctx, total);
  let offset = 0;
  for (const p of groups) {
    if (p.chunks > 0)
      rec.dispatch({
        family: family(rec),
        entry: 'grad_norm_partial_packed',
        constants: { WG, ELEMS },
        params: NORM_PARAMS.pack({ n: 0, offset, chunks: p.chunks, maxNorm: 0 }),
        bindings: [partials, null, p.chunkBounds, p.grads.all],
        workgroups: grid(p.chunks, maxDim(rec)),
        cost: { bytes: 4 * p.grads.views.reduce((s, g) => s + g.size, 0) + 4 * p.chunks, flops: 0 },
      });
    offset += p.chunks;
  }
  finalizeNorm(rec, out, partials, total);
}
