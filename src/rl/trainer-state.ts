// A trainer's saved state, to resume a run exactly: its counters and host-side state (TrainerMeta) and the
// learner's tensors (policy, reference, critic, AdamW moments), and their file format: one safetensors file with
// the meta as JSON in its header and the tensors named <part>/<HF name>. Not the checkpoint export of a policy
// (model/checkpoint.ts).

import type { ParamArrays } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { readSafetensors, writeSafetensors, type SafetensorsTensorInput } from '../model/safetensors';
import type { RunningBaseline } from './advantages';
import { RLConfigError, validateConfig, type RLConfig } from './config';
import type { LearnerState } from './learner';

/**
 * The trainer's counters and host-side state (the tensors live in LearnerState). Version 1; fields added since
 * (numTokens) are optional in files, so older version-1 files still resume, with those fields' defaults.
 */
export interface TrainerMeta {
  version: 1;
  config: RLConfig;
  modelConfig: ModelConfig;
  /** Rollout steps done. */
  step: number;
  /** Optimizer steps done. */
  optimizerStep: number;
  /** The num_tokens metric: prompt and completion tokens sampled for training so far (0 in files without it). */
  numTokens: number;
  /** State of the data RNG (prompt sampling). */
  rngState: number;
  /** The entropy coefficient in effect (moves when adaptive). */
  entropyCoef: number;
  /** REINFORCE's running baseline. */
  baseline: RunningBaseline | null;
  /** Adaptive curriculum: success rate (EMA) per difficulty. */
  successRate: Record<string, number>;
}

/** Everything needed to resume a run exactly. */
export interface TrainerState {
  meta: TrainerMeta;
  learner: LearnerState;
}

/** Serializes a trainer state (policy, reference, critic, AdamW moments, counters, RNG) into one safetensors file. */
export function encodeTrainerState(state: TrainerState): Uint8Array {
  const tensors = new Map<string, SafetensorsTensorInput>();
  const add = (prefix: string, arrays: ParamArrays | undefined) => {
    if (!arrays) return;
    for (const [name, data] of Object.entries(arrays)) tensors.set(`${prefix}/${name}`, { dtype: 'F32', shape: [data.length], data });
  };
  const l = state.learner;
  add('policy', l.policy);
  add('policy_adam_m', l.policyOptimizer.m);
  add('policy_adam_v', l.policyOptimizer.v);
  add('reference', l.reference);
  add('critic', l.critic);
  add('critic_adam_m', l.criticOptimizer?.m);
  add('critic_adam_v', l.criticOptimizer?.v);
  const meta = { ...state.meta, policyOptimizerStep: l.policyOptimizer.step, criticOptimizerStep: l.criticOptimizer?.step ?? null };
  return writeSafetensors(tensors, { format: 'rl-lab-trainer-state', trainer: JSON.stringify(meta) });
}

/** Reads a file written by encodeTrainerState; a foreign or damaged file fails with what is wrong. */
export function decodeTrainerState(bytes: Uint8Array): TrainerState {
  const file = readSafetensors(bytes, { toFloat32: true, copy: true });
  if (file.metadata.format !== 'rl-lab-trainer-state' || !file.metadata.trainer) {
    throw new Error('trainer state: not an RL Lab trainer state (its safetensors header has no "trainer" metadata)');
  }
  let meta: Omit<TrainerMeta, 'numTokens'> & { numTokens?: unknown; policyOptimizerStep: number; criticOptimizerStep: number | null };
  try {
    meta = JSON.parse(file.metadata.trainer);
  } catch (e) {
    throw new Error(`trainer state: the "trainer" metadata is not valid JSON: ${(e as Error).message}`);
  }
  if (meta.version !== 1) throw new Error(`trainer state: version ${String(meta.version)} is not supported (expected 1)`);
  const numTokens = meta.numTokens ?? 0;
  if (typeof numTokens !== 'number' || !Number.isSafeInteger(numTokens) || numTokens < 0) {
    throw new Error(`trainer state: numTokens must be a whole number >= 0, got ${JSON.stringify(meta.numTokens)}`);
  }
  const parts: Record<string, ParamArrays> = {};
  for (const [key, t] of file.tensors) {
    const slash = key.indexOf('/');
    const part = key.slice(0, slash);
    (parts[part] ??= {})[key.slice(slash + 1)] = t.data as Float32Array;
  }
  if (!parts.policy) throw new Error('trainer state: no policy tensors');
  // The resume boundary: the saved config is checked once here, with every problem named.
  try {
    meta.config = validateConfig(meta.config as unknown as Record<string, unknown>);
  } catch (e) {
    if (e instanceof RLConfigError) throw new Error(`trainer state: its saved config is not valid here: ${e.problems.join('; ')}`);
    throw e;
  }
  const { policyOptimizerStep, criticOptimizerStep, ...rest } = meta;
  const learner: LearnerState = {
    policy: parts.policy,
    policyOptimizer: { m: parts.policy_adam_m ?? {}, v: parts.policy_adam_v ?? {}, step: policyOptimizerStep },
  };
  if (parts.reference) learner.reference = parts.reference;
  if (parts.critic) {
    learner.critic = parts.critic;
    learner.criticOptimizer = { m: parts.critic_adam_m ?? {}, v: parts.critic_adam_v ?? {}, step: criticOptimizerStep ?? 0 };
  }
  return { meta: { ...rest, numTokens }, learner };
}
