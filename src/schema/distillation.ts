// On-policy distillation's knobs (docs/algorithms.md#on-policy-distillation): the teacher whose per-token log-probs
// score the student's own samples, and the coefficient that adds that signal to the task reward's advantage, each
// declared once as a field of the RL config, with the rules between them and the rest of the config. Spread into
// the registry (src/schema/config/schema.ts). The advantage itself is src/rl/algorithm/distillation.ts; the teacher
// is loaded by src/engine/teacher.ts. A leaf beside objective.ts: it imports only the field kinds.

import { flag, real, optString, section, type FieldRule } from './fields';

/** The day these knobs joined saved trainer states: a state saved before resumes without a teacher. */
const SINCE = '2026-12-06';

export const DISTILLATION_FIELDS = section('advantage', {
  teacher: optString(
    "on-policy distillation (OPD): the teacher checkpoint that scores the student's own samples, a shipped name (checkpoints/<name>/), a folder or URL (a lab run's saved checkpoint, a Hugging Face folder) or a hub id org/name[@revision]; its tokenizer must equal the student's. Each completion token gets distill_coef * (log pi_T(y_t | c_t) - log pi_S(y_t | c_t)) added to its advantage",
    'no teacher (no distillation)',
    {
      since: SINCE,
      trl: 'teacher_model_name_or_path',
      also: ['teacher_model', 'teacher_model_name_or_path'],
      note: 'TRL\'s DistillationTrainer (not GRPOTrainer) takes teacher_model_name_or_path and distills by a divergence loss, beta 1 being the reverse KL; prime-rl: [orchestrator.algo] type = "opd" with [orchestrator.algo.teacher] name; NeMo-RL: adv_estimator opd with a teacher policy',
    },
  ),
  distill_coef: real(
    "lambda of A_t = A_task,t + lambda * sg[log pi_T(y_t | c_t) - log pi_S(y_t | c_t)]: the weight of the reverse KL to the teacher (or, with self_distill, to the demonstration-conditioned policy) beside the task reward's advantage; set every reward_weights entry to 0 to distill alone, or distill_coef to 0 to let the teacher only watch (distill/reverse_kl measured, the advantage the task's)",
    1,
    0,
    100,
    {
      since: SINCE,
      also: ['kl_penalty_coef', 'opd_kl_coef'],
      note: "prime-rl's opd ships the reverse KL alone (weight 1, no task advantage); Tinker's cookbook and slime add kl_penalty_coef / opd-kl-coef times it to the advantage, as the lab does",
    },
  ),
  self_distill: flag(
    "on-policy self-distillation (OPSD): the teacher is the policy itself with the task's demonstration (the reference answer) in its context, scored on the student's own samples; no second model. Needs no teacher",
    false,
    {
      since: SINCE,
      also: ['opsd', 'sdft'],
      note: 'prime-rl: [orchestrator.algo] type = "opsd" (demo_key); TRL: the SDFT trainer',
    },
  ),
});

/** Whether a config distills: a teacher checkpoint or self-distillation. */
export function distills(c: { teacher: string | null; self_distill: boolean }): boolean {
  return c.teacher !== null || c.self_distill;
}

type DistillationConfig = {
  teacher: string | null;
  self_distill: boolean;
  distill_coef: number;
};

export const DISTILLATION_RULES: readonly FieldRule<DistillationConfig>[] = [
  {
    scope: 'training',
    problem: (c) =>
      c.teacher !== null && c.self_distill
        ? `self_distill: the teacher is the policy itself conditioned on the demonstration; unset teacher (${c.teacher}) or self_distill`
        : null,
  },
];
