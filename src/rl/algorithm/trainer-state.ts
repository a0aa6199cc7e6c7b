// A trainer's saved state, to resume a run exactly: its counters and host-side state (TrainerMeta) and the
// learner's tensors (policy, reference, critic, AdamW moments), and their file format: one safetensors file with
// the meta as JSON in its header and the tensors named <part>/<HF name> (under LoRA the part lora/ holds the
// adapters, and the policy's AdamW moments are the adapters'). Not the checkpoint export of a policy
// (io/checkpoint.ts).

import type { ParamArrays } from '../../io/checkpoint';
import { modelConfigProblems, type ModelConfig } from '../../schema/model-config';
import { readSafetensors, writeSafetensors, type SafetensorsTensorInput } from '../../io/safetensors';
import { loraShapes, parseLoraTargets } from '../../core/lora-layout';
import { paramShapes } from '../../core/model-shapes';
import type { RunningBaseline } from './advantages';
import {
  DEFAULT_CONFIG,
  FIELD_NAMES,
  FIELD_SPECS,
  RLConfigError,
  derive,
  validateConfig,
  type RLConfig,
  type RLField,
} from '../../schema/config';
import type { LearnerState } from '../learners/learner';
import { modelVersion, stalenessActive, type StaleSnapshot } from './staleness';

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
  /** Adaptive entropy: the last rollout step's mean entropy (null before the first; absent in older files). */
  lastEntropy: number | null;
  /** REINFORCE's running baseline. */
  baseline: RunningBaseline | null;
  /** Adaptive curriculum: success rate (EMA) per difficulty. */
  successRate: Record<string, number>;
  /**
   * Set in a state saved after the first step of a run whose step-0 evaluation runs after that step, at W_0
   * (Trainer.runStep): the next step runs it. Absent otherwise (and in older files).
   */
  initialEvalPending?: true;
}

/** Everything needed to resume a run exactly. */
export interface TrainerState {
  meta: TrainerMeta;
  learner: LearnerState;
  /** The run's starting weights W_0, when the run tracks its weight updates (weight_stats_every, rank1_eval). */
  start?: ParamArrays;
  /** The sampler's snapshots under max_staleness / weight_sync_steps (staleness.ts), oldest version first. */
  stale?: StaleSnapshot[];
}

/** Serializes a trainer state (policy, reference, critic, AdamW moments, the starting weights, counters, RNG) into one safetensors file. */
export function encodeTrainerState(state: TrainerState): Uint8Array {
  const tensors = new Map<string, SafetensorsTensorInput>();
  const add = (prefix: string, arrays: ParamArrays | undefined) => {
    if (!arrays) return;
    for (const [name, data] of Object.entries(arrays))
      tensors.set(`${prefix}/${name}`, { dtype: 'F32', shape: [data.length], data });
  };
  const l = state.learner;
  add('policy', l.policy);
  add('lora', l.lora);
  add('policy_adam_m', l.policyOptimizer.m);
  add('policy_adam_v', l.policyOptimizer.v);
  add('reference', l.reference);
  add('critic', l.critic);
  add('critic_adam_m', l.criticOptimizer?.m);
  add('critic_adam_v', l.criticOptimizer?.v);
  add('start', state.start);
  for (const { version, params } of state.stale ?? []) add(stalePart(version), params);
  const meta = {
    ...state.meta,
    policyOptimizerStep: l.policyOptimizer.step,
    criticOptimizerStep: l.criticOptimizer?.step ?? null,
  };
  return writeSafetensors(tensors, { format: 'rl-lab-trainer-state', trainer: JSON.stringify(meta) });
}

/** A trainer state file that cannot be resumed; `problems` each start with the field or tensor they are about. */
export class TrainerStateError extends Error {
  override name = 'TrainerStateError';
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? `trainer state: ${problems[0]}` : `trainer state:\n  ${problems.join('\n  ')}`);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shown = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));

/** A whole number in [min, max], or the problem named by `field`. */
function wholeProblem(field: string, v: unknown, min: number, max = Number.MAX_SAFE_INTEGER, why = ''): string | null {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    return `${field}: must be a whole number in [${min}, ${max}]${why}, got ${shown(v)}`;
  }
  return null;
}

/** The tensor parts a state may hold, and the architecture each part's tensors follow. */
const POLICY_PARTS = ['policy', 'lora', 'policy_adam_m', 'policy_adam_v', 'reference', 'start'] as const;
const CRITIC_PARTS = ['critic', 'critic_adam_m', 'critic_adam_v'] as const;

