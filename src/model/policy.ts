// The policy behind one interface on either backend: WebGPU (the WGSL kernels through GpuModel) or the CPU
// twins (the oracle in tests, and a slow fallback for the smallest presets where a browser has no WebGPU).
// Trainers and evaluation talk to a Policy, never to a backend directly.

import type { GpuContext, Tensor } from '../gpu';
import { ChunkedHead } from '../kernels/head-chunked';
import * as ref from '../reference/cross-entropy';
import { mergeLoraAdapters } from '../reference/lora';
import { loraBaseWeight, loraShapes } from '../core/lora-layout';
import { modelBackward, modelForward, type ModelLora } from '../reference/model';
import { paramShapes, type ModelParams } from '../core/model-shapes';
import { clippedAdamwStep } from '../reference/optimizer';
import { sampleTokens } from '../reference/sampler';
import { host, type HostTensor } from '../core/host-tensor';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { generate, type GenerateOptions, type Rollout } from './generate';
import {
  clippedAdamwOptions,
  GpuModel,
  rolloutOptionsProblem,
  type GpuModelOptions,
  type LoraInit,
  type StepOptions,
} from './gpu-model';
import { maxOf } from '../schema/extremes';
import { endOfSequenceIds } from '../io/end-of-sequence';
import { roundToWeightDtype, storesHalf, type WeightDtype } from '../core/half';

/** A right-padded batch of B sequences of T tokens for supervised steps; position t of a row is t. */
export interface SftBatch {
  B: number;
  T: number;
  /** (B*T) input tokens. */
  tokens: Uint32Array;
  /** (B*T) next-token targets (ignored where mask is 0). */
  targets: Uint32Array;
  /** (B*T) 1 where the target is supervised. */
  mask: Float32Array;
}

export interface Policy {
  readonly backend: 'webgpu' | 'cpu';
  readonly config: ModelConfig;
  /** One completion per prompt (token ids, BOS first), sampled with the options' seed. */
  generate(prompts: readonly (readonly number[])[], opts: GenerateOptions): Promise<Rollout>;
  /** One supervised step: masked cross-entropy, backward, clipped AdamW. Returns the loss when asked (a readback). */
  sftStep(batch: SftBatch, opts: StepOptions & { readLoss: boolean }): Promise<number | undefined>;
  /** The parameters, for checkpoints (under LoRA the merged weights W + s B A, in the base's layout). */
  download(): Promise<ParamArrays>;
  destroy(): void;
}

/**
 * The GPU buffers of a supervised step of one (B, T) shape. The masked-mean cross-entropy runs through the chunked
 * LM head (no (B, T, V) logits): loss = -sum mask logp / sum mask, so d loss / d logp = -mask / sum mask.
 */
interface SftTensors {
  tokens: Tensor<'u32'>;
  targets: Tensor<'u32'>;
  positions: Tensor<'u32'>;
  logp: Tensor;
  entropy: Tensor;
  dLogp: Tensor;
  dEntropy: Tensor;
  head: ChunkedHead;
}

/** The policy on the GPU. */
export class GpuPolicy implements Policy {
  readonly backend = 'webgpu';
  private sft: { key: string; tensors: SftTensors } | null = null;

  constructor(readonly model: GpuModel) {}

  static create(
    ctx: GpuContext,
    config: ModelConfig,
    params: ParamArrays,
    maxRows?: number,
    lora?: LoraInit,
    opts: GpuModelOptions = {},
  ): GpuPolicy {
    return new GpuPolicy(GpuModel.create(ctx, config, params, maxRows, 2, lora, opts));
  }

  get config(): ModelConfig {
    return this.model.config;
  }

  generate(prompts: readonly (readonly number[])[], opts: GenerateOptions): Promise<Rollout> {
    return generate(this.model, prompts, opts);
  }

