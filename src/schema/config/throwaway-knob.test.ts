// A knob declared in the registry alone reaches every reader of knobs. A throwaway field, `throwaway_coef`, and a
// rule about it are spliced into the objective's declarations (src/schema/objective.ts, mocked below: the one file a
// new knob is written in); with no other file touched it is validated (range, the rule, links, JSON), listed in
// --help and the panel's section, parsed as a CLI flag, saved in and loaded from a trainer state (an older state
// without it resumes with its default, by its `since` date), and exported to TRL, verl and OpenRLHF under its
// names there. What computes with a new loss knob is the objective's CPU twin, its GPU wrapper and the shader: so a
// knob needs at most 3 product files plus a shader, and the last ones added show it (the test at the end).

import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

/** The throwaway knob's TRL, verl and OpenRLHF names. */
const VERL_NAME = 'actor_rollout_ref.actor.policy_loss.throwaway_coef';
const OPENRLHF_NAME = '--actor.throwaway_coef';

vi.mock('../objective', async (importOriginal) => {
  const real = await importOriginal<typeof import('../objective')>();
  const { real: realField, section } = await import('../fields');
  const throwaway = section('loss', {
    throwaway_coef: realField('throwaway: a coefficient no loss reads, declared for this test only', 0.5, 0, 2, {
      since: '2026-12-06',
      trl: 'throwaway_coef',
      verl: 'actor_rollout_ref.actor.policy_loss.throwaway_coef',
      openrlhf: '--actor.throwaway_coef',
    }),
  });
  const rule = {
    scope: 'training' as const,
    problem: (c: Record<string, unknown>) =>
      (c.throwaway_coef as number) > 1 && c.loss_type !== 'cispo'
        ? `throwaway_coef: above 1 needs loss_type 'cispo', got '${String(c.loss_type)}'`
        : null,
  };
  return {
    ...real,
    POLICY_LOSS_FIELDS: { ...real.POLICY_LOSS_FIELDS, ...throwaway },
    OBJECTIVE_RULES: [...real.OBJECTIVE_RULES, rule],
  };
});

const { DEFAULT_CONFIG, FIELD_SECTIONS, configFromUrlParams, configToJson, configToUrlParams } = await import(
  './index'
);
const { parseConfigJson, problemsOf, resolveConfig } = await import('./index');
const { parseRlArgs, configFromArgs, rlHelpText } = await import('../../cli/train-rl');
const { decodeTrainerState, encodeTrainerState, FIELDS_ADDED_LATER } = await import('../../rl/algorithm/trainer-state');
const { exportExperiment, mappingRows } = await import('../../export');
const { MODEL_PRESETS } = await import('../model-config');
const { fixtureParams } = await import('../../rl/algorithm/trainer-state.fixture');
const { readSafetensors, writeSafetensors } = await import('../../io/safetensors');

/** The config resolved from the grpo preset with `overrides`, as a plain record (the type knows no throwaway). */
const resolved = (overrides: Record<string, unknown> = {}) =>
  resolveConfig('grpo', overrides) as unknown as Record<string, unknown>;

