// Typed wrappers of shaders/projection.wgsl: the fused few-rows projections of a decode step, q/k/v in one dispatch
// (with Qwen2's biases in its epilogue) and gate/up with SwiGLU in one, each optionally with the preceding RMSNorm
// folded in and a LoRA epilogue (y += s xa B^T); the pair of products a LoRA layer's gate/up adapters take from one
// input (projectionPair); an adapted o or down product accumulating into the residual with its adapter's delta
// (projectionAddLora). Same names and argument order as the CPU twins src/reference/projection.ts (after the
// recorder).
// Bit for bit the kernels they replace (rmsnormForward, matmul A*B^T, biasAdd, swigluForward) run in sequence: the
// norm's rstd is summed in rmsnorm's order and the products along K in the order of the matmul variant they stand
// for (opts.order: 'k4' as vec4 and the register tiles sum, 'k1' as blocked, strided and tiled do; projectionSumOrder
// gives the order of the variant matmul() itself picks).
// The weights may be stored f32, bf16 or f16 (all of one dispatch alike), read through half-operand.ts.
// The norm's gain and the biases are bound as one storage buffer (the kernel binds 8 at most, WebGPU's default):
// either one tensor, or views of one arena (GpuModel keeps a Qwen2 layer's gain and q/k/v biases in one).

import raw from '../../shaders/projection.wgsl?raw';
import { declareShader, spanOf, uniforms, type GpuContext, type Recorder, type Tensor } from '../gpu';
import { operandCodec, withHalfVec4Operand, type HalfCodec } from './half-operand';
import { defaultMatmulVariant, matmulSumOrder, type MatmulSumOrder } from './matmul';
import { rowLayout } from './rows';
import { isLlvmpipe } from './matmul-tune';

/** Invocations per workgroup: 64, as WG_X column tiles x WG_Y row tiles of 4 x 4. */
const WG_INVOCATIONS = 64;

/**
 * The workgroup's shape for M rows: just enough row tiles for the rows (a power of 2, at most 8: 8 x 8 from 29 rows
 * up), the rest of its 64 invocations along the columns, so a decode step's few rows leave no invocation idle and
 * the rows' folded norm, summed once per workgroup, serves as many column tiles as there are.
 */
export function projectionWorkgroup(M: number): { WG_X: number; WG_Y: number } {
  let WG_Y = 1;
  while (WG_Y < 8 && 4 * WG_Y < M) WG_Y *= 2;
  return { WG_X: WG_INVOCATIONS / WG_Y, WG_Y };
}

const PARAMS = uniforms('Params', {
  M: 'u32',
  K: 'u32',
  N0: 'u32',
  N1: 'u32',
  N2: 'u32',
  gainAt: 'u32',
  biasAt0: 'u32',
  biasAt1: 'u32',
  biasAt2: 'u32',
  eps: 'f32',
  rank: 'u32',
  loraScale: 'f32',
  xaAt0: 'u32',
  xaAt1: 'u32',
  xaAt2: 'u32',
  bAt0: 'u32',
  bAt1: 'u32',
  bAt2: 'u32',
  outAt0: 'u32',
  outAt1: 'u32',
});

/** The parameters every entry point leaves at zero unless it uses them. */
const UNUSED = {
  N1: 0,
  N2: 0,
  gainAt: 0,
  biasAt0: 0,
  biasAt1: 0,
  biasAt2: 0,
  eps: 0,
  rank: 0,
  loraScale: 0,
  xaAt0: 0,
  xaAt1: 0,
  xaAt2: 0,
  bAt0: 0,
  bAt1: 0,
  bAt2: 0,
  outAt0: 0,
  outAt1: 0,
};
export const PROJECTION_SHADER = declareShader('projection.wgsl', raw, { uniforms: [PARAMS] });

/** The folded RMSNorm of the input rows: its gain (K) and epsilon. */
export interface GpuFoldedNorm {
  gain: Tensor;
  eps: number;
}

/**
 * A LoRA epilogue: y_s += scale * xa_s B_s^T on each product s, before its bias or SwiGLU, as the trainer's
 * matmul(y, xa, B, { transB, accumulate, alpha: scale }) adds it. xa_s (M, rank) and B_s (N_s, rank) are f32, the
 * xa_s views of one buffer and the B_s of one buffer (loraSpan); order: the order along the rank of the matmul
 * variant the trainer runs for xa B^T (projectionSumOrder(device, rank, widths)).
 */
export interface GpuLoraEpilogue {
  xa: readonly Tensor[];
  B: readonly Tensor[];
  scale: number;
  order: MatmulSumOrder;
}

