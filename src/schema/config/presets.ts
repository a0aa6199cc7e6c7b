// The named algorithms as partial configs over the defaults (docs/algorithms.md#presets): each preset sets exactly
// the knobs its paper's recipe names; everything else keeps its default. Display names and one-line descriptions
// for the panel. Not validation (validate.ts) and not the knobs' definitions (schema.ts).

import type { RLConfig } from './schema';

/** Preset names, in docs/algorithms.md's order. */
export const PRESET_NAMES = [
  'reinforce',
  'rloo',
  'grpo',
  'dr_grpo',
  'dapo',
  'gspo',
  'cispo',
  'reinforce_pp',
  'remax',
  'ppo',
  'prime_rl',
] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** Display name and a one-line description of each preset. */
export const PRESET_INFO: Readonly<Record<PresetName, { label: string; description: string }>> = {
  reinforce: { label: 'REINFORCE', description: 'the plain policy gradient -A log pi with A = r' },
  rloo: { label: 'RLOO', description: 'leave-one-out baseline over the group, PPO clip' },
  grpo: {
    label: 'GRPO (DeepSeekMath)',
    description: 'group-normalized advantages, per-sequence mean, k3 KL in the loss',
  },
  dr_grpo: { label: 'Dr. GRPO', description: 'GRPO without the std and length biases' },
  dapo: { label: 'DAPO', description: 'clip-higher, token-mean, dynamic sampling and overlong shaping' },
  gspo: { label: 'GSPO', description: 'sequence-level ratio with tiny clip ranges' },
  cispo: { label: 'CISPO', description: 'clipped stop-gradient importance weights; no token is dropped' },
  reinforce_pp: {
    label: 'REINFORCE++',
    description: 'token returns with the k1 KL in the reward, whitened over the batch',
  },
  remax: { label: 'ReMax', description: 'a greedy rollout per prompt as the baseline' },
  ppo: { label: 'PPO', description: 'a critic, GAE and the value loss' },
  prime_rl: {
    label: 'prime-rl',
    description: "prime-rl's defaults: centred rewards, DPPO's mask on pi/mu and a squared log-ratio to the sampler",
  },
};

/**
 * Every preset as exactly the knobs docs/algorithms.md's preset table sets; everything else keeps its default. Where the
 * table says only "k1 in reward", beta is the source's: OpenRLHF's init_kl_coef 0.01 for REINFORCE++,
 * TRL's PPOConfig kl_coef 0.05 for PPO. "optional" KL means the preset leaves beta at its default 0.
 */
export const PRESETS = {
  reinforce: { adv_estimator: 'reinforce', loss_type: 'pg', loss_agg_mode: 'seq-mean-token-sum', beta: 0 },
  rloo: {
    adv_estimator: 'rloo',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'seq-mean-token-mean',
  },
  grpo: {
    adv_estimator: 'grpo',
    scale_rewards: 'group',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'seq-mean-token-mean',
    beta: 0.04,
    kl_estimator: 'k3',
    kl_placement: 'in_loss',
  },
  dr_grpo: {
    adv_estimator: 'dr_grpo',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'seq-mean-token-sum-norm',
    beta: 0,
  },
  dapo: {
    adv_estimator: 'grpo',
    scale_rewards: 'group',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    epsilon: 0.2,
    epsilon_high: 0.28,
    loss_agg_mode: 'token-mean',
    beta: 0,
    dynamic_sampling: true,
    overlong_buffer_enable: true,
  },
  gspo: {
    adv_estimator: 'grpo',
    scale_rewards: 'group',
    importance_sampling_level: 'sequence',
    loss_type: 'ppo_clip',
    epsilon: 3e-4,
    epsilon_high: 4e-4,
    loss_agg_mode: 'seq-mean-token-mean',
    beta: 0,
  },
  cispo: {
    adv_estimator: 'grpo',
    scale_rewards: 'group',
    importance_sampling_level: 'token',
    loss_type: 'cispo',
    loss_agg_mode: 'token-mean',
    beta: 0,
  },
  reinforce_pp: {
    adv_estimator: 'reinforce_pp',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'token-mean',
    beta: 0.01,
    kl_estimator: 'k1',
    kl_placement: 'in_reward',
  },
  remax: {
    adv_estimator: 'remax',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'seq-mean-token-mean',
  },
  ppo: {
    adv_estimator: 'gae',
    importance_sampling_level: 'token',
    loss_type: 'ppo_clip',
    loss_agg_mode: 'token-mean',
    beta: 0.05,
    kl_estimator: 'k1',
    kl_placement: 'in_reward',
    gamma: 1,
    lam: 0.95,
    vf_coef: 0.1,
  },
  prime_rl: { adv_estimator: 'dr_grpo', loss_type: 'prime_dppo' },
} as const satisfies Record<PresetName, Partial<RLConfig>>;

/** True if `name` is one of PRESET_NAMES. */
export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}
