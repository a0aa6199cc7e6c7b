// The benchmark's peer: the same Llama-style model's SFT training step (embedding, RMSNorm, RoPE rotate-half,
// GQA causal attention, SwiGLU, tied or untied head, masked-mean cross-entropy, grad-norm clip, AdamW) written
// with TensorFlow.js ops on its WebGPU backend, running on OUR GPUDevice (same adapter, same process), so the
// step-time ratio compares the same work on the same hardware. Not a second engine: benchmarks and tests only.

import * as tf from '@tensorflow/tfjs-core';
// The Node and browser bundles of tfjs-core leave gradients out; autograd needs them (Node: src/cli/register-tfjs.mjs).
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import type { GpuContext } from '../gpu';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import type { StepOptions } from '../model/gpu-model';
import { paramShapes } from '../core/model-shapes';
import { causalBias, ropeTables } from './peer-tables';

/** The tfjs backend name we register over our device (the kernels are registered under 'webgpu'). */
const BACKEND = 'webgpu';

let installedOn: GPUDevice | null = null;

/**
 * Points tfjs's 'webgpu' backend at our device. tfjs-backend-webgpu registers a 'webgpu' factory that requests
 * its own adapter and device from navigator.gpu; its WebGPUBackend class also accepts a device, so we replace the
 * factory with one that wraps ctx.device (its kernels stay registered under the name 'webgpu'). The class checks
 * that navigator.gpu exists (Node: see installNavigatorGpu in src/gpu/node.ts).
 */
export async function useTfjsOnDevice(ctx: GpuContext): Promise<string> {
  if (installedOn === ctx.device && tf.getBackend() === BACKEND) return describeBackend();
  const { WebGPUBackend } = await import('@tensorflow/tfjs-backend-webgpu');
  if (tf.findBackend(BACKEND) || tf.findBackendFactory(BACKEND)) tf.removeBackend(BACKEND);
  const info = {
    vendor: ctx.report.vendor,
    architecture: ctx.report.architecture,
    device: ctx.report.device,
    description: ctx.report.description,
  };
  tf.registerBackend(BACKEND, () => new WebGPUBackend(ctx.device, info as GPUAdapterInfo), 10);
  const ok = await tf.setBackend(BACKEND);
  if (!ok) throw new Error('tfjs could not initialize its WebGPU backend on our device');
  await tf.ready();
  installedOn = ctx.device;
  return describeBackend();
}

function describeBackend(): string {
  return `@tensorflow/tfjs-core ${tf.version_core} webgpu backend`;
}

/**
 * Waits until every command tfjs has queued has run: submits tfjs's pending command encoder (it batches up to
 * WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE dispatches) and waits on the queue, the same submit-and-wait our steps use.
 */
export async function tfjsSync(device: GPUDevice): Promise<void> {
  // The sequence tfjs itself runs before a readback (WebGPUBackend.getBufferData).
  const backend = tf.backend() as unknown as {
    ensureCommandEncoderReady(): void;
    endComputePassEncoder(): void;
    submitQueue(): void;
  };
  backend.ensureCommandEncoderReady();
  backend.endComputePassEncoder();
  backend.submitQueue();
  await device.queue.onSubmittedWorkDone();
}

/** Releases the tfjs backend's buffers without destroying our device. */
export function releaseTfjs(): void {
  if (!installedOn) return;
  // WebGPUBackend.dispose() frees its buffer pools; it does not destroy the device it was given.
  tf.removeBackend(BACKEND);
  installedOn = null;
}

/** The model as tfjs variables plus AdamW moments. */
export class TfjsLlama {
  readonly vars = new Map<string, tf.Variable>();
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();
  private step = 0;
  private readonly HD: number;
  private cache: { cos: tf.Tensor; sin: tf.Tensor; maskBias: tf.Tensor; T: number } | null = null;

  constructor(
    readonly config: ModelConfig,
    params: ParamArrays,
  ) {
    this.HD = config.dModel / config.nHeads;
    for (const { name, shape } of paramShapes(config)) {
      const data = params[name];
      if (!data) throw new Error(`TfjsLlama: parameter ${name} is missing`);
      this.vars.set(name, tf.variable(tf.tensor(data, shape, 'float32'), true, name));
      this.m.set(name, tf.variable(tf.zeros(shape), false, `adam_m/${name}`));
      this.v.set(name, tf.variable(tf.zeros(shape), false, `adam_v/${name}`));
    }
  }

