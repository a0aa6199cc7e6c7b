// The same-batch A/B on the GPU against the objective's CPU twin: for GRPO vs Dr. GRPO (ratio 1), DAPO vs GRPO, and
// a clipped pair with num_iterations 2 (ratio not 1, so the clip sides of the two sides differ), every per-token
// value of both sides (d loss / d logp, ratio, clip side, KL, contribution, weight, loss share) and the loss equal
// the twin's on the same inputs, and each side's advantages are its own estimator's on the shared rewards. Also the
// trainer's A/B between steps (latest step and fresh batch; the run's next step is unchanged by it), the learners'
// per-token planes (GPU equals CPU), and which configs a batch cannot evaluate, and why. A missing adapter fails the
// suite; it never skips.

import { describe, expect, it } from 'vitest';
import { useNodeDevice } from '../../testing/test-device';
import { compareArrays, type Tolerance } from '../../reference/compare';
import { OBJECTIVE_RECORDS } from '../../reference/objective';
import { drGrpoAdvantages, grpoAdvantages } from '../algorithm/advantages';
import {
  compareObjectives,
  comparisonProblem,
  objectiveHostInputs,
  sideInputs,
  twinOutputs,
  type ComparedBatch,
  type ObjectiveSideValues,
} from './compare';
import { loadCheckpointDir } from '../../cli/files';
import { resolveConfig, type RLConfig } from '../../schema/config';
import { Trainer } from '../algorithm/trainer';
import { sequenceBatch } from '../algorithm/batch';
import { CpuLearner } from '../learners/cpu-learner';
import { GpuLearner } from '../learners/learner';
import { randomComparedBatch } from './compare.fixture';

const gpu = useNodeDevice();

const TOL: Record<'loss' | 'grad' | 'records', Tolerance> = {
  loss: { atol: 2e-6, rtol: 1e-4 },
  grad: { atol: 1e-6, rtol: 1e-4 },
  records: { atol: 2e-6, rtol: 1e-4 },
};

/** Every per-token value of a GPU side against the twin on that side's inputs. */
function expectSideMatchesTwin(batch: ComparedBatch, side: ObjectiveSideValues, label: string): void {
  const inputs = objectiveHostInputs(batch, sideInputs(batch, side.config));
  const want = twinOutputs(inputs, side.config);
  const NS = side.mask.length;
  const check = (got: ArrayLike<number>, expected: ArrayLike<number>, tol: Tolerance, what: string) => {
    const c = compareArrays(got, expected, tol);
    expect(c.pass, `${label} ${what}: ${c.summary}`).toBe(true);
  };
  check([side.loss], want.loss, TOL.loss, 'loss');
  check(side.dLogp, want.dLogp, TOL.grad, 'dLogp');
  const plane = (name: (typeof OBJECTIVE_RECORDS)[number]) =>
    want.records.subarray(OBJECTIVE_RECORDS.indexOf(name) * NS, (OBJECTIVE_RECORDS.indexOf(name) + 1) * NS);
  check(side.ratio, plane('ratio'), TOL.records, 'ratio');
  check(side.clipSide, plane('clip_side'), { atol: 0, rtol: 0 }, 'clip side');
  check(side.kl, plane('kl'), TOL.records, 'kl');
  check(side.contribution, plane('contribution'), TOL.records, 'contribution');
  check(side.weight, plane('weight'), TOL.records, 'weight');
  // The loss shares are the contributions' absolute values over their sum.
  const total = plane('contribution').reduce((s, x) => s + Math.abs(x), 0);
  check(
    side.lossShare,
    Array.from(plane('contribution'), (x) => Math.abs(x) / total),
    TOL.records,
    'loss share',
  );
  check(side.advantages, inputs.advantages.data, { atol: 0, rtol: 0 }, 'advantages');
}

const config = (preset: Parameters<typeof resolveConfig>[0], over: Partial<RLConfig> = {}) =>
  resolveConfig(preset, { num_generations: 4, ...over });

