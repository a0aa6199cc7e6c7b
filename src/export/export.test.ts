// The exports to TRL, verl and OpenRLHF: for every preset (and a config that turns on every optional knob) every
// key written exists in that trainer's own field list (fixtures/, read from its source at a named commit), every
// config field is either written or commented, the value conversions are the trainers' units, and the prompts are
// the task's own with answers its verifier accepts.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIELD_NAMES, PRESET_NAMES, resolveConfig, type RLConfig } from '../schema/config';
import { ADV_ESTIMATORS } from '../schema/algorithm-names';
import { getTask } from '../tasks';
import {
  EXPORT_TARGETS,
  bundleScript,
  estimatorRefusal,
  exportExperiment,
  mappingRows,
  trlClassOf,
  type Export,
  type ExportTarget,
} from '.';
import openrlhfFields from './fixtures/openrlhf.json';
import trlFields from './fixtures/trl.json';
import verlFields from './fixtures/verl.json';

/** Every optional knob on, each valid for the ppo_clip objective (the rules between fields hold). */
const EVERYTHING_ON: Partial<RLConfig> = {
  tis_cap: 2,
  rollout_dtype: 'bf16',
  clip_ratio_c: 3,
  delta: 2,
  dynamic_sampling: true,
  overlong_buffer_enable: true,
  overlong_buffer_len: 4,
  entropy_target: 0.5,
  ref_model_sync_steps: 10,
  clip_cov_ratio: 0.1,
  warmup_steps: 5,
  lr_schedule: 'cosine',
  top_k: 5,
  beta: 0.02,
  reward_weights: { accuracy: 1 },
  eval_every: 0,
};

const trlKnown = (cls: keyof typeof trlFields.classes) =>
  new Set<string>([...trlFields.classes[cls], ...trlFields.inherited.fields]);
const verlKnown = new Set<string>([...verlFields.keys, ...verlFields.later.keys]);
const verlAdded = new Set<string>([...verlFields.additions.keys, ...verlFields.reward_kwargs.keys]);
const openrlhfKnown = new Set<string>(openrlhfFields.flags);

function unknownKeys(e: Export, c: RLConfig): string[] {
  if (e.target === 'trl') {
    const known = trlKnown(trlClassOf(c));
    return e.keys.filter((k) => !known.has(k));
  }
  if (e.target === 'verl') {
    const added = new Set(e.rows.flatMap((r) => r.settings.filter((s) => s.added).map((s) => s.key)));
    return e.keys.filter((k) => (added.has(k) ? !verlAdded.has(k) || verlKnown.has(k) : !verlKnown.has(k)));
  }
  return e.keys.filter((k) => !openrlhfKnown.has(k));
}

