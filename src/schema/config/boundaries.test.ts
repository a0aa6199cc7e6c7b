// Where config keys and values enter (JSON, links, CLI flags, run-file headers): names every object inherits
// (constructor, toString, __proto__) are unknown fields, a huge unknown name or value is quoted cut and gets no
// suggestion search, reward_weights must name the task's rewards and not all be zero, and sampling so greedy
// that a group's completions come out identical is warned with the knob named.
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../../cli/args';
import { parseRlArgs } from '../../cli/train-rl';
import { metricsToCsv, parseRunFile, RunFileError } from '../../io/run-files';
import type { RunHeader } from '../run-types';
import { MAX_SUGGESTED_NAME, nearestField, unknownFieldMessage } from '../fields';
import { taskFactories, taskNames } from '../../tasks';
import { configFromUrlParams, configFromUrlParamsKeeping, parseConfigJson } from './codecs';
import { RL_FIELDS } from './schema';
import { checkConfig, problemsOf, resolveConfig } from './validate';

const INHERITED = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'] as const;

/** The problems an RLConfigError lists, or [] when the call succeeds. */
describe('names inherited from Object.prototype are not fields', () => {
  it.each(INHERITED)('JSON field %s is refused as unknown', (name) => {
    const text = `{ "preset": "grpo", ${JSON.stringify(name)}: 1 }`;
    expect(problemsOf(() => parseConfigJson(text))).toEqual([`unknown field ${name}`]);
  });

  it('a JSON __proto__ object does not smuggle fields in', () => {
    expect(problemsOf(() => parseConfigJson('{ "__proto__": { "beta": 5 } }'))).toEqual(['unknown field __proto__']);
  });

  it.each(INHERITED)('link parameter %s is refused as unknown', (name) => {
    expect(problemsOf(() => configFromUrlParams(new URLSearchParams(`${name}=1`)))).toEqual([`unknown field ${name}`]);
  });

  it.each(INHERITED)('CLI flag --%s is unknown, in the generic parser and the train command', (name) => {
    expect(() => parseArgs([`--${name}=5`], { steps: { type: 'number', doc: 'steps' } })).toThrow(
      new UsageError(`unknown flag --${name} (see --help)`),
    );
    expect(() => parseRlArgs([`--${name}`, '1'])).toThrow(`unknown flag --${name}`);
  });

  it('reward_weights named __proto__ is an entry the task lacks, not a prototype', () => {
    expect(problemsOf(() => configFromUrlParams(new URLSearchParams('reward_weights=__proto__:1')))).toEqual([
      'reward_weights: addition has no reward function __proto__; its rewards are accuracy, format, positions',
    ]);
  });

  it.each(INHERITED)('a run file whose config has %s is refused with the file and line', (name) => {
    const header: RunHeader = {
      id: 'r',
      name: 'r',
      createdAt: 0,
      updatedAt: 0,
      config: resolveConfig('grpo'),
      preset: 'grpo',
      backend: 'webgpu',
      status: 'done',
      step: 1,
      savedStep: 1,
      elapsedMs: 0,
      adapter: '',
      lastMetrics: {},
    };
    const csv = metricsToCsv(header, [{ step: 1, optimizerStep: 1, epoch: 0, minibatch: 0, metrics: { reward: 1 } }]);
    const bad = csv.replace('"config":{', `"config":{${JSON.stringify(name)}:1,`);
    expect(() => parseRunFile('run.csv', bad)).toThrow(
      new RunFileError(`run.csv: line 1: the run's config is not valid here: unknown field ${name}`),
    );
  });
});

describe('huge names and values', () => {
  const huge = 'x'.repeat(100_000);

  it('a name longer than any field gets no suggestion search, and is quoted cut', () => {
    expect(nearestField('y'.repeat(MAX_SUGGESTED_NAME + 1), RL_FIELDS)).toBeNull();
    const message = unknownFieldMessage(huge, RL_FIELDS);
    expect(message).toBe(`unknown field ${'x'.repeat(80)}... (100000 characters)`);
  });

  it('a link with a 100 KB unknown name or a 10,000-character bad value reports them cut', () => {
    expect(problemsOf(() => configFromUrlParams(new URLSearchParams({ [huge]: '1' })))).toEqual([
      `unknown field ${'x'.repeat(80)}... (100000 characters)`,
    ]);
    const [temperature] = problemsOf(() =>
      configFromUrlParams(new URLSearchParams({ temperature: '9'.repeat(400) + 'z'.repeat(9_600) })),
    );
    expect(temperature).toMatch(
      /^temperature: must be a number in \(0, 100\], got "9{80}"\.\.\. \(10000 characters\)$/,
    );
  });
});

describe('reward_weights against the task', () => {
  it.each(taskNames)('%s declares its rewards, accuracy and format first', (task) => {
    expect(taskFactories[task].rewardNames.slice(0, 2)).toEqual(['accuracy', 'format']);
  });

  it("names the field, the unknown reward and the task's rewards", () => {
    expect(problemsOf(() => resolveConfig('grpo', { reward_weights: { acuracy: 1 } }))).toEqual([
      'reward_weights: addition has no reward function acuracy; did you mean accuracy?; its rewards are accuracy, format, positions',
    ]);
    expect(problemsOf(() => resolveConfig('grpo', { task: 'sort', reward_weights: { accuracy: 1, best: 1 } }))).toEqual(
      ['reward_weights: sort has no reward function best; its rewards are accuracy, format, positions, permutation'],
    );
  });

  it('refuses weights that are all zero', () => {
    expect(problemsOf(() => resolveConfig('grpo', { reward_weights: { accuracy: 0, format: 0 } }))).toEqual([
      "reward_weights: every weight is 0, so every reward is 0 and nothing is learned; give one of addition's rewards (accuracy, format, positions) a nonzero weight",
    ]);
  });

  it("accepts every task's own reward names", () => {
    for (const task of taskNames) {
      const names = taskFactories[task].rewardNames;
      expect(
        checkConfig({
          // Word problems are sentences for a checkpoint's tokenizer: the nano preset's context cannot hold them.
          ...resolveConfig('grpo', { task, ...(task === 'word_problems' && { checkpoint: 'models/tiny-qwen2/' }) }),
          reward_weights: Object.fromEntries(names.map((n) => [n, 1])),
        }).errors,
      ).toEqual([]);
    }
  });
});

