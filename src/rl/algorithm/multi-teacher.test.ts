// Multi-teacher on-policy distillation on the CPU (docs/algorithms.md#several-teachers-by-prompt-source): which
// teacher scores which row (exact, with every teacher scoring its rows in one pass over its micro-batches), the
// per-teacher reverse KL, the teachers knob at every boundary (its rules, the prompt list's teacher_id against it,
// hostile ids and checkpoints, the CLI flag and the link), its memory, its exports, and the real trainer on the CPU
// twins: a teacher that is the student's own weights has a reverse KL of exactly 0 on its rows and another teacher
// not, in the same step.
//
// TRL, read at these commits: huggingface/trl trl/experimental/async_distillation/async_distillation_config.py
// (4522ca0104609863addac077092b19afa8e23bb0): teacher_server_urls, dict[str, str], "each training row's
// `teacher_id` column selects which entry scores it"; async_rollout_worker.py
// (361edd3645012c41f5636fa2a785b5c8e3052f33): _resolve_teacher_server_url, one teacher scores every row whatever its
// teacher_id, several need every row's teacher_id among them (ValueError otherwise), metrics teacher_jsd/<teacher_id>.

import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/random';
import { PUBLIC_ASSETS, loadCheckpointDir } from '../../cli/files';
import { loadTeachers } from '../../engine/teacher';
import { configFromUrlParams, configToUrlParams, problemsOf, resolveConfig, checkConfig } from '../../schema/config';
import { DEFAULT_TEACHER_ID, teacherIdFor } from '../../schema/distillation';
import { MODEL_PRESETS } from '../../schema/model-config';
import { parseRlArgs } from '../../cli/train-rl';
import { exportExperiment, mappingRows } from '../../export';
import { runToEnd } from '../../testing/run-to-end';
import { rlMemoryPlan } from '../observation/memory';
import type { SequenceBatch } from './batch';
import { reverseKlByTeacher, rowsByTeacher, teacherLogprobs, type TeacherScorer } from './distillation';

/** A prompt list whose rows name teachers: q0..q5, two by `self`, two by `rev`, two by none. */
const LIST = [
  '{"prompt": "ab", "answer": "ab", "teacher_id": "self"}',
  '{"prompt": "cd", "answer": "cd", "teacher_id": "rev"}',
  '{"prompt": "ef", "answer": "ef"}',
  '{"prompt": "gh", "answer": "gh", "teacher_id": "rev"}',
  '{"prompt": "ij", "answer": "ij", "teacher_id": "self"}',
  '{"prompt": "kl", "answer": "kl"}',
].join('\n');

const base = { task: 'prompts', prompts: LIST };

/** A teacher_id a shell, Python or YAML would read as more than text. */
const HOSTILE_ID = '$(touch_x)\'"`';