const cases: [string, RLConfig][] = [
  ...PRESET_NAMES.map((p) => [p, resolveConfig(p, {})] as [string, RLConfig]),
  ['grpo with every optional knob', resolveConfig('grpo', EVERYTHING_ON)],
  ['ppo with every optional knob', resolveConfig('ppo', { ...EVERYTHING_ON, clip_cov_ratio: 0, kl_cov_ratio: 0.1 })],
  [
    'grpo with the other objectives and estimators',
    resolveConfig('grpo', {
      loss_type: 'gmpo',
      kl_estimator: 'exact',
      scale_rewards: 'batch',
      lr_schedule: 'linear',
      adv_estimator: 'opo',
    }),
  ],
  [
    'grpo with sapo',
    resolveConfig('grpo', {
      loss_type: 'sapo',
      adv_estimator: 'reinforce_pp_baseline',
      kl_estimator: 'k2',
      max_grad_norm: 0,
      cliprange_value: null,
    }),
  ],
  // Every rollout correction mode, with the off-policy mask and TRL's adaptive entropy controller.
  ...(['token_truncate', 'token_mask', 'sequence_truncate', 'sequence_mask', 'sequence_geo_mask'] as const).map(
    (mode, i) =>
      [
        `grpo with rollout_is_mode ${mode}`,
        resolveConfig('grpo', {
          rollout_is_mode: mode,
          rollout_is_clip_min: i % 2 ? 0.5 : null,
          rollout_is_clip_max: i === 4 ? null : 2,
          off_policy_mask_threshold: 0.5,
          entropy_target: 0.3,
          entropy_coef_min: 0,
          entropy_coef_max: 0.1,
          entropy_bonus_gate: true,
        }),
      ] as [string, RLConfig],
  ),
  [
    'grpo with the unbiased KL, k3+, GDPO and DRO',
    resolveConfig('grpo', {
      beta: 0.02,
      kl_estimator: 'k3+',
      use_bias_correction_kl: true,
      multi_objective_aggregation: 'normalize_then_sum',
      loss_type: 'dro',
      dro_beta: 0.5,
    }),
  ],
  ['grpo with vespo', resolveConfig('grpo', { loss_type: 'vespo', vespo_k_pos: 1.5 })],
  ['grpo with the optimal token baseline', resolveConfig('grpo', { adv_estimator: 'optimal_token_baseline' })],
  ['gspo with seq-mean-token-sum (TRL luspo)', resolveConfig('gspo', { loss_agg_mode: 'seq-mean-token-sum' })],
  [
    'grpo with dppo_tv and grpo_passk',
    resolveConfig('grpo', {
      loss_type: 'dppo_tv',
      adv_estimator: 'grpo_passk',
      kl_estimator: 'low_var_kl+',
      beta: 0.01,
    }),
  ],
  [
    'ppo with two minibatches of four micro-batches',
    resolveConfig('ppo', {
      train_batch_size: 4,
      num_generations: 8,
      num_minibatches: 2,
      gradient_accumulation_steps: 4,
    }),
  ],
  [
    'reinforce with several updates per batch',
    resolveConfig('reinforce', {
      num_iterations: 2,
      num_minibatches: 2,
      scale_rewards: 'none',
      beta: 0.01,
      reinforce_baseline_momentum: 0.9,
    }),
  ],
];

