// GPU-vs-twin cases of the objective family: every loss type x aggregation at awkward shapes (N=1 L=1, N=3 L=17,
// N=8 L=33), sequence-level ratios, every KL estimator (straight-through ones too), the unbiased KL, dual clip +
// delta cap, TIS, every rollout correction mode and the off-policy mask, the three token selections, long rows,
// per-sequence clip fractions with an empty row, an all-masked batch and logp == oldLogp. Inputs are
// random with ragged masks and garbage in padding (logp 50), so a leak of a masked token shows. Every output is
// compared (loss, dLogp, dEntropy, records, metrics); selections must agree exactly or contributions differ.

import * as ref from '../reference/objective';
import type { Rng } from '../core/random';
import { host, type HostTensor } from '../core/host-tensor';
import {
  KL_ESTIMATORS,
  LOSS_AGG_MODES,
  LOSS_TYPES,
  ROLLOUT_IS_MODES,
  resolveObjectiveConfig,
  type ObjectiveConfig,
} from '../schema/objective';
import { OBJECTIVE_METRICS, OBJECTIVE_RECORDS, objectiveForwardBackward, type ObjectiveTensors } from './objective';
import { gpuTwinCase, type KernelCase } from './verify';

/** Which optional inputs a case passes. */
export interface ObjectiveCaseInputs {
  ref?: boolean;
  sampler?: boolean;
  klExact?: boolean;
}

export interface RandomObjectiveOptions {
  /** Spread of logp - oldLogp (uniform in [-spread, spread]); 0 makes every ratio exactly 1. */
  spread?: number;
  /** Mask every token. */
  allMasked?: boolean;
  /** Per-sequence advantages (constant over t) instead of per-token ones. */
  perSequenceAdvantages?: boolean;
  /** This row has no masked token (a sequence the per-sequence clip fractions must skip). */
  emptyRow?: number;
  /** The first masked token of every row clips low under ppo_clip's default epsilon (A = -1, ratio e^-1). */
  lowClipEveryRow?: boolean;
  /** Keep oldLogp <= -0.01 at masked tokens, so e^oldLogp is a probability (DPPO's binary KL takes log(1 - q)). */
  oldIsLogProb?: boolean;
}

/**
 * Random objective inputs in the order logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp, klExact,
 * each (N, L) f32. Rows have random lengths (at least one row non-empty) and a few interior masked tokens.
 */
export function randomObjectiveInputs(
  rng: Rng,
  N: number,
  L: number,
  opts: RandomObjectiveOptions = {},
): HostTensor<Float32Array>[] {
  const spread = opts.spread ?? 0.6;
  const NL = N * L;
  const t = () => host(new Float32Array(NL), [N, L]);
  const [logp, old, adv, mask, ent, refLp, smp, klx] = [t(), t(), t(), t(), t(), t(), t(), t()];
  for (let i = 0; i < N; i++) {
    const len = N * L === 1 ? 1 : i === 0 ? Math.max(1, rng.int(L + 1)) : rng.int(L + 1);
    const base = rng.uniform(-1.5, 1.5);
    for (let j = 0; j < L; j++) {
      const idx = i * L + j;
      const on = !opts.allMasked && j < len && (j === 0 || rng.next() > 0.1);
      mask.data[idx] = on ? 1 : 0;
      const lp = rng.uniform(-3, -0.05);
      logp.data[idx] = on ? lp : 50; // padding holds garbage that must never reach a result
      old.data[idx] = on ? (spread === 0 ? lp : lp + rng.uniform(-spread, spread)) : -50;
      adv.data[idx] = opts.perSequenceAdvantages ? base : base + rng.uniform(-0.3, 0.3);
      ent.data[idx] = on ? rng.uniform(0.01, 3) : 1e3;
      refLp.data[idx] = lp + rng.uniform(-0.5, 0.5);
      smp.data[idx] = old.data[idx] + rng.uniform(-0.2, 0.2);
      klx.data[idx] = rng.uniform(0, 0.5);
    }
  }
  // Applied after every draw, so that the options leave the other tokens as they were.
  if (opts.oldIsLogProb) for (let i = 0; i < NL; i++) if (mask.data[i]) old.data[i] = Math.min(old.data[i], -0.01);
  if (opts.emptyRow !== undefined) {
    for (let j = 0; j < L; j++) {
      const idx = opts.emptyRow * L + j;
      [mask.data[idx], logp.data[idx], old.data[idx], ent.data[idx]] = [0, 50, -50, 1e3];
    }
  }
  if (opts.lowClipEveryRow) {
    for (let i = 0; i < N; i++) {
      const first = mask.data.subarray(i * L, (i + 1) * L).indexOf(1);
      if (first < 0) continue;
      const idx = i * L + first;
      adv.data[idx] = -1;
      old.data[idx] = logp.data[idx] + 1;
      smp.data[idx] = old.data[idx];
    }
  }
  return [logp, old, adv, mask, ent, refLp, smp, klx];
}

