// The policy on the GPU: parameters, gradients and AdamW state as tensors, and the model's forward and backward
// recorded as flat lists of kernel calls (llm.c style; the backward is the forward reversed). The same layer
// code serves training (fresh keys and values) and KV-cache decoding (keys and values written into a cache).
// With LoRA (src/reference/lora.ts) the base weights are frozen: only the adapters get gradients and AdamW, and
// the base's weight-gradient matmuls are not recorded at all.
// Weight storage: a frozen model (the base under LoRA, a reference model) may store its matrices bf16 or f16
// (GpuModelOptions.weightDtype); the kernels widen them to f32 on load, so every activation and accumulation stays f32. A
// trained model keeps f32 weights: AdamW needs f32 masters (a 1e-5 relative update is below bf16's 2^-8 step), and
// f32 masters beside half working copies would hold 6 bytes a weight instead of 4, so half storage there would cost
// memory, not save it. The KV cache of decoding may be stored half too (GpuModelOptions.kvDtype), trained or not.
// Half-precision rollouts (GpuModelOptions.rolloutDtype, the rollout_dtype knob): the sampler reads a bf16 or f16
// copy of a trained model's matrices, as a trainer whose inference engine holds the weights in bf16 does, while the
// training forward and backward read the f32 masters. The copy is refreshed on the GPU (half-pack.wgsl) at the start
// of each rollout, so it always holds the latest optimizer step; the 1-D gains and biases stay f32 in both.
// Merged LoRA rollouts (GpuModelOptions.rolloutMergeLora, the rollout_merge_lora knob): the sampler reads a copy of
// each adapted matrix with its adapter merged in, W + s B A, in rolloutDtype (f32, or bf16/f16 as an inference
// engine fed merged weights holds them), refreshed at the start of each rollout like the half copy; a decode step then
// runs the products of a model trained in full (6 dispatches a layer) instead of two adapter products on each
// adapted projection. Training still runs W x + s (x A^T) B^T, so the sampler and the learner differ by rounding.
// The training forward ends at the final norm: no (B, T, V) logits are ever allocated. The LM head runs on those
// hidden states in row chunks (src/kernels/head-chunked.ts) or on a few rows (a decode step); its backward writes
// the gradient of the final norm's output (Workspace.dn) and the head weight's gradient, and backward() goes on from
// there. Not the sampler loop (generate.ts) and not the losses (they produce dLogprob/dEntropy).

import { spanOf, tensorArena, type GpuContext, type Recorder, type Tensor } from '../gpu';
import { attentionBackward, attentionForward } from '../kernels/attention';
import { biasAdd, biasGrad } from '../kernels/bias';
import { copy, fill } from '../kernels/elementwise';
import { embeddingBackward, embeddingForward } from '../kernels/embedding';
import { gatherRows, kvWrite, type DecodeCursor } from '../kernels/decode';
import { packHalf, unpackHalf } from '../kernels/half-pack';
import {
  projectionAddLora,
  projectionGateUp,
  projectionPair,
  projectionQkv,
  projectionQkvLoraFits,
  projectionSumOrder,
  type GpuLoraEpilogue,
} from '../kernels/projection';
import { matmul } from '../kernels/matmul';
import {
  clippedAdamwStep,
  destroyPacked,
  momentsOf,
  packedRuns,
  packedTensorsOf,
  type PackedMoments,
  type PackedOptimizer,
  type PackedTensors,
} from '../kernels/optimizer';
import { rmsnormBackward, rmsnormForward } from '../kernels/rmsnorm';
import { ropeBackward, ropeDecodeKv, ropeForward } from '../kernels/rope';
import { swigluBackward, swigluForward } from '../kernels/swiglu';
import { loraBaseWeight, loraNames, loraScale, loraShapes, type LoraSpec, type LoraTarget } from '../core/lora-layout';
import { headDim, paramShapes } from '../core/model-shapes';
import type { AdamwOptions } from '../reference/adamw';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { checkModelFitsDevice } from './memory-plan';
import { isHalfBits, storesHalf, weightToF32, weightToHalf, type WeightData, type WeightDtype } from '../core/half';

// Dimension letters: B rows (sequences), T positions per row, N = B*T, C dModel, V vocab, NH/NKV heads,
// HD head dim, F dFF, L layers, Tcap KV-cache capacity.

/** The activations one layer saves for its backward, for N = B*T rows. */
interface LayerActs {
  x: Tensor; // (B,T,C) layer input (the residual stream)
  n1: Tensor; // (B,T,C) input_layernorm(x)
  rstd1: Tensor; // (N)
  q: Tensor; // (B,T,NH,HD) after RoPE
  k: Tensor; // (B,T,NKV,HD) after RoPE
  /** With q/k norm (Qwen3): the projections' outputs before the per-head norm, and each head's 1/rms. */
  qkNorm: { qPre: Tensor; kPre: Tensor; rstdQ: Tensor; rstdK: Tensor } | null;
  v: Tensor; // (B,T,NKV,HD)
  att: Tensor; // (B,T,NH,HD) attention output
  lse: Tensor; // (B,NH,T)
  h: Tensor; // (B,T,C) x + o_proj(att)
  n2: Tensor; // (B,T,C) post_attention_layernorm(h)
  rstd2: Tensor; // (N)
  gate: Tensor; // (B,T,F)
  up: Tensor; // (B,T,F)
  act: Tensor; // (B,T,F) silu(gate) * up
  xa: Partial<Record<LoraTarget, Tensor>>; // with LoRA: (N, r) x A^T of each adapted projection, views of xaArena
  xaArena: Tensor | null; // with LoRA: the one buffer of the layer's xa rows (a decode step's epilogues bind it once)
}

/**
 * What a workspace is for: 'train' keeps every layer's activations and the backward's scratch; 'recompute' (per-layer
 * activation recomputation) keeps only each layer's input x and one layer's activations, and backward() runs each
 * layer's forward again from its x just before that layer's backward (one more forward's compute); 'infer' (a
 * KV-cache prefill or decode step, a frozen model's forward) shares one layer's activations across all layers and has
 * no backward scratch, since nothing reads a layer's activations after the next layer has run.
 */
export type WorkspaceMode = 'train' | 'recompute' | 'infer';

/** The options of GpuModel.create beyond its shapes. */
export interface GpuModelOptions {
  /** A frozen model (a reference): no gradients, and forward() runs in an 'infer' workspace. */
  frozen?: boolean;
  /** Training forwards keep one layer's activations and backward() recomputes each layer ('recompute'). */
  recompute?: boolean;
  /**
   * The dtype of the matrices of a frozen model: the base under LoRA, or a model created with `frozen` (a
   * reference). A model that is trained in full keeps f32 whatever this says (see the file's header). Default f32.
   */
  weightDtype?: WeightDtype;
  /**
   * The dtype the rollout (KV-cache prefill and decode) reads a fully trained model's matrices in: f32 (the
   * default: the sampler reads the trained weights themselves), or bf16/f16 (a half copy refreshed before each
   * rollout). Not for a frozen model, whose storage weightDtype already sets; under LoRA only with rolloutMergeLora,
   * as the dtype of the merged copy.
   */
  rolloutDtype?: WeightDtype;
  /**
   * Under LoRA: the rollout reads each adapted matrix merged with its adapter (W + s B A) from a copy in rolloutDtype,
   * refreshed before each rollout, instead of adding the adapters' two products to each projection. Default false.
   */
  rolloutMergeLora?: boolean;
  /**
   * The dtype the KV cache of decoding (rollouts) is stored in: f32, or bf16/f16 (two values a 32-bit word, rounded to
   * nearest even when written, widened exactly when attention reads them; every activation stays f32). Independent
   * of weightDtype: a policy trained in full keeps f32 weights but may cache half. Default f32.
   */
  kvDtype?: WeightDtype;
}

/** Activations and gradient scratch for a (B, T) shape; allocated once per shape and reused. */
export interface Workspace {
  B: number;
  T: number;
  mode: WorkspaceMode;
  /** One per layer; in an 'infer' workspace every entry is the same object. */
  layers: LayerActs[];
  xOut: Tensor; // (B,T,C) output of the last layer
  nf: Tensor; // (B,T,C) final norm: the LM head's input
  rstdf: Tensor; // (N)
  /** The backward's scratch; null in an 'infer' workspace. */
  grad: WorkspaceGrads | null;
}

