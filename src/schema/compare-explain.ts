// The same-batch A/B in words and numbers: from the per-token values of both sides (compare.ts), each completion's
// total aggregation weight and share of the gradient under A and B, those shares summed by length (short / long
// around the median) and correctness, the clip counts, the losses, and the tokens where the two differ most.
// Pure arithmetic and text; no GPU, no React. The gradient share of a token is |d loss / d log p| over the batch's
// sum, so objectives whose overall scale differs (token-mean vs a 1/L norm) compare by where they push, not how hard
// (Adam's per-parameter normalization takes most of the overall scale out anyway).

import { aggregationWeight, lossKlCoef } from './objective';
import type { ObjectiveComparison, ObjectiveSideValues } from '../rl/observation/compare';

/** One completion's totals under A and B. */
export interface CompletionShift {
  row: number;
  group: number;
  /** Position within its group. */
  index: number;
  length: number;
  correct: boolean;
  /** Long: more tokens than the batch's median length. */
  long: boolean;
  /** Sum of the aggregation weights w of its tokens. */
  weightA: number;
  weightB: number;
  /** Its share of the batch's sum of |d loss / d log p|. */
  gradShareA: number;
  gradShareB: number;
}

/** Completions of one length class and correctness, summed. */
export interface CellShift {
  long: boolean;
  correct: boolean;
  completions: number;
  gradShareA: number;
  gradShareB: number;
}

/** A token where A and B differ. */
export interface TokenDifference {
  row: number;
  position: number;
  dLogpA: number;
  dLogpB: number;
  /** Signed share of the gradient: d loss / d log p over the side's sum of |d loss / d log p|. */
  gradShareA: number;
  gradShareB: number;
  clipA: number;
  clipB: number;
}

export interface ComparisonExplanation {
  /** The aggregate difference, one finding per line, with its numbers. */
  lines: string[];
  completions: CompletionShift[];
  /** Non-empty cells, largest gain under B first. */
  cells: CellShift[];
  /** The tokens where the gradient shares differ most (a clip side that differs first), most first. */
  topTokens: TokenDifference[];
  /** Completions longer than this many tokens count as long. */
  medianLength: number;
}

/** A number in 3 significant digits (exponent form below 1e-3). */
export function num(x: number): string {
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a < 1e-3 || a >= 1e5) return x.toExponential(2);
  return String(Number(x.toPrecision(3)));
}

/** A fraction as a percentage: one decimal below 10%, whole above. */
export function pct(x: number): string {
  const p = 100 * x;
  return `${Math.abs(p) < 10 && p !== 0 ? p.toFixed(1) : p.toFixed(0)}%`;
}

