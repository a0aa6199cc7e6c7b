// Lesson distill-vs-rl: the same student and budget spent three ways, GRPO on the verifier's reward, on-policy
// distillation from a stronger teacher trained in the lab (every reward weighed 0), and both. The teacher
// (public/models/copy-teacher/: the copy warm start trained further by SFT to 100% held out) watches every run, so
// the per-token KL of each student's own samples to it is measured in all three, on the same prompts (one seed).

import type { Lesson } from '../lesson';
import { firstLast, meanOf, runOf, series } from '../narration';

const TEACHER = 'models/copy-teacher';
const COMMON = {
  task: 'copy',
  checkpoint: 'copy',
  difficulty: 3,
  temperature: 0.7,
  learning_rate: 1e-3,
  eval_every: 0,
  teacher: TEACHER,
} as const;
/** Steps at the end whose mean KL the check compares: the second half (one batch of prompts moves a step's KL). */
const TAIL = 8;

export const distillVsRl: Lesson = {
  id: 'distill-vs-rl',
  title: "Distillation or RL: what does a teacher's per-token signal buy?",
  source:
    'Thinking Machines, "On-policy distillation" (2025: the student samples, a teacher grades every token by its reverse KL, a dense reward at RL\'s cost per sample); Agarwal et al., "On-policy distillation of language models" (GKD, 2024); prime-rl\'s opd and Tinker\'s cookbook (their code: docs/algorithms.md#on-policy-distillation).',
  question: {
    prompt:
      "One student, the copy warm start; one teacher, the same model trained further in the lab until it copies every held-out string. 16 steps of 64 samples each: run A trains GRPO on the verifier's reward (the teacher only watches), run B distills alone (each sampled token rewarded by log pi_teacher - log pi_student, the verifier ignored), run C does both. After the same budget, whose own samples does the teacher find closest to its own?",
    choices: [
      'A: the verifier rewards exactly what the teacher does, so RL converges on the teacher as fast',
      'B and C: the teacher grades every token of every sample, so each step moves the student toward it on every token; the reward gives one number per sample, and none where a group agrees',
      'All three end level: the same samples, the same steps',
    ],
    answer: 1,
    why: "GRPO's signal is one number per completion, compared within its group: it says which completions were better, not which tokens, and a group whose completions all fail (or all pass) says nothing. The teacher's log-prob gap is a reward on every token, in every group, pointing where the teacher would have gone. Same samples, same steps, far more bits of supervision.",
  },
  runs: [
    {
      key: 'rl',
      label: "GRPO on the verifier's reward (the teacher only watches)",
      preset: 'grpo',
      overrides: { ...COMMON, distill_coef: 0 },
    },
    {
      key: 'opd',
      label: 'on-policy distillation alone (every reward weighed 0)',
      preset: 'grpo',
      overrides: { ...COMMON, distill_coef: 1, reward_weights: { accuracy: 0, format: 0 } },
    },
    {
      key: 'both',
      label: "the verifier's reward and the teacher's per-token signal",
      preset: 'grpo',
      overrides: { ...COMMON, distill_coef: 1 },
    },
  ],
  steps: 16,
  look: "Compare the three runs on the KL chart (distill/reverse_kl: how far each student's own samples are from the teacher, per token; distill/adv_share: how much of the advantage is the teacher's) and on the Reward chart (accuracy, the verifier's verdict, measured in every run).",
  narration: [
    'KL to the teacher per token: GRPO {rl:distill/reverse_kl}, distillation {opd:distill/reverse_kl}, both {both:distill/reverse_kl}.',
    "The teacher's share of the advantage: {opd:distill/adv_share} when distilling alone, {both:distill/adv_share} beside the reward.",
    'Accuracy of the sampled answers: GRPO {rl:accuracy}, distillation {opd:accuracy}, both {both:accuracy}.',
  ],
  highlight: { charts: ['kl', 'reward'], planes: ['advantage'] },
  check: {
    claim: `over the last ${TAIL} steps (the second half), both distilling runs' samples are closer to the teacher (a lower mean distill/reverse_kl) than the GRPO run's, on the same prompts`,
    evaluate(runs) {
      const tail = (key: string) => firstLast(series(runOf(runs, key), 'distill/reverse_kl'), TAIL).last;
      const acc = (key: string) => meanOf(series(runOf(runs, key), 'accuracy').slice(-TAIL));
      const values = {
        'rl: KL to the teacher (last steps)': tail('rl'),
        'opd: KL to the teacher (last steps)': tail('opd'),
        'both: KL to the teacher (last steps)': tail('both'),
        'rl: accuracy (last steps)': acc('rl'),
        'opd: accuracy (last steps)': acc('opd'),
        'both: accuracy (last steps)': acc('both'),
        'both: teacher share of the advantage': meanOf(series(runOf(runs, 'both'), 'distill/adv_share')),
      };
      const rl = values['rl: KL to the teacher (last steps)'];
      const observed =
        values['opd: KL to the teacher (last steps)'] < rl && values['both: KL to the teacher (last steps)'] < rl;
      return {
        observed,
        values,
        summary: `KL to the teacher per token over the last ${TAIL} steps: GRPO ${rl.toFixed(2)}, distillation ${values['opd: KL to the teacher (last steps)'].toFixed(2)}, both ${values['both: KL to the teacher (last steps)'].toFixed(2)}. Sampled accuracy: GRPO ${values['rl: accuracy (last steps)'].toFixed(2)}, distillation ${values['opd: accuracy (last steps)'].toFixed(2)}, both ${values['both: accuracy (last steps)'].toFixed(2)}.`,
      };
    },
    whyNot:
      "Sixteen steps at this learning rate move a student only part of the way: the gap between the runs is about a tenth of a nat per token, while one step's prompts move the KL by several tenths. On a seed where the GRPO run's rewards happen to separate well, its samples drift toward the teacher's as fast, since what the verifier rewards is what the teacher does. And the one-sample estimate is noisy: a sampled token the teacher finds absurd gets an advantage of -10 nats or more, and that token's push dominates a step.",
  },
  explain:
    "All three runs sampled the same prompts from the same start with the same teacher watching. GRPO's advantage is one number per completion, standardized within its group: it separates the better completions from the worse, and groups whose 8 answers all fail or all pass contribute nothing. Distillation's advantage is log pi_T - log pi_S at every token: a token the teacher would not have written is pushed down by as much as the teacher dislikes it, in every group, whether or not the answer was right; this is the reverse KL on the student's own samples, minimized by the policy gradient. So the student moves toward the teacher on every token, and its KL to the teacher ends lower at the same cost per step (one more forward pass, the teacher's). Here the gain is modest and shows in the KL before the accuracy: one sample per token is a noisy estimate of the reverse KL, dominated by the few sampled tokens the teacher finds absurd (their advantage is -10 nats where a good token's is a fraction of a nat), and sixteen steps at a learning rate of 1e-3 are a short budget. Beside the reward (run C) the teacher's term is most of the advantage (distill/adv_share), since its per-token gaps are nats where the group-standardized reward is about 1. What distillation cannot do is exceed its teacher: it imitates, and the reward is what checks.",
  next: 'Set distill_coef to 0.1 on the run with both signals: the reward takes back most of the advantage (distill/adv_share falls), and the KL to the teacher falls more slowly.',
};
