// On-policy distillation's knobs (docs/algorithms.md#on-policy-distillation): the teacher whose per-token log-probs
// score the student's own samples (or several, by id, each scoring the prompts whose teacher_id names it), and the
// coefficient that adds that signal to the task reward's advantage, each
// declared once as a field of the RL config, with the rules between them and the rest of the config. Spread into
// the registry (src/schema/config/schema.ts). The advantage itself is src/rl/algorithm/distillation.ts; the teacher
// is loaded by src/engine/teacher.ts. A leaf beside objective.ts: it imports only the field kinds.

import { flag, names, real, optString, section, type FieldRule } from './fields';

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
  teachers: names(
    "multi-teacher on-policy distillation (MOPD): teacher id -> checkpoint (each named as teacher is); each prompt of your prompt list (task prompts) whose teacher_id names an id is scored by that teacher, a prompt with no teacher_id by teacher. Every teacher's tokenizer must equal the student's",
    'one teacher (teacher) scores every prompt',
    { key: 'teacher id', value: 'checkpoint' },
    {
      since: '2026-12-07',
      also: ['teacher_models', 'teacher_server_urls'],
      note: "TRL's AsyncDistillationTrainer: teacher_server_urls (id -> a teacher's vLLM server) with a teacher_id column per row (trl/experimental/async_distillation, 361edd36); its DistillationTrainer's teacher_models is a proposal (#7215). GRPOConfig, verl and OpenRLHF have no multi-teacher field; the exported TRL and OpenRLHF prompts carry each row's teacher_id",
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

/** Whether a config distills: a teacher checkpoint (one, or several by id) or self-distillation. */
export function distills(c: DistillationConfig): boolean {
  return c.teacher !== null || c.teachers !== null || c.self_distill;
}

type DistillationConfig = {
  teacher: string | null;
  teachers: Readonly<Record<string, string>> | null;
  self_distill: boolean;
};

/** The default teacher's id in metrics and messages: the `teacher` knob's checkpoint scores rows with no teacher_id. */
export const DEFAULT_TEACHER_ID = 'teacher';

/**
 * Every teacher checkpoint of a config by id: `teachers`' entries, and `teacher` under DEFAULT_TEACHER_ID (the
 * scorer of prompts with no teacher_id). Empty without a teacher checkpoint.
 */
export function teacherCheckpoints(c: DistillationConfig): Map<string, string> {
  const out = new Map<string, string>();
  if (c.teacher !== null) out.set(DEFAULT_TEACHER_ID, c.teacher);
  for (const [id, checkpoint] of Object.entries(c.teachers ?? {})) out.set(id, checkpoint);
  return out;
}

/**
 * The id of the teacher that scores a prompt whose teacher_id is `promptTeacherId` (null: it names none): that id
 * when `teachers` has it, DEFAULT_TEACHER_ID (the `teacher` knob) for a prompt with none, or null when no configured
 * teacher scores it (validation refuses such a config, naming the prompt's line).
 */
export function teacherIdFor(promptTeacherId: string | null, c: DistillationConfig): string | null {
  if (promptTeacherId === null) return c.teacher !== null ? DEFAULT_TEACHER_ID : null;
  return c.teachers !== null && Object.hasOwn(c.teachers, promptTeacherId) ? promptTeacherId : null;
}

export const DISTILLATION_RULES: readonly FieldRule<DistillationConfig>[] = [
  {
    scope: 'training',
    problem: (c) =>
      c.teachers !== null && c.self_distill
        ? 'self_distill: the teacher is the policy itself conditioned on the demonstration; unset teachers or self_distill'
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.teachers !== null && Object.hasOwn(c.teachers, DEFAULT_TEACHER_ID)
        ? `teachers: the id '${DEFAULT_TEACHER_ID}' names the default teacher (the teacher knob, for prompts with no teacher_id); give that teacher another id`
        : null,
  },
  {
    scope: 'training',
    problem: (c) =>
      c.teacher !== null && c.self_distill
        ? `self_distill: the teacher is the policy itself conditioned on the demonstration; unset teacher (${c.teacher}) or self_distill`
        : null,
  },
];