  private buffers(B: number, T: number): SftTensors {
    const key = `${B}x${T}`;
    if (this.sft?.key === key) return this.sft.tensors;
    if (this.sft) for (const t of Object.values(this.sft.tensors)) t.destroy();
    const { ctx, config } = this.model;
    const N = B * T;
    const u32 = (label: string) => ctx.tensor<'u32'>([N], { dtype: 'u32', label });
    const tensors = {
      tokens: u32('sft.tokens'),
      targets: u32('sft.targets'),
      positions: ctx.fromArray<'u32'>(
        Uint32Array.from({ length: N }, (_, i) => i % T),
        [N],
        { dtype: 'u32', label: 'sft.positions' },
      ),
      logp: ctx.tensor([N], { label: 'sft.logp' }),
      entropy: ctx.tensor([N], { label: 'sft.entropy' }),
      dLogp: ctx.tensor([N], { label: 'sft.dLogp' }),
      dEntropy: ctx.tensor([N], { label: 'sft.dEntropy' }),
      head: new ChunkedHead(ctx, { dModel: config.dModel, vocabSize: config.vocabSize, maxRows: N, reference: false }),
    };
    this.sft = { key, tensors };
    return tensors;
  }

  async sftStep(batch: SftBatch, opts: StepOptions & { readLoss: boolean }): Promise<number | undefined> {
    const { ctx } = this.model;
    const b = this.buffers(batch.B, batch.T);
    ctx.upload(b.tokens, batch.tokens);
    ctx.upload(b.targets, batch.targets);
    const count = batch.mask.reduce((a, m) => a + m, 0);
    ctx.upload(
      b.dLogp,
      batch.mask.map((m) => (count > 0 ? -m / count : 0)),
    );
    const rec = ctx.recorder('sft.step');
    const inp = { tokens: b.tokens, positions: b.positions };
    const ws = this.model.forward(rec, batch.B, batch.T, inp);
    const side = { h: ws.nf, W: this.model.headWeightTensor };
    const args = { policy: side, targets: b.targets, temperature: 1 };
    b.head.forward(rec, { ...args, logp: b.logp, entropy: b.entropy });
    this.model.zeroGrads(rec);
    b.head.backward(rec, {
      ...args,
      dLogp: b.dLogp,
      dEntropy: b.dEntropy,
      dH: this.model.dHidden(ws),
      dW: this.model.headGradTensor,
    });
    this.model.backward(rec, ws, inp);
    this.model.optimizerStep(rec, opts);
    rec.submit();
    if (!opts.readLoss) return undefined;
    const logp = await ctx.read(b.logp);
    let loss = 0;
    for (let i = 0; i < logp.length; i++) if (batch.mask[i]) loss -= batch.mask[i] * logp[i];
    return count > 0 ? loss / count : 0;
  }

  download(): Promise<ParamArrays> {
    return this.model.download();
  }

  destroy(): void {
    if (this.sft) for (const t of Object.values(this.sft.tensors)) t.destroy();
    this.model.destroy();
  }
}

/**
 * The policy on the CPU twins: the same math as the GPU path in plain TypeScript. Decoding recomputes the full
 * forward each step (no KV cache), which is fine for the smallest presets and far too slow for the large ones.
 */
export class CpuPolicy implements Policy {
  readonly backend = 'cpu';
  /** Parameters by HF name (the RL learner's CPU path reads and updates them); frozen under LoRA. */
  readonly params: ModelParams;
  /** LoRA adapters on the base (their names: loraShapes), or null. */
  readonly lora: ModelLora | null;
  /** AdamW moments of what is trained: every parameter, or under LoRA the adapters. */
  readonly m: ModelParams;
  readonly v: ModelParams;
  /** Optimizer steps taken (AdamW's t). */
  step = 0;
  /** The dtype the sampler reads the matrices in (twin of GpuModelOptions.rolloutDtype). */
  readonly rolloutDtype: WeightDtype;
  /** Under LoRA, the sampler reads the merged matrices W + s B A (twin of GpuModelOptions.rolloutMergeLora). */
  readonly rolloutMergeLora: boolean;

