// The single-token bandit: a fixed prompt, a completion of one arm letter, a fixed reward per arm.
// It exists to watch a policy's distribution over a handful of tokens move under RL; it is not a reasoning
// task and has no held-out split (there is only one prompt: both splits return the same item).

import { defineTask, show, type TaskFactory } from './task';

/** The fixed prompt. */
export const BANDIT_PROMPT = 'pick:';

/** Arm letters; difficulty k uses the first k. */
export const BANDIT_ARMS = 'ABCDEFGH';

/**
 * Reward of arm i (0-based) among k arms: (i + 1) / k. The last arm is the unique best (reward 1); every
 * valid arm earns something, so only malformed completions get 0.
 */
export function banditArmRewards(k: number): number[] {
  return Array.from({ length: k }, (_, i) => (i + 1) / k);
}

/** The bandit task (difficulty: number of arms, 2..8, default 4). */
export const bandit: TaskFactory = defineTask<true>({
  name: 'bandit',
  description: 'Single-token bandit: answer one arm letter; each arm pays a fixed reward, the last pays most.',
  difficulty: { min: 2, max: 8, default: 4, meaning: 'number of arms' },
  alphabet: BANDIT_PROMPT + BANDIT_ARMS,
  // The arm's value is the whole reward; format is only a gate (a non-arm completion gets 0).
  weights: { accuracy: 1, format: 0 },
  extraRewards: ['best'],
  disjointSplits: false,
  maxPromptLength: () => BANDIT_PROMPT.length,
  maxCompletionLength: () => 4,
  draw: () => true,
  render: () => BANDIT_PROMPT,
  parse: (prompt) => (prompt === BANDIT_PROMPT ? true : null),
  key: () => BANDIT_PROMPT,
  solve: (_p, k) => BANDIT_ARMS[k - 1] ?? null,
  completionLimit: () => 4,
  check(_p, completion, k) {
    const arms = BANDIT_ARMS.slice(0, k);
    const i = completion.length === 1 ? arms.indexOf(completion) : -1;
    if (i < 0) {
      return { accuracy: 0, format: 0, reason: `not an arm: ${show(completion)} (one of ${arms})` };
    }
    const r = banditArmRewards(k)[i] ?? 0;
    const best = i === k - 1 ? 1 : 0;
    return {
      accuracy: r,
      format: 1,
      reason: best
        ? `arm ${completion}: reward 1 (best arm)`
        : `arm ${completion}: reward ${r.toFixed(3)} (best is ${arms[k - 1]})`,
      extra: { best },
    };
  },
  meta: (_p, k) => ({ arms: BANDIT_ARMS.slice(0, k), armRewards: banditArmRewards(k) }),
});
