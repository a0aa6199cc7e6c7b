// Other trainers' logs import as runs under the lab's metric names: a TRL trainer_state.json, verl's file-logger
// JSONL (wrapped and flat), an OpenRLHF JSONL. The fixtures keep each trainer's real layout; the field names they
// rely on are noted beside them. Also: the format is told from content, the lab's own files still go to
// formats.ts, and a file that is none of them is refused with its name and what was expected.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../schema/config';
import { metricsToCsv, metricsToJsonl, parseRunFile, RunFileError } from './run-files';
import {
  chartedRows,
  labMetricName,
  MAX_CHARTED_UNCATALOGUED,
  MAX_LISTED_UNCHARTED,
  parsePythonJson,
  parseRunOrTrainerLog,
} from './foreign-logs';
import type { RunHeader } from '../schema/run-types';

/**
 * TRL: transformers' TrainerState.save_to_json writes {global_step, epoch, log_history, ...}; each log_history entry
 * is {step, epoch, <metric>: value}, GRPOTrainer's names (reward, reward_std, kl, entropy, clip_ratio/region_mean,
 * completions/mean_length, frac_reward_zero_std, rewards/<fn>/mean, num_tokens) beside the Trainer's (loss,
 * grad_norm, learning_rate); evaluation entries carry eval_ names at the same step; the last entry is the run's
 * summary (train_runtime, train_loss, total_flos, ...).
 */
const TRL_STATE = readFileSync(new URL('./fixtures/trl-trainer_state.json', import.meta.url), 'utf8');

/**
 * verl: verl/utils/tracking.py's 'file' backend appends json.dumps({"step": step, "data": data}) per step; the
 * names are RayPPOTrainer's metrics (critic/score/mean, actor/entropy, actor/pg_clipfrac, actor/ppo_kl,
 * actor/pg_loss, actor/grad_norm, actor/lr, response_length/mean, timing_s/<phase>, val-core/<source>/...). Its
 * validation before training is logged at step 0; a run stopped while writing leaves a cut last line.
 */
const VERL_JSONL = [
  { step: 0, data: { 'val-core/countdown/acc/mean@1': 0.12 } },
  {
    step: 1,
    data: {
      'critic/score/mean': 0.2,
      'actor/entropy': 1.9,
      'actor/pg_clipfrac': 0.0,
      'actor/ppo_kl': 0.0,
      'actor/pg_loss': -0.01,
      'actor/grad_norm': 0.7,
      'actor/lr': 1e-6,
      'response_length/mean': 120.5,
      'timing_s/gen': 3.1,
      'training/global_step': 1,
      'training/epoch': 0,
    },
  },
  {
    step: 2,
    data: {
      'critic/score/mean': 0.35,
      'actor/entropy': 1.8,
      'actor/pg_clipfrac': 0.01,
      'actor/ppo_kl': 0.002,
      'actor/pg_loss': 0.02,
      'actor/grad_norm': 0.8,
      'actor/lr': 1e-6,
      'response_length/mean': 118,
    },
  },
]
  .map((l) => JSON.stringify(l))
  .join('\n')
  .concat('\n{"step": 3, "data": {"critic/sco');

/**
 * OpenRLHF: its PPO trainer's logs_dict per global step, flat, names from its actor and critic (reward, kl,
 * policy_loss, ppo_clip_ratio, response_length, actor_lr, critic_loss) and the step as global_step; W&B writes the
 * same under train/ (train/global_step).
 */
const OPENRLHF_JSONL = [
  {
    'train/global_step': 1,
    'train/reward': 0.1,
    'train/kl': 0.0,
    'train/policy_loss': 0.05,
    'train/ppo_clip_ratio': 0.0,
    'train/response_length': 80,
    'train/actor_lr': 5e-7,
    'train/return': 0.1,
  },
  {
    'train/global_step': 2,
    'train/reward': 0.3,
    'train/kl': 0.01,
    'train/policy_loss': -0.02,
    'train/ppo_clip_ratio': 0.02,
    'train/response_length': 76,
    'train/actor_lr': 5e-7,
    'train/return': 0.3,
  },
]
  .map((l) => JSON.stringify(l))
  .join('\n');