describe('compareObjectives on the GPU equals the objective twin on the same inputs', () => {
  it('GRPO vs Dr. GRPO at ratio 1: per-token values, and each side its own advantages', async () => {
    const batch = randomComparedBatch(1, 8, 4, 17, 0);
    const a = config('grpo');
    const b = config('dr_grpo');
    const got = await compareObjectives({ kind: 'webgpu', ctx: gpu.ctx }, batch, a, b);
    expectSideMatchesTwin(batch, got.a, 'GRPO');
    expectSideMatchesTwin(batch, got.b, 'Dr. GRPO');
    const shared = { rewards: batch.rewards, mask: got.a.mask, groupSize: 4 };
    expect(Array.from(got.a.advantages)).toEqual(Array.from(grpoAdvantages(shared, 'group')));
    expect(Array.from(got.b.advantages)).toEqual(Array.from(drGrpoAdvantages(shared)));
    expect(Array.from(got.a.ratio.filter((_, i) => got.a.mask[i] > 0)).every((r) => r === 1)).toBe(true);
    // GRPO's weights sum to 1/N per non-empty completion; Dr. GRPO's to |y|/(N L).
    const S = batch.S;
    for (let r = 0; r < 8; r++) {
      const n = got.a.mask.subarray(r * S, (r + 1) * S).reduce((s, x) => s + x, 0);
      if (n === 0) continue;
      expect(got.a.weight.subarray(r * S, (r + 1) * S).reduce((s, x) => s + x, 0)).toBeCloseTo(1 / 8, 5);
      expect(got.b.weight.subarray(r * S, (r + 1) * S).reduce((s, x) => s + x, 0)).toBeCloseTo(n / (8 * S), 5);
    }
  });

  it('DAPO (token-mean, clip-higher) vs GRPO with ratios away from 1', async () => {
    const batch = randomComparedBatch(2, 8, 4, 33, 0.6);
    const got = await compareObjectives({ kind: 'webgpu', ctx: gpu.ctx }, batch, config('dapo'), config('grpo'));
    expectSideMatchesTwin(batch, got.a, 'DAPO');
    expectSideMatchesTwin(batch, got.b, 'GRPO');
  });

  it('a clipped pair with num_iterations 2: the clip sides differ between epsilon_high 0.2 and 0.28', async () => {
    const batch = randomComparedBatch(3, 12, 4, 17, 0.4);
    const a = config('grpo', { num_iterations: 2, beta: 0 });
    const b = config('grpo', { num_iterations: 2, beta: 0, epsilon_high: 0.28, mask_truncated_completions: true });
    const got = await compareObjectives({ kind: 'webgpu', ctx: gpu.ctx }, batch, a, b);
    expectSideMatchesTwin(batch, got.a, 'eps_high 0.2');
    expectSideMatchesTwin(batch, got.b, 'eps_high 0.28');
    const both = (i: number) => got.a.mask[i] > 0 && got.b.mask[i] > 0;
    const ratios = Array.from(got.a.ratio).filter((_, i) => both(i));
    expect(ratios.some((r) => Math.abs(r - 1) > 0.1)).toBe(true);
    const differ = Array.from(got.a.clipSide).filter((s, i) => both(i) && s !== got.b.clipSide[i]);
    expect(differ.length).toBeGreaterThan(0);
    // The truncated rows (every third row from 1) are masked on B's side only.
    expect(got.b.mask.subarray(batch.S, 2 * batch.S).every((x) => x === 0)).toBe(true);
    expect(got.a.mask.subarray(batch.S, 2 * batch.S).some((x) => x > 0)).toBe(true);
  });
});

const warmCopy = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);