describe('exports', () => {
  for (const [name, c] of cases) {
    for (const target of EXPORT_TARGETS) {
      it(`${name} -> ${target}: every key is the trainer's, every field is written or commented`, () => {
        const options = {
          preset: PRESET_NAMES.find((p) => name.startsWith(p)) ?? 'grpo',
          model: 'checkpoint',
          maxRows: 4,
        };
        const refusal = estimatorRefusal(target, c);
        if (refusal) {
          // The trainer computes no estimator of the lab's (openrlhf-estimators.test.ts): refused, naming why.
          expect(() => exportExperiment(target, c, options)).toThrow(`adv_estimator: ${refusal}`);
          return;
        }
        const e = exportExperiment(target, c, options);
        expect(e.keys.length).toBeGreaterThan(10);
        expect(unknownKeys(e, c)).toEqual([]);
        expect(e.rows.map((r) => r.field)).toEqual(FIELD_NAMES);
        for (const r of e.rows)
          expect(r.settings.length > 0 || (r.comment ?? '').length > 0, `${target} ${r.field}`).toBe(true);
        const entry = e.files.find((f) => f.path === e.entry)!.text;
        for (const r of e.rows) expect(entry).toContain(`# ${r.field} = `);
        for (const k of e.keys) expect(entry).toContain(k);
        expect(new Set(e.keys).size, 'no key written twice').toBe(e.keys.length);
      });
    }
  }

  it('a key outside the field lists is caught', () => {
    const c = resolveConfig('grpo', {});
    const e = exportExperiment('verl', c, { preset: 'grpo', model: 'm', maxRows: 1 });
    expect(unknownKeys({ ...e, keys: [...e.keys, 'actor_rollout_ref.actor.no_such_knob'] }, c)).toEqual([
      'actor_rollout_ref.actor.no_such_knob',
    ]);
    const t = exportExperiment('trl', c, { preset: 'grpo', model: 'm', maxRows: 1 });
    expect(unknownKeys({ ...t, keys: [...t.keys, 'kl_coef'] }, c)).toEqual(['kl_coef']);
  });

  const setting = (target: ExportTarget, c: RLConfig, key: string) =>
    mappingRows(target, c)
      .flatMap((r) => r.settings)
      .find((s) => s.key === key)?.value;

  it('gradient accumulation: each trainer takes the micro-batch (or the count of them) in its unit', () => {
    const over = { train_batch_size: 4, num_generations: 8, num_minibatches: 2, gradient_accumulation_steps: 4 };
    const grpo = resolveConfig('grpo', over);
    // A minibatch of 32 / 2 = 16 completions in 4 micro-batches of 4.
    expect(setting('trl', grpo, 'per_device_train_batch_size')).toBe(4);
    expect(setting('trl', grpo, 'gradient_accumulation_steps')).toBe(4);
    expect(setting('verl', grpo, 'actor_rollout_ref.actor.ppo_mini_batch_size')).toBe(2);
    expect(setting('verl', grpo, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu')).toBe(4);
    expect(setting('verl', grpo, 'critic.ppo_micro_batch_size_per_gpu')).toBeUndefined();
    expect(setting('openrlhf', grpo, '--train.batch_size')).toBe(16);
    expect(setting('openrlhf', grpo, '--train.micro_batch_size')).toBe(4);
    const ppo = resolveConfig('ppo', over);
    expect(setting('trl', ppo, 'num_mini_batches')).toBe(2);
    expect(setting('trl', ppo, 'gradient_accumulation_steps')).toBe(4);
    expect(setting('verl', ppo, 'critic.ppo_micro_batch_size_per_gpu')).toBe(4);
    // Without accumulation a micro-batch is the minibatch.
    const one = resolveConfig('grpo', { train_batch_size: 4, num_generations: 8, num_minibatches: 2 });
    expect(setting('trl', one, 'per_device_train_batch_size')).toBe(16);
    expect(setting('trl', one, 'gradient_accumulation_steps')).toBe(1);
    expect(setting('verl', one, 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu')).toBe(16);
  });

  it('converts values whose meaning or unit differs', () => {
    const grpo = resolveConfig('grpo', {});
    expect(setting('trl', grpo, 'loss_type')).toBe('grpo');
    expect(setting('trl', grpo, 'beta')).toBe(0.04);
    expect(setting('verl', grpo, 'actor_rollout_ref.actor.use_kl_loss')).toBe(true);
    expect(setting('verl', grpo, 'actor_rollout_ref.actor.kl_loss_coef')).toBe(0.04);
    expect(setting('openrlhf', grpo, '--algo.advantage.estimator')).toBe('group_norm');
    expect(setting('openrlhf', grpo, '--algo.kl.use_loss')).toBe(true);

    const dapo = resolveConfig('dapo', {});
    expect(setting('verl', dapo, 'actor_rollout_ref.actor.clip_ratio_high')).toBe(0.28);
    expect(setting('openrlhf', dapo, '--actor.eps_clip_low_high')).toEqual([0.2, 0.28]);
    expect(setting('trl', dapo, 'loss_type')).toBe('dapo');

    const cispo = resolveConfig('cispo', {});
    expect(setting('trl', cispo, 'loss_type')).toBe('cispo');
    expect(setting('trl', cispo, 'epsilon_high')).toBe(5);
    expect(setting('verl', cispo, 'actor_rollout_ref.actor.clip_ratio_high')).toBe(4);
    expect(setting('openrlhf', cispo, '--actor.policy_loss_type')).toBeUndefined();

    // The sampler's precision: verl's spelling of the dtype, its default (bfloat16) written out when the lab's is f32.
    expect(setting('verl', grpo, 'actor_rollout_ref.rollout.dtype')).toBe('float32');
    expect(setting('verl', resolveConfig('grpo', { rollout_dtype: 'bf16' }), 'actor_rollout_ref.rollout.dtype')).toBe(
      'bfloat16',
    );

    const gspo = resolveConfig('gspo', {});
    expect(setting('verl', gspo, 'actor_rollout_ref.actor.policy_loss.loss_mode')).toBe('gspo');
    expect(setting('openrlhf', gspo, '--actor.policy_loss_type')).toBe('gspo');

    const drGrpo = resolveConfig('dr_grpo', {});
    expect(setting('verl', drGrpo, 'algorithm.norm_adv_by_std_in_grpo')).toBe(false);
    expect(setting('trl', drGrpo, 'loss_type')).toBe('dr_grpo');

    const ppo = resolveConfig('ppo', { num_minibatches: 4, num_iterations: 2, warmup_steps: 40, steps: 100 });
    expect(trlClassOf(ppo)).toBe('PPOConfig');
    expect(setting('trl', ppo, 'kl_coef')).toBe(0.05);
    expect(setting('trl', ppo, 'num_ppo_epochs')).toBe(2);
    expect(setting('verl', ppo, 'algorithm.use_kl_in_reward')).toBe(true);
    expect(setting('verl', ppo, 'algorithm.kl_penalty')).toBe('k1');
    expect(setting('verl', ppo, 'actor_rollout_ref.actor.ppo_mini_batch_size')).toBe(2);
    expect(setting('openrlhf', ppo, '--train.batch_size')).toBe(16);
    expect(setting('openrlhf', ppo, '--actor.lr_warmup_ratio')).toBe(40 / 800);
    expect(
      setting('trl', resolveConfig('grpo', { num_minibatches: 4, num_iterations: 2, steps: 100 }), 'max_steps'),
    ).toBe(800);
    expect(setting('verl', resolveConfig('grpo', { top_k: 0 }), 'actor_rollout_ref.rollout.top_k')).toBe(-1);
    expect(setting('trl', resolveConfig('grpo', { warmup_steps: 10 }), 'lr_scheduler_type')).toBe(
      'constant_with_warmup',
    );
    expect(setting('trl', resolveConfig('grpo', {}), 'lr_scheduler_type')).toBe('constant');
  });

  it("writes the rollout correction in each trainer's terms (tis_cap is its token_truncate case)", () => {
    const R = 'algorithm.rollout_correction.';
    const tis = resolveConfig('grpo', { tis_cap: 2 });
    expect(setting('trl', tis, 'vllm_importance_sampling_mode')).toBe('token_truncate');
    expect(setting('trl', tis, 'vllm_importance_sampling_clip_max')).toBe(2);
    expect(setting('trl', tis, 'vllm_importance_sampling_clip_min')).toBeUndefined();
    expect(setting('verl', tis, `${R}rollout_is`)).toBe('token');
    expect(setting('verl', tis, `${R}rollout_is_threshold`)).toBe(2);
    expect(setting('openrlhf', tis, '--algo.advantage.is_correction_type')).toBe('tis');
    expect(setting('openrlhf', tis, '--algo.advantage.is_correction_threshold')).toEqual([0, 2]);
    // The same correction through rollout_is_mode exports the same settings.
    const same = resolveConfig('grpo', { rollout_is_mode: 'token_truncate', rollout_is_clip_max: 2 });
    const settingsOf = (target: ExportTarget, c: RLConfig) => mappingRows(target, c).flatMap((r) => r.settings);
    for (const target of EXPORT_TARGETS) expect(settingsOf(target, same)).toEqual(settingsOf(target, tis));

    const off = resolveConfig('grpo', {});
    expect(setting('trl', off, 'vllm_importance_sampling_correction')).toBe(false);
    expect(setting('verl', off, `${R}rollout_is`)).toBeUndefined();

    const mask = resolveConfig('grpo', {
      rollout_is_mode: 'token_mask',
      rollout_is_clip_min: 0.5,
      rollout_is_clip_max: 4,
    });
    expect(setting('trl', mask, 'vllm_importance_sampling_clip_min')).toBe(0.5);
    expect(setting('openrlhf', mask, '--algo.advantage.is_correction_type')).toBe('icepop');
    // verl's token_k1 bounds -log w: keeping 0.5 <= w <= 4 is '1/4_1/0.5'.
    expect(setting('verl', mask, `${R}rollout_rs`)).toBe('token_k1');
    expect(setting('verl', mask, `${R}rollout_rs_threshold`)).toBe('0.25_2');

    // Hydra reads 0.25_2 unquoted as the float 0.252 (digits may have '_' between them): the script quotes it.
    const script = exportExperiment('verl', mask, { preset: 'grpo', model: 'm', maxRows: 1 })
      .files.map((f) => f.text)
      .join('\n');
    expect(script).toContain(`algorithm.rollout_correction.rollout_rs_threshold='\\''0.25_2'\\''`);
    expect(script).toContain('algorithm.rollout_correction.rollout_rs=token_k1');

    const seq = resolveConfig('grpo', { rollout_is_mode: 'sequence_mask', rollout_is_clip_max: 5 });
    expect(setting('verl', seq, `${R}rollout_is`)).toBe('sequence');
    expect(setting('verl', seq, `${R}rollout_rs`)).toBe('seq_sum_k1');
    expect(setting('verl', seq, `${R}rollout_rs_threshold`)).toBe(`0.2_${Math.exp(20)}`);
    expect(setting('openrlhf', seq, '--algo.advantage.is_correction_type')).toBeUndefined();

    const geo = resolveConfig('grpo', { rollout_is_mode: 'sequence_geo_mask', rollout_is_clip_min: 0.9 });
    expect(setting('openrlhf', geo, '--algo.advantage.is_correction_type')).toBe('seq-mask-tis');
    expect(setting('verl', geo, `${R}rollout_rs`)).toBe('seq_mean_k1');
    expect(setting('trl', geo, 'vllm_importance_sampling_correction')).toBe(false);
    expect(mappingRows('trl', geo).find((r) => r.field === 'rollout_is_mode')!.comment).toMatch(/no geometric-mean/);

    const opm = resolveConfig('grpo', { off_policy_mask_threshold: 0.5 });
    expect(setting('trl', opm, 'off_policy_mask_threshold')).toBe(0.5);
    expect(mappingRows('verl', opm).find((r) => r.field === 'off_policy_mask_threshold')!.comment).toMatch(
      /no equivalent in verl/,
    );
  });

  it("writes TRL's adaptive entropy controller, and says when the lab's gate differs", () => {
    const c = resolveConfig('grpo', { entropy_target: 0.3, entropy_coef_min: 0, entropy_coef_max: 0.2 });
    expect(setting('trl', c, 'use_adaptive_entropy')).toBe(true);
    expect(setting('trl', c, 'entropy_coef_min')).toBe(0);
    expect(setting('trl', c, 'entropy_coef_max')).toBe(0.2);
    expect(setting('trl', c, 'entropy_coef_delta')).toBe(c.entropy_coef_step);
    expect(mappingRows('trl', c).find((r) => r.field === 'entropy_bonus_gate')!.comment).toMatch(/applies it always/);
  });

  it('comments a knob with no equivalent, saying what the lab does', () => {
    const rows = mappingRows('openrlhf', resolveConfig('reinforce', {}));
    const est = rows.find((r) => r.field === 'adv_estimator')!;
    expect(est.settings).toEqual([]);
    expect(est.comment).toMatch(/no reinforce estimator in OpenRLHF/);
    const momentum = mappingRows('verl', resolveConfig('grpo', {})).find(
      (r) => r.field === 'reinforce_baseline_momentum',
    )!;
    expect(momentum.settings).toEqual([]);
    expect(momentum.comment).toMatch(/no equivalent in verl; the lab: reinforce: momentum/);
  });

  it('writes the model as a parameter and the prompts with answers the lab verifier accepts', () => {
    const c = resolveConfig('grpo', { task: 'multiplication', seed: 7 });
    const verl = exportExperiment('verl', c, { preset: 'grpo', model: 'org/some-model', maxRows: 20 });
    expect(verl.files.find((f) => f.path === 'run_verl.sh')!.text).toContain(
      `MODEL="\${MODEL:-}"\n[ -n "$MODEL" ] || MODEL='org/some-model'\n`,
    );
    const rows = verl.files
      .find((f) => f.path === 'data/train.jsonl')!
      .text.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(20);
    const task = getTask('multiplication');
    for (const r of rows) {
      expect(r.data_source).toBe('rl-lab/multiplication');
      expect(r.prompt).toEqual([{ role: 'user', content: expect.any(String) }]);
      expect(task.verify({ prompt: r.prompt[0].content, answer: '' }, r.reward_model.ground_truth).reward).toBe(1);
      expect(task.splitOf({ prompt: r.prompt[0].content, answer: '' })).toBe('train');
    }
    const held = verl.files
      .find((f) => f.path === 'data/heldout.jsonl')!
      .text.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const r of held) expect(task.splitOf({ prompt: r.prompt[0].content, answer: '' })).toBe('heldout');
    const trl = exportExperiment('trl', c, { preset: 'grpo', model: 'org/some-model', maxRows: 20 });
    expect(trl.files.find((f) => f.path === 'data/train.jsonl')!.text).toBe(
      rows
        .map((r) => `${JSON.stringify({ prompt: r.prompt[0].content, answer: r.reward_model.ground_truth })}\n`)
        .join(''),
    );
    expect(trl.files.find((f) => f.path === 'train_trl.py')!.text).toContain('default="org/some-model"');
  });

  it('bundles every file of an export in one sh script that writes them back unchanged', () => {
    const e = exportExperiment('openrlhf', resolveConfig('reinforce_pp', { task: 'countdown', steps: 2 }), {
      preset: 'reinforce_pp',
      model: 'm',
    });
    const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
    const bundle = join(dir, 'bundle.sh');
    writeFileSync(bundle, bundleScript(e));
    execFileSync('sh', [bundle, join(dir, 'out')]);
    for (const f of e.files) expect(readFileSync(join(dir, 'out', f.path), 'utf8'), f.path).toBe(f.text);
  });

  it("puts the Python verifiers with the experiment's task, difficulty and weights in every reward function", () => {
    const c = resolveConfig('grpo', { task: 'count', difficulty: 12, reward_weights: { accuracy: 0.7, format: 0.3 } });
    const modules = { trl: 'train_trl.py', verl: 'reward_fn.py', openrlhf: 'reward_func.py' } as const;
    for (const target of EXPORT_TARGETS) {
      const text = exportExperiment(target, c, { preset: 'grpo', model: 'm', maxRows: 1 }).files.find(
        (f) => f.path === modules[target],
      )!.text;
      expect(text).toContain('def verify(task, difficulty, prompt, completion):');
      expect(text).toContain('TASK = "count"\nDIFFICULTY = 12\nWEIGHTS = {"accuracy": 0.7, "format": 0.3}');
      expect(text).toMatch(/reward\(TASK, DIFFICULTY, /);
    }
    const row = JSON.parse(
      exportExperiment('verl', c, { preset: 'grpo', model: 'm', maxRows: 1 }).files.find(
        (f) => f.path === 'data/train.jsonl',
      )!.text,
    );
    expect(row.extra_info.prompt).toBe(row.prompt[0].content);
  });
});

describe('the 2026 variants under the names the other trainers use', () => {
  const row = (target: 'trl' | 'verl' | 'openrlhf', c: RLConfig, field: string) =>
    mappingRows(target, c).find((r) => r.field === field)!;
  it('TRL: luspo, use_bias_correction_kl, multi_objective_aggregation', () => {
    const luspo = resolveConfig('gspo', { loss_agg_mode: 'seq-mean-token-sum' });
    expect(row('trl', luspo, 'loss_agg_mode').settings).toEqual([{ key: 'loss_type', value: 'luspo' }]);
    const c = resolveConfig('grpo', {
      beta: 0.02,
      use_bias_correction_kl: true,
      multi_objective_aggregation: 'normalize_then_sum',
    });
    expect(row('trl', c, 'use_bias_correction_kl').settings).toEqual([{ key: 'use_bias_correction_kl', value: true }]);
    expect(row('trl', c, 'multi_objective_aggregation').settings).toEqual([
      { key: 'multi_objective_aggregation', value: 'normalize_then_sum' },
    ]);
    expect(row('verl', c, 'use_bias_correction_kl').comment).toMatch(/no equivalent in verl/);
    const v = resolveConfig('grpo', { loss_type: 'vespo', vespo_lambda_neg: 1.5 });
    expect(row('trl', v, 'loss_agg_mode').settings).toEqual([{ key: 'loss_type', value: 'vespo' }]);
    expect(row('trl', v, 'vespo_lambda_neg').settings).toEqual([{ key: 'vespo_lambda_neg', value: 1.5 }]);
    expect(row('verl', v, 'loss_type').comment).toMatch(/no VESPO in verl/);
  });
  it('verl: k3+, dppo_tv with its ratio cap, dro with dro_beta, grpo_passk', () => {
    const a = resolveConfig('grpo', { beta: 0.02, kl_estimator: 'low_var_kl+', loss_type: 'dppo_tv' });
    expect(row('verl', a, 'kl_estimator').settings[0]).toMatchObject({ value: 'low_var_kl+' });
    expect(row('verl', a, 'loss_type').settings[0]).toMatchObject({ value: 'dppo_tv' });
    expect(row('verl', a, 'clip_ratio_c').settings[0]).toMatchObject({ value: 20 });
    const b = resolveConfig('grpo', { loss_type: 'dro', dro_beta: 0.3, adv_estimator: 'grpo_passk' });
    expect(row('verl', b, 'dro_beta').settings).toEqual([
      { key: 'actor_rollout_ref.actor.policy_loss.dro_beta', value: 0.3 },
    ]);
    expect(row('verl', b, 'adv_estimator').settings[0]).toMatchObject({ value: 'grpo_passk' });
    expect(row('openrlhf', b, 'adv_estimator').comment).toMatch(/no grpo_passk estimator in OpenRLHF/);
  });
  it("verl: optimal_token_baseline turns on the actor's sum pi^2; TRL and OpenRLHF say they have none", () => {
    const c = resolveConfig('grpo', { adv_estimator: 'optimal_token_baseline' });
    expect(row('verl', c, 'adv_estimator').settings).toEqual([
      { key: 'algorithm.adv_estimator', value: 'optimal_token_baseline' },
      { key: 'actor_rollout_ref.actor.calculate_sum_pi_squared', value: true },
      { key: 'actor_rollout_ref.model.use_fused_kernels', value: false },
    ]);
    expect(row('trl', c, 'adv_estimator').comment).toMatch(/no optimal token baseline in TRL/);
    expect(row('openrlhf', c, 'adv_estimator').comment).toMatch(/no optimal_token_baseline estimator in OpenRLHF/);
  });
  it("verl: every adv_estimator the export writes is one of verl's AdvantageEstimator values", () => {
    const known = new Set<string>(verlFields.adv_estimators.values);
    for (const e of ['grpo', 'dr_grpo', 'rloo', 'reinforce_pp', 'remax', 'opo', 'grpo_passk', 'optimal_token_baseline'])
      for (const s of row('verl', resolveConfig('grpo', { adv_estimator: e }), 'adv_estimator').settings)
        if (s.key === 'algorithm.adv_estimator') expect(known.has(String(s.value)), `${e} -> ${s.value}`).toBe(true);
  });
});

describe("TRL's advantage: the script's config class computes the lab's estimator, or the export is refused", () => {
  it('writes grpo, dr_grpo, rloo and gae; refuses every other estimator naming why', () => {
    const written: string[] = [];
    for (const adv_estimator of ADV_ESTIMATORS) {
      // Binary rewards where an estimator needs them (max_rl, f_grpo, grpo_passk): copy's accuracy alone.
      const c = resolveConfig(adv_estimator === 'gae' ? 'ppo' : 'grpo', {
        adv_estimator,
        task: 'copy',
        reward_weights: { accuracy: 1 },
      });
      const refusal = estimatorRefusal('trl', c);
      if (refusal === null) {
        written.push(adv_estimator);
        continue;
      }
      // Before: GRPOConfig was written for all of them, training GRPO's advantage under the lab's name.
      expect(refusal).toContain(`TRL has no estimator that computes ${adv_estimator}`);
      expect(refusal).toContain("GRPOConfig's group-normalized advantage");
      expect(() => exportExperiment('trl', c, { preset: 'grpo', model: 'checkpoint', maxRows: 4 })).toThrow(
        `adv_estimator: ${refusal}`,
      );
    }
    expect(written.sort()).toEqual(['dr_grpo', 'gae', 'grpo', 'rloo']);
  });
});
