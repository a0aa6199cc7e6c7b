// The counted proxies of a rollout (src/gpu/counters.ts): one greedy rollout at one and at two layers of a model,
// from which the dispatches of a decode step split into a fixed part and a part per layer, with the submits and
// readbacks of a rollout, the bytes a decode step moves against the bytes of the weights, and (from a longer
// rollout at each) the bind groups each further decode step creates. Asserted by
// src/model/counts.test.ts; printed by `npm run profile` and the bench.

import { countsSince, type GpuContext } from '../gpu';
import type { ParamArrays } from '../io/checkpoint';
import type { ModelConfig } from '../schema/model-config';
import type { LoraInit } from './gpu-model';
import { GpuPolicy } from './policy';

/** The counts of one decode step and of one rollout. */
export interface DecodeStepCounts {
  /** Dispatches of one decode step (T = 1) per decoder layer. */
  dispatchesPerLayer: number;
  /** Dispatches of one decode step outside the layers (embedding, final norm, head, sampler, bookkeeping). */
  dispatchesFixed: number;
  /** Command buffers submitted per rollout of `tokenSteps` steps (prefill included). */
  submitsPerRollout: number;
  /** Readbacks per rollout. */
  readbacksPerRollout: number;
  /** Token steps of the rollout (prefill included). */
  tokenSteps: number;
  /**
   * Bytes one decode step moves (by the kernels' own cost models) over the bytes of the weights the rollout reads,
   * at two layers, to 3 decimals: 1 would be each weight read once and nothing else.
   */
  bytesOverWeights: number;
  /**
   * Bind groups a decode step creates once the rollout's first decode step has made its own (the rest are cached):
   * per layer and outside the layers. Creating one is the host's largest cost of recording a dispatch.
   */
  bindGroupsPerDecodeStep: { perLayer: number; fixed: number };
}

/** Token steps of the counted rollout: a prefill and 3 decode steps, under the early-stop check's period (8). */
const TOKEN_STEPS = 4;
/** Token steps of the longer rollout whose extra decode steps count the bind groups made per step. */
const LONGER_TOKEN_STEPS = 8;

/** One rollout at `layers` layers: its decode-step dispatches, submits, readbacks, step bytes and weight bytes. */
async function rolloutAt(
  ctx: GpuContext,
  config: ModelConfig,
  params: ParamArrays,
  prompts: readonly (readonly number[])[],
  lora: LoraInit | null,
  layers: number,
  rolloutMergeLora: boolean,
  tokenSteps = TOKEN_STEPS,
) {
  const policy = GpuPolicy.create(ctx, { ...config, nLayers: layers }, params, prompts.length, lora ?? undefined, {
    rolloutMergeLora,
  });
  try {
    const weights = [...policy.model.params.values(), ...policy.model.adapters.values()].reduce(
      (s, t) => s + t.byteLength,
      0,
    );
    const before = ctx.counts.snapshot();
    const rollout = await policy.generate(prompts, {
      maxNewTokens: tokenSteps,
      sampler: { temperature: 1, greedy: true, seed: 0 },
      eosId: config.vocabSize + 1, // never sampled: every row runs the whole length
      padId: 0,
    });
    const c = countsSince(before, ctx.counts.snapshot());
    const decode = c.phases['rollout.decode'];
    if (!decode || decode.steps !== rollout.steps - 1)
      throw new Error(`decodeStepCounts: expected ${rollout.steps - 1} decode steps, got ${decode?.steps ?? 0}`);
    return {
      dispatches: decode.dispatches / decode.steps,
      bytes: decode.bytes / decode.steps,
      weights,
      bindGroups: decode.bindGroups,
      submits: c.submits,
      readbacks: c.readbacks,
      steps: rollout.steps,
    };
  } finally {
    policy.destroy();
  }
}

/**
 * The decode step's counts of `config` (which must have at least two layers; `params` its weights), with `lora`'s
 * adapters or none (`rolloutMergeLora`: merged into the sampler's copy): a greedy rollout of TOKEN_STEPS steps at
 * one layer and at two. bytesOverWeights counts the weights as the params and adapters (not a merged copy).
 */
export async function decodeStepCounts(
  ctx: GpuContext,
  config: ModelConfig,
  params: ParamArrays,
  prompts: readonly (readonly number[])[],
  lora: LoraInit | null,
  { rolloutMergeLora = false }: { rolloutMergeLora?: boolean } = {},
): Promise<DecodeStepCounts> {
  if (config.nLayers < 2) throw new Error(`decodeStepCounts: needs a model of 2 layers or more, got ${config.nLayers}`);
  const one = await rolloutAt(ctx, config, params, prompts, lora, 1, rolloutMergeLora);
  const two = await rolloutAt(ctx, config, params, prompts, lora, 2, rolloutMergeLora);
  const perLayer = two.dispatches - one.dispatches;
  // The longer rollouts' extra decode steps, each made fresh like the short ones: the bind groups per step.
  const extra = LONGER_TOKEN_STEPS - TOKEN_STEPS;
  const perStep = async (short: { bindGroups: number }, layers: number) => {
    const long = await rolloutAt(ctx, config, params, prompts, lora, layers, rolloutMergeLora, LONGER_TOKEN_STEPS);
    return (long.bindGroups - short.bindGroups) / extra;
  };
  const [bindOne, bindTwo] = [await perStep(one, 1), await perStep(two, 2)];
  return {
    dispatchesPerLayer: perLayer,
    dispatchesFixed: one.dispatches - perLayer,
    submitsPerRollout: two.submits,
    readbacksPerRollout: two.readbacks,
    tokenSteps: two.steps,
    bytesOverWeights: Math.round((two.bytes / two.weights) * 1000) / 1000,
    bindGroupsPerDecodeStep: { perLayer: bindTwo - bindOne, fixed: 2 * bindOne - bindTwo },
  };
}
