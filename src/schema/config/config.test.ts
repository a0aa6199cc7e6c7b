// RL config: every field documented with a valid default; presets valid and equal to docs/algorithms.md#presets;
// each cross-field rule with its message; derive(); JSON and URL boundaries (round trips, helpful errors).
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG,
  FIELD_SECTIONS,
  PRESETS,
  PRESET_INFO,
  PRESET_NAMES,
  RLConfigError,
  RL_FIELDS,
  checkConfig,
  configFromUrlParams,
  configToJson,
  configToUrlParams,
  configWarnings,
  derive,
  editDistance,
  locateJsonError,
  parseConfigJson,
  resolveConfig,
  validateConfig,
  type PresetName,
  type RLConfig,
} from './';
import { Rng } from '../../core/random';
import { readFileSync } from 'node:fs';

/** One cell of the docs' preset table: the value it names (undefined for "·") and whether it is the default kept. */
interface PresetCell {
  value: unknown;
  isDefault: boolean;
}

/**
 * docs/algorithms.md's preset table as preset -> field -> cell: the header names each column's fields in backticks
 * (`epsilon` / `epsilon_high` holds "0.2 / 0.28"), and the "other" column lists `field` value pairs; each value is
 * read by its field's kind.
 */
function presetTableOfDocs(markdown: string): Map<string, Record<string, PresetCell>> {
  const section = markdown.slice(markdown.indexOf('\n## Presets'));
  const lines = section.split('\n').filter((l) => l.startsWith('|'));
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((x) => x.trim());
  const columns = cells(lines[0]).map((h) => [...h.matchAll(/`(\w+)`/g)].map((m) => m[1]));
  const parse = (field: string, text: string): unknown => {
    const spec = RL_FIELDS[field as keyof typeof RL_FIELDS];
    if (!spec) throw new Error(`the preset table names ${field}, which is no field`);
    if (spec.kind === 'number') return text === 'null' ? null : Number(text);
    if (spec.kind === 'boolean') return text === 'true';
    return text;
  };
  const table = new Map<string, Record<string, PresetCell>>();
  for (const line of lines.slice(2)) {
    const row = cells(line);
    const name = /^`(\w+)`$/.exec(row[0])?.[1];
    if (!name) break;
    const out: Record<string, PresetCell> = {};
    row.forEach((cell, i) => {
      if (i === 0) return;
      if (columns[i].length === 0) {
        // the "other" column: `field` value, or `field` default value
        for (const m of cell.matchAll(/`(\w+)` (default )?([^,`\s]+)/g))
          out[m[1]] = { value: parse(m[1], m[3]), isDefault: m[2] !== undefined };
        return;
      }
      const parts = cell === '·' ? columns[i].map(() => '·') : cell.split(' / ');
      columns[i].forEach((field, j) => {
        out[field] =
          parts[j] === '·'
            ? { value: undefined, isDefault: false }
            : { value: parse(field, parts[j]), isDefault: false };
      });
    });
    table.set(name, out);
  }
  return table;
}

/** The problems resolveConfig reports for these overrides over the defaults (or a preset). */
function problems(overrides: Record<string, unknown>, preset: PresetName | null = null): string {
  try {
    resolveConfig(preset, overrides);
  } catch (e) {
    expect(e).toBeInstanceOf(RLConfigError);
    return (e as RLConfigError).problems.join('\n');
  }
  return '';
}

const warnings = (overrides: Record<string, unknown>, preset: PresetName | null = null) =>
  configWarnings(resolveConfig(preset, overrides)).join('\n');

describe('fields and defaults', () => {
  it('every field has a one-line doc, a valid default and a section', () => {
    const sectioned = Object.values(FIELD_SECTIONS).flat();
    expect(new Set(sectioned).size).toBe(sectioned.length);
    expect(sectioned.sort()).toEqual(Object.keys(RL_FIELDS).sort());
    for (const [name, spec] of Object.entries(RL_FIELDS)) {
      expect(spec.doc.length, name).toBeGreaterThan(10);
      expect(spec.doc, name).not.toMatch(/\n/);
      expect(/^[a-z][a-z0-9_]*$/.test(name), `${name} is snake_case`).toBe(true);
    }
    expect(checkConfig(DEFAULT_CONFIG)).toEqual({ errors: [], warnings: [] });
  });

  it('names the field, the rule and the value of each bad value', () => {
    expect(problems({ num_generations: 0 })).toMatch(/^num_generations: must be in \[1, 1024\], got 0$/);
    expect(problems({ num_generations: 2.5 })).toMatch(/num_generations: must be a whole number, got 2.5/);
    expect(problems({ temperature: 0 })).toMatch(/temperature: must be in \(0, 100\], got 0/);
    expect(problems({ min_p: 1 })).toMatch(/min_p: must be in \[0, 1\), got 1/);
    expect(problems({ beta: '0.1' })).toMatch(/beta: must be a number in \[0, 10\], got "0.1"/);
    expect(problems({ beta: null })).toMatch(/beta: must be a number in \[0, 10\], got null/);
    expect(problems({ learning_rate: NaN })).toMatch(/learning_rate: must be a number/);
    expect(problems({ epsilon_high: 'x' })).toMatch(
      /epsilon_high: must be a number in \[0, 100\] or null \(epsilon\), got "x"/,
    );
    expect(problems({ epsilon: 1 })).toMatch(/epsilon: must be in \[0, 1\), got 1/);
    expect(problems({ adv_estimator: 'gpro' })).toMatch(
      /adv_estimator: must be one of grpo, dr_grpo, .*gae, grpo_passk, optimal_token_baseline, max_rl, f_grpo; got "gpro"; did you mean grpo\?/,
    );
    expect(problems({ loss_agg_mode: 'token_mean' })).toMatch(/loss_agg_mode: .*; did you mean token-mean\?/);
    expect(problems({ task: 'additon' })).toMatch(/task: must be one of .*; got "additon"; did you mean addition\?/);
    expect(problems({ dynamic_sampling: 'yes' })).toMatch(/dynamic_sampling: must be true or false, got "yes"/);
    expect(problems({ checkpoint: '' })).toMatch(/checkpoint: must be a non-empty string or null/);
    expect(problems({ reward_weights: [1, 2] })).toMatch(/reward_weights: must be an object/);
    expect(problems({ reward_weights: { accuracy: 'high' } })).toMatch(
      /reward_weights: the weight of accuracy must be a finite number, got "high"/,
    );
    expect(problems({ reward_weights: {} })).toMatch(/reward_weights: needs at least one reward function/);
    // several problems at once, all reported
    const all = problems({ top_p: 0, top_k: -1, seed: 1.5 });
    expect(all.split('\n')).toHaveLength(3);
  });

  it('rejects unknown fields with a suggestion', () => {
    expect(problems({ num_generation: 4 })).toBe('unknown field num_generation; did you mean num_generations?');
    expect(problems({ numGenerations: 4 })).toBe('unknown field numGenerations; did you mean num_generations?');
    expect(problems({ 'learning-rate': 1e-3 })).toBe('unknown field learning-rate; did you mean learning_rate?');
    expect(problems({ epslion: 0.1 })).toBe('unknown field epslion; did you mean epsilon?');
    expect(problems({ kl_coef: 0.1 })).toMatch(
      /^unknown field kl_coef; did you mean beta\? \(kl_coef is another trainer's name for it\)$/,
    );
    expect(problems({ ppo_epochs: 2 })).toMatch(/did you mean num_iterations\?/);
    expect(problems({ completely_unrelated: 1 })).toBe('unknown field completely_unrelated');
    expect(problems({ nope: 1 }, 'grpo')).toBe('unknown field nope');
  });

  it('edit distance counts insertions, deletions, substitutions and transpositions', () => {
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('epsilon', 'epslion')).toBe(1);
    expect(editDistance('same', 'same')).toBe(0);
  });
});

describe('presets', () => {
  // docs/algorithms.md#presets: the one table a reader sees, read here and held against PRESETS (no copy of it).
  const table = presetTableOfDocs(readFileSync(new URL('../../../docs/algorithms.md', import.meta.url), 'utf8'));

  it('every preset of the table exists, with a label, in the table order', () => {
    expect([...PRESET_NAMES]).toEqual([...table.keys()]);
    expect(Object.keys(PRESETS)).toEqual([...table.keys()]);
    expect(PRESET_INFO.dr_grpo.label).toBe('Dr. GRPO');
    expect(PRESET_INFO.reinforce_pp.label).toBe('REINFORCE++');
  });

  it.each(PRESET_NAMES)('%s resolves to a valid config, without warnings, matching the table', (name) => {
    const c = resolveConfig(name);
    expect(checkConfig(c)).toEqual({ errors: [], warnings: [] });
    const row = table.get(name)!;
    for (const [k, cell] of Object.entries(row)) {
      // "·": the preset leaves the field at its default; "default v": the table names the default it keeps.
      if (cell.value === undefined) expect(k in PRESETS[name], `${name} sets ${k}, the table says ·`).toBe(false);
      else {
        expect(c[k as keyof RLConfig], `${name}.${k}`).toEqual(cell.value);
        if (cell.isDefault) expect(k in PRESETS[name], `${name}.${k} is the default`).toBe(false);
      }
    }
    // the table names every knob a preset sets
    expect(Object.keys(PRESETS[name]).filter((k) => row[k]?.value === undefined || row[k].isDefault)).toEqual([]);
  });

  it('KL columns: "k1 in reward" has beta > 0 with the KL in the reward; "none" has no reference model', () => {
    for (const name of ['reinforce_pp', 'ppo'] as const) {
      const d = derive(resolveConfig(name));
      expect(d.klInReward).toBe(true);
      expect(d.needsReference).toBe(true);
    }
    for (const name of ['reinforce', 'dr_grpo', 'dapo', 'gspo', 'cispo'] as const)
      expect(derive(resolveConfig(name)).needsReference).toBe(false);
    expect(derive(resolveConfig('grpo')).klInLoss).toBe(true);
    expect(derive(resolveConfig('ppo')).needsCritic).toBe(true);
    expect(resolveConfig('ppo').vf_coef).toBeGreaterThan(0);
    expect(derive(resolveConfig('remax')).greedyRolloutsPerStep).toBe(resolveConfig('remax').train_batch_size);
    expect(resolveConfig('cispo').eps_max).toBe(5);
    expect(derive(resolveConfig('dapo')).epsilonHigh).toBe(0.28);
  });

  it('an unknown preset is refused with a suggestion', () => {
    expect(() => resolveConfig('grp0' as PresetName)).toThrow(
      /preset: must be one of reinforce, .*; got "grp0"; did you mean grpo\?/,
    );
  });
});

describe('cross-field rules', () => {
  it('group estimators need num_generations >= 2; rloo says why', () => {
    for (const e of ['grpo', 'dr_grpo', 'opo', 'reinforce_pp_baseline']) {
      expect(problems({ adv_estimator: e, num_generations: 1 })).toBe(
        `num_generations: adv_estimator '${e}' compares the completions of a group and needs num_generations >= 2, got 1`,
      );
    }
    expect(problems({ adv_estimator: 'rloo', num_generations: 1 })).toMatch(
      /num_generations: rloo's leave-one-out baseline divides by G - 1 and needs num_generations >= 2, got 1/,
    );
    for (const e of ['reinforce', 'reinforce_pp', 'remax'])
      expect(problems({ adv_estimator: e, num_generations: 1 })).toBe('');
    expect(problems({ num_generations: 1 }, 'ppo')).toBe('');
  });

  it('gae needs a critic (vf_coef > 0)', () => {
    expect(problems({ vf_coef: 0 }, 'ppo')).toBe(
      "vf_coef: adv_estimator 'gae' learns a critic and needs vf_coef > 0, got 0",
    );
  });

  it('cispo and gmpo are token-level losses', () => {
    expect(problems({ importance_sampling_level: 'sequence' }, 'cispo')).toMatch(
      /^importance_sampling_level: 'sequence' is not defined for loss_type 'cispo'/,
    );
    expect(problems({ importance_sampling_level: 'sequence', loss_type: 'gmpo' })).toMatch(
      /^importance_sampling_level: loss_type 'gmpo' forms its own sequence ratio/,
    );
    expect(problems({ loss_type: 'sapo', importance_sampling_level: 'sequence' })).toBe('');
  });

  it('epsilon_high >= epsilon; a cispo cap below 1 is a warning', () => {
    expect(problems({ epsilon: 0.2, epsilon_high: 0.1 })).toBe(
      'epsilon_high: must be >= epsilon (clip-higher only widens the upper bound), got 0.1 < 0.2',
    );
    expect(problems({ epsilon: 0.2, epsilon_high: 0.2 })).toBe('');
    expect(warnings({ eps_max: 0.5 }, 'cispo')).toMatch(/eps_max: 0.5 < 1 caps every ratio below 1/);
    expect(warnings({ eps_max: 2 }, 'grpo')).toMatch(/eps_max: ignored by loss_type 'ppo_clip'/);
  });

  it('Clip-Cov and KL-Cov: one at a time, with ppo_clip at token level, and a proper band', () => {
    expect(problems({ clip_cov_ratio: 0.01, kl_cov_ratio: 0.01 })).toBe(
      'clip_cov_ratio: Clip-Cov and KL-Cov (kl_cov_ratio) cannot both be on; choose one',
    );
    expect(problems({ kl_cov_ratio: 0.01 }, 'gspo')).toBe(
      "kl_cov_ratio: covariance token selection needs loss_type 'ppo_clip' with importance_sampling_level 'token'",
    );
    expect(problems({ clip_cov_ratio: 0.01, clip_cov_lb: 5, clip_cov_ub: 5 })).toBe(
      'clip_cov_lb: must be below clip_cov_ub (5), got 5',
    );
    expect(problems({ clip_cov_ratio: 0.0002 }, 'dapo')).toBe('');
  });

  it('delta must exceed 1 + epsilon_high; clip_ratio_c must exceed 1', () => {
    expect(problems({ delta: 1.2 }, 'dapo')).toBe(
      'delta: the cap on rho must exceed the upper clip bound 1 + epsilon_high = 1.28, got 1.2',
    );
    expect(problems({ delta: 1.5 }, 'dapo')).toBe('');
    expect(problems({ clip_ratio_c: 1 })).toBe('clip_ratio_c: must be in (1, 100], got 1');
    expect(problems({ clip_ratio_c: 3 })).toBe('');
  });

  it('num_minibatches divides B*G', () => {
    expect(problems({ train_batch_size: 3, num_generations: 4, num_minibatches: 5 })).toBe(
      'num_minibatches: must divide the N = train_batch_size * num_generations = 12 sequences of a step, got 5',
    );
    expect(problems({ train_batch_size: 3, num_generations: 4, num_minibatches: 6 })).toBe('');
  });

  it('gradient_accumulation_steps divides the minibatch and refuses the batch-level token selections', () => {
    expect(
      problems({ train_batch_size: 4, num_generations: 4, num_minibatches: 2, gradient_accumulation_steps: 3 }),
    ).toBe(
      "gradient_accumulation_steps: must divide the minibatch's N / num_minibatches = 16 / 2 = 8 rows into equal micro-batches, got 3",
    );
    expect(
      problems({ train_batch_size: 4, num_generations: 4, num_minibatches: 2, gradient_accumulation_steps: 8 }),
    ).toBe('');
    expect(
      derive(resolveConfig(null, { train_batch_size: 4, num_generations: 4, gradient_accumulation_steps: 4 }))
        .microBatchSize,
    ).toBe(4);
    expect(
      problems({ train_batch_size: 4, num_generations: 4, gradient_accumulation_steps: 2, top_entropy_quantile: 0.2 }),
    ).toMatch(
      /^gradient_accumulation_steps: 2 micro-batches cannot run with top_entropy_quantile 0.2, whose token selection takes a threshold over the whole minibatch/,
    );
    expect(
      problems({ train_batch_size: 4, num_generations: 4, gradient_accumulation_steps: 2, kl_cov_ratio: 0.01 }),
    ).toMatch(/kl_cov_ratio 0.01/);
    expect(
      problems({ train_batch_size: 4, num_generations: 4, gradient_accumulation_steps: 1, kl_cov_ratio: 0.01 }),
    ).toBe('');
  });

  it('optimal_token_baseline: refuses a rollout correction (its weights would enter W), takes the KL in the reward', () => {
    expect(problems({ adv_estimator: 'optimal_token_baseline', tis_cap: 2 })).toMatch(
      /^tis_cap: adv_estimator 'optimal_token_baseline' with a rollout correction would scale/,
    );
    expect(problems({ adv_estimator: 'optimal_token_baseline', rollout_is_mode: 'token_truncate' })).toMatch(
      /^rollout_is_mode: adv_estimator 'optimal_token_baseline'/,
    );
    expect(problems({ adv_estimator: 'optimal_token_baseline', beta: 0.1, kl_placement: 'in_reward' })).toBe('');
  });

  it('kl_placement in_reward: an error for sequence-level estimators with beta > 0, a warning with beta 0', () => {
    expect(problems({ beta: 0.1, kl_placement: 'in_reward' }, 'grpo')).toMatch(
      /^kl_placement: 'in_reward' puts -beta \* k1 in per-token rewards, which only reinforce_pp, reinforce_pp_baseline, gae, optimal_token_baseline use; adv_estimator 'grpo' needs kl_placement 'in_loss' \(or beta 0\)$/,
    );
    expect(warnings({ beta: 0 }, 'ppo')).toMatch(/kl_placement: 'in_reward' has no effect with beta 0/);
    expect(warnings({ kl_estimator: 'k3' }, 'ppo')).toMatch(
      /kl_estimator: 'k3' is not used with kl_placement 'in_reward'/,
    );
  });

  it('dynamic sampling needs groups', () => {
    expect(problems({ num_generations: 1, adv_estimator: 'reinforce', dynamic_sampling: true })).toMatch(
      /^dynamic_sampling: drops groups whose rewards are all equal, and with num_generations 1 every group is/,
    );
    expect(warnings({ adv_estimator: 'reinforce', dynamic_sampling: true })).toMatch(
      /dynamic_sampling: .*still carry signal for adv_estimator 'reinforce'/,
    );
  });

  it('a half-precision sampler copy (rollout_dtype) under LoRA holds the merged matrices (rollout_merge_lora)', () => {
    expect(problems({ rollout_dtype: 'bf16', lora_rank: 4 })).toMatch(
      /^rollout_dtype: with LoRA \(lora_rank 4\) a half-precision sampler copy holds the merged matrices: turn rollout_merge_lora on/,
    );
    expect(problems({ rollout_dtype: 'bf16', lora_rank: 4, rollout_merge_lora: true })).toBe('');
    expect(problems({ rollout_merge_lora: true, lora_rank: 4 })).toBe('');
    expect(problems({ rollout_merge_lora: true })).toMatch(
      /^rollout_merge_lora: it merges LoRA adapters .* lora_rank 0/,
    );
    expect(problems({ rollout_dtype: 'f16' })).toBe('');
    expect(problems({ rollout_dtype: 'fp8' as never })).toMatch(/^rollout_dtype: must be one of f32, bf16, f16/);
  });

  it("difficulty is checked against the task's range", () => {
    expect(problems({ task: 'addition', difficulty: 0 })).toBe(
      "difficulty: addition's difficulty (digits per operand) is a whole number in [1, 10], got 0",
    );
    expect(problems({ task: 'addition', difficulty: 10 })).toBe('');
  });

  it('prompt + completion must fit the model preset, and the overlong buffer must fit the completion', () => {
    expect(problems({ max_completion_length: 60 })).toMatch(
      /^max_completion_length: BOS \+ the longest addition prompt \(8\) \+ max_completion_length \(60\) = 69 tokens, more than the nano model's context of 64/,
    );
    expect(problems({ max_completion_length: 60, model: 'tiny' })).toBe('');
    expect(problems({ max_completion_length: 60, checkpoint: 'warm/addition' })).toBe(''); // the checkpoint's context is checked on load
    expect(problems({ max_completion_length: 16, overlong_buffer_len: 16 }, 'dapo')).toMatch(
      /^overlong_buffer_len: L_c must be less than max_completion_length \(16\)/,
    );
    expect(problems({ max_completion_length: 16, overlong_buffer_len: 15 }, 'dapo')).toBe('');
  });

  it('warns about knobs that have no effect', () => {
    expect(warnings({ gamma: 0.99 }, 'grpo')).toMatch(/gamma: ignored without a critic/);
    expect(warnings({ scale_rewards: 'batch' }, 'rloo')).toMatch(/scale_rewards: ignored by adv_estimator 'rloo'/);
    expect(warnings({ max_resample: 9 })).toMatch(/max_resample: ignored without dynamic_sampling/);
    expect(warnings({ num_iterations: 2 }, 'reinforce')).toMatch(/loss_type: 'pg' has no importance ratio/);
    expect(warnings({ warmup_steps: 500, steps: 100 })).toMatch(
      /warmup_steps: 500 is not less than the run's 100 optimizer steps/,
    );
    expect(warnings({ entropy_target: 1, entropy_coef_step: 0 })).toMatch(/entropy_coef_step: 0 keeps alpha fixed/);
    expect(warnings({ curriculum: 'easy_to_hard', difficulty: 1 })).toMatch(
      /curriculum: 'easy_to_hard' has nothing to vary/,
    );
    expect(warnings({ clip_ratio_c: 3 }, 'cispo')).toMatch(/clip_ratio_c: ignored by loss_type 'cispo'/);
    expect(warnings({ epsilon: 0.1 }, 'cispo')).toMatch(/epsilon: ignored by loss_type 'cispo'/);
  });
});

describe('derive', () => {
  it('computes batch sizes, optimizer steps, and whether the ratio is exactly 1', () => {
    const c = resolveConfig('grpo', {
      train_batch_size: 4,
      num_generations: 6,
      num_iterations: 2,
      num_minibatches: 3,
      steps: 10,
    });
    const d = derive(c);
    expect(d.sequencesPerStep).toBe(24);
    expect(d.minibatchSize).toBe(8);
    expect(d.optimizerStepsPerBatch).toBe(6);
    expect(d.totalOptimizerSteps).toBe(60);
    expect(d.ratioIsOne).toBe(false);
    expect(derive(resolveConfig('grpo')).ratioIsOne).toBe(true);
    expect(derive(resolveConfig('grpo', { num_minibatches: 2 })).ratioIsOne).toBe(false);
    expect(derive(resolveConfig('reinforce')).usesRatio).toBe(false);
  });

  it('fills the nullable fields from the task and the other fields', () => {
    // addition at its default difficulty 3: prompts up to 8 characters, completions up to 10 (+ EOS)
    const d = derive(resolveConfig('dapo'));
    expect(d.difficulty).toBe(3);
    expect(d.maxCompletionLength).toBe(11);
    expect(d.maxPromptTokens).toBe(9);
    expect(d.sequenceLength).toBe(20);
    expect(d.overlongBufferLen).toBe(2); // floor(11 / 4)
    expect(d.rewardWeights).toEqual({ accuracy: expect.any(Number), format: expect.any(Number) });
    expect(d.maxRolloutsPerStep).toBe(64 * (1 + 4));
    const e = derive(
      resolveConfig('ppo', {
        critic_learning_rate: null,
        learning_rate: 1e-3,
        reward_weights: { accuracy: 1 },
        eval_num_generations: 10,
      }),
    );
    expect(e.criticLearningRate).toBe(1e-3);
    expect(e.rewardWeights).toEqual({ accuracy: 1 });
    expect(e.passAtKs).toEqual([1, 2, 4, 8, 10]);
    expect(derive(resolveConfig('grpo')).overlongBufferLen).toBe(0);
  });
});

describe('JSON boundary', () => {
  it('parses a config with a preset and overrides', () => {
    const c = parseConfigJson(
      '{ "preset": "dapo", "num_generations": 4, "reward_weights": { "accuracy": 0.9, "format": 0.1 } }',
    );
    expect(c).toEqual(resolveConfig('dapo', { num_generations: 4, reward_weights: { accuracy: 0.9, format: 0.1 } }));
    expect(parseConfigJson('{}')).toEqual(DEFAULT_CONFIG);
  });

  it('reports bad JSON with line, column and what was expected', () => {
    const text = '{\n  "preset": "grpo",\n  "beta": 0.1\n  "seed": 3\n}';
    expect(() => parseConfigJson(text)).toThrow(
      /config JSON: line 4, column 3 \(position \d+\): expected ',' or '}' after a property value, found "\\""/,
    );
    try {
      parseConfigJson(text);
    } catch (e) {
      expect((e as Error).message).toContain('\n      "seed": 3\n      ^');
    }
    expect(() => parseConfigJson('{"beta": 0.1,}')).toThrow(
      /line 1, column 14 .*expected a property name in double quotes, found "}"/,
    );
    expect(() => parseConfigJson('{"beta": ')).toThrow(/expected a value .*found the end of the text/);
    expect(() => parseConfigJson("{'beta': 1}")).toThrow(/expected a property name in double quotes, found "'"/);
    expect(() => parseConfigJson('[1, 2]')).toThrow(/the top level must be an object of fields, got an array/);
    expect(() => parseConfigJson('{"preset": 3}')).toThrow(/preset: must be a preset name or null, got 3/);
    expect(() => parseConfigJson('{"preset": "ppo", "bta": 1}')).toThrow(/unknown field bta; did you mean beta\?/);
  });

  it('locateJsonError agrees with JSON.parse on mutated texts', () => {
    const base = JSON.stringify({ a: [1, -2.5e3, true, null], b: { c: 'x\\"y\n\u00e9' }, d: false });
    const rng = new Rng(7);
    const alphabet = '{}[]",:.-+e0 1tfnu\\';
    for (let trial = 0; trial < 2000; trial++) {
      const chars = [...base];
      const pos = rng.int(chars.length + 1);
      const op = rng.int(3);
      const ch = alphabet[rng.int(alphabet.length)];
      if (op === 0) chars.splice(pos, 1);
      else if (op === 1) chars.splice(pos, 0, ch);
      else chars[Math.min(pos, chars.length - 1)] = ch;
      const text = chars.join('');
      let ok = true;
      try {
        JSON.parse(text);
      } catch {
        ok = false;
      }
      expect(locateJsonError(text) === null, text).toBe(ok);
    }
  });

  it('configToJson writes only the differences from the preset and reads back', () => {
    const c = resolveConfig('gspo', { seed: 5, checkpoint: 'warm/addition' });
    const text = configToJson(c, 'gspo');
    expect(JSON.parse(text)).toEqual({ preset: 'gspo', seed: 5, checkpoint: 'warm/addition' });
    expect(parseConfigJson(text)).toEqual(c);
    expect(parseConfigJson(configToJson(c))).toEqual(c);
  });
});

describe('URL boundary', () => {
  it('holds only the preset and the fields that differ from it', () => {
    const c = resolveConfig('dapo', {
      num_generations: 4,
      epsilon_high: 0.3,
      difficulty: 5,
      reward_weights: { accuracy: 0.75, format: 0.25 },
    });
    const p = configToUrlParams(c, 'dapo');
    expect(p.toString()).toBe(
      'preset=dapo&difficulty=5&reward_weights=accuracy%3A0.75%2Cformat%3A0.25&num_generations=4&epsilon_high=0.3',
    );
    expect(configToUrlParams(resolveConfig('ppo'), 'ppo').toString()).toBe('preset=ppo');
  });

  it.each(PRESET_NAMES)('round-trips %s with changed, nulled and tiny values', (name) => {
    const base = resolveConfig(name);
    const changed = resolveConfig(name, {
      seed: 123,
      learning_rate: 1.5e-7,
      temperature: 0.7,
      epsilon_high: name === 'cispo' ? 4 : base.epsilon_high === null ? 0.25 : null,
      checkpoint: 'https://example.org/ck?x=1&y=2',
      reward_weights: { accuracy: 1, format: 0.125, positions: -0.5 },
      mask_truncated_completions: !base.mask_truncated_completions,
      cliprange_value: null,
    });
    for (const preset of [name, null] as const) {
      const url = `https://lab.example/?${configToUrlParams(changed, preset).toString()}`;
      expect(configFromUrlParams(new URL(url).searchParams)).toEqual(changed);
    }
  });

  it("reports bad parameters by name, ignores the page's own ones when told", () => {
    const bad = new URLSearchParams('preset=grpo&beta=abc&num_generation=4&dynamic_sampling=maybe&seed=1&seed=2');
    let err: RLConfigError | undefined;
    try {
      configFromUrlParams(bad);
    } catch (e) {
      err = e as RLConfigError;
    }
    expect(err).toBeInstanceOf(RLConfigError);
    expect(err!.problems).toEqual([
      'beta: must be a number in [0, 10], got "abc"',
      'unknown field num_generation; did you mean num_generations?',
      'dynamic_sampling: must be true or false, got "maybe"',
      'seed: given twice in the URL',
    ]);
    expect(() => configFromUrlParams(new URLSearchParams('preset=dapoo'))).toThrow(
      /preset: .*got "dapoo"; did you mean dapo\?/,
    );
    expect(() => configFromUrlParams(new URLSearchParams('tab=charts&beta=0.1'))).toThrow(/unknown field tab/);
    expect(configFromUrlParams(new URLSearchParams('tab=charts&beta=0.1'), { ignore: ['tab'] }).beta).toBe(0.1);
    expect(configFromUrlParams(new URLSearchParams('reward_weights=%7B%22accuracy%22%3A1%7D')).reward_weights).toEqual({
      accuracy: 1,
    });
    expect(() => configFromUrlParams(new URLSearchParams('reward_weights=accuracy'))).toThrow(
      /reward_weights: expected name:weight pairs/,
    );
    // values still go through validation
    expect(() => configFromUrlParams(new URLSearchParams('num_generations=1&preset=grpo'))).toThrow(
      /num_generations: adv_estimator 'grpo'/,
    );
  });

  it('validateConfig returns a copy and needs every field', () => {
    const { seed: _seed, ...partial } = DEFAULT_CONFIG;
    expect(() => validateConfig(partial)).toThrow(/seed: missing \(seed of sampling, data and initialization\)/);
    const c = validateConfig({ ...DEFAULT_CONFIG });
    expect(c).toEqual(DEFAULT_CONFIG);
    expect(c).not.toBe(DEFAULT_CONFIG);
  });
});
