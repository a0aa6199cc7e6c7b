// The rollout inspector's hover: one token's loss term written out with its own numbers plugged in, following
// the objective's definitions (src/reference/objective.ts), and checked against the share the trainer
// recorded for it. Also the token quantities the inspector colours by, the legend of each colouring, and the weight
// w and loss share in words. Pure; no React.

import type { RLConfig } from '../schema/config';
import { aggregationWeight, rolloutCorrectionOf, rolloutCorrectionWeight } from '../schema/objective';
import { TOKEN_PLANES, type CompletionRecord, type TokenPlane } from '../schema/stream';
import { fmt } from './format';

/** One token's numbers, as recorded by the trainer. */
export interface TokenView {
  position: number;
  text: string;
  logp: number;
  logpOld: number;
  logpSampler: number;
  entropy: number;
  ratio: number;
  advantage: number;
  clipSide: number;
  kl: number;
  /** The token's recorded share of the loss: w (policy + beta k - alpha H). */
  loss: number;
  weight: number;
  value: number | null;
}

/** Token `t` of a completion. */
export function tokenView(c: CompletionRecord, t: number, text: string): TokenView {
  const k = c.tokens;
  return {
    position: t,
    text,
    logp: k.logp[t],
    logpOld: k.logpOld[t],
    logpSampler: k.logpSampler[t],
    entropy: k.entropy[t],
    ratio: k.ratio[t],
    advantage: k.advantage[t],
    clipSide: k.clipSide[t],
    kl: k.kl[t],
    loss: k.loss[t],
    weight: k.weight[t],
    value: k.value.length > t ? k.value[t] : null,
  };
}

/** Quantities the inspector can colour tokens by (the planes of a token record, schema/stream.ts). */
export const COLOR_QUANTITIES = TOKEN_PLANES;
export type ColorQuantity = TokenPlane;

export const COLOR_LABELS: Record<ColorQuantity, string> = {
  probability: 'probability pi_theta',
  entropy: 'entropy H',
  ratio: 'ratio rho',
  advantage: 'advantage A',
  clip: 'clipped side',
  kl: 'KL estimate',
  loss: 'loss share',
};

/** The value a token is coloured by, and whether the scale is diverging (centre 0, or 1 for the ratio). */
export function colorValue(t: TokenView, q: ColorQuantity): number {
  switch (q) {
    case 'probability':
      return Math.exp(t.logp);
    case 'entropy':
      return t.entropy;
    case 'ratio':
      return t.ratio;
    case 'advantage':
      return t.advantage;
    case 'clip':
      return t.clipSide;
    case 'kl':
      return t.kl;
    case 'loss':
      return t.loss;
  }
}

/** Masked tokens (w = 0: not in the loss), under every signed quantity. */
export const MASKED_COLOR = 'rgba(128,128,128,0.18)';
/** A signed quantity at its centre (0, or 1 for the ratio): no colour to speak of. */
const CENTRE_COLOR = 'rgba(128,128,128,0.08)';
/** A value that is not finite (NaN, Infinity): loud on purpose. */
const NOT_FINITE_COLOR = 'rgba(255,0,255,0.5)';

/** Sequential scale: `a` in [0, 1] from pale to deep blue. */
export function sequentialColor(a: number): string {
  return `rgba(59,91,219,${(0.08 + 0.72 * Math.min(1, Math.max(0, a))).toFixed(3)})`;
}

/** Diverging scale: `d` the signed distance from the centre, `a` in (0, 1] its size: red above, blue below. */
export function divergingColor(d: number, a: number): string {
  if (d === 0 || a === 0) return CENTRE_COLOR;
  return d > 0 ? `rgba(207,34,46,${(0.1 + 0.7 * a).toFixed(3)})` : `rgba(59,91,219,${(0.1 + 0.7 * a).toFixed(3)})`;
}

/** The centre of a diverging quantity: 1 for the ratio (unchanged since sampling), 0 for the others. */
const centreOf = (q: ColorQuantity) => (q === 'ratio' ? 1 : 0);

/** Probability and entropy are coloured on a sequential scale; the rest diverge around their centre. */
const isSequential = (q: ColorQuantity) => q === 'probability' || q === 'entropy';

/**
 * A CSS colour for a token: sequential (white to blue) for probability and entropy (entropy scaled by `scale`,
 * the largest in view); diverging (blue below, red above the centre) for the signed quantities, scaled by the
 * largest magnitude in view. Masked tokens are grey.
 */