  /** The twin of the GPU's KV-cache dtype: decoding rounds the keys and values it attends to (default f32). */
  readonly kvDtype: WeightDtype;

  constructor(
    readonly config: ModelConfig,
    params: ParamArrays,
    lora?: LoraInit,
    opts: { rolloutDtype?: WeightDtype; rolloutMergeLora?: boolean; kvDtype?: WeightDtype } = {},
  ) {
    this.rolloutDtype = opts.rolloutDtype ?? 'f32';
    this.rolloutMergeLora = opts.rolloutMergeLora ?? false;
    const problem = rolloutOptionsProblem(opts, { lora: lora !== undefined, frozen: false });
    if (problem) throw new Error(`CpuPolicy: ${problem}`);
    this.kvDtype = opts.kvDtype ?? 'f32';
    const make = (shapes: { name: string; shape: number[] }[], fill: (name: string, n: number) => Float32Array) =>
      Object.fromEntries(
        shapes.map(({ name, shape }) => [
          name,
          host(
            fill(
              name,
              shape.reduce((a, b) => a * b, 1),
            ),
            shape,
          ),
        ]),
      );
    this.params = make(paramShapes(config), (name) => Float32Array.from(params[name]));
    const trained = lora ? loraShapes(config, lora.spec) : paramShapes(config);
    this.lora = lora
      ? { spec: lora.spec, adapters: make(trained, (name) => Float32Array.from(lora.adapters[name])) }
      : null;
    this.m = make(trained, (_, n) => new Float32Array(n));
    this.v = make(trained, (_, n) => new Float32Array(n));
  }

  async generate(prompts: readonly (readonly number[])[], opts: GenerateOptions): Promise<Rollout> {
    const R = prompts.length;
    const S = opts.maxNewTokens;
    const V = this.config.vocabSize;
    const longest = maxOf(prompts.map((p) => p.length));
    if (longest + S > this.config.contextLength) {
      throw new Error(
        `generate: prompt length ${longest} + maxNewTokens ${S} exceeds the model's context length ${this.config.contextLength}`,
      );
    }
    const seqs = prompts.map((p) => [...p]);
    const out = {
      tokens: new Uint32Array(R * S).fill(opts.padId),
      logprobs: new Float32Array(R * S),
      entropies: new Float32Array(R * S),
      mask: new Float32Array(R * S),
    };
    const done = new Uint8Array(R);
    const eos = new Set(endOfSequenceIds(opts));
    const weights = this.rolloutWeights();
    const lora = this.rolloutMergeLora ? undefined : (this.lora ?? undefined);
    let steps = 0;
    for (let s = 0; s < S && !done.every(Boolean); s++) {
      steps++;
      // Every row's last-position logits in one (R, V) tensor, so the sampler's per-row RNG streams match the GPU's.
      const logits = host(new Float32Array(R * V), [R, V]);
      for (let r = 0; r < R; r++) {
        if (done[r]) continue;
        const seq = Uint32Array.from(seqs[r]);
        const { logits: l } = modelForward(this.config, weights, seq, 1, seq.length, lora, {
          kvDtype: this.kvDtype,
        });
        logits.data.set(l.data.subarray((seq.length - 1) * V, seq.length * V), r * V);
      }
      const tok = new Uint32Array(R);
      const lp = host(new Float32Array(R), [R]);
      const ent = host(new Float32Array(R), [R]);
      const filtered = host(new Float32Array(R), [R]);
      sampleTokens(tok, lp, ent, filtered, logits, { ...opts.sampler, step: s });
      const recorded = opts.recordFiltered ? filtered : lp;
      for (let r = 0; r < R; r++) {
        if (done[r]) continue;
        const i = r * S + s;
        out.tokens[i] = tok[r];
        out.logprobs[i] = recorded.data[r];
        out.entropies[i] = ent.data[r];
        out.mask[i] = 1;
        seqs[r].push(tok[r]);
        if (eos.has(tok[r])) done[r] = 1;
      }
    }
    const lengths = Uint32Array.from({ length: R }, (_, r) => seqs[r].length - prompts[r].length);
    return { rows: R, maxNewTokens: S, ...out, lengths, finished: Array.from(done, Boolean), steps, readbacks: 0 };
  }

