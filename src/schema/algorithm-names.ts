// The names of the algorithm's choices that the knob schema lists and checks: every advantage estimator and which of
// them need groups or per-token rewards, the reward scalings and multi-objective aggregations, and the names of the two
// reward functions that are not tasks' verifiers (the person's reward_fn and a learned reward model). Pure data in the
// page-safe layer; the arithmetic behind each name lives in src/rl/ (algorithm/advantages.ts, rewards/).

/** Every value of `adv_estimator`, in docs/algorithms.md's order. */
export const ADV_ESTIMATORS = [
  'grpo',
  'dr_grpo',
  'rloo',
  'reinforce',
  'reinforce_pp',
  'reinforce_pp_baseline',
  'remax',
  'opo',
  'gae',
  'grpo_passk',
  'optimal_token_baseline',
  'max_rl',
  'f_grpo',
] as const;

export type AdvEstimator = (typeof ADV_ESTIMATORS)[number];

/** Every value of `scale_rewards` (GRPO's divisor): the group's std, the batch's std, or none (= Dr. GRPO). */
export const SCALE_REWARDS = ['group', 'batch', 'none'] as const;

export type ScaleRewards = (typeof SCALE_REWARDS)[number];

/** Estimators whose baseline compares the G completions of one prompt: they need num_generations >= 2. */
export const GROUP_ESTIMATORS: readonly AdvEstimator[] = [
  'grpo',
  'dr_grpo',
  'rloo',
  'opo',
  'reinforce_pp_baseline',
  'grpo_passk',
  'max_rl',
  'f_grpo',
];

/** Estimators that build per-token rewards (-beta * k1 per token, r_i at the last token): the KL can sit in the reward. */
export const TOKEN_REWARD_ESTIMATORS: readonly AdvEstimator[] = [
  'reinforce_pp',
  'reinforce_pp_baseline',
  'gae',
  'optimal_token_baseline',
];

/** Estimators that read the policy's sum_v pi(v)^2 and log pi_old per token (the scoring pass computes them). */
export const SUM_PI_SQUARED_ESTIMATORS: readonly AdvEstimator[] = ['optimal_token_baseline'];

/**
 * How several reward functions become one advantage (`multi_objective_aggregation`, TRL's name):
 * sum_then_normalize: r_i = sum_k w_k R_k, then the estimator; normalize_then_sum (GDPO): each R_k normalized in
 * its group first, then summed and normalized over the batch (gdpoAdvantages).
 */
export const MULTI_OBJECTIVE_AGGREGATIONS = ['sum_then_normalize', 'normalize_then_sum'] as const;

export type MultiObjectiveAggregation = (typeof MULTI_OBJECTIVE_AGGREGATIONS)[number];

/** The reward function's name among the run's reward functions. */
export const LEARNED_REWARD_NAME = 'reward_model';

/** The reward function's name among the run's reward functions: reward_weights.user, rewards/user/mean. */
export const USER_REWARD_NAME = 'user';
