// The inspector's hover recomputes a token's loss term from the trainer's per-token records. Checked against the
// objective's CPU twin (the definition the GPU follows) on random batches for every loss type, with dual clip,
// the delta cap, sequence-level ratios, the KL in the loss, an entropy bonus and truncated IS; with token
// selection on, the tokens it changed are the ones that disagree, and the hover says why.
import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random';
import { objectiveForwardBackward, OBJECTIVE_METRICS, OBJECTIVE_RECORDS } from '../reference/objective';
import { host, zeros } from '../core/host-tensor';
import { resolveConfig, type RLConfig } from '../schema/config';
import {
  COLOR_QUANTITIES,
  colorLegend,
  colorScale,
  explainTokenLoss,
  lossShareTerms,
  tokenColor,
  type TokenView,
} from './explain';

const N = 6;
const L = 7;

function batch(seed: number) {
  const rng = new Rng(seed);
  const arr = (f: () => number) => host(Float32Array.from({ length: N * L }, f), [N, L]);
  const mask = host(
    Float32Array.from({ length: N * L }, (_, i) => (i % L < 2 + (Math.floor(i / L) % 5) ? 1 : 0)),
    [N, L],
  );
  const oldLogp = arr(() => -0.2 - 2 * rng.next());
  const logp = host(
    oldLogp.data.map((v) => v + 0.5 * rng.uniform()),
    [N, L],
  );
  const advRow = Array.from({ length: N }, () => rng.uniform(-1.5, 1.5));
  const advantages = host(
    Float32Array.from({ length: N * L }, (_, i) => advRow[Math.floor(i / L)]),
    [N, L],
  );
  return {
    logp,
    oldLogp,
    advantages,
    mask,
    entropy: arr(() => 0.1 + 3 * rng.next()),
    refLogp: host(
      logp.data.map((v) => v + 0.3 * rng.uniform()),
      [N, L],
    ),
    samplerLogp: host(
      oldLogp.data.map((v) => v + 0.05 * rng.uniform()),
      [N, L],
    ),
  };
}

/** Every masked token's view, from the twin's records. */
function tokens(c: RLConfig, seed: number): TokenView[] {
  const inputs = batch(seed);
  const records = zeros([OBJECTIVE_RECORDS.length, N, L]);
  objectiveForwardBackward(
    zeros([1]),
    zeros([N, L]),
    zeros([N, L]),
    records,
    zeros([OBJECTIVE_METRICS.length]),
    inputs,
    c,
  );
  const R = (p: number, i: number) => records.data[p * N * L + i];
  const out: TokenView[] = [];
  for (let i = 0; i < N * L; i++) {
    if (!inputs.mask.data[i]) continue;
    out.push({
      position: i % L,
      text: 'x',
      logp: inputs.logp.data[i],
      logpOld: inputs.oldLogp.data[i],
      logpSampler: inputs.samplerLogp.data[i],
      entropy: inputs.entropy.data[i],
      ratio: R(0, i),
      advantage: inputs.advantages.data[i],
      clipSide: R(1, i),
      kl: R(2, i),
      loss: R(3, i),
      weight: R(4, i),
      value: null,
    });
  }
  return out;
}

const CASES: [string, RLConfig][] = [
  ['grpo (ppo_clip, k3 KL in the loss)', resolveConfig('grpo')],
  ['dapo (clip-higher, token-mean)', resolveConfig('dapo')],
  [
    'dual clip and delta cap with an entropy bonus',
    resolveConfig('grpo', { clip_ratio_c: 3, delta: 1.5, entropy_coef: 0.01, epsilon: 0.1 }),
  ],
  ['gspo (sequence ratio)', resolveConfig('gspo')],
  ['cispo', resolveConfig('cispo', { eps_max: 1.1 })],
  ['sapo', resolveConfig('grpo', { loss_type: 'sapo', beta: 0 })],
  ['reinforce (pg)', resolveConfig('reinforce')],
  ['gmpo', resolveConfig('grpo', { loss_type: 'gmpo', beta: 0, gmpo_clip: 0.2 })],
  ['truncated IS', resolveConfig('dr_grpo', { tis_cap: 1.02, beta: 0.1, kl_estimator: 'k2' })],
  [
    'token_truncate rollout correction',
    resolveConfig('grpo', { rollout_is_mode: 'token_truncate', rollout_is_clip_min: 0.99, rollout_is_clip_max: 1.01 }),
  ],
  [
    'token_mask rollout correction',
    resolveConfig('grpo', { rollout_is_mode: 'token_mask', rollout_is_clip_min: 0.99, rollout_is_clip_max: 1.01 }),
  ],
];