describe('trainer logs as runs', () => {
  it("maps a TRL trainer_state.json through the catalog, merges eval entries into their step and keeps the end-of-run summary as the run's", () => {
    const run = parseRunOrTrainerLog('trainer_state.json', TRL_STATE);
    expect(run.header.origin).toEqual({
      trainer: 'trl',
      file: 'trainer_state.json',
      uncatalogued: ['eval_loss', 'eval_reward', 'eval_runtime', 'eval_samples_per_second', 'eval_steps_per_second'],
      summary: {
        total_flos: 0,
        train_loss: 0.0004,
        train_runtime: 61.5,
        train_samples_per_second: 1.04,
        train_steps_per_second: 0.065,
      },
    });
    expect(run.header.status).toBe('imported');
    expect(run.header.config).toEqual(DEFAULT_CONFIG);
    expect(run.header.name).toBe('TRL: trainer_state');
    expect(run.rows.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(run.rows.map((r) => r.metrics.reward)).toEqual([0.21, 0.34, 0.47, 0.58]);
    expect(run.rows[0].metrics).toMatchObject({
      'clip_ratio/region_mean': 0,
      'completions/mean_length': 9.5,
      frac_reward_zero_std: 0.25,
      'rewards/accuracy_reward/mean': 0.21,
      num_tokens: 1520,
      learning_rate: 1e-5,
    });
    expect(run.rows[1].metrics).toMatchObject({ eval_reward: 0.3, entropy: 1.72 });
    // Position keys and the run summary are not a step's metrics.
    for (const r of run.rows)
      for (const k of ['epoch', 'step', 'train_runtime', 'train_loss']) expect(Object.hasOwn(r.metrics, k)).toBe(false);
    expect(run.header.step).toBe(4);
    expect(run.header.lastMetrics.reward).toBe(0.58);
  });

  it('reads a trainer_state.json TRL wrote: its one step, and the end-of-run entry as the summary, no second step', () => {
    // Written by TRL 1.13.0 (transformers 5.18.0, CPU) running the lab's TRL export of grpo on copy for one
    // optimizer step (npm run test:interop; scripts/interop/run.sh), copied unchanged.
    const real = readFileSync(new URL('./fixtures/trl-1.13-grpo-trainer_state.json', import.meta.url), 'utf8');
    const run = parseRunOrTrainerLog('trainer_state.json', real);
    expect(run.rows.map((r) => r.step)).toEqual([1]);
    expect(run.rows[0].metrics).toMatchObject({ reward: 0, entropy: 5.202662944793701, num_tokens: 56 });
    expect(run.header.origin?.summary).toEqual({
      total_flos: 0,
      train_loss: 0,
      train_runtime: 2.9277,
      train_samples_per_second: 1.366,
      train_steps_per_second: 0.342,
    });
    for (const k of ['train_runtime', 'train_loss', 'total_flos'])
      expect(Object.hasOwn(run.rows[0].metrics, k)).toBe(false);
  });

  it("keeps the step metrics TRL folds into the end-of-run entry (a run shorter than logging_steps) as that step's row", () => {
    const state = JSON.parse(TRL_STATE) as { log_history: Record<string, number>[] };
    // GRPOTrainer.log merges the metrics gathered since the last entry into the summary: here steps 3 and 4 were
    // not logged on their own, so the summary at step 4 carries their averages.
    const [step1, step2, eval2, step3] = state.log_history;
    const summary = state.log_history.at(-1)!;
    const folded = { ...step3, ...summary, step: 4 };
    const run = parseRunOrTrainerLog(
      'trainer_state.json',
      JSON.stringify({ ...state, log_history: [step1, step2, eval2, folded] }),
    );
    expect(run.rows.map((r) => r.step)).toEqual([1, 2, 4]);
    expect(run.rows[2].metrics).toMatchObject({ reward: 0.47, entropy: 1.61 });
    expect(Object.hasOwn(run.rows[2].metrics, 'train_runtime')).toBe(false);
    expect(run.header.origin?.summary).toMatchObject({ train_runtime: 61.5, train_loss: 0.0004 });
    // The same from TRL itself: 1.13.0 running the lab's grpo export with logging_steps=2 and max_steps=3 (step 3
    // was logged only in the summary), copied unchanged.
    const real = readFileSync(new URL('./fixtures/trl-1.13-grpo-logging2-trainer_state.json', import.meta.url), 'utf8');
    const trl = parseRunOrTrainerLog('trainer_state.json', real);
    expect(trl.rows.map((r) => r.step)).toEqual([2, 3]);
    expect(trl.rows[1].metrics).toMatchObject({ entropy: 5.294974327087402, num_tokens: 155 });
    expect(Object.hasOwn(trl.rows[1].metrics, 'train_runtime')).toBe(false);
    expect(trl.header.origin?.summary).toEqual({
      total_flos: 0,
      train_loss: 0,
      train_runtime: 6.6257,
      train_samples_per_second: 1.811,
      train_steps_per_second: 0.453,
    });
    // Only the summary (logging_steps beyond max_steps, no GRPO metrics gathered): no row, and no log.
    const only = JSON.stringify({ ...state, log_history: [summary] });
    expect(() => parseRunOrTrainerLog('s.json', only)).toThrow(/^s\.json: a TRL log with no logged steps/);
  });

  it("reads verl's file logger: wrapped lines, step 0's validation, a cut last line dropped", () => {
    const run = parseRunOrTrainerLog('metrics.jsonl', VERL_JSONL);
    expect(run.header.origin?.trainer).toBe('verl');
    expect(run.rows.map((r) => r.step)).toEqual([0, 1, 2]);
    expect(run.rows[2].metrics).toEqual({
      reward: 0.35,
      entropy: 1.8,
      'clip_ratio/region_mean': 0.01,
      approx_kl: 0.002,
      policy_loss: 0.02,
      grad_norm: 0.8,
      learning_rate: 1e-6,
      'completions/mean_length': 118,
    });
    // timing_s/<phase> is a catalog template; the validation score is not in the catalog and keeps its name.
    expect(run.rows[1].metrics['timing_s/gen']).toBe(3.1);
    expect(run.rows[0].metrics).toEqual({ 'val-core/countdown/acc/mean@1': 0.12 });
    expect(run.header.origin?.uncatalogued).toEqual(['val-core/countdown/acc/mean@1']);
  });

  it('reads flat verl lines and OpenRLHF lines (train/ prefixed), told apart by the catalog names they use', () => {
    const flatVerl = VERL_JSONL.split('\n')
      .slice(1, 3)
      .map((l) => JSON.stringify({ step: JSON.parse(l).step, ...JSON.parse(l).data }))
      .join('\n');
    expect(parseRunOrTrainerLog('verl.jsonl', flatVerl).rows.map((r) => [r.step, r.metrics.reward])).toEqual([
      [1, 0.2],
      [2, 0.35],
    ]);
    const run = parseRunOrTrainerLog('openrlhf.jsonl', OPENRLHF_JSONL);
    expect(run.header.origin).toEqual({ trainer: 'openrlhf', file: 'openrlhf.jsonl', uncatalogued: ['train/return'] });
    expect(run.rows[1].metrics).toEqual({
      reward: 0.3,
      kl: 0.01,
      policy_loss: -0.02,
      'clip_ratio/region_mean': 0.02,
      'completions/mean_length': 76,
      learning_rate: 5e-7,
      'train/return': 0.3,
    });
  });

  it('maps names only through the catalog: each trainer its own names, templates filled in', () => {
    expect(labMetricName('verl', 'actor/kl_loss')).toBe('kl');
    expect(labMetricName('openrlhf', 'entropy_loss')).toBe('entropy');
    expect(labMetricName('trl', 'train/rewards/format/std')).toBe('rewards/format/std');
    // verl's names mean nothing in a TRL log, and unknown names map to nothing.
    expect(labMetricName('trl', 'actor/pg_clipfrac')).toBeUndefined();
    expect(labMetricName('openrlhf', 'no/such/metric')).toBeUndefined();
  });

  it("still reads the lab's own exports, keeps the origin through an export, and refuses other files by name", () => {
    const trl = parseRunOrTrainerLog('trainer_state.json', TRL_STATE);
    const header: RunHeader = { ...trl.header, id: 'r', name: 'cluster run' };
    for (const [name, text] of [
      ['a.csv', metricsToCsv(header, trl.rows)],
      ['a.jsonl', metricsToJsonl(header, trl.rows, [])],
    ]) {
      const back = parseRunOrTrainerLog(name, text);
      expect(back.header.origin).toEqual(trl.header.origin);
      expect(back.rows.map((r) => r.metrics)).toEqual(trl.rows.map((r) => r.metrics));
      expect(back).toEqual(parseRunFile(name, text));
    }
    const refused = (name: string, text: string) => () => parseRunOrTrainerLog(name, text);
    expect(refused('notes.json', '{"hello": "world"}')).toThrow(RunFileError);
    expect(refused('notes.json', '{"hello": "world"}')).toThrow(
      /^notes\.json: line 1: not a run this lab reads: expected an RL Lab export .*TRL trainer_state\.json .*verl .*OpenRLHF/,
    );
    expect(refused('table.txt', 'a b c')).toThrow(
      /^table\.txt: line 1: not a run this lab reads: expected an RL Lab export/,
    );
    expect(refused('empty.json', '{"log_history": []}')).toThrow(/^empty\.json: a TRL log with no logged steps/);
    expect(refused('bad.json', '{"log_history": [{"step": -1, "reward": 1}]}')).toThrow(
      /^bad\.json: log_history\[0\]: step must be a whole number >= 0, got -1/,
    );
    expect(refused('cut.jsonl', '{"reward": 1}\n{"rew\n{"reward": 2}')).toThrow(/^cut\.jsonl: line 2: not valid JSON/);
  });
});

/** A TRL trainer_state.json of `steps` entries, each logging `fresh` names no earlier entry logged. */
function manyNamesState(steps: number, fresh: number): string {
  const log_history = Array.from({ length: steps }, (_, i) => {
    const entry: Record<string, number> = { step: i + 1, epoch: (i + 1) / steps, loss: 1 / (i + 1), reward: i / steps };
    for (let k = 0; k < fresh; k++) entry[`custom/s${i + 1}_m${k}`] = i + k / 10;
    return entry;
  });
  return JSON.stringify({ global_step: steps, log_history }, null, 2);
}

describe('a log with many names the catalog lacks', () => {
  it(`charts at most ${MAX_CHARTED_UNCATALOGUED} of them, the most reported first, and names the rest by count`, () => {
    // Every step reports custom/always; 3 names on half the steps; then 2 new names per step.
    const log_history = Array.from({ length: 40 }, (_, i) => {
      const e: Record<string, number> = { step: i + 1, loss: 1, 'custom/always': i };
      if (i % 2 === 0) for (const n of ['custom/half_a', 'custom/half_b', 'custom/half_c']) e[n] = i;
      e[`custom/s${i + 1}_a`] = i;
      e[`custom/s${i + 1}_b`] = i;
      return e;
    });
    const run = parseRunOrTrainerLog('trainer_state.json', JSON.stringify({ log_history }));
    const origin = run.header.origin!;
    expect(origin.uncatalogued).toHaveLength(MAX_CHARTED_UNCATALOGUED);
    // Those on every step and on half of them, then the new names of the first 14 steps (sorted by name).
    expect(origin.uncatalogued).toEqual(
      [
        'custom/always',
        'custom/half_a',
        'custom/half_b',
        'custom/half_c',
        ...Array.from({ length: 14 }, (_, i) => [`custom/s${i + 1}_a`, `custom/s${i + 1}_b`]).flat(),
      ].sort(),
    );
    expect(origin.uncharted).toEqual({
      count: 84 - MAX_CHARTED_UNCATALOGUED,
      names: Array.from({ length: 40 }, (_, i) => [`custom/s${i + 1}_a`, `custom/s${i + 1}_b`])
        .flat()
        .slice(MAX_CHARTED_UNCATALOGUED - 4),
    });
    // The rows keep every value; what the page is sent holds the catalog's names, the charted ones and those picked.
    expect(run.rows[39].metrics['custom/s40_b']).toBe(39);
    const charted = chartedRows(run.rows, origin, ['custom/s40_b', 'custom/not-logged']);
    const names = new Set(charted.flatMap((r) => Object.keys(r.metrics)));
    expect(names.size).toBe(1 + MAX_CHARTED_UNCATALOGUED + 1);
    expect(names.has('loss')).toBe(true);
    expect(names.has('custom/s40_b')).toBe(true);
    expect(names.has('custom/s40_a')).toBe(false);
    expect(charted[39].step).toBe(40);
  });

  // 10,000 names here (a fast test); e2e/import-back.spec.ts imports 2,000 x 50 in Chromium.
  it('reads 500 steps x 20 new names each: the rows are kept, the page gets the catalog and the cap', () => {
    const run = parseRunOrTrainerLog('trainer_state.json', manyNamesState(500, 20));
    expect(run.rows).toHaveLength(500);
    const origin = run.header.origin!;
    expect(origin.uncatalogued).toHaveLength(MAX_CHARTED_UNCATALOGUED);
    expect(origin.uncharted?.count).toBe(10_000 - MAX_CHARTED_UNCATALOGUED);
    expect(origin.uncharted?.names).toHaveLength(MAX_LISTED_UNCHARTED);
    const names = new Set(chartedRows(run.rows, origin, []).flatMap((r) => Object.keys(r.metrics)));
    expect([...names].filter((n) => !n.startsWith('custom/')).sort()).toEqual(['loss', 'reward']);
    expect(names.size).toBe(2 + MAX_CHARTED_UNCATALOGUED);
  });
});

describe("Python's NaN and Infinity (json.dumps writes them bare)", () => {
  it('reads them outside strings only, keeps position-accurate errors, and never evaluates text', () => {
    expect(parsePythonJson('{"a": "NaN", "b": NaN, "c": [-Infinity, Infinity], "d": "x\\"NaN", "NaN": 1}')).toEqual({
      a: 'NaN',
      b: NaN,
      c: [-Infinity, Infinity],
      d: 'x"NaN',
      NaN: 1,
    });
    expect(parsePythonJson('[1.5, NaN]')).toEqual([1.5, NaN]);
    for (const bad of ['{"a": nan}', '{"a": NaNa}', '{"a": alert(1)}', '{"a": -NaN}', '{"a": Infinity2}'])
      expect(() => parsePythonJson(bad), bad).toThrow(SyntaxError);
    // The rewrite keeps every character's place, and the message quotes the file's text, not the stand-ins.
    expect(() => parsePythonJson('{"a": NaN, "b": tru}')).toThrow('"{"a": NaN, "b": tru}" is not valid JSON');
    expect(() => parsePythonJson('[NaN, Infinity, -Infinity, x]')).toThrow('-Infinity, x]');
  });

  it('a trainer_state.json with "grad_norm": NaN imports, keeps it non-finite and says which step', () => {
    const log_history = Array.from({ length: 40 }, (_, i) => ({ step: i + 1, loss: 1 / (i + 1), grad_norm: 0.5 }));
    const text = JSON.stringify({ log_history }, null, 2)
      .replace(/("step": 37,\s+"loss": [^,]+,\s+"grad_norm": )0\.5/, '$1NaN')
      .replace(/("step": 38,\s+"loss": )[^,]+/, '$1Infinity')
      .replace(/("step": 39,\s+"loss": )[^,]+/, '$1-Infinity');
    expect(text).toContain('"grad_norm": NaN');
    const run = parseRunOrTrainerLog('trainer_state.json', text);
    expect(run.rows).toHaveLength(40);
    expect(run.rows[36].metrics.grad_norm).toBeNaN();
    expect(run.rows[37].metrics.loss).toBe(Infinity);
    expect(run.rows[38].metrics.loss).toBe(-Infinity);
    expect(run.header.origin?.nonFinite).toEqual({
      count: 3,
      notes: ['step 37: grad_norm is NaN', 'step 38: loss is Infinity', 'step 39: loss is -Infinity'],
    });
  });

  it('a verl JSONL whose last line holds NaN imports every step, the divergence step flagged', () => {
    const text = [
      '{"step": 1, "data": {"critic/score/mean": 0.2, "actor/grad_norm": 0.7}}',
      '{"step": 2, "data": {"critic/score/mean": 0.3, "actor/grad_norm": 5.0}}',
      '{"step": 3, "data": {"critic/score/mean": NaN, "actor/grad_norm": Infinity}}',
    ].join('\n');
    const run = parseRunOrTrainerLog('metrics.jsonl', text);
    expect(run.rows.map((r) => r.step)).toEqual([1, 2, 3]);
    expect(run.rows[2].metrics.reward).toBeNaN();
    expect(run.rows[2].metrics.grad_norm).toBe(Infinity);
    expect(run.header.origin?.nonFinite?.notes).toEqual([
      'step 3: critic/score/mean is NaN',
      'step 3: actor/grad_norm is Infinity',
    ]);
    // OpenRLHF's flat lines, the NaN on the first line (the format is told from it).
    const flat = parseRunOrTrainerLog(
      'metrics.jsonl',
      '{"global_step": 1, "reward": NaN, "policy_loss": 0.1}\n{"global_step": 2, "reward": 0.2, "policy_loss": 0.1}',
    );
    expect(flat.header.origin?.trainer).toBe('openrlhf');
    expect(flat.rows).toHaveLength(2);
    expect(flat.header.origin?.nonFinite?.notes).toEqual(['step 1: reward is NaN']);
  });

  it('a last line cut inside NaN is still dropped as a cut line', () => {
    const cut = parseRunOrTrainerLog(
      'metrics.jsonl',
      `${VERL_JSONL.split('\n').slice(0, 3).join('\n')}\n{"step": 3, "data": {"critic/score/mean": Na`,
    );
    expect(cut.rows.map((r) => r.step)).toEqual([0, 1, 2]);
    expect(cut.header.origin?.nonFinite).toBeUndefined();
  });
});