/** The backward's scratch of a (B, T) training workspace. */
export interface WorkspaceGrads {
  dRes: Tensor; // (B,T,C) gradient of the residual stream, accumulated in place through the layers
  dn: Tensor; // (B,T,C); backward() starts from it holding the gradient of nf (the head's backward writes it)
  dAtt: Tensor; // (B,T,NH,HD)
  dq: Tensor;
  dk: Tensor;
  dv: Tensor;
  dAct: Tensor; // (B,T,F)
  dGate: Tensor;
  dUp: Tensor;
  dXa: Tensor | null; // (N, r) with LoRA: the gradient of x A^T
  /** With q/k norm: copies of dq, dk (the normed heads' gradients) that the norm's backward reads. */
  dqkNormed: { dq: Tensor; dk: Tensor } | null;
}

/** Where a forward reads its positions and, when decoding, which cache it writes. */
export interface ForwardInputs {
  /** (B*T) token ids. */
  tokens: Tensor<'u32'>;
  /** (B*T) RoPE position of every token (0 at each row's first real token). */
  positions: Tensor<'u32'>;
  /** (B) first real key position per row (left padding); omitted when rows are not left-padded. */
  kvStart?: Tensor<'u32'>;
}

/** Per-layer keys and values of a batch of sequences being decoded, stored f32 or half (GpuModelOptions.kvDtype). */
export interface KvCache {
  rows: number;
  capacity: number;
  k: Tensor[]; // L x (rows, Tcap, NKV, HD)
  v: Tensor[];
}

/** LoRA adapters for a model: the spec and the adapters' starting values by name (loraShapes). */
export interface LoraInit {
  spec: LoraSpec;
  adapters: ParamArrays;
}

/** Hyperparameters of one optimizer step. */
export interface StepOptions {
  lr: number;
  weightDecay: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Clip the global gradient norm to this (undefined: no clipping). */
  maxGradNorm?: number;
}

/** What clippedAdamwStep (on the GPU and in its CPU twin) takes for optimizer step `t` (counted from 1). */
export function clippedAdamwOptions(
  opts: StepOptions,
  t: number,
): Omit<AdamwOptions, 'gradScale'> & { maxNorm?: number } {
  return {
    lr: opts.lr,
    t,
    weightDecay: opts.weightDecay,
    beta1: opts.beta1,
    beta2: opts.beta2,
    eps: opts.eps,
    maxNorm: opts.maxGradNorm,
  };
}

/**
 * The parameters GpuModel keeps in one arena per layer, by layer: with q/k/v biases (Qwen2) the input_layernorm gain
 * and the q, k and v biases (the fused q/k/v projection binds them as one buffer); none without biases.
 */
export function layerVectorArenas(config: ModelConfig): string[][] {
  if (!config.qkvBias) return [];
  return Array.from({ length: config.nLayers }, (_, l) => {
    const pre = `model.layers.${l}.`;
    return [
      `${pre}input_layernorm.weight`,
      `${pre}self_attn.q_proj.bias`,
      `${pre}self_attn.k_proj.bias`,
      `${pre}self_attn.v_proj.bias`,
    ];
  });
}

/**
 * Why a model cannot sample with these rollout options, or null (GpuModel.create and its twin CpuPolicy refuse the
 * same ones): a merged LoRA rollout needs adapters; a copy in another dtype is for a model trained in full, or under
 * LoRA the merged copy's dtype (a frozen or LoRA base is read as weightDtype stores it).
 */
export function rolloutOptionsProblem(
  opts: Pick<GpuModelOptions, 'rolloutDtype' | 'rolloutMergeLora'>,
  model: { lora: boolean; frozen: boolean },
): string | null {
  const dtype = opts.rolloutDtype ?? 'f32';
  const merge = opts.rolloutMergeLora ?? false;
  if (merge && !model.lora) return 'rolloutMergeLora merges LoRA adapters; this model has none';
  if (dtype !== 'f32' && (model.frozen || (model.lora && !merge)))
    return `rolloutDtype ${dtype} is for a model trained in full or a merged LoRA rollout (rolloutMergeLora); a frozen or LoRA base is stored in weightDtype`;
  return null;
}

export class GpuModel {
  /** The base weights (HF names). Frozen under LoRA. */
  readonly params = new Map<string, Tensor>();
  /** The LoRA adapters by name (empty without LoRA). */
  readonly adapters = new Map<string, Tensor>();
  /** Gradients of what the optimizer trains: every base weight, or under LoRA the adapters only. */
  readonly grads = new Map<string, Tensor>();
  /** The spec and s = alpha / r when the model carries LoRA adapters. */
  readonly lora: { spec: LoraSpec; scale: number } | null;
  /** A frozen model (a reference): no gradients, no optimizer, forward() keeps one layer's activations. */
  readonly frozen: boolean;
  /** Training forwards recompute each layer's activations in the backward (WorkspaceMode 'recompute'). */
  readonly recompute: boolean;
  /** Under LoRA, where a norm's gain gradient goes (the gain is frozen; the kernel writes dx and dgain together). */
  private readonly frozenGainGrad: Tensor | null;
  /** The same for the per-head q/k norm gains (HD wide). */
  private readonly frozenHeadGainGrad: Tensor | null;
  /**
   * The trained tensors (the adapters, or every parameter of a model trained in full) and their gradients packed in
   * groups of arenas (packedRuns: a layer's never split; the maps hold views), so that the optimizer step is two
   * dispatches a group; empty where one layer's tensors do not fit a storage binding (then one buffer each).
   */
  private packed: PackedTensors[] = [];
  /** Each packed group's AdamW moments, made with the maps' by the first optimizer step (ensureMoments). */
  private packedMoments: PackedMoments[] = [];
  private readonly m = new Map<string, Tensor>();
  private readonly v = new Map<string, Tensor>();
  /** Optimizer steps taken (AdamW's t). */
  step = 0;
  /** Global gradient norm of the last step (before clipping), and the clip factor applied: (1) each. */
  readonly gradNorm: Tensor;
  readonly clipScale: Tensor;
  /** Activations per (B, T) shape, the `maxWorkspaces` most recently used (see create). */
  private readonly workspaces = new Map<string, Workspace>();
  private readonly HD: number;
  /** The dtype the matrices are stored in: f32, or bf16/f16 for a frozen base (GpuModelOptions.weightDtype). */
  readonly weightDtype: WeightDtype;
  /** The dtype the rollout reads the matrices in (GpuModelOptions.rolloutDtype; f32: it reads the params). */
  readonly rolloutDtype: WeightDtype;
  /**
   * The rollout's copy of the matrices, empty when the rollout reads the params: the half copy of a model trained in
   * full (GpuModelOptions.rolloutDtype), or under LoRA the merged copy of each adapted matrix (rolloutMergeLora).
   */
  private readonly rolloutParams = new Map<string, Tensor>();
  /** Whether the rollout reads merged LoRA matrices (GpuModelOptions.rolloutMergeLora). */
  readonly rolloutMergeLora: boolean;
  /** f32 scratch by shape, where the merged copy is half: W + s B A is summed in f32 and then rounded. */
  private readonly mergeScratch = new Map<string, Tensor>();
  /** False for a frozenView: its params (and their arenas) belong to the model it views. */
  private paramsOwned = true;
  /** The dtype of the KV caches createKvCache allocates (GpuModelOptions.kvDtype). */
  readonly kvDtype: WeightDtype;
  /**
   * With q/k/v biases (Qwen2), each layer's input_layernorm gain and q, k, v biases live in one arena (the params
   * are its views), so the fused q/k/v projection of a decode step binds them as one buffer; these own the arenas.
   */
  private readonly vectorArenas: Tensor[] = [];

  private constructor(
    readonly ctx: GpuContext,
    readonly config: ModelConfig,
    private readonly maxWorkspaces: number,
    lora: LoraSpec | null,
    opts: GpuModelOptions,
  ) {
    this.frozen = opts.frozen ?? false;
    this.recompute = opts.recompute ?? false;
    this.weightDtype = lora || this.frozen ? (opts.weightDtype ?? 'f32') : 'f32';
    this.rolloutDtype = opts.rolloutDtype ?? 'f32';
    this.rolloutMergeLora = opts.rolloutMergeLora ?? false;
    this.kvDtype = opts.kvDtype ?? 'f32';
    this.HD = headDim(config);
    this.gradNorm = ctx.tensor([1], { label: 'grad_norm' });
    this.clipScale = ctx.tensor([1], { label: 'clip_scale' });
    this.lora = lora ? { spec: lora, scale: loraScale(lora) } : null;
    this.frozenGainGrad = lora ? ctx.tensor([config.dModel], { label: 'grad:frozen_gain' }) : null;
    this.frozenHeadGainGrad = lora && config.qkNorm ? ctx.tensor([this.HD], { label: 'grad:frozen_head_gain' }) : null;
  }