/** Storage buffers projection_qkv_lora binds (q, k, v, x, three weights, the gain and biases, xa and B). */
export const QKV_LORA_STORAGE_BUFFERS = 10;

/** Whether the device binds projection_qkv_lora's storage buffers (WebGPU's default is 8; every other entry fits). */
export function projectionQkvLoraFits(device: GPUDevice): boolean {
  return device.limits.maxStorageBuffersPerShaderStage >= QKV_LORA_STORAGE_BUFFERS;
}

/**
 * Whether projection_qkv(_lora) runs its three weights in one K loop on this adapter (shaders/projection.wgsl
 * ONE_K_LOOP): on lavapipe, where the three loops of the LoRA entry compiled in 1.7-2.7 s cold (creation + first
 * dispatch; 1.1-1.4 s as one loop) and ran as fast as one (4 rows at SmolLM2-135M's q/k/v, bf16: 0.5-0.85 ms either
 * way); not on SwiftShader, where one loop ran 2.5x slower (5.0 ms against 2.0), nor on GPUs (not measured).
 */
export function qkvOneLoop(ctx: GpuContext): boolean {
  return isLlvmpipe(ctx);
}

const sources = new Map<string, string>();

function familyOf(rec: Recorder, codec: HalfCodec | null) {
  const name = `projection${codec ? `-${codec}` : ''}`;
  let text = sources.get(name);
  if (text === undefined) {
    text = PROJECTION_SHADER.source;
    if (codec) {
      for (const w of ['W0_4', 'W1_4', 'W2_4', 'Wg_4', 'Wu_4'])
        text = withHalfVec4Operand(text, w, codec).replaceAll('enable f16;\n', '');
      if (codec === 'f16-native') text = `enable f16;\n${text}`;
    }
    sources.set(name, text);
  }
  return rec.ctx.family(name, text);
}

/**
 * Whether the fused projections take rows of width K into outputs of widths `widths`: every contiguous dimension
 * divides by 4 (vec4 loads along K; each output's columns in whole tiles of 4).
 */
export function projectionFits(K: number, widths: readonly number[]): boolean {
  return K % 4 === 0 && widths.every((n) => n % 4 === 0 && n > 0);
}

/**
 * The order along K in which matmul() sums x W^T for rows x of width K and weights of `widths` rows when no variant
 * is named (the variant the trainer's forward runs: the device's tuned one, matmulSumOrder), or null where the fused
 * projections cannot equal those products: the widths do not fit (projectionFits), or the products' variants sum in
 * different orders. The rows M do not change the order: for A*B^T with K divisible by 4 matmul() steps a larger
 * register tile down to a smaller one (or to vec4) for few rows or columns, all 'k4' (projection.test.ts pins it for
 * every variant), so the order at a decode step's rows is the order at a training batch's.
 */
export function projectionSumOrder(device: GPUDevice, K: number, widths: readonly number[]): MatmulSumOrder | null {
  if (!projectionFits(K, widths)) return null;
  const orders = new Set(widths.map((N) => matmulSumOrder(defaultMatmulVariant(device, { M: 1, N, K, transB: true }))));
  return orders.size === 1 ? [...orders][0] : null;
}

/** The one f32 buffer the gain and biases are bound as, and each one's first element in it. */
function vectorsOf(kernel: string, fallback: Tensor, parts: (Tensor | null)[]): { bound: Tensor; at: number[] } {
  for (const t of parts) if (t && t.dtype !== 'f32') throw new Error(`${kernel}: ${t.describe()} must be f32`);
  if (parts.every((t) => t === null)) return { bound: fallback, at: parts.map(() => 0) };
  const span = spanOf(parts);
  if (!span) throw new Error(`${kernel}: the norm's gain and the biases must be views of one buffer (an arena)`);
  return span;
}

