// The trainer state's file (trainer-state.ts): a state round-trips exactly, a version-1 file written before
// numTokens or save_every existed decodes with their defaults, and foreign, newer, damaged or malformed files
// (a table of tens of them) fail with a TrainerStateError naming the field or tensor. Resuming a real run exactly
// from a decoded state is trainer.test.ts's.

import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../../schema/model-config';
import { readSafetensors, writeSafetensors } from '../../io/safetensors';
import { DEFAULT_CONFIG, FIELD_NAMES, FIELD_SPECS, resolveConfig } from '../../schema/config';
import { fixtureParams } from './trainer-state.fixture';
import {
  FIELDS_ADDED_LATER,
  TrainerStateError,
  decodeTrainerState,
  encodeTrainerState,
  type TrainerState,
} from './trainer-state';

const params = fixtureParams;

/** A PPO state (a critic, and a reference: the ppo preset's beta is 0.05) of the nano model after 2 steps. */
function state(): TrainerState {
  const criticDims = { ...MODEL_PRESETS.nano, tiedEmbeddings: false };
  return {
    meta: {
      version: 1,
      config: resolveConfig('ppo', { task: 'copy', steps: 5, seed: 3 }),
      modelConfig: MODEL_PRESETS.nano,
      step: 2,
      optimizerStep: 4,
      numTokens: 1234,
      rngState: 987654321,
      entropyCoef: 0.01,
      lastEntropy: 1.5,
      baseline: null,
      successRate: { 3: 0.25 },
    },
    learner: {
      policy: params(MODEL_PRESETS.nano, 1),
      policyOptimizer: { m: params(MODEL_PRESETS.nano, 0.1), v: params(MODEL_PRESETS.nano, 0.01), step: 4 },
      reference: params(MODEL_PRESETS.nano, 2),
      critic: params(criticDims, 4),
      criticOptimizer: { m: params(criticDims, 0.4), v: params(criticDims, 0.04), step: 4 },
    },
  };
}

type Tensors = Map<string, { dtype: 'F32'; shape: number[]; data: Float32Array }>;

/** The file's "trainer" metadata rewritten by `edit` and its tensors by `editTensors`. */
function withMeta(
  bytes: Uint8Array,
  edit: (meta: Record<string, unknown>) => void,
  editTensors: (t: Tensors) => void = () => {},
): Uint8Array {
  const file = readSafetensors(bytes, { toFloat32: true, copy: true });
  const meta = JSON.parse(file.metadata.trainer) as Record<string, unknown>;
  edit(meta);
  const tensors: Tensors = new Map(
    [...file.tensors].map(([k, t]) => [k, { dtype: 'F32' as const, shape: t.shape, data: t.data as Float32Array }]),
  );
  editTensors(tensors);
  return writeSafetensors(tensors, { ...file.metadata, trainer: JSON.stringify(meta) });
}

const cfg = (m: Record<string, unknown>) => m.config as Record<string, unknown>;
const mc = (m: Record<string, unknown>) => m.modelConfig as Record<string, unknown>;
const EMBED = 'model.embed_tokens.weight';