  /**
   * Uploads parameters (HF names and shapes) and allocates gradients: for every parameter, or with `lora` for the
   * adapters only (the base frozen). Refuses a model whose weights, or whose logits for `maxRows` sequences at one
   * position (a decode step's), cannot be a buffer on the device (memory-plan.ts). `maxWorkspaces` shapes keep their activations: two
   * for a policy, whose prefill and decode shapes alternate during rollouts; one for a model that only runs training
   * batches (a reference, a critic), whose shape changes only between steps, so an old step's activations are not
   * kept beside the new ones. `params` may hold half bits (a BF16/F16 checkpoint): they are uploaded one tensor at
   * a time, converted only where the storage differs, so no f32 copy of a half model is made on the host.
   * `opts.frozen` (a reference model): no gradients at all, and forward() runs in an 'infer' workspace (one layer's
   * activations), since nothing ever runs its backward. `opts.recompute`: training forwards keep each layer's input
   * only and backward() recomputes the rest ('recompute').
   */
  static create(
    ctx: GpuContext,
    config: ModelConfig,
    params: Readonly<Record<string, WeightData>>,
    maxRows = 64,
    maxWorkspaces = 2,
    lora?: LoraInit,
    opts: GpuModelOptions = {},
  ): GpuModel {
    checkModelFitsDevice(config, maxRows, ctx.device.limits);
    const frozen = opts.frozen ?? false;
    if (frozen && lora) throw new Error('GpuModel: a frozen model carries no LoRA adapters');
    const rolloutDtype = opts.rolloutDtype ?? 'f32';
    const mergeLora = opts.rolloutMergeLora ?? false;
    const problem = rolloutOptionsProblem(opts, { lora: lora !== undefined, frozen });
    if (problem) throw new Error(`GpuModel: ${problem}`);
    const model = new GpuModel(ctx, config, maxWorkspaces, lora?.spec ?? null, opts);
    const dtype = model.weightDtype;
    const trainedShapes = lora ? loraShapes(config, lora.spec) : frozen ? [] : paramShapes(config);
    const packedViews = model.packTrained(trainedShapes);
    // A layer's norm gain and q/k/v biases bound as one span: its packed group, else an arena of their own.
    const vectorViews = !lora && packedViews.size ? new Map<string, Tensor>() : model.layerVectorViews();
    for (const { name, shape } of paramShapes(config)) {
      const data = params[name];
      if (!data) throw new Error(`GpuModel: parameter ${name} is missing`);
      const n = shape.reduce((a, b) => a * b, 1);
      const length = isHalfBits(data) ? data.bits.length : data.length;
      if (length !== n) throw new Error(`GpuModel: parameter ${name} has ${length} values, want [${shape.join(', ')}]`);
      const packedView = lora ? undefined : packedViews.get(name);
      const view = vectorViews.get(name) ?? packedView?.param;
      if (view) ctx.upload(view, weightToF32(data));
      model.params.set(
        name,
        view ??
          (dtype !== 'f32' && storesHalf(shape)
            ? ctx.fromArray(weightToHalf(data, dtype), shape, { dtype, label: name })
            : ctx.fromArray(weightToF32(data), shape, { label: name })),
      );
      if (!lora && !frozen) model.grads.set(name, packedView?.grad ?? ctx.tensor(shape, { label: `grad:${name}` }));
      if (rolloutDtype !== 'f32' && storesHalf(shape) && !lora)
        model.rolloutParams.set(name, ctx.tensor(shape, { dtype: rolloutDtype, label: `rollout:${name}` }));
    }
    if (lora && mergeLora)
      for (let l = 0; l < config.nLayers; l++)
        for (const tg of lora.spec.targets) {
          const name = loraBaseWeight(l, tg);
          const shape = model.p(name).shape;
          model.rolloutParams.set(name, ctx.tensor(shape, { dtype: rolloutDtype, label: `merged:${name}` }));
          const key = shape.join('x');
          if (rolloutDtype !== 'f32' && !model.mergeScratch.has(key))
            model.mergeScratch.set(key, ctx.tensor(shape, { label: `merge_scratch:${key}` }));
        }
    if (lora)
      for (const { name, shape } of trainedShapes) {
        const data = lora.adapters[name];
        if (!data) throw new Error(`GpuModel: LoRA adapter ${name} is missing`);
        if (data.length !== shape[0] * shape[1])
          throw new Error(`GpuModel: LoRA adapter ${name} has ${data.length} values, want [${shape.join(', ')}]`);
        const packedView = packedViews.get(name);
        if (packedView) ctx.upload(packedView.param, data);
        model.adapters.set(name, packedView?.param ?? ctx.fromArray(data, shape, { label: name }));
        model.grads.set(name, packedView?.grad ?? ctx.tensor(shape, { label: `grad:${name}` }));
      }
    return model;
  }

  /**
   * Packs the trained tensors and their gradients in groups of arenas (this.packed), one layer's tensors always in one
   * group; returns each one's param and gradient views by name, none where packedRuns finds no way to pack them.
   */
  private packTrained(shapes: { name: string; shape: number[] }[]): Map<string, { param: Tensor; grad: Tensor }> {
    const views = new Map<string, { param: Tensor; grad: Tensor }>();
    const layerOf = (name: string) => /layers\.(\d+)\./.exec(name)?.[1] ?? name;
    const runs = packedRuns(
      this.ctx,
      shapes.map((s) => s.shape),
      shapes.map((s) => layerOf(s.name)),
    );
    for (const [start, end] of runs ?? []) {
      const run = shapes.slice(start, end);
      const group = packedTensorsOf(
        this.ctx,
        run.map((s) => s.shape),
        run.map((s) => s.name),
      );
      this.packed.push(group);
      run.forEach(({ name }, i) => views.set(name, { param: group.params.views[i], grad: group.grads.views[i] }));
    }
    return views;
  }

  /**
   * A frozen model (a reference: no gradients, 'infer' workspaces) that reads this model's parameters, with no copy:
   * under LoRA the policy's base with the adapters off is the reference while the base never moves. Its own
   * workspaces only; destroying it leaves the parameters to their owner, and the owner must outlive it.
   */
  frozenView(maxWorkspaces = 1): GpuModel {
    const view = new GpuModel(this.ctx, this.config, maxWorkspaces, null, {
      frozen: true,
      weightDtype: this.weightDtype,
    });
    for (const [name, t] of this.params) view.params.set(name, t);
    view.paramsOwned = false;
    return view;
  }

  /**
   * With q/k/v biases, one arena per layer holding its input_layernorm gain and q, k, v biases (f32), by parameter
   * name; none without biases (the fused projection then binds the gain alone).
   */
  private layerVectorViews(): Map<string, Tensor> {
    const views = new Map<string, Tensor>();
    const shapes = new Map(paramShapes(this.config).map((p) => [p.name, p.shape]));
    layerVectorArenas(this.config).forEach((names, l) => {
      const arena = tensorArena(
        this.ctx,
        names.map((n) => shapes.get(n)!),
        names,
        `L${l}.norm_and_qkv_bias`,
      );
      this.vectorArenas.push(arena.all);
      names.forEach((n, i) => views.set(n, arena.views[i]));
    });
    return views;
  }

  /** What the optimizer updates: the base weights, or under LoRA the adapters. */
  private get trained(): Map<string, Tensor> {
    if (!this.lora && this.weightDtype !== 'f32')
      throw new Error(`GpuModel: a model with ${this.weightDtype} weights is frozen; it has no gradients to train`);
    return this.lora ? this.adapters : this.params;
  }

  /** Whether the base weights get no gradients: under LoRA, or a frozen model (a reference). */
  private get baseFrozen(): boolean {
    return this.lora !== null || this.frozen;
  }

  /**
   * Reads every parameter back (for checkpoints); under LoRA the merged weights W + s B A, in the base's layout,
   * merged on the GPU (twin: mergeLoraAdapters) one layer at a time, so the extra memory is one layer's projections.
   */
  async download(): Promise<ParamArrays> {
    const base = await this.downloadBase();
    if (!this.lora) return base;
    for (let l = 0; l < this.config.nLayers; l++) {
      const rec = this.ctx.recorder(`lora.merge.L${l}`);
      const merged = this.lora.spec.targets.map((tg) => {
        const name = loraBaseWeight(l, tg);
        const out = this.ctx.tensor(this.p(name).shape, { label: `merged:${name}` });
        this.mergeAdapter(rec, out, l, tg);
        return { name, out };
      });
      rec.submit();
      const arrays = await this.ctx.readMany(merged.map((m) => m.out));
      merged.forEach((m, i) => {
        base[m.name] = arrays[i] as Float32Array;
        m.out.destroy();
      });
    }
    return base;
  }

