// The distillation teacher as the trainer scores with it: a frozen copy of a model of the student's vocabulary
// (any size and depth) that runs the learner's own scoring pass, score() with the policy's forward and LM head, on
// the student's sampled sequences and returns log pi_T of every completion token. On WebGPU it is a GpuLearner
// whose policy is frozen (no gradients or AdamW moments, matrices stored at weight_dtype: half allowed); on the CPU
// twins a CpuLearner over the same weights rounded the same way, so GPU = twin is the learners' own check. Not the
// loading of its files (src/engine/teacher.ts) or the advantage (src/rl/algorithm/distillation.ts).

import type { ParamArrays } from '../../io/checkpoint';
import type { WeightDtype } from '../../core/half';
import type { ModelConfig } from '../../schema/model-config';
import type { SequenceBatch } from '../algorithm/batch';
import { CpuLearner } from './cpu-learner';
import { GpuLearner, type Learner } from './learner';
import type { PolicyBackend } from './learner-policy';

/** A teacher's weights as loaded, and where they came from in words. */
export interface TeacherWeights {
  config: ModelConfig;
  params: ParamArrays;
  /** "teacher checkpoints/copy/" */
  source: string;
}

/** Scores the student's sampled sequences under a frozen teacher. */
export class Teacher {
  private readonly learner: Learner;

  constructor(
    readonly weights: Readonly<TeacherWeights>,
    backend: PolicyBackend,
    opts: { maxRows: number; weightDtype: WeightDtype },
  ) {
    const init = {
      config: weights.config,
      params: weights.params,
      needsReference: false,
      needsCritic: false,
      maxRows: opts.maxRows,
      weightDtype: opts.weightDtype,
      frozen: true,
    };
    this.learner = backend.kind === 'webgpu' ? new GpuLearner(backend.ctx, init) : new CpuLearner(init);
  }

  get source(): string {
    return this.weights.source;
  }

  /** log pi_T(y_t | c_t) of every completion token of the batches, (sum N * S) in their order, at `temperature`. */
  async logprobs(batches: SequenceBatch[], temperature: number): Promise<Float32Array> {
    const scored = await this.learner.score(batches, temperature, true);
    return scored.oldLogp!;
  }

  destroy(): void {
    this.learner.destroy();
  }
}
