// Rollouts on the GPU: prefill a left-padded batch of prompts, then decode one token per step against the KV
// cache, sampling on the GPU. Nothing is read back per token: one readback at the end, plus a 4-byte-per-row
// "all finished?" check every few steps so a batch that ended early stops early. Several decode steps share one
// command buffer (every step's positions are uploaded once, each step binding its own row), so a GPU whose decode
// step is bound by the submit pays it once per `stepsPerSubmit` steps.

import { tensorArena, Tensor, type Recorder } from '../gpu';
import { decodeFinish, type DecodeBuffers } from '../kernels/decode';
import { sampleTokens, type SamplerOptions } from '../kernels/sampler';
import type { GpuModel } from './gpu-model';
import { maxOf } from '../schema/extremes';
import { DECODE_STEPS_PER_SUBMIT } from '../schema/step-estimate';

export interface GenerateOptions {
  /** Longest completion, in tokens (EOS included). */
  maxNewTokens: number;
  /** Temperature, top-k, top-p, min-p, greedy and the RNG seed; the step counter is the decode position. */
  sampler: Omit<SamplerOptions, 'step'>;
  /** The end-of-sequence id; with several (`eosIds`), a completion ends at the first of any of them. */
  eosId: number;
  /** Every end-of-sequence id when the model has several (at most MAX_EOS_IDS); `eosId` counts either way. */
  eosIds?: readonly number[];
  padId: number;
  /**
   * Record each token's log-prob under the filtered, renormalised distribution it was drawn from (after top-k,
   * top-p, min-p; vLLM's processed_logprobs) instead of the full softmax(z / tau) (the rollout_logprobs knob).
   */
  recordFiltered?: boolean;
  /** Read the finished flags every this many steps to stop early (default 8; 0 never checks). */
  checkEvery?: number;
  /**
   * Decode steps recorded into one command buffer (default 8); a submit also ends wherever the finished flags are
   * read, so with the defaults each check reads after a submit of 8 steps (the prefill is submitted alone).
   */
  stepsPerSubmit?: number;
  /**
   * Awaited once the prefill is submitted, before the first decode step is recorded. The bench waits for the GPU
   * there and reads the clock, so the decode steps are timed on their own rather than as a difference of two runs.
   */
  afterPrefill?: () => Promise<void>;
}

/** The outcome of one batch of rollouts; all (R, S) arrays are row-major with S = maxNewTokens. */
export interface Rollout {
  rows: number;
  maxNewTokens: number;
  /** Completion tokens; padId after a row's end. */
  tokens: Uint32Array;
  /**
   * The sampler's log-prob of each completion token: log softmax(logits / temperature), or under recordFiltered the
   * log-prob in the filtered, renormalised distribution; 0 after the end.
   */
  logprobs: Float32Array;
  /** Entropy of softmax(logits / temperature) at each completion position; 0 after the end. */
  entropies: Float32Array;
  /** 1 for completion tokens (EOS included), 0 after the end. */
  mask: Float32Array;
  /** Completion length per row (EOS included). */
  lengths: Uint32Array;
  /** True where the row ended with an end-of-sequence id (false: cut at maxNewTokens). */
  finished: boolean[];
  /** Decode steps run (prefill included), and readbacks made (the final one and the early-stop checks). */
  steps: number;
  readbacks: number;
}

/** Left-pads prompts to a common length P: tokens (R*P), positions (R*P), first real position per row (R). */
export function leftPad(prompts: readonly (readonly number[])[], padId: number) {
  const R = prompts.length;
  const P = maxOf(prompts.map((p) => p.length));
  const tokens = new Uint32Array(R * P).fill(padId);
  const positions = new Uint32Array(R * P);
  const kvStart = new Uint32Array(R);
  prompts.forEach((p, r) => {
    const start = P - p.length;
    kvStart[r] = start;
    for (let t = 0; t < P; t++) {
      if (t >= start) tokens[r * P + t] = p[t - start];
      positions[r * P + t] = Math.max(0, t - start);
    }
  });
  return { R, P, tokens, positions, kvStart };
}