describe('which teacher scores which row', () => {
  it('each micro-batch split by teacher, in order; one teacher keeps the micro-batches as they are', () => {
    const micro = [
      [0, 1, 2],
      [3, 4],
      [5, 6, 7],
    ];
    const of = (r: number) => ['a', 'b', 'a', 'a', 'a', 'c', 'b', 'a'][r];
    expect([...rowsByTeacher(micro, of)]).toEqual([
      ['a', [[0, 2], [3, 4], [7]]],
      ['b', [[1], [6]]],
      ['c', [[5]]],
    ]);
    expect([...rowsByTeacher(micro, () => 'teacher')]).toEqual([['teacher', micro]]);
  });

  it("every row gets its own teacher's log-probs, each teacher one pass over its rows", async () => {
    const S = 3;
    const micro = [
      [0, 1, 2, 3],
      [4, 5, 6],
    ];
    const teacherOf = (r: number) => (['a', 'b', 'a', 'c', 'b', 'b', 'a'] as const)[r];
    const calls: { id: string; rows: number[][] }[] = [];
    /** A scorer whose log-prob of row r's token t is -(100 * k + r * S + t), k its index: each value names who made it. */
    const scorer = (id: string, k: number): TeacherScorer => ({
      async logprobs(batches: SequenceBatch[]) {
        const rows = batches.map((b) => (b as unknown as { rows: number[] }).rows);
        calls.push({ id, rows });
        return Float32Array.from(rows.flat().flatMap((r) => [0, 1, 2].map((t) => -(100 * k + r * S + t))));
      },
    });
    const byId = new Map([
      ['a', scorer('a', 1)],
      ['b', scorer('b', 2)],
      ['c', scorer('c', 3)],
    ]);
    const out = await teacherLogprobs({
      seqs: [],
      rows: micro,
      temperature: 1,
      teacher: null,
      teachers: { byId, teacherOfRow: teacherOf, batch: (rows) => ({ rows }) as unknown as SequenceBatch, S },
    });
    const k = { a: 1, b: 2, c: 3 };
    expect(Array.from(out)).toEqual(
      Array.from({ length: 7 * S }, (_, i) => -(100 * k[teacherOf(Math.floor(i / S))] + i)),
    );
    expect(calls).toEqual([
      { id: 'a', rows: [[0, 2], [6]] },
      { id: 'b', rows: [[1], [4, 5]] },
      { id: 'c', rows: [[3]] },
    ]);
  });

  it("the per-teacher reverse KL is the mean of log pi_S - log pi_T over each teacher's loss tokens", () => {
    const rng = new Rng(4);
    const N = 9;
    const S = 5;
    const mask = new Float32Array(N * S);
    for (let r = 0; r < N; r++) mask.fill(1, r * S, r * S + (r === 4 ? 0 : 1 + rng.int(S)));
    const teacher = Float32Array.from({ length: N * S }, () => rng.uniform(-9, 0));
    const student = Float32Array.from({ length: N * S }, () => rng.uniform(-9, 0));
    const of = (r: number) => (r % 3 === 0 ? 'x' : r === 4 ? 'empty' : 'y');
    const got = reverseKlByTeacher(teacher, student, mask, S, of);
    for (const id of ['x', 'y']) {
      let kl = 0;
      let m = 0;
      for (let i = 0; i < N * S; i++)
        if (mask[i] && of(Math.floor(i / S)) === id) {
          kl += student[i] - teacher[i];
          m++;
        }
      expect(got.get(id)).toBeCloseTo(kl / m, 12);
    }
    // A teacher whose rows have no loss token reports nothing.
    expect(got.has('empty')).toBe(false);
  });

  it('a prompt goes to its teacher_id, one with none to the default teacher, an unknown one to nobody', () => {
    const c = { teacher: 'copy', teachers: { rev: 'reverse' }, self_distill: false };
    expect(teacherIdFor('rev', c)).toBe('rev');
    expect(teacherIdFor(null, c)).toBe(DEFAULT_TEACHER_ID);
    expect(teacherIdFor('math', c)).toBeNull();
    expect(teacherIdFor('toString', c)).toBeNull();
    expect(teacherIdFor(null, { ...c, teacher: null })).toBeNull();
  });
});