describe('a knob declared in the registry alone', () => {
  it('has its default in every config and its place in the panel section', () => {
    expect((DEFAULT_CONFIG as unknown as Record<string, unknown>).throwaway_coef).toBe(0.5);
    expect(resolved().throwaway_coef).toBe(0.5);
    expect(FIELD_SECTIONS.loss).toContain('throwaway_coef');
  });

  it('is validated: its range, and the rule declared beside it', () => {
    expect(resolved({ throwaway_coef: 0.25 }).throwaway_coef).toBe(0.25);
    expect(problemsOf(() => resolveConfig('grpo', { throwaway_coef: 3 }))).toEqual([
      'throwaway_coef: must be in [0, 2], got 3',
    ]);
    expect(problemsOf(() => resolveConfig('grpo', { throwaway_coef: 1.5 }))).toEqual([
      "throwaway_coef: above 1 needs loss_type 'cispo', got 'ppo_clip'",
    ]);
    expect(resolved({ throwaway_coef: 1.5, loss_type: 'cispo' }).throwaway_coef).toBe(1.5);
  });

  it('travels in links and JSON', () => {
    const c = resolveConfig('grpo', { throwaway_coef: 0.75 });
    const params = configToUrlParams(c, 'grpo');
    expect(params.get('throwaway_coef')).toBe('0.75');
    expect((configFromUrlParams(params) as unknown as Record<string, unknown>).throwaway_coef).toBe(0.75);
    expect(parseConfigJson(configToJson(c, 'grpo'))).toEqual(c);
  });

  it('is a CLI flag, parsed by its kind, listed in --help with its names elsewhere', () => {
    const parsed = parseRlArgs(['--throwaway_coef', '0.25', '--throwaway-coef=0.3']);
    expect(parsed.fields).toEqual({ throwaway_coef: 0.3 });
    const { config } = configFromArgs(parseRlArgs(['--throwaway_coef=0.25']));
    expect((config as unknown as Record<string, unknown>).throwaway_coef).toBe(0.25);
    expect(() => parseRlArgs(['--throwaway_coef', 'x'])).toThrow(/throwaway_coef: must be a number in \[0, 2\]/);
    expect(() => parseRlArgs(['--throwaway_cof', '1'])).toThrow(/did you mean --throwaway_coef\?/);
    const help = rlHelpText();
    expect(help).toContain('--throwaway_coef');
    expect(help).toContain('throwaway: a coefficient no loss reads');
    expect(help).toContain(`OpenRLHF ${OPENRLHF_NAME}`);
  });

  it('is saved in a trainer state, and a state saved before its date resumes with its default', () => {
    expect(FIELDS_ADDED_LATER).toContain('throwaway_coef');
    const nano = MODEL_PRESETS.nano;
    const state = {
      meta: {
        version: 1 as const,
        config: resolveConfig('grpo', { task: 'copy', steps: 5, throwaway_coef: 0.25 }),
        modelConfig: nano,
        step: 2,
        optimizerStep: 2,
        numTokens: 10,
        rngState: 7,
        entropyCoef: 0,
        lastEntropy: null,
        baseline: null,
        successRate: {},
      },
      learner: {
        policy: fixtureParams(nano, 1),
        policyOptimizer: { m: fixtureParams(nano, 0.1), v: fixtureParams(nano, 0.01), step: 2 },
        reference: fixtureParams(nano, 2),
      },
    };
    const bytes = encodeTrainerState(state);
    expect((decodeTrainerState(bytes).meta.config as unknown as Record<string, unknown>).throwaway_coef).toBe(0.25);
    // The same file as written before the knob existed: its config has no throwaway_coef.
    const file = readSafetensors(bytes, { toFloat32: true, copy: true });
    const meta = JSON.parse(file.metadata.trainer) as { config: Record<string, unknown> };
    delete meta.config.throwaway_coef;
    const tensors = new Map(
      [...file.tensors].map(([k, t]) => [k, { dtype: 'F32' as const, shape: t.shape, data: t.data as Float32Array }]),
    );
    const old = writeSafetensors(tensors, { ...file.metadata, trainer: JSON.stringify(meta) });
    expect((decodeTrainerState(old).meta.config as unknown as Record<string, unknown>).throwaway_coef).toBe(0.5);
  });

  it('is exported under its names in TRL, verl and OpenRLHF, or commented where the trainer lacks it', () => {
    const c = resolveConfig('grpo', { throwaway_coef: 0.25 });
    const row = (target: 'trl' | 'verl' | 'openrlhf') =>
      mappingRows(target, c).find((r) => (r.field as string) === 'throwaway_coef');
    expect(row('verl')?.settings).toEqual([{ key: VERL_NAME, value: 0.25 }]);
    expect(row('openrlhf')?.settings).toEqual([{ key: OPENRLHF_NAME, value: 0.25 }]);
    // TRL's GRPOConfig has no such field (its recorded field list, src/export/fixtures/trl.json): a comment says so.
    expect(row('trl')?.settings).toEqual([]);
    expect(row('trl')?.comment).toMatch(/^no equivalent in GRPOConfig; the lab: throwaway: a coefficient/);
    const script = exportExperiment('openrlhf', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
    expect(script).toContain(OPENRLHF_NAME);
    expect(script).toContain('# throwaway_coef = 0.25');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The file count, derived: the objective's knobs added last are named in src/ by the registry, the objective's CPU
// twin and its GPU wrapper alone (and the shader reads them as uniforms). A list of field names anywhere else (a
// compatibility list, a flag table, an export table, a formula table) would show up here.

const ROOT = join(import.meta.dirname, '../../..');

/** Product source files under src/: not tests, test fixtures or kernel cases. */
function productFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : productFiles(path);
    return /\.tsx?$/.test(e.name) && !/\.(test|fixture|cases)\.tsx?$/.test(e.name) ? [path] : [];
  });
}

describe('the product files a knob needs', () => {
  const files = productFiles(join(ROOT, 'src')).map((path) => ({
    path: relative(ROOT, path),
    text: readFileSync(path, 'utf8'),
  }));
  const namedBy = (knob: string) => files.filter((f) => new RegExp(`\\b${knob}\\b`).test(f.text)).map((f) => f.path);
  const REGISTRY_TWIN_KERNEL = ['src/kernels/objective.ts', 'src/reference/objective.ts', 'src/schema/objective.ts'];

  it('the shader reads the loss knobs as uniforms of the GPU wrapper (its 4th file)', () => {
    const shader = readFileSync(join(ROOT, 'shaders/objective.wgsl'), 'utf8');
    for (const uniform of ['droBeta', 'vespoKPos', 'vespoLamPos', 'vespoKNeg', 'vespoLamNeg'])
      expect(shader).toContain(`p.${uniform}`);
  });

  it.each(['dro_beta', 'vespo_k_pos', 'vespo_lambda_pos', 'vespo_k_neg', 'vespo_lambda_neg', 'use_bias_correction_kl'])(
    '%s: the registry, the twin and the GPU wrapper (3 files) plus the shader',
    (knob) => {
      expect(namedBy(knob).sort()).toEqual(REGISTRY_TWIN_KERNEL);
    },
  );
});
