// The GPU learner's fused, chunked LM head against the unchunked path: one GRPO update (reference model, exact KL
// in the loss, an entropy bonus) and one PPO update (a critic) on the GPU, with a head budget of a few rows a chunk
// (so every minibatch crosses several chunks, the last one partial), equal the CPU learner's (cpu-learner.ts: whole
// (rows, V) logits on the CPU twins) within f32 tolerance: log pi_old, sum pi^2 (when asked for; absent otherwise)
// and log pi_ref from score(), the token planes, every step scalar and every weight after the optimizer step. A
// missing adapter fails the suite; it never skips.

import { describe, expect, it } from 'vitest';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import { MODEL_PRESETS, type ModelConfig } from '../../schema/model-config';
import type { ParamArrays } from '../../io/checkpoint';
import { compareArrays } from '../../reference/compare';
import { DEFAULT_OBJECTIVE_CONFIG, type ObjectiveConfig } from '../../schema/objective';
import { useNodeDevice } from '../../testing/test-device';
import { sequenceBatch } from '../algorithm/batch';
import { CpuLearner } from './cpu-learner';
import { GpuLearner, STEP_SCALARS, type LearnerInit, type UpdateInputs, type UpdateOptions } from './learner';

const gpu = useNodeDevice();

const MODEL: ModelConfig = { ...MODEL_PRESETS.nano, vocabSize: 301 };
const S = 5;
const PROMPTS = [
  [1, 7, 9],
  [1, 4],
  [1, 30, 31, 32],
];

function params(seed: number): ParamArrays {
  const p = initParams(MODEL, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

function inputs(critic: boolean): UpdateInputs {
  const rng = new Rng(5);
  const rows = PROMPTS.map((_, i) => i);
  const completions = Uint32Array.from({ length: PROMPTS.length * S }, () => 3 + rng.int(MODEL.vocabSize - 3));
  const seq = sequenceBatch(PROMPTS, completions, S, rows, 4, 0);
  const MS = seq.N * S;
  const f = (lo: number, hi: number) => Float32Array.from({ length: MS }, () => rng.uniform(lo, hi));
  return {
    seq,
    advantages: f(-1, 1),
    mask: Float32Array.from({ length: MS }, (_, i) => (i % S === S - 1 && i < S ? 0 : 1)),
    samplerLogp: f(-6, -5),
    oldLogp: null,
    ...(critic ? { oldValues: f(-0.1, 0.1), returns: f(-1, 1) } : {}),
  };
}

async function compare(name: string, critic: boolean, objective: ObjectiveConfig): Promise<void> {
  const init: LearnerInit = {
    config: MODEL,
    params: params(1),
    reference: params(2),
    needsReference: true,
    needsCritic: critic,
    maxRows: PROMPTS.length,
    // Three rows a chunk of a 3 x 7-position minibatch (21 rows): seven chunks.
    headScratchBytes: 3 * 3 * 4 * MODEL.vocabSize,
  };
  const g = new GpuLearner(gpu.ctx, init);
  const c = new CpuLearner(init);
  const inp = inputs(critic);
  const opts: UpdateOptions = {
    objective,
    temperature: 0.8,
    // AdamW's first step is lr g / (|g| + eps): with eps 1 it is linear in small gradients, so the weights after it
    // compare the two learners' gradients (with a tiny eps it is lr sign(g), which flips on rounding where g ~ 0).
    policy: { lr: 0.5, weightDecay: 0.01, maxGradNorm: 1, eps: 1 },
    ...(critic ? { critic: { lr: 0.5, weightDecay: 0, eps: 1, vfCoef: 0.5, cliprange: 0.2 } } : {}),
    inspectRows: [],
  };
  const tol = { atol: 2e-5, rtol: 2e-4 };
  const expectClose = (label: string, got: ArrayLike<number>, want: ArrayLike<number>, t = tol) => {
    const r = compareArrays(got, want, t);
    expect(r.pass, `${name}, ${label}: ${r.summary}`).toBe(true);
  };
  const [gs, cs] = [await g.score([inp.seq], 0.8, true, true), await c.score([inp.seq], 0.8, true, true)];
  expectClose('log pi_old', gs.oldLogp!, cs.oldLogp!);
  expectClose('sum pi^2', gs.sumPiSquared!, cs.sumPiSquared!);
  expect(gs.sumPiSquared!.length).toBe(gs.oldLogp!.length);
  expect((await g.score([inp.seq], 0.8, true)).sumPiSquared, 'computed only when asked').toBeUndefined();
  expectClose('log pi_ref', gs.refLogp!, cs.refLogp!);
  if (critic) expectClose('values', gs.values!, cs.values!);
  const [gp, cp] = [await g.tokenPlanes(inp.seq, 0.8), await c.tokenPlanes(inp.seq, 0.8)];
  for (const k of ['logp', 'entropy', 'refLogp', 'klExact'] as const) expectClose(`token plane ${k}`, gp[k]!, cp[k]!);
  g.update(inp, opts);
  c.update(inp, opts);
  const [[gr], [cr]] = [await g.collect(), await c.collect()];
  for (const k of STEP_SCALARS) {
    if (!critic && (k.startsWith('value') || k.startsWith('critic'))) continue;
    expectClose(`scalar ${k}`, [gr.scalars[k]], [cr.scalars[k]], { atol: 1e-5, rtol: 1e-3 });
  }
  const [gState, cState] = [await g.saveState(), await c.saveState()];
  for (const [k, v] of Object.entries(cState.policy)) expectClose(`policy ${k}`, gState.policy[k], v);
  if (critic) for (const [k, v] of Object.entries(cState.critic!)) expectClose(`critic ${k}`, gState.critic![k], v);
  g.destroy();
  c.destroy();
}

describe('GPU learner with the chunked head equals the CPU learner', () => {
  it('one GRPO update with a reference, the exact KL in the loss and an entropy bonus', async () => {
    await compare('GRPO', false, {
      ...DEFAULT_OBJECTIVE_CONFIG,
      beta: 0.05,
      kl_placement: 'in_loss',
      kl_estimator: 'exact',
      entropy_coef: 0.01,
    });
  });

  it('one PPO update with a critic (its V the first row of its head)', async () => {
    await compare('PPO', true, { ...DEFAULT_OBJECTIVE_CONFIG, beta: 0.05 });
  });
});
