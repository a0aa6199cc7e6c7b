// The benchmark's second framework peer: the same Llama-style SFT training step as src/bench/peer-tfjs.ts
// (embedding, RMSNorm, RoPE rotate-half, GQA causal attention, SwiGLU, tied or untied head, mean cross-entropy,
// grad-norm clip, AdamW) written with jax-js: one jit-compiled function of valueAndGrad plus the update, on OUR
// GPUDevice, so its kernel fusion and compiler face ours on the same hardware. Also a jit-compiled matmul for the
// per-shape comparison. Not a second engine: benchmarks and tests only.

import {
  blockUntilReady,
  defaultDevice,
  getWebGPUDevice,
  init,
  jit,
  nn,
  numpy as np,
  tree,
  valueAndGrad,
  type OwnedFunction,
} from '@jax-js/jax';
import type { GpuContext } from '../gpu';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import type { StepOptions } from '../model/gpu-model';
import { paramShapes } from '../core/model-shapes';
import { causalBias, ropeTables } from './peer-tables';

type Params = Record<string, np.Array>;
type Tables = { cos: np.Array; sin: np.Array; bias: np.Array };
/** The compiled step: (params, moments, batch, tables, bias corrections 1 - beta^t) -> [loss, new params, new moments]. */
type StepFn = OwnedFunction<
  (
    p: Params,
    m: Params,
    v: Params,
    tokens: np.Array,
    targets: np.Array,
    tables: Tables,
    c1: np.Array,
    c2: np.Array,
  ) => [np.Array, Params, Params, Params]
>;

/** The package's version, for the report (its package.json is not importable as a module in every bundler). */
export const JAXJS_VERSION = '0.1.25';

/**
 * Starts jax-js's WebGPU backend on our device. jax-js's init('webgpu') asks navigator.gpu for an adapter and the
 * adapter for a device; we answer both with ctx.device for the duration of the call, then restore navigator.gpu.
 * jax-js keeps one WebGPU backend per page or process, so a second device cannot be bound later: that throws.
 * jax-js also reads navigator.userAgent while compiling (Node: see installNavigatorGpu in src/gpu/node.ts).
 */
export async function useJaxOnDevice(ctx: GpuContext): Promise<string> {
  const nav = (globalThis as { navigator?: object }).navigator;
  if (!nav || typeof (nav as { userAgent?: unknown }).userAgent !== 'string')
    throw new Error('jax-js needs navigator.userAgent (in Node, call installNavigatorGpu first)');
  const device = ctx.device;
  const own = Object.getOwnPropertyDescriptor(nav, 'gpu');
  const adapter = { limits: device.limits, features: device.features, requestDevice: async () => device };
  Object.defineProperty(nav, 'gpu', { value: { requestAdapter: async () => adapter }, configurable: true });
  try {
    await init('webgpu');
  } finally {
    if (own) Object.defineProperty(nav, 'gpu', own);
    else delete (nav as { gpu?: unknown }).gpu;
  }
  if (getWebGPUDevice() !== device)
    throw new Error(
      'jax-js is bound to another GPUDevice already (it starts its WebGPU backend once per page or process)',
    );
  defaultDevice('webgpu');
  return `@jax-js/jax ${JAXJS_VERSION} webgpu backend, jit`;
}

/**
 * Waits until the arrays are computed and every command on the device queue has run (submit-and-wait).
 * jax-js dispatches lazily; blockUntilReady submits an array's pending kernels. The outputs of one jit call share
 * all of its kernels, so one output of a call stands for the whole call.
 */
export async function jaxSync(device: GPUDevice, arrays: np.Array[]): Promise<void> {
  await blockUntilReady(arrays);
  await device.queue.onSubmittedWorkDone();
}

/** jax-js arrays from host data, f32 by default (int32 for token ids). */
function f32(data: Float32Array, shape: number[]): np.Array {
  return np.array(data).reshape(shape);
}

