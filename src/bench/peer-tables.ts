// The constant tables the benchmark's framework peers (TensorFlow.js, jax-js) feed their attention: RoPE's cos and
// sin in Hugging Face Llama's rotate_half layout, and the additive causal mask. Plain arrays, built once per
// sequence length; the kernels' own RoPE and mask live in shaders/ and src/reference/rope.ts.

import type { ModelConfig } from '../schema/model-config';

/** cos and sin of position t times inv_freq[i] = theta^(-2i/HD), duplicated over both halves: (T, HD) row-major. */
export function ropeTables(
  config: Pick<ModelConfig, 'dModel' | 'nHeads' | 'ropeTheta'>,
  T: number,
): { cos: Float32Array; sin: Float32Array } {
  const HD = config.dModel / config.nHeads;
  const half = HD / 2;
  const cos = new Float32Array(T * HD);
  const sin = new Float32Array(T * HD);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < half; i++) {
      const angle = t * Math.pow(config.ropeTheta, (-2 * i) / HD);
      cos[t * HD + i] = cos[t * HD + i + half] = Math.cos(angle);
      sin[t * HD + i] = sin[t * HD + i + half] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

/** The additive causal mask (T, T): 0 where key j <= query i, -1e9 above the diagonal (softmax gives it 0). */
export function causalBias(T: number): Float32Array {
  const bias = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) bias[i * T + j] = -1e9;
  return bias;
}