  /**
   * The parameters as the sampler reads them: the matrices rounded to rolloutDtype and widened back (what the GPU's
   * half copy holds, half-pack.wgsl), the gains and biases as they are; the parameters themselves for f32. Under a
   * merged LoRA rollout, the adapted matrices merged (W + s B A) and rounded to rolloutDtype, the others as stored.
   */
  private rolloutWeights(): ModelParams {
    const dtype = this.rolloutDtype;
    if (this.rolloutMergeLora && this.lora) {
      const { spec, adapters } = this.lora;
      const adapted = new Set(
        Array.from({ length: this.config.nLayers }, (_, l) => spec.targets.map((tg) => loraBaseWeight(l, tg))).flat(),
      );
      const arrays = (p: ModelParams, names: Iterable<string>) =>
        Object.fromEntries([...names].map((k) => [k, Float32Array.from(p[k].data)]));
      const merged = mergeLoraAdapters(
        this.config,
        spec,
        arrays(this.params, adapted),
        arrays(adapters, Object.keys(adapters)),
      );
      return Object.fromEntries(
        Object.entries(this.params).map(([name, t]) => [
          name,
          adapted.has(name) ? host(roundToWeightDtype(merged[name], dtype), t.shape) : t,
        ]),
      );
    }
    if (dtype === 'f32') return this.params;
    return Object.fromEntries(
      Object.entries(this.params).map(([name, t]) => [
        name,
        storesHalf(t.shape) ? host(roundToWeightDtype(Float32Array.from(t.data), dtype), t.shape) : t,
      ]),
    );
  }

  async sftStep(batch: SftBatch, opts: StepOptions & { readLoss: boolean }): Promise<number | undefined> {
    const { B, T } = batch;
    const V = this.config.vocabSize;
    const { logits, cache } = modelForward(this.config, this.params, batch.tokens, B, T, this.lora ?? undefined);
    const flat = host(logits.data, [B * T, V]);
    const loss = host(new Float32Array(1), [1]);
    ref.crossEntropyForward(loss, flat, batch.targets, batch.mask);
    const dLogits = host(new Float32Array(B * T * V), [B, T, V]);
    ref.crossEntropyBackward(host(dLogits.data, [B * T, V]), flat, batch.targets, batch.mask);
    this.optimizerStep(modelBackward(this.config, this.params, cache, dLogits, this.lora ?? undefined), opts);
    return opts.readLoss ? loss.data[0] : undefined;
  }

  /**
   * One clipped AdamW step with `grads` (by parameter name) on what is trained (under LoRA the adapters; the base's
   * gradients, if given, are ignored); returns the global gradient norm before clipping.
   */
  optimizerStep(grads: ModelParams, opts: StepOptions): number {
    this.step += 1;
    const trained = this.lora ? this.lora.adapters : this.params;
    const names = Object.keys(this.m);
    const norm: HostTensor = host(new Float32Array(1), [1]);
    const scale: HostTensor = host(new Float32Array(1), [1]);
    clippedAdamwStep(
      norm,
      scale,
      {
        params: names.map((n) => trained[n]),
        m: names.map((n) => this.m[n]),
        v: names.map((n) => this.v[n]),
        grads: names.map((n) => grads[n]),
      },
      clippedAdamwOptions(opts, this.step),
    );
    return norm.data[0];
  }

  /** The parameters (for checkpoints); under LoRA the merged weights W + s B A. */
  async download(): Promise<ParamArrays> {
    const arrays = (p: ModelParams) =>
      Object.fromEntries(Object.entries(p).map(([k, t]) => [k, Float32Array.from(t.data)]));
    const base = arrays(this.params);
    return this.lora ? mergeLoraAdapters(this.config, this.lora.spec, base, arrays(this.lora.adapters)) : base;
  }

  destroy(): void {}
}