  private p(name: string): tf.Variable {
    return this.vars.get(name)!;
  }

  /** RoPE tables (T, 1, HD) for positions 0..T-1 and the causal bias (T, T), built once per T. */
  private tables(T: number) {
    if (this.cache?.T === T) return this.cache;
    if (this.cache) for (const t of [this.cache.cos, this.cache.sin, this.cache.maskBias]) t.dispose();
    const { HD } = this;
    const { cos, sin } = ropeTables(this.config, T);
    const bias = causalBias(T);
    // Built inside the step's tidy scope: keep() them, or the scope would dispose the cache.
    this.cache = {
      T,
      cos: tf.keep(tf.tensor(cos, [T, 1, HD])),
      sin: tf.keep(tf.tensor(sin, [T, 1, HD])),
      maskBias: tf.keep(tf.tensor(bias, [T, T])),
    };
    return this.cache;
  }

  private rmsnorm(x: tf.Tensor, w: tf.Tensor): tf.Tensor {
    const ms = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, this.config.normEps))), w);
  }

  /** x (B,T,H,HD) -> x cos + rotate_half(x) sin, rotate_half(x) = cat(-x2, x1). */
  private rope(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor): tf.Tensor {
    const half = this.HD / 2;
    const [x1, x2] = tf.split(x, [half, half], -1);
    const rot = tf.concat([tf.neg(x2), x1], -1);
    return tf.add(tf.mul(x, cos), tf.mul(rot, sin));
  }

  /** The mean cross-entropy of next tokens `targets` (N) given `tokens` (N), N = B*T, every row counted. */
  loss(tokens: tf.Tensor1D, targets: tf.Tensor1D, B: number, T: number): tf.Scalar {
    const c = this.config;
    const { HD } = this;
    const N = B * T;
    const NH = c.nHeads;
    const NKV = c.nKvHeads;
    const G = NH / NKV;
    const { cos, sin, maskBias } = this.tables(T);
    const lin = (x: tf.Tensor, w: string) => tf.matMul(x as tf.Tensor2D, this.p(w) as tf.Tensor2D, false, true);
    let x: tf.Tensor = tf.gather(this.p('model.embed_tokens.weight'), tokens); // (N,C)
    for (let l = 0; l < c.nLayers; l++) {
      const pre = `model.layers.${l}.`;
      const n1 = this.rmsnorm(x, this.p(`${pre}input_layernorm.weight`));
      const q = this.rope(tf.reshape(lin(n1, `${pre}self_attn.q_proj.weight`), [B, T, NH, HD]), cos, sin);
      const k = this.rope(tf.reshape(lin(n1, `${pre}self_attn.k_proj.weight`), [B, T, NKV, HD]), cos, sin);
      const v = tf.reshape(lin(n1, `${pre}self_attn.v_proj.weight`), [B, T, NKV, HD]);
      // Grouped-query attention without repeating keys: the G query heads of kv head g become G*T rows.
      const qg = tf.reshape(tf.transpose(tf.reshape(q, [B, T, NKV, G, HD]), [0, 2, 3, 1, 4]), [B * NKV, G * T, HD]);
      const kg = tf.reshape(tf.transpose(k, [0, 2, 1, 3]), [B * NKV, T, HD]);
      const vg = tf.reshape(tf.transpose(v, [0, 2, 1, 3]), [B * NKV, T, HD]);
      const scores = tf.mul(tf.matMul(qg, kg, false, true), 1 / Math.sqrt(HD)); // (B*NKV, G*T, T)
      const masked = tf.add(tf.reshape(scores, [B * NKV, G, T, T]), maskBias);
      const probs = tf.reshape(tf.softmax(masked), [B * NKV, G * T, T]);
      const att = tf.matMul(probs, vg); // (B*NKV, G*T, HD)
      const attRows = tf.reshape(tf.transpose(tf.reshape(att, [B, NKV, G, T, HD]), [0, 3, 1, 2, 4]), [N, NH * HD]);
      const h = tf.add(x, lin(attRows, `${pre}self_attn.o_proj.weight`));
      const n2 = this.rmsnorm(h, this.p(`${pre}post_attention_layernorm.weight`));
      const gate = lin(n2, `${pre}mlp.gate_proj.weight`);
      const up = lin(n2, `${pre}mlp.up_proj.weight`);
      const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
      x = tf.add(h, lin(act, `${pre}mlp.down_proj.weight`));
    }
    const nf = this.rmsnorm(x, this.p('model.norm.weight'));
    const logits = lin(nf, c.tiedEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'); // (N,V)
    const logp = tf.logSoftmax(logits);
    const picked = tf.sum(tf.mul(logp, tf.oneHot(targets, c.vocabSize)), -1);
    return tf.neg(tf.mean(picked));
  }

  /** The loss on a batch without training (forward only). */
  async evalLoss(tokens: Uint32Array, targets: Uint32Array, B: number, T: number): Promise<number> {
    const l = tf.tidy(() =>
      this.loss(tf.tensor1d(Int32Array.from(tokens), 'int32'), tf.tensor1d(Int32Array.from(targets), 'int32'), B, T),
    );
    const v = (await l.data())[0];
    l.dispose();
    return v;
  }

  /**
   * One training step: loss, gradients of every parameter, global-norm clip (PyTorch semantics), AdamW (decoupled
   * weight decay, bias-corrected). Returns the loss tensor (before the update) without reading it back.
   */
  trainStep(tokens: tf.Tensor1D, targets: tf.Tensor1D, B: number, T: number, opts: StepOptions): tf.Scalar {
    this.step += 1;
    const t = this.step;
    const b1 = opts.beta1 ?? 0.9;
    const b2 = opts.beta2 ?? 0.999;
    const eps = opts.eps ?? 1e-8;
    const vars = [...this.vars.values()];
    return tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => this.loss(tokens, targets, B, T), vars);
      const names = [...this.vars.keys()];
      // Pairwise adds: tf.addN binds every input at once and exceeds the storage-buffer limit on deep models.
      const sq = names.map((n) => tf.sum(tf.square(grads[n]))).reduce((a, b) => tf.add(a, b));
      const norm = tf.sqrt(sq);
      const maxNorm = opts.maxGradNorm ?? 3.4e38;
      const scale = tf.where(tf.greater(norm, maxNorm), tf.div(maxNorm, tf.add(norm, 1e-6)), tf.onesLike(norm));
      const c1 = 1 - Math.pow(b1, t);
      const c2 = 1 - Math.pow(b2, t);
      for (const n of names) {
        const p = this.vars.get(n)!;
        const m = this.m.get(n)!;
        const v = this.v.get(n)!;
        const g = tf.mul(grads[n], scale);
        const m1 = tf.add(tf.mul(m, b1), tf.mul(g, 1 - b1));
        const v1 = tf.add(tf.mul(v, b2), tf.mul(tf.square(g), 1 - b2));
        const decayed = tf.mul(p, 1 - opts.lr * opts.weightDecay);
        const update = tf.div(tf.div(m1, c1), tf.add(tf.sqrt(tf.div(v1, c2)), eps));
        p.assign(tf.sub(decayed, tf.mul(update, opts.lr)));
        m.assign(m1);
        v.assign(v1);
      }
      return tf.keep(value);
    });
  }

  /** Reads every parameter back (for tests). */
  async download(): Promise<ParamArrays> {
    const out: ParamArrays = {};
    for (const [n, v] of this.vars) out[n] = (await v.data()) as Float32Array;
    return out;
  }

  dispose(): void {
    for (const map of [this.vars, this.m, this.v]) for (const v of map.values()) v.dispose();
    if (this.cache) for (const t of [this.cache.cos, this.cache.sin, this.cache.maskBias]) t.dispose();
    this.cache = null;
  }
}

/** A step's inputs as tfjs tensors (int32 ids). Dispose them when done. */
export function tfjsBatch(
  tokens: Uint32Array,
  targets: Uint32Array,
): { tokens: tf.Tensor1D; targets: tf.Tensor1D; dispose(): void } {
  const a = tf.tensor1d(Int32Array.from(tokens), 'int32');
  const b = tf.tensor1d(Int32Array.from(targets), 'int32');
  return { tokens: a, targets: b, dispose: () => (a.dispose(), b.dispose()) };
}
