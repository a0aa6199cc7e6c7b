// The trainer's dynamics on the real GPU path (Dawn): each rollout step's group-signal, entropy and length metrics,
// its histograms and its all-groups summary are there, and agree with a recomputation from the step's own completions
// (the task's verifier run again on each text, the rewards, the lengths); each evaluation's solve-rate histogram
// agrees with its pass@1. The functions themselves are tested in dynamics.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpointDir } from '../../cli/files';
import type { GpuContext } from '../../gpu';
import { acquireNodeDevice } from '../../gpu/node';
import { HISTOGRAMS } from '../../schema/histograms';
import { getTask } from '../../tasks';
import { resolveConfig } from '../../schema/config';
import type { EvalRecord, StepRecord } from '../../schema/stream';
import { runToEnd } from '../../testing/run-to-end';

let ctx: GpuContext;
const warm = await loadCheckpointDir(new URL('../../../public/checkpoints/copy', import.meta.url).pathname);

beforeAll(async () => {
  ctx = await acquireNodeDevice();
});
afterAll(() => ctx?.destroy());

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** The median of a list, by sorting (the middle value, or the mean of the middle two). */
function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

describe('trainer: rollout-step dynamics', () => {
  it("records group outcomes, histograms, length percentiles and solve rates that agree with the step's completions", async () => {
    const config = resolveConfig('grpo', {
      task: 'copy',
      difficulty: 3,
      train_batch_size: 3,
      num_generations: 4,
      steps: 2,
      seed: 11,
      eval_every: 2,
      eval_items: 6,
      eval_num_generations: 4,
    });
    const records: StepRecord[] = await runToEnd({
      config,
      init: { config: warm.ck.config, params: warm.ck.params },
      tokenizer: warm.tok,
      backend: { kind: 'webgpu', ctx },
    });
    const task = getTask('copy', 3);
    const G = config.num_generations;
    expect(records.map((r) => r.step)).toEqual([1, 2]);
    for (const r of records) {
      const m = r.metrics as Record<string, number>;
      const label = `step ${r.step}`;
      for (const k of [
        'groups/all_fail_frac',
        'groups/mixed_frac',
        'groups/all_pass_frac',
        'groups/nonzero_adv_frac',
        'entropy/top_decile_mean',
        'completions/p10_length',
        'completions/p50_length',
        'completions/p90_length',
      ]) {
        expect(Number.isFinite(m[k]), `${label}: ${k} = ${m[k]}`).toBe(true);
      }
      const batch = r.batch!;
      expect(batch, label).toHaveLength(config.train_batch_size);
      const completions = batch.flatMap((g) => g.completions);
      expect(completions).toHaveLength(config.train_batch_size * G);

      // Pass/fail again from the verifier, independently of the trainer's flags.
      const outcomes = batch.map((g) => {
        const passes = g.completions.map(
          (c) => task.verify({ prompt: g.prompt, answer: g.answer }, c.text).parts.accuracy === 1 && c.finished,
        );
        g.completions.forEach((c, i) => expect(c.passed, `${label} group ${g.index} completion ${i}`).toBe(passes[i]));
        const k = passes.filter(Boolean).length;
        return k === 0 ? 'fail' : k === G ? 'pass' : 'mixed';
      });
      const B = batch.length;
      expect(m['groups/all_fail_frac'], label).toBeCloseTo(outcomes.filter((o) => o === 'fail').length / B, 12);
      expect(m['groups/mixed_frac'], label).toBeCloseTo(outcomes.filter((o) => o === 'mixed').length / B, 12);
      expect(m['groups/all_pass_frac'], label).toBeCloseTo(outcomes.filter((o) => o === 'pass').length / B, 12);
      expect(m.reward, label).toBeCloseTo(sum(completions.map((c) => c.reward)) / completions.length, 5);

      // GRPO gives every token of a completion its group's normalized reward: zero exactly when the group's rewards tie.
      const nonzero = completions.filter((c) => Math.abs(c.advantage) > 1e-8).length / completions.length;
      expect(m['groups/nonzero_adv_frac'], label).toBeCloseTo(nonzero, 12);
      expect(m['groups/nonzero_adv_frac'], label).toBeCloseTo(1 - m.frac_reward_zero_std, 12);

      // The summaries of the inspected groups agree with their per-token records (GRPO: one A per completion).
      for (const inspected of r.groups!) {
        const brief = batch[inspected.index];
        expect(brief.prompt).toBe(inspected.prompt);
        inspected.completions.forEach((c, i) => {
          expect(brief.completions[i].text).toBe(c.text);
          expect(brief.completions[i].reward).toBe(c.reward);
          expect(brief.completions[i].advantage).toBeCloseTo(c.tokens.advantage[0], 6);
        });
      }

      // Each histogram counts every loss token once.
      const h = r.histograms!;
      expect(h.entropy, label).toHaveLength(HISTOGRAMS.entropy.edges.length - 1);
      expect(h.advantage, label).toHaveLength(HISTOGRAMS.advantage.edges.length - 1);
      expect(sum(h.entropy!), label).toBe(m['completions/loss_tokens']);
      expect(sum(h.advantage!), label).toBe(m['completions/loss_tokens']);

      // Lengths: the percentiles sit in order between the extremes, the median is the median of the lengths.
      const lengths = completions.map((c) => c.length);
      expect(m['completions/p50_length'], label).toBe(median(lengths));
      expect(m['completions/min_length']).toBeLessThanOrEqual(m['completions/p10_length']);
      expect(m['completions/p10_length']).toBeLessThanOrEqual(m['completions/p50_length']);
      expect(m['completions/p50_length']).toBeLessThanOrEqual(m['completions/p90_length']);
      expect(m['completions/p90_length']).toBeLessThanOrEqual(m['completions/max_length']);
      // The top tenth of the token entropies is at least their mean (one update per batch: pi_theta = pi_old).
      expect(m['entropy/top_decile_mean'], label).toBeGreaterThanOrEqual(m.entropy - 1e-4);
    }

    // Every evaluation: n + 1 bins over the held-out prompts; pass@1 is the mean share of samples that pass.
    const evals: EvalRecord[] = records.flatMap((r) => [r.initialEval, r.eval].filter((e): e is EvalRecord => !!e));
    expect(evals.map((e) => e.step)).toEqual([0, 2]);
    const n = config.eval_num_generations;
    for (const e of evals) {
      const c = e.solvedBy!;
      expect(c, `eval ${e.step}`).toHaveLength(n + 1);
      expect(sum(c)).toBe(config.eval_items);
      expect(e.passAtK[0], `eval ${e.step}`).toBeCloseTo(sum(c.map((k, i) => k * i)) / (n * config.eval_items), 12);
    }
  });
});
