// The adaptive entropy controller (entropy-control.ts) step by step against TRL's rule (GRPOTrainer: alpha moves by
// entropy_coef_delta up at or below entropy_target, down above it, clamped to [entropy_coef_min, entropy_coef_max];
// under use_adaptive_entropy alpha acts only while the last measured entropy is at or below the target, none before).

import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../schema/config';
import { appliedEntropyCoef, nextEntropyCoef } from './entropy-control';

describe('adaptive entropy controller', () => {
  const c = resolveConfig('grpo', {
    entropy_coef: 0.01,
    entropy_target: 0.5,
    entropy_coef_step: 0.01,
    entropy_coef_min: 0,
    entropy_coef_max: 0.025,
    entropy_bonus_gate: true,
  });

  it("follows TRL's rule over a run: up at or below the target, down above, clamped; gated by the last entropy", () => {
    const entropies = [0.8, 0.5, 0.3, 0.2, 0.9, 0.9, 0.9, 0.1];
    let alpha = c.entropy_coef;
    let last: number | null = null;
    const applied: number[] = [];
    const states: number[] = [];
    for (const h of entropies) {
      applied.push(appliedEntropyCoef(c, alpha, last));
      alpha = nextEntropyCoef(c, alpha, h);
      last = h;
      states.push(alpha);
    }
    // 0.01 -0.01 (0.8 > 0.5) -> 0; +0.01 (0.5 <= 0.5) -> 0.01; -> 0.02; -> 0.025 (max); down 3x -> 0 (min); up -> 0.01.
    expect(states.map((v) => +v.toFixed(10))).toEqual([0, 0.01, 0.02, 0.025, 0.015, 0.005, 0, 0.01]);
    // Nothing measured before step 0; then alpha only while the previous entropy was <= 0.5.
    expect(applied.map((v) => +v.toFixed(10))).toEqual([0, 0, 0.01, 0.02, 0.025, 0, 0, 0]);
  });

  it('without the gate alpha always acts; without a target it never moves', () => {
    const open = { ...c, entropy_bonus_gate: false };
    expect(appliedEntropyCoef(open, 0.02, null)).toBe(0.02);
    expect(appliedEntropyCoef(open, 0.02, 9)).toBe(0.02);
    const fixed = { ...c, entropy_target: null };
    expect(nextEntropyCoef(fixed, 0.02, 0)).toBe(0.02);
    expect(appliedEntropyCoef(fixed, 0.02, null)).toBe(0.02);
  });

  it('the defaults keep the earlier two-sided controller: alpha may turn negative down to -1', () => {
    const d = resolveConfig('grpo', { entropy_target: 0.5, entropy_coef_step: 0.6 });
    expect(nextEntropyCoef(d, 0, 2)).toBeCloseTo(-0.6, 12);
    expect(nextEntropyCoef(d, -0.6, 2)).toBe(-1);
    expect(nextEntropyCoef(d, 0.6, 0.1)).toBe(1);
  });

  it('refuses bounds the wrong way round, naming the field', () => {
    expect(() => resolveConfig('grpo', { entropy_coef_min: 0.5, entropy_coef_max: 0.1 })).toThrow(
      /entropy_coef_min: must not exceed entropy_coef_max \(0.1\), got 0.5/,
    );
  });
});
