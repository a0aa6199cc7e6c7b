// Fuzz cases for trainer states (the resume boundary): a valid trainer_state.safetensors with its "trainer"
// metadata and its tensor names broken one way at a time. Each case is refused with an Error whose message starts
// "trainer state:" (or "safetensors:") and names the field or says what is wrong: never a TypeError/RangeError
// crash, never accepted in silence, and never a write through a tensor name into Object.prototype.
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../../schema/model-config';
import { readSafetensors, writeSafetensors, type SafetensorsTensorInput } from '../../io/safetensors';
import { INHERITED_NAMES } from '../../reference/fuzz-inputs';
import { resolveConfig } from '../../schema/config';
import { fixtureParams } from './trainer-state.fixture';
import { decodeTrainerState, encodeTrainerState, type TrainerState } from './trainer-state';

const weights = (base: number) => fixtureParams(MODEL_PRESETS.nano, base);
const state: TrainerState = {
  meta: {
    version: 1,
    config: resolveConfig('reinforce', { task: 'copy', steps: 5, seed: 3 }),
    modelConfig: MODEL_PRESETS.nano,
    step: 2,
    optimizerStep: 4,
    numTokens: 1234,
    rngState: 987654321,
    entropyCoef: 0.01,
    lastEntropy: 1.5,
    baseline: { value: 0.5, batches: 2 },
    successRate: { 3: 0.25 },
  },
  learner: { policy: weights(1), policyOptimizer: { m: weights(0.1), v: weights(0.01), step: 4 } },
};
const good = encodeTrainerState(state);

/** The file with its "trainer" metadata text, and optionally its tensor names, rewritten. */
function rewrite(trainer: (text: string) => string, names: (name: string) => string = (n) => n): Uint8Array {
  const file = readSafetensors(good, { copy: true });
  const tensors = new Map<string, SafetensorsTensorInput>(
    [...file.tensors].map(([k, t]) => [names(k), { dtype: 'F32', shape: t.shape, data: t.data as Float32Array }]),
  );
  return writeSafetensors(tensors, { ...file.metadata, trainer: trainer(file.metadata.trainer) });
}

/** The file with meta field `key` set to `value` (or removed, for undefined). */
function withField(key: string, value: unknown): Uint8Array {
  return rewrite((text) => {
    const meta = JSON.parse(text) as Record<string, unknown>;
    if (value === undefined) delete meta[key];
    else meta[key] = value;
    return JSON.stringify(meta);
  });
}

interface Case {
  label: string;
  bytes: Uint8Array;
  /** Text the refusal must contain. */
  mustName: string;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const text of ['null', '[]', '5', '"x"', 'true', '{'])
    out.push({ label: `meta ${text}`, bytes: rewrite(() => text), mustName: 'trainer state:' });
  for (const v of [2, '1', null, undefined])
    out.push({ label: `version ${String(JSON.stringify(v))}`, bytes: withField('version', v), mustName: 'version' });
  const counters = ['step', 'optimizerStep', 'policyOptimizerStep'];
  for (const key of counters)
    for (const v of ['x', -1, 1.5, null, [], {}, undefined])
      out.push({ label: `${key} ${String(JSON.stringify(v))}`, bytes: withField(key, v), mustName: key });
  for (const v of ['x', -1, 1.5, []])
    out.push({ label: `numTokens ${JSON.stringify(v)}`, bytes: withField('numTokens', v), mustName: 'numTokens' });
  for (const v of ['x', 1.5, null, [], undefined])
    out.push({ label: `rngState ${String(JSON.stringify(v))}`, bytes: withField('rngState', v), mustName: 'rngState' });
  for (const v of ['x', null, [], {}, undefined])
    out.push({
      label: `entropyCoef ${String(JSON.stringify(v))}`,
      bytes: withField('entropyCoef', v),
      mustName: 'entropyCoef',
    });
  for (const v of ['x', 5, [], {}, { value: 'x', batches: 1 }, { value: 0.5, batches: -1 }])
    out.push({ label: `baseline ${JSON.stringify(v)}`, bytes: withField('baseline', v), mustName: 'baseline' });
  for (const v of ['x', 5, [], null, { 3: 'x' }])
    out.push({
      label: `successRate ${JSON.stringify(v)}`,
      bytes: withField('successRate', v),
      mustName: 'successRate',
    });
  for (const v of [
    null,
    'x',
    [],
    {},
    undefined,
    { ...MODEL_PRESETS.nano, nLayers: 'x' },
    { ...MODEL_PRESETS.nano, dModel: -4 },
  ]) {
    out.push({
      label: `modelConfig ${String(JSON.stringify(v)).slice(0, 40)}`,
      bytes: withField('modelConfig', v),
      mustName: 'modelConfig',
    });
  }
  for (const v of [null, 'x', [], undefined, { ...state.meta.config, beta: 'x' }]) {
    out.push({
      label: `config ${String(JSON.stringify(v)).slice(0, 40)}`,
      bytes: withField('config', v),
      mustName: 'config',
    });
  }
  for (const name of INHERITED_NAMES) {
    out.push({
      label: `config with ${name}`,
      bytes: rewrite((text) => text.replace('"config":{', `"config":{${JSON.stringify(name)}:1,`)),
      mustName: `unknown field ${name}`,
    });
  }
  for (const v of ['x', -1, 1.5])
    out.push({
      label: `criticOptimizerStep ${JSON.stringify(v)}`,
      bytes: withField('criticOptimizerStep', v),
      mustName: 'criticOptimizerStep',
    });
  // Tensor names: a part named like an Object member, and a name without a part.
  for (const part of ['__proto__', 'constructor', 'toString']) {
    out.push({
      label: `tensor part ${part}`,
      bytes: rewrite(
        (t) => t,
        (n) => (n.startsWith('policy_adam_v/') ? `${part}/polluted` : n),
      ),
      mustName: part,
    });
  }
  out.push({
    label: 'tensor without a part',
    bytes: rewrite(
      (t) => t,
      (n) => (n.startsWith('policy_adam_v/') ? 'polluted' : n),
    ),
    mustName: 'polluted',
  });
  out.push({
    label: 'no policy tensors',
    bytes: rewrite(
      (t) => t,
      (n) => n.replace(/^policy\//, 'other/'),
    ),
    mustName: 'policy',
  });
  return out;
}

const CASES = cases();

describe('fuzz: trainer states', () => {
  it.each(CASES.map((c) => [c.label, c] as const))('%s', (_, c) => {
    let refused: Error | null = null;
    try {
      decodeTrainerState(c.bytes);
    } catch (e) {
      refused = e as Error;
    } finally {
      // A tensor name must never reach Object.prototype; clean up so one failure does not spread to other cases.
      const polluted = Object.hasOwn(Object.prototype, 'polluted');
      delete (Object.prototype as Record<string, unknown>).polluted;
      expect(polluted, `${c.label}: wrote into Object.prototype`).toBe(false);
    }
    expect(refused, `${c.label}: accepted in silence`).not.toBeNull();
    expect(refused, `${c.label}: ${refused!.name}: ${refused!.message}`).not.toBeInstanceOf(TypeError);
    expect(refused).not.toBeInstanceOf(RangeError);
    expect(refused!.message).toMatch(/^(trainer state|safetensors):\s/);
    expect(refused!.message).toContain(c.mustName);
  });

  it('decodes the untouched file', () => {
    expect(decodeTrainerState(good).meta).toEqual(state.meta);
  });
});
