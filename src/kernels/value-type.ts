// The value type of the flat and per-channel kernels (shaders/elementwise.wgsl, swiglu.wgsl, rmsnorm.wgsl, each
// declaring `alias V = f32;` as written): four floats per invocation, V = vec4<f32>, where the count of floats
// divides by 4, else V = f32. On SwiftShader a vec4 load costs about twice an f32 one, for four values. The vec4
// form sets, through src/gpu/specialize.ts, the alias V, the constant W (floats per V) where the shader declares
// it, and the region `total` (the sum of the components of a V named v) where the shader has it.

import type { GpuContext, KernelFamily } from '../gpu';
import { regionNames, specialize } from '../gpu/specialize';

/** The shader with V = vec4<f32> (and W, total() to match). */
export function vec4Form(source: string, shaderName: string): string {
  const hasW = /^const W: u32 = 1u;/m.test(source);
  const hasTotal = regionNames(source, shaderName).includes('total');
  return specialize(
    source,
    {
      values: { V: 'vec4<f32>', ...(hasW ? { W: 4 } : {}) },
      regions: hasTotal ? { total: '  return v.x + v.y + v.z + v.w;' } : {},
    },
    shaderName,
  );
}

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
  const familyName = vec4 ? `${name}-vec4` : name;
  let text = forms.get(familyName);
  if (text === undefined) {
    text = vec4 ? vec4Form(source, `${name}.wgsl`) : specialize(source, {}, `${name}.wgsl`);
    forms.set(familyName, text);
  }
  return { family: ctx.family(familyName, text), values: vec4 ? count / 4 : count };
}

/** Family name -> its specialized text (each shader is specialized once per process). */
const forms = new Map<string, string>();