  /**
   * out (f32, the projection's shape) = W + s B A for layer l's adapted projection tg: the base copied, or widened
   * exactly where it is stored half, then s B A accumulated onto it. The one merge of checkpoints (download) and of
   * the sampler's merged copy (refreshRolloutWeights). Twin: mergeLoraAdapters.
   */
  private mergeAdapter(rec: Recorder, out: Tensor, l: number, tg: LoraTarget): void {
    const W = this.p(loraBaseWeight(l, tg));
    if (W.dtype === 'f32') copy(rec, out, W);
    else unpackHalf(rec, out, W);
    const n = loraNames(l, tg);
    matmul(rec, out, this.adapters.get(n.B)!, this.adapters.get(n.A)!, { accumulate: true, alpha: this.lora!.scale });
  }

  /** Reads the base weights back as they are (under LoRA, without the adapters); half weights widened to f32. */
  async downloadBase(): Promise<ParamArrays> {
    const names = [...this.params.keys()];
    const tensors = names.map((n) => this.params.get(n)!);
    const arrays = await this.ctx.readMany(tensors);
    return Object.fromEntries(
      names.map((n, i) => {
        const dtype = tensors[i].dtype;
        const a = arrays[i];
        return [n, dtype === 'bf16' || dtype === 'f16' ? weightToF32({ dtype, bits: a as Uint16Array }) : a];
      }),
    ) as ParamArrays;
  }

  /**
   * Overwrites the base weights with `params` (f32 or half bits), converted to each tensor's storage: a reference
   * reset to the policy. Queued like any upload.
   */
  uploadBase(params: Readonly<Record<string, WeightData>>): void {
    for (const [name, t] of this.params) {
      const data = params[name];
      if (!data) throw new Error(`GpuModel.uploadBase: parameter ${name} is missing`);
      if (t.dtype === 'bf16' || t.dtype === 'f16') this.ctx.upload(t, weightToHalf(data, t.dtype));
      else this.ctx.upload(t, weightToF32(data));
    }
  }

  /** Reads the LoRA adapters back by name ({} without LoRA). */
  async downloadAdapters(): Promise<ParamArrays> {
    const names = [...this.adapters.keys()];
    const arrays = await this.ctx.readMany(names.map((n) => this.adapters.get(n)!));
    return Object.fromEntries(names.map((n, i) => [n, arrays[i] as Float32Array]));
  }

  /** Reads every gradient back (for tests). */
  async downloadGrads(): Promise<ParamArrays> {
    const names = [...this.grads.keys()];
    const arrays = await this.ctx.readMany(names.map((n) => this.grads.get(n)!));
    return Object.fromEntries(names.map((n, i) => [n, arrays[i] as Float32Array]));
  }

  /** Reads the optimizer state back: first and second moments by parameter name (empty before the first step). */
  async downloadOptimizerState(): Promise<{ m: ParamArrays; v: ParamArrays; step: number }> {
    const names = [...this.m.keys()];
    const arrays = await this.ctx.readMany([...names.map((n) => this.m.get(n)!), ...names.map((n) => this.v.get(n)!)]);
    const m = Object.fromEntries(names.map((n, i) => [n, arrays[i] as Float32Array]));
    const v = Object.fromEntries(names.map((n, i) => [n, arrays[names.length + i] as Float32Array]));
    return { m, v, step: this.step };
  }

  /** Restores optimizer moments and the step count (resuming a run exactly). */
  uploadOptimizerState(state: { m: ParamArrays; v: ParamArrays; step: number }): void {
    this.ensureMoments();
    for (const name of this.trained.keys()) {
      if (state.m[name]) this.ctx.upload(this.m.get(name)!, state.m[name]);
      if (state.v[name]) this.ctx.upload(this.v.get(name)!, state.v[name]);
    }
    this.step = state.step;
  }

  private p(name: string): Tensor {
    return this.params.get(name)!;
  }

  /** A weight as the rollout reads it: the half copy where rolloutDtype is half, else the parameter itself. */
  private rolloutWeight(name: string): Tensor {
    return this.rolloutParams.get(name) ?? this.p(name);
  }

  /**
   * Writes the rollout's copy of the matrices from the current weights (nothing when the rollout reads the params):
   * the f32 matrices rounded into the half copy, or under LoRA each adapted matrix merged, W + s B A (the base
   * widened to f32 where it is stored half, s B A accumulated onto it as download() merges, then rounded where the
   * copy is half). The rollout calls it before its prefill, so the sampler always runs on the weights of the latest
   * optimizer step, however they were written (a step, an upload, a rewind).
   */
  refreshRolloutWeights(rec: Recorder): void {
    if (!this.rolloutMergeLora) {
      for (const [name, half] of this.rolloutParams) packHalf(rec, half, this.p(name));
      return;
    }
    for (let l = 0; l < this.config.nLayers; l++)
      for (const tg of this.lora!.spec.targets) {
        const merged = this.rolloutParams.get(loraBaseWeight(l, tg))!;
        const sum = merged.dtype === 'f32' ? merged : this.mergeScratch.get(merged.shape.join('x'))!;
        this.mergeAdapter(rec, sum, l, tg);
        if (sum !== merged) packHalf(rec, merged, sum);
      }
  }

  private g(name: string): Tensor {
    return this.grads.get(name)!;
  }

  /** A norm gain's gradient: its own, or under LoRA the scratch the frozen gains' gradients are dropped into. */
  private gainGrad(name: string): Tensor {
    return this.frozenGainGrad ?? this.g(name);
  }

  /** A q/k norm gain's gradient: its own, or under LoRA the HD-wide scratch. */
  private headGainGrad(name: string): Tensor {
    return this.frozenHeadGainGrad ?? this.g(name);
  }

  private get headWeight(): string {
    return this.config.tiedEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  }

  /** The LM head's weight (V, C): lm_head, or the embedding when tied. */
  get headWeightTensor(): Tensor {
    return this.p(this.headWeight);
  }

  /** The gradient the head's backward adds dLogits^T nf into; null when the base is frozen (LoRA). */
  get headGradTensor(): Tensor | null {
    return this.lora || this.frozen ? null : this.g(this.headWeight);
  }

  /** The gradient of a training workspace's final-norm output (the head's backward writes it; backward() reads it). */
  dHidden(ws: Workspace): Tensor {
    if (!ws.grad) throw new Error(`GpuModel: the ${ws.B}x${ws.T} workspace is forward-only (no backward scratch)`);
    return ws.grad.dn;
  }

  /** The activations for a (B, T) batch, reallocated only when the shape (or the mode) changes. */
  workspaceFor(B: number, T: number, mode: WorkspaceMode = 'train'): Workspace {
    const key = `${B}x${T}:${mode}`;
    const cached = this.workspaces.get(key);
    if (cached) {
      // Most recently used last, so the first key is the one to evict.
      this.workspaces.delete(key);
      this.workspaces.set(key, cached);
      return cached;
    }
    if (this.workspaces.size >= this.maxWorkspaces) this.destroyWorkspace(this.workspaces.keys().next().value!);
    const c = this.config;
    const { HD } = this;
    const t = (shape: number[], label: string) => this.ctx.tensor(shape, { label });
    const N = B * T;
    const layers: LayerActs[] = [];
    const targets = this.lora?.spec.targets ?? [];
    for (let l = 0; l < (mode === 'train' ? c.nLayers : 1); l++) {
      const x = t([B, T, c.dModel], `L${l}.x`);
      const xa = this.lora
        ? tensorArena(
            this.ctx,
            targets.map(() => [N, this.lora!.spec.rank]),
            targets.map((tg) => `L${l}.xa.${tg}`),
            `L${l}.xa`,
          )
        : null;
      layers.push({
        x,
        n1: t([B, T, c.dModel], `L${l}.n1`),
        rstd1: t([N], `L${l}.rstd1`),
        q: t([B, T, c.nHeads, HD], `L${l}.q`),
        k: t([B, T, c.nKvHeads, HD], `L${l}.k`),
        qkNorm: c.qkNorm
          ? {
              qPre: t([B, T, c.nHeads, HD], `L${l}.qPre`),
              kPre: t([B, T, c.nKvHeads, HD], `L${l}.kPre`),
              rstdQ: t([N * c.nHeads], `L${l}.rstdQ`),
              rstdK: t([N * c.nKvHeads], `L${l}.rstdK`),
            }
          : null,
        v: t([B, T, c.nKvHeads, HD], `L${l}.v`),
        att: t([B, T, c.nHeads, HD], `L${l}.att`),
        lse: t([B, c.nHeads, T], `L${l}.lse`),
        // Forward-only: the residual stream stays in x (h = x + attention, then x = h + MLP, each accumulated in
        // place), so no copy of it is made per layer; training keeps x for the backward.
        h: mode === 'infer' ? x : t([B, T, c.dModel], `L${l}.h`),
        n2: t([B, T, c.dModel], `L${l}.n2`),
        rstd2: t([N], `L${l}.rstd2`),
        gate: t([B, T, c.dFF], `L${l}.gate`),
        up: t([B, T, c.dFF], `L${l}.up`),
        act: t([B, T, c.dFF], `L${l}.act`),
        xa: Object.fromEntries(targets.map((tg, i) => [tg, xa!.views[i]])),
        xaArena: xa?.all ?? null,
      });
    }
    // Forward-only: every layer runs in the one layer's buffers (its output written over its input, x, once read).
    // Recompute: every layer runs in them too, but keeps its own input x, from which backward() runs it again.
    while (layers.length < c.nLayers)
      layers.push(mode === 'infer' ? layers[0] : { ...layers[0], x: t([B, T, c.dModel], `L${layers.length}.x`) });
    const ws: Workspace = {
      B,
      T,
      mode,
      layers,
      xOut: t([B, T, c.dModel], 'xOut'),
      nf: t([B, T, c.dModel], 'nf'),
      rstdf: t([N], 'rstdf'),
      grad: mode === 'infer' ? null : this.gradScratch(B, T),
    };
    this.workspaces.set(key, ws);
    return ws;
  }

