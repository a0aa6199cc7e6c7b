// RoPE's inverse frequencies, shared by the CPU twin (src/reference/rope.ts) and the GPU wrapper's table
// (src/kernels/rope.ts): plain theta^(-2i/HD), or Llama 3's piecewise rescaling (HF rope_scaling with rope_type
// "llama3", transformers' _compute_llama3_parameters). Pure f64 arithmetic on the host; no tensors.

/** HF `rope_scaling` of type "llama3" (Llama 3.1 / 3.2): long wavelengths slowed by `factor`, short ones kept. */
export interface Llama3RopeScaling {
  ropeType: 'llama3';
  /** Divides the low frequencies (32 for Llama 3.2, 8 for 3.1). */
  factor: number;
  /** Wavelengths longer than originalMaxPositions / lowFreqFactor are divided by factor. */
  lowFreqFactor: number;
  /** Wavelengths shorter than originalMaxPositions / highFreqFactor are kept. */
  highFreqFactor: number;
  /** The context the model was pre-trained at (HF original_max_position_embeddings, 8192). */
  originalMaxPositions: number;
}

/** The RoPE settings of a model: base and optional scaling. */
export interface RopeFrequencySpec {
  theta: number;
  scaling?: Llama3RopeScaling;
}

/**
 * inv_freq[i] for i < HD/2, in f64. Without scaling theta^(-2i/HD). With llama3 scaling, for wavelength
 * w = 2 pi / f and L = originalMaxPositions: w > L / lowFreqFactor gives f / factor, w < L / highFreqFactor keeps
 * f, and in between the smooth blend (1 - s) f / factor + s f with s = (L / w - lowFreqFactor) /
 * (highFreqFactor - lowFreqFactor), as transformers computes it (the mid band is the one neither test selects).
 */
export function ropeInverseFrequencies(spec: RopeFrequencySpec, HD: number): Float64Array {
  const half = HD / 2;
  const out = new Float64Array(half);
  for (let i = 0; i < half; i++) out[i] = Math.pow(spec.theta, (-2 * i) / HD);
  const s = spec.scaling;
  if (!s) return out;
  const L = s.originalMaxPositions;
  const lowWavelen = L / s.lowFreqFactor;
  const highWavelen = L / s.highFreqFactor;
  for (let i = 0; i < half; i++) {
    const f = out[i];
    const wavelen = (2 * Math.PI) / f;
    if (wavelen > lowWavelen) out[i] = f / s.factor;
    else if (wavelen >= highWavelen) {
      const smooth = (L / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      out[i] = (1 - smooth) * (f / s.factor) + smooth * f;
    }
  }
  return out;
}

/** Problems of a llama3 scaling (empty when usable), each naming the HF key. */
export function llama3ScalingProblems(s: Llama3RopeScaling): string[] {
  const problems: string[] = [];
  const pos = (v: number, key: string) => {
    if (!(typeof v === 'number' && Number.isFinite(v) && v > 0))
      problems.push(`rope_scaling.${key} must be a positive number, got ${JSON.stringify(v)}`);
  };
  pos(s.factor, 'factor');
  pos(s.lowFreqFactor, 'low_freq_factor');
  pos(s.highFreqFactor, 'high_freq_factor');
  pos(s.originalMaxPositions, 'original_max_position_embeddings');
  if (!problems.length && !(s.highFreqFactor > s.lowFreqFactor))
    problems.push(
      `rope_scaling.high_freq_factor (${s.highFreqFactor}) must exceed low_freq_factor (${s.lowFreqFactor})`,
    );
  return problems;
}