describe('the teachers knob', () => {
  it('is off by default and takes id -> checkpoint for a prompt list whose every row has a teacher', () => {
    expect(resolveConfig('grpo', {}).teachers).toBeNull();
    const c = resolveConfig('grpo', { ...base, teacher: 'copy', teachers: { self: 'copy', rev: 'reverse' } });
    expect(c.teachers).toEqual({ self: 'copy', rev: 'reverse' });
  });

  it('refuses an id a row uses but teachers lacks, naming the id and the line; a row with none needs teacher', () => {
    expect(problemsOf(() => resolveConfig('grpo', { ...base, teacher: 'copy', teachers: { self: 'copy' } }))).toEqual([
      'teachers: line 2 of the prompt list names teacher_id "rev", which is not one of teachers (self)',
    ]);
    expect(problemsOf(() => resolveConfig('grpo', { ...base, teachers: { self: 'copy', rev: 'reverse' } }))).toEqual([
      'teacher: line 3 of the prompt list has no teacher_id, and no default teacher scores such a prompt; give it one of self, rev or set teacher',
    ]);
    // One teacher alone: a row's teacher_id names a teacher nobody configured.
    expect(problemsOf(() => resolveConfig('grpo', { ...base, teacher: 'copy' }))).toEqual([
      'teachers: line 1 of the prompt list names teacher_id "self", which no teacher has: teachers is not set',
    ]);
    // A hostile teacher_id in a row is shown quoted, never run or spliced.
    const hostile = JSON.stringify({ prompt: 'ab', answer: 'ab', teacher_id: HOSTILE_ID });
    expect(problemsOf(() => resolveConfig('grpo', { task: 'prompts', prompts: hostile, teacher: 'copy' }))).toEqual([
      `teachers: line 1 of the prompt list names teacher_id ${JSON.stringify(HOSTILE_ID)}, which no teacher has: teachers is not set`,
    ]);
  });

  it('conflicts with self_distill, reserves the default id, and needs a prompt list', () => {
    const both = { ...base, teacher: 'copy', teachers: { self: 'copy', rev: 'reverse' } };
    expect(problemsOf(() => resolveConfig('grpo', { ...both, self_distill: true }))).toContain(
      'self_distill: the teacher is the policy itself conditioned on the demonstration; unset teachers or self_distill',
    );
    expect(
      problemsOf(() => resolveConfig('grpo', { ...both, teachers: { teacher: 'copy', self: 'copy', rev: 'x' } })),
    ).toContain(
      "teachers: the id 'teacher' names the default teacher (the teacher knob, for prompts with no teacher_id); give that teacher another id",
    );
    expect(problemsOf(() => resolveConfig('grpo', { task: 'copy', teachers: { a: 'copy' } }))).toEqual([
      "teachers: task 'copy' has one prompt source, so one teacher scores it (set teacher instead); teachers routes the prompts of your prompt list (task prompts) by their teacher_id",
    ]);
  });

  it('refuses hostile ids and checkpoints with the field named', () => {
    const bad = (teachers: unknown) => problemsOf(() => resolveConfig('grpo', { ...base, teacher: 'copy', teachers }));
    expect(bad({})).toEqual([
      'teachers: needs at least one teacher id (or null: one teacher (teacher) scores every prompt)',
    ]);
    expect(bad({ 'a b': 'copy' })[0]).toBe(
      'teachers: the teacher id "a b" must start with a letter or digit and use letters, digits, _ . - (at most 64)',
    );
    for (const id of ['$(x)', '"', "'", '__proto__', '-rf', 'a/b', 'x'.repeat(65), ''])
      expect(bad({ [id]: 'copy' })).toHaveLength(1);
    expect(bad({ self: 'copy\n--steps 9' })[0]).toBe(
      'teachers: the checkpoint of self must be one line without control characters; got "copy\\n--steps 9" with U+000A at 4',
    );
    expect(bad({ self: '' })[0]).toBe('teachers: the checkpoint of self must be non-empty text, got ""');
    expect(bad({ self: 3 })[0]).toBe('teachers: the checkpoint of self must be non-empty text, got 3');
    expect(bad(['copy'])[0]).toMatch(/^teachers: must be an object of teacher id -> checkpoint/);
  });

  it('warns of a teacher no row names, and of teacher_id read by nobody', () => {
    const c = resolveConfig('grpo', {
      ...base,
      teacher: 'copy',
      teachers: { self: 'copy', rev: 'reverse', spare: 'sort' },
    });
    expect(checkConfig(c as unknown as Record<string, unknown>).warnings).toContain(
      'teachers: spare scores no prompt (no line of the prompt list has teacher_id spare)',
    );
    const none = resolveConfig('grpo', base);
    expect(checkConfig(none as unknown as Record<string, unknown>).warnings).toContain(
      'prompts: the teacher_id of line 1 and 3 more is ignored without teachers (only a teacher checkpoint per id reads it)',
    );
  });

  it('is a CLI flag (id=checkpoint pairs or JSON) and travels in links', () => {
    expect(parseRlArgs(['--teachers', 'self=copy,rev=checkpoints/reverse']).fields).toEqual({
      teachers: { self: 'copy', rev: 'checkpoints/reverse' },
    });
    expect(parseRlArgs(['--teachers={"a":"https://x.test/m,1"}']).fields).toEqual({
      teachers: { a: 'https://x.test/m,1' },
    });
    expect(() => parseRlArgs(['--teachers', 'self'])).toThrow(/teachers: expected teacher id=checkpoint pairs/);
    const c = resolveConfig('grpo', {
      ...base,
      teacher: 'copy',
      teachers: { self: 'a,b:c', rev: 'https://h.test/x?y=1' },
    });
    const params = configToUrlParams(c, 'grpo');
    expect(configFromUrlParams(params).teachers).toEqual(c.teachers);
  });
});

