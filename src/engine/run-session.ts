// One run (RL, or supervised fine-tuning in mode 'sft'), driven the same way by every driver (the page's LabEngine,
// `npm run train`, the lesson runner, the reward-model CLI and the bench): the start policy or a saved state, every
// reward source, the trainer, one rollout (or supervised) step at a time with its divergence check and alerts,
// periodic saves of finite weights through a sink, the rewind to the last good state, and the exported checkpoint
// with its LoRA adapters. Its ports: an asset loader (fetch, files, IndexedDB folders), a sink (a runs store, a
// folder, memory), a device and a clock. Not a loop: a driver calls step() as it pleases (the page until Pause, the
// CLI until the last step or a signal) and decides what a stop means.

import { POLICY_ADAPTER_DIR, hfExport, type HfExport } from '../io/hf-model-folder';
import type { GpuContext } from '../gpu';
import { decodeCheckpoint, encodeCheckpoint, type Checkpoint, type ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import { tokenizerFromFiles } from '../io/hf-folder';
import { PEFT_CONFIG_FILE, PEFT_WEIGHTS_FILE, peftAdapterFiles } from '../io/peft';
import type { Tokenizer } from '../io/tokenizer';
import { parseLoraTargets, type LoraSpec } from '../core/lora-layout';
import type { Policy } from '../model/policy';
import { watchStep, type Alert, type StepExtremes } from '../rl/observation/alerts';
import type { CompareSource, ObjectiveComparison } from '../rl/observation/compare';
import { describeSamplingResolution, resolveSamplingDefaults, validateConfig, type RLConfig } from '../schema/config';
import { divergenceText, firstNonFinite, firstNonFiniteTensor } from '../rl/observation/divergence';
import type { LearnedReward } from '../rl/rewards/learned-reward';
import type { EvalRecord, StepRecord } from '../schema/stream';
import type { RolloutSetting } from '../rl/algorithm/rollouts';
import { Trainer, assertPromptsFit, type TrainerBackend } from '../rl/algorithm/trainer';
import { decodeTrainerState, encodeTrainerState } from '../rl/algorithm/trainer-state';
import type { UserRewardSandbox } from '../rl/rewards/user-reward';
import { cpuRefusal } from '../schema/cpu-limit';
import { loadLearnedReward } from './learned-reward';
import { loadStartPolicy, type AssetLoader } from './start-policy';
import { loadTeacher, loadTeachers } from './teacher';
import { checkpointDir } from '../schema/checkpoint-path';
import { createSupervisedTrainer, type SupervisedOptions } from './supervised-trainer';
import type { BackendKind, RunMode } from '../schema/run-types';

/** What a session needs from a trainer: the real one (src/rl/algorithm/trainer.ts), or a scripted one in the engine's tests. */
export interface TrainerLike {
  /** Rollout steps done. */
  readonly step: number;
  /** True when the trainer has ended its run before the config's steps (a supervised run at its stop accuracy). */
  readonly finished?: boolean;
  /** One rollout batch and its optimizer steps' records (the last carries sampled groups and maybe an eval). */
  runStep(): Promise<StepRecord[]>;
  evaluate(): Promise<EvalRecord>;
  /** Everything needed to continue the run later, as bytes (encodeTrainerState). */
  saveStateBytes(): Promise<Uint8Array>;
  /** The policy as a Hugging Face checkpoint (under LoRA the merged weights). */
  exportCheckpoint(): Promise<Checkpoint>;
  /** A/B of the run's objective and `b` on one batch (src/rl/observation/compare.ts); absent on scripted test trainers. */
  compareObjectives?(b: RLConfig, source: CompareSource): Promise<ObjectiveComparison>;
  /** What the trainer samples and scores with, for its drivers (absent on scripted test trainers). */
  readonly setting?: TrainerSetting;
  destroy(): void;
}

/**
 * What a driver reads of a real trainer beyond its steps: the setting its rollouts are sampled and scored in (the
 * config, the derived sizes, the tokenizer, the reward_fn and reward_model), its LoRA spec, and the policy it trains.
 */
export interface TrainerSetting extends RolloutSetting {
  lora: LoraSpec | null;
  policy: Policy;
}

/** What a session asks a trainer factory for. */
export interface TrainerRequest {
  config: RLConfig;
  init: { config: ModelConfig; params: ParamArrays };
  tokenizer: Tokenizer;
  backend: TrainerBackend;
  /** Groups per step with per-token records for the inspector. */
  inspectGroups?: number;
  /** encodeTrainerState bytes of a saved state to continue from (the request may change RESUMABLE_FIELDS only). */
  resume?: Uint8Array;
  rewardSandbox?: UserRewardSandbox;
  learnedReward?: LearnedReward;
  memoryBudgetBytes?: number | null;
  /** A supervised run's options (default: the config's, supervisedOptions). */
  supervised?: SupervisedOptions;
}

export type TrainerFactory = (o: TrainerRequest) => Promise<TrainerLike>;

/** The fields a resumed run may change: more steps extend it, and how often it saves. */
export const RESUMABLE_FIELDS = ['steps', 'save_every'] as const;

/** The real trainer: the one product place that creates a Trainer. */
export const createTrainer: TrainerFactory = async (o) => {
  const resume = o.resume ? decodeTrainerState(o.resume) : undefined;
  // Only the resumable fields are taken from the request; any other difference is still refused by Trainer.create.
  if (resume) {
    const config = validateConfig(o.config);
    for (const k of RESUMABLE_FIELDS) resume.meta.config = { ...resume.meta.config, [k]: config[k] };
  }
  const t = await Trainer.create({ ...o, resume });
  return {
    get step() {
      return t.step;
    },
    setting: {
      config: t.config,
      derived: t.derived,
      tokenizer: t.tokenizer,
      userReward: t.userReward,
      learnedReward: t.learnedReward,
      lora: t.lora,
      policy: t.learner.policy,
    },
    runStep: () => t.runStep(),
    evaluate: () => t.evaluate(),
    saveStateBytes: async () => encodeTrainerState(await t.saveState()),
    exportCheckpoint: () => t.exportCheckpoint(),
    compareObjectives: (b, source) => t.compareObjectives(b, source),
    destroy: () => t.destroy(),
  };
};

/** A run's resume point: the trainer state and the policy checkpoint of one step, with the tokenizer files. */
export interface SavedRun {
  /** Rollout step the state was saved after. */
  step: number;
  /** encodeTrainerState bytes. */
  state: Uint8Array;
  /** model.safetensors and config.json of the policy at that step. */
  safetensors: Uint8Array;
  configJson: string;
  tokenizerJson: string;
  /** A Hugging Face BPE tokenizer's tokenizer_config.json; null for the character vocabulary. */
  tokenizerConfigJson: string | null;
}

/** Where a session's records and saves go: a runs store (the page), a folder (the CLI), memory (lessons, bench). */
export interface RunSink {
  /** One rollout step's records (every optimizer step's, with the sampled groups and evaluations), and its wall time. */
  appendStep(records: StepRecord[], ms: number): Promise<void>;
  /** Replaces the resume point, atomically; false when it could not be kept (the previous one stays). */
  save(saved: SavedRun): Promise<boolean>;
  /** The last resume point saved, or null (a rewind goes back to it). */
  lastSaved(): Promise<SavedRun | null>;
  /** Drops the records of steps after `step` (a rewind, or a resume from an earlier save). */
  truncate(step: number): Promise<void>;
}

/** A sink that keeps nothing but the steps it was given (lessons and the bench read the records the step returns). */
export const NO_SINK: RunSink = {
  appendStep: async () => undefined,
  save: async () => true,
  lastSaved: async () => null,
  truncate: async () => undefined,
};

/** The session's ports: where files come from, where records go, the device, the clock. */
export interface RunPorts {
  assets: AssetLoader;
  sink: RunSink;
  /** The device for WebGPU runs; called when a trainer is made (again after a loss). */
  device(): Promise<GpuContext>;
  /** Where a config's reward_fn runs (a Blob worker in the page, a worker thread in Node). */
  rewardSandbox?: UserRewardSandbox;
  /** Milliseconds clock (default performance.now). */
  now?: () => number;
  /** The trainer factory (default: the real trainer). */
  createTrainer?: TrainerFactory;
  /** The trainer factory of a supervised run (default: supervised-trainer.ts's, which makes no RL trainer). */
  createSupervisedTrainer?: TrainerFactory;
}

/**
 * What a diverged step does after the sink is rewound to the last good state: 'pause' loads the trainer back at it
 * (the page: Start trains on), 'stop' leaves the session without a trainer (the CLI and lessons exit with the message).
 */
export type DivergencePolicy = 'pause' | 'stop';

export interface RunSessionOptions {
  config: RLConfig;
  backend: BackendKind;
  divergence: DivergencePolicy;
  /**
   * 'rl' (default): the trainer's rollout steps. 'sft': supervised steps on the task's demonstrations from the same
   * start (src/engine/supervised-trainer.ts), which keep no resume point.
   */
  mode?: RunMode;
  /** A supervised run's options (default: the config's, supervisedOptions). */
  supervised?: SupervisedOptions;
  /** Groups per step with per-token records (default 2). */
  inspectGroups?: number;
  /** Save at least this often besides every save_every steps (the page: 30 s); default never. */
  autosaveMs?: number;
  /** GPU bytes the run may use (the memory plan refuses more); default: only the device's per-buffer limits. */
  memoryBudgetBytes?: number | null;
  /** Called once the start policy is known and before the trainer is made (the CLI prints the memory plan). */
  onStart?: (start: SessionStart) => void;
}

/** Where a session's policy came from. */
export interface SessionStart {
  modelConfig: ModelConfig;
  /** In words: "warm start checkpoints/copy/", "fresh nano model, seed 0", "saved state at step 10". */
  source: string;
  backend: TrainerBackend;
  /** The teacher's model (on-policy distillation), read before the trainer is made; absent without one. */
  teacher?: { modelConfig: ModelConfig; source: string };
  /** The teachers' models by id (multi-teacher distillation), read before the trainer is made; absent without them. */
  teachers?: { id: string; modelConfig: ModelConfig; source: string }[];
}

/** One step's outcome. */
export type StepOutcome =
  | { kind: 'trained'; records: StepRecord[]; ms: number; alerts: Alert[]; saved: boolean }
  /** Nothing of the step was kept: the sink is back at `savedStep`; `message` says what happened, in sentences. */
  | { kind: 'diverged'; why: string; savedStep: number; message: string };

/** A run diverged and its driver stops (policy 'stop'): the message names the metric, the step and the saved state. */
export class RunDivergedError extends Error {
  override name = 'RunDivergedError';
  constructor(
    message: string,
    readonly savedStep: number,
  ) {
    super(message);
  }
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class RunSession {
  private current: TrainerLike | null = null;
  private alertHistory: StepExtremes[] = [];
  private lastSaveAt: number;
  private readonly now: () => number;
  private readonly factory: TrainerFactory;
  /** The tokenizer files saved with every checkpoint. */
  tokenizerJson = '';
  tokenizerConfigJson: string | null = null;
  /** Where the policy came from (set when the trainer is made). */
  start: SessionStart | null = null;
  /** The step of the last resume point the sink kept (0: none yet). */
  savedStep = 0;

  private constructor(
    readonly options: RunSessionOptions,
    private readonly ports: RunPorts,
  ) {
    this.now = ports.now ?? (() => performance.now());
    this.factory = ports.createTrainer ?? createTrainer;
    this.lastSaveAt = this.now();
  }

  /** A session at the start policy of `options.config`, or at `from` (a saved resume point). */
  static async open(options: RunSessionOptions, ports: RunPorts, from: SavedRun | null = null): Promise<RunSession> {
    const s = new RunSession({ ...options, config: validateConfig(options.config) }, ports);
    await s.load(from);
    if (from) s.savedStep = from.step;
    return s;
  }

  get config(): RLConfig {
    return this.options.config;
  }

  /** The trainer; throws after a 'stop' divergence or destroy(). */
  get trainer(): TrainerLike {
    if (!this.current) throw new Error('this run has no trainer (it stopped, or was closed)');
    return this.current;
  }

  /** Rollout steps done. */
  get step(): number {
    return this.trainer.step;
  }

  /** What the run's trainer samples and scores with (the derived config, LoRA, the reward sources, its policy). */
  get setting(): TrainerSetting {
    const s = this.trainer.setting;
    if (!s) throw new Error("this run's trainer offers no setting (a scripted trainer)");
    return s;
  }

  /** A/B of the run's objective and `b` on one batch at the current parameters (src/rl/observation/compare.ts); between steps only. */
  compareObjectives(b: RLConfig, source: CompareSource): Promise<ObjectiveComparison> {
    const trainer = this.trainer;
    if (!trainer.compareObjectives) throw new Error("this run's trainer cannot compare objectives");
    return trainer.compareObjectives(b, source);
  }

  /** The last step is done, or the trainer ended the run (TrainerLike.finished). */
  get done(): boolean {
    return this.trainer.step >= this.config.steps || this.trainer.finished === true;
  }

  /** The backend a run of `kind` trains on for a model (the CPU twins refuse models above their size limit). */
  private async backendFor(model: ModelConfig): Promise<TrainerBackend> {
    if (this.options.backend === 'cpu') {
      const refusal = cpuRefusal(model);
      if (refusal) throw new Error(refusal);
      return { kind: 'cpu' };
    }
    return { kind: 'webgpu', ctx: await this.ports.device() };
  }

  /** Makes the trainer: from a saved resume point, or (none) from the config's start policy. */
  private async load(from: SavedRun | null): Promise<void> {
    let init: { config: ModelConfig; params: ParamArrays };
    let tokenizer: Tokenizer;
    let source: string;
    if (from && this.options.mode === 'sft') throw new Error('a supervised (sft) run cannot resume from a saved state');
    if (from) {
      const ck = decodeCheckpoint(from.safetensors, from.configJson);
      init = { config: ck.config, params: ck.params };
      tokenizer = await tokenizerFromFiles(from.tokenizerJson, from.tokenizerConfigJson);
      this.tokenizerJson = from.tokenizerJson;
      this.tokenizerConfigJson = from.tokenizerConfigJson;
      source = `the saved state at step ${from.step}`;
    } else {
      const start = await loadStartPolicy(this.config, this.ports.assets);
      ({ init, tokenizer } = start);
      this.tokenizerJson = start.tokenizerJson;
      this.tokenizerConfigJson = start.tokenizerConfigJson;
      // sampling_defaults 'model': the checkpoint's generation_config.json values become the run's own knobs here, so
      // the config the drivers record (and a resume compares against) holds what the run samples with.
      const sampling = resolveSamplingDefaults(this.config, start.generation);
      this.options.config = sampling.config;
      const note = describeSamplingResolution(sampling);
      source = note ? `${start.source} (${note})` : start.source;
    }
    // The prompts' fit in the model's context is refused input, said before a device is acquired.
    assertPromptsFit(this.config, tokenizer, init.config.contextLength);
    const backend = await this.backendFor(init.config);
    // On-policy distillation's teacher, read through the same assets as the policy and checked against its tokenizer.
    const teacher =
      this.config.teacher !== null
        ? await loadTeacher(this.config, this.ports.assets, { tokenizer, model: init.config })
        : undefined;
    const teachers =
      this.config.teachers !== null
        ? await loadTeachers(this.config, this.ports.assets, { tokenizer, model: init.config }, teacher)
        : undefined;
    this.start = {
      modelConfig: init.config,
      source,
      backend,
      ...(teacher && { teacher: { modelConfig: teacher.config, source: teacher.source } }),
      ...(teachers && {
        // Each id with its own folder in words (ids sharing a folder share one TeacherWeights and its source).
        teachers: Object.entries(teachers).map(([id, t]) => ({
          id,
          modelConfig: t.config,
          source: `teacher ${id} ${checkpointDir(this.config.teachers?.[id] ?? '')}`,
        })),
      }),
    };
    this.options.onStart?.(this.start);
    // Every reward source of the config: the task's verifier (in the trainer), reward_fn in the driver's sandbox, and
    // reward_model read through the same assets as the policy.
    const learnedReward =
      this.config.reward_model !== null
        ? await loadLearnedReward(this.config, this.ports.assets, {
            policy: init.config,
            padId: tokenizer.padId,
            backend,
          })
        : undefined;
    try {
      const factory =
        this.options.mode === 'sft' ? (this.ports.createSupervisedTrainer ?? createSupervisedTrainer) : this.factory;
      this.current = await factory({
        config: this.config,
        init,
        tokenizer,
        backend,
        inspectGroups: this.options.inspectGroups ?? 2,
        ...(from && { resume: from.state }),
        ...(this.ports.rewardSandbox && { rewardSandbox: this.ports.rewardSandbox }),
        ...(learnedReward && { learnedReward }),
        ...(teacher && { teacher }),
        ...(teachers && { teachers }),
        memoryBudgetBytes: this.options.memoryBudgetBytes ?? null,
        ...(this.options.supervised && { supervised: this.options.supervised }),
      });
    } catch (e) {
      learnedReward?.destroy();
      throw e;
    }
  }

  /**
   * One rollout step: trained and handed to the sink with its alerts, then saved when save_every or the autosave
   * interval says so; or, when a metric or the weights to be saved are not finite, nothing of it is kept and the
   * run goes back to its last saved state (the divergence policy says whether the trainer is loaded again).
   */
  async runStep(): Promise<StepOutcome> {
    const trainer = this.trainer;
    const t0 = this.now();
    const records = await trainer.runStep();
    const ms = this.now() - t0;
    if (!records.length) throw new Error('the trainer returned no records for a step');
    // Checked on the scalars already read back; a diverged step is neither stored nor shown.
    const diverged = firstNonFinite(records);
    if (diverged) return this.rewind(divergenceText(diverged));
    await this.ports.sink.appendStep(records, ms);
    const watched = watchStep(this.alertHistory, records);
    this.alertHistory = watched.history;
    const every = this.config.save_every;
    const due =
      (every > 0 && trainer.step % every === 0) ||
      this.now() - this.lastSaveAt >= (this.options.autosaveMs ?? Infinity);
    if (due && trainer.step < this.config.steps) {
      const saved = await this.save();
      if (saved.kind === 'diverged') return saved;
    }
    return { kind: 'trained', records, ms, alerts: watched.alerts, saved: this.savedStep === trainer.step };
  }

  /** The resume point of the current step, its weights checked first (a diverged update rewinds instead). */
  async snapshot(): Promise<{ kind: 'ok'; saved: SavedRun } | Extract<StepOutcome, { kind: 'diverged' }>> {
    const trainer = this.trainer;
    const checkpoint = await trainer.exportCheckpoint();
    // The last update of a step can blow the weights up while that step's metrics (computed before it) are finite.
    const bad = firstNonFiniteTensor(checkpoint.params);
    if (bad)
      return this.rewind(
        `the run diverged: the policy's weights became non-finite (${bad}) in the updates of step ${trainer.step}, though the step's metrics were finite`,
      );
    const state = await trainer.saveStateBytes();
    const { safetensors, configJson } = encodeCheckpoint(checkpoint);
    return {
      kind: 'ok',
      saved: {
        step: trainer.step,
        state,
        safetensors,
        configJson,
        tokenizerJson: this.tokenizerJson,
        tokenizerConfigJson: this.tokenizerConfigJson,
      },
    };
  }

  /** Saves the resume point through the sink (nothing when the step is saved already, or in a supervised run). */
  async save(): Promise<{ kind: 'saved' | 'kept'; step: number } | Extract<StepOutcome, { kind: 'diverged' }>> {
    const trainer = this.trainer;
    if (this.options.mode === 'sft') return { kind: 'kept', step: this.savedStep };
    if (trainer.step === this.savedStep) return { kind: 'saved', step: this.savedStep };
    const snap = await this.snapshot();
    if (snap.kind !== 'ok') return snap;
    this.lastSaveAt = this.now();
    if (!(await this.ports.sink.save(snap.saved))) return { kind: 'kept', step: this.savedStep };
    this.savedStep = snap.saved.step;
    return { kind: 'saved', step: this.savedStep };
  }

  /**
   * A diverged run: the update is not kept. The sink drops the records after its last saved state and, under the
   * 'pause' policy, the trainer is loaded back at that state (without one, at the start policy).
   */
  private async rewind(why: string): Promise<Extract<StepOutcome, { kind: 'diverged' }>> {
    const step = this.current?.step ?? this.savedStep;
    this.dropTrainer();
    const saved = this.options.divergence === 'pause' ? await this.ports.sink.lastSaved() : null;
    const savedStep = saved?.step ?? (this.options.divergence === 'pause' ? 0 : this.savedStep);
    await this.ports.sink.truncate(savedStep);
    this.alertHistory = [];
    if (this.options.divergence === 'pause') {
      try {
        await this.load(saved);
      } catch (e) {
        throw new Error(`${why}; going back to the saved state at step ${savedStep} failed: ${message(e)}`);
      }
    }
    this.savedStep = savedStep;
    const dropped =
      step > savedStep + 1
        ? ` (steps ${savedStep + 1}-${step} after it are dropped)`
        : step > savedStep
          ? ` (step ${step} after it is dropped)`
          : '';
    const where =
      this.options.divergence === 'pause'
        ? 'the run is paused at its last saved state'
        : 'the run stopped at its last saved state';
    const next = this.options.divergence === 'pause' ? 'Training on continues from it' : 'Resuming continues from it';
    const text =
      `${why.charAt(0).toUpperCase()}${why.slice(1)}. The update was not kept: ${where}, step ${savedStep}${dropped}. ` +
      `${next}; a smaller learning_rate or weight_decay (in a new run) usually avoids it.`;
    return { kind: 'diverged', why, savedStep, message: text };
  }

  /** Trains until the last step, `shouldStop()`, or a divergence (thrown as RunDivergedError); saves at the end. */
  async trainToEnd(
    hooks: {
      shouldStop?: () => boolean;
      onStep?: (o: Extract<StepOutcome, { kind: 'trained' }>) => void | Promise<void>;
    } = {},
  ): Promise<void> {
    while (!this.done && !hooks.shouldStop?.()) {
      const o = await this.runStep();
      if (o.kind === 'diverged') throw new RunDivergedError(o.message, o.savedStep);
      await hooks.onStep?.(o);
    }
    const s = await this.save();
    if (s.kind === 'diverged') throw new RunDivergedError(s.message, s.savedStep);
  }

  /** The policy's files for a download: the checkpoint, its tokenizer files and, under LoRA, the adapters in PEFT's layout. */
  async exportFiles(): Promise<PolicyFiles> {
    const trainer = this.trainer;
    const { safetensors, configJson } = encodeCheckpoint(await trainer.exportCheckpoint());
    const saved = {
      step: trainer.step,
      state: new Uint8Array(0),
      safetensors,
      configJson,
      tokenizerJson: this.tokenizerJson,
      tokenizerConfigJson: this.tokenizerConfigJson,
    };
    return policyFiles(saved, this.config.lora_rank > 0 ? await trainer.saveStateBytes() : null);
  }

  private dropTrainer(): void {
    const t = this.current;
    this.current = null;
    try {
      t?.destroy();
    } catch {
      /* a lost device may refuse to destroy; nothing to keep */
    }
  }

  destroy(): void {
    this.dropTrainer();
  }
}

/** A policy as files: name inside its folder (adapters under `adapter/`), and content. */
export interface PolicyFiles {
  step: number;
  files: { name: string; data: Uint8Array | string }[];
}

/** The folder that holds a LoRA run's adapters in PEFT's layout, beside the merged checkpoint. */
export const LORA_ADAPTER_DIR = POLICY_ADAPTER_DIR;

/**
 * A policy exported as the folders transformers and PEFT load (io/hf-model-folder.ts): the one path the page's
 * checkpoint export and the CLI's `export --to hf` share. `sourceGenerationConfigJson` is the source model's
 * generation_config.json (readSourceGenerationConfig), `baseModel` the checkpoint the run started from,
 * `sourceConfigJson` its config.json (readSourceModelConfig), whose eos_token_id the exported config.json keeps.
 */
export function exportPolicyFolder(
  runName: string,
  policy: PolicyFiles,
  sourceGenerationConfigJson: string | null,
  baseModel: string | null,
  sourceConfigJson: string | null = null,
): HfExport {
  return hfExport({ runName, policy, sourceGenerationConfigJson, baseModel, sourceConfigJson });
}

/**
 * A resume point's policy as files: model.safetensors, config.json, tokenizer.json (and tokenizer_config.json) and,
 * given a LoRA run's trainer state, adapter/adapter_model.safetensors and adapter/adapter_config.json for
 * PeftModel.from_pretrained on the base the config's checkpoint names. A folder of their own, so a loader that finds
 * adapter_config.json beside model.safetensors does not take the merged checkpoint for an adapter.
 */
export function policyFiles(saved: SavedRun, loraState: Uint8Array | null): PolicyFiles {
  const files: PolicyFiles['files'] = [
    { name: 'model.safetensors', data: saved.safetensors },
    { name: 'config.json', data: saved.configJson },
    { name: 'tokenizer.json', data: saved.tokenizerJson },
    ...(saved.tokenizerConfigJson === null ? [] : [{ name: 'tokenizer_config.json', data: saved.tokenizerConfigJson }]),
  ];
  if (loraState) {
    const st = decodeTrainerState(loraState);
    const c = st.meta.config;
    if (!st.learner.lora)
      throw new Error(`the saved state of this LoRA run (lora_rank ${c.lora_rank}) holds no adapters`);
    const spec = { rank: c.lora_rank, alpha: c.lora_alpha, targets: parseLoraTargets(c.lora_targets) };
    const peft = peftAdapterFiles(st.meta.modelConfig, spec, st.learner.lora, c.checkpoint);
    files.push(
      { name: `${LORA_ADAPTER_DIR}/${PEFT_WEIGHTS_FILE}`, data: peft.safetensors },
      { name: `${LORA_ADAPTER_DIR}/${PEFT_CONFIG_FILE}`, data: peft.configJson },
    );
  }
  return { step: saved.step, files };
}
