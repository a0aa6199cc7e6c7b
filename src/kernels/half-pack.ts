// Typed wrapper of shaders/half-pack.wgsl: an f32 tensor rounded into a bf16 or f16 tensor of the same shape (round
// to nearest even), on the GPU. Same name and argument order as src/reference/half-pack.ts. Used to refresh the
// sampler's half copy of trained weights (GpuModel's rolloutDtype) without a readback.

import raw from '../../shaders/half-pack.wgsl?raw';
import { declareShader, grid, isHalfStorage, uniforms, type Recorder, type Tensor } from '../gpu';
import { WGSL_BLOCKS } from './wgsl-blocks';

const WG = 256;

const PARAMS = uniforms('Params', { n: 'u32' }); // elements
export const HALF_PACK_SHADER = declareShader('half-pack.wgsl', raw, { uniforms: [PARAMS], blocks: WGSL_BLOCKS });
/** The shader with its blocks (half-bits) pasted in. */
const SOURCE = HALF_PACK_SHADER.source;

/** out = `a` rounded to out's half dtype (bf16 or f16), element for element; `a` is f32 of out's size. */
export function packHalf(rec: Recorder, out: Tensor, a: Tensor): void {
  if (!isHalfStorage(out.dtype)) throw new Error(`packHalf: out must be bf16 or f16, got ${out.describe()}`);
  if (a.dtype !== 'f32') throw new Error(`packHalf: the input must be f32, got ${a.describe()}`);
  if (a.size !== out.size) throw new Error(`packHalf: ${a.describe()} and ${out.describe()} differ in size`);
  if (a.size === 0) return;
  const words = Math.ceil(a.size / 2);
  rec.dispatch({
    family: rec.ctx.family('half-pack', SOURCE),
    entry: `half_pack_${out.dtype}`,
    label: `half_pack_${out.dtype}`,
    constants: { WG },
    params: PARAMS.pack({ n: a.size }),
    bindings: [out, a],
    workgroups: grid(Math.ceil(words / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}
