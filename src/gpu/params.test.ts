// Uniform structs declared once: offsets follow WGSL's uniform layout at awkward shapes (vectors after scalars,
// vec3 followed by a scalar, 16-byte buffer rounding), values pack by field name with range checks, and the
// generated WGSL declares the fields in order.
import { describe, expect, it } from 'vitest';
import { uniformLayout, uniforms } from './params';

describe('uniformLayout', () => {
  it('packs scalars back to back, the buffer rounded to 16 bytes', () => {
    const l = uniformLayout({ a: 'u32', b: 'f32', c: 'i32' });
    expect(l.fields.map((f) => f.offset)).toEqual([0, 4, 8]);
    expect(l.size).toBe(12);
    expect(l.bufferSize).toBe(16);
    expect(uniformLayout({}).bufferSize).toBe(16);
    expect(uniformLayout({ a: 'u32', b: 'u32', c: 'u32', d: 'u32', e: 'f32' }).bufferSize).toBe(32);
  });

  it('aligns vec2 to 8 and vec3 / vec4 to 16, and rounds the struct up to its largest alignment', () => {
    const l = uniformLayout({
      n: 'u32',
      v2: 'vec2<f32>',
      s: 'f32',
      v4: 'vec4<u32>',
      t: 'u32',
      v3: 'vec3<f32>',
      last: 'f32',
    });
    expect(Object.fromEntries(l.fields.map((f) => [f.name, f.offset]))).toEqual({
      n: 0,
      v2: 8,
      s: 16,
      v4: 32,
      t: 48,
      v3: 64,
      last: 76,
    });
    expect(l.size).toBe(80);
    expect(uniformLayout({ a: 'f32', b: 'vec2<i32>', c: 'f32' }).size).toBe(24); // align 8: 20 -> 24
    expect(uniformLayout({ v: 'vec3<f32>' }).size).toBe(16);
  });

  it('rejects types it cannot lay out and names that are not identifiers', () => {
    expect(() => uniformLayout({ m: 'mat2x2<f32>' as never })).toThrow(/not a 32-bit scalar or vector/);
    expect(() => uniformLayout({ 'a-b': 'u32' })).toThrow(/not a WGSL identifier/);
  });
});

describe('UniformStruct', () => {
  const S = uniforms('Params', { n: 'u32', shift: 'i32', v: 'vec2<f32>', alpha: 'f32', q: 'vec4<u32>' });

  it('writes the WGSL struct in declaration order', () => {
    expect(S.wgsl()).toBe(
      'struct Params {\n  n: u32,\n  shift: i32,\n  v: vec2<f32>,\n  alpha: f32,\n  q: vec4<u32>,\n}',
    );
  });

  it('packs by name at the layout offsets, whatever order the values come in', () => {
    const w = S.pack({ q: [1, 2, 3, 0xffffffff], alpha: 1.5, v: [0.25, -2], shift: -1, n: 7 }).toUint32Array();
    expect(w.length).toBe(12); // q at 32, struct 48 bytes
    const f = new Float32Array(w.buffer);
    expect(w[0]).toBe(7);
    expect(w[1]).toBe(0xffffffff);
    expect([f[2], f[3]]).toEqual([0.25, -2]);
    expect(f[4]).toBe(1.5);
    expect([w[5], w[6], w[7]]).toEqual([0, 0, 0]); // padding before q
    expect(Array.from(w.subarray(8))).toEqual([1, 2, 3, 0xffffffff]);
  });

  it('keys equal contents alike, for the uniform buffer cache', () => {
    const a = uniforms('A', { x: 'u32', y: 'f32' }).pack({ x: 1, y: 2 });
    const b = uniforms('B', { x: 'u32', y: 'f32' }).pack({ y: 2, x: 1 });
    expect(a.key()).toBe(b.key());
  });

  it('rejects out-of-range values, missing and unknown fields', () => {
    const P = uniforms('P', { n: 'u32', s: 'i32', v: 'vec2<f32>' });
    expect(() => P.pack({ n: -1, s: 0, v: [0, 0] })).toThrow(/P\.n: -1 is not a u32/);
    expect(() => P.pack({ n: 1.5, s: 0, v: [0, 0] })).toThrow(/not a u32/);
    expect(() => P.pack({ n: 0, s: 2 ** 31, v: [0, 0] })).toThrow(/not an i32/);
    expect(() => P.pack({ n: 0, s: 0, v: [0] as never })).toThrow(/P\.v: expected vec2<f32>/);
    expect(() => P.pack({ n: 0, s: 0 } as never)).toThrow(/P\.v: expected/);
    expect(() => P.pack({ n: 0, s: 0, v: [0, 0], extra: 1 } as never)).toThrow(/no uniform field "extra"/);
  });
});