export function tokenColor(t: TokenView, q: ColorQuantity, scale: number): string {
  if (t.weight === 0 && !isSequential(q)) return MASKED_COLOR;
  const v = colorValue(t, q);
  if (!Number.isFinite(v)) return NOT_FINITE_COLOR;
  if (isSequential(q)) return sequentialColor(q === 'probability' ? v : scale > 0 ? v / scale : 0);
  const d = v - centreOf(q);
  return divergingColor(d, scale > 0 ? Math.min(1, Math.abs(d) / scale) : 0);
}

/** One entry of a colour legend: a swatch and what a token of that colour means. */
export interface LegendSwatch {
  color: string;
  meaning: string;
}

/** What the inspector's colours mean under one quantity: the swatches, and what the full colour stands for. */
export interface ColorLegend {
  swatches: LegendSwatch[];
  /** The value at which the colour is full strength (the scale of the tokens in view). */
  scaleNote: string;
}

/**
 * The legend of the inspector's colouring by `q`, the colours drawn by tokenColor itself (so the legend cannot
 * disagree with the tokens), `scale` being colorScale's value for the tokens in view.
 */
export function colorLegend(q: ColorQuantity, scale: number): ColorLegend {
  const full = (d: number) => divergingColor(d, 1);
  const masked: LegendSwatch = { color: MASKED_COLOR, meaning: 'masked: not in the loss (w = 0)' };
  const distance = centreOf(q) === 0 ? `|${COLOR_SYMBOLS[q]}|` : `|${COLOR_SYMBOLS[q]} − ${centreOf(q)}|`;
  const atScale =
    scale > 0
      ? `full colour at ${distance} = ${fmt(scale)}, the largest in view`
      : `every token in view has ${COLOR_SYMBOLS[q]} = ${centreOf(q)}`;
  switch (q) {
    case 'probability':
      return {
        swatches: [
          { color: sequentialColor(0), meaning: 'π_θ near 0: the policy now finds this token unlikely' },
          { color: sequentialColor(0.5), meaning: 'π_θ = 0.5' },
          { color: sequentialColor(1), meaning: 'π_θ near 1: the policy is sure of this token' },
        ],
        scaleNote: 'absolute scale: π_θ from 0 to 1',
      };
    case 'entropy':
      return {
        swatches: [
          { color: sequentialColor(0), meaning: 'H near 0: the policy was sure what comes next' },
          { color: sequentialColor(1), meaning: 'the largest H in view: the policy hesitated most here' },
        ],
        scaleNote: `full colour at H = ${fmt(scale)} nats, the largest in view`,
      };
    case 'ratio':
      return {
        swatches: [
          { color: full(1), meaning: 'ρ > 1: the update made this token more likely than when it was sampled' },
          { color: full(-1), meaning: 'ρ < 1: the update made it less likely' },
          { color: CENTRE_COLOR, meaning: 'ρ = 1: unchanged (every token on the first update of a batch)' },
          masked,
        ],
        scaleNote: atScale,
      };
    case 'advantage':
      return {
        swatches: [
          { color: full(1), meaning: 'A > 0: better than its group; the update raises its probability' },
          { color: full(-1), meaning: 'A < 0: worse than its group; the update lowers it' },
          { color: CENTRE_COLOR, meaning: 'A = 0: no signal (e.g. every completion of the group got the same reward)' },
          masked,
        ],
        scaleNote: atScale,
      };
    case 'clip':
      return {
        swatches: [
          { color: full(1), meaning: 'clipped high: ρ > 1 + ε_high with A > 0; passes no gradient' },
          { color: full(-1), meaning: 'clipped low: ρ < 1 − ε with A < 0; passes no gradient' },
          { color: CENTRE_COLOR, meaning: 'not clipped: its gradient flows' },
          masked,
        ],
        scaleNote: 'one colour per side; with one update per batch ρ = 1 and nothing is clipped',
      };
    case 'kl':
      return {
        swatches: [
          { color: full(1), meaning: 'k > 0: π_θ has drifted from the reference π_ref on this token' },
          { color: full(-1), meaning: 'k < 0: possible only with the k1 estimator (log π_θ − log π_ref)' },
          { color: CENTRE_COLOR, meaning: 'k = 0: as the reference (always, with beta = 0)' },
          masked,
        ],
        scaleNote: atScale,
      };
    case 'loss':
      return {
        swatches: [
          { color: full(-1), meaning: 'share < 0: minimizing the loss raises this token (usually A > 0)' },
          { color: full(1), meaning: 'share > 0: minimizing the loss lowers this token (usually A < 0)' },
          { color: CENTRE_COLOR, meaning: 'share 0: no push (A = 0)' },
          masked,
        ],
        scaleNote: atScale,
      };
  }
}