  private gradScratch(B: number, T: number): WorkspaceGrads {
    const c = this.config;
    const { HD } = this;
    const t = (shape: number[], label: string) => this.ctx.tensor(shape, { label });
    const N = B * T;
    return {
      dRes: t([B, T, c.dModel], 'dRes'),
      dn: t([B, T, c.dModel], 'dn'),
      dAtt: t([B, T, c.nHeads, HD], 'dAtt'),
      dq: t([B, T, c.nHeads, HD], 'dq'),
      dk: t([B, T, c.nKvHeads, HD], 'dk'),
      dv: t([B, T, c.nKvHeads, HD], 'dv'),
      dAct: t([B, T, c.dFF], 'dAct'),
      dGate: t([B, T, c.dFF], 'dGate'),
      dUp: t([B, T, c.dFF], 'dUp'),
      dXa: this.lora ? t([N, this.lora.spec.rank], 'dXa') : null,
      dqkNormed: c.qkNorm
        ? { dq: t([B, T, c.nHeads, HD], 'dqNormed'), dk: t([B, T, c.nKvHeads, HD], 'dkNormed') }
        : null,
    };
  }

  /**
   * One decoder layer: x -> (h, xNext). With a cache, the new keys and values are written at cache position
   * `pos` and attention reads the cache's first pos + T positions; without, it attends over the fresh k and v.
   * A decode cursor (decodeCursorFits) moves pos and the positions by its GPU value (src/kernels/decode.ts).
   * xNext null: backward()'s recompute, which makes only what the layer's backward reads (not the output, which the
   * forward wrote and the next layer's backward no longer needs).
   */
  private layerForward(
    rec: Recorder,
    l: number,
    a: LayerActs,
    xNext: Tensor | null,
    inp: ForwardInputs,
    cache?: { kv: KvCache; pos: number; cursor?: DecodeCursor },
  ): void {
    const c = this.config;
    const pre = `model.layers.${l}.`;
    // The rollout (a forward against a KV cache) reads the half copy where there is one; training reads the masters.
    const W = (name: string) => (cache ? this.rolloutWeight(name) : this.p(name));
    const rope = { theta: c.ropeTheta, scaling: c.ropeScaling, positions: inp.positions };
    const lin = { transB: true };
    // A merged LoRA rollout reads W + s B A from the copy (W): no adapter product runs against the cache.
    const unmerged = !(cache && this.rolloutMergeLora);
    // With LoRA, y += s (x A^T) B^T on each adapted projection, right after its base matmul.
    const adapt = (tg: LoraTarget, y: Tensor, x: Tensor) => {
      if (unmerged) this.loraForward(rec, l, tg, a, y, x);
    };
    // A decode step (one position per row, against the cache) runs q/k/v as one product with the biases in its
    // epilogue and gate/up with SwiGLU as one, each with its RMSNorm folded in where no adapter needs the normed rows
    // (src/kernels/projection.ts; the normed rows, gate and up are then never written).
    // The fused kernels compute bit for bit what the kernels they replace do, so the sampler's log-probs equal the
    // trainer's, but only when they sum along K in the order of the matmul variant the trainer's forward runs for
    // those products: vec4 and the register tiles sum 4 k per dot product, blocked, strided and tiled one k at a time
    // (untuned matmul() runs blocked: with the fused products in vec4's order the copy warm start's sampler was
    // 1.4e-6 off the trainer). projectionSumOrder gives that order from the device's tuning now, or null where no
    // order of the fused kernel equals the trainer's (then the products stay apart).
    // Adapters add their delta before the bias: with adapted q/k/v the bias stays apart unless the product adds the
    // delta itself (below).
    const decode = cache !== undefined && a.q.shape[1] === 1;
    const adapted = (...tgs: LoraTarget[]) => unmerged && tgs.some((tg) => this.lora?.spec.targets.includes(tg));
    const device = this.ctx.device;
    const qkvWidths = [c.nHeads * this.HD, c.nKvHeads * this.HD, c.nKvHeads * this.HD];
    const qkvOrder = decode ? projectionSumOrder(device, c.dModel, qkvWidths) : null;
    const fusedQkv = qkvOrder !== null;
    const qkvAdapted = adapted('q_proj', 'k_proj', 'v_proj');
    // With q, k and v all adapted (the default) at a rank divisible by 4, their three x A^T products are one fused
    // product too, reading x with the norm folded in like the base's: no normed copy of x is needed at all.
    const rank = this.lora?.spec.rank ?? 0;
    const loraDownOrder =
      fusedQkv && (['q_proj', 'k_proj', 'v_proj'] as const).every((tg) => adapted(tg))
        ? projectionSumOrder(device, c.dModel, [rank])
        : null;
    const loraDownFused = loraDownOrder !== null;
    // A decode step's adapted products add their adapters' deltas y += s xa B^T in their own epilogue (one dispatch
    // for q/k/v, one for gate/up with SwiGLU, one for o and one for down, each after its x A^T), where the deltas
    // sum along the rank in the order the trainer's xa B^T product does (src/kernels/projection.ts).
    const qkvLora =
      loraDownFused && projectionQkvLoraFits(device)
        ? this.loraEpilogue(l, a, ['q_proj', 'k_proj', 'v_proj'], qkvWidths)
        : null;
    const foldNorm1 = fusedQkv && (!qkvAdapted || loraDownFused);
    const biasInEpilogue = fusedQkv && c.qkvBias === true && (!qkvAdapted || qkvLora !== null);
    const gateUpAdapted = adapted('gate_proj', 'up_proj');
    const gateUpOrder =
      decode && (!gateUpAdapted || (adapted('gate_proj') && adapted('up_proj')))
        ? projectionSumOrder(device, c.dModel, [c.dFF])
        : null;
    const gateUpLoraDown = gateUpOrder && gateUpAdapted ? projectionSumOrder(device, c.dModel, [rank]) : null;
    const gateUpLora = gateUpLoraDown ? this.loraEpilogue(l, a, ['gate_proj', 'up_proj'], [c.dFF, c.dFF]) : null;
    const gain1 = this.p(`${pre}input_layernorm.weight`);
    if (!foldNorm1) rmsnormForward(rec, a.n1, a.rstd1, a.x, gain1, { eps: c.normEps });
    if (loraDownFused) {
      const xa = (tg: LoraTarget) => a.xa[tg]!;
      const A = (tg: LoraTarget) => this.adapters.get(loraNames(l, tg).A)!;
      projectionQkv(
        rec,
        [xa('q_proj'), xa('k_proj'), xa('v_proj')],
        a.x.reshape2d(),
        [A('q_proj'), A('k_proj'), A('v_proj')],
        {
          norm: { gain: gain1, eps: c.normEps },
          biases: null,
          order: loraDownOrder,
        },
      );
    }
    if (fusedQkv) {
      const bias = (n: string) => this.p(`${pre}self_attn.${n}_proj.bias`);
      projectionQkv(
        rec,
        [a.q.reshape2d(), a.k.reshape2d(), a.v.reshape2d()],
        (foldNorm1 ? a.x : a.n1).reshape2d(),
        [W(`${pre}self_attn.q_proj.weight`), W(`${pre}self_attn.k_proj.weight`), W(`${pre}self_attn.v_proj.weight`)],
        {
          norm: foldNorm1 ? { gain: gain1, eps: c.normEps } : null,
          biases: biasInEpilogue ? [bias('q'), bias('k'), bias('v')] : null,
          order: qkvOrder,
          lora: qkvLora ?? undefined,
        },
      );
    } else {
      matmul(rec, a.q.reshape2d(), a.n1.reshape2d(), W(`${pre}self_attn.q_proj.weight`), lin);
      matmul(rec, a.k.reshape2d(), a.n1.reshape2d(), W(`${pre}self_attn.k_proj.weight`), lin);
      matmul(rec, a.v.reshape2d(), a.n1.reshape2d(), W(`${pre}self_attn.v_proj.weight`), lin);
    }
    // With x A^T fused above, the deltas are added here unless q/k/v's epilogue (qkvLora) added them already.
    if (!loraDownFused) {
      adapt('q_proj', a.q, a.n1);
      adapt('k_proj', a.k, a.n1);
      adapt('v_proj', a.v, a.n1);
    } else if (!qkvLora) {
      this.loraUp(rec, l, 'q_proj', a, a.q);
      this.loraUp(rec, l, 'k_proj', a, a.k);
      this.loraUp(rec, l, 'v_proj', a, a.v);
    }
    if (c.qkvBias && !biasInEpilogue) {
      // Qwen2: the biases are added before RoPE (src/reference/model.ts). Llama configs record no bias kernel.
      biasAdd(rec, a.q.reshape2d(), this.p(`${pre}self_attn.q_proj.bias`));
      biasAdd(rec, a.k.reshape2d(), this.p(`${pre}self_attn.k_proj.bias`));
      biasAdd(rec, a.v.reshape2d(), this.p(`${pre}self_attn.v_proj.bias`));
    }
    if (a.qkNorm) {
      // Qwen3: RMSNorm over each head's HD values before RoPE (twin: src/reference/model.ts); keeps the inputs.
      const qk = a.qkNorm;
      copy(rec, qk.qPre, a.q);
      copy(rec, qk.kPre, a.k);
      rmsnormForward(rec, a.q, qk.rstdQ, qk.qPre, this.p(`${pre}self_attn.q_norm.weight`), { eps: c.normEps });
      rmsnormForward(rec, a.k, qk.rstdK, qk.kPre, this.p(`${pre}self_attn.k_norm.weight`), { eps: c.normEps });
    }
    if (cache && this.HD % 4 === 0) {
      // Against a cache (prefill or decode): q's RoPE, k's RoPE and both cache writes in one dispatch, bit for bit
      // the four it replaces (a.k itself stays unrotated: attention reads the cache).
      ropeDecodeKv(rec, a.q, a.k, a.v, cache.kv.k[l], cache.kv.v[l], cache.pos, { ...rope, cursor: cache.cursor });
    } else {
      ropeForward(rec, a.q, a.q, rope);
      ropeForward(rec, a.k, a.k, rope);
    }
    if (cache) {
      if (cache.cursor && !this.decodeCursorFits)
        throw new Error(`layerForward: a decode cursor needs a head dim divisible by 4, got ${this.HD}`);
      if (this.HD % 4 !== 0) {
        kvWrite(rec, cache.kv.k[l], a.k, cache.pos);
        kvWrite(rec, cache.kv.v[l], a.v, cache.pos);
      }
      attentionForward(rec, a.att, a.lse, a.q, cache.kv.k[l], cache.kv.v[l], {
        kvStart: inp.kvStart,
        keys: cache.pos + a.q.shape[1],
        cursor: cache.cursor,
      });
    } else {
      attentionForward(rec, a.att, a.lse, a.q, a.k, a.v, { kvStart: inp.kvStart });
    }
    if (a.h !== a.x) copy(rec, a.h, a.x);
    if (!(decode && this.addAdaptedProduct(rec, l, 'o_proj', a, a.h, a.att, W(`${pre}self_attn.o_proj.weight`)))) {
      matmul(rec, a.h.reshape2d(), a.att.reshape2d(), W(`${pre}self_attn.o_proj.weight`), {
        ...lin,
        accumulate: true,
      });
      adapt('o_proj', a.h, a.att);
    }
    const gain2 = this.p(`${pre}post_attention_layernorm.weight`);
    if (gateUpOrder && (!gateUpAdapted || gateUpLora)) {
      if (gateUpLora) {
        const A = (tg: LoraTarget) => this.adapters.get(loraNames(l, tg).A)!;
        projectionPair(rec, [a.xa.gate_proj!, a.xa.up_proj!], a.h.reshape2d(), [A('gate_proj'), A('up_proj')], {
          norm: { gain: gain2, eps: c.normEps },
          order: gateUpLoraDown!,
        });
      }
      projectionGateUp(
        rec,
        a.act.reshape2d(),
        a.h.reshape2d(),
        W(`${pre}mlp.gate_proj.weight`),
        W(`${pre}mlp.up_proj.weight`),
        { norm: { gain: gain2, eps: c.normEps }, order: gateUpOrder, lora: gateUpLora ?? undefined },
      );
    } else {
      rmsnormForward(rec, a.n2, a.rstd2, a.h, gain2, { eps: c.normEps });
      matmul(rec, a.gate.reshape2d(), a.n2.reshape2d(), W(`${pre}mlp.gate_proj.weight`), lin);
      matmul(rec, a.up.reshape2d(), a.n2.reshape2d(), W(`${pre}mlp.up_proj.weight`), lin);
      adapt('gate_proj', a.gate, a.n2);
      adapt('up_proj', a.up, a.n2);
      swigluForward(rec, a.act, a.gate, a.up);
    }
    if (xNext === null) {
      // Recomputing: the down product and the residual add are skipped (their output, the next layer's input or
      // xOut, still holds what the forward wrote); the down adapter's xa is made, since its backward reads it.
      const xa = a.xa.down_proj;
      if (this.lora && xa)
        matmul(rec, xa, a.act.reshape2d(), this.adapters.get(loraNames(l, 'down_proj').A)!, { transB: true });
      return;
    }
    if (xNext !== a.h) copy(rec, xNext, a.h);
    if (!(decode && this.addAdaptedProduct(rec, l, 'down_proj', a, xNext, a.act, W(`${pre}mlp.down_proj.weight`)))) {
      matmul(rec, xNext.reshape2d(), a.act.reshape2d(), W(`${pre}mlp.down_proj.weight`), {
        ...lin,
        accumulate: true,
      });
      adapt('down_proj', xNext, a.act);
    }
  }

