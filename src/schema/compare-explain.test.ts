// The A/B's explanation on batches whose numbers are known by hand: GRPO vs Dr. GRPO on a group of two short correct
// and two long wrong completions (GRPO: every completion weighs 1/N and takes 25% of the gradient; Dr. GRPO: a
// completion weighs |y|/(N L), so the long wrong ones take 80%), the clip counts of a clipped pair, and a batch
// with no gradient. The per-token values come from the objective's CPU twin (compare.ts's CPU path).

import { describe, expect, it } from 'vitest';
import { compareObjectives, type ComparedBatch, type ObjectiveComparison } from '../rl/observation/compare';
import { explainComparison, num, pct } from './compare-explain';
import { randomComparedBatch } from '../rl/observation/compare.fixture';
import { resolveConfig, type RLConfig } from './config';

const S = 8;

/** One group of four: lengths 2, 2, 8, 8; the short ones correct. Ratio 1, reference = policy (no KL gradient). */
function lengthBatch(rewards = [1, 1, 0, 0]): ComparedBatch {
  const lengths = Uint32Array.of(2, 2, 8, 8);
  const mask = new Float32Array(4 * S);
  lengths.forEach((n, r) => mask.fill(1, r * S, r * S + n));
  const logp = mask.map((m) => (m ? -0.5 : 0));
  return {
    groupSize: 4,
    S,
    rewards: Float32Array.from(rewards),
    correct: Uint8Array.from(rewards),
    lengths,
    finished: [true, true, true, true],
    completionMask: mask,
    logp,
    oldLogp: logp,
    entropy: mask.map(() => 1),
    samplerLogp: logp,
    refLogp: logp,
    klExact: new Float32Array(4 * S),
  };
}

async function comparison(
  batch: ComparedBatch,
  a: RLConfig,
  b: RLConfig,
  ratioIsOne: boolean,
): Promise<ObjectiveComparison> {
  const sides = await compareObjectives({ kind: 'cpu' }, batch, a, b);
  const rows = Array.from(batch.lengths, (length, r) => ({
    group: Math.floor(r / batch.groupSize),
    prompt: 'p',
    text: 't',
    tokens: new Uint32Array(length),
    length,
    reward: batch.rewards[r],
    correct: batch.correct[r] === 1,
    finished: batch.finished[r],
  }));
  return { source: 'latest', step: 1, S: batch.S, groupSize: batch.groupSize, ratioIsOne, rows, ...sides };
}

const cfg = (preset: 'grpo' | 'dr_grpo', over: Partial<RLConfig> = {}) =>
  resolveConfig(preset, { num_generations: 4, ...over });

describe('explainComparison', () => {
  it('GRPO vs Dr. GRPO: equal weight per completion vs weight by length, and the long wrong completions gain', async () => {
    const e = explainComparison(await comparison(lengthBatch(), cfg('grpo'), cfg('dr_grpo'), true));
    const text = e.lines.join('\n');
    expect(text).toContain(
      "A: loss_agg_mode seq-mean-token-mean weighs each token 1/(N·|y_i|) (N = 4, L_max = 8), so every completion's tokens sum to 0.25 whatever its length (2-8 tokens).",
    );
    expect(text).toContain(
      "B: loss_agg_mode seq-mean-token-sum-norm weighs each token 1/(N·L_max) (N = 4, L_max = 8), so a completion's tokens sum to 0.0625 (2 tokens) up to 0.25 (8 tokens): longer completions weigh more.",
    );
    // GRPO's |A| = 0.5 / std([1, 1, 0, 0]) = 0.866; Dr. GRPO's |A| = 0.5.
    expect(text).toContain('A (grpo, scale_rewards group) mean |A| 0.866, B (dr_grpo) 0.5; no token changes sign');
    expect(text).toContain(
      'long wrong (2): 50% under A, 80% under B (gains); short correct (2): 50% under A, 20% under B (loses)',
    );
    expect(text).toContain('Every ratio is 1');
    expect(text).toContain('KL to the reference in the loss: A beta 0.04 × k3, B none;');
    expect(text).not.toContain('Entropy bonus');
    expect(e.medianLength).toBe(5);
    expect(
      e.cells.map((c) =>
        [c.long, c.correct, c.gradShareA, c.gradShareB].map((x) => (typeof x === 'number' ? Number(x.toFixed(4)) : x)),
      ),
    ).toEqual([
      [true, false, 0.5, 0.8],
      [false, true, 0.5, 0.2],
    ]);
    for (const c of e.completions) {
      expect(c.weightA).toBeCloseTo(0.25, 6);
      expect(c.weightB).toBeCloseTo(c.length / 32, 6);
    }
    // Per token: a short correct token's signed share goes from -1/8 to -1/20, a long wrong one's from 1/32 to 1/20.
    expect(e.topTokens[0].row).toBeLessThan(2);
    expect(e.topTokens[0].gradShareA).toBeCloseTo(-0.125, 5);
    expect(e.topTokens[0].gradShareB).toBeCloseTo(-0.05, 5);
  });

  it('counts the clipped tokens of each side and those that clip differently', async () => {
    const batch = randomComparedBatch(3, 12, 4, 17, 0.4);
    const a = cfg('grpo', { num_iterations: 2, beta: 0 });
    const b = cfg('grpo', { num_iterations: 2, beta: 0, epsilon_high: 0.28 });
    const cmp = await comparison(batch, a, b, false);
    const e = explainComparison(cmp);
    const count = (side: typeof cmp.a, s: number) =>
      Array.from(side.clipSide).filter((c, i) => side.mask[i] > 0 && c === s).length;
    const differ = Array.from(cmp.a.clipSide).filter((c, i) => cmp.a.mask[i] > 0 && c !== cmp.b.clipSide[i]).length;
    expect(differ).toBeGreaterThan(0);
    expect(e.lines).toContain(
      `Clipped tokens: A ${count(cmp.a, -1) + count(cmp.a, 1)} (${count(cmp.a, -1)} low, ${count(cmp.a, 1)} high), B ${count(cmp.b, -1) + count(cmp.b, 1)} (${count(cmp.b, -1)} low, ${count(cmp.b, 1)} high); ${differ} tokens clip differently.`,
    );
    // A token that clips on one side only ranks above every token that clips the same on both.
    expect(e.topTokens[0].clipA).not.toBe(e.topTokens[0].clipB);
    expect(e.lines.at(-1)).toBe(`Loss of the batch as one optimizer step: A ${num(cmp.a.loss)}, B ${num(cmp.b.loss)}.`);
  });

  it('says so when a side pushes no gradient (every group ties)', async () => {
    const e = explainComparison(await comparison(lengthBatch([1, 1, 1, 1]), cfg('grpo'), cfg('dr_grpo'), true));
    expect(e.lines.join('\n')).toContain('A and B push no gradient on this batch');
    expect(e.completions.every((c) => c.gradShareA === 0 && c.gradShareB === 0)).toBe(true);
  });

  it('formats numbers and percentages', () => {
    expect([num(0), num(0.0625), num(1 / 3), num(-0.00012), num(123456)]).toEqual([
      '0',
      '0.0625',
      '0.333',
      '-1.20e-4',
      '1.23e+5',
    ]);
    expect([pct(0), pct(0.05), pct(0.5), pct(1)]).toEqual(['0%', '5.0%', '50%', '100%']);
  });
});