/** The epilogue's bindings and parameters, checked against the outputs' rows M and widths N. */
function loraOf(kernel: string, lora: GpuLoraEpilogue, M: number, N: readonly number[]) {
  if (lora.xa.length !== N.length || lora.B.length !== N.length)
    throw new Error(`${kernel}: the LoRA epilogue needs ${N.length} xa and ${N.length} B`);
  const rank = lora.B[0].shape[1];
  if (rank % 4 !== 0) throw new Error(`${kernel}: the LoRA rank must divide by 4, got ${rank}`);
  N.forEach((n, s) => {
    const [xa, B] = [lora.xa[s], lora.B[s]];
    if (xa.dtype !== 'f32' || xa.size !== M * rank)
      throw new Error(`${kernel}: xa ${s} ${xa.describe()} must be f32 (${M}, ${rank})`);
    if (B.dtype !== 'f32' || B.shape.length !== 2 || B.shape[0] !== n || B.shape[1] !== rank)
      throw new Error(`${kernel}: B ${s} ${B.describe()} must be f32 (${n}, ${rank})`);
  });
  const xa = spanOf(lora.xa);
  const B = spanOf(lora.B);
  if (!xa || !B) throw new Error(`${kernel}: the LoRA epilogue's xa and B must each be views of one buffer`);
  const at = (a: number[], s: number) => a[s] ?? 0;
  return {
    bindings: [xa.bound, B.bound],
    params: {
      rank,
      loraScale: lora.scale,
      xaAt0: at(xa.at, 0),
      xaAt1: at(xa.at, 1),
      xaAt2: at(xa.at, 2),
      bAt0: at(B.at, 0),
      bAt1: at(B.at, 1),
      bAt2: at(B.at, 2),
    },
    constants: { LORA_K1: lora.order === 'k1' },
    bytes: [...lora.xa, ...lora.B].reduce((a, t) => a + t.byteLength, 0),
    flops: 2 * M * rank * N.reduce((a, b) => a + b, 0),
  };
}

/** Rows M and width K of x, checked. */
function rowsOf(kernel: string, x: Tensor, K: number): number {
  if (x.dtype !== 'f32') throw new Error(`${kernel}: x must be f32, got ${x.describe()}`);
  if (x.shape[x.shape.length - 1] !== K) throw new Error(`${kernel}: x ${x.describe()} must have ${K} columns`);
  return x.size / K;
}

/** Each weight's rows, checked to be (N, K), and their common storage codec. */
function weightsOf(kernel: string, rec: Recorder, ws: readonly Tensor[], K: number) {
  const N = ws.map((w, s) => {
    if (w.shape.length !== 2 || w.shape[1] !== K)
      throw new Error(`${kernel}: weight ${s} ${w.describe()} must be (N, ${K})`);
    if (w.dtype !== ws[0].dtype)
      throw new Error(`${kernel}: the weights must share a dtype, got ${w.dtype} and ${ws[0].dtype}`);
    return w.shape[0];
  });
  return { N, codec: operandCodec(kernel, 'the weights', ws[0].dtype, rec.ctx.device) };
}

function checkOutput(kernel: string, y: Tensor, M: number, N: number, what: string): void {
  if (y.dtype !== 'f32' || y.size !== M * N || y.shape[y.shape.length - 1] !== N)
    throw new Error(`${kernel}: ${what} ${y.describe()} must be f32 (${M}, ${N})`);
}

/**
 * y_s = op(x) W_s^T (+ b_s) for s = 0, 1, 2 (q, k, v) in one dispatch; op(x) = x, or with `norm` x's RMSNorm.
 * @param ys    three outputs (M, N_s), overwritten (each may have more dimensions: (B, T, H, HD)).
 * @param x     (M, K) rows: the residual stream with `norm`, else already normed.
 * @param ws    three weights (N_s, K), f32 or all of one half dtype.
 * @param opts  norm: the gain (K) and eps to fold in; biases: three (N_s), views of one buffer with the gain;
 *              order: the order along K of the matmul variant to equal (projectionSumOrder); lora: the adapters'
 *              deltas added before the biases (binds 10 storage buffers: projectionQkvLoraFits).
 */
