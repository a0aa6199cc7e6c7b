// Drift between a kernel family's TypeScript declaration and its WGSL fails here, without a GPU: every shader with
// uniforms is declared, each uniform struct and declared constant stands in the file as written exactly as the
// declaration writes it, every field the WGSL reads (its shared blocks included) is declared and every declared
// field is read.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PEAK_SHADER } from '../bench/peak';
import type { ShaderDeclaration, UniformStruct } from '../gpu';
import { fillBlockRegions } from '../gpu/specialize';
import { ATTENTION_ROWS_LOOPED_SHADER, ATTENTION_ROWS_SHADER, ATTENTION_SHADER } from './attention';
import { BIAS_SHADER } from './bias';
import { BRADLEY_TERRY_SHADER } from './bradley-terry';
import { CROSS_ENTROPY_SHADER } from './cross-entropy';
import { DECODE_SHADER } from './decode';
import { ELEMENTWISE_SHADER } from './elementwise';
import { EMBEDDING_SHADER } from './embedding';
import { HALF_PACK_SHADER } from './half-pack';
import { KL_SHADER } from './kl';
import { LOGPROB_SHADER } from './logprob';
import { MATMUL_SHADER } from './matmul';
import { OBJECTIVE_SHADER } from './objective';
import { OPTIMIZER_SHADER } from './optimizer';
import { PROJECTION_SHADER } from './projection';
import { REDUCE_SHADER } from './reduce';
import { RMSNORM_SHADER } from './rmsnorm';
import { ROPE_SHADER } from './rope';
import { SAMPLER_SHADER } from './sampler';
import { SOFTMAX_SHADER } from './softmax';
import { SWIGLU_SHADER } from './swiglu';
import { VALUE_SHADER } from './value';
import { WEIGHT_STATS_SHADER } from './weight-stats';
import { WGSL_BLOCKS } from './wgsl-blocks';

const DECLARED: readonly ShaderDeclaration[] = [
  ATTENTION_SHADER,
  ATTENTION_ROWS_SHADER,
  ATTENTION_ROWS_LOOPED_SHADER,
  BIAS_SHADER,
  BRADLEY_TERRY_SHADER,
  CROSS_ENTROPY_SHADER,
  DECODE_SHADER,
  ELEMENTWISE_SHADER,
  EMBEDDING_SHADER,
  HALF_PACK_SHADER,
  KL_SHADER,
  LOGPROB_SHADER,
  MATMUL_SHADER,
  OBJECTIVE_SHADER,
  OPTIMIZER_SHADER,
  PROJECTION_SHADER,
  PEAK_SHADER,
  REDUCE_SHADER,
  RMSNORM_SHADER,
  ROPE_SHADER,
  SAMPLER_SHADER,
  SOFTMAX_SHADER,
  SWIGLU_SHADER,
  VALUE_SHADER,
  WEIGHT_STATS_SHADER,
];

const shaderDir = new URL('../../shaders/', import.meta.url);
const code = (wgsl: string) => wgsl.replace(/\/\/.*$/gm, '');
/** `var<uniform> name: Type;` declarations: variable name -> struct name. */
const uniformVars = (wgsl: string) =>
  new Map([...code(wgsl).matchAll(/var<uniform>\s+(\w+)\s*:\s*(\w+)\s*;/g)].map((m) => [m[1], m[2]]));

describe('kernel uniform declarations', () => {
  it('cover every shader with uniforms, each declared once with the file as written, its blocks filled in', () => {
    const withUniforms = readdirSync(shaderDir).filter(
      (f) => f.endsWith('.wgsl') && /var<uniform>/.test(readFileSync(new URL(f, shaderDir), 'utf8')),
    );
    expect(DECLARED.map((d) => d.file).sort()).toEqual(withUniforms.sort());
    // A declaration holds each block's text where the file holds its stand-ins (src/kernels/wgsl-blocks.ts).
    for (const d of DECLARED)
      expect(d.source, d.file).toBe(fillBlockRegions(readFileSync(new URL(d.file, shaderDir), 'utf8'), WGSL_BLOCKS));
  });

  it('stand in the file as written, each uniform struct once, exactly as its declaration writes it', () => {
    for (const d of DECLARED) {
      const declared = new Set(d.uniforms.map((u) => u.name));
      for (const [v, type] of uniformVars(d.source))
        expect(declared.has(type), `${d.file}: var<uniform> ${v}: ${type} is not declared`).toBe(true);
      for (const u of d.uniforms) {
        expect(code(d.source).match(new RegExp(`\\bstruct\\s+${u.name}\\b`, 'g')), d.file).toHaveLength(1);
        expect(d.source.includes(u.wgsl()), `${d.file}: struct ${u.name} as declared`).toBe(true);
      }
      expect(d.source, d.file).not.toMatch(/^\s*\/\/ @(uniforms|consts)\b/m);
    }
  });

  it('declare exactly the fields the shaders read (a struct shared by several shaders: read by one of them)', () => {
    const readOf = new Map<UniformStruct, Set<string>>();
    for (const d of DECLARED) {
      const text = d.source; // its regions hold the shared blocks, which read uniforms too
      const vars = uniformVars(text);
      for (const u of d.uniforms) {
        const names = [...vars].filter(([, type]) => type === u.name).map(([v]) => v);
        const read = names.flatMap((v) =>
          [...code(text).matchAll(new RegExp(`\\b${v}\\.(\\w+)`, 'g'))].map((m) => m[1]),
        );
        expect(
          read.filter((f) => !Object.hasOwn(u.fields, f)),
          `${d.file}: ${u.name} fields read but not declared`,
        ).toEqual([]);
        readOf.set(u, new Set([...(readOf.get(u) ?? []), ...read]));
      }
    }
    for (const [u, read] of readOf) {
      const users = DECLARED.filter((d) => d.uniforms.includes(u)).map((d) => d.file);
      expect(
        Object.keys(u.fields).filter((f) => !read.has(f)),
        `${users.join(', ')}: ${u.name} fields declared but never read`,
      ).toEqual([]);
    }
  });

  it('hold the declared constants once each, with the declared value, each named beside its declaration', () => {
    for (const d of DECLARED) {
      for (const name of Object.keys(d.consts)) {
        expect(
          code(d.source).match(new RegExp(`\\b(const|override|let|var)\\s+${name}\\b`, 'g')),
          `${d.file}: ${name} is declared more than once`,
        ).toHaveLength(1);
        // Named in code, or (an enum's default branch) in a comment, besides its declaration.
        expect(
          d.source.match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0,
          `${d.file}: ${name} is declared but not used`,
        ).toBeGreaterThanOrEqual(2);
        expect(d.source, d.file).toContain(`const ${name}: u32 = ${d.consts[name]}u;`);
      }
    }
  });
});