/** The inputs object a case passes to either implementation. */
export function pickInputs<T>(ins: T[], use: ObjectiveCaseInputs): ref.ObjectiveInputs<T> {
  const [logp, oldLogp, advantages, mask, entropy, refLogp, samplerLogp, klExact] = ins;
  return {
    logp,
    oldLogp,
    advantages,
    mask,
    entropy,
    ...(use.ref ? { refLogp } : {}),
    ...(use.sampler ? { samplerLogp } : {}),
    ...(use.klExact ? { klExact } : {}),
  };
}

const TOL = {
  loss: { atol: 2e-6, rtol: 1e-4 },
  grad: { atol: 1e-6, rtol: 1e-4 },
  records: { atol: 2e-6, rtol: 1e-4 },
  metrics: { atol: 2e-6, rtol: 1e-4 },
};

function objectiveCase(
  name: string,
  N: number,
  L: number,
  config: Partial<ObjectiveConfig>,
  use: ObjectiveCaseInputs,
  opts: RandomObjectiveOptions = {},
): KernelCase {
  const cfg = resolveObjectiveConfig(config);
  return gpuTwinCase({
    name: `objective ${N}x${L} ${name}`,
    family: 'objective',
    inputs: (rng) => randomObjectiveInputs(rng, N, L, opts),
    outputs: [
      { shape: [1], random: true },
      { shape: [N, L], random: true },
      { shape: [N, L], random: true },
      { shape: [OBJECTIVE_RECORDS.length, N, L], random: true },
      { shape: [OBJECTIVE_METRICS.length], random: true },
    ],
    gpu: (rec, [loss, dLogp, dEntropy, records, metrics], ins) =>
      objectiveForwardBackward(
        rec,
        loss,
        dLogp,
        dEntropy,
        records,
        metrics,
        pickInputs(ins, use) as ObjectiveTensors,
        cfg,
      ),
    twin: ([loss, dLogp, dEntropy, records, metrics], ins) =>
      ref.objectiveForwardBackward(
        loss,
        dLogp,
        dEntropy,
        records,
        metrics,
        pickInputs(ins as HostTensor<Float32Array>[], use),
        cfg,
      ),
    tol: [TOL.loss, TOL.grad, TOL.grad, TOL.records, TOL.metrics],
  });
}

const SHAPES: [number, number][] = [
  [1, 1],
  [3, 17],
  [8, 33],
];
const ALL: ObjectiveCaseInputs = { ref: true, sampler: true, klExact: true };

