// The objective A/B as the page draws it: each token's values under A and B (loss share, gradient share, clip
// side), their colours on the inspector's scales, what each colour means, and which tokens the explanation
// highlights. Pure; no React. The comparison itself is src/rl/observation/compare.ts, its words src/schema/compare-explain.ts.

import type { ObjectiveComparison, ObjectiveSideValues } from '../rl/observation/compare';
import type { ComparisonExplanation } from '../schema/compare-explain';
import { MASKED_COLOR, divergingColor, sequentialColor, type LegendSwatch } from './explain';

export type { ComparisonExplanation, CellShift, CompletionShift, TokenDifference } from '../schema/compare-explain';
export { num, pct } from '../schema/compare-explain';
export type { CompareSource, ComparedRow, ObjectiveComparison, ObjectiveSideValues } from '../rl/observation/compare';

/** What the side-by-side tokens are coloured by. */
export const COMPARE_QUANTITIES = ['share', 'grad', 'clip'] as const;
export type CompareQuantity = (typeof COMPARE_QUANTITIES)[number];

export const COMPARE_LABELS: Record<CompareQuantity, string> = {
  share: 'loss share',
  grad: 'd loss / d log p (share of the gradient)',
  clip: 'clip side',
};

/** One token under one side. */
export interface ComparedToken {
  position: number;
  text: string;
  /** Not in this side's loss (w = 0). */
  masked: boolean;
  /** |contribution| over the side's sum: its share of the total |loss|. */
  share: number;
  /** d loss / d log p. */
  dLogp: number;
  /** d loss / d log p over the side's sum of |d loss / d log p|. */
  gradShare: number;
  clip: number;
  advantage: number;
  ratio: number;
  weight: number;
}

/** The tokens of completion `row` under one side. */
export function comparedTokens(
  c: ObjectiveComparison,
  side: ObjectiveSideValues,
  row: number,
  texts: readonly string[],
): ComparedToken[] {
  let total = 0;
  for (const g of side.dLogp) total += Math.abs(g);
  return Array.from({ length: c.rows[row].length }, (_, t) => {
    const i = row * c.S + t;
    return {
      position: t,
      text: texts[t] ?? '',
      masked: side.mask[i] === 0,
      share: side.lossShare[i],
      dLogp: side.dLogp[i],
      gradShare: total > 0 ? side.dLogp[i] / total : 0,
      clip: side.clipSide[i],
      advantage: side.advantages[i],
      ratio: side.ratio[i],
      weight: side.weight[i],
    };
  });
}

export function comparedValue(t: ComparedToken, q: CompareQuantity): number {
  return q === 'share' ? t.share : q === 'grad' ? t.gradShare : t.clip;
}

/** The colour scale of a quantity over both sides (the largest |value|), so A's and B's colours compare. */
export function comparedScale(c: ObjectiveComparison, q: CompareQuantity): number {
  if (q === 'clip') return 1;
  let s = 0;
  for (const side of [c.a, c.b]) {
    const values = q === 'share' ? side.lossShare : side.dLogp;
    let total = 1;
    if (q === 'grad') {
      total = 0;
      for (const g of side.dLogp) total += Math.abs(g);
      if (total === 0) continue;
    }
    for (const v of values) s = Math.max(s, Math.abs(v) / total);
  }
  return s;
}

/** A token's colour: the inspector's sequential scale for the loss share, its diverging scale for the others. */
export function comparedColor(t: ComparedToken, q: CompareQuantity, scale: number): string {
  if (t.masked) return MASKED_COLOR;
  const v = comparedValue(t, q);
  if (q === 'share') return sequentialColor(scale > 0 ? v / scale : 0);
  return divergingColor(v, scale > 0 ? Math.min(1, Math.abs(v) / scale) : 0);
}

/** What the colours mean under a quantity. */
export function comparedLegend(q: CompareQuantity): LegendSwatch[] {
  const masked = { color: MASKED_COLOR, meaning: "not in this side's loss" };
  switch (q) {
    case 'share':
      return [
        { color: sequentialColor(0), meaning: 'little of the loss' },
        { color: sequentialColor(1), meaning: 'the largest share of either side' },
        masked,
      ];
    case 'grad':
      return [
        { color: divergingColor(-1, 1), meaning: 'd loss / d log p < 0: the step raises this token' },
        { color: divergingColor(1, 1), meaning: 'd loss / d log p > 0: the step lowers it' },
        masked,
      ];
    case 'clip':
      return [
        { color: divergingColor(-1, 1), meaning: 'clipped low' },
        { color: divergingColor(1, 1), meaning: 'clipped high (or capped)' },
        masked,
      ];
  }
}

export const clipName = (side: number) => (side < 0 ? 'low' : side > 0 ? 'high' : 'none');

/** Keys `row:position` of the tokens the explanation ranks as differing most. */
export function highlightedTokens(e: ComparisonExplanation): Set<string> {
  return new Set(e.topTokens.map((t) => `${t.row}:${t.position}`));
}
