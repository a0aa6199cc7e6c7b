// Typed wrappers of shaders/sampler.wgsl: the GPU sampler (temperature, top-k, top-p, min-p, greedy) driven by
// Philox4x32-10 with the seed and step counter in the uniform parameters, so a decode loop never reads back.
// Same names and argument order as src/reference/sampler.ts, which defines the distribution and outputs exactly.

import raw from '../../shaders/sampler.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import { samplerSettings, type SamplerOptions } from '../reference/sampler';
import { checkCursor, zeroCursor, type DecodeCursor } from './decode';
import { headDims } from './logprob';
import { rowLayout, rowWorkgroups } from './rows';
import { WGSL_BLOCKS, rowFamily } from './wgsl-blocks';

const PARAMS = uniforms('Params', {
  rows: 'u32',
  cols: 'u32',
  seed: 'u32',
  step: 'u32',
  greedy: 'u32', // 1: argmax (greedy flag, or temperature 0)
  topK: 'u32', // 0 (or >= cols): off
  tau: 'f32', // temperature, or 1 when greedy with temperature 0
  topP: 'f32', // 1: off
  logMinP: 'f32', // log(min_p), or -3.4e38 when off
});
export const SAMPLER_SHADER = declareShader('sampler.wgsl', raw, { uniforms: [PARAMS], blocks: WGSL_BLOCKS });

/** shaders/sampler.wgsl with its shared blocks, in the recorder's device's row reduction variant (wgsl-blocks.ts). */
const family = (rec: Recorder) => rowFamily(rec.ctx, 'sampler', SAMPLER_SHADER.source, 'sampler.wgsl');

export type { SamplerOptions } from '../reference/sampler';

/**
 * Samples one token per row of logits. Rows are laid out by rowLayout(V) (rows.ts), as logprobForward's; cost is
 * a few passes over the row, plus 8 per enabled top-k / top-p threshold search (a radix search, 4 bits a pass).
 * @param tokens          (N) u32, overwritten with token ids.
 * @param logprob         (N) log softmax(logits / tau)[token]: the unfiltered sampling distribution, equal bit for
 *                        bit to logprobForward's output with the same temperature (tau = 1 when temperature is 0).
 * @param entropy         (N) entropy of softmax(logits / tau).
 * @param filteredLogprob (N) the token's log-prob under the filtered, renormalised distribution (0 for greedy).
 * @param logits          (N,V) f32, finite.
 * @param cursor          a decode step's cursor (decode.ts): the RNG's step is opts.step - cursor.value plus the
 *                        cursor's GPU value, so one recorded dispatch serves every step.
 */
export function sampleTokens(
  rec: Recorder,
  tokens: Tensor<'u32'>,
  logprob: Tensor,
  entropy: Tensor,
  filteredLogprob: Tensor,
  logits: Tensor,
  opts: SamplerOptions,
  cursor?: DecodeCursor,
): void {
  const kernel = 'sampleTokens';
  const s = samplerSettings(kernel, opts);
  if (cursor) checkCursor(kernel, cursor, s.step);
  const { N, V } = headDims(
    kernel,
    logits,
    tokens,
    [
      [logprob, 'logprob'],
      [entropy, 'entropy'],
      [filteredLogprob, 'filteredLogprob'],
    ],
    'tokens',
  );
  if (N === 0) return;
  if (V === 0) throw new Error(`${kernel}: empty vocabulary`);
  const params = PARAMS.pack({
    rows: N,
    cols: V,
    seed: s.seed,
    step: s.step - (cursor?.value ?? 0),
    greedy: s.greedy ? 1 : 0,
    topK: s.topK,
    tau: s.tau,
    topP: s.topP,
    logMinP: s.minP > 0 ? Math.log(s.minP) : -3.4e38,
  });
  const layout = rowLayout(V); // the same as logprobForward's: bit-identical log-probs and entropies
  rec.dispatch({
    family: family(rec),
    entry: 'sampler_sample',
    constants: { ...layout, FILTERED: (s.topK > 0 && s.topK < V) || s.topP < 1 ? 1 : 0 },
    params,
    bindings: [tokens, logprob, entropy, filteredLogprob, logits, cursor?.tensor ?? zeroCursor(rec.ctx)],
    workgroups: rowWorkgroups(rec, N, layout),
  });
}

/**
 * Test hook for the RNG: words[row, i] = Philox4x32-10(counter (row, step, 0, 0), key (seed, 0))[i].
 * @param words (N,4) u32, overwritten.
 */
export function samplerRandom(
  rec: Recorder,
  words: Tensor<'u32'>,
  rows: number,
  opts: { seed: number; step: number },
): void {
  if (words.dtype !== 'u32' || words.size !== rows * 4)
    throw new Error(`samplerRandom: words must be (${rows},4) u32, got ${words.describe()}`);
  const s = samplerSettings('samplerRandom', { temperature: 1, seed: opts.seed, step: opts.step });
  if (rows === 0) return;
  rec.dispatch({
    family: family(rec),
    entry: 'sampler_random',
    params: PARAMS.pack({ rows, cols: 0, seed: s.seed, step: s.step, greedy: 0, topK: 0, tau: 1, topP: 1, logMinP: 0 }),
    bindings: [words],
    workgroups: grid(Math.ceil(rows / 64), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}