export function projectionQkv(
  rec: Recorder,
  ys: readonly [Tensor, Tensor, Tensor],
  x: Tensor,
  ws: readonly [Tensor, Tensor, Tensor],
  opts: {
    norm: GpuFoldedNorm | null;
    biases: readonly [Tensor, Tensor, Tensor] | null;
    order: MatmulSumOrder;
    lora?: GpuLoraEpilogue;
    /** One K loop for the three weights (default: qkvOneLoop of the device); the same results either way. */
    oneKLoop?: boolean;
  },
): void {
  const kernel = 'projectionQkv';
  const K = ws[0].shape[1];
  const M = rowsOf(kernel, x, K);
  const { N, codec } = weightsOf(kernel, rec, ws, K);
  if (!projectionFits(K, N)) throw new Error(`${kernel}: K=${K} and N=${N.join(', ')} must divide by 4`);
  ys.forEach((y, s) => checkOutput(kernel, y, M, N[s], `output ${s}`));
  if (opts.norm && opts.norm.gain.size !== K) throw new Error(`${kernel}: the gain must have ${K} elements`);
  opts.biases?.forEach((b, s) => {
    if (b.size !== N[s]) throw new Error(`${kernel}: bias ${s} ${b.describe()} must have ${N[s]} elements`);
  });
  const { bound, at } = vectorsOf(kernel, x, [opts.norm?.gain ?? null, ...(opts.biases ?? [null, null, null])]);
  const lora = opts.lora ? loraOf(kernel, opts.lora, M, N) : null;
  if (lora && !projectionQkvLoraFits(rec.ctx.device))
    throw new Error(
      `${kernel}: the LoRA epilogue binds ${QKV_LORA_STORAGE_BUFFERS} storage buffers, over this device's limit`,
    );
  const total = N[0] + N[1] + N[2];
  const shape = projectionWorkgroup(M);
  const weightBytes = ws.reduce((s, w) => s + w.byteLength, 0);
  const entry = lora ? 'projection_qkv_lora' : 'projection_qkv';
  rec.dispatch({
    family: familyOf(rec, codec),
    entry,
    label: `projection.${entry}.${opts.order}${codec ? `.${codec}` : ''}`,
    constants: {
      NORM: opts.norm !== null,
      BIAS: opts.biases !== null,
      K1: opts.order === 'k1',
      LANES: opts.norm ? rowLayout(K).LANES : 1,
      ONE_K_LOOP: opts.oneKLoop ?? qkvOneLoop(rec.ctx),
      ...shape,
      ...lora?.constants,
    },
    params: PARAMS.pack({
      ...UNUSED,
      M,
      K,
      N0: N[0],
      N1: N[1],
      N2: N[2],
      gainAt: at[0],
      biasAt0: at[1],
      biasAt1: at[2],
      biasAt2: at[3],
      eps: opts.norm?.eps ?? 0,
      ...lora?.params,
    }),
    bindings: [...ys, x, ...ws, bound, ...(lora?.bindings ?? [])],
    workgroups: [Math.ceil(total / (4 * shape.WG_X)), Math.ceil(M / (4 * shape.WG_Y))],
    cost: {
      bytes: x.byteLength + weightBytes + 4 * M * total + (bound === x ? 0 : bound.byteLength) + (lora?.bytes ?? 0),
      flops: 2 * M * total * K + (lora?.flops ?? 0),
    },
  });
}

/** The shared body of projectionGateUp and projectionPair: act (or the pair's span) from x and two weights. */
function gateUp(
  rec: Recorder,
  kernel: string,
  out: { act: Tensor; at: [number, number] | null },
  x: Tensor,
  wg: Tensor,
  wu: Tensor,
  opts: { norm: GpuFoldedNorm | null; order: MatmulSumOrder; lora?: GpuLoraEpilogue },
): void {
  const K = wg.shape[1];
  const M = rowsOf(kernel, x, K);
  const { N, codec } = weightsOf(kernel, rec, [wg, wu], K);
  if (N[0] !== N[1]) throw new Error(`${kernel}: the two weights have ${N[0]} and ${N[1]} rows`);
  const F = N[0];
  if (!projectionFits(K, [F])) throw new Error(`${kernel}: K=${K} and F=${F} must divide by 4`);
  const gain = opts.norm?.gain ?? null;
  if (gain && (gain.size !== K || gain.dtype !== 'f32')) throw new Error(`${kernel}: the gain must be f32 (${K})`);
  const lora = opts.lora ? loraOf(kernel, opts.lora, M, [F, F]) : null;
  const shape = projectionWorkgroup(M);
  const entry = lora ? 'projection_gate_up_lora' : 'projection_gate_up';
  rec.dispatch({
    family: familyOf(rec, codec),
    entry,
    label: `projection.${out.at ? 'projection_pair' : entry}.${opts.order}${codec ? `.${codec}` : ''}`,
    constants: {
      NORM: gain !== null,
      K1: opts.order === 'k1',
      LANES: gain ? rowLayout(K).LANES : 1,
      PAIR: out.at !== null,
      ...shape,
      ...lora?.constants,
    },
    params: PARAMS.pack({
      ...UNUSED,
      M,
      K,
      N0: F,
      N1: F,
      eps: opts.norm?.eps ?? 0,
      outAt0: out.at?.[0] ?? 0,
      outAt1: out.at?.[1] ?? 0,
      ...lora?.params,
    }),
    // The epilogue's xa and B at bindings 9 and 10, where projection_qkv_lora binds them (6 to 8 unused).
    bindings: [out.act, x, wg, wu, gain ?? x, ...(lora ? [null, null, null, ...lora.bindings] : [])],
    workgroups: [Math.ceil(F / (4 * shape.WG_X)), Math.ceil(M / (4 * shape.WG_Y))],
    cost: {
      bytes:
        x.byteLength +
        wg.byteLength +
        wu.byteLength +
        4 * M * F * (out.at ? 2 : 1) +
        (gain ? gain.byteLength : 0) +
        (lora?.bytes ?? 0),
      flops: 4 * M * F * K + (lora?.flops ?? 0),
    },
  });
}

