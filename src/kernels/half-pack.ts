// Typed wrappers of shaders/half-pack.wgsl: an f32 tensor rounded into a bf16 or f16 tensor of the same shape (round
// to nearest even), and a half tensor widened into an f32 one (exact), on the GPU. Same names and argument order as
// src/reference/half-pack.ts. Used to refresh the sampler's half copy of trained weights (GpuModel's rolloutDtype)
// and its merged LoRA copy of a half base (rolloutMergeLora) without a readback.

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
  launch(rec, `half_pack_${out.dtype}`, out, a);
}

/** out = `a` widened to f32, element for element (exact); `a` is bf16 or f16 of out's size. */
export function unpackHalf(rec: Recorder, out: Tensor, a: Tensor): void {
  if (out.dtype !== 'f32') throw new Error(`unpackHalf: out must be f32, got ${out.describe()}`);
  if (!isHalfStorage(a.dtype)) throw new Error(`unpackHalf: the input must be bf16 or f16, got ${a.describe()}`);
  launch(rec, `half_unpack_${a.dtype}`, out, a);
}

/** One invocation per 32-bit word of the half side: ceil(n / 2) of them. */
function launch(rec: Recorder, entry: string, out: Tensor, a: Tensor): void {
  if (a.size !== out.size) throw new Error(`${entry}: ${a.describe()} and ${out.describe()} differ in size`);
  if (a.size === 0) return;
  const words = Math.ceil(a.size / 2);
  rec.dispatch({
    family: rec.ctx.family('half-pack', SOURCE),
    entry,
    label: entry,
    constants: { WG },
    params: PARAMS.pack({ n: a.size }),
    bindings: [out, a],
    workgroups: grid(Math.ceil(words / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}
