// The adaptive entropy controller (docs/algorithms.md#adaptive-entropy-coefficient; TRL's use_adaptive_entropy,
// Skywork-OR1): the entropy coefficient alpha as a state of the run that moves by entropy_coef_step toward
// entropy_target once per rollout step, within [entropy_coef_min, entropy_coef_max], and (entropy_bonus_gate) acts
// only while the last measured entropy is at or below the target. Pure functions; the trainer holds the state.

import type { RLConfig } from '../../schema/config';

type ControlKnobs = Pick<
  RLConfig,
  'entropy_target' | 'entropy_coef_step' | 'entropy_coef_min' | 'entropy_coef_max' | 'entropy_bonus_gate'
>;

/**
 * The alpha the objective applies this step: the controller's alpha, or 0 under entropy_bonus_gate while the last
 * step's mean entropy is above entropy_target or not yet measured (TRL starts it at +inf).
 */
export function appliedEntropyCoef(c: ControlKnobs, alpha: number, lastEntropy: number | null): number {
  if (c.entropy_target === null || !c.entropy_bonus_gate) return alpha;
  return lastEntropy !== null && lastEntropy <= c.entropy_target ? alpha : 0;
}

/** alpha after a step whose mean entropy was `entropy`: + step at or below the target, - step above, clamped. */
export function nextEntropyCoef(c: ControlKnobs, alpha: number, entropy: number): number {
  if (c.entropy_target === null) return alpha;
  const moved = alpha + (entropy <= c.entropy_target ? c.entropy_coef_step : -c.entropy_coef_step);
  return Math.min(c.entropy_coef_max, Math.max(c.entropy_coef_min, moved));
}
