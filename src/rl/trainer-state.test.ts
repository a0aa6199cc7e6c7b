// The trainer state's file (trainer-state.ts): a state round-trips exactly, a version-1 file written before
// numTokens existed decodes with the count at 0, and foreign, newer or damaged files fail with what is wrong.
// Resuming a real run exactly from a decoded state is trainer.test.ts's.

import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../model/config';
import { readSafetensors, writeSafetensors } from '../model/safetensors';
import { resolveConfig } from './config';
import { decodeTrainerState, encodeTrainerState, type TrainerState } from './trainer-state';

function state(): TrainerState {
  const p = (xs: number[]) => ({ 'model.embed_tokens.weight': Float32Array.from(xs) });
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
      baseline: null,
      successRate: { 3: 0.25 },
    },
    learner: {
      policy: p([1, 2, 3]),
      policyOptimizer: { m: p([0.1, 0.2, 0.3]), v: p([0.01, 0.02, 0.03]), step: 4 },
      critic: p([4, 5, 6]),
      criticOptimizer: { m: p([0.4, 0.5, 0.6]), v: p([0.04, 0.05, 0.06]), step: 4 },
    },
  };
}

/** The file's "trainer" metadata rewritten by `edit`, tensors kept. */
function withMeta(bytes: Uint8Array, edit: (meta: Record<string, unknown>) => void): Uint8Array {
  const file = readSafetensors(bytes, { toFloat32: true, copy: true });
  const meta = JSON.parse(file.metadata.trainer) as Record<string, unknown>;
  edit(meta);
  const tensors = new Map([...file.tensors].map(([k, t]) => [k, { dtype: 'F32' as const, shape: t.shape, data: t.data as Float32Array }]));
  return writeSafetensors(tensors, { ...file.metadata, trainer: JSON.stringify(meta) });
}

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

  it('refuses foreign, newer and damaged files, naming what is wrong', () => {
    const good = encodeTrainerState(state());
    expect(() => decodeTrainerState(writeSafetensors(new Map(), { format: 'other' }))).toThrow(/not an RL Lab trainer state/);
    expect(() => decodeTrainerState(withMeta(good, (m) => (m.version = 2)))).toThrow(/version 2 is not supported/);
    expect(() => decodeTrainerState(withMeta(good, (m) => (m.numTokens = -1)))).toThrow(/numTokens must be a whole number >= 0, got -1/);
    expect(() => decodeTrainerState(withMeta(good, (m) => (m.numTokens = '12')))).toThrow(/numTokens must be a whole number >= 0, got "12"/);
    expect(() => decodeTrainerState(new Uint8Array(16))).toThrow();
  });

  it('checks the saved config at the resume boundary, naming every field and rule', () => {
    const good = encodeTrainerState(state());
    const bad = withMeta(good, (m) => {
      const c = m.config as Record<string, unknown>;
      c.epsilon = 2;
      c.kl_coef = 0.1;
    });
    expect(() => decodeTrainerState(bad)).toThrow(/its saved config is not valid here: .*unknown field kl_coef; did you mean beta\?.*epsilon: must be in \[0, 1\), got 2/);
  });
});
