// Lesson length-bias: GRPO's per-sequence mean gives each token of a completion weight 1 / |y|, so a long wrong
// completion is pushed down less per token than a short one; Dr. GRPO's constant 1 / L_max removes that. The lab's
// small models do not grow long wrong answers within a lesson's budget (measured: 3.71 tokens under both objectives
// on seed 0; at difficulty 1, learning_rate 2e-3 and 12 steps both shrink to 2 tokens), so the lesson is titled by what
// its runs show, the weights themselves: the check measures the aggregation weights the loss actually used, and
// reports the wrong completions' lengths without claiming a trend.

import type { Lesson, LessonRunResult } from '../lesson';
import { meanOf, runOf } from '../narration';

// A longer L_max than the task needs leaves room for completions that do not stop.
const COMMON = {
  task: 'addition',
  difficulty: 2,
  checkpoint: 'addition',
  temperature: 1,
  learning_rate: 5e-4,
  max_completion_length: 12,
  eval_every: 0,
} as const;

/** Max / min over a list, as a spread (1 when all equal). */
function spread(xs: readonly number[]): number {
  return xs.length ? Math.max(...xs) / Math.min(...xs) : NaN;
}

/**
 * Over the inspected completions of each step: the spread of the per-token aggregation weight and of a completion's
 * total weight (per-token weight times length), worst step first; and the mean length of the wrong completions.
 */
function weightsAndLengths(run: LessonRunResult): {
  tokenSpread: number;
  sequenceSpread: number;
  lengthSpread: number;
  wrongLength: number;
} {
  let tokenSpread = 1;
  let sequenceSpread = 1;
  let lengthSpread = 1;
  const wrong: number[] = [];
  for (const step of run.groups) {
    const perToken: number[] = [];
    const perSequence: number[] = [];
    const lengths: number[] = [];
    for (const g of step) {
      for (const c of g.completions) {
        if ((c.rewards.accuracy ?? c.reward) < 1) wrong.push(c.length);
        if (c.masked || c.length === 0) continue;
        perToken.push(c.tokens.weight[0]);
        perSequence.push(c.tokens.weight.reduce((a, b) => a + b, 0));
        lengths.push(c.length);
      }
    }
    tokenSpread = Math.max(tokenSpread, spread(perToken));
    sequenceSpread = Math.max(sequenceSpread, spread(perSequence));
    lengthSpread = Math.max(lengthSpread, spread(lengths));
  }
  return { tokenSpread, sequenceSpread, lengthSpread, wrongLength: meanOf(wrong) };
}

export const lengthBias: Lesson = {
  id: 'length-bias',
  title: "GRPO's per-sequence mean: a long answer's tokens weigh less",
  source:
    'Dr. GRPO: Liu et al., "Understanding R1-Zero-like training: a critical perspective" (2025), which traces the growth of wrong answers\' length over long reasoning runs to this 1 / |y| weight and removes it (and the division by the group\'s std); the survey of RL for reasoning models lists the aggregation modes.',
  question: {
    prompt:
      "GRPO averages each completion's token losses (1 / |y| per token) before averaging over completions. A wrong completion has negative advantage. Compared with a short wrong completion, how hard is each token of a twice-as-long wrong completion pushed down?",
    choices: ['Twice as hard', 'Just as hard', 'Half as hard'],
    answer: 2,
    why: 'Each completion gets the same total weight 1 / N, spread over its |y| tokens, so a token of a completion twice as long gets half the weight. Wrong answers are discouraged less per token the longer they run, which is the bias Dr. GRPO removes by dividing by a constant L_max instead.',
  },
  runs: [
    { key: 'grpo', label: 'GRPO (per-sequence mean, 1 / |y|)', preset: 'grpo', overrides: { ...COMMON, beta: 0 } },
    { key: 'dr', label: 'Dr. GRPO (constant 1 / L_max)', preset: 'dr_grpo', overrides: { ...COMMON } },
  ],
  steps: 10,
  look: 'Watch the Completion length chart; in the inspector colour tokens by "loss" and compare a short and a long completion of the same group.',
  narration: [
    'GRPO: completions average {grpo:completions/mean_length} tokens, {grpo:completions/clipped_ratio} of them cut at L_max; accuracy {grpo:accuracy}.',
    'Dr. GRPO: completions average {dr:completions/mean_length} tokens, {dr:completions/clipped_ratio} cut; accuracy {dr:accuracy}.',
  ],
  highlight: { charts: ['lengths', 'reward'], planes: ['loss', 'advantage'] },
  check: {
    claim:
      "in GRPO's updates every inspected completion carries the same total weight, so per-token weights differ as much as lengths do; in Dr. GRPO's every token carries the same weight, so a completion's total weight grows with its length (lengths must differ for either to show)",
    evaluate(runs) {
      const g = weightsAndLengths(runOf(runs, 'grpo'));
      const d = weightsAndLengths(runOf(runs, 'dr'));
      const equal = (s: number) => s < 1 + 1e-3;
      const observed =
        g.lengthSpread > 1 &&
        d.lengthSpread > 1 &&
        equal(g.sequenceSpread) &&
        g.tokenSpread > 1 + 1e-3 &&
        equal(d.tokenSpread) &&
        d.sequenceSpread > 1 + 1e-3;
      return {
        observed,
        values: {
          'grpo: largest spread of lengths in a step': g.lengthSpread,
          'grpo: largest spread of per-token weight': g.tokenSpread,
          'grpo: largest spread of per-completion weight': g.sequenceSpread,
          'dr: largest spread of lengths in a step': d.lengthSpread,
          'dr: largest spread of per-token weight': d.tokenSpread,
          'dr: largest spread of per-completion weight': d.sequenceSpread,
          'grpo: mean length of wrong completions': g.wrongLength,
          'dr: mean length of wrong completions': d.wrongLength,
        },
        summary: `With lengths differing up to ${g.lengthSpread.toFixed(1)}x within a step, GRPO's per-token weights differed up to ${g.tokenSpread.toFixed(2)}x while every completion's total weight was the same (spread ${g.sequenceSpread.toFixed(4)}); Dr. GRPO's per-token weight was constant (spread ${d.tokenSpread.toFixed(4)}) and a completion's total grew up to ${d.sequenceSpread.toFixed(2)}x with its length. Wrong completions averaged ${g.wrongLength.toFixed(2)} tokens under GRPO and ${d.wrongLength.toFixed(2)} under Dr. GRPO.`,
      };
    },
    whyNot:
      "The weights can only differ where lengths do: a step whose inspected completions all have the same length shows no spread. The growth of wrong answers' length itself (the paper's finding) needs hundreds of steps on long reasoning; in ten steps on short arithmetic it does not appear reliably, which is why the check measures the weights.",
  },
  explain:
    "Under GRPO's per-sequence mean each completion gets total weight 1 / N whatever its length, so its tokens share it: long completions are nudged less per token. For correct answers (A > 0) that favours short ones; for wrong answers (A < 0) it favours long ones, and over many steps wrong answers drift longer. Dr. GRPO divides every token by the same constant L_max, so the gradient per token depends only on the advantage. On this lab's short tasks the lengths hardly move in ten steps, and the wrong completions' mean lengths (in the values) differ by noise as much as by method: the bias is in the weights from the first step, and its effect on lengths accumulates slowly.",
  next: 'Set loss_agg_mode to token-mean (DAPO) on the GRPO run: every token of the batch gets 1 / M, also free of the 1 / |y| bias.',
};