function i32(data: Uint32Array): np.Array {
  return np.array(Int32Array.from(data), { dtype: np.int32 });
}

/**
 * The mean next-token cross-entropy of the model on N = B*T tokens. jax-js moves its arguments (reference counts):
 * every array here is consumed exactly once, `.ref` marks each use that is not the last.
 */
function llamaLoss(
  c: ModelConfig,
  B: number,
  T: number,
  p: Params,
  tokens: np.Array,
  targets: np.Array,
  tables: Tables,
): np.Array {
  const HD = c.dModel / c.nHeads;
  const N = B * T;
  const NH = c.nHeads;
  const NKV = c.nKvHeads;
  const G = NH / NKV;
  const { cos, sin, bias } = tables;
  const lin = (x: np.Array, w: np.Array) => np.matmul(x, w.transpose());
  const rmsnorm = (x: np.Array, w: np.Array) => {
    const ms = np.mean(np.square(x.ref), -1, { keepdims: true });
    return x.mul(np.reciprocal(np.sqrt(ms.add(c.normEps)))).mul(w);
  };
  // x (B,T,H,HD) -> x cos + rotate_half(x) sin, rotate_half(x) = cat(-x2, x1); tables (T,1,HD) broadcast over heads.
  const rope = (x: np.Array) => {
    const [x1, x2] = np.split(x.ref, 2, -1);
    const rot = np.concatenate([x2.neg(), x1], -1);
    return x.mul(cos.ref).add(rot.mul(sin.ref));
  };
  const tied = c.tiedEmbeddings;
  const embed = p['model.embed_tokens.weight'];
  let x = np.take(tied ? embed.ref : embed, tokens, 0); // (N,C)
  for (let l = 0; l < c.nLayers; l++) {
    const w = (name: string) => p[`model.layers.${l}.${name}.weight`];
    const n1 = rmsnorm(x.ref, w('input_layernorm'));
    const q = rope(lin(n1.ref, w('self_attn.q_proj')).reshape([B, T, NH, HD]));
    const k = rope(lin(n1.ref, w('self_attn.k_proj')).reshape([B, T, NKV, HD]));
    const v = lin(n1, w('self_attn.v_proj')).reshape([B, T, NKV, HD]);
    // Grouped-query attention without repeating keys: the G query heads of kv head g become G*T rows.
    const qg = q
      .reshape([B, T, NKV, G, HD])
      .transpose([0, 2, 3, 1, 4])
      .reshape([B * NKV, G * T, HD]);
    const kg = k.transpose([0, 2, 1, 3]).reshape([B * NKV, T, HD]);
    const vg = v.transpose([0, 2, 1, 3]).reshape([B * NKV, T, HD]);
    const scores = np.matmul(qg, kg.transpose([0, 2, 1])).mul(1 / Math.sqrt(HD)); // (B*NKV, G*T, T)
    const masked = scores.reshape([B * NKV, G, T, T]).add(bias.ref);
    const probs = nn.softmax(masked, -1).reshape([B * NKV, G * T, T]);
    const att = np.matmul(probs, vg); // (B*NKV, G*T, HD)
    const attRows = att
      .reshape([B, NKV, G, T, HD])
      .transpose([0, 3, 1, 2, 4])
      .reshape([N, NH * HD]);
    const h = x.add(lin(attRows, w('self_attn.o_proj')));
    const n2 = rmsnorm(h.ref, w('post_attention_layernorm'));
    const gate = lin(n2.ref, w('mlp.gate_proj'));
    const up = lin(n2, w('mlp.up_proj'));
    const act = nn.silu(gate).mul(up);
    x = h.add(lin(act, w('mlp.down_proj')));
  }
  cos.dispose();
  sin.dispose();
  bias.dispose();
  const nf = rmsnorm(x, p['model.norm.weight']);
  const logits = lin(nf, tied ? embed : p['lm_head.weight']); // (N,V)
  const picked = nn.logSoftmax(logits, -1).mul(nn.oneHot(targets, c.vocabSize)).sum(-1);
  return picked.mean().neg();
}

