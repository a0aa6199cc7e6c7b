// The one place the engine meets the trainer (src/rl/trainer.ts): the slice of its API the lab uses, as an
// interface the engine's tests can also satisfy, and the default factory and state codec. Not the trainer.

import type { GpuContext } from '../gpu';
import type { Checkpoint, ParamArrays } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import type { Tokenizer } from '../model/tokenizer';
import type { CompareSource, ObjectiveComparison } from '../rl/compare';
import type { RLConfig } from '../rl/config';
import type { EvalRecord, StepRecord } from '../rl/stream';
import { Trainer } from '../rl/trainer';
import { decodeTrainerState, encodeTrainerState, type TrainerState } from '../rl/trainer-state';
import type { LearnedReward } from '../rl/learned-reward';
import type { UserRewardSandbox } from '../rl/user-reward';
import { loadLearnedReward } from './learned-reward';
import type { AssetLoader } from './start-policy';

/** Where the trainer runs: the WGSL kernels on a device, or the CPU twins. */
export type TrainerBackend = { kind: 'webgpu'; ctx: GpuContext } | { kind: 'cpu' };

/** What the engine needs from a trainer. */
export interface TrainerLike {
  /** Rollout steps done. */
  readonly step: number;
  /** One rollout batch and its optimizer steps' records (the last carries sampled groups and maybe an eval). */
  runStep(): Promise<StepRecord[]>;
  evaluate(): Promise<EvalRecord>;
  /** Everything needed to continue the run later, as bytes. */
  saveStateBytes(): Promise<Uint8Array>;
  /** The policy as a Hugging Face checkpoint. */
  exportCheckpoint(): Promise<Checkpoint>;
  /** A/B of the run's objective and `b` on one batch (src/rl/compare.ts); absent on scripted test trainers. */
  compareObjectives?(b: RLConfig, source: CompareSource): Promise<ObjectiveComparison>;
  destroy(): void;
}

export interface TrainerOptions {
  config: RLConfig;
  init: { config: ModelConfig; params: ParamArrays };
  tokenizer: Tokenizer;
  backend: TrainerBackend;
  /** Groups per step with per-token records for the inspector. */
  inspectGroups?: number;
  /** encodeTrainerState bytes of a saved state to continue from. */
  resume?: Uint8Array;
  /** Where the config's reward_fn runs (the engine worker's Blob-worker sandbox). */
  rewardSandbox?: UserRewardSandbox;
  /** Where the config's reward_model folder is read from (the site in the worker, the file system in the CLI). */
  assets?: AssetLoader;
}

export type TrainerFactory = (o: TrainerOptions) => Promise<TrainerLike>;

/** The real trainer behind TrainerLike. */
export const createTrainer: TrainerFactory = async (o) => {
  const resume: TrainerState | undefined = o.resume ? decodeTrainerState(o.resume) : undefined;
  let learnedReward: LearnedReward | undefined;
  if (o.config.reward_model !== null) {
    if (!o.assets) throw new Error(`reward_model: ${o.config.reward_model} cannot be read here (no files to read it from)`);
    learnedReward = await loadLearnedReward(o.config, o.assets, { policy: o.init.config, padId: o.tokenizer.padId, backend: o.backend });
  }
  let t: Trainer;
  try {
    t = await Trainer.create({ config: o.config, init: o.init, tokenizer: o.tokenizer, backend: o.backend, inspectGroups: o.inspectGroups, resume, rewardSandbox: o.rewardSandbox, learnedReward });
  } catch (e) {
    learnedReward?.destroy();
    throw e;
  }
  return {
    get step() {
      return t.step;
    },
    runStep: () => t.runStep(),
    evaluate: () => t.evaluate(),
    saveStateBytes: async () => encodeTrainerState(await t.saveState()),
    exportCheckpoint: () => t.exportCheckpoint(),
    compareObjectives: (b, source) => t.compareObjectives(b, source),
    destroy: () => t.destroy(),
  };
};