/** The part holding the sampler's snapshot of model version `version` (the policy's architecture). */
const stalePart = (version: number) => `stale_v${version}`;
/** The model version of a snapshot part's name, or null when `part` is not one. */
function staleVersion(part: string): number | null {
  const m = /^stale_v(0|[1-9][0-9]{0,8})$/.exec(part);
  return m ? Number(m[1]) : null;
}

/** Problems of one part's tensors against the architecture: every tensor present, of the right size, finite. */
function partProblems(part: string, arrays: ParamArrays, expected: { name: string; shape: number[] }[]): string[] {
  const problems: string[] = [];
  const names = new Set(expected.map((e) => e.name));
  for (const { name, shape } of expected) {
    const data = arrays[name];
    const size = shape.reduce((a, b) => a * b, 1);
    if (!data) problems.push(`${part}/${name}: missing (the model config needs it, shape [${shape.join(', ')}])`);
    else if (data.length !== size)
      problems.push(
        `${part}/${name}: has ${data.length} values, the model config needs [${shape.join(', ')}] = ${size}`,
      );
    else {
      const bad = data.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) problems.push(`${part}/${name}: value ${bad} is ${data[bad]} (the saved tensors must be finite)`);
    }
  }
  for (const name of Object.keys(arrays))
    if (!names.has(name)) problems.push(`${part}/${name}: not a tensor of this model config`);
  return problems;
}

/**
 * Config fields added after version 1 (those the schema dates with `since`): a file without them takes their
 * defaults (which mean what it ran with).
 */
export const FIELDS_ADDED_LATER: readonly RLField[] = FIELD_NAMES.filter((k) => FIELD_SPECS[k].since !== undefined);