  /**
   * The LoRA epilogue of a decode step's product over targets `tgs` with outputs of `widths` (GpuLoraEpilogue): the
   * targets' xa rows and B, summed in the order of the trainer's xa B^T product; null where the targets are not all
   * adapted, the rank or widths do not divide by 4, the orders differ, or the B are not views of one buffer.
   */
  private loraEpilogue(l: number, a: LayerActs, tgs: LoraTarget[], widths: number[]): GpuLoraEpilogue | null {
    if (!this.lora || !tgs.every((tg) => a.xa[tg])) return null;
    const order = projectionSumOrder(this.ctx.device, this.lora.spec.rank, widths);
    const B = tgs.map((tg) => this.adapters.get(loraNames(l, tg).B)!);
    const xa = tgs.map((tg) => a.xa[tg]!);
    if (order === null || !spanOf(B) || !spanOf(xa)) return null;
    return { xa, B, scale: this.lora.scale, order };
  }

  /**
   * A decode step's adapted o or down product in two dispatches: xa = x A^T as the trainer runs it, then y += x W^T
   * + s xa B^T (projectionAddLora, the base summed in the order of the trainer's matmul). False, recording nothing,
   * where tg is not adapted (unmerged) or the fused product cannot equal the trainer's.
   */
  private addAdaptedProduct(
    rec: Recorder,
    l: number,
    tg: 'o_proj' | 'down_proj',
    a: LayerActs,
    y: Tensor,
    x: Tensor,
    w: Tensor,
  ): boolean {
    if (this.rolloutMergeLora) return false;
    const K = x.shape[x.shape.length - 1];
    const order = projectionSumOrder(this.ctx.device, K, [this.config.dModel]);
    const lora = order ? this.loraEpilogue(l, a, [tg], [this.config.dModel]) : null;
    if (!order || !lora) return false;
    matmul(rec, lora.xa[0], x.reshape2d(), this.adapters.get(loraNames(l, tg).A)!, { transB: true });
    projectionAddLora(rec, y.reshape2d(), x.reshape2d(), w, { order, lora });
    return true;
  }

