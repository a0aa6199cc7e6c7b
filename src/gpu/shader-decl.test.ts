// The `// @uniforms` and `// @consts` markers: replaced by the declared struct and constants, and every mismatch
// between a shader's markers and its declaration is an error naming the file.
import { describe, expect, it } from 'vitest';
import { uniforms } from './params';
import { declareShader, flattenConsts } from './shader-decl';

const P = uniforms('Params', { n: 'u32', alpha: 'f32' });

describe('declareShader', () => {
  it('replaces the markers by the struct and the constants, groups named GROUP_KEY', () => {
    const d = declareShader(
      't.wgsl',
      '// @consts\n// @uniforms Params\n@group(0) @binding(0) var<uniform> p: Params;',
      {
        uniforms: [P],
        consts: { WG: 64, MODE: { 'token-mean': 0, seq_mean: 1 } },
      },
    );
    expect(d.source).toBe(
      'const WG: u32 = 64u;\nconst MODE_TOKEN_MEAN: u32 = 0u;\nconst MODE_SEQ_MEAN: u32 = 1u;\nstruct Params {\n  n: u32,\n  alpha: f32,\n}\n@group(0) @binding(0) var<uniform> p: Params;',
    );
    expect(d.consts).toEqual({ WG: 64, MODE_TOKEN_MEAN: 0, MODE_SEQ_MEAN: 1 });
  });

  it('fails on a marker without a declaration, a declaration without a marker, a hand-written struct', () => {
    expect(() => declareShader('t.wgsl', '// @uniforms Other', { uniforms: [P] })).toThrow(
      /t\.wgsl: .*Other.* names no declared/,
    );
    expect(() => declareShader('t.wgsl', 'fn f() {}', { uniforms: [P] })).toThrow(
      /has no "\/\/ @uniforms Params" line/,
    );
    expect(() => declareShader('t.wgsl', '// @uniforms Params\n// @uniforms Params', { uniforms: [P] })).toThrow(
      /placed twice/,
    );
    expect(() => declareShader('t.wgsl', 'struct Params { n: u32 }\n// @uniforms Params', { uniforms: [P] })).toThrow(
      /written by hand/,
    );
    expect(() => declareShader('t.wgsl', '// @uniforms Params', { uniforms: [P], consts: { A: 1 } })).toThrow(
      /no "\/\/ @consts" line/,
    );
    expect(() => declareShader('t.wgsl', '// @uniforms Params\n// @consts', { uniforms: [P] })).toThrow(
      /no constants are declared/,
    );
    expect(() => declareShader('t.wgsl', '// @uniforms  Params', { uniforms: [P] })).toThrow(/malformed marker/);
  });

  it('takes only u32 constants with upper-case names, each once', () => {
    expect(() => flattenConsts({ A: -1 })).toThrow(/not a u32/);
    expect(() => flattenConsts({ A: 0.5 })).toThrow(/not a u32/);
    expect(() => flattenConsts({ wg: 1 })).toThrow(/upper-case/);
    expect(() => flattenConsts({ A_B: 1, A: { b: 2 } })).toThrow(/A_B is declared twice/);
  });
});