/** The model's parameters, AdamW moments and step count as jax-js arrays, with jit-compiled step and loss. */
export class JaxLlama {
  private params: Params = {};
  private m: Params = {};
  private v: Params = {};
  private step = 0;
  private tables: Tables | null = null;
  private tablesT = 0;
  private readonly stepFns = new Map<string, StepFn>();
  private lossFn: OwnedFunction<(p: Params, tokens: np.Array, targets: np.Array, tables: Tables) => np.Array> | null =
    null;
  private lossShape = '';

  constructor(
    readonly config: ModelConfig,
    params: ParamArrays,
  ) {
    for (const { name, shape } of paramShapes(config)) {
      const data = params[name];
      if (!data) throw new Error(`JaxLlama: parameter ${name} is missing`);
      this.params[name] = f32(Float32Array.from(data), shape);
      this.m[name] = np.zeros(shape);
      this.v[name] = np.zeros(shape);
    }
  }

  /** RoPE tables (T, 1, HD) and the causal bias (T, T), made once per T; each call hands out new references. */
  private tablesFor(T: number): Tables {
    if (!this.tables || this.tablesT !== T) {
      if (this.tables) tree.dispose(this.tables);
      const HD = this.config.dModel / this.config.nHeads;
      const { cos, sin } = ropeTables(this.config, T);
      this.tables = { cos: f32(cos, [T, 1, HD]), sin: f32(sin, [T, 1, HD]), bias: f32(causalBias(T), [T, T]) };
      this.tablesT = T;
    }
    return tree.ref(this.tables);
  }

  /**
   * One jit-compiled training step: loss and gradients (valueAndGrad), global-norm clip (PyTorch semantics),
   * AdamW (decoupled weight decay, bias-corrected). Compiled once per (B, T, optimizer settings).
   */
  private stepFn(B: number, T: number, opts: StepOptions): StepFn {
    const b1 = opts.beta1 ?? 0.9;
    const b2 = opts.beta2 ?? 0.999;
    const eps = opts.eps ?? 1e-8;
    const maxNorm = opts.maxGradNorm ?? 3.4e38;
    const key = JSON.stringify([B, T, opts.lr, opts.weightDecay, b1, b2, eps, maxNorm]);
    const cached = this.stepFns.get(key);
    if (cached) return cached;
    const c = this.config;
    // correction = [1 - b1^t, 1 - b2^t]: an input, so one compiled step serves every step count.
    const fn: StepFn = jit(
      (
        p: Params,
        m: Params,
        v: Params,
        tokens: np.Array,
        targets: np.Array,
        tables: Tables,
        c1: np.Array,
        c2: np.Array,
      ) => {
        const [loss, grads] = valueAndGrad((q: Params) => llamaLoss(c, B, T, q, tokens, targets, tables))(tree.ref(p));
        const names = Object.keys(p);
        const sq = names.map((n) => np.square(grads[n].ref).sum()).reduce((a, b) => a.add(b));
        const norm = np.sqrt(sq);
        const scale = np.where(norm.ref.greater(maxNorm), np.reciprocal(norm.add(1e-6)).mul(maxNorm), 1);
        const p1: Params = {};
        const m1: Params = {};
        const v1: Params = {};
        for (const n of names) {
          const g = grads[n].mul(scale.ref);
          m1[n] = m[n].mul(b1).add(g.ref.mul(1 - b1));
          v1[n] = v[n].mul(b2).add(np.square(g).mul(1 - b2));
          const update = m1[n].ref.div(c1.ref).div(np.sqrt(v1[n].ref.div(c2.ref)).add(eps));
          p1[n] = p[n].mul(1 - opts.lr * opts.weightDecay).sub(update.mul(opts.lr));
        }
        scale.dispose();
        c1.dispose();
        c2.dispose();
        return [loss, p1, m1, v1] as [np.Array, Params, Params, Params];
      },
    );
    this.stepFns.set(key, fn);
    return fn;
  }