const sumAbs = (x: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += Math.abs(x[i]);
  return s;
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return 0;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const cellName = (c: Pick<CellShift, 'long' | 'correct'>) =>
  `${c.long ? 'long' : 'short'} ${c.correct ? 'correct' : 'wrong'}`;

/** Side label: "A (grpo, seq-mean-token-mean)". */
function sideName(k: 'A' | 'B', s: ObjectiveSideValues): string {
  return `${k} (${s.config.adv_estimator}, ${s.config.loss_type}, ${s.config.loss_agg_mode})`;
}

/** How a side's per-completion total weight depends on length, in words with numbers. */
function weightLine(k: 'A' | 'B', side: ObjectiveSideValues, cs: CompletionShift[], N: number, S: number): string {
  const total = (c: CompletionShift) => (k === 'A' ? c.weightA : c.weightB);
  const live = cs.filter((c) => total(c) > 0);
  const head = `${k}: loss_agg_mode ${side.config.loss_agg_mode} weighs each token ${aggregationWeight(side.config.loss_agg_mode).formula} (N = ${N}, L_max = ${S})`;
  if (!live.length) return `${head}; every completion is masked.`;
  const lo = live.reduce((m, c) => (total(c) < total(m) ? c : m));
  const hi = live.reduce((m, c) => (total(c) > total(m) ? c : m));
  if (total(hi) - total(lo) <= 1e-6 * total(hi)) {
    const lens = live.map((c) => c.length);
    return `${head}, so every completion's tokens sum to ${num(total(hi))} whatever its length (${Math.min(...lens)}-${Math.max(...lens)} tokens).`;
  }
  return `${head}, so a completion's tokens sum to ${num(total(lo))} (${lo.length} tokens) up to ${num(total(hi))} (${hi.length} tokens): ${hi.length > lo.length ? 'longer completions weigh more' : 'shorter completions weigh more'}.`;
}

/** Masked-mean |A| of a side. */
function meanAbsAdvantage(s: ObjectiveSideValues): number {
  let n = 0;
  let t = 0;
  for (let i = 0; i < s.mask.length; i++) {
    if (s.mask[i] > 0) {
      n++;
      t += Math.abs(s.advantages[i]);
    }
  }
  return n ? t / n : 0;
}

function clipCounts(s: ObjectiveSideValues): { low: number; high: number } {
  let low = 0;
  let high = 0;
  s.clipSide.forEach((c, i) => {
    if (s.mask[i] > 0 && c < 0) low++;
    if (s.mask[i] > 0 && c > 0) high++;
  });
  return { low, high };
}

/**
 * The A/B's aggregate difference: per-completion total weights and gradient shares, the shares by length and
 * correctness, advantages, clipping, losses, and the `topK` tokens that differ most.
 */
export function explainComparison(
  cmp: Pick<ObjectiveComparison, 'rows' | 'S' | 'groupSize' | 'ratioIsOne' | 'a' | 'b'>,
  topK = 8,
): ComparisonExplanation {
  const { rows, S, a, b } = cmp;
  const N = rows.length;
  const G = cmp.groupSize;
  const totalA = sumAbs(a.dLogp);
  const totalB = sumAbs(b.dLogp);
  const medianLength = median(rows.map((r) => r.length));
  const completions: CompletionShift[] = rows.map((r, i) => {
    const span = (x: ArrayLike<number>) => Array.prototype.slice.call(x, i * S, (i + 1) * S) as number[];
    const sum = (x: number[]) => x.reduce((s, v) => s + v, 0);
    return {
      row: i,
      group: Math.floor(i / G),
      index: i % G,
      length: r.length,
      correct: r.correct,
      long: r.length > medianLength,
      weightA: sum(span(a.weight)),
      weightB: sum(span(b.weight)),
      gradShareA: totalA > 0 ? sumAbs(span(a.dLogp)) / totalA : 0,
      gradShareB: totalB > 0 ? sumAbs(span(b.dLogp)) / totalB : 0,
    };
  });
  const cells: CellShift[] = [];
  for (const long of [false, true]) {
    for (const correct of [true, false]) {
      const inCell = completions.filter((c) => c.long === long && c.correct === correct);
      if (!inCell.length) continue;
      cells.push({
        long,
        correct,
        completions: inCell.length,
        gradShareA: inCell.reduce((s, c) => s + c.gradShareA, 0),
        gradShareB: inCell.reduce((s, c) => s + c.gradShareB, 0),
      });
    }
  }
  cells.sort((x, y) => y.gradShareB - y.gradShareA - (x.gradShareB - x.gradShareA));

  const lines: string[] = [];
  lines.push(
    `Same ${N} completions (${N / G} groups of ${G}), same parameters; ${sideName('A', a)} vs ${sideName('B', b)}.`,
  );
  lines.push(weightLine('A', a, completions, N, S));
  lines.push(weightLine('B', b, completions, N, S));

  const sameAdvantages = a.advantages.every((x, i) => x === b.advantages[i]);
  if (sameAdvantages) lines.push(`Advantages: the same on both sides (mean |A| ${num(meanAbsAdvantage(a))}).`);
  else {
    let flips = 0;
    a.advantages.forEach(
      (x, i) => a.mask[i] > 0 && b.mask[i] > 0 && Math.sign(x) !== Math.sign(b.advantages[i]) && flips++,
    );
    const est = (s: ObjectiveSideValues) =>
      `${s.config.adv_estimator}${s.config.adv_estimator === 'grpo' ? `, scale_rewards ${s.config.scale_rewards}` : ''}`;
    lines.push(
      `Advantages from the same rewards: A (${est(a)}) mean |A| ${num(meanAbsAdvantage(a))}, B (${est(b)}) ${num(meanAbsAdvantage(b))}` +
        `${flips ? `; ${flips} tokens change sign` : '; no token changes sign'}.`,
    );
  }

  // The terms beside the policy loss: they push tokens whatever their advantage (a tied group's tokens too).
  const kl = (s: ObjectiveSideValues) =>
    lossKlCoef(s.config) > 0 ? `beta ${s.config.beta} × ${s.config.kl_estimator}` : 'none';
  if (kl(a) !== kl(b))
    lines.push(
      `KL to the reference in the loss: A ${kl(a)}, B ${kl(b)}; it pushes every token, those of groups whose rewards tie too.`,
    );
  if (a.config.entropy_coef !== b.config.entropy_coef)
    lines.push(`Entropy bonus alpha: A ${num(a.config.entropy_coef)}, B ${num(b.config.entropy_coef)}.`);

  if (totalA === 0 || totalB === 0) {
    const which = [totalA === 0 ? 'A' : null, totalB === 0 ? 'B' : null].filter(Boolean).join(' and ');
    lines.push(
      `${which} ${which.length > 1 ? 'push' : 'pushes'} no gradient on this batch (every advantage is 0, e.g. each group's rewards tie, and no KL or entropy term), so there is no shift to compare.`,
    );
  } else {
    const parts = cells.map((c) => {
      const delta = c.gradShareB - c.gradShareA;
      const verb = Math.abs(delta) < 0.005 ? 'about the same' : delta > 0 ? 'gains' : 'loses';
      return `${cellName(c)} (${c.completions}): ${pct(c.gradShareA)} under A, ${pct(c.gradShareB)} under B (${verb})`;
    });
    lines.push(
      `Share of the gradient (sum of |d loss / d log p|) by completion, long meaning more than ${num(medianLength)} tokens: ${parts.join('; ')}.`,
    );
    const byDelta = [...completions].sort((x, y) => y.gradShareB - y.gradShareA - (x.gradShareB - x.gradShareA));
    const gain = byDelta[0];
    const lose = byDelta[byDelta.length - 1];
    const desc = (c: CompletionShift) =>
      `group ${c.group} #${c.index} (${c.length} tokens, ${c.correct ? 'correct' : 'wrong'}): ${pct(c.gradShareA)} -> ${pct(c.gradShareB)}`;
    if (gain.gradShareB - gain.gradShareA > 0.005)
      lines.push(`Gains most under B: ${desc(gain)}. Loses most: ${desc(lose)}.`);
  }

  const ca = clipCounts(a);
  const cb = clipCounts(b);
  if (cmp.ratioIsOne)
    lines.push(
      'Every ratio is 1 (the batch was sampled at these parameters), so neither side clips; clipping needs a later epoch (num_iterations > 1) or the latest step after its updates.',
    );
  else {
    let differ = 0;
    a.clipSide.forEach((c, i) => a.mask[i] > 0 && b.mask[i] > 0 && c !== b.clipSide[i] && differ++);
    lines.push(
      `Clipped tokens: A ${ca.low + ca.high} (${ca.low} low, ${ca.high} high), B ${cb.low + cb.high} (${cb.low} low, ${cb.high} high); ${differ} tokens clip differently.`,
    );
  }
  lines.push(`Loss of the batch as one optimizer step: A ${num(a.loss)}, B ${num(b.loss)}.`);

  const topTokens: TokenDifference[] = [];
  for (let r = 0; r < N; r++) {
    for (let t = 0; t < rows[r].length; t++) {
      const i = r * S + t;
      if (a.mask[i] === 0 && b.mask[i] === 0) continue;
      topTokens.push({
        row: r,
        position: t,
        dLogpA: a.dLogp[i],
        dLogpB: b.dLogp[i],
        gradShareA: totalA > 0 ? a.dLogp[i] / totalA : 0,
        gradShareB: totalB > 0 ? b.dLogp[i] / totalB : 0,
        clipA: a.clipSide[i],
        clipB: b.clipSide[i],
      });
    }
  }
  const score = (d: TokenDifference) => Math.abs(d.gradShareB - d.gradShareA) + (d.clipA !== d.clipB ? 1 : 0);
  topTokens.sort((x, y) => score(y) - score(x));
  return { lines, completions, cells, topTokens: topTokens.slice(0, topK), medianLength };
}
