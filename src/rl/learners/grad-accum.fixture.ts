// Gradient accumulation's equivalence case, shared by the CPU learner's test (grad-accum.test.ts) and the GPU
// learner's (grad-accum-gpu.test.ts): one optimizer step on a minibatch of 6 ragged rows (masked-token counts differ
// between micro-batches; row 5 has none), taken whole (gradient_accumulation_steps 1) and as k micro-batches, must
// give the same weights after the step and the same step scalars. Test support only.

import { initLoraAdapters, parseLoraTargets } from '../../core/lora-layout';
import { initParams } from '../../core/model-shapes';
import { Rng } from '../../core/random';
import type { ParamArrays } from '../../io/checkpoint';
import { MODEL_PRESETS, type ModelConfig } from '../../schema/model-config';
import { compareArrays, type Tolerance } from '../../reference/compare';
import { DEFAULT_OBJECTIVE_CONFIG, type ObjectiveConfig } from '../../schema/objective';
import { sequenceBatch, takeRows } from '../algorithm/batch';
import { STEP_SCALARS, type Learner, type LearnerInit, type UpdateInputs, type UpdateOptions } from './learner';
import { minibatchRows } from '../algorithm/schedule';

export const GA_MODEL: ModelConfig = { ...MODEL_PRESETS.nano, vocabSize: 97 };
const S = 6;
const PROMPTS = [
  [1, 7, 9],
  [1, 4],
  [1, 30, 31, 32],
  [1, 5],
  [1, 8, 8],
  [1, 2, 3, 4],
];
/** Completion lengths per row: uneven masked tokens per micro-batch (k = 2: 13 vs 7; k = 3: 9, 7, 4), none in row 5. */
const LENGTHS = [6, 4, 3, 5, 2, 0];
const PAD = 0;

function params(seed: number): ParamArrays {
  const p = initParams(GA_MODEL, new Rng(seed), { std: 0.3 });
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Float32Array.from(v.data)]));
}

/** The learner's init: a reference (beta > 0), a critic when asked, LoRA adapters (all random) when asked. */
export function gaInit(opts: { critic?: boolean; lora?: boolean; recompute?: boolean } = {}): LearnerInit {
  const lora = opts.lora ? { rank: 2, alpha: 4, targets: parseLoraTargets(null) } : null;
  const rng = new Rng(11);
  const adapters = lora ? initLoraAdapters(GA_MODEL, lora, rng) : null;
  // B starts at zero in a fresh run; random here so A gets a gradient too.
  if (adapters)
    for (const [k, v] of Object.entries(adapters))
      if (k.endsWith('lora_B.weight')) for (let i = 0; i < v.length; i++) v[i] = rng.uniform(-0.2, 0.2);
  return {
    config: GA_MODEL,
    params: params(1),
    reference: params(2),
    needsReference: true,
    needsCritic: opts.critic ?? false,
    maxRows: PROMPTS.length,
    recompute: opts.recompute ?? false,
    ...(lora && adapters ? { lora: { spec: lora, adapters } } : {}),
  };
}

/** The whole minibatch; oldLogp (pi_old) is filled in by gaCase from the learner's own scoring, then moved. */
function minibatch(critic: boolean): UpdateInputs {
  const rng = new Rng(5);
  const rows = PROMPTS.map((_, i) => i);
  const completions = Uint32Array.from({ length: PROMPTS.length * S }, () => 3 + rng.int(GA_MODEL.vocabSize - 3));
  const seq = sequenceBatch(PROMPTS, completions, S, rows, 4, PAD);
  const MS = seq.N * S;
  const f = (lo: number, hi: number) => Float32Array.from({ length: MS }, () => rng.uniform(lo, hi));
  return {
    seq,
    advantages: f(-1, 1),
    mask: Float32Array.from({ length: MS }, (_, i) => (i % S < LENGTHS[Math.floor(i / S)] ? 1 : 0)),
    samplerLogp: f(-6, -5),
    oldLogp: null,
    ...(critic ? { oldValues: f(-0.1, 0.1), returns: f(-1, 1) } : {}),
  };
}

/** The minibatch as k micro-batches of contiguous rows (as the trainer splits it). */
export function microBatches(inp: UpdateInputs, k: number): UpdateInputs[] {
  const { seq } = inp;
  const take = (x: Float32Array | null | undefined, rows: number[]) => (x ? takeRows(x, S, rows) : x);
  return minibatchRows(seq.N, k).map((rows) => ({
    seq: sequenceBatch(seq.prompts, seq.completions, S, rows, seq.P, PAD),
    advantages: takeRows(inp.advantages, S, rows),
    mask: takeRows(inp.mask, S, rows),
    samplerLogp: takeRows(inp.samplerLogp, S, rows),
    oldLogp: take(inp.oldLogp, rows) as Float32Array | null,
    oldValues: take(inp.oldValues, rows) as Float32Array | undefined,
    returns: take(inp.returns, rows) as Float32Array | undefined,
  }));
}

