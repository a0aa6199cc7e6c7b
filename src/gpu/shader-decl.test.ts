// A kernel's declared uniform structs and constants checked against the shader as written: each must stand in the
// file once, exactly as the declaration writes it; every mismatch is an error naming the file. With blocks, the
// declared source holds each block's text in place of the file's stand-ins, and is what is checked.
import { describe, expect, it } from 'vitest';
import { uniforms } from './params';
import { declareShader, flattenConsts } from './shader-decl';

const P = uniforms('Params', { n: 'u32', alpha: 'f32' });
const STRUCT = 'struct Params {\n  n: u32,\n  alpha: f32,\n}';

describe('declareShader', () => {
  it('accepts the file that declares the struct and the constants as declared, groups named GROUP_KEY', () => {
    const text = `const WG: u32 = 64u;\nconst MODE_TOKEN_MEAN: u32 = 0u;\nconst MODE_SEQ_MEAN: u32 = 1u;\n${STRUCT}\n@group(0) @binding(0) var<uniform> p: Params;`;
    const d = declareShader('t.wgsl', text, {
      uniforms: [P],
      consts: { WG: 64, MODE: { 'token-mean': 0, seq_mean: 1 } },
    });
    expect(d.source).toBe(text);
    expect(d.consts).toEqual({ WG: 64, MODE_TOKEN_MEAN: 0, MODE_SEQ_MEAN: 1 });
  });

  it('fails on a struct missing, written otherwise or twice, and on a constant missing, differing or twice', () => {
    expect(() => declareShader('t.wgsl', 'fn f() {}', { uniforms: [P] })).toThrow(
      /t\.wgsl: struct Params must be declared once exactly as its UniformStruct writes it, found 0/,
    );
    expect(() => declareShader('t.wgsl', 'struct Params { n: u32, alpha: f32 }', { uniforms: [P] })).toThrow(/found 0/);
    expect(() => declareShader('t.wgsl', `${STRUCT}\n${STRUCT}`, { uniforms: [P] })).toThrow(/found 2/);
    expect(() => declareShader('t.wgsl', `${STRUCT}\nstruct Params { n: u32 }`, { uniforms: [P] })).toThrow(
      /struct Params is declared 2 times/,
    );
    expect(() => declareShader('t.wgsl', STRUCT, { uniforms: [P], consts: { A: 1 } })).toThrow(
      't.wgsl: constant A must be declared once as "const A: u32 = 1u;"',
    );
    expect(() => declareShader('t.wgsl', `${STRUCT}\nconst A: u32 = 2u;`, { uniforms: [P], consts: { A: 1 } })).toThrow(
      /constant A must be declared once/,
    );
    expect(() =>
      declareShader('t.wgsl', `${STRUCT}\nconst A: u32 = 1u;\nconst A: u32 = 1u;`, { uniforms: [P], consts: { A: 1 } }),
    ).toThrow(/constant A must be declared once/);
  });

  it("holds each block's text where the file holds its stand-ins, and checks the filled source", () => {
    const blocks = { half: 'const B: u32 = 2u;\nfn half(x: u32) -> u32 { return x / B; }' };
    const written = `${STRUCT}\n// @region half\nfn half(x: u32) -> u32 { return x; }\n// @end half\n`;
    const d = declareShader('t.wgsl', written, { uniforms: [P], blocks });
    expect(d.source).toBe(`${STRUCT}\n// @region half\n${blocks.half}\n// @end half\n`);
    expect(declareShader('t.wgsl', written, { uniforms: [P] }).source).toBe(written);
    expect(() => declareShader('t.wgsl', written, { uniforms: [P], consts: { B: 2 }, blocks: { half: '' } })).toThrow(
      /constant B must be declared once/,
    );
    expect(declareShader('t.wgsl', written, { uniforms: [P], consts: { B: 2 }, blocks }).consts).toEqual({ B: 2 });
  });

  it('takes only u32 constants with upper-case names, each once', () => {
    expect(() => flattenConsts({ A: -1 })).toThrow(/not a u32/);
    expect(() => flattenConsts({ A: 0.5 })).toThrow(/not a u32/);
    expect(() => flattenConsts({ wg: 1 })).toThrow(/upper-case/);
    expect(() => flattenConsts({ A_B: 1, A: { b: 2 } })).toThrow(/A_B is declared twice/);
  });
});