describe("the teachers' memory and exports", () => {
  it('the memory plan counts every teacher', () => {
    const c = resolveConfig('grpo', { task: 'copy', teacher: 'copy' });
    const device = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30, budgetBytes: null };
    const weights = (p: ReturnType<typeof rlMemoryPlan>) => p.parts.find((x) => x.part === 'weights')!;
    const one = rlMemoryPlan(c, MODEL_PRESETS.nano, device, 4, [MODEL_PRESETS.tiny]);
    const two = rlMemoryPlan(c, MODEL_PRESETS.nano, device, 4, [MODEL_PRESETS.tiny, MODEL_PRESETS.micro]);
    const onlyMicro = rlMemoryPlan(c, MODEL_PRESETS.nano, device, 4, [MODEL_PRESETS.micro]);
    const none = rlMemoryPlan(c, MODEL_PRESETS.nano, device);
    for (const part of ['weights', 'activations', 'head'] as const) {
      const b = (p: typeof one) => p.parts.find((x) => x.part === part)!.bytes;
      expect(b(two) - b(none)).toBe(b(one) - b(none) + (b(onlyMicro) - b(none)));
    }
    expect(weights(two).detail).toMatch(/; the 2 teachers \d/);
  });

  it('each trainer export says in a comment that it has no multi-teacher field, the value quoted', () => {
    const hostile = 'x"\'$(rm -rf /)`#\\';
    const c = resolveConfig('grpo', { ...base, teacher: 'copy', teachers: { self: 'copy', rev: hostile } });
    for (const target of ['trl', 'verl', 'openrlhf'] as const) {
      const row = mappingRows(target, c).find((r) => r.field === 'teachers')!;
      expect(row.settings).toEqual([]);
      expect(row.lab).toBe(`self=copy, rev=${hostile}`);
      expect(row.comment).toMatch(
        /no equivalent in (GRPOConfig|verl|OpenRLHF) \(TRL's AsyncDistillationTrainer: teacher_server_urls/,
      );
      const script = exportExperiment(target, c, { preset: 'grpo', model: 'm', maxRows: 1 }).files[0].text;
      const line = script.split('\n').find((l) => /# teachers = /.test(l))!;
      // The value is one quoted string in a comment: its quotes and backslashes escaped, nothing after it runs.
      expect(line).toContain(`# teachers = ${JSON.stringify(`self=copy, rev=${hostile}`)}:`);
      expect(
        script
          .split('\n')
          .filter((l) => l.includes('rm -rf'))
          .every((l) => /^\s*(#|\/\/|\|)/.test(l) || l.includes('"prompts"') || l.includes('"rev"')),
      ).toBe(true);
    }
  });
});

describe("the exported prompts carry TRL's teacher_id column", () => {
  it('each TRL / OpenRLHF row names its teacher (the default teacher as teacher); none without teachers', () => {
    const c = resolveConfig('grpo', { ...base, teacher: 'copy', teachers: { self: 'copy', rev: 'reverse' }, steps: 4 });
    const expected: Record<string, string> = {
      ab: 'self',
      cd: 'rev',
      ef: 'teacher',
      gh: 'rev',
      ij: 'self',
      kl: 'teacher',
    };
    for (const target of ['trl', 'openrlhf'] as const) {
      const file = exportExperiment(target, c, { preset: 'grpo', model: 'm', maxRows: 16 }).files.find(
        (f) => f.path === 'data/train.jsonl',
      )!;
      const rows = file.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { prompt: string; teacher_id: string });
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.teacher_id).toBe(expected[r.prompt]);
    }
    const plain = exportExperiment('trl', resolveConfig('grpo', base), { preset: 'grpo', model: 'm', maxRows: 4 });
    expect(plain.files.find((f) => f.path === 'data/train.jsonl')!.text).not.toContain('teacher_id');
  });
});

describe('loading the teachers', () => {
  it("reads every teacher once, and refuses one whose tokenizer is not the student's, naming its id", async () => {
    const copy = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const student = { tokenizer: copy.tok, model: copy.ck.config };
    const c = resolveConfig('grpo', { ...base, teacher: 'copy', teachers: { self: 'copy', rev: 'reverse' } });
    const loaded = await loadTeachers(c, PUBLIC_ASSETS, student);
    expect(Object.keys(loaded)).toEqual(['self', 'rev']);
    expect(loaded.rev.source).toBe('teacher rev checkpoints/reverse/');
    // A folder named twice is read once; so is the default teacher's, when given.
    const twice = resolveConfig('grpo', {
      ...base,
      teacher: 'copy',
      teachers: { self: 'copy', rev: 'reverse', again: 'checkpoints/copy' },
    });
    const shared = await loadTeachers(twice, PUBLIC_ASSETS, student, loaded.self);
    expect(shared.self).toBe(loaded.self);
    expect(shared.again).toBe(loaded.self);
    expect(shared.rev).not.toBe(loaded.rev);
    const other = resolveConfig('grpo', {
      ...base,
      teacher: 'copy',
      teachers: { self: 'copy', rev: 'models/tiny-llama' },
    });
    await expect(loadTeachers(other, PUBLIC_ASSETS, student)).rejects.toThrow(
      /^teachers rev "models\/tiny-llama" \(models\/tiny-llama\/\): its tokenizer is not the student's \(.+\); a teacher scores the student's token ids, so it needs the same tokenizer$/,
    );
  });
});

describe('the trainer with two teachers on the CPU twins', () => {
  it("a teacher that is the student's own weights: reverse KL exactly 0 on its rows; the other teacher's not", async () => {
    const copy = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const reverse = await loadCheckpointDir(new URL('../../../public/checkpoints/reverse', import.meta.url).pathname);
    const init = { config: copy.ck.config, params: copy.ck.params };
    const config = resolveConfig('grpo', {
      ...base,
      teacher: 'copy',
      teachers: { self: 'copy', rev: 'reverse' },
      train_batch_size: 8,
      num_generations: 2,
      steps: 1,
      eval_every: 0,
      seed: 3,
    });
    const records = await runToEnd({
      config,
      init,
      tokenizer: copy.tok,
      backend: { kind: 'cpu' },
      teacher: { ...init, source: 'teacher = student' },
      teachers: {
        self: { ...init, source: 'teacher self = student' },
        rev: { config: reverse.ck.config, params: reverse.ck.params, source: 'teacher rev checkpoints/reverse' },
      },
      inspectGroups: 0,
    });
    const m = records[0].metrics as Record<string, number>;
    const perTeacher = Object.keys(m).filter((k) => k.startsWith('distill/reverse_kl/'));
    expect(perTeacher.length).toBeGreaterThan(1);
    // The default teacher and `self` are the student's weights: exactly 0 on their rows; `rev` is another model.
    if ('distill/reverse_kl/self' in m) expect(m['distill/reverse_kl/self']).toBe(0);
    if ('distill/reverse_kl/teacher' in m) expect(m['distill/reverse_kl/teacher']).toBe(0);
    expect(m['distill/reverse_kl/rev']).toBeGreaterThan(0);
    expect(m['distill/reverse_kl']).toBeGreaterThan(0);
    expect(m['distill/reverse_kl']).toBeLessThan(m['distill/reverse_kl/rev']);
  });
});
