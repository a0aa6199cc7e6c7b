// The estimators that scale a group's advantages by its pass rate (docs/algorithms.md#estimator-max_rl and
// #estimator-f_grpo): MaxRL divides the centred reward by the group's mean reward (prime-rl's `max_rl`,
// arXiv:2602.02710), F-GRPO multiplies GRPO's advantage by a focal factor (1 - mu_pos)^gamma that fades groups the
// policy already solves. Pure CPU arithmetic per group of G contiguous rewards; advantages.ts dispatches here and
// broadcasts the result over the tokens. Not GRPO itself (grpoAdvantages) and not the metrics.

/** Rewards MaxRL accepts: it is defined for 0/1 (pass/fail) rewards only. */
export function checkBinaryRewards(rewards: ArrayLike<number>, estimator: string): void {
  for (let i = 0; i < rewards.length; i++) {
    const r = rewards[i];
    if (r !== 0 && r !== 1)
      throw new RangeError(
        `adv_estimator '${estimator}' needs binary rewards (each 0 or 1): completion ${i} has reward ${r}; use a task whose accuracy is pass/fail with reward_weights {accuracy: 1}, and no reward_fn or reward_model`,
      );
  }
}

/**
 * MaxRL (prime-rl's MaxRLAlgorithm.score_group): per group, a_i = (r_i - mean r) / mean r, and a = 0 for every
 * completion of a group whose mean is 0 (all failed: no signal). With 0/1 rewards the mean is 0 or at least 1/G,
 * so no epsilon is needed (prime-rl has none). Returns the (N) per-completion advantages.
 */
export function maxRlSequenceAdvantages(rewards: ArrayLike<number>, groupSize: number): Float64Array {
  checkBinaryRewards(rewards, 'max_rl');
  const N = rewards.length;
  const a = new Float64Array(N);
  for (let g = 0; g < N / groupSize; g++) {
    let sum = 0;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) sum += rewards[i];
    const mean = sum / groupSize;
    if (mean <= 0) continue;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) a[i] = (rewards[i] - mean) / mean;
  }
  return a;
}

/** F-GRPO's knobs: the focal exponent and the rewards that mean "correct" and "wrong". */
export interface FocalOptions {
  /** gamma >= 0: 0 is GRPO; larger fades easy groups faster. */
  gamma: number;
  /** R_correct: the reward of a correct completion. */
  rewardCorrect: number;
  /** R_wrong: the reward of a wrong one (< R_correct). */
  rewardWrong: number;
}

/**
 * F-GRPO's focal factor per group: (1 - mu_pos)^gamma with mu_pos = clamp((mean r - R_wrong) / (R_correct - R_wrong),
 * 0, 1), the group's estimated pass rate. Returns (B) factors, one per group of G contiguous rewards.
 */
export function focalGroupFactors(rewards: ArrayLike<number>, groupSize: number, o: FocalOptions): Float64Array {
  if (!(o.rewardCorrect > o.rewardWrong))
    throw new RangeError(
      `f_grpo needs f_grpo_reward_correct > f_grpo_reward_wrong, got ${o.rewardCorrect} and ${o.rewardWrong}`,
    );
  const B = rewards.length / groupSize;
  const f = new Float64Array(B);
  for (let g = 0; g < B; g++) {
    let sum = 0;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) sum += rewards[i];
    const mu = Math.min(Math.max((sum / groupSize - o.rewardWrong) / (o.rewardCorrect - o.rewardWrong), 0), 1);
    f[g] = (1 - mu) ** o.gamma;
  }
  return f;
}

/** Multiplies each row of the (N, L) per-token advantages by its group's factor, in place. */
export function scaleRowsByGroup(advantages: Float32Array, groupSize: number, factors: Float64Array): Float32Array {
  const N = factors.length * groupSize;
  const L = advantages.length / N;
  for (let i = 0; i < N; i++) {
    const f = factors[Math.floor(i / groupSize)];
    for (let t = 0; t < L; t++) advantages[i * L + t] *= f;
  }
  return advantages;
}

/** F-GRPO's options from a config's knobs. */
export function focalOptionsOf(c: {
  f_grpo_gamma: number;
  f_grpo_reward_correct: number;
  f_grpo_reward_wrong: number;
}): FocalOptions {
  return { gamma: c.f_grpo_gamma, rewardCorrect: c.f_grpo_reward_correct, rewardWrong: c.f_grpo_reward_wrong };
}
