// The lab's twins against functions transcribed from the trainers' own sources (fixtures/trainer-formulas.json,
// written by scripts/make-trainer-formula-fixture.py with torch): verl's straight-through KL (k1+, k3+,
// low_var_kl+) value and gradient, verl's grpo_passk advantages, TRL's GDPO (multi_objective_aggregation
// normalize_then_sum), TRL's KL term with use_bias_correction_kl (value and gradient, token and sequence ratio), and
// verl's dppo_tv, dppo_kl and dro losses (loss, gradient, pg_clipfrac), TRL's vespo loss, and verl's
// optimal_token_baseline advantages with their inputs (log pi_old and sum pi^2 from logits); and the mismatch
// diagnostics (src/reference/mismatch-diagnostics.ts) against prime-rl's and verl's functions run from their sources.
// The GPU objective is checked against the same loss and KL cases in src/kernels/objective.test.ts.

import { describe, expect, it } from 'vitest';
import fixture from './fixtures/trainer-formulas.json';
import { gdpoAdvantages, grpoPasskAdvantages, optimalTokenBaselineAdvantages } from '../rl/algorithm/advantages';
import { host, hostRows } from '../core/host-tensor';
import { resolveObjectiveConfig, type KlEstimator } from '../schema/objective';
import { compareArrays } from './compare';
import { logprobForwardSumPiSquared } from './logprob';
import { OBJECTIVE_METRICS, klEstimate, objectiveOutputs } from './objective';
import { MISMATCH_METRICS, mismatchDiagnostics } from './mismatch-diagnostics';

const TOL = { atol: 1e-9, rtol: 1e-9 };

