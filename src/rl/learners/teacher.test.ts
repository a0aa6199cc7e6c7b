// The distillation teacher's scoring pass on the GPU against its CPU twin: a teacher of another size than the
// student (micro's depth and width, the student's vocabulary) scores the same sequences, split into micro-batches
// of awkward shapes, stored f32 and bf16, and its log pi_T of every completion token equals the CPU learner's over
// the same (rounded) weights. Then the trainer with a teacher on WebGPU: a teacher that is the student's own
// weights has reverse KL exactly 0, a stronger one (the shipped copy warm start scoring a fresh student) a positive
// one, and distillation alone (every reward weighed 0) puts the whole advantage on the teacher. Two teachers by
// prompt source: each row gets its own teacher's log-probs on the GPU, and in the trainer a teacher that is the
// student's own weights has reverse KL exactly 0 on its rows while the other's is positive. A missing adapter fails
// the suite; it never skips.

import { describe, expect, it } from 'vitest';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import type { ParamArrays } from '../../io/checkpoint';
import { loadCheckpointDir } from '../../cli/files';
import { compareArrays } from '../../reference/compare';
import { resolveConfig } from '../../schema/config';
import { MODEL_PRESETS, type ModelConfig } from '../../schema/model-config';
import { useNodeDevice } from '../../testing/test-device';
import { runToEnd } from '../../testing/run-to-end';
import { sequenceBatch } from '../algorithm/batch';
import { teacherLogprobs } from '../algorithm/distillation';
import { Teacher } from './teacher';

const gpu = useNodeDevice();

const TEACHER: ModelConfig = { ...MODEL_PRESETS.micro, vocabSize: 301 };
const S = 6;
const PROMPTS = [
  [1, 7, 9],
  [1, 4],
  [1, 30, 31, 32, 33],
  [1, 5],
  [1, 200, 201],
];

function params(config: ModelConfig, seed: number): ParamArrays {
  const p = initParams(config, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

describe("the teacher's scoring pass: GPU = CPU twin", () => {
  for (const weightDtype of ['f32', 'bf16'] as const)
    it(`log pi_T of every completion token, micro-batches of 3 and 2 rows, ${weightDtype} storage`, async () => {
      const rng = new Rng(3);
      const completions = Uint32Array.from({ length: PROMPTS.length * S }, () => 3 + rng.int(TEACHER.vocabSize - 3));
      const P = 5;
      const seqs = [
        sequenceBatch(PROMPTS, completions, S, [0, 1, 2], P, 0),
        sequenceBatch(PROMPTS, completions, S, [3, 4], P, 0),
      ];
      const weights = { config: TEACHER, params: params(TEACHER, 11), source: 'teacher test' };
      const onGpu = new Teacher(weights, { kind: 'webgpu', ctx: gpu.ctx }, { maxRows: 3, weightDtype });
      const onCpu = new Teacher(weights, { kind: 'cpu' }, { maxRows: 3, weightDtype });
      try {
        const a = await onGpu.logprobs(seqs, 0.7);
        const b = await onCpu.logprobs(seqs, 0.7);
        expect(a.length).toBe(PROMPTS.length * S);
        expect(a.every(Number.isFinite)).toBe(true);
        expect(a.every((x) => x <= 0)).toBe(true);
        const r = compareArrays(a, b, { atol: 2e-5, rtol: 2e-4 });
        expect(r.pass, `teacher logp ${weightDtype}: ${r.summary}`).toBe(true);
      } finally {
        onGpu.destroy();
        onCpu.destroy();
      }
    });
});

describe('the trainer with a teacher on WebGPU', () => {
  const small = (over: Record<string, unknown>) =>
    resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      train_batch_size: 2,
      num_generations: 4,
      steps: 2,
      eval_every: 0,
      seed: 5,
      teacher: 'copy',
      ...over,
    });

  it("a teacher that is the student's own weights: reverse KL exactly 0, no share of the advantage", async () => {
    const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const init = { config: warm.ck.config, params: warm.ck.params };
    const records = await runToEnd({
      config: small({}),
      init,
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx: gpu.ctx },
      teacher: { ...init, source: 'teacher = student' },
    });
    const first = records[0].metrics as Record<string, number>;
    expect(first['distill/reverse_kl']).toBe(0);
    expect(first['distill/adv_share']).toBe(0);
    // After one update the student has moved and the teacher has not.
    expect((records[1].metrics as Record<string, number>)['distill/reverse_kl']).not.toBe(0);
  });

  it('distillation alone from the copy warm start into a fresh student: positive KL, the whole advantage', async () => {
    const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const fresh = MODEL_PRESETS.nano;
    const records = await runToEnd({
      config: small({ checkpoint: null, model: 'nano', reward_weights: { accuracy: 0, format: 0 } }),
      init: { config: fresh, params: params(fresh, 2) },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx: gpu.ctx },
      teacher: { config: warm.ck.config, params: warm.ck.params, source: 'teacher checkpoints/copy' },
    });
    for (const r of records) {
      const m = r.metrics as Record<string, number>;
      expect(m['distill/reverse_kl']).toBeGreaterThan(0);
      expect(m['distill/adv_share']).toBe(1);
      expect(Number.isFinite(m.loss)).toBe(true);
    }
  });
});

