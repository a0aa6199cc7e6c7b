// On-policy distillation on the CPU: the advantage twin against the peers' formulas on random inputs (awkward
// shapes, masked tokens, a task advantage beside it), its metrics, the self-distillation prompt, the knobs' rules,
// the teacher's tokenizer check with its named reasons, and the teacher's place in the memory plan.
//
// Tinker's cookbook, read at this commit (no mirror of its repository is at hand to run it, so the formula is written
// out here beside its source); prime-rl's opd loss is run from its own source in src/reference/estimator-peers.test.ts:
//   thinking-machines-lab/tinker-cookbook@53aaf8de3a681fd7930defcebda262918ff62edd,
//     tinker_cookbook/distillation/train_on_policy.py: reverse_kl = (sampled_logprobs - teacher_logprobs) * mask;
//     kl_advantages = -kl_penalty_coef * float_masks * reverse_kl; advantages += kl_advantages;
//     teacher_kl = sum(reverse_kl) / sum(mask).

import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/random';
import { buildCharTokenizerJson, loadCharTokenizer } from '../../io/tokenizer';
import { problemsOf, resolveConfig, validateConfig } from '../../schema/config';
import { MODEL_PRESETS } from '../../schema/model-config';
import { teacherTokenizerMismatch } from '../../engine/teacher';
import { rlMemoryPlan } from '../observation/memory';
import { demonstrationPrompt, distillAdvantages } from './distillation';

/** Random (N*S) planes with ragged masks: each row's completion ends at a random length, some rows empty. */
function batch(seed: number, N: number, S: number) {
  const rng = new Rng(seed);
  const mask = new Float32Array(N * S);
  for (let r = 0; r < N; r++) {
    const len = r % 5 === 3 ? 0 : 1 + rng.int(S);
    mask.fill(1, r * S, r * S + len);
  }
  const f = (lo: number, hi: number) => Float32Array.from({ length: N * S }, () => rng.uniform(lo, hi));
  return { mask, task: f(-2, 2), teacher: f(-9, 0), student: f(-9, 0) };
}

/** Tinker's cookbook, transcribed: the advantage after incorporate_kl_penalty, and teacher_kl. */
function tinkerOnPolicy(
  adv: Float32Array,
  teacherLp: Float32Array,
  sampledLp: Float32Array,
  mask: Float32Array,
  klPenaltyCoef: number,
) {
  const reverseKl = sampledLp.map((s, i) => (s - teacherLp[i]) * mask[i]);
  const out = adv.map((a, i) => a + -klPenaltyCoef * mask[i] * reverseKl[i]);
  const teacherKl = reverseKl.reduce((a, b) => a + b, 0) / mask.reduce((a, b) => a + b, 0);
  return { advantages: out, teacherKl };
}

describe('the distillation advantage equals the peers on random inputs', () => {
  for (const [N, S, coef] of [
    [1, 1, 1],
    [3, 7, 0.5],
    [13, 5, 2.25],
    [64, 33, 1],
  ] as const) {
    it(`Tinker's advantages + kl_penalty_coef * (teacher - sampled) at N ${N}, S ${S}, coef ${coef}`, () => {
      const b = batch(N * 31 + S, N, S);
      if (b.mask.every((m) => m === 0)) b.mask[0] = 1;
      // Tinker's advantages are 0 off the mask; the lab's task advantage is too.
      const task = b.task.map((a, i) => a * b.mask[i]);
      const lab = distillAdvantages(task, b.teacher, b.student, b.mask, coef);
      const peer = tinkerOnPolicy(task, b.teacher, b.student, b.mask, coef);
      for (let i = 0; i < lab.advantages.length; i++) expect(lab.advantages[i]).toBeCloseTo(peer.advantages[i], 5);
      expect(lab.reverseKl).toBeCloseTo(peer.teacherKl, 5);
    });
  }

  it('share is the distillation term over both, per masked token magnitudes; 0 off the mask and when all is 0', () => {
    const mask = Float32Array.from([1, 1, 0]);
    const d = distillAdvantages(
      Float32Array.from([1, -1, 5]),
      Float32Array.from([-1, -3, 0]),
      Float32Array.from([-2, -1, -7]),
      mask,
      0.5,
    );
    // d = [1, -2, (masked)]; lambda d = [0.5, -1]; task = [1, -1].
    expect(Array.from(d.advantages)).toEqual([1.5, -2, 0]);
    expect(d.share).toBeCloseTo(1.5 / 3.5, 6);
    expect(d.reverseKl).toBeCloseTo((-1 + 2) / 2, 6);
    const none = distillAdvantages(
      new Float32Array(2),
      new Float32Array(2),
      new Float32Array(2),
      new Float32Array(2),
      1,
    );
    expect(none).toEqual({ advantages: new Float32Array(2), reverseKl: 0, share: 0 });
  });

  it('refuses planes of another length, naming the plane', () => {
    expect(() =>
      distillAdvantages(new Float32Array(4), new Float32Array(3), new Float32Array(4), new Float32Array(4), 1),
    ).toThrow('distillAdvantages: teacherLogp has 3 values, the mask 4');
  });
});

