// Lesson rl-vs-sft: the same warm start and budget spent two ways, supervised fine-tuning on correct
// demonstrations or GRPO on the verifier's reward, compared on the same held-out prompts (greedy accuracy and
// pass@k). The SFT run is a run session in mode 'sft' (LessonRun mode 'sft', src/engine/supervised-trainer.ts over
// src/rl/learners/sft.ts), on the page as in the lesson runner.

import type { Lesson } from '../lesson';
import { finalEval, runOf } from '../narration';

// 32 held-out prompts x 16 samples for pass@1..16; eval_every beyond the budget: one evaluation, after the last step.
const COMMON = {
  task: 'copy',
  checkpoint: 'copy',
  difficulty: 3,
  temperature: 0.7,
  learning_rate: 1e-3,
  eval_items: 32,
  eval_num_generations: 16,
  eval_every: 1000,
} as const;

export const rlVsSft: Lesson = {
  id: 'rl-vs-sft',
  title: 'Same start, same budget: supervised fine-tuning or RL?',
  source:
    'The survey of RL for reasoning models (SFT imitates demonstrations token by token; RL learns from one scalar reward per sample and mostly sharpens what the model already samples), "SFT memorizes, RL generalizes" (Chu et al., 2025: RL\'s advantage shows out of distribution) and "Does reinforcement learning really incentivize reasoning capacity beyond the base model?" (Yue et al., 2025: RL narrows pass@k at large k; distillation from demonstrations widens it).',
  question: {
    prompt:
      'From the copy warm start, 16 steps of 64 sequences each: run A imitates 64 correct answers per step (SFT), run B samples 64 answers per step and is rewarded by the verifier (GRPO). On held-out prompts of the same kind, sampled 16 times each, which ends with the higher pass@1 and pass@16?',
    choices: [
      'RL: it optimizes the very thing the verifier checks',
      'SFT: every token of every example is a correct target',
      'They end level: same data budget',
    ],
    answer: 1,
    why: 'SFT gets a full correct answer per sequence, a gradient on every token toward it. GRPO gets one number per sample and learns only from the difference between samples of the same prompt, and only where its own samples already contain a success. With correct demonstrations of the very task it is tested on, imitation is the denser teacher.',
  },
  runs: [
    {
      key: 'sft',
      label: 'supervised fine-tuning on correct answers',
      preset: 'grpo',
      mode: 'sft',
      overrides: { ...COMMON },
    },
    {
      key: 'rl',
      label: "GRPO on the verifier's reward",
      preset: 'grpo',
      overrides: { ...COMMON, reward_weights: { accuracy: 1 } },
    },
  ],
  steps: 16,
  look: "The SFT run samples nothing: it charts its loss (cross-entropy on the demonstrations) and learning rate, and its held-out evaluation before and after. Watch the GRPO run's accuracy and entropy, then compare the two pass@k curves.",
  narration: [
    'GRPO: accuracy on its own samples is {rl:accuracy}, and {rl:frac_reward_zero_std} of its groups are all-equal and teach nothing.',
    "GRPO's entropy is {rl:entropy}: it concentrates probability on answers it already produces.",
  ],
  highlight: { charts: ['reward', 'entropy', 'fractions'], planes: ['advantage'], passAtK: true },
  check: {
    claim: 'on the same held-out prompts, the SFT run ends above the GRPO run both at pass@1 and at pass@16',
    evaluate(runs) {
      const sft = finalEval(runOf(runs, 'sft'));
      const rl = finalEval(runOf(runs, 'rl'));
      const k = Math.min(sft.passAtK.length, rl.passAtK.length);
      const values = {
        'sft: greedy accuracy': sft.accuracy,
        'rl: greedy accuracy': rl.accuracy,
        'sft: pass@1': sft.passAtK[0],
        'rl: pass@1': rl.passAtK[0],
        [`sft: pass@${k}`]: sft.passAtK[k - 1],
        [`rl: pass@${k}`]: rl.passAtK[k - 1],
      };
      const observed = sft.passAtK[0] > rl.passAtK[0] && sft.passAtK[k - 1] > rl.passAtK[k - 1];
      return {
        observed,
        values,
        summary: `Held-out greedy accuracy: SFT ${sft.accuracy.toFixed(2)}, GRPO ${rl.accuracy.toFixed(2)}. pass@1: SFT ${sft.passAtK[0].toFixed(2)}, GRPO ${rl.passAtK[0].toFixed(2)}; pass@${k}: SFT ${sft.passAtK[k - 1].toFixed(2)}, GRPO ${rl.passAtK[k - 1].toFixed(2)}.`,
      };
    },
    whyNot:
      "On 32 held-out prompts one prompt moves pass@16 by 0.03, and GRPO's pass@1 after 16 steps varies by several points from seed to seed; on a seed where GRPO sharpened quickly its pass@1 can draw level with SFT's.",
  },
  explain:
    "Both runs saw 64 sequences per step from the same start. SFT's were correct answers, and every token was a target: it raised pass@1 by about 0.1 over the start (about 0.18 on these prompts) and kept pass@16 high. GRPO's were its own samples, scored 0 or 1: it learns only from prompts whose samples disagree, and it learns to prefer answers it already gives, so it raised pass@1 less and ended below SFT at pass@16 as well. Greedy accuracy, one sample per prompt, moves by chance on 32 prompts and is shown, not judged. This is the in-distribution half of the literature: with correct demonstrations of the test task, imitation is the denser teacher. RL's case rests on what demonstrations cannot give (no demonstrations at all, or prompts unlike the training ones, where Chu et al. find SFT memorizes and RL generalizes), which a 16-step copy run does not test.",
  next: "Give the GRPO run a larger learning_rate (3e-3) and see whether its pass@1 catches up with SFT's, and what that costs at pass@16.",
};
