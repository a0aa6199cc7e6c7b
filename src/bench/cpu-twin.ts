// The CPU twin's training step, for scale beside the GPU figures: the reference model's forward and backward
// (src/reference/model.ts), the reference cross-entropy and the reference clipped AdamW, in f32, single-threaded
// JavaScript. Not an optimized CPU trainer: the oracle the GPU kernels are tested against.

import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { clippedAdamwOptions, type StepOptions } from '../model/gpu-model';
import { crossEntropyBackward, crossEntropyForward } from '../reference/cross-entropy';
import { modelBackward, modelForward } from '../reference/model';
import { paramShapes, type ModelParams } from '../core/model-shapes';
import { clippedAdamwStep } from '../reference/optimizer';
import { host, type HostTensor } from '../core/host-tensor';
import type { Batch } from './step';

/** Reference weights, AdamW moments and the batch; step() runs one whole training step. */
export class CpuTwinStep {
  private readonly params: ModelParams = {};
  private readonly m: HostTensor[] = [];
  private readonly v: HostTensor[] = [];
  private readonly names: string[];
  private readonly mask: Float32Array;
  private t = 0;

  constructor(
    readonly config: ModelConfig,
    weights: ParamArrays,
    readonly batch: Batch,
  ) {
    this.names = paramShapes(config).map((s) => s.name);
    for (const { name, shape } of paramShapes(config)) {
      this.params[name] = host(Float32Array.from(weights[name]), shape);
      this.m.push(host(new Float32Array(weights[name].length), shape));
      this.v.push(host(new Float32Array(weights[name].length), shape));
    }
    this.mask = new Float32Array(batch.B * batch.T).fill(1);
  }

  /** One step; returns the loss before the update. */
  step(opts: StepOptions): number {
    const { B, T, tokens, targets } = this.batch;
    const V = this.config.vocabSize;
    const { logits, cache } = modelForward(this.config, this.params, tokens, B, T);
    const flat = host(logits.data as Float32Array, [B * T, V]);
    const loss = host(new Float32Array(1), [1]);
    crossEntropyForward(loss, flat, targets, this.mask);
    const dLogits = host(new Float32Array(B * T * V), [B, T, V]);
    crossEntropyBackward(host(dLogits.data, [B * T, V]), flat, targets, this.mask);
    const grads = modelBackward(this.config, this.params, cache, dLogits);
    this.t += 1;
    clippedAdamwStep(
      host(new Float32Array(1), [1]),
      host(new Float32Array(1), [1]),
      { params: this.names.map((n) => this.params[n]), m: this.m, v: this.v, grads: this.names.map((n) => grads[n]) },
      clippedAdamwOptions(opts, this.t),
    );
    return loss.data[0];
  }
}