  /**
   * One training step on a batch; the new parameters and moments replace the old. Returns the loss (before the
   * update) without reading it back: the caller syncs (jaxSync) or reads it, then disposes it.
   */
  trainStep(tokens: np.Array, targets: np.Array, B: number, T: number, opts: StepOptions): np.Array {
    this.step += 1;
    const b1 = opts.beta1 ?? 0.9;
    const b2 = opts.beta2 ?? 0.999;
    const c1 = np.array(new Float32Array([1 - Math.pow(b1, this.step)]));
    const c2 = np.array(new Float32Array([1 - Math.pow(b2, this.step)]));
    const [loss, p, m, v] = this.stepFn(B, T, opts)(
      this.params,
      this.m,
      this.v,
      tokens.ref,
      targets.ref,
      this.tablesFor(T),
      c1,
      c2,
    );
    this.params = p;
    this.m = m;
    this.v = v;
    return loss;
  }

  /** The loss on a batch without training (forward only, jit-compiled). */
  async evalLoss(tokens: Uint32Array, targets: Uint32Array, B: number, T: number): Promise<number> {
    const shape = `${B}x${T}`;
    if (!this.lossFn || this.lossShape !== shape) {
      this.lossFn?.dispose();
      const c = this.config;
      this.lossFn = jit((p: Params, tok: np.Array, tgt: np.Array, tables: Tables) =>
        llamaLoss(c, B, T, p, tok, tgt, tables),
      );
      this.lossShape = shape;
    }
    const loss = this.lossFn(tree.ref(this.params), i32(tokens), i32(targets), this.tablesFor(T));
    return (await loss.data())[0];
  }

  /** Reads every parameter back (for tests). */
  async download(): Promise<ParamArrays> {
    const out: ParamArrays = {};
    for (const [n, a] of Object.entries(this.params)) out[n] = (await a.ref.data()) as Float32Array;
    return out;
  }

  dispose(): void {
    for (const t of [this.params, this.m, this.v]) tree.dispose(t);
    if (this.tables) tree.dispose(this.tables);
    this.tables = null;
    for (const fn of this.stepFns.values()) fn.dispose();
    this.stepFns.clear();
    this.lossFn?.dispose();
    this.lossFn = null;
  }
}

/** A step's inputs as jax-js arrays (int32 ids). Dispose them when done. */
export function jaxBatch(
  tokens: Uint32Array,
  targets: Uint32Array,
): { tokens: np.Array; targets: np.Array; dispose(): void } {
  const a = i32(tokens);
  const b = i32(targets);
  return { tokens: a, targets: b, dispose: () => (a.dispose(), b.dispose()) };
}

/** A jit-compiled C = op(A) op(B) at one shape, on arrays kept for repeated calls (the matmul comparison). */
export class JaxMatmul {
  private readonly fn: OwnedFunction<(a: np.Array, b: np.Array) => np.Array>;
  private readonly a: np.Array;
  private readonly b: np.Array;

  /** a is (M,K), or (K,M) with transA; b is (K,N), or (N,K) with transB; row-major, as our matmul takes them. */
  constructor(
    s: { M: number; N: number; K: number; transA?: boolean; transB?: boolean },
    a: Float32Array,
    b: Float32Array,
  ) {
    this.a = f32(a, s.transA ? [s.K, s.M] : [s.M, s.K]);
    this.b = f32(b, s.transB ? [s.N, s.K] : [s.K, s.N]);
    this.fn = jit((x: np.Array, y: np.Array) => np.matmul(s.transA ? x.transpose() : x, s.transB ? y.transpose() : y));
  }

  /** Runs it once: the product, owned by the caller. */
  run(): np.Array {
    return this.fn(this.a.ref, this.b.ref);
  }

  dispose(): void {
    this.fn.dispose();
    this.a.dispose();
    this.b.dispose();
  }
}