describe("the trainer's A/B between steps", () => {
  const warm = warmCopy;
  const run = (over: Partial<RLConfig> = {}) =>
    Trainer.create({
      config: resolveConfig('grpo', {
        task: 'copy',
        difficulty: 3,
        train_batch_size: 2,
        num_generations: 4,
        steps: 3,
        eval_every: 0,
        seed: 7,
        num_iterations: 2,
        learning_rate: 1e-3,
        temperature: 1.5,
        ...over,
      }),
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx: gpu.ctx },
    });
  const timed = (k: string) => k === 'step_time' || k.startsWith('timing_s/') || k.startsWith('perf/');
  const untimed = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([k]) => !timed(k)));

  it('evaluates the latest step (ratio not 1 after its updates) and a fresh batch (ratio 1), and leaves the run as it was', async () => {
    const compared = await run();
    const plain = await run();
    try {
      await expect(compared.compareObjectives(config('dr_grpo'), 'latest')).rejects.toThrow(/no step has run yet/);
      await compared.runStep();
      await plain.runStep();
      const latest = await compared.compareObjectives(resolveConfig('dr_grpo', { num_generations: 4 }), 'latest');
      expect(latest.rows.length).toBe(8);
      expect(latest.ratioIsOne).toBe(false);
      expect(latest.step).toBe(1);
      const masked = (side: typeof latest.a) => Array.from(side.ratio).filter((_, i) => side.mask[i] > 0);
      expect(masked(latest.a).some((r) => Math.abs(r - 1) > 1e-4)).toBe(true);
      // Both sides see the same ratios (same parameters, same pi_old); only the objective differs.
      expect(masked(latest.b)).toEqual(masked(latest.a));
      latest.rows.forEach((row) => expect(row.tokens.length).toBe(row.length));
      const fresh = await compared.compareObjectives(resolveConfig('dapo', { num_generations: 4 }), 'fresh');
      expect(fresh.ratioIsOne).toBe(true);
      expect(masked(fresh.a).every((r) => r === 1)).toBe(true);
      await expect(compared.compareObjectives(resolveConfig('ppo', { num_generations: 4 }), 'latest')).rejects.toThrow(
        /objective B: adv_estimator gae needs a critic/,
      );
      const [next, same] = [await compared.runStep(), await plain.runStep()];
      expect(next.map((r) => untimed(r.metrics as Record<string, number>))).toEqual(
        same.map((r) => untimed(r.metrics as Record<string, number>)),
      );
    } finally {
      compared.destroy();
      plain.destroy();
    }
  });
});

describe('tokenPlanes', () => {
  it('gives the same log-probs, entropies, reference log-probs and exact KL on the GPU and the CPU learner', async () => {
    const warm = warmCopy;
    const params = warm.ck.params;
    // A reference a little away from the policy, so the KL is not 0.
    const reference = Object.fromEntries(
      Object.entries(params).map(([k, v], j) => [k, v.map((x, i) => x + 0.02 * Math.sin(i * 0.7 + j))]),
    );
    const init = { config: warm.ck.config, params, reference, needsReference: true, needsCritic: false, maxRows: 4 };
    const prompts = ['copy:abc=', 'copy:ba=', 'copy:cab=', 'copy:a='].map((p) => [
      warm.tok.bosId,
      ...warm.tok.encode(p),
    ]);
    const S = 5;
    const completions = Uint32Array.from({ length: 4 * S }, (_, i) => warm.tok.encode('abcab')[i % 5]);
    const P = Math.max(...prompts.map((p) => p.length));
    const seq = sequenceBatch(prompts, completions, S, [0, 1, 2, 3], P, warm.tok.padId);
    const gpuLearner = new GpuLearner(gpu.ctx, init);
    try {
      const got = await gpuLearner.tokenPlanes(seq, 0.8);
      const want = await new CpuLearner(init).tokenPlanes(seq, 0.8);
      for (const k of ['logp', 'entropy', 'refLogp', 'klExact'] as const) {
        const c = compareArrays(got[k]!, want[k]!, { atol: 2e-4, rtol: 1e-3 });
        expect(c.pass, `${k}: ${c.summary}`).toBe(true);
      }
      expect(Math.max(...want.klExact!)).toBeGreaterThan(1e-4);
      expect(Array.from(want.logp).some((x, i) => Math.abs(x - want.refLogp![i]) > 1e-3)).toBe(true);
    } finally {
      gpuLearner.destroy();
    }
  });
});

describe('comparisonProblem', () => {
  it('names the input a config needs and the batch lacks', () => {
    const batch = randomComparedBatch(4, 8, 4, 9, 0);
    const noRef: ComparedBatch = { ...batch, refLogp: undefined, klExact: undefined };
    expect(comparisonProblem(noRef, config('grpo'))).toMatch(/beta 0.04 .* reference policy/);
    expect(comparisonProblem(noRef, config('dr_grpo'))).toBeNull();
    expect(comparisonProblem(batch, config('ppo'))).toMatch(/gae needs a critic/);
    expect(comparisonProblem(batch, config('remax'))).toMatch(/remax needs greedy rollouts/);
    expect(comparisonProblem(batch, config('grpo', { num_generations: 8 }))).toMatch(/num_generations must stay 4/);
    expect(() => sideInputs(noRef, config('grpo'))).toThrow(/reference policy/);
  });
});