/** The symbol of each quantity in formulas and legends. */
const COLOR_SYMBOLS: Record<ColorQuantity, string> = {
  probability: 'π_θ',
  entropy: 'H',
  ratio: 'ρ',
  advantage: 'A',
  clip: 'clip side',
  kl: 'k',
  loss: 'share',
};

/**
 * What the hover's "weight w" and "loss share" are, for this config: w from loss_agg_mode (masked tokens have
 * w = 0), and the share written as the formula docs/algorithms.md#total-loss sums over the tokens.
 */
export function lossShareTerms(c: RLConfig): { weight: string; share: string } {
  const beta = c.beta > 0 && c.kl_placement === 'in_loss';
  const w = aggregationWeight(c.loss_agg_mode);
  return {
    weight: `weight w: how much this token counts in the step's loss, from loss_agg_mode ${c.loss_agg_mode}: w = ${w.formula}, ${w.where}; 0 when masked`,
    share: `loss share: this token's term w·(l${beta ? ' + β·k' : ''} − α·H), l its policy loss; the shares of every token of the optimizer step sum to its loss`,
  };
}

/** The colour scale of a set of tokens: the largest |value - centre| (or the largest value for entropy). */
export function colorScale(tokens: readonly TokenView[], q: ColorQuantity): number {
  let s = 0;
  const centre = centreOf(q);
  for (const t of tokens) {
    const v = colorValue(t, q);
    if (Number.isFinite(v)) s = Math.max(s, Math.abs(v - centre));
  }
  return s;
}

export interface LossExplanation {
  /** The policy term's formula, then with the numbers plugged in, then its value. */
  lines: string[];
  /** The policy term l before the TIS factor. */
  policy: number;
  /** min(pi_old / pi_sampler, C), or 1 without truncated IS. */
  tis: number;
  /** beta k in the loss (0 when the KL is not in the loss). */
  klTerm: number;
  /** -alpha H. */
  entropyTerm: number;
  /** tis * policy + klTerm + entropyTerm. */
  perToken: number;
  /** weight * perToken: the recomputed share of the loss. */
  share: number;
  /** The share the trainer recorded. */
  recorded: number;
  /** The recomputation matches the recorded share. */
  agrees: boolean;
  note?: string;
}

/**
 * Writes out the loss term of one token (docs/algorithms.md#policy-losses, the objective twin's definitions) with its values.
 * `alpha` is the entropy coefficient in effect at that step (it adapts with entropy_target).
 */