/** The saved meta checked field by field; returns the problems (each naming its field) and the decoded meta. */
function metaProblems(
  raw: Record<string, unknown>,
  parts: Record<string, ParamArrays>,
): { problems: string[]; meta?: TrainerMeta & { policyOptimizerStep: number; criticOptimizerStep: number | null } } {
  if (raw.version !== 1) return { problems: [`version: ${shown(raw.version)} is not supported (expected 1)`] };
  const problems: string[] = [];
  const known = new Set([
    'version',
    'config',
    'modelConfig',
    'step',
    'optimizerStep',
    'numTokens',
    'rngState',
    'entropyCoef',
    'lastEntropy',
    'baseline',
    'successRate',
    'initialEvalPending',
    'policyOptimizerStep',
    'criticOptimizerStep',
  ]);
  for (const k of Object.keys(raw))
    if (!known.has(k)) problems.push(`${k}: unknown field (known: ${[...known].join(', ')})`);
  // The resume boundary: the saved config is checked once here, with every problem named. save_every came after
  // version 1 (and the rollout correction and entropy control bounds); files without them take their defaults, as
  // numTokens does.
  let config: RLConfig | null = null;
  if (!isRecord(raw.config)) problems.push(`config: must be the run's RL config (an object), got ${shown(raw.config)}`);
  else {
    try {
      // In the schema's field order, so the config compares equal (as JSON) to one resolved afresh.
      const later = Object.fromEntries(FIELDS_ADDED_LATER.map((k) => [k, DEFAULT_CONFIG[k]]));
      const withDefaults: Record<string, unknown> = { ...later, ...raw.config };
      const ordered = [...FIELD_NAMES, ...Object.keys(withDefaults)].filter((k) => k in withDefaults);
      config = validateConfig(Object.fromEntries([...new Set(ordered)].map((k) => [k, withDefaults[k]])));
    } catch (e) {
      if (!(e instanceof RLConfigError)) throw e;
      problems.push(`config: its saved config is not valid here: ${e.problems.join('; ')}`);
    }
  }
  let modelConfig: ModelConfig | null = null;
  if (!isRecord(raw.modelConfig))
    problems.push(`modelConfig: must be the policy's architecture (an object), got ${shown(raw.modelConfig)}`);
  else {
    const mp = modelConfigProblems(raw.modelConfig);
    if (mp.length) problems.push(...mp.map((p) => `modelConfig.${p}`));
    else modelConfig = raw.modelConfig as unknown as ModelConfig;
  }
  const stepMax = config ? config.steps : Number.MAX_SAFE_INTEGER;
  const push = (p: string | null) => p && problems.push(p);
  push(
    wholeProblem('step', raw.step, 0, stepMax, config ? " (the rollout steps done, at most the config's steps)" : ''),
  );
  push(wholeProblem('optimizerStep', raw.optimizerStep, 0));
  const numTokens = raw.numTokens ?? 0;
  push(wholeProblem('numTokens', numTokens, 0));
  push(wholeProblem('rngState', raw.rngState, 0, 0xffffffff, ' (the data RNG, 32 bits)'));
  if (typeof raw.entropyCoef !== 'number' || !Number.isFinite(raw.entropyCoef))
    problems.push(`entropyCoef: must be a finite number, got ${shown(raw.entropyCoef)}`);
  const lastEntropy = raw.lastEntropy ?? null;
  if (lastEntropy !== null && (typeof lastEntropy !== 'number' || !(lastEntropy >= 0 && lastEntropy < Infinity)))
    problems.push(`lastEntropy: must be null or a mean entropy (a finite number >= 0), got ${shown(lastEntropy)}`);
  const baseline = raw.baseline;
  if (baseline !== null) {
    if (!isRecord(baseline)) problems.push(`baseline: must be null or { value, batches }, got ${shown(baseline)}`);
    else {
      if (typeof baseline.value !== 'number' || !Number.isFinite(baseline.value))
        problems.push(`baseline.value: must be a finite number, got ${shown(baseline.value)}`);
      push(wholeProblem('baseline.batches', baseline.batches, 0));
    }
  }
  if (!isRecord(raw.successRate))
    problems.push(`successRate: must be an object of difficulty -> rate, got ${shown(raw.successRate)}`);
  else {
    for (const [d, r] of Object.entries(raw.successRate)) {
      if (!/^\d+$/.test(d)) problems.push(`successRate.${d}: the key must be a difficulty (a whole number)`);
      if (typeof r !== 'number' || !(r >= 0 && r <= 1))
        problems.push(`successRate.${d}: must be a rate in [0, 1], got ${shown(r)}`);
    }
  }
  if (raw.initialEvalPending !== undefined) {
    if (raw.initialEvalPending !== true)
      problems.push(`initialEvalPending: must be true when present, got ${shown(raw.initialEvalPending)}`);
    else if (!parts.start)
      problems.push('initialEvalPending: the step-0 evaluation runs at the starting weights, but start/ is missing');
  }
  push(wholeProblem('policyOptimizerStep', raw.policyOptimizerStep, 0));
  if (raw.criticOptimizerStep !== null) push(wholeProblem('criticOptimizerStep', raw.criticOptimizerStep, 0));

  // Tensors: the policy always; the reference and the critic when the config uses them; AdamW moments once the
  // optimizer has stepped (the trainer would otherwise start them from zero, or the reference from the policy,
  // without a word).
  for (const part of Object.keys(parts)) {
    if (
      !(POLICY_PARTS as readonly string[]).includes(part) &&
      !(CRITIC_PARTS as readonly string[]).includes(part) &&
      staleVersion(part) === null
    )
      problems.push(
        `${part}/: not a tensor group of a trainer state (known: ${[...POLICY_PARTS, ...CRITIC_PARTS, 'stale_v<version>'].join(', ')})`,
      );
  }
  if (!parts.policy) problems.push('policy: no policy tensors');
  if (config && modelConfig) {
    const d = derive(config);
    const required: string[] = ['policy'];
    if (typeof raw.policyOptimizerStep === 'number' && raw.policyOptimizerStep > 0)
      required.push('policy_adam_m', 'policy_adam_v');
    // Under LoRA the adapters are saved beside the frozen base, and AdamW's moments are theirs.
    const lora =
      config.lora_rank > 0
        ? loraShapes(modelConfig, {
            rank: config.lora_rank,
            alpha: config.lora_alpha,
            targets: parseLoraTargets(config.lora_targets),
          })
        : null;
    if (lora) required.push('lora');
    else if (parts.lora) problems.push('lora: the config has no LoRA (lora_rank 0), but the state holds adapters');
    if (d.needsReference) required.push('reference');
    if (d.needsCritic) {
      required.push('critic');
      if (typeof raw.criticOptimizerStep === 'number' && raw.criticOptimizerStep > 0)
        required.push('critic_adam_m', 'critic_adam_v');
    }
    // Stale rollouts: the versions the sampler may still read, from max_staleness syncs behind to the newest.
    const staleParts = Object.keys(parts).filter((p) => staleVersion(p) !== null);
    if (stalenessActive(config) && typeof raw.optimizerStep === 'number') {
      const newest = modelVersion(raw.optimizerStep, config);
      for (let v = Math.max(0, newest - config.max_staleness); v <= newest; v++)
        if (!parts[stalePart(v)])
          problems.push(
            `${stalePart(v)}: missing (max_staleness ${config.max_staleness}, weight_sync_steps ${config.weight_sync_steps}: the sampler reads model version ${v} after optimizer step ${raw.optimizerStep}; a state saved before snapshots were kept cannot continue exactly)`,
          );
    } else
      for (const p of staleParts)
        problems.push(
          `${p}: the config samples on-policy (max_staleness 0, weight_sync_steps 1), so it keeps no snapshots`,
        );
    for (const part of required)
      if (part !== 'policy' && !parts[part])
        problems.push(
          `${part}: missing (the config${part.includes('adam') ? "'s optimizer has stepped" : ' needs it'})`,
        );
    const criticDims = { ...modelConfig, tiedEmbeddings: false };
    const trained = ['lora', 'policy_adam_m', 'policy_adam_v'];
    for (const [part, arrays] of Object.entries(parts)) {
      if (lora && trained.includes(part)) problems.push(...partProblems(part, arrays, lora));
      else if (part === 'lora')
        continue; // refused above
      else if ((POLICY_PARTS as readonly string[]).includes(part) || staleVersion(part) !== null)
        problems.push(...partProblems(part, arrays, paramShapes(modelConfig)));
      else if ((CRITIC_PARTS as readonly string[]).includes(part))
        problems.push(...partProblems(part, arrays, paramShapes(criticDims)));
    }
  }
  if (problems.length) return { problems };
  const { policyOptimizerStep, criticOptimizerStep, ...rest } = raw as unknown as TrainerMeta & {
    policyOptimizerStep: number;
    criticOptimizerStep: number | null;
  };
  return {
    problems,
    meta: {
      ...rest,
      config: config!,
      modelConfig: modelConfig!,
      numTokens: numTokens as number,
      lastEntropy: lastEntropy as number | null,
      policyOptimizerStep,
      criticOptimizerStep,
    },
  };
}

