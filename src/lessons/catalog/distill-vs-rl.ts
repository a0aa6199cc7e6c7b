// Lesson distill-vs-rl: the same student and budget spent three ways, GRPO on the verifier's reward, on-policy
// distillation from a stronger teacher trained in the lab (every reward weighed 0), and both. The student is the
// reverse warm start asked to copy: the same letters and prompt shape, a task it has never solved, so the verifier's
// reward is sparse (0 on almost every sample) while the teacher (public/models/copy-teacher/: the copy warm start
// trained further by SFT to 100% held out) grades every token. The teacher watches every run, so the per-token KL of
// each student's own samples to it is measured in all three, on the same prompts (one seed).

import type { Lesson } from '../lesson';
import { firstLast, meanOf, runOf, series } from '../narration';

const TEACHER = 'models/copy-teacher';
const COMMON = {
  task: 'copy',
  difficulty: 3,
  checkpoint: 'reverse',
  temperature: 1,
  learning_rate: 2e-3,
  eval_every: 0,
  teacher: TEACHER,
} as const;
/** The verifier's reward: exact copies only (no partial credit for the format), as sparse as the task allows. */
const VERIFIER = { accuracy: 1 } as const;
/** Steps at the start and at the end whose mean KL the check compares (one batch of prompts moves a step's KL). */
const HEAD = 4;
const TAIL = 8;
/** Nats per token by which each run with the teacher's signal must end closer to the teacher than GRPO. */
const MARGIN = 0.3;