export function explainTokenLoss(c: RLConfig, t: TokenView, alpha: number): LossExplanation {
  const A = t.advantage;
  const r = t.ratio;
  const rho = c.importance_sampling_level === 'sequence' ? 's_i' : 'ρ';
  const lines: string[] = [];
  let l = 0;
  switch (c.loss_type) {
    case 'ppo_clip': {
      const eh = c.epsilon_high ?? c.epsilon;
      const lo = 1 - c.epsilon;
      const hi = 1 + eh;
      const rc = c.delta !== null ? Math.min(r, c.delta) : r;
      const u1 = rc * A;
      const u2 = Math.min(Math.max(r, lo), hi) * A;
      l = -Math.min(u1, u2);
      const first = c.delta !== null ? `min(${rho}, δ)` : rho;
      lines.push(`l = −min(${first}·A, clip(${rho}, 1−ε, 1+ε_high)·A)`);
      lines.push(
        `  = −min(${c.delta !== null ? `min(${fmt(r)}, ${fmt(c.delta)})` : fmt(r)} × ${fmt(A)}, clip(${fmt(r)}, ${fmt(lo)}, ${fmt(hi)}) × ${fmt(A)})` +
          ` = −min(${fmt(u1)}, ${fmt(u2)}) = ${fmt(l)}`,
      );
      if (c.clip_ratio_c !== null && A < 0 && l > -c.clip_ratio_c * A) {
        lines.push(
          `dual clip (A < 0): l = min(l, −c·A) = min(${fmt(l)}, −${fmt(c.clip_ratio_c)} × ${fmt(A)}) = ${fmt(-c.clip_ratio_c * A)}`,
        );
        l = -c.clip_ratio_c * A;
      }
      if (t.clipSide !== 0)
        lines.push(
          t.clipSide < 0
            ? `clipped low: ${rho} < 1−ε with A < 0, so no gradient`
            : `clipped high: ${rho} > 1+ε_high with A > 0, so no gradient`,
        );
      break;
    }
    case 'cispo': {
      const w = Math.min(r, c.eps_max);
      l = -w * A * t.logp;
      lines.push('l = −sg(min(ρ, ε_max))·A·log π_θ');
      lines.push(`  = −min(${fmt(r)}, ${fmt(c.eps_max)}) × ${fmt(A)} × ${fmt(t.logp)} = ${fmt(l)}`);
      break;
    }
    case 'sapo': {
      const tau = A > 0 ? c.tau_pos : c.tau_neg;
      const s = 1 / (1 + Math.exp(-tau * (r - 1)));
      l = (-A * 4 * s) / tau;
      lines.push(`l = −A·4σ(τ(${rho}−1))/τ, τ = ${A > 0 ? 'τ_pos' : 'τ_neg'}`);
      lines.push(`  = −${fmt(A)} × 4σ(${fmt(tau)} × (${fmt(r)} − 1)) / ${fmt(tau)} = ${fmt(l)}`);
      break;
    }
    case 'pg':
      l = -A * t.logp;
      lines.push('l = −A·log π_θ');
      lines.push(`  = −${fmt(A)} × ${fmt(t.logp)} = ${fmt(l)}`);
      break;
    case 'gmpo':
      l = -A * r;
      lines.push("l = −A·g_i, g_i = exp(mean_t clip(log ρ_t)) (the geometric mean of the sequence's clipped ratios)");
      lines.push(`  = −${fmt(A)} × ${fmt(r)} = ${fmt(l)}`);
      break;
  }
  let tis = 1;
  const rc = rolloutCorrectionOf(c);
  if (c.tis_cap !== null) {
    tis = Math.min(Math.exp(t.logpOld - t.logpSampler), c.tis_cap);
    lines.push(
      `× min(π_old/π_sampler, C) = min(exp(${fmt(t.logpOld)} − ${fmt(t.logpSampler)}), ${fmt(c.tis_cap)}) = ${fmt(tis)}`,
    );
  } else if (rc && (rc.mode === 'token_truncate' || rc.mode === 'token_mask')) {
    // A token's own weight; the sequence modes need the whole sequence, so the note below names them instead.
    tis = rolloutCorrectionWeight(rc, t.logpOld - t.logpSampler, 0, 1).c;
    const w = `exp(${fmt(t.logpOld)} − ${fmt(t.logpSampler)})`;
    const band = `[${rc.min === null ? '−' : fmt(rc.min)}, ${rc.max === null ? '−' : fmt(rc.max)}]`;
    lines.push(
      rc.mode === 'token_truncate'
        ? `× clamp(π_old/π_sampler, ${band}) = clamp(${w}) = ${fmt(tis)}`
        : `× π_old/π_sampler if inside ${band}, else 0: ${w} → ${fmt(tis)}`,
    );
  }
  const beta = c.beta > 0 && c.kl_placement === 'in_loss' ? c.beta : 0;
  const klTerm = beta * t.kl;
  if (beta > 0) lines.push(`+ β·k (${c.kl_estimator}) = ${fmt(beta)} × ${fmt(t.kl)} = ${fmt(klTerm)}`);
  const entropyTerm = -alpha * t.entropy;
  if (alpha !== 0) lines.push(`− α·H = −${fmt(alpha)} × ${fmt(t.entropy)} = ${fmt(entropyTerm)}`);
  const perToken = tis * l + klTerm + entropyTerm;
  const share = t.weight * perToken;
  lines.push(
    `share of the loss = w × (${tis !== 1 ? `${fmt(tis)} × ` : ''}${fmt(l)}${beta > 0 ? ` + ${fmt(klTerm)}` : ''}${alpha !== 0 ? ` + ${fmt(entropyTerm)}` : ''}) = ${fmt(t.weight)} × ${fmt(perToken)} = ${fmt(share)}`,
  );
  const tol = 1e-4 * Math.max(Math.abs(share), Math.abs(t.loss)) + 1e-7;
  const agrees = Math.abs(share - t.loss) <= tol;
  let note: string | undefined;
  if (t.weight === 0) note = 'masked out: this token is not in the loss';
  else if (!agrees) {
    const selections = [
      c.top_entropy_quantile < 1 && 'top_entropy_quantile',
      c.clip_cov_ratio > 0 && 'Clip-Cov',
      c.kl_cov_ratio > 0 && 'KL-Cov',
      rc?.mode.startsWith('sequence') && `the sequence's rollout correction weight (${rc.mode})`,
      c.off_policy_mask_threshold !== null && 'the off-policy sequence mask',
    ].filter(Boolean);
    note = selections.length
      ? `the trainer recorded ${fmt(t.loss)}: token selection (${selections.join(', ')}) changed this token's policy term`
      : `the trainer recorded ${fmt(t.loss)}, not the ${fmt(share)} recomputed here`;
  }
  return { lines, policy: l, tis, klTerm, entropyTerm, perToken, share, recorded: t.loss, agrees, note };
}
