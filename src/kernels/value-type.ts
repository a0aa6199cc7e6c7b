// The value type of the templates of flat and per-channel kernels (shaders/elementwise.wgsl, swiglu.wgsl,
// rmsnorm.wgsl, each declaring `alias V = __V__;`): four floats per invocation, V = vec4<f32>, where the count of
// floats divides by 4, else V = f32. On SwiftShader a vec4 load costs about twice an f32 one, for four values.
// Fills in __V__, __W__ (floats per V) and __TOTAL__ (the sum of the components of a V named v).

import type { GpuContext, KernelFamily } from '../gpu';

const TYPES = {
  f32: { __V__: 'f32', __W__: '1', __TOTAL__: 'v' },
  vec4: { __V__: 'vec4<f32>', __W__: '4', __TOTAL__: 'v.x + v.y + v.z + v.w' },
} as const;

/**
 * The family of `name` for `count` floats (its V is vec4 where count divides by 4; that family is named
 * `${name}-vec4`), and how many values of its V the floats are.
 */
export function valueTypeFamily(
  ctx: GpuContext,
  name: string,
  source: string,
  count: number,
): { family: KernelFamily; values: number } {
  const vec4 = count % 4 === 0;
  const fill = vec4 ? TYPES.vec4 : TYPES.f32;
  const text = Object.entries(fill).reduce((t, [token, value]) => t.replaceAll(token, value), source);
  return { family: ctx.family(vec4 ? `${name}-vec4` : name, text), values: vec4 ? count / 4 : count };
}
