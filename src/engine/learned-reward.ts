// Loads a run's `reward_model` folder into the learned reward the trainer scores with: a text classifier (ONNX run by
// transformers.js, recognised by onnx/model.onnx) or a reward model trained in the lab (recognised by config.json's
// "rl_lab": { "kind": "reward-model" }). Files come through an AssetLoader (fetch in the worker, the file system in
// the CLI), so nothing is read from anywhere else. Not the models themselves (src/model/reward-classifier.ts,
// src/rl/rewards/reward-model.ts).

import { decodeCheckpoint } from '../io/checkpoint';
import { CLASSIFIER_FILES, classifierLabels, loadRewardClassifier } from '../model/reward-classifier';
import type { ModelConfig } from '../schema/model-config';
import type { RLConfig } from '../schema/config';
import { classifierReward, labReward, type LearnedReward } from '../rl/rewards/learned-reward';
import { LabRewardModel, REWARD_MODEL_KIND } from '../rl/rewards/reward-model';
import type { AssetLoader } from './start-policy';
import type { TrainerBackend } from '../rl/algorithm/trainer';

/** What the lab reward model must agree with: the policy's vocabulary and pad id. */
export interface LearnedRewardContext {
  policy: ModelConfig;
  padId: number;
  backend: TrainerBackend;
  /** Where a classifier runs in the browser ('wasm' or 'webgpu'); Node uses its CPU runtime. */
  classifierDevice?: 'cpu' | 'wasm' | 'webgpu';
}

/** The folder of a reward_model value, with a trailing slash. */
export function rewardModelDir(value: string): string {
  return value.endsWith('/') ? value : `${value}/`;
}

/** Reads the run's reward_model folder and returns it ready to score. Fails with a message naming the folder. */
export async function loadLearnedReward(
  config: RLConfig,
  assets: AssetLoader,
  ctx: LearnedRewardContext,
): Promise<LearnedReward> {
  if (config.reward_model === null) throw new Error('reward_model: not set');
  const dir = rewardModelDir(config.reward_model);
  const fail = (what: string): never => {
    throw new Error(`reward_model ${dir}: ${what}`);
  };
  let configText = '';
  try {
    configText = await assets.text(`${dir}config.json`);
  } catch (e) {
    fail(`could not read config.json (${(e as Error).message})`);
  }
  let meta: unknown;
  try {
    meta = JSON.parse(configText);
  } catch (e) {
    fail(`config.json is not JSON: ${(e as Error).message}`);
  }
  const kind = (meta as { rl_lab?: { kind?: unknown } } | null)?.rl_lab?.kind;

  if (kind === REWARD_MODEL_KIND) {
    if (ctx.backend.kind !== 'webgpu') fail('a reward model trained in the lab runs on the WebGPU backend only');
    let weights: Uint8Array = new Uint8Array(0);
    try {
      weights = await assets.bytes(`${dir}model.safetensors`);
    } catch (e) {
      fail(`could not read model.safetensors (${(e as Error).message})`);
    }
    const ck = decodeCheckpoint(weights, configText);
    if (ck.config.vocabSize !== ctx.policy.vocabSize) {
      fail(
        `its vocabulary has ${ck.config.vocabSize} tokens but the policy's has ${ctx.policy.vocabSize}; a reward model reads the policy's tokens`,
      );
    }
    const rm = LabRewardModel.load(
      (ctx.backend as Extract<TrainerBackend, { kind: 'webgpu' }>).ctx,
      ck.config,
      ck.params,
      { padId: ctx.padId },
    );
    return labReward(rm, `reward model trained in the lab, ${dir}`);
  }

  const files = new Map<string, Uint8Array>();
  for (const f of CLASSIFIER_FILES) {
    try {
      files.set(f, await assets.bytes(`${dir}${f}`));
    } catch (e) {
      fail(
        `is neither a lab reward model (config.json has no "rl_lab": {"kind": "${REWARD_MODEL_KIND}"}) nor a text classifier: could not read ${f} (${(e as Error).message})`,
      );
    }
  }
  const { labels } = classifierLabels(configText);
  const label = config.reward_model_label ?? labels[labels.length - 1];
  const classifier = await loadRewardClassifier(files, {
    label,
    ...(ctx.classifierDevice ? { device: ctx.classifierDevice } : {}),
  });
  return classifierReward(classifier, `text classifier ${dir}`);
}