describe("self-distillation's teacher prompt", () => {
  const tok = loadCharTokenizer(buildCharTokenizerJson());
  it('puts the demonstration and a space after BOS, before the prompt', () => {
    const prompt = [tok.bosId, ...tok.encode('copy:abc=')];
    const out = demonstrationPrompt(prompt, 'abc', (t) => tok.encode(t), tok.bosId);
    expect(out[0]).toBe(tok.bosId);
    expect(tok.decode(out.slice(1))).toBe('abc copy:abc=');
  });
  it('without BOS, the demonstration comes first', () => {
    const prompt = tok.encode('q');
    expect(tok.decode(demonstrationPrompt(prompt, '"x"', (t) => tok.encode(t), null))).toBe('"x" q');
  });
});

describe('the distillation knobs', () => {
  it('are off by default; teacher and self_distill together are refused; a teacher of weight 0 only watches', () => {
    const c = resolveConfig('grpo', {});
    expect([c.teacher, c.distill_coef, c.self_distill]).toEqual([null, 1, false]);
    expect(problemsOf(() => resolveConfig('grpo', { teacher: 'copy', self_distill: true }))).toEqual([
      'self_distill: the teacher is the policy itself conditioned on the demonstration; unset teacher (copy) or self_distill',
    ]);
    // distill_coef 0: the teacher only watches.
    expect(problemsOf(() => resolveConfig('grpo', { teacher: 'copy', distill_coef: 0 }))).toEqual([]);
  });

  it('let every reward weigh 0 (distillation alone) only with a teacher', () => {
    const zero = { task: 'copy', reward_weights: { accuracy: 0, format: 0 } };
    expect(problemsOf(() => validateConfig(resolveConfig('grpo', zero)))[0]).toMatch(
      /^reward_weights: every weight is 0/,
    );
    expect(problemsOf(() => validateConfig(resolveConfig('grpo', { ...zero, teacher: 'copy' })))).toEqual([]);
    expect(problemsOf(() => validateConfig(resolveConfig('grpo', { ...zero, self_distill: true })))).toEqual([]);
  });
});

describe("the teacher's tokenizer", () => {
  const model = MODEL_PRESETS.nano;
  const char = loadCharTokenizer(buildCharTokenizerJson());
  it('is accepted when it is the student’s, whatever the model size', () => {
    const student = { tokenizer: char, model };
    expect(teacherTokenizerMismatch(student, { tokenizer: char, model: MODEL_PRESETS.micro })).toBeNull();
  });
  it('is refused with the reason named: another vocabulary size, another token, another special id', () => {
    const student = { tokenizer: char, model };
    expect(teacherTokenizerMismatch(student, { tokenizer: char, model: { ...model, vocabSize: 128 } })).toBe(
      "its model has 128 vocabulary rows and the student's 99",
    );
    const json = buildCharTokenizerJson();
    const swapped = JSON.parse(JSON.stringify(json)) as typeof json;
    const vocab = (swapped.model as { vocab: Record<string, number> }).vocab;
    [vocab.a, vocab.b] = [vocab.b, vocab.a];
    const other = loadCharTokenizer(swapped);
    expect(teacherTokenizerMismatch(student, { tokenizer: other, model })).toMatch(
      /^token \d+ is "b" in its tokenizer and "a" in the student's$/,
    );
    const eos = { ...char, eosId: 3 };
    expect(teacherTokenizerMismatch(student, { tokenizer: eos, model })).toBe("its eos id is 3 and the student's 2");
  });
});

describe('the memory plan', () => {
  it("counts the teacher's weights (at the frozen storage width), its forward and its head", () => {
    const c = resolveConfig('grpo', { task: 'copy', teacher: 'copy' });
    const device = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30, budgetBytes: null };
    const part = (p: ReturnType<typeof rlMemoryPlan>, name: string) => p.parts.find((x) => x.part === name)!.bytes;
    const without = rlMemoryPlan(c, MODEL_PRESETS.nano, device);
    const withTeacher = rlMemoryPlan(c, MODEL_PRESETS.nano, device, 4, MODEL_PRESETS.tiny);
    const halfTeacher = rlMemoryPlan(c, MODEL_PRESETS.nano, device, 2, MODEL_PRESETS.tiny);
    for (const p of ['weights', 'activations', 'head']) expect(part(withTeacher, p)).toBeGreaterThan(part(without, p));
    expect(part(halfTeacher, 'weights')).toBeLessThan(part(withTeacher, 'weights'));
    expect(withTeacher.parts.find((x) => x.part === 'weights')!.detail).toMatch(/; the teacher \d/);
    expect(withTeacher.buffers.some((b) => b.name.startsWith("the teacher's "))).toBe(true);
  });
});