/** Every objective case, in a stable order. */
export function objectiveCases(): KernelCase[] {
  const cases: KernelCase[] = [];
  // Every loss type x aggregation x shape at token level, with a KL in the loss (estimator cycling), an entropy
  // bonus, and TIS on every other case.
  let j = 0;
  for (const loss_type of LOSS_TYPES) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      for (const [N, L] of SHAPES) {
        const kl_estimator = KL_ESTIMATORS[j % KL_ESTIMATORS.length];
        const tis = j % 2 === 1 && loss_type !== 'vespo' && loss_type !== 'prime_dppo'; // both refuse tis_cap
        j++;
        const cfg: Partial<ObjectiveConfig> = {
          loss_type,
          loss_agg_mode,
          dro_beta: 0.5,
          beta: 0.04,
          kl_estimator,
          entropy_coef: 0.01,
          ...(tis ? { tis_cap: 1.1 } : {}),
        };
        cases.push(
          objectiveCase(`${loss_type} ${loss_agg_mode} ${kl_estimator}${tis ? ' tis' : ''}`, N, L, cfg, ALL, {
            oldIsLogProb: loss_type === 'dppo_kl',
          }),
        );
      }
    }
  }
  // Sequence-level ratios (GSPO and its cispo / sapo relatives), every aggregation.
  for (const loss_type of ['ppo_clip', 'cispo', 'sapo'] as const) {
    for (const loss_agg_mode of LOSS_AGG_MODES) {
      for (const [N, L] of [
        [3, 17],
        [8, 33],
      ] as const) {
        cases.push(
          objectiveCase(
            `${loss_type} sequence ${loss_agg_mode}`,
            N,
            L,
            { loss_type, loss_agg_mode, importance_sampling_level: 'sequence', epsilon: 0.05, epsilon_high: 0.08 },
            {},
          ),
        );
      }
    }
  }
  // GSPO's own epsilons with per-sequence advantages.
  cases.push(
    objectiveCase(
      'gspo preset',
      8,
      33,
      {
        importance_sampling_level: 'sequence',
        epsilon: 3e-4,
        epsilon_high: 4e-4,
        loss_agg_mode: 'seq-mean-token-mean',
      },
      {},
      { perSequenceAdvantages: true },
    ),
  );
  // Every KL estimator in and out of the loss.
  for (const kl_estimator of KL_ESTIMATORS) {
    cases.push(objectiveCase(`kl ${kl_estimator} in_loss beta=0.1`, 8, 33, { beta: 0.1, kl_estimator }, ALL));
    cases.push(
      objectiveCase(
        `kl ${kl_estimator} in_reward (metric only)`,
        3,
        17,
        { beta: 0.1, kl_estimator, kl_placement: 'in_reward' },
        ALL,
      ),
    );
  }
  // DPPO's divergence masks with small thresholds (so that some tokens fall outside) and a low cap on the
  // stop-gradient ratio, and DRO, at awkward and long shapes.
  for (const [N, L] of [...SHAPES, [2, 300], [70, 9]] as [number, number][]) {
    for (const loss_type of ['dppo_tv', 'dppo_kl'] as const) {
      cases.push(
        objectiveCase(
          `${loss_type} eps 0.05/0.08 c=1.3`,
          N,
          L,
          { loss_type, epsilon: 0.05, epsilon_high: 0.08, clip_ratio_c: 1.3, beta: 0.04, entropy_coef: 0.01 },
          ALL,
          { spread: 0.9, oldIsLogProb: true },
        ),
      );
    }
    cases.push(objectiveCase('dro beta=0.7', N, L, { loss_type: 'dro', dro_beta: 0.7, tis_cap: 1.1 }, ALL));
    // VESPO with TRL's token rollout correction inside its sequence weight (truncated, masked, tis_cap).
    for (const [label, rc] of [
      ['token_truncate', { rollout_is_mode: 'token_truncate', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 }],
      ['token_mask', { rollout_is_mode: 'token_mask', rollout_is_clip_min: 0.9, rollout_is_clip_max: 1.1 }],
      ['tis_cap', { tis_cap: 1.05 }],
    ] as const) {
      cases.push(
        objectiveCase(`vespo ${label}`, N, L, { loss_type: 'vespo', beta: 0.04, entropy_coef: 0.01, ...rc }, ALL, {
          spread: 0.05,
        }),
      );
    }
    // prime-rl's default loss against the sampler's log-probs, with and without the delta cap on pi / mu.
    for (const delta of [null, 1.2]) {
      cases.push(
        objectiveCase(
          `prime_dppo eps 0.05/0.08 delta ${delta}`,
          N,
          L,
          {
            loss_type: 'prime_dppo',
            epsilon: 0.05,
            epsilon_high: 0.08,
            delta,
            adv_tau: 0.7,
            kl_tau: 0.01,
            beta: 0.04,
            entropy_coef: 0.01,
          },
          ALL,
          { spread: 0.9, oldIsLogProb: true },
        ),
      );
    }
    // VESPO with a small spread so that the summed log-ratio keeps phi away from 0 on short rows.
    cases.push(
      objectiveCase('vespo', N, L, { loss_type: 'vespo', beta: 0.04, entropy_coef: 0.01 }, ALL, { spread: 0.05 }),
    );
  }
  // DeepSeek-V3.2's unbiased KL (use_bias_correction_kl): the estimate times the token or sequence ratio, with a
  // straight-through estimator too, at awkward shapes and on long rows (several lanes per row).
  for (const [N, L] of [...SHAPES, [2, 300], [70, 9]] as [number, number][]) {
    for (const importance_sampling_level of ['token', 'sequence'] as const) {
      for (const kl_estimator of ['k3', 'k3+', 'low_var_kl'] as const) {
        cases.push(
          objectiveCase(
            `unbiased kl ${importance_sampling_level} ${kl_estimator}`,
            N,
            L,
            { beta: 0.1, kl_estimator, use_bias_correction_kl: true, importance_sampling_level, entropy_coef: 0.01 },
            ALL,
          ),
        );
      }
    }
  }
  cases.push(
    objectiveCase(
      'unbiased kl sequence cispo k2 seq-mean-token-mean',
      8,
      33,
      {
        beta: 0.1,
        kl_estimator: 'k2',
        use_bias_correction_kl: true,
        importance_sampling_level: 'sequence',
        loss_type: 'cispo',
        loss_agg_mode: 'seq-mean-token-mean',
      },
      ALL,
    ),
  );
  // Dual clip and the two-sided cap, alone and together, with clip-higher.
  for (const [N, L] of SHAPES) {
    cases.push(
      objectiveCase(
        'ppo_clip dual clip c=1.3 delta=1.5 eps 0.2/0.28',
        N,
        L,
        { clip_ratio_c: 1.3, delta: 1.5, epsilon_high: 0.28 },
        {},
        { spread: 0.9 },
      ),
    );
  }
  cases.push(objectiveCase('ppo_clip dual clip c=1.2', 8, 33, { clip_ratio_c: 1.2 }, {}, { spread: 0.9 }));
  cases.push(
    objectiveCase(
      'ppo_clip delta=1.25',
      8,
      33,
      { delta: 1.25, loss_agg_mode: 'seq-mean-token-sum' },
      {},
      { spread: 0.9 },
    ),
  );
  cases.push(
    objectiveCase(
      'cispo eps_max=1.3 tis',
      8,
      33,
      { loss_type: 'cispo', eps_max: 1.3, tis_cap: 1.05 },
      { sampler: true },
    ),
  );
  cases.push(
    objectiveCase(
      'gmpo gmpo_clip=0.2',
      8,
      33,
      { loss_type: 'gmpo', gmpo_clip: 0.2, loss_agg_mode: 'seq-mean-token-mean' },
      {},
    ),
  );
  // Token selections (batch-level thresholds on the GPU).
  for (const [N, L] of [
    [1, 1],
    [3, 17],
    [8, 33],
    [16, 70],
  ] as const) {
    for (const q of [0, 0.2, 0.75]) {
      cases.push(
        objectiveCase(
          `top_entropy_quantile=${q}`,
          N,
          L,
          { top_entropy_quantile: q, loss_agg_mode: 'seq-mean-token-mean' },
          {},
        ),
      );
    }
    cases.push(
      objectiveCase(
        'clip_cov ratio=0.05 band (0.02, 5)',
        N,
        L,
        { clip_cov_ratio: 0.05, clip_cov_lb: 0.02, clip_cov_ub: 5 },
        {},
      ),
    );
    cases.push(objectiveCase('kl_cov ratio=0.1 coef=2', N, L, { kl_cov_ratio: 0.1, kl_cov_coef: 2 }, {}));
  }
  cases.push(
    objectiveCase(
      'top_entropy_quantile=0.3 sequence sapo',
      8,
      33,
      { top_entropy_quantile: 0.3, loss_type: 'sapo', importance_sampling_level: 'sequence' },
      {},
    ),
  );
  cases.push(
    objectiveCase('top_entropy_quantile=0.5 gmpo', 8, 33, { top_entropy_quantile: 0.5, loss_type: 'gmpo' }, {}),
  );
  // Long rows: several lanes per row (LANES 4, 16, 64), and many rows.
  for (const [N, L] of [
    [2, 300],
    [2, 700],
    [1, 2000],
    [70, 9],
  ] as const) {
    cases.push(
      objectiveCase(
        'ppo_clip sequence token-mean tis kl k3',
        N,
        L,
        { importance_sampling_level: 'sequence', epsilon: 0.05, beta: 0.04, tis_cap: 1.2, entropy_coef: 0.01 },
        ALL,
      ),
    );
    cases.push(
      objectiveCase('gmpo top_entropy_quantile=0.4', N, L, { loss_type: 'gmpo', top_entropy_quantile: 0.4 }, ALL),
    );
  }
  // Per-sequence clip fractions (clip_ratio/low_min, high_max): a row without masked tokens that both must skip,
  // and a low clip in every other row so that low_min is above 0.
  for (const [N, L] of [
    [3, 17],
    [8, 33],
    [70, 9],
    [3, 300],
  ] as const) {
    cases.push(
      objectiveCase(
        'ppo_clip per-sequence clip fractions, row 1 empty',
        N,
        L,
        { epsilon_high: 0.28 },
        {},
        { spread: 0.9, emptyRow: 1, lowClipEveryRow: true },
      ),
    );
  }
  cases.push(
    objectiveCase(
      'ppo_clip sequence per-sequence clip fractions, row 2 empty',
      8,
      33,
      { importance_sampling_level: 'sequence', epsilon: 0.05, epsilon_high: 0.08 },
      {},
      { emptyRow: 2 },
    ),
  );
  cases.push(
    objectiveCase(
      'gmpo per-sequence clip fractions, row 0 empty',
      8,
      33,
      { loss_type: 'gmpo', gmpo_clip: 0.2 },
      {},
      { emptyRow: 0 },
    ),
  );
  // Rollout correction (every mode, both bounds, one bound) and the off-policy sequence mask, with a sampler whose
  // gap is wide enough (spread) that bounds near 1 truncate or mask a good share of tokens and sequences.
  for (const [N, L] of [...SHAPES, [2, 300], [70, 9]] as const) {
    for (const rollout_is_mode of ROLLOUT_IS_MODES.filter((m) => m !== 'off')) {
      // Bounds that cut: a token's w spreads over [0.82, 1.22], a sequence's product much wider, a geometric mean less.
      const [lo, hi] =
        rollout_is_mode === 'sequence_geo_mask'
          ? [0.97, 1.04]
          : rollout_is_mode.startsWith('sequence')
            ? [0.7, 1.6]
            : [0.9, 1.15];
      cases.push(
        objectiveCase(
          `rollout_is_mode ${rollout_is_mode} [${lo}, ${hi}]`,
          N,
          L,
          { rollout_is_mode, rollout_is_clip_min: lo, rollout_is_clip_max: hi, beta: 0.04 },
          ALL,
        ),
      );
    }
    cases.push(
      objectiveCase(
        'rollout_is_mode token_mask max only, off-policy mask 0.05, sequence ratio',
        N,
        L,
        {
          rollout_is_mode: 'token_mask',
          rollout_is_clip_max: 1.1,
          off_policy_mask_threshold: 0.05,
          importance_sampling_level: 'sequence',
          epsilon: 0.05,
        },
        { sampler: true },
        { spread: 0.3 },
      ),
    );
    cases.push(
      objectiveCase(
        'off_policy_mask_threshold 0.02 without sampler (oldLogp), gmpo',
        N,
        L,
        { off_policy_mask_threshold: 0.02, loss_type: 'gmpo' },
        {},
        { spread: 0.3 },
      ),
    );
  }
  // Degenerate batches.
  cases.push(
    objectiveCase('all masked', 3, 17, { beta: 0.04, entropy_coef: 0.01, top_entropy_quantile: 0.5 }, ALL, {
      allMasked: true,
    }),
  );
  for (const loss_type of LOSS_TYPES) {
    cases.push(objectiveCase(`${loss_type} logp == oldLogp`, 8, 33, { loss_type, dro_beta: 0.5 }, ALL, { spread: 0 }));
  }
  return cases;
}
