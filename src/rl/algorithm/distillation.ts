// On-policy distillation's advantage (docs/algorithms.md#on-policy-distillation): the student samples, a teacher
// scores the sampled tokens, and each completion token's advantage gets lambda * sg[log pi_T(y_t | c_t) -
// log pi_S(y_t | c_t)] added to the task reward's advantage, the reverse KL on the student's own samples as a dense
// per-token reward. Host arithmetic on the scoring pass's log-probs (the teacher's forward runs on the GPU, in the
// learner's score()), with the metrics it reports. Also which teacher scores which row under multi-teacher
// distillation (each row by its prompt's teacher_id), and the demonstration-conditioned prompts of self-distillation.
// Not the teacher's loading (src/engine/teacher.ts) or scoring (src/rl/learners/teacher.ts).

import type { Tokenizer } from '../../io/tokenizer';
import { RLConfigError } from '../../schema/config';
import type { Learner } from '../learners/learner';
import { sequenceBatch, type SequenceBatch } from './batch';

/** The distilled advantage of a batch and what it says about the teacher and the student. */
export interface DistilledAdvantages {
  /** (N*S) A^task + lambda * (log pi_T - log pi_S) on loss tokens, 0 elsewhere. */
  advantages: Float32Array;
  /** distill/reverse_kl: (1/M) sum m (log pi_S - log pi_T). */
  reverseKl: number;
  /** distill/adv_share: sum m |lambda d| / sum m (|lambda d| + |A^task|) (0 when both are 0 everywhere). */
  share: number;
}

/**
 * A_t = A^task_t + coef * (teacherLogp_t - studentLogp_t) on every loss token (mask 1), 0 elsewhere. The log-probs
 * carry no gradient (they are read back numbers): the term is a per-token reward, as in prime-rl's opd (its
 * ref_kl loss: -(log pi_ref - log pi).detach() * ratio) and Tinker's on-policy distillation (advantages +=
 * kl_penalty_coef * (teacher_logprobs - student_logprobs)).
 */
export function distillAdvantages(
  taskAdvantages: Float32Array,
  teacherLogp: Float32Array,
  studentLogp: Float32Array,
  mask: Float32Array,
  coef: number,
): DistilledAdvantages {
  const n = mask.length;
  for (const [name, a] of [
    ['taskAdvantages', taskAdvantages],
    ['teacherLogp', teacherLogp],
    ['studentLogp', studentLogp],
  ] as const)
    if (a.length !== n) throw new Error(`distillAdvantages: ${name} has ${a.length} values, the mask ${n}`);
  const advantages = new Float32Array(n);
  let tokens = 0;
  let kl = 0;
  let distilled = 0;
  let task = 0;
  for (let i = 0; i < n; i++) {
    if (!mask[i]) continue;
    const d = teacherLogp[i] - studentLogp[i];
    advantages[i] = taskAdvantages[i] + coef * d;
    tokens++;
    kl -= d;
    distilled += Math.abs(coef * d);
    task += Math.abs(taskAdvantages[i]);
  }
  return {
    advantages,
    reverseKl: tokens > 0 ? kl / tokens : 0,
    share: distilled + task > 0 ? distilled / (distilled + task) : 0,
  };
}

/**
 * The prompt self-distillation's teacher reads: the demonstration (the item's reference answer) and a space put
 * before the prompt, "<demonstration> <prompt>", so the same policy, conditioned on it, scores the student's
 * completion of the prompt (a space: every vocabulary has one, the lab's character vocabulary no newline). BOS (when
 * the prompt starts with one) stays first. The demonstration's tokens come from `encode`.
 */
export function demonstrationPrompt(
  prompt: readonly number[],
  demonstration: string,
  encode: (text: string) => number[],
  bosId: number | null,
): number[] {
  const demo = encode(`${demonstration} `);
  if (bosId !== null && prompt[0] === bosId) return [bosId, ...demo, ...prompt.slice(1)];
  return [...demo, ...prompt];
}

/** A teacher checkpoint's scoring pass (src/rl/learners/teacher.ts). */
export interface TeacherScorer {
  logprobs(batches: SequenceBatch[], temperature: number): Promise<Float32Array>;
}

/**
 * Each teacher's share of a step: for every micro-batch, in order, the rows whose teacher is that id (in the
 * micro-batch's order), micro-batches with none of its rows left out. Ids in the order of their first row. Rows whose
 * teacher is the same id keep the micro-batch split, so one teacher scoring every row scores the step's micro-batches.
 */
export function rowsByTeacher(
  micro: readonly (readonly number[])[],
  teacherOfRow: (row: number) => string,
): Map<string, number[][]> {
  const out = new Map<string, number[][]>();
  for (const rows of micro) {
    const here = new Map<string, number[]>();
    for (const r of rows) {
      const id = teacherOfRow(r);
      if (!here.has(id)) here.set(id, []);
      here.get(id)!.push(r);
    }
    for (const [id, part] of here) {
      if (!out.has(id)) out.set(id, []);
      out.get(id)!.push(part);
    }
  }
  return out;
}

