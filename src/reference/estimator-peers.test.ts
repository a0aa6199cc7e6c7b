// The lab's MaxRL, F-GRPO, prime_dppo and on-policy distillation against the peers' own functions run on random
// inputs (fixtures/estimator-peers.json, written by scripts/make-estimator-peer-fixture.py, which cuts each function
// out of its repository at a named commit and executes it): prime-rl's MaxRLAlgorithm.score_group, verl's
// compute_grpo_outcome_advantage under F-GRPO's focal factor, prime-rl's default_loss_fn (loss and gradient, summed
// over samples and divided by the token count as its compute_loss does), and prime-rl's ref_kl_loss_fn (the opd
// algorithm's loss) against the lab's distillation advantage through its objective. The GPU objective is checked
// against the same loss cases in src/kernels/objective.test.ts.

import { describe, expect, it } from 'vitest';
import fixture from './fixtures/estimator-peers.json';
import { computeAdvantages } from '../rl/algorithm/advantages';
import { distillAdvantages } from '../rl/algorithm/distillation';
import { hostRows } from '../core/host-tensor';
import { resolveObjectiveConfig } from '../schema/objective';
import { compareArrays } from './compare';
import { objectiveOutputs } from './objective';

/** prime-rl's MaxRL computes in float32: its advantages carry about 7 digits. */
const F32 = { atol: 1e-6, rtol: 1e-6 };
const F64 = { atol: 1e-9, rtol: 1e-9 };

function expectClose(label: string, got: ArrayLike<number>, want: ArrayLike<number>, tol = F64): void {
  const c = compareArrays(got, want, tol);
  expect(c.pass, `${label}: ${c.summary}`).toBe(true);
}

describe("max_rl equals prime-rl's MaxRLAlgorithm", () => {
  for (const c of fixture.prime_max_rl) {
    it(`G = ${c.G}, ${c.rewards.length / c.G} groups (one all-failed)`, () => {
      const N = c.rewards.length;
      const r = computeAdvantages('max_rl', { rewards: c.rewards, mask: new Array(N).fill(1), groupSize: c.G });
      expectClose('advantages', r.advantages, c.advantages, F32);
    });
  }
});

describe("f_grpo equals verl's GRPO advantage times (1 - mu_pos)^gamma", () => {
  for (const c of fixture.f_grpo_on_verl_grpo) {
    it(`G = ${c.G}, gamma ${c.gamma}, R_wrong ${c.reward_wrong}, std ${c.norm_adv_by_std_in_grpo}`, () => {
      const N = c.rewards.length;
      const r = computeAdvantages(
        'f_grpo',
        { rewards: c.rewards, mask: new Array(N).fill(1), groupSize: c.G },
        {
          scaleRewards: c.norm_adv_by_std_in_grpo ? 'group' : 'none',
          focal: { gamma: c.gamma, rewardCorrect: c.reward_correct, rewardWrong: c.reward_wrong },
        },
      );
      // The lab's advantages are f32.
      expectClose('advantages', r.advantages, c.advantages, F32);
    });
  }
});

describe("prime_dppo equals prime-rl's default_loss_fn", () => {
  for (const c of fixture.prime_default_loss) {
    const k = c.config;
    it(`masks ${k.dppo_mask_low} / ${k.dppo_mask_high}, adv_tau ${k.adv_tau}, kl_tau ${k.kl_tau}: loss and gradient`, () => {
      const out = objectiveOutputs(
        {
          logp: hostRows(c.trainer_logprobs),
          // prime-rl has no recomputed pi_old: the ratio is to the sampler. oldLogp only feeds the lab's metrics.
          oldLogp: hostRows(c.trainer_logprobs),
          samplerLogp: hostRows(c.inference_logprobs),
          advantages: hostRows(c.advantages),
          mask: hostRows(c.mask),
          entropy: hostRows(c.mask.map((r) => r.map(() => 0))),
        },
        resolveObjectiveConfig({
          loss_type: 'prime_dppo',
          loss_agg_mode: 'token-mean',
          epsilon: k.dppo_mask_low,
          epsilon_high: k.dppo_mask_high,
          adv_tau: k.adv_tau,
          kl_tau: k.kl_tau,
        }),
      );
      expectClose('loss', [out.loss], [c.loss]);
      expectClose('dLogp', out.dLogp, c.grad.flat());
      // Some tokens fall outside DPPO's region, so the case tests the mask (records plane 1, the clip side).
      const NL = c.mask.length * c.mask[0].length;
      expect(Array.from(out.records.subarray(NL, 2 * NL)).some((s) => s !== 0)).toBe(true);
    });
  }
});

describe("vespo with a token rollout correction equals TRL's get_gamma_weights with importance_sampling_ratio", () => {
  for (const c of fixture.trl_vespo_token_is) {
    it(`${c.mode} [${c.clip_min}, ${c.clip_max}]: loss and gradient`, () => {
      const L = c.logp[0].length;
      const out = objectiveOutputs(
        {
          logp: hostRows(c.logp),
          oldLogp: hostRows(c.old_logp),
          samplerLogp: hostRows(c.sampling_logp),
          advantages: hostRows(c.advantages.map(([a]) => new Array(L).fill(a))),
          mask: hostRows(c.mask),
          entropy: hostRows(c.mask.map((r) => r.map(() => 0))),
        },
        resolveObjectiveConfig({
          loss_type: 'vespo',
          loss_agg_mode: 'token-mean',
          rollout_is_mode: c.mode as 'token_truncate' | 'token_mask',
          rollout_is_clip_min: c.clip_min,
          rollout_is_clip_max: c.clip_max,
        }),
      );
      expectClose('loss', [out.loss], [c.loss]);
      expectClose('dLogp', out.dLogp, c.grad.flat());
    });
  }
});

describe("on-policy distillation equals prime-rl's opd loss (ref_kl_loss_fn) on the student's own samples", () => {
  for (const c of fixture.prime_ref_kl) {
    const lengths = c.mask.map((r) => r.reduce((a, b) => a + b, 0));
    it(`rows of ${lengths.join(', ')} tokens: gradient and the teacher KL`, () => {
      const [student, teacher, mask] = [c.student_logprobs, c.teacher_logprobs, c.mask].map((rows) =>
        Float32Array.from(rows.flat()),
      );
      // The lab's opd: no task reward, distill_coef 1; its objective at ratio 1 (the sampler's own log-probs).
      const distilled = distillAdvantages(new Float32Array(mask.length), teacher, student, mask, 1);
      const L = c.mask[0].length;
      const rows = (a: Float32Array) => c.mask.map((_, r) => Array.from(a.subarray(r * L, (r + 1) * L)));
      const out = objectiveOutputs(
        {
          logp: hostRows(c.student_logprobs),
          oldLogp: hostRows(c.student_logprobs),
          advantages: hostRows(rows(distilled.advantages)),
          mask: hostRows(c.mask),
          entropy: hostRows(c.mask.map((r) => r.map(() => 0))),
        },
        resolveObjectiveConfig({ loss_type: 'ppo_clip', loss_agg_mode: 'token-mean' }),
      );
      // The advantages pass through f32 (the lab's planes): about 7 digits.
      expectClose('gradient', out.dLogp, c.grad.flat(), F32);
      // distill/reverse_kl is (1/M) sum (log pi_S - log pi_T): prime-rl's ref_kl with the sign turned.
      expect(distilled.reverseKl).toBeCloseTo(-c.ref_kl_token_mean, 5);
    });
  }
});
