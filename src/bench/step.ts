// One SFT training step of our GPU model at a fixed (B, T) batch, split into the phases the benchmark times:
// forward (embedding to logits), loss (cross-entropy and its gradient), backward (zero grads + backward) and
// the optimizer (grad-norm clip + AdamW). Also the batch every side of the comparison (ours, tfjs, CPU twin) uses.
// The peers compute whole (B, T, V) logits and a cross-entropy on them, so this fixture does too (the bench's
// presets are small); the trainers' own paths run the LM head in row chunks (src/kernels/head-chunked.ts).
// Not the RL trainer (src/rl): a bench fixture over GpuModel's public API.

import type { GpuContext, Recorder, Tensor } from '../gpu';
import { crossEntropyBackward, crossEntropyForward } from '../kernels/cross-entropy';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { GpuModel, type ForwardInputs, type StepOptions, type Workspace } from '../model/gpu-model';
import { initParams } from '../core/model-shapes';
import { Rng } from '../core/random';

/** The optimizer settings every side of the comparison uses. */
export const BENCH_STEP: StepOptions = { lr: 1e-3, weightDecay: 0.01, maxGradNorm: 1.0 };

/** A training batch: N = B*T token ids, next-token targets, every row counted. */
export interface Batch {
  B: number;
  T: number;
  tokens: Uint32Array; // (B*T)
  targets: Uint32Array; // (B*T)
}

/** Random tokens and their next tokens (the last target of a row is random), from a seed. */
export function randomBatch(config: ModelConfig, B: number, T: number, seed = 2): Batch {
  const rng = new Rng(seed);
  const seq = Uint32Array.from({ length: B * (T + 1) }, () => rng.int(config.vocabSize));
  const tokens = new Uint32Array(B * T);
  const targets = new Uint32Array(B * T);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      tokens[b * T + t] = seq[b * (T + 1) + t];
      targets[b * T + t] = seq[b * (T + 1) + t + 1];
    }
  }
  return { B, T, tokens, targets };
}

/** Initial weights for a preset (small normal init, as training starts), as f32 arrays by HF name. */
export function benchParams(config: ModelConfig, seed = 1, std = 0.02): ParamArrays {
  const p = initParams(config, new Rng(seed), { std });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** Our model plus the batch's tensors; record() appends the phases of one step to a recorder. */
export class OurStep {
  readonly inputs: ForwardInputs;
  readonly targets: Tensor<'u32'>;
  readonly mask: Tensor;
  readonly loss: Tensor;
  readonly logits: Tensor;
  readonly dLogits: Tensor;
  private ws: Workspace | null = null;

  private constructor(
    readonly ctx: GpuContext,
    readonly model: GpuModel,
    readonly batch: Batch,
  ) {
    const { B, T } = batch;
    const N = B * T;
    const u32 = (data: Uint32Array, label: string) => ctx.fromArray<'u32'>(data, [N], { dtype: 'u32', label });
    this.inputs = {
      tokens: u32(batch.tokens, 'bench.tokens'),
      positions: u32(
        Uint32Array.from({ length: N }, (_, i) => i % T),
        'bench.positions',
      ),
    };
    this.targets = u32(batch.targets, 'bench.targets');
    this.mask = ctx.fromArray(new Float32Array(N).fill(1), [N], { label: 'bench.mask' });
    this.loss = ctx.tensor([1], { label: 'bench.loss' });
    this.logits = ctx.tensor([B, T, model.config.vocabSize], { label: 'bench.logits' });
    this.dLogits = ctx.tensor([B, T, model.config.vocabSize], { label: 'bench.dLogits' });
  }

  static create(ctx: GpuContext, config: ModelConfig, params: ParamArrays, batch: Batch): OurStep {
    return new OurStep(ctx, GpuModel.create(ctx, config, params, batch.B), batch);
  }

  forward(rec: Recorder): void {
    this.ws = this.model.forward(rec, this.batch.B, this.batch.T, this.inputs);
    this.model.logitsOf(rec, this.ws, this.logits);
  }

  lossAndGrad(rec: Recorder): void {
    const logits = this.logits.reshape2d();
    crossEntropyForward(rec, this.loss, logits, this.targets, this.mask);
    crossEntropyBackward(rec, this.dLogits.reshape2d(), logits, this.targets, this.mask);
  }

  backward(rec: Recorder): void {
    this.model.zeroGrads(rec);
    this.model.headBackwardOf(rec, this.workspace(), this.dLogits);
    this.model.backward(rec, this.workspace(), this.inputs);
  }

  optimizer(rec: Recorder, opts: StepOptions = BENCH_STEP): void {
    this.model.optimizerStep(rec, opts);
  }

  /** The whole step in one recorder, as a trainer records it. */
  record(rec: Recorder, opts: StepOptions = BENCH_STEP): void {
    this.forward(rec);
    this.lossAndGrad(rec);
    this.backward(rec);
    this.optimizer(rec, opts);
  }

  /** Runs one whole step and returns the loss computed before the update. */
  async step(opts: StepOptions = BENCH_STEP): Promise<number> {
    const rec = this.ctx.recorder('bench.step');
    this.record(rec, opts);
    rec.submit();
    return (await this.ctx.read(this.loss))[0];
  }

  /** The loss of the current weights without training. */
  async evalLoss(): Promise<number> {
    const rec = this.ctx.recorder('bench.eval');
    this.forward(rec);
    crossEntropyForward(rec, this.loss, this.logits.reshape2d(), this.targets, this.mask);
    rec.submit();
    return (await this.ctx.read(this.loss))[0];
  }

  private workspace(): Workspace {
    if (!this.ws) throw new Error('OurStep: forward() must be recorded first');
    return this.ws;
  }

  destroy(): void {
    for (const t of [
      this.inputs.tokens,
      this.inputs.positions,
      this.targets,
      this.mask,
      this.loss,
      this.logits,
      this.dLogits,
    ])
      t.destroy();
    this.model.destroy();
  }
}