function expectClose(label: string, got: ArrayLike<number>, want: ArrayLike<number>, tol = TOL): void {
  const c = compareArrays(got, want, tol);
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

/** verl's straight-through names as the lab's: verl's k3 is low_var_kl (clamped), so its k3+ is the lab's low_var_kl+. */
const LAB_OF_VERL: Record<string, KlEstimator> = { 'k1+': 'k1+', 'k3+': 'low_var_kl+', 'low_var_kl+': 'low_var_kl+' };

/** The objective's KL term alone (A = 0, no entropy bonus, beta 1, token-mean) on (N, L) f64 inputs. */
function klTermOnly(
  logp: number[][],
  oldLogp: number[][],
  refLogp: number[][],
  mask: number[][],
  config: Parameters<typeof resolveObjectiveConfig>[0],
) {
  const zeros = logp.map((r) => r.map(() => 0));
  const out = objectiveOutputs(
    {
      logp: hostRows(logp),
      oldLogp: hostRows(oldLogp),
      advantages: hostRows(zeros),
      mask: hostRows(mask),
      entropy: hostRows(zeros),
      refLogp: hostRows(refLogp),
    },
    resolveObjectiveConfig({ beta: 1, loss_agg_mode: 'token-mean', ...config }),
  );
  const NL = logp.length * logp[0].length;
  return { loss: out.loss, dLogp: out.dLogp, kl: out.records.subarray(2 * NL, 3 * NL) };
}

describe("verl's straight-through KL (kl_penalty with a '+' name)", () => {
  for (const c of fixture.verl_kl_penalty) {
    const lab = LAB_OF_VERL[c.verl_name];
    it(`verl ${c.verl_name} = the lab's ${lab}: value and gradient`, () => {
      const u = c.logprob.map((lp, i) => lp - c.ref_logprob[i]);
      const value = u.map((x) => klEstimate(lab, x)[0]);
      const grad = u.map((x) => klEstimate(lab, x)[1]);
      expectClose('value', value, c.value);
      expectClose('gradient', grad, c.grad);
      // Through the whole objective too: one row, token-mean, so dLogp = grad / n and the loss is the mean value.
      const n = u.length;
      const r = klTermOnly([c.logprob], [c.logprob], [c.ref_logprob], [c.logprob.map(() => 1)], {
        kl_estimator: lab,
      });
      expectClose(
        'objective dLogp',
        r.dLogp,
        c.grad.map((g) => g / n),
      );
      expect(r.loss).toBeCloseTo(c.value.reduce((a, b) => a + b, 0) / n, 12);
    });
  }
});

describe("TRL's KL with use_bias_correction_kl (DeepSeek-V3.2's unbiased estimate)", () => {
  for (const c of fixture.trl_use_bias_correction_kl) {
    it(`${c.importance_sampling_level}-level ratio: loss, per-token KL and gradient`, () => {
      const r = klTermOnly(c.logp, c.old_logp, c.ref_logp, c.mask, {
        kl_estimator: 'k3',
        use_bias_correction_kl: true,
        importance_sampling_level: c.importance_sampling_level as 'token' | 'sequence',
      });
      expect(r.loss).toBeCloseTo(c.loss, 12);
      expectClose('per-token kl', r.kl, c.per_token_kl.flat());
      expectClose('gradient', r.dLogp, c.grad.flat());
    });
  }
});

describe("verl's grpo_passk advantages", () => {
  for (const c of fixture.verl_grpo_passk) {
    it(`G=${c.G} norm_adv_by_std_in_grpo=${c.norm_adv_by_std_in_grpo}`, () => {
      const N = c.scores.length;
      const a = grpoPasskAdvantages(
        { rewards: c.scores, mask: new Array(N).fill(1), groupSize: c.G },
        c.norm_adv_by_std_in_grpo ? 'group' : 'none',
      );
      expectClose('advantages', a, c.advantages, { atol: 1e-6, rtol: 1e-6 }); // f32 output
    });
  }
});

describe("verl's optimal_token_baseline", () => {
  for (const c of fixture.verl_optimal_token_baseline) {
    const N = c.scores.length;
    const label = `G=${c.G} L=${c.L} V=${c.V} beta=${c.beta}${c.rollout_is_weights ? ' with rollout IS weights' : ''}`;
    it(`${label}: log pi_old and sum pi^2 from the logits (calculate_sum_pi_squared_from_logits)`, () => {
      const rows = N * c.L;
      const lp = host(new Float64Array(rows), [rows]);
      const sumSq = host(new Float64Array(rows), [rows]);
      const logits = host(Float64Array.from(c.logits.flat()), [rows, c.V]);
      logprobForwardSumPiSquared(
        lp,
        host(new Float64Array(rows), [rows]),
        sumSq,
        logits,
        Uint32Array.from(c.tokens),
        c,
      );
      expectClose('old_log_probs', lp.data, c.old_log_probs, { atol: 1e-12, rtol: 1e-12 });
      expectClose('sum_pi_squared', sumSq.data, c.sum_pi_squared, { atol: 1e-12, rtol: 1e-12 });
    });
    it(`${label}: advantages`, () => {
      const a = optimalTokenBaselineAdvantages(
        {
          rewards: c.scores,
          mask: c.mask,
          groupSize: c.G,
          k1: c.k1,
          oldLogp: c.old_log_probs,
          sumPiSquared: c.sum_pi_squared,
          ...(c.rollout_is_weights ? { rolloutIsWeights: c.rollout_is_weights } : {}),
        },
        c.beta,
      );
      expectClose('advantages', a, c.advantages, { atol: 1e-6, rtol: 1e-6 }); // f32 output
    });
  }
});

describe("TRL's multi_objective_aggregation normalize_then_sum (GDPO)", () => {
  for (const c of fixture.trl_normalize_then_sum) {
    it(`G=${c.G} with ${c.reward_weights.length} reward functions`, () => {
      const N = c.rewards_per_func.length;
      const parts = c.reward_weights.map((weight, k) => ({
        name: `r${k}`,
        values: c.rewards_per_func.map((row) => row[k]),
        weight,
      }));
      const a = gdpoAdvantages({ rewards: new Array(N).fill(0), mask: new Array(N).fill(1), groupSize: c.G }, parts);
      expectClose('advantages', a, c.advantages, { atol: 2e-6, rtol: 2e-6 }); // f32 output
    });
  }
});

describe("verl's dppo_tv, dppo_kl and dro policy losses (token-mean)", () => {
  for (const c of fixture.verl_policy_loss) {
    it(`${c.loss_mode}: loss, gradient and the fraction outside DPPO's region`, () => {
      const cfg = c.config as {
        clip_ratio_low?: number;
        clip_ratio_high?: number;
        clip_ratio_c?: number;
        dro_beta?: number;
      };
      const out = objectiveOutputs(
        {
          logp: hostRows(c.log_prob),
          oldLogp: hostRows(c.old_log_prob),
          advantages: hostRows(c.advantages),
          mask: hostRows(c.response_mask),
          entropy: hostRows(c.log_prob.map((r) => r.map(() => 0))),
        },
        resolveObjectiveConfig({
          loss_type: c.loss_mode as 'dppo_tv' | 'dppo_kl' | 'dro',
          loss_agg_mode: 'token-mean',
          epsilon: cfg.clip_ratio_low ?? 0.2,
          epsilon_high: cfg.clip_ratio_high ?? null,
          clip_ratio_c: cfg.clip_ratio_c ?? null,
          dro_beta: cfg.dro_beta ?? null,
        }),
      );
      expect(out.loss).toBeCloseTo(c.pg_loss, 12);
      expectClose('gradient', out.dLogp, c.grad.flat());
      const region = out.metrics[OBJECTIVE_METRICS.indexOf('clip_ratio/region_mean')];
      expect(region).toBeCloseTo(c.pg_clipfrac, 12);
    });
  }
});

describe("TRL's vespo loss (get_gamma_weights, dapo aggregation)", () => {
  for (const c of fixture.trl_vespo) {
    it('loss and gradient', () => {
      const L = c.logp[0].length;
      const out = objectiveOutputs(
        {
          logp: hostRows(c.logp),
          oldLogp: hostRows(c.old_logp),
          advantages: hostRows(c.advantages.map(([a]) => new Array(L).fill(a))),
          mask: hostRows(c.mask),
          entropy: hostRows(c.logp.map((r) => r.map(() => 0))),
        },
        resolveObjectiveConfig({
          loss_type: 'vespo',
          loss_agg_mode: 'token-mean',
          vespo_k_pos: c.params.k_pos,
          vespo_lambda_pos: c.params.lambda_pos,
          vespo_k_neg: c.params.k_neg,
          vespo_lambda_neg: c.params.lambda_neg,
        }),
      );
      expect(out.loss).toBeCloseTo(c.loss, 12);
      expectClose('gradient', out.dLogp, c.grad.flat());
    });
  }
});

describe("the mismatch diagnostics against prime-rl's and verl's own functions (run from their sources)", () => {
  fixture.mismatch_diagnostics.cases.forEach((c, k) => {
    it(`case ${k}: ${c.mask.length / c.S} rows of ${c.S} tokens, C = ${c.threshold}`, () => {
      const got = mismatchDiagnostics(c.learner_logp, c.sampler_logp, c.mask, c.advantages, c.S, c.threshold);
      for (const name of MISMATCH_METRICS) {
        const want = (c.metrics as Record<string, number>)[name];
        expect(got[name], name).toBeDefined();
        expectClose(name, [got[name]!], [want], { atol: 1e-9, rtol: 1e-7 });
      }
    });
  });
});