/**
 * act = silu(op(x) Wg^T) * (op(x) Wu^T) in one dispatch; op(x) = x, or with `norm` x's RMSNorm.
 * @param act  (M, F) overwritten.
 * @param x    (M, K) rows.
 * @param wg   (F, K) gate weight.
 * @param wu   (F, K) up weight (the gate's dtype).
 * @param opts norm: the gain (K) and eps to fold in; order: the order along K of the matmul variant to equal; lora:
 *             the gate and up adapters' deltas, added before SwiGLU.
 */
export function projectionGateUp(
  rec: Recorder,
  act: Tensor,
  x: Tensor,
  wg: Tensor,
  wu: Tensor,
  opts: { norm: GpuFoldedNorm | null; order: MatmulSumOrder; lora?: GpuLoraEpilogue },
): void {
  checkOutput('projectionGateUp', act, x.size / wg.shape[1], wg.shape[0], 'act');
  gateUp(rec, 'projectionGateUp', { act, at: null }, x, wg, wu, opts);
}

/**
 * y0 = op(x) W0^T and y1 = op(x) W1^T in one dispatch (a LoRA layer's x A^T for its gate and up adapters, the norm
 * folded in as projectionGateUp folds it); y0 and y1 are views of one buffer.
 * @param ys   two outputs (M, N), overwritten.
 * @param x    (M, K) rows.
 * @param ws   two weights (N, K) of one dtype.
 * @param opts norm and order as projectionGateUp's.
 */
export function projectionPair(
  rec: Recorder,
  ys: readonly [Tensor, Tensor],
  x: Tensor,
  ws: readonly [Tensor, Tensor],
  opts: { norm: GpuFoldedNorm | null; order: MatmulSumOrder },
): void {
  const kernel = 'projectionPair';
  const M = x.size / ws[0].shape[1];
  ys.forEach((y, s) => checkOutput(kernel, y, M, ws[0].shape[0], `output ${s}`));
  const span = spanOf(ys);
  if (!span) throw new Error(`${kernel}: the two outputs must be views of one buffer`);
  gateUp(rec, kernel, { act: span.bound, at: [span.at[0], span.at[1]] }, x, ws[0], ws[1], opts);
}

/**
 * y += x W^T, then y += scale * xa B^T, in one dispatch: an adapted o or down product of a decode step accumulating
 * into the residual stream as the trainer's two accumulating matmuls add them.
 * @param y    (M, N) accumulated into.
 * @param x    (M, K) rows (no norm).
 * @param w    (N, K) weight, f32 or half.
 * @param opts order: the order along K of the matmul variant to equal; lora: the adapter's xa (M, rank) and B (N,
 *             rank).
 */
export function projectionAddLora(
  rec: Recorder,
  y: Tensor,
  x: Tensor,
  w: Tensor,
  opts: { order: MatmulSumOrder; lora: GpuLoraEpilogue },
): void {
  const kernel = 'projectionAddLora';
  const K = w.shape[1];
  const M = rowsOf(kernel, x, K);
  const { N, codec } = weightsOf(kernel, rec, [w], K);
  if (!projectionFits(K, N)) throw new Error(`${kernel}: K=${K} and N=${N[0]} must divide by 4`);
  checkOutput(kernel, y, M, N[0], 'y');
  const lora = loraOf(kernel, opts.lora, M, N);
  const shape = projectionWorkgroup(M);
  rec.dispatch({
    family: familyOf(rec, codec),
    entry: 'projection_add_lora',
    label: `projection.projection_add_lora.${opts.order}${codec ? `.${codec}` : ''}`,
    constants: { K1: opts.order === 'k1', ...shape, ...lora.constants },
    params: PARAMS.pack({ ...UNUSED, M, K, N0: N[0], ...lora.params }),
    // y, x and W at projection_qkv's bindings 1, 4 and 5 (its first output, input and first weight), xa and B at 9
    // and 10; the gain's binding 8 is read by the shared input loop only with NORM, so x stands in for it.
    bindings: [y, null, null, x, w, null, null, x, ...lora.bindings],
    workgroups: [Math.ceil(N[0] / (4 * shape.WG_X)), Math.ceil(M / (4 * shape.WG_Y))],
    cost: { bytes: x.byteLength + w.byteLength + 2 * y.byteLength + lora.bytes, flops: 2 * M * N[0] * K + lora.flops },
  });
}
