// A supervised run (SFT on the task's demonstrations, src/rl/sft.ts) as a trainer the run session steps like any
// other: each step is one optimizer step of train_batch_size x num_generations demonstrations on the real trainer's
// policy, recorded as a step record (its loss and learning rate), with the trainer's held-out evaluation on the
// trainer's schedule (before the first step and every eval_every steps and after the last, when eval_every > 0).
// So the page, the lesson runner and the CLI drive SFT through the one run loop (run-session.ts). Not resumable:
// it keeps no trainer state (the session saves no resume point for it).

import type { RLConfig } from '../rl/config';
import { taskOf } from '../rl/config';
import { trainSft, type SftOptions } from '../rl/sft';
import type { EvalRecord, StepRecord } from '../rl/stream';
import type { TrainerLike } from './run-session';

export type { RunMode } from './types';

/**
 * The supervised options of a config: `steps` steps of train_batch_size x num_generations demonstrations (as many
 * sequences as an RL step samples), peak learning_rate without warmup (sft.ts decays it to a tenth over the run),
 * the config's weight decay, gradient clip and seed; the loss read back every step.
 */
export function supervisedOptions(config: RLConfig): SftOptions {
  return {
    steps: config.steps,
    batchSize: config.train_batch_size * config.num_generations,
    lr: config.learning_rate,
    warmup: 0,
    weightDecay: config.weight_decay,
    maxGradNorm: config.max_grad_norm > 0 ? config.max_grad_norm : undefined,
    seed: config.seed,
    noise: 0,
    logEvery: 1,
  };
}

/** `base`'s policy trained by supervised steps instead of rollouts; `base` is destroyed with it. */
export function supervisedTrainer(base: TrainerLike, config: RLConfig): TrainerLike {
  const setting = base.setting;
  if (!setting) {
    base.destroy();
    throw new Error('a supervised (sft) run needs the real trainer');
  }
  const sft = trainSft(setting.policy, taskOf(config), setting.tokenizer, supervisedOptions(config));
  let step = 0;
  const evaluateAt = async (at: number): Promise<EvalRecord> => ({ ...(await base.evaluate()), step: at });
  return {
    get step() {
      return step;
    },
    setting,
    async runStep(): Promise<StepRecord[]> {
      const initialEval = config.eval_every > 0 && step === 0 ? await evaluateAt(0) : undefined;
      const next = await sft.next();
      if (next.done) throw new Error(`the supervised run has done all its ${config.steps} steps`);
      step = next.value.step;
      const record: StepRecord = {
        kind: 'step',
        step,
        optimizerStep: step,
        update: 0,
        updates: 1,
        epoch: 0,
        minibatch: 0,
        metrics: { loss: next.value.loss, learning_rate: next.value.lr },
      };
      if (initialEval) record.initialEval = initialEval;
      if (config.eval_every > 0 && (step % config.eval_every === 0 || step === config.steps))
        record.eval = await evaluateAt(step);
      return [record];
    },
    evaluate: () => evaluateAt(step),
    saveStateBytes: async () => {
      throw new Error('a supervised (sft) run keeps no resume point: start it again to train it again');
    },
    exportCheckpoint: () => base.exportCheckpoint(),
    destroy: () => {
      void sft.return(undefined);
      base.destroy();
    },
  };
}