/**
 * Samples one completion per prompt (repeat a prompt G times for a group). Prompts are token ids (BOS first);
 * they may differ in length. Deterministic for a given seed, model and device.
 */
export async function generate(
  model: GpuModel,
  prompts: readonly (readonly number[])[],
  opts: GenerateOptions,
): Promise<Rollout> {
  const { ctx, config } = model;
  if (prompts.length === 0) throw new Error('generate: no prompts');
  if (prompts.some((p) => p.length === 0)) throw new Error('generate: every prompt needs at least one token (BOS)');
  const stepsPerSubmit = opts.stepsPerSubmit ?? DECODE_STEPS_PER_SUBMIT;
  if (!Number.isInteger(stepsPerSubmit) || stepsPerSubmit < 1)
    throw new Error(`generate: stepsPerSubmit must be a whole number of 1 or more, got ${stepsPerSubmit}`);
  const S = opts.maxNewTokens;
  const pad = leftPad(prompts, opts.padId);
  const { R, P } = pad;
  if (P + S > config.contextLength) {
    throw new Error(
      `generate: prompt length ${P} + maxNewTokens ${S} exceeds the model's context length ${config.contextLength}`,
    );
  }
  const V = config.vocabSize;
  const C = config.dModel;
  const own: Tensor[] = [];
  const t = <T extends Tensor>(x: T) => (own.push(x), x);
  const u32 = (shape: number[], label: string) => t(ctx.tensor<'u32'>(shape, { dtype: 'u32', label }));
  const f32 = (shape: number[], label: string) => t(ctx.tensor(shape, { label }));

  const kv = model.createKvCache(R, P + S);
  const state: DecodeBuffers = {
    current: u32([R], 'current'),
    done: u32([R], 'done'),
    tokens: u32([R, S], 'completion.tokens'),
    logprobs: f32([R, S], 'completion.logprobs'),
    entropies: f32([R, S], 'completion.entropies'),
    mask: f32([R, S], 'completion.mask'),
  };
  const kvStart = t(ctx.fromArray<'u32'>(pad.kvStart, [R], { dtype: 'u32', label: 'kvStart' }));
  const prefillTokens = t(ctx.fromArray<'u32'>(pad.tokens, [R * P], { dtype: 'u32', label: 'prefill.tokens' }));
  const prefillPositions = t(
    ctx.fromArray<'u32'>(pad.positions, [R * P], { dtype: 'u32', label: 'prefill.positions' }),
  );
  const prefillLast = t(
    ctx.fromArray<'u32'>(
      Uint32Array.from({ length: R }, (_, r) => r * P + P - 1),
      [R],
      { dtype: 'u32', label: 'prefill.last' },
    ),
  );
  // Decode step s (1 <= s < S) writes cache position P + s - 1 and rotates row r at P + s - 1 - kvStart[r]. Where
  // the model takes a decode cursor, every step binds the same tensors with the same parameters (no bind group or
  // uniform buffer made per step, the host's largest cost of recording one): the first step's positions, and a
  // cursor set to s - 1 by a copy from the steps' table before the step's dispatches. Otherwise each step binds
  // its row of an (S - 1, stride) plane of positions, uploaded once, the stride padded to a storage-binding offset.
  const useCursor = model.decodeCursorFits;
  const align = ctx.device.limits.minStorageBufferOffsetAlignment / 4;
  const stride = Math.ceil(R / align) * align;
  const planeRows = useCursor ? 1 : Math.max(1, S - 1);
  const positionPlane = new Uint32Array(planeRows * stride);
  for (let s = 1; s < S && s <= planeRows; s++)
    for (let r = 0; r < R; r++) positionPlane[(s - 1) * stride + r] = P + s - 1 - pad.kvStart[r];
  const stepPositions = t(
    ctx.fromArray<'u32'>(positionPlane, [positionPlane.length], { dtype: 'u32', label: 'step.positions' }),
  );
  const cursor = useCursor
    ? {
        tensor: u32([1], 'step.cursor'),
        values: t(
          ctx.fromArray<'u32'>(
            Uint32Array.from({ length: Math.max(1, S - 1) }, (_, i) => i),
            [Math.max(1, S - 1)],
            { dtype: 'u32', label: 'step.cursor_values' },
          ),
        ),
      }
    : null;
  const identity = t(
    ctx.fromArray<'u32'>(
      Uint32Array.from({ length: R }, (_, r) => r),
      [R],
      { dtype: 'u32', label: 'rows' },
    ),
  );
  const head = {
    x: f32([R, C], 'last.x'),
    nf: f32([R, C], 'last.nf'),
    rstd: f32([R], 'last.rstd'),
    logits: f32([R, V], 'last.logits'),
  };
  // The sampler's outputs are views of one buffer, which decode_finish binds once.
  const samples = tensorArena(
    ctx,
    [[R], [R], [R], [R]],
    ['sampled', 'sampled.logprob', 'sampled.entropy', 'sampled.filtered_logprob'],
    'samples',
  );
  t(samples.all);
  const [ids, lp, ent, flp] = samples.views;
  const sampled = new Tensor<'u32'>(ids.buffer, [R], 'u32', 'sampled', ids.byteOffset, false);
  const checkEvery = opts.checkEvery ?? 8;
  let readbacks = 0;
  let steps = 0;
  try {
    let rec: Recorder | null = null;
    for (let s = 0; s < S; s++) {
      const prefill = s === 0;
      rec ??= ctx.recorder(prefill ? 'rollout.prefill' : 'rollout.decode');
      // Half-precision rollouts: the sampler's copy of the weights rounded from the latest f32 ones first.
      if (prefill) model.refreshRolloutWeights(rec);
      const ws = model.workspaceFor(R, prefill ? P : 1, 'infer');
      const stepCursor = cursor && !prefill ? { tensor: cursor.tensor, value: s - 1 } : undefined;
      if (cursor && stepCursor) rec.copy(cursor.tensor, cursor.values.view(s - 1, [1]));
      model.decodeForward(
        rec,
        ws,
        kv,
        prefill ? 0 : P + s - 1,
        prefill
          ? { tokens: prefillTokens, positions: prefillPositions, kvStart }
          : { tokens: state.current, positions: stepPositions.view(stepCursor ? 0 : (s - 1) * stride, [R]), kvStart },
        prefill ? prefillLast : identity,
        head,
        stepCursor,
      );
      sampleTokens(rec, sampled, lp, ent, flp, head.logits, { ...opts.sampler, step: s }, stepCursor);
      decodeFinish(rec, state, sampled, opts.recordFiltered ? flp : lp, ent, {
        step: s,
        cursor: stepCursor,
        eosId: opts.eosId,
        eosIds: opts.eosIds,
        padId: opts.padId,
      });
      rec.countStep();
      steps++;
      const check = checkEvery > 0 && s + 1 < S && (s + 1) % checkEvery === 0;
      if (prefill || check || (s + 1) % stepsPerSubmit === 0 || s + 1 === S) {
        rec.submit();
        rec = null;
      }
      if (prefill && opts.afterPrefill) await opts.afterPrefill();
      if (check) {
        readbacks++;
        const done = await ctx.read(state.done);
        if (done.every((d) => d === 1)) break;
      }
    }
    const [tokens, logprobs, entropies, mask, done] = await ctx.readMany([
      state.tokens,
      state.logprobs,
      state.entropies,
      state.mask,
      state.done,
    ]);
    readbacks++;
    const lengths = new Uint32Array(R);
    for (let r = 0; r < R; r++) for (let s = 0; s < S; s++) lengths[r] += mask[r * S + s];
    return {
      rows: R,
      maxNewTokens: S,
      tokens: tokens as Uint32Array,
      logprobs: logprobs as Float32Array,
      entropies: entropies as Float32Array,
      mask: mask as Float32Array,
      lengths,
      finished: Array.from(done as Uint32Array, (d) => d === 1),
      steps,
      readbacks,
    };
  } finally {
    for (const x of [...own, ...kv.k, ...kv.v]) x.destroy();
  }
}