describe('token loss explanation', () => {
  for (const [name, c] of CASES) {
    it(`${name}: the recomputed share equals the twin's record for every token`, () => {
      const ts = tokens(c, 11);
      expect(ts.length).toBeGreaterThan(20);
      for (const t of ts) {
        const ex = explainTokenLoss(c, t, c.entropy_coef);
        expect(ex.agrees, `${ex.lines.join(' | ')} recorded ${t.loss}`).toBe(true);
        expect(ex.share).toBeCloseTo(t.loss, 6);
        expect(ex.note).toBeUndefined();
        expect(ex.lines.at(-1)).toContain('share of the loss = w ×');
      }
    });
  }

  it('writes the formula with the numbers plugged in', () => {
    const c = resolveConfig('grpo', { epsilon: 0.2 });
    const t: TokenView = {
      position: 0,
      text: 'a',
      logp: -0.5,
      logpOld: -0.6,
      logpSampler: -0.6,
      entropy: 1,
      ratio: 1.5,
      advantage: 2,
      clipSide: 1,
      kl: 0.01,
      loss: 0,
      weight: 0.5,
      value: null,
    };
    const ex = explainTokenLoss(c, t, 0);
    expect(ex.lines[0]).toBe('l = −min(ρ·A, clip(ρ, 1−ε, 1+ε_high)·A)');
    expect(ex.lines[1]).toBe('  = −min(1.5 × 2, clip(1.5, 0.8, 1.2) × 2) = −min(3, 2.4) = -2.4');
    expect(ex.policy).toBeCloseTo(-2.4, 12);
    expect(ex.klTerm).toBeCloseTo(0.04 * 0.01, 12);
    expect(ex.share).toBeCloseTo(0.5 * (-2.4 + 0.0004), 12);
    expect(ex.agrees).toBe(false); // recorded 0
    expect(ex.lines).toContain('clipped high: ρ > 1+ε_high with A > 0, so no gradient');
  });

  it("names token selection when it changed a token's term", () => {
    const c = resolveConfig('dapo', { top_entropy_quantile: 0.3 });
    const ts = tokens(c, 5);
    const off = ts.map((t) => explainTokenLoss(c, t, 0)).filter((e) => !e.agrees);
    expect(off.length).toBeGreaterThan(0);
    expect(off.length).toBeLessThan(ts.length);
    for (const e of off) expect(e.note).toContain('top_entropy_quantile');
  });

  it('colours diverging quantities around their centre and greys masked tokens', () => {
    const base: TokenView = {
      position: 0,
      text: 'a',
      logp: -0.1,
      logpOld: -0.1,
      logpSampler: -0.1,
      entropy: 1,
      ratio: 1,
      advantage: 0.5,
      clipSide: 0,
      kl: 0,
      loss: 0,
      weight: 1,
      value: null,
    };
    const hi = { ...base, ratio: 1.2 };
    const lo = { ...base, ratio: 0.8 };
    const scale = colorScale([base, hi, lo], 'ratio');
    expect(scale).toBeCloseTo(0.2, 6);
    expect(tokenColor(hi, 'ratio', scale)).toMatch(/^rgba\(207,34,46,0\.800\)$/);
    expect(tokenColor(lo, 'ratio', scale)).toMatch(/^rgba\(59,91,219,0\.800\)$/);
    expect(tokenColor(base, 'ratio', scale)).toBe('rgba(128,128,128,0.08)');
    expect(tokenColor({ ...base, weight: 0 }, 'advantage', 1)).toBe('rgba(128,128,128,0.18)');
  });

  it("gives every colouring a legend drawn in the tokens' own colours: red above, blue below the centre, grey masked", () => {
    const base: TokenView = {
      position: 0,
      text: 'a',
      logp: Math.log(0.5),
      logpOld: -0.1,
      logpSampler: -0.1,
      entropy: 0,
      ratio: 1,
      advantage: 0,
      clipSide: 0,
      kl: 0,
      loss: 0,
      weight: 1,
      value: null,
    };
    const scale = 0.5;
    const at = (q: string, meaning: RegExp) => {
      const sw = colorLegend(q as never, scale).swatches.find((w) => meaning.test(w.meaning));
      expect(sw, `${q} ${meaning}`).toBeDefined();
      return sw!.color;
    };
    expect(at('ratio', /^ρ > 1/)).toBe(tokenColor({ ...base, ratio: 1 + scale }, 'ratio', scale));
    expect(at('ratio', /^ρ < 1/)).toBe(tokenColor({ ...base, ratio: 1 - scale }, 'ratio', scale));
    expect(at('ratio', /^ρ = 1/)).toBe(tokenColor(base, 'ratio', scale));
    expect(at('clip', /^clipped high/)).toBe(tokenColor({ ...base, clipSide: 1 }, 'clip', 1));
    expect(at('clip', /^clipped low/)).toBe(tokenColor({ ...base, clipSide: -1 }, 'clip', 1));
    expect(at('clip', /^not clipped/)).toBe(tokenColor(base, 'clip', 1));
    expect(at('advantage', /^A > 0/)).toBe(tokenColor({ ...base, advantage: scale }, 'advantage', scale));
    expect(at('loss', /^share < 0/)).toBe(tokenColor({ ...base, loss: -scale }, 'loss', scale));
    expect(at('probability', /π_θ = 0\.5/)).toBe(tokenColor(base, 'probability', 0));
    expect(at('entropy', /largest H/)).toBe(tokenColor({ ...base, entropy: 2 }, 'entropy', 2));
    for (const q of COLOR_QUANTITIES) {
      const legend = colorLegend(q, scale);
      expect(legend.swatches.length, q).toBeGreaterThanOrEqual(2);
      expect(new Set(legend.swatches.map((w) => w.color)).size, `${q}: one colour per meaning`).toBe(
        legend.swatches.length,
      );
      const signed = q !== 'probability' && q !== 'entropy';
      expect(
        legend.swatches.some(
          (w) => w.color === tokenColor({ ...base, weight: 0 }, q, scale) && /masked/.test(w.meaning),
        ),
        q,
      ).toBe(signed);
    }
    expect(colorLegend('advantage', 0.25).scaleNote).toBe('full colour at |A| = 0.25, the largest in view');
    expect(colorLegend('advantage', 0).scaleNote).toBe('every token in view has A = 0');
    expect(colorLegend('ratio', 0.3).scaleNote).toBe('full colour at |ρ − 1| = 0.3, the largest in view');
  });

  it("defines the weight w by the run's loss_agg_mode and the loss share by its terms", () => {
    const grpo = lossShareTerms(resolveConfig('grpo'));
    expect(grpo.weight).toContain('seq-mean-token-mean: w = 1/(N·|y_i|)');
    expect(grpo.share).toContain('w·(l + β·k − α·H)');
    const dapo = lossShareTerms(resolveConfig('dapo'));
    expect(dapo.weight).toContain('token-mean: w = 1/M');
    expect(dapo.share).toContain('w·(l − α·H)');
    expect(lossShareTerms(resolveConfig('dr_grpo')).weight).toContain('w = 1/(N·L_max)');
    expect(lossShareTerms(resolveConfig('reinforce')).weight).toContain('w = 1/N,');
  });
});
