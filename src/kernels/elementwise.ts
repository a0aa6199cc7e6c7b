// Typed wrappers of shaders/elementwise.wgsl. Same names and argument order as src/reference/elementwise.ts.

import raw from '../../shaders/elementwise.wgsl?raw';
import { declareShader, grid, uniforms, type Recorder, type Tensor } from '../gpu';
import { valueTypeFamily } from './value-type';

const WG = 256;

const PARAMS = uniforms('Params', {
  n: 'u32', // elements of type V
  alpha: 'f32', // scale factor, or the fill value
});
export const ELEMENTWISE_SHADER = declareShader('elementwise.wgsl', raw, { uniforms: [PARAMS] });

/** One dispatch over out's values: four per invocation (vec4) where the size divides by 4, else one (value-type.ts). */
function launch(rec: Recorder, entry: string, out: Tensor, inputs: Tensor[], alpha = 0): void {
  for (const t of inputs) {
    if (t.size !== out.size) throw new Error(`${entry}: ${t.describe()} and ${out.describe()} differ in size`);
  }
  const { family, values: items } = valueTypeFamily(rec.ctx, 'elementwise', ELEMENTWISE_SHADER.source, out.size);
  rec.dispatch({
    family,
    entry,
    label: `elementwise.${entry}`,
    constants: { WG },
    params: PARAMS.pack({ n: items, alpha }),
    bindings: [out, ...inputs],
    workgroups: grid(Math.ceil(items / WG), rec.ctx.device.limits.maxComputeWorkgroupsPerDimension),
  });
}

/** out = a + b */
export function add(rec: Recorder, out: Tensor, a: Tensor, b: Tensor): void {
  launch(rec, 'elementwise_add', out, [a, b]);
}

/** out = alpha * a */
export function scale(rec: Recorder, out: Tensor, a: Tensor, alpha: number): void {
  launch(rec, 'elementwise_scale', out, [a], alpha);
}

/** out = value */
export function fill(rec: Recorder, out: Tensor, value: number): void {
  launch(rec, 'elementwise_fill', out, [], value);
}

/** out = a */
export function copy(rec: Recorder, out: Tensor, a: Tensor): void {
  launch(rec, 'elementwise_copy', out, [a]);
}
