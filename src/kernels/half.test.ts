// GPU-vs-twin tier for the kernels that read half-precision weights (src/kernels/half.cases.ts) and for the KV cache
// stored half (src/kernels/kv-half.cases.ts: its write and attention reading it), on the device as
// it comes (f16 natively where it has shader-f16) and on one created without shader-f16 (f16 through u32 words),
// so both f16 codecs run wherever the adapter has the feature; on an adapter without it both runs take the u32 path.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../gpu';
import { acquireNodeDevice } from '../gpu/node';
import { halfCases } from './half.cases';
import { halfCodec, withHalfOperand, withHalfVec4Operand } from './half-operand';
import { kvHalfCases } from './kv-half.cases';
import { itEachCaseMatchesTwin, useNodeDevice } from '../testing/test-device';

const gpu = useNodeDevice();

describe('half-weight kernels on the GPU match their twins on the rounded weights', () => {
  itEachCaseMatchesTwin(gpu, halfCases());
});

describe('the KV cache stored half: its write bit-exact, attention reading it equal to the twin on the rounded values', () => {
  itEachCaseMatchesTwin(gpu, kvHalfCases());
});

describe('the same cases on a device without shader-f16 (f16 read through unpack2x16float)', () => {
  let ctx: GpuContext | undefined;
  beforeAll(async () => {
    ctx = await acquireNodeDevice({ withoutFeatures: ['shader-f16'] });
  });
  afterAll(() => ctx?.destroy());
  it('falls back to the u32 codec for f16, not an error', () => {
    expect(halfCodec('f16', ctx!.device)).toBe('f16-packed');
    expect(halfCodec('bf16', ctx!.device)).toBe('bf16');
  });
  itEachCaseMatchesTwin(
    {
      get ctx() {
        return ctx!;
      },
    },
    // The f16 cases of the register-tiled variants and the embedding: the u32 codec is one loader for every variant.
    halfCases().filter((c) => / f16 /.test(c.name) && /^(matmul (blocked|vec4|wide) |embedding)/.test(c.name)),
  );
  // The half KV cache's f16 cases: attention's scalar (lanes) and vec4 (rows) loaders through u32 words.
  itEachCaseMatchesTwin(
    {
      get ctx() {
        return ctx!;
      },
    },
    kvHalfCases().filter((c) => / f16 /.test(c.name)),
  );
});

describe('withHalfOperand', () => {
  const src = [
    '@group(0) @binding(3) var<storage, read> B: array<f32>; // weights',
    '@group(0) @binding(3) var<storage, read> B4: array<vec4<f32>>;',
    'fn f(i: u32) -> f32 { return B[i + u32(B[0])] + B4[i][1]; } // B[ in a comment stays',
  ].join('\n');

  it('reads every element through the loader, nested indexing included, comments untouched', () => {
    const out = withHalfOperand(src, 'B', 'bf16', 'B4');
    expect(out).toContain('return load_B(i + u32(load_B(0))) + load_B4(i)[1];');
    expect(out).toContain('// B[ in a comment stays');
    expect(out).not.toMatch(/array<f32>|array<vec4<f32>>/);
    expect(withHalfOperand(src, 'B', 'f16-native', 'B4').startsWith('enable f16;\n')).toBe(true);
  });

  it('refuses a kernel whose operand is not declared as expected', () => {
    expect(() => withHalfOperand(src, 'W', 'bf16')).toThrow(/no "var<storage, read> W: array<f32>"/);
    expect(() => withHalfVec4Operand(src, 'B', 'bf16')).toThrow(/no "var<storage, read> B: array<vec4<f32>>"/);
  });

  it('reads an array declared only as vec4s through one vec4 loader per codec', () => {
    const v4 = [
      '@group(0) @binding(4) var<storage, read> K: array<vec4<f32>>; // keys',
      'fn g(i: u32) -> vec4<f32> { return K[i] + K[K[0].x]; }',
    ].join('\n');
    for (const codec of ['bf16', 'f16-packed', 'f16-native'] as const) {
      const out = withHalfVec4Operand(v4, 'K', codec);
      expect(out).toContain('return load_K(i) + load_K(load_K(0).x);');
      expect(out).not.toMatch(/array<vec4<f32>>|fn load_K\(i: u32\) -> f32/);
      expect(out.startsWith('enable f16;\n')).toBe(codec === 'f16-native');
    }
  });
});
