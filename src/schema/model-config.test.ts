// Model config: presets are valid and within the advertised sizes, and bad configs name the field and rule.
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS, ModelConfigError, parameterCount, validateModelConfig } from './model-config';
import { initParams, paramShapes } from '../core/model-shapes';
import { Rng } from '../core/random';

describe('model config', () => {
  it('presets are valid, ordered by size, and span ~50k to ~20M parameters', () => {
    const counts = Object.values(MODEL_PRESETS).map((p) => parameterCount(validateModelConfig(p)));
    expect(counts[0]).toBeGreaterThan(40_000);
    expect(counts[0]).toBeLessThan(70_000);
    expect(counts[counts.length - 1]).toBeGreaterThan(15_000_000);
    expect(counts[counts.length - 1]).toBeLessThan(22_000_000);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThan(counts[i - 1]);
  });

  it("parameterCount matches the reference model's tensors", () => {
    for (const cfg of [MODEL_PRESETS.nano, { ...MODEL_PRESETS.nano, tiedEmbeddings: false }]) {
      const n = paramShapes(cfg).reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
      expect(parameterCount(cfg)).toBe(n);
      expect(Object.keys(initParams(cfg, new Rng(1))).length).toBe(paramShapes(cfg).length);
    }
  });

  it('names the field and the rule of every problem', () => {
    const bad = { ...MODEL_PRESETS.nano, nHeads: 5, nKvHeads: 3, normEps: -1, vocabSize: 2.5, extra: 1 };
    let err: unknown;
    try {
      validateModelConfig(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ModelConfigError);
    const problems = (err as ModelConfigError).problems.join('\n');
    expect(problems).toMatch(/extra: unknown field/);
    expect(problems).toMatch(/normEps: must be in \[1e-12, 0.1\], got -1/);
    expect(problems).toMatch(/vocabSize: must be an integer, got 2.5/);
    expect(() => validateModelConfig({ ...MODEL_PRESETS.nano, nHeads: 5 })).toThrow(
      /nHeads: must divide dModel \(dModel 48, nHeads 5\)/,
    );
    expect(() => validateModelConfig({ ...MODEL_PRESETS.nano, nKvHeads: 3 })).toThrow(/nKvHeads: must divide nHeads/);
  });
});