describe('greedy sampling is warned, naming the knob', () => {
  const warnings = (o: Record<string, unknown>) => checkConfig(resolveConfig('grpo', o)).warnings;

  it.each([
    [{ temperature: 1e-30 }, 'temperature'],
    [{ top_p: 1e-9 }, 'top_p'],
    [{ top_k: 1 }, 'top_k'],
  ])('%o', (o, knob) => {
    const w = warnings(o).filter((m) => m.startsWith(`${knob}:`));
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(
      /completions of a group come out identical, their advantages are 0 and the loss and gradient are 0: nothing is learned$/,
    );
  });

  it('says what greedy costs for an estimator without groups', () => {
    expect(
      warnings({ temperature: 1e-3, adv_estimator: 'reinforce' }).find((m) => m.startsWith('temperature:')),
    ).toMatch(/never tries anything but its most likely completion/);
  });

  it('stays quiet for ordinary sampling', () => {
    expect(
      warnings({ temperature: 0.7, top_p: 0.9, top_k: 50 }).filter((m) => /^(temperature|top_p|top_k):/.test(m)),
    ).toEqual([]);
  });
});

describe('a link read as far as it goes', () => {
  it('keeps the good fields and names the bad ones', () => {
    const read = configFromUrlParamsKeeping(
      new URLSearchParams('preset=dapo&seed=7&beta=abc&nope=1&num_minibatches=3'),
    );
    expect(read.preset).toBe('dapo');
    expect(read.config).toEqual(resolveConfig('dapo', { seed: 7 }));
    expect(read.dropped).toEqual(['num_minibatches']);
    expect(read.problems).toEqual([
      'beta: must be a number in [0, 10], got "abc"',
      'unknown field nope',
      expect.stringMatching(/^num_minibatches: must divide/),
    ]);
  });

  it("drops the overrides a rule between fields names only by the preset's field", () => {
    // num_generations 1 breaks grpo's group rule, named by num_generations itself.
    const read = configFromUrlParamsKeeping(new URLSearchParams('preset=grpo&num_generations=1&seed=3'));
    expect(read.config).toEqual(resolveConfig('grpo', { seed: 3 }));
    expect(read.dropped).toEqual(['num_generations']);
  });

  it('a one-line field (checkpoint, reward_model, ...) with a line break or control character is named and dropped', () => {
    const read = configFromUrlParamsKeeping(
      new URLSearchParams('preset=grpo&checkpoint=copy%0A%24(touch%20M)&reward_model=m%1B%5B2J&seed=4'),
    );
    expect(read.config).toEqual(resolveConfig('grpo', { seed: 4 }));
    expect(read.dropped.sort()).toEqual(['checkpoint', 'reward_model']);
    expect(read.problems).toEqual([
      'checkpoint: must be one line without control characters; got "copy\\n$(touch M)" with U+000A at 4',
      'reward_model: must be one line without control characters; got "m\\u001b[2J" with U+001B at 1',
    ]);
    for (const bad of ['a\rb', 'a\u0000b', 'a\u2028b', 'a\u0085b', 'a\tb'])
      for (const field of ['checkpoint', 'reward_model', 'reward_model_label', 'lora_targets'])
        expect(problemsOf(() => resolveConfig('grpo', { [field]: bad }))[0], `${field} ${JSON.stringify(bad)}`).toMatch(
          new RegExp(`^${field}: must be one line without control characters`),
        );
    // Text of several lines (code, a data file) keeps its line breaks.
    expect(resolveConfig('grpo', { reward_fn: '(p, c) => {\n  return 1;\n}' }).reward_fn).toContain('\n');
  });
});

describe('vespo and the rollout correction', () => {
  it("takes TRL's token modes into its sequence weight, and refuses the sequence modes (TRL refuses them too)", () => {
    for (const rollout_is_mode of ['sequence_truncate', 'sequence_mask', 'sequence_geo_mask']) {
      const problems = problemsOf(() => resolveConfig('grpo', { loss_type: 'vespo', rollout_is_mode }));
      expect(problems).toEqual([
        `rollout_is_mode: loss_type 'vespo' takes the sampler's ratio into its sequence weight token by token (TRL allows only token_truncate and token_mask with vespo); '${rollout_is_mode}' is not supported with vespo`,
      ]);
    }
    for (const rollout_is_mode of ['token_truncate', 'token_mask'] as const)
      expect(resolveConfig('grpo', { loss_type: 'vespo', rollout_is_mode }).rollout_is_mode).toBe(rollout_is_mode);
    expect(resolveConfig('grpo', { loss_type: 'vespo', tis_cap: 2 }).tis_cap).toBe(2);
    expect(resolveConfig('grpo', { loss_type: 'ppo_clip', rollout_is_mode: 'token_truncate' }).rollout_is_mode).toBe(
      'token_truncate',
    );
  });
});