export interface GaTolerances {
  /** Weights after the step. */
  weights: Tolerance;
  /** Step scalars. */
  scalars: Tolerance;
}

/**
 * The objective both learners' cases use: a k3 KL in the loss and an entropy bonus, so every aggregated term has
 * a part in the gradient.
 */
export const GA_OBJECTIVE: ObjectiveConfig = {
  ...DEFAULT_OBJECTIVE_CONFIG,
  beta: 0.05,
  kl_placement: 'in_loss',
  kl_estimator: 'k3',
  entropy_coef: 0.01,
};

/**
 * Weights ~0.3 and AdamW's first step lr g / (|g| + 1) (lr 0.5): a gradient summed in another order (k partial sums
 * of the rows' terms instead of one, on the GPU in f32 matmul reductions) moves by a few f32 ulps of its magnitude,
 * the weight by lr times that.
 */
export const GA_TOLERANCES: GaTolerances = {
  weights: { atol: 1e-6, rtol: 1e-5 },
  scalars: { atol: 1e-6, rtol: 1e-5 },
};

/**
 * Runs one step with gradient_accumulation_steps 1 and with each k of `ks` on fresh learners from `make`, and
 * compares every weight after the step (policy, adapters, critic), every step scalar and the inspected rows' planes.
 * The gradient-norm clip is active (the step's grad_norm exceeds max_grad_norm), so clipping each micro-batch's
 * gradient instead of the sum would move the weights differently. Returns the problems found (none: equal).
 */
export async function gaCase(
  name: string,
  make: () => Learner,
  objective: ObjectiveConfig,
  ks: readonly number[],
  tol: GaTolerances,
  opts: { critic?: boolean } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const critic = opts.critic ?? false;
  const whole = minibatch(critic);
  // pi_old: the policy's own log-probs moved by up to +-0.4 a token and +-0.3 a row, so token and sequence ratios
  // leave the clip range both ways.
  const scorer = make();
  const scored = await scorer.score([whole.seq], 0.8, true);
  scorer.destroy();
  const rng = new Rng(9);
  whole.oldLogp = scored.oldLogp!.map((v, i) => v + rng.uniform(-0.4, 0.4) + (Math.floor(i / S) % 2 ? 0.3 : -0.3));
  const maxGradNorm = 0.05;
  const options: UpdateOptions = {
    objective,
    temperature: 0.8,
    // eps 1 makes AdamW's first step lr g / (|g| + 1), linear in small gradients (see learner.test.ts).
    policy: { lr: 0.5, weightDecay: 0.01, maxGradNorm, eps: 1 },
    ...(critic ? { critic: { lr: 0.5, weightDecay: 0, eps: 1, maxGradNorm, vfCoef: 0.5, cliprange: 0.2 } } : {}),
    inspectRows: [1, 4],
  };
  const run = async (k: number) => {
    const learner = make();
    learner.update(k === 1 ? whole : microBatches(whole, k), options);
    const [result] = await learner.collect();
    const state = await learner.saveState();
    learner.destroy();
    return { result, state };
  };
  const want = await run(1);
  const ws = want.result.scalars;
  if (!(ws.grad_norm > 2 * maxGradNorm)) problems.push(`${name}: the clip is not active (grad_norm ${ws.grad_norm})`);
  if (critic && !(ws['critic/grad_norm'] > 2 * maxGradNorm))
    problems.push(`${name}: the critic's clip is not active (critic/grad_norm ${ws['critic/grad_norm']})`);
  if (!(ws['clip_ratio/region_mean'] > 0)) problems.push(`${name}: no ratio clips`);
  const close = (label: string, got: ArrayLike<number>, w: ArrayLike<number>, t: Tolerance) => {
    const r = compareArrays(got, w, t);
    if (!r.pass) problems.push(`${name}, ${label}: ${r.summary}`);
  };
  for (const k of ks) {
    const got = await run(k);
    for (const s of STEP_SCALARS) {
      if (!critic && (s.startsWith('value') || s.startsWith('critic') || s === 'vpred_mean' || s === 'return_mean'))
        continue;
      close(`k=${k} scalar ${s}`, [got.result.scalars[s]], [want.result.scalars[s]], tol.scalars);
    }
    for (const [part, arrays] of [
      ['policy', want.state.policy],
      ['lora', want.state.lora ?? {}],
      ['critic', want.state.critic ?? {}],
    ] as const) {
      const mine = (got.state[part] ?? {}) as ParamArrays;
      for (const [p, v] of Object.entries(arrays)) close(`k=${k} ${part} ${p}`, mine[p], v, tol.weights);
    }
    // The inspector's planes of the same rows (indices into the minibatch).
    for (const row of options.inspectRows) {
      const [g, w] = [got.result.inspected.get(row)!, want.result.inspected.get(row)!];
      for (const plane of Object.keys(w) as (keyof typeof w)[])
        close(`k=${k} row ${row} ${plane}`, g[plane], w[plane], tol.scalars);
    }
  }
  return problems;
}