/**
 * Per-teacher reverse KL (distill/reverse_kl/<teacher_id>): (1/M_k) sum over teacher k's rows' loss tokens of
 * (log pi_S - log pi_T), for every teacher that scored a loss token of the step.
 */
export function reverseKlByTeacher(
  teacherLogp: Float32Array,
  studentLogp: Float32Array,
  mask: Float32Array,
  S: number,
  teacherOfRow: (row: number) => string,
): Map<string, number> {
  const sums = new Map<string, { kl: number; tokens: number }>();
  for (let r = 0; r * S < mask.length; r++) {
    const id = teacherOfRow(r);
    for (let i = r * S; i < (r + 1) * S; i++) {
      if (!mask[i]) continue;
      const acc = sums.get(id) ?? { kl: 0, tokens: 0 };
      acc.kl += studentLogp[i] - teacherLogp[i];
      acc.tokens++;
      sums.set(id, acc);
    }
  }
  return new Map([...sums].map(([id, a]) => [id, a.kl / a.tokens]));
}

/** What the teacher's scoring pass of one rollout step reads. */
export interface TeacherPass {
  /** The step's micro-batches (rows in order 0..N-1 when flattened), as the learner scores them. */
  seqs: readonly SequenceBatch[];
  /** Their rows, in the same order. */
  rows: readonly (readonly number[])[];
  temperature: number;
  /** A teacher checkpoint's scorer, or null for self-distillation (or for teachers). */
  teacher: TeacherScorer | null;
  /**
   * Multi-teacher distillation: every teacher by id, each row's teacher id, and the micro-batch of a subset of the
   * step's rows (in the scoring layout). Each teacher scores only its rows, in one pass over its micro-batches.
   */
  teachers?: {
    byId: ReadonlyMap<string, TeacherScorer>;
    teacherOfRow: (row: number) => string;
    batch: (rows: readonly number[]) => SequenceBatch;
    S: number;
  };
  /** Self-distillation: the policy's scoring pass, the step's prompts and completions, and each row's demonstration. */
  self?: {
    learner: Pick<Learner, 'score'>;
    prompts: readonly (readonly number[])[];
    completions: Uint32Array;
    S: number;
    demonstration: (row: number) => string;
    tokenizer: Pick<Tokenizer, 'encode' | 'bosId' | 'prependsBos' | 'padId'>;
    contextLength: number;
  };
}

/**
 * log pi_T(y_t | c_t) of every completion token of the step, (N*S) in row order: the teacher checkpoint's forward on
 * the student's sequences, or (self-distillation) the policy's own forward on the same completions after prompts
 * that carry the row's demonstration.
 */
export async function teacherLogprobs(pass: TeacherPass): Promise<Float32Array> {
  if (pass.teachers) return routedTeacherLogprobs(pass.rows, pass.temperature, pass.teachers);
  if (pass.teacher) return pass.teacher.logprobs([...pass.seqs], pass.temperature);
  const self = pass.self;
  if (!self) throw new Error('teacherLogprobs: neither a teacher nor self-distillation');
  const tok = self.tokenizer;
  const prompts = self.prompts.map((p, r) =>
    demonstrationPrompt(p, self.demonstration(r), (t) => tok.encode(t), tok.prependsBos ? tok.bosId : null),
  );
  const P = prompts.reduce((m, p) => Math.max(m, p.length), 0);
  if (P + self.S > self.contextLength)
    throw new RLConfigError([
      `self_distill: a prompt with its demonstration takes ${P} tokens, and with ${self.S} completion tokens ${P + self.S} exceeds the model's context length ${self.contextLength}; lower max_completion_length or use a teacher checkpoint`,
    ]);
  const seqs = pass.rows.map((rows) => sequenceBatch(prompts, self.completions, self.S, rows, P, tok.padId));
  const scored = await self.learner.score(seqs, pass.temperature, true);
  return scored.oldLogp!;
}

/**
 * log pi_T of every completion token, (N*S) in row order, each row scored by its own teacher: every teacher runs one
 * scoring pass over micro-batches of its rows (rowsByTeacher), read back once, and its values land on its rows.
 */
async function routedTeacherLogprobs(
  micro: readonly (readonly number[])[],
  temperature: number,
  t: NonNullable<TeacherPass['teachers']>,
): Promise<Float32Array> {
  const N = micro.reduce((n, rows) => n + rows.length, 0);
  const out = new Float32Array(N * t.S);
  for (const [id, groups] of rowsByTeacher(micro, t.teacherOfRow)) {
    const teacher = t.byId.get(id);
    if (!teacher) throw new Error(`teachers: no teacher ${id} was loaded for this trainer`);
    const logp = await teacher.logprobs(
      groups.map((rows) => t.batch(rows)),
      temperature,
    );
    let at = 0;
    for (const r of groups.flat()) {
      out.set(logp.subarray(at, at + t.S), r * t.S);
      at += t.S;
    }
  }
  return out;
}
