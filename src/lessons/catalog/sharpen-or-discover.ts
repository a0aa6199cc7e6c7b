// Lesson sharpen-or-discover: does RL teach new solutions or make the likely ones more likely? pass@k for
// k = 1..16 on the same held-out prompts, for the warm start and after GRPO: pass@1 rises, pass@16 rises much less or falls.

import type { Lesson } from '../lesson';
import { finalEval, runOf } from '../narration';

// 64 held-out prompts x 16 samples for pass@1..16; eval_every beyond the budget: one evaluation, after the last step.
const COMMON = { task: 'copy', checkpoint: 'copy', difficulty: 3, temperature: 0.7, eval_items: 64, eval_num_generations: 16, eval_every: 1000 } as const;


export const sharpenOrDiscover: Lesson = {
  id: 'sharpen-or-discover',
  title: 'Does RL find new solutions, or sharpen old ones?',
  source:
    '"Does reinforcement learning really incentivize reasoning capacity in LLMs beyond the base model?" (Yue et al., 2025): RL with verifiable rewards raises pass@1 while the base model matches or beats it at large k. ProRL (Liu et al., 2025) argues the opposite under much longer RL with reference resets.',
  question: {
    prompt:
      'Held-out prompts, 16 samples each. pass@k is the chance that at least one of k samples is right. After a short GRPO run from the warm start, how do pass@1 and pass@16 change?',
    choices: [
      'Both rise by about the same amount',
      'pass@1 rises clearly; pass@16 rises much less, or falls',
      'pass@16 rises more than pass@1: RL explores new answers',
    ],
    answer: 1,
    why: 'GRPO moves probability toward the answers the policy already samples and is rewarded for. Prompts it solves sometimes become prompts it solves almost always (pass@1 up), but a prompt it never solves gives no gradient, so the set of prompts solved by some sample (pass@16) barely grows.',
  },
  runs: [
    // The warm start's pass@k: a run that cannot move (learning rate 1e-9; 1 prompt x 2 samples a step, so it costs
    // little), evaluated on the same prompts with the same sampling seeds as the GRPO run.
    { key: 'start', label: 'the warm start (learning rate 1e-9: evaluated as it is)', preset: 'grpo', overrides: { ...COMMON, learning_rate: 1e-9, train_batch_size: 1, num_generations: 2 } },
    { key: 'rl', label: 'after GRPO', preset: 'grpo', overrides: { ...COMMON, learning_rate: 1.5e-3, reward_weights: { accuracy: 1 } } },
  ],
  steps: 16,
  look: 'Watch accuracy and entropy on the Reward and Entropy charts while GRPO runs; the pass@k curves of the two runs arrive with their held-out evaluations.',
  narration: [
    'GRPO: accuracy on its training samples is {rl:accuracy} and entropy {rl:entropy}: the policy concentrates on what it already gets right.',
    'Groups that are all-equal: {rl:frac_reward_zero_std}. Prompts the policy always solves or never solves both give no gradient.',
  ],
  highlight: { charts: ['reward', 'entropy'], planes: ['probability'] },
  check: {
    claim:
      'on the same held-out prompts, pass@1 after GRPO is at least 0.02 above the warm start\'s, and the gain at pass@16 is at least 0.03 smaller than the gain at pass@1 (a gain that shrinks with k, often below 0 at 16)',
    evaluate(runs) {
      const before = finalEval(runOf(runs, 'start')).passAtK;
      const after = finalEval(runOf(runs, 'rl')).passAtK;
      const k = Math.min(before.length, after.length);
      const gain1 = after[0] - before[0];
      const gainK = after[k - 1] - before[k - 1];
      const values = {
        'pass@1 before': before[0],
        'pass@1 after': after[0],
        [`pass@${k} before`]: before[k - 1],
        [`pass@${k} after`]: after[k - 1],
      };
      const observed = gain1 >= 0.02 && gainK <= gain1 - 0.03;
      return {
        observed,
        values,
        summary: `pass@1 went from ${before[0].toFixed(2)} to ${after[0].toFixed(2)} (${gain1 >= 0 ? '+' : ''}${gain1.toFixed(2)}); pass@${k} from ${before[k - 1].toFixed(2)} to ${after[k - 1].toFixed(2)} (${gainK >= 0 ? '+' : ''}${gainK.toFixed(2)}).`,
      };
    },
    whyNot:
      'Sixteen steps are a short run and the first updates of GRPO from this start cost accuracy before they add it: on some seeds pass@1 has not risen yet. And pass@16 on 64 prompts moves by 0.016 per prompt: a few prompts solved in 1 of 16 samples tipping the same way can give GRPO\'s pass@16 a gain as large as its pass@1\'s.',
  },
  explain:
    'pass@1 is the mean per-prompt solve rate; pass@16 is the share of prompts solved at least once in 16 tries. GRPO raised the first much more than the second: it moved prompts the start solved sometimes toward always, and it taught little on prompts the start could not solve. When pass@1 rises while pass@16 falls, the per-prompt solve rates have spread toward both ends: more samples right on the prompts GRPO learned, and a few prompts that some of 16 samples used to solve now solved by none. In the paper\'s words, RL with verifiable rewards makes sampling more efficient within the base model\'s reach; whether long RL goes beyond it, as ProRL claims, is a question of budget that this lab\'s short runs cannot settle.',
  next: 'Raise temperature to 1.2 on the GRPO run: more exploration keeps pass@16 from falling, at some cost in pass@1.',
};