  /** Twin: loraForward of src/reference/lora.ts. xa = x A^T (kept), y += s xa B^T; nothing when tg is not adapted. */
  private loraForward(rec: Recorder, l: number, tg: LoraTarget, a: LayerActs, y: Tensor, x: Tensor): void {
    const xa = a.xa[tg];
    if (!this.lora || !xa) return;
    matmul(rec, xa, x.reshape2d(), this.adapters.get(loraNames(l, tg).A)!, { transB: true });
    this.loraUp(rec, l, tg, a, y);
  }

  /** The second half of loraForward: y += s xa B^T from the kept xa. */
  private loraUp(rec: Recorder, l: number, tg: LoraTarget, a: LayerActs, y: Tensor): void {
    const xa = a.xa[tg];
    if (!this.lora || !xa) return;
    const B = this.adapters.get(loraNames(l, tg).B)!;
    matmul(rec, y.reshape2d(), xa, B, { transB: true, accumulate: true, alpha: this.lora.scale });
  }

  /** Twin: loraBackward. dB += s dY^T xa, dA += (s dY B)^T x, dX += (s dY B) A. */
  private loraBackward(
    rec: Recorder,
    ws: Workspace,
    g: WorkspaceGrads,
    l: number,
    tg: LoraTarget,
    dX: Tensor,
    dY: Tensor,
    x: Tensor,
  ): void {
    const xa = ws.layers[l].xa[tg];
    if (!this.lora || !xa || !g.dXa) return;
    const n = loraNames(l, tg);
    const A = this.adapters.get(n.A)!;
    const B = this.adapters.get(n.B)!;
    matmul(rec, this.g(n.B), dY.reshape2d(), xa, { transA: true, accumulate: true, alpha: this.lora.scale });
    matmul(rec, g.dXa, dY.reshape2d(), B, { alpha: this.lora.scale });
    matmul(rec, this.g(n.A), g.dXa, x.reshape2d(), { transA: true, accumulate: true });
    matmul(rec, dX.reshape2d(), g.dXa, A, { accumulate: true });
  }

  /** Final norm on rows of the residual stream: (R, C) -> nf (R, C), the LM head's input. */
  private finalNorm(rec: Recorder, x: Tensor, nf: Tensor, rstd: Tensor): void {
    rmsnormForward(rec, nf, rstd, x, this.p('model.norm.weight'), { eps: this.config.normEps });
  }

  /**
   * LM head on a few rows of final-norm output: (R, C) -> logits (R, V) (a decode step, reading the rollout's
   * weights; training chunks instead).
   */
  private headLogits(rec: Recorder, nf: Tensor, logits: Tensor, weight = this.p(this.headWeight)): void {
    matmul(rec, logits.reshape2d(), nf.reshape2d(), weight, { transB: true });
  }

  /**
   * Training forward over a (B, T) batch up to the final norm: ws.nf (B, T, C) is the LM head's input, and every
   * activation stays in the workspace for backward(). The head itself runs on ws.nf in row chunks.
   */
  forward(rec: Recorder, B: number, T: number, inp: ForwardInputs): Workspace {
    const ws = this.workspaceFor(B, T, this.frozen ? 'infer' : this.recompute ? 'recompute' : 'train');
    embeddingForward(rec, ws.layers[0].x, this.p('model.embed_tokens.weight'), inp.tokens);
    ws.layers.forEach((a, l) =>
      this.layerForward(rec, l, a, l + 1 < ws.layers.length ? ws.layers[l + 1].x : ws.xOut, inp),
    );
    this.finalNorm(rec, ws.xOut, ws.nf, ws.rstdf);
    return ws;
  }

  /**
   * The whole (B, T, V) logits of the last forward into `out`, for small models in tests and parity checks only:
   * training never allocates them (the head runs in row chunks, head-chunked.ts).
   */
  logitsOf(rec: Recorder, ws: Workspace, out: Tensor): void {
    this.headLogits(rec, ws.nf, out);
  }

  /**
   * The head's backward from whole (B, T, V) dLogits (tests and parity checks only, with logitsOf): ws.dn =
   * dLogits E, and dE += dLogits^T nf unless the base is frozen. backward() goes on from ws.dn.
   */
  headBackwardOf(rec: Recorder, ws: Workspace, dLogits: Tensor): void {
    matmul(rec, this.dHidden(ws).reshape2d(), dLogits.reshape2d(), this.p(this.headWeight));
    const dW = this.headGradTensor;
    if (dW) matmul(rec, dW, dLogits.reshape2d(), ws.nf.reshape2d(), { transA: true, accumulate: true });
  }

  /** Sets every gradient to zero (call before the backward of a fresh accumulation). */
  zeroGrads(rec: Recorder): void {
    if (this.packed.length) for (const p of this.packed) fill(rec, p.grads.all, 0);
    else for (const g of this.grads.values()) fill(rec, g, 0);
    if (this.frozenGainGrad) fill(rec, this.frozenGainGrad, 0);
    if (this.frozenHeadGainGrad) fill(rec, this.frozenHeadGainGrad, 0);
  }

  /**
   * Backward of the last forward() from ws.dn, the gradient of the final norm's output, which the head's backward
   * has written (ChunkedHead.backward, or headBackwardOf) along with the head weight's gradient.
   * Gradients ACCUMULATE into this.grads, so several minibatches can add up before one optimizer step. Under
   * LoRA only the adapters' gradients are computed: the base's weight-gradient matmuls are skipped.
   */
  backward(rec: Recorder, ws: Workspace, inp: ForwardInputs): void {
    const c = this.config;
    const g = ws.grad;
    if (!g || this.frozen) throw new Error(`GpuModel.backward: the ${ws.B}x${ws.T} workspace is forward-only`);
    const acc = { accumulate: true };
    const frozen = this.baseFrozen;
    // dW += dY^T X for a base weight, unless the base is frozen.
    const weightGrad = (name: string, dY: Tensor, x: Tensor) => {
      if (!frozen) matmul(rec, this.g(name), dY.reshape2d(), x.reshape2d(), { transA: true, accumulate: true });
    };
    rmsnormBackward(
      rec,
      g.dRes,
      this.gainGrad('model.norm.weight'),
      g.dn,
      ws.xOut,
      this.p('model.norm.weight'),
      ws.rstdf,
    );
    const rope = { theta: c.ropeTheta, scaling: c.ropeScaling, positions: inp.positions };
    for (let l = c.nLayers - 1; l >= 0; l--) {
      const a = ws.layers[l];
      const pre = `model.layers.${l}.`;
      const W = (n: string) => this.p(pre + n);
      const G = (n: string) => this.g(pre + n);
      const adaptBack = (tg: LoraTarget, dX: Tensor, dY: Tensor, x: Tensor) =>
        this.loraBackward(rec, ws, g, l, tg, dX, dY, x);
      // Recompute: this layer's activations again from its input, all but its output (already consumed).
      if (ws.mode === 'recompute') this.layerForward(rec, l, a, null, inp);
      // MLP: x' = h + act Wd^T.
      matmul(rec, g.dAct.reshape2d(), g.dRes.reshape2d(), W('mlp.down_proj.weight'));
      weightGrad(pre + 'mlp.down_proj.weight', g.dRes, a.act);
      adaptBack('down_proj', g.dAct, g.dRes, a.act);
      swigluBackward(rec, g.dGate, g.dUp, g.dAct, a.gate, a.up);
      matmul(rec, g.dn.reshape2d(), g.dGate.reshape2d(), W('mlp.gate_proj.weight'));
      matmul(rec, g.dn.reshape2d(), g.dUp.reshape2d(), W('mlp.up_proj.weight'), acc);
      weightGrad(pre + 'mlp.gate_proj.weight', g.dGate, a.n2);
      weightGrad(pre + 'mlp.up_proj.weight', g.dUp, a.n2);
      adaptBack('gate_proj', g.dn, g.dGate, a.n2);
      adaptBack('up_proj', g.dn, g.dUp, a.n2);
      rmsnormBackward(
        rec,
        g.dRes,
        this.gainGrad(pre + 'post_attention_layernorm.weight'),
        g.dn,
        a.h,
        W('post_attention_layernorm.weight'),
        a.rstd2,
        acc,
      );
      // Attention: h = x + att Wo^T.
      matmul(rec, g.dAtt.reshape2d(), g.dRes.reshape2d(), W('self_attn.o_proj.weight'));
      weightGrad(pre + 'self_attn.o_proj.weight', g.dRes, a.att);
      adaptBack('o_proj', g.dAtt, g.dRes, a.att);
      attentionBackward(rec, g.dq, g.dk, g.dv, g.dAtt, a.q, a.k, a.v, a.att, a.lse, { kvStart: inp.kvStart });
      ropeBackward(rec, g.dq, g.dq, rope);
      ropeBackward(rec, g.dk, g.dk, rope);
      if (a.qkNorm && g.dqkNormed) {
        // dq, dk are the normed heads' gradients here; through the norm they become the projections'.
        const qk = a.qkNorm;
        const dn = g.dqkNormed;
        copy(rec, dn.dq, g.dq);
        copy(rec, dn.dk, g.dk);
        const qn = `${pre}self_attn.q_norm.weight`;
        const kn = `${pre}self_attn.k_norm.weight`;
        rmsnormBackward(rec, g.dq, this.headGainGrad(qn), dn.dq, qk.qPre, this.p(qn), qk.rstdQ);
        rmsnormBackward(rec, g.dk, this.headGainGrad(kn), dn.dk, qk.kPre, this.p(kn), qk.rstdK);
      }
      if (c.qkvBias && !frozen) {
        // dq, dk, dv are the gradients of the projections' outputs here, so each bias gets their column sums.
        biasGrad(rec, G('self_attn.q_proj.bias'), g.dq.reshape2d());
        biasGrad(rec, G('self_attn.k_proj.bias'), g.dk.reshape2d());
        biasGrad(rec, G('self_attn.v_proj.bias'), g.dv.reshape2d());
      }
      matmul(rec, g.dn.reshape2d(), g.dq.reshape2d(), W('self_attn.q_proj.weight'));
      matmul(rec, g.dn.reshape2d(), g.dk.reshape2d(), W('self_attn.k_proj.weight'), acc);
      matmul(rec, g.dn.reshape2d(), g.dv.reshape2d(), W('self_attn.v_proj.weight'), acc);
      weightGrad(pre + 'self_attn.q_proj.weight', g.dq, a.n1);
      weightGrad(pre + 'self_attn.k_proj.weight', g.dk, a.n1);
      weightGrad(pre + 'self_attn.v_proj.weight', g.dv, a.n1);
      adaptBack('q_proj', g.dn, g.dq, a.n1);
      adaptBack('k_proj', g.dn, g.dk, a.n1);
      adaptBack('v_proj', g.dn, g.dv, a.n1);
      rmsnormBackward(
        rec,
        g.dRes,
        this.gainGrad(pre + 'input_layernorm.weight'),
        g.dn,
        a.x,
        W('input_layernorm.weight'),
        a.rstd1,
        acc,
      );
    }
    if (!frozen) embeddingBackward(rec, this.g('model.embed_tokens.weight'), g.dRes, inp.tokens);
  }