/**
 * Reads a file written by encodeTrainerState. Every field of the meta and every tensor is checked where it enters
 * (types, ranges, the config, the architecture, tensor sizes, finiteness); a foreign or damaged file throws
 * TrainerStateError naming each field or tensor that is wrong.
 */
export function decodeTrainerState(bytes: Uint8Array): TrainerState {
  let file: ReturnType<typeof readSafetensors>;
  try {
    file = readSafetensors(bytes, { toFloat32: true, copy: true });
  } catch (e) {
    throw new TrainerStateError([`not a readable safetensors file (${(e as Error).message})`]);
  }
  if (file.metadata?.format !== 'rl-lab-trainer-state' || !file.metadata.trainer) {
    throw new TrainerStateError(['not an RL Lab trainer state (its safetensors header has no "trainer" metadata)']);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(file.metadata.trainer);
  } catch (e) {
    throw new TrainerStateError([`the "trainer" metadata is not valid JSON: ${(e as Error).message}`]);
  }
  if (!isRecord(raw)) throw new TrainerStateError([`the "trainer" metadata must be an object, got ${shown(raw)}`]);
  // Null-prototype maps: a tensor named "__proto__/x" or "constructor/x" is a name like any other, never a write
  // into Object.prototype (the unknown part is then refused by name).
  const parts: Record<string, ParamArrays> = Object.create(null) as Record<string, ParamArrays>;
  for (const [key, t] of file.tensors) {
    const slash = key.indexOf('/');
    const part = slash < 0 ? key : key.slice(0, slash);
    (parts[part] ??= Object.create(null) as ParamArrays)[key.slice(slash + 1)] = t.data as Float32Array;
  }
  const { problems, meta } = metaProblems(raw, parts);
  if (!meta) throw new TrainerStateError(problems);
  const { policyOptimizerStep, criticOptimizerStep, ...rest } = meta;
  const learner: LearnerState = {
    policy: parts.policy,
    policyOptimizer: { m: parts.policy_adam_m ?? {}, v: parts.policy_adam_v ?? {}, step: policyOptimizerStep },
  };
  if (parts.lora) learner.lora = parts.lora;
  if (parts.reference) learner.reference = parts.reference;
  if (parts.critic) {
    learner.critic = parts.critic;
    learner.criticOptimizer = {
      m: parts.critic_adam_m ?? {},
      v: parts.critic_adam_v ?? {},
      step: criticOptimizerStep ?? 0,
    };
  }
  const stale = Object.keys(parts)
    .flatMap((p) => {
      const version = staleVersion(p);
      return version === null ? [] : [{ version, params: parts[p] }];
    })
    .sort((a, b) => a.version - b.version);
  return {
    meta: rest,
    learner,
    ...(parts.start ? { start: parts.start } : {}),
    ...(stale.length ? { stale } : {}),
  };
}