describe('two teachers by prompt source on WebGPU', () => {
  it("each row gets its own teacher's log-probs: the routed pass equals each teacher scoring every row", async () => {
    const rng = new Rng(8);
    const completions = Uint32Array.from({ length: PROMPTS.length * S }, () => 3 + rng.int(TEACHER.vocabSize - 3));
    const P = 5;
    const micro = [
      [0, 1, 2],
      [3, 4],
    ];
    const batch = (rows: readonly number[]) => sequenceBatch(PROMPTS, completions, S, rows, P, 0);
    const backend = { kind: 'webgpu' as const, ctx: gpu.ctx };
    const a = new Teacher({ config: TEACHER, params: params(TEACHER, 11), source: 'a' }, backend, {
      maxRows: 3,
      weightDtype: 'f32',
    });
    const b = new Teacher({ config: TEACHER, params: params(TEACHER, 12), source: 'b' }, backend, {
      maxRows: 3,
      weightDtype: 'f32',
    });
    try {
      const teacherOfRow = (r: number) => (r === 1 || r === 3 ? 'b' : 'a');
      const routed = await teacherLogprobs({
        seqs: [],
        rows: micro,
        temperature: 0.7,
        teacher: null,
        teachers: {
          byId: new Map([
            ['a', a],
            ['b', b],
          ]),
          teacherOfRow,
          batch,
          S,
        },
      });
      const allA = await a.logprobs(micro.map(batch), 0.7);
      const allB = await b.logprobs(micro.map(batch), 0.7);
      const expected = Float32Array.from(routed, (_, i) => (teacherOfRow(Math.floor(i / S)) === 'a' ? allA : allB)[i]);
      const r = compareArrays(routed, expected, { atol: 1e-6, rtol: 1e-6 });
      expect(r.pass, `routed teacher logp: ${r.summary}`).toBe(true);
      // The two teachers differ, so a row scored by the wrong one would show.
      expect(compareArrays(allA, allB, { atol: 1e-3, rtol: 1e-3 }).pass).toBe(false);
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it("in the trainer: the student's own weights as one teacher (reverse KL exactly 0 on its rows), reverse's as the other", async () => {
    const copy = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);
    const reverse = await loadCheckpointDir(new URL('../../../public/checkpoints/reverse', import.meta.url).pathname);
    const init = { config: copy.ck.config, params: copy.ck.params };
    const prompts = [
      '{"prompt": "ab", "answer": "ab", "teacher_id": "self"}',
      '{"prompt": "cd", "answer": "cd", "teacher_id": "rev"}',
      '{"prompt": "ef", "answer": "ef", "teacher_id": "self"}',
      '{"prompt": "gh", "answer": "gh", "teacher_id": "rev"}',
    ].join('\n');
    const records = await runToEnd({
      config: resolveConfig('grpo', {
        task: 'prompts',
        prompts,
        teachers: { self: 'copy', rev: 'reverse' },
        train_batch_size: 4,
        num_generations: 2,
        steps: 2,
        eval_every: 0,
        seed: 2,
      }),
      init,
      tokenizer: copy.tok,
      backend: { kind: 'webgpu', ctx: gpu.ctx },
      teachers: {
        self: { ...init, source: 'teacher self = student' },
        rev: { config: reverse.ck.config, params: reverse.ck.params, source: 'teacher rev checkpoints/reverse' },
      },
    });
    const first = records[0].metrics as Record<string, number>;
    expect(first['distill/reverse_kl/self']).toBe(0);
    expect(first['distill/reverse_kl/rev']).toBeGreaterThan(0);
    expect(first['distill/reverse_kl']).toBeGreaterThan(0);
    expect(first['distill/reverse_kl']).toBeLessThan(first['distill/reverse_kl/rev']);
    for (const r of records) expect(Number.isFinite((r.metrics as Record<string, number>).loss)).toBe(true);
  });
});