  /** Each packed group with its moments once the first optimizer step has made them (ensureMoments). */
  private packedGroups(): (PackedTensors & Partial<PackedMoments>)[] {
    return this.packed.map((p, g) => ({ ...p, ...this.packedMoments[g] }));
  }

  private ensureMoments(): void {
    if (this.m.size) return;
    this.packedMoments = this.packed.map((p) => momentsOf(this.ctx, p));
    this.packed.forEach((p, g) =>
      p.names.forEach((name, i) => {
        this.m.set(name, this.packedMoments[g].m.views[i]);
        this.v.set(name, this.packedMoments[g].v.views[i]);
      }),
    );
    if (this.packed.length) return;
    for (const [name, p] of this.trained) {
      this.m.set(name, this.ctx.tensor(p.shape, { label: `adam_m:${name}` }));
      this.v.set(name, this.ctx.tensor(p.shape, { label: `adam_v:${name}` }));
    }
  }

  /** One clipped AdamW step on the accumulated gradients, on the GPU (no readback). */
  optimizerStep(rec: Recorder, opts: StepOptions): void {
    this.ensureMoments();
    this.step += 1;
    const trained = this.trained;
    const names = [...trained.keys()];
    clippedAdamwStep(
      rec,
      this.gradNorm,
      this.clipScale,
      {
        params: names.map((n) => trained.get(n)!),
        m: names.map((n) => this.m.get(n)!),
        v: names.map((n) => this.v.get(n)!),
        grads: names.map((n) => this.grads.get(n)!),
        ...(this.packed.length ? { packed: this.packedGroups() as PackedOptimizer[] } : {}),
      },
      clippedAdamwOptions(opts, this.step),
    );
  }

  /** A KV cache for `rows` sequences of up to `capacity` positions, stored in `dtype` (default: kvDtype). */
  createKvCache(rows: number, capacity: number, dtype: WeightDtype = this.kvDtype): KvCache {
    const c = this.config;
    if (capacity > c.contextLength) {
      throw new Error(`KV cache of ${capacity} positions exceeds the model's context length ${c.contextLength}`);
    }
    const shape = [rows, capacity, c.nKvHeads, this.HD];
    const t = (label: string) => this.ctx.tensor(shape, { dtype, label });
    const k = Array.from({ length: c.nLayers }, (_, l) => t(`kcache.L${l}`));
    const v = Array.from({ length: c.nLayers }, (_, l) => t(`vcache.L${l}`));
    return { rows, capacity, k, v };
  }

  /**
   * Whether a forward against a KV cache can take a decode cursor (src/kernels/decode.ts): its fused RoPE and cache
   * write (ropeDecodeKv) needs a head dim divisible by 4; the separate kernels of other head dims take none.
   */
  get decodeCursorFits(): boolean {
    return this.HD % 4 === 0;
  }

  /**
   * Forward of T new positions per row against a KV cache (prefill: T = prompt length; decode: T = 1), writing
   * their keys and values at cache position `pos`. Returns the logits of each row's last new position (rows, V).
   * With a cursor (decodeCursorFits) `pos` and inp.positions are moved by its GPU value less cursor.value.
   */
  decodeForward(
    rec: Recorder,
    ws: Workspace,
    kv: KvCache,
    pos: number,
    inp: ForwardInputs,
    lastRows: Tensor<'u32'>,
    out: { x: Tensor; nf: Tensor; rstd: Tensor; logits: Tensor },
    cursor?: DecodeCursor,
  ): void {
    embeddingForward(rec, ws.layers[0].x, this.rolloutWeight('model.embed_tokens.weight'), inp.tokens);
    ws.layers.forEach((a, l) =>
      this.layerForward(rec, l, a, l + 1 < ws.layers.length ? ws.layers[l + 1].x : ws.xOut, inp, {
        kv,
        pos,
        cursor,
      }),
    );
    gatherRows(rec, out.x, ws.xOut.reshape2d(), lastRows);
    this.finalNorm(rec, out.x, out.nf, out.rstd);
    this.headLogits(rec, out.nf, out.logits, this.rolloutWeight(this.headWeight));
  }

  private destroyWorkspace(key: string): void {
    const ws = this.workspaces.get(key);
    if (!ws) return;
    this.workspaces.delete(key);
    // Layers may share tensors ('infer', 'recompute'): each is destroyed once.
    const tensors = new Set<Tensor>([ws.xOut, ws.nf, ws.rstdf]);
    for (const a of ws.layers) {
      for (const [name, t] of Object.entries(a))
        if (name !== 'xa' && name !== 'xaArena' && name !== 'qkNorm') tensors.add(t as Tensor);
      if (a.xaArena) tensors.add(a.xaArena);
      for (const t of Object.values(a.qkNorm ?? {})) tensors.add(t);
    }
    for (const [name, t] of Object.entries(ws.grad ?? {})) if (t && name !== 'dqkNormed') tensors.add(t as Tensor);
    for (const t of Object.values(ws.grad?.dqkNormed ?? {})) tensors.add(t);
    for (const t of tensors) t.destroy();
  }

  /** Frees every buffer of the model. */
  destroy(): void {
    for (const key of [...this.workspaces.keys()]) this.destroyWorkspace(key);
    for (const map of [this.rolloutParams, this.mergeScratch, this.adapters, this.grads, this.m, this.v])
      for (const t of map.values()) t.destroy();
    if (this.paramsOwned) for (const t of this.params.values()) t.destroy();
    for (const p of this.packedGroups()) destroyPacked(p);
    for (const t of this.vectorArenas) t.destroy();
    this.frozenGainGrad?.destroy();
    this.frozenHeadGainGrad?.destroy();
    this.gradNorm.destroy();
    this.clipScale.destroy();
  }
}
