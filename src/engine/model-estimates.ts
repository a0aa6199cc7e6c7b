// What the page shows before Start: for the draft config and for each model the real-model experiment offers, the
// parameters, the memory plan's peak and whether it fits, and the seconds-per-step estimate (src/schema/step-estimate.ts)
// on this adapter. A model is known from its config.json alone: a preset, a folder's config.json (a small file; no
// weight is read), or a hub id whose config.json is recorded in the repository. Not the probe that measures the
// adapter (src/bench/throughput-probe.ts) and not the download of a hub model.

import { configFromJson } from '../io/checkpoint';
import { parseLlamaConfigJson } from '../io/hf-layout';
import { MODEL_PRESETS, parameterCount, type ModelConfig } from '../schema/model-config';
import { generationDefaults, type GenerationDefaults } from '../schema/generation-defaults';
import type { MemoryDevice } from '../model/memory-plan';
import { REAL_CONFIG_FILES, type RealModelName } from '../io/real-models.fixture';
import { REAL_MODEL_CHOICES, derive, type RLConfig } from '../schema/config';
import { rlResolvedMemoryPlan } from '../rl/observation/memory';
import { estimateStepSeconds, stepWork, type StepPhase, type Throughput } from '../schema/step-estimate';
import { checkpointDir } from '../schema/checkpoint-path';
import type { AssetLoader } from './start-policy';

/** One model's figures for a config. */
export interface ModelEstimate {
  /** The checkpoint value or preset it is for. */
  model: string;
  parameters: number;
  /** Bytes the run allocates at its peak, at the weight_dtype the plan resolves. */
  peakBytes: number;
  weightDtype: string;
  /** Why the run does not fit the device (empty when it does). */
  memoryProblems: string[];
  /** Seconds of one rollout step, and per phase. */
  seconds: number;
  /** The seconds measured steps may take, low and high (the calibration's spread). */
  range: readonly [number, number];
  phases: { phase: StepPhase; seconds: number }[];
  /** Where the model's config came from, in words. */
  configFrom: string;
  /** The folder's generation_config.json sampling defaults (null without, or for a preset or a recorded config). */
  generation: GenerationDefaults | null;
}

/** A model that could not be sized: the reason, in words. */
export interface ModelEstimateProblem {
  model: string;
  problem: string;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The recorded config.json of a hub id the experiment offers, or undefined. */
function recordedConfigOf(checkpoint: string): RealModelName | undefined {
  const id = checkpoint.split('@')[0];
  const name = REAL_MODEL_CHOICES.find((c) => c.checkpoint === id)?.recordedConfig;
  return name !== null && name !== undefined && name in REAL_CONFIG_FILES ? (name as RealModelName) : undefined;
}

/**
 * The model a config trains and where its config came from: the preset without a checkpoint; a hub id the
 * experiment offers from its recorded config.json; any other checkpoint from its folder's config.json (and
 * generation_config.json when there is one), read through `assets`.
 */
export async function modelOfConfig(
  config: RLConfig,
  assets: AssetLoader,
): Promise<{ model: ModelConfig; configFrom: string; generation: GenerationDefaults | null }> {
  if (config.checkpoint === null)
    return { model: MODEL_PRESETS[config.model], configFrom: `the ${config.model} preset`, generation: null };
  const recorded = recordedConfigOf(config.checkpoint);
  if (recorded)
    return {
      model: configFromJson(parseLlamaConfigJson(REAL_CONFIG_FILES[recorded])).config,
      configFrom: `its published config.json (recorded as ${recorded}.json)`,
      generation: null,
    };
  const dir = checkpointDir(config.checkpoint);
  const text = await assets.text(`${dir}config.json`);
  const model = configFromJson(parseLlamaConfigJson(JSON.parse(text))).config;
  let generation: GenerationDefaults | null = null;
  try {
    generation = generationDefaults(JSON.parse(await assets.text(`${dir}generation_config.json`)));
  } catch {
    // Optional: a folder without one (or with a malformed one, which the run itself will name) has no defaults.
  }
  return { model, configFrom: `${dir}config.json`, generation };
}

/** The figures of `config` on `model` for a device and an adapter's throughput. */
export function estimateModel(
  name: string,
  config: RLConfig,
  model: ModelConfig,
  device: MemoryDevice,
  throughput: Throughput,
  extra: { configFrom: string; generation: GenerationDefaults | null },
): ModelEstimate {
  const { weightDtype, plan } = rlResolvedMemoryPlan(config, model, device);
  const estimate = estimateStepSeconds(stepWork(config, model), throughput);
  return {
    model: name,
    parameters: parameterCount(model),
    peakBytes: plan.peakBytes,
    weightDtype,
    memoryProblems: plan.problems,
    seconds: estimate.seconds,
    range: estimate.range,
    phases: estimate.phases.map(({ phase, seconds }) => ({ phase, seconds })),
    ...extra,
  };
}

/** The draft config's model's figures, or what keeps it from being sized (an unreadable config.json, a bad knob). */
export async function estimateDraft(
  config: RLConfig,
  assets: AssetLoader,
  device: MemoryDevice,
  throughput: Throughput,
): Promise<ModelEstimate | ModelEstimateProblem> {
  const name = config.checkpoint ?? config.model;
  try {
    derive(config);
    const { model, configFrom, generation } = await modelOfConfig(config, assets);
    return estimateModel(name, config, model, device, throughput, { configFrom, generation });
  } catch (e) {
    return { model: name, problem: messageOf(e) };
  }
}