export const distillVsRl: Lesson = {
  id: 'distill-vs-rl',
  title: "Distillation or RL: what does a teacher's per-token signal buy?",
  source:
    'Thinking Machines, "On-policy distillation" (2025: the student samples, a teacher grades every token by its reverse KL, a dense reward at RL\'s cost per sample, O(N) bits per episode where RL gets O(1)); Agarwal et al., "On-policy distillation of language models" (GKD, 2024); prime-rl\'s opd and Tinker\'s cookbook (their code: docs/algorithms.md#on-policy-distillation).',
  question: {
    prompt:
      "The student is the reverse warm start asked to copy: it knows the letters and the prompt's shape but has never copied a string right. The teacher is the copy warm start trained further in the lab until it copies every held-out string. 16 steps of 64 samples each: run A trains GRPO on the verifier's reward (exact copies score 1, the teacher only watches), run B distills alone (each sampled token rewarded by log pi_teacher - log pi_student, the verifier ignored), run C does both. After the same budget, whose own samples does the teacher find closest to its own?",
    choices: [
      'A: the verifier rewards exactly what the teacher does, so RL moves toward the teacher as fast',
      "B and C: the verifier scores almost every sample 0, so GRPO's groups tie and its advantage is 0; the teacher grades every token of every sample, right or wrong, so the distilling students move toward it from the first step",
      'All three end level: the same samples, the same steps, the same learning rate',
    ],
    answer: 1,
    why: "GRPO's signal is one number per completion, compared within its group: a group whose 8 completions all fail says nothing, and a student that has never solved the task fails them all. The teacher's log-prob gap is a reward on every token, in every group, pointing where the teacher would have gone: stop after three letters, write the prompt's letters in order. Same samples, same steps, far more bits of supervision.",
  },
  runs: [
    {
      key: 'rl',
      label: "GRPO on the verifier's reward (the teacher only watches)",
      preset: 'grpo',
      overrides: { ...COMMON, distill_coef: 0, reward_weights: VERIFIER },
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
      overrides: { ...COMMON, distill_coef: 1, reward_weights: VERIFIER },
    },
  ],
  steps: 16,
  look: "Compare the three runs on the KL chart (distill/reverse_kl: how far each student's own samples are from the teacher, per token), on the Reward chart (accuracy, the verifier's verdict, measured in every run) and on the fractions chart (distill/adv_share: how much of the advantage is the teacher's, beside the zero-signal fraction).",
  narration: [
    'KL to the teacher per token: GRPO {rl:distill/reverse_kl}, distillation {opd:distill/reverse_kl}, both {both:distill/reverse_kl}.',
    "GRPO's groups with no signal (every reward equal): {rl:frac_reward_zero_std}. The teacher's share of the advantage beside the reward: {both:distill/adv_share}.",
    'Accuracy of the sampled answers: GRPO {rl:accuracy}, distillation {opd:accuracy}, both {both:accuracy}.',
  ],
  highlight: { charts: ['kl', 'reward', 'fractions'], planes: ['advantage'] },
  check: {
    claim: `over the last ${TAIL} steps, both runs with the teacher's per-token signal sample closer to the teacher than the GRPO run does, by more than ${MARGIN} nat per token of mean distill/reverse_kl, on the same prompts from the same start`,
    evaluate(runs) {
      const kl = (key: string) => firstLast(series(runOf(runs, key), 'distill/reverse_kl'), HEAD);
      const tailKl = (key: string) => meanOf(series(runOf(runs, key), 'distill/reverse_kl').slice(-TAIL));
      const acc = (key: string) => meanOf(series(runOf(runs, key), 'accuracy'));
      const values = {
        'rl: KL to the teacher (first steps)': kl('rl').first,
        'rl: KL to the teacher (last steps)': tailKl('rl'),
        'opd: KL to the teacher (last steps)': tailKl('opd'),
        'both: KL to the teacher (last steps)': tailKl('both'),
        'rl: accuracy (mean)': acc('rl'),
        'opd: accuracy (mean)': acc('opd'),
        'both: accuracy (mean)': acc('both'),
        'rl: zero-signal groups (mean)': meanOf(series(runOf(runs, 'rl'), 'frac_reward_zero_std')),
        'both: teacher share of the advantage': meanOf(series(runOf(runs, 'both'), 'distill/adv_share')),
      };
      const rl = values['rl: KL to the teacher (last steps)'];
      const opd = values['opd: KL to the teacher (last steps)'];
      const both = values['both: KL to the teacher (last steps)'];
      const observed = opd < rl - MARGIN && both < rl - MARGIN;
      return {
        observed,
        values,
        summary: `KL to the teacher per token over the last ${TAIL} steps: GRPO ${rl.toFixed(2)} (from ${values['rl: KL to the teacher (first steps)'].toFixed(2)} over its first ${HEAD}), distillation ${opd.toFixed(2)}, both ${both.toFixed(2)}. GRPO's groups with no signal: ${values['rl: zero-signal groups (mean)'].toFixed(2)}. Sampled accuracy: GRPO ${values['rl: accuracy (mean)'].toFixed(3)}, distillation ${values['opd: accuracy (mean)'].toFixed(3)}, both ${values['both: accuracy (mean)'].toFixed(3)}.`,
      };
    },
    whyNot:
      "One step's prompts move the KL by several tenths of a nat, so the last steps' mean carries some of that noise; on a seed where the distilling run draws a hard batch late, its mean can come within the margin. And the one-sample estimate is noisy: a sampled token the teacher finds absurd gets an advantage of -10 nats or more, and that token's push dominates a step.",
  },
  explain:
    "All three runs sampled the same prompts from the same start with the same teacher watching. The student had never copied a string right, so the verifier scored (almost) every sample 0: each of GRPO's groups tied, its group-standardized advantage was 0 on every token, and its KL to the teacher wandered where it started. This is the sparse-reward case, and it is where RL from a weak student spends its compute on samples that teach nothing. Distillation's advantage is log pi_T - log pi_S at every token: a token the teacher would not have written is pushed down by as much as the teacher dislikes it, a token it would have written is pushed up, in every group, whether or not the answer was right; this is the reverse KL on the student's own samples, minimized by the policy gradient. So both distilling students moved toward the teacher from the first step, at the same cost per step (one more forward pass, the teacher's). Runs B and C are the same run until some sample first copies its prompt right: a reward of 0 on every sample adds 0 to every advantage, so beside a verifier that never says yes the teacher is the whole signal. Once exact copies appear, the reward takes a share of run C's advantage back (distill/adv_share below 1). What distillation cannot do is exceed its teacher: it imitates, and the reward is what checks.",
  next: 'Give every run the copy warm start as the student (checkpoint copy), which already copies about half the held-out strings: the verifier now separates the samples of most groups, GRPO has a signal of its own, and the three runs end nearly level (within 0.03 nat per token of each other in a trial at temperature 0.7 and a learning rate of 1e-3, seed 0).',
};