/** Malformed states: [what, meta edit, tensor edit, the message must match]. Every one names its field or tensor. */
const MALFORMED: [string, (m: Record<string, unknown>) => void, ((t: Tensors) => void) | null, RegExp][] = [
  ['step a string', (m) => (m.step = 'x'), null, /step: must be a whole number in \[0, 5\].*got "x"/],
  ['step negative', (m) => (m.step = -5), null, /step: must be a whole number in \[0, 5\].*got -5/],
  ['step fractional', (m) => (m.step = 1.5), null, /step: .*got 1\.5/],
  ["step past the config's steps", (m) => (m.step = 6), null, /step: must be a whole number in \[0, 5\].*got 6/],
  ['step missing', (m) => delete m.step, null, /step: .*got nothing/],
  ['step null', (m) => (m.step = null), null, /step: .*got null/],
  ['optimizerStep a string', (m) => (m.optimizerStep = '4'), null, /optimizerStep: must be a whole number.*got "4"/],
  ['optimizerStep negative', (m) => (m.optimizerStep = -1), null, /optimizerStep: .*got -1/],
  ['numTokens negative', (m) => (m.numTokens = -1), null, /numTokens: must be a whole number in \[0, .*got -1/],
  ['numTokens a string', (m) => (m.numTokens = '12'), null, /numTokens: .*got "12"/],
  ['numTokens fractional', (m) => (m.numTokens = 0.5), null, /numTokens: .*got 0\.5/],
  [
    'rngState a string',
    (m) => (m.rngState = 'abc'),
    null,
    /rngState: must be a whole number in \[0, 4294967295\].*got "abc"/,
  ],
  ['rngState beyond 32 bits', (m) => (m.rngState = 2 ** 32), null, /rngState: .*got 4294967296/],
  ['rngState an array', (m) => (m.rngState = [1, 2]), null, /rngState: .*got \[1,2\]/],
  ['rngState negative', (m) => (m.rngState = -1), null, /rngState: .*got -1/],
  ['entropyCoef a string', (m) => (m.entropyCoef = 'hi'), null, /entropyCoef: must be a finite number, got "hi"/],
  [
    'entropyCoef null (NaN in JSON)',
    (m) => (m.entropyCoef = null),
    null,
    /entropyCoef: must be a finite number, got null/,
  ],
  ['lastEntropy negative', (m) => (m.lastEntropy = -1), null, /lastEntropy: must be null or a mean entropy .*got -1/],
  ['lastEntropy a string', (m) => (m.lastEntropy = 'x'), null, /lastEntropy: must be null or a mean entropy .*got "x"/],
  ['baseline a number', (m) => (m.baseline = 3), null, /baseline: must be null or \{ value, batches \}, got 3/],
  [
    'baseline value not finite',
    (m) => (m.baseline = { value: null, batches: 1 }),
    null,
    /baseline\.value: must be a finite number/,
  ],
  ['baseline batches negative', (m) => (m.baseline = { value: 0.5, batches: -2 }), null, /baseline\.batches: .*got -2/],
  ['successRate an array', (m) => (m.successRate = [0.5]), null, /successRate: must be an object/],
  [
    'successRate a rate above 1',
    (m) => (m.successRate = { 3: 1.5 }),
    null,
    /successRate\.3: must be a rate in \[0, 1\], got 1\.5/,
  ],
  [
    'successRate a key that is not a difficulty',
    (m) => (m.successRate = { easy: 0.5 }),
    null,
    /successRate\.easy: the key must be a difficulty/,
  ],
  [
    'initialEvalPending not true',
    (m) => (m.initialEvalPending = 'yes'),
    null,
    /initialEvalPending: must be true when present, got "yes"/,
  ],
  [
    'initialEvalPending without the starting weights',
    (m) => (m.initialEvalPending = true),
    null,
    /initialEvalPending: the step-0 evaluation runs at the starting weights, but start\/ is missing/,
  ],
  ['policyOptimizerStep missing', (m) => delete m.policyOptimizerStep, null, /policyOptimizerStep: .*got nothing/],
  ['criticOptimizerStep a string', (m) => (m.criticOptimizerStep = 'two'), null, /criticOptimizerStep: .*got "two"/],
  ['an unknown field', (m) => (m.stepz = 1), null, /stepz: unknown field/],
  [
    'modelConfig missing',
    (m) => delete m.modelConfig,
    null,
    /modelConfig: must be the policy's architecture \(an object\), got nothing/,
  ],
  ['modelConfig a string', (m) => (m.modelConfig = 'nano'), null, /modelConfig: .*got "nano"/],
  [
    'modelConfig without contextLength',
    (m) => delete mc(m).contextLength,
    null,
    /modelConfig\.contextLength: must be a number/,
  ],
  ['modelConfig dModel not a number', (m) => (mc(m).dModel = '48'), null, /modelConfig\.dModel: must be a number/],
  [
    'modelConfig nKvHeads not dividing nHeads',
    (m) => (mc(m).nKvHeads = 3),
    null,
    /modelConfig\.nKvHeads: must divide nHeads/,
  ],
  [
    'modelConfig larger than the tensors',
    (m) => (mc(m).dModel = 64),
    null,
    /policy\/model\.embed_tokens\.weight: has 4752 values, the model config needs \[99, 64\] = 6336/,
  ],
  ['config missing', (m) => delete m.config, null, /config: must be the run's RL config \(an object\), got nothing/],
  ['config a field out of range', (m) => (cfg(m).epsilon = 2), null, /config: .*epsilon: must be in \[0, 1\), got 2/],
  ['config steps a string', (m) => (cfg(m).steps = 'many'), null, /config: .*steps: /],
  [
    'policy tensors missing',
    () => {},
    (t) => [...t.keys()].filter((k) => k.startsWith('policy/')).forEach((k) => t.delete(k)),
    /policy: no policy tensors/,
  ],
  [
    'a policy tensor missing',
    () => {},
    (t) => t.delete(`policy/${EMBED}`),
    /policy\/model\.embed_tokens\.weight: missing \(the model config needs it, shape \[99, 48\]\)/,
  ],
  [
    'a policy tensor of the wrong size',
    () => {},
    (t) => t.set(`policy/${EMBED}`, { dtype: 'F32', shape: [3], data: new Float32Array(3) }),
    /policy\/model\.embed_tokens\.weight: has 3 values/,
  ],
  [
    'a policy tensor with NaN',
    () => {},
    (t) => (t.get(`policy/${EMBED}`)!.data[7] = NaN),
    /policy\/model\.embed_tokens\.weight: value 7 is NaN/,
  ],
  [
    'an Adam moment with Infinity',
    () => {},
    (t) => (t.get('policy_adam_v/model.norm.weight')!.data[0] = Infinity),
    /policy_adam_v\/model\.norm\.weight: value 0 is Infinity/,
  ],
  [
    'a tensor foreign to the model',
    () => {},
    (t) => t.set('policy/extra.weight', { dtype: 'F32', shape: [1], data: new Float32Array(1) }),
    /policy\/extra\.weight: not a tensor of this model config/,
  ],
  [
    'an unknown tensor group',
    () => {},
    (t) => t.set('optimizer/x', { dtype: 'F32', shape: [1], data: new Float32Array(1) }),
    /optimizer\/: not a tensor group/,
  ],
  [
    'Adam moments missing after optimizer steps',
    () => {},
    (t) => [...t.keys()].filter((k) => k.startsWith('policy_adam_m/')).forEach((k) => t.delete(k)),
    /policy_adam_m: missing \(the config's optimizer has stepped\)/,
  ],
  [
    'the critic missing with gae',
    () => {},
    (t) => [...t.keys()].filter((k) => k.startsWith('critic')).forEach((k) => t.delete(k)),
    /critic: missing \(the config needs it\)/,
  ],
  [
    'the reference missing with beta > 0',
    () => {},
    (t) => [...t.keys()].filter((k) => k.startsWith('reference/')).forEach((k) => t.delete(k)),
    /reference: missing \(the config needs it\)/,
  ],
  ['the critic head tied', () => {}, (t) => t.delete('critic/lm_head.weight'), /critic\/lm_head\.weight: missing/],
];

describe('trainer state file', () => {
  it('round-trips every counter and tensor exactly', () => {
    const s = state();
    expect(decodeTrainerState(encodeTrainerState(s))).toEqual(s);
  });

  it('a version-1 file without numTokens (written before it existed) decodes with the count restarting at 0', () => {
    const old = withMeta(encodeTrainerState(state()), (m) => delete m.numTokens);
    const back = decodeTrainerState(old);
    expect(back.meta.numTokens).toBe(0);
    expect({ ...back.meta, numTokens: 1234 }).toEqual(state().meta);
  });

  it('a file written before the rollout correction and entropy bounds existed decodes with their defaults', () => {
    const later = [
      'rollout_is_mode',
      'rollout_is_clip_min',
      'rollout_is_clip_max',
      'off_policy_mask_threshold',
      'entropy_coef_min',
      'entropy_coef_max',
      'entropy_bonus_gate',
    ];
    const old = withMeta(encodeTrainerState(state()), (m) => {
      for (const k of later) delete cfg(m)[k];
      delete m.lastEntropy;
    });
    const back = decodeTrainerState(old);
    expect(JSON.stringify(back.meta.config)).toBe(JSON.stringify(state().meta.config));
    expect(back.meta.lastEntropy).toBeNull();
  });

  it('every field the schema dates with `since` may be missing from a file, with its default; any other is refused', () => {
    expect(FIELDS_ADDED_LATER.length).toBeGreaterThan(10);
    const old = withMeta(encodeTrainerState(state()), (m) => {
      for (const k of FIELDS_ADDED_LATER) delete cfg(m)[k];
    });
    const back = decodeTrainerState(old).meta.config;
    for (const k of FIELDS_ADDED_LATER) expect(back[k], k).toEqual(DEFAULT_CONFIG[k]);
    const undated = FIELD_NAMES.find((k) => FIELD_SPECS[k].since === undefined)!;
    expect(() => decodeTrainerState(withMeta(encodeTrainerState(state()), (m) => delete cfg(m)[undated]))).toThrow(
      new RegExp(`${undated}: missing`),
    );
  });

  it('a file written before save_every existed decodes with its default', () => {
    const old = withMeta(encodeTrainerState(state()), (m) => delete cfg(m).save_every);
    // Equal as JSON too (field order included): Trainer.create compares the resumed config that way.
    expect(JSON.stringify(decodeTrainerState(old).meta.config)).toBe(JSON.stringify(state().meta.config));
  });

  it('refuses foreign, newer and damaged files, naming what is wrong', () => {
    const good = encodeTrainerState(state());
    expect(() => decodeTrainerState(writeSafetensors(new Map(), { format: 'other' }))).toThrow(
      /not an RL Lab trainer state/,
    );
    expect(() => decodeTrainerState(withMeta(good, (m) => (m.version = 2)))).toThrow(/version: 2 is not supported/);
    expect(() => decodeTrainerState(new Uint8Array(16))).toThrow(TrainerStateError);
    expect(() => decodeTrainerState(good.subarray(0, good.length - 100))).toThrow(
      /trainer state: not a readable safetensors file/,
    );
  });

  it.each(MALFORMED)('refuses %s, naming the field', (_what, edit, editTensors, message) => {
    const bad = withMeta(encodeTrainerState(state()), edit, editTensors ?? undefined);
    let thrown: unknown = null;
    try {
      decodeTrainerState(bad);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TrainerStateError);
    expect((thrown as Error).message).toMatch(message);
  });

  it('names every problem of a file at once', () => {
    const bad = withMeta(encodeTrainerState(state()), (m) => {
      m.step = 'x';
      m.rngState = -1;
      delete m.modelConfig;
    });
    expect(() => decodeTrainerState(bad)).toThrow(/modelConfig: [^\n]*\n\s+step: [^\n]*\n\s+rngState: /);
  });

  it('checks the saved config at the resume boundary, naming every field and rule', () => {
    const good = encodeTrainerState(state());
    const bad = withMeta(good, (m) => {
      const c = m.config as Record<string, unknown>;
      c.epsilon = 2;
      c.kl_coef = 0.1;
    });
    expect(() => decodeTrainerState(bad)).toThrow(
      /config: its saved config is not valid here: .*unknown field kl_coef; did you mean beta\?.*epsilon: must be in \[0, 1\), got 2/,
    );
  });
});
