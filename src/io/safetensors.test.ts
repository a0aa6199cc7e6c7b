// Tests for the safetensors reader/writer (exact bytes of a small file, round trips of every dtype, half-precision
// conversions, one test per malformed-file rule) and for the Llama checkpoint naming in checkpoint-format.ts.
import { describe, expect, it } from 'vitest';
import {
  bf16BitsToF32,
  f16BitsToF32,
  f32ToBf16Bits,
  f32ToF16Bits,
  readSafetensors,
  readSafetensorsHeader,
  SafetensorsError,
  writeSafetensors,
  type SafetensorsErrorCode,
  type SafetensorsTensorInput,
} from './safetensors';
import {
  assertValidCheckpoint,
  buildLlamaConfigJson,
  CheckpointError,
  formatCheckpointReport,
  llamaTensorNames,
  llamaTensorShape,
  llamaTensorSpecs,
  parseLlamaConfigJson,
  validateCheckpointTensors,
  type CheckpointReport,
  type TensorInfoLike,
} from './hf-layout';

/** A file from a raw header object (serialized as given, unpadded unless `pad`) and `dataBytes` bytes of data. */
function rawFile(
  header: unknown,
  dataBytes: number,
  { pad = true, text }: { pad?: boolean; text?: string } = {},
): Uint8Array {
  let json = new TextEncoder().encode(text ?? JSON.stringify(header));
  if (pad) {
    const padded = new Uint8Array(Math.ceil(json.length / 8) * 8).fill(0x20);
    padded.set(json);
    json = padded;
  }
  const out = new Uint8Array(8 + json.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  for (let i = 0; i < dataBytes; i++) out[8 + json.length + i] = (i * 37) & 0xff;
  return out;
}

function expectError(f: () => unknown, code: SafetensorsErrorCode, message: RegExp): void {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err, `expected SafetensorsError ${code}`).toBeInstanceOf(SafetensorsError);
  expect((err as SafetensorsError).code).toBe(code);
  expect((err as SafetensorsError).message).toMatch(message);
}

describe('writeSafetensors', () => {
  it('writes the exact bytes the spec describes (u64 LE length, compact JSON padded with spaces, data in order)', () => {
    const bytes = writeSafetensors(
      {
        a: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) },
        b: { dtype: 'U8', shape: [1, 3], data: new Uint8Array([7, 8, 9]) },
      },
      { format: 'pt' },
    );
    const json =
      '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[1,3],"data_offsets":[8,11]}}';
    const n = Math.ceil(json.length / 8) * 8;
    expect(new DataView(bytes.buffer).getBigUint64(0, true)).toBe(BigInt(n));
    expect(new TextDecoder().decode(bytes.subarray(8, 8 + n))).toBe(json.padEnd(n, ' '));
    expect([...bytes.subarray(8 + n)]).toEqual([0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 7, 8, 9]);
    expect(bytes.length).toBe(8 + n + 11);
  });

  it('keeps the data buffer 8-byte aligned for any header length', () => {
    for (let len = 1; len < 20; len++) {
      const bytes = writeSafetensors({
        ['x'.repeat(len)]: { dtype: 'F64', shape: [1], data: new Float64Array([Math.PI]) },
      });
      const { dataStart } = readSafetensorsHeader(bytes);
      expect(dataStart % 8).toBe(0);
      expect((readSafetensors(bytes).tensors.get('x'.repeat(len))!.data as Float64Array)[0]).toBe(Math.PI);
    }
  });

  it('rejects arrays of the wrong type, data that does not match the shape, and non-string metadata', () => {
    expectError(
      () => writeSafetensors({ w: { dtype: 'F32', shape: [2], data: new Float64Array(2) } }),
      'INVALID_TENSOR',
      /"w": dtype F32 needs a Float32Array, got Float64Array/,
    );
    expectError(
      () => writeSafetensors({ w: { dtype: 'F32', shape: [2, 3], data: new Float32Array(5) } }),
      'INVALID_TENSOR',
      /shape \[2, 3\] has 6 elements but data has 5/,
    );
    expectError(
      () => writeSafetensors({ w: { dtype: 'Q4' as 'F32', shape: [1], data: new Float32Array(1) } }),
      'UNKNOWN_DTYPE',
      /"Q4"/,
    );
    expectError(
      () => writeSafetensors({ w: { dtype: 'F32', shape: [-1], data: new Float32Array(1) } }),
      'INVALID_SHAPE',
      /\[-1\]/,
    );
    expectError(() => writeSafetensors({}, { n: 3 as unknown as string }), 'INVALID_METADATA', /"n" must be a string/);
  });
});

describe('readSafetensors round trips', () => {
  it('round-trips every dtype, shapes including scalars and zero-size tensors, and metadata', () => {
    const tensors: Record<string, SafetensorsTensorInput> = {
      f32: { dtype: 'F32', shape: [2, 3], data: new Float32Array([1.5, -2, 3e-8, 4e30, -0, Infinity]) },
      f64: { dtype: 'F64', shape: [2], data: new Float64Array([Math.E, -1e300]) },
      f16: { dtype: 'F16', shape: [3], data: new Uint16Array([0x3c00, 0xc000, 0x7bff]) },
      bf16: { dtype: 'BF16', shape: [2], data: new Uint16Array([0x3f80, 0xc040]) },
      i8: { dtype: 'I8', shape: [3], data: new Int8Array([-128, 0, 127]) },
      u8: { dtype: 'U8', shape: [1], data: new Uint8Array([255]) },
      bool: { dtype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) },
      i16: { dtype: 'I16', shape: [1], data: new Int16Array([-30000]) },
      u16: { dtype: 'U16', shape: [1], data: new Uint16Array([65535]) },
      i32: { dtype: 'I32', shape: [], data: new Int32Array([-7]) },
      u32: { dtype: 'U32', shape: [1], data: new Uint32Array([4e9]) },
      i64: { dtype: 'I64', shape: [2], data: new BigInt64Array([-(2n ** 62n), 5n]) },
      u64: { dtype: 'U64', shape: [1], data: new BigUint64Array([2n ** 64n - 1n]) },
      f8: { dtype: 'F8_E4M3', shape: [1], data: new Uint8Array([0x38]) },
      empty: { dtype: 'F32', shape: [0, 4], data: new Float32Array(0) },
    };
    const meta = { format: 'pt', note: 'émoji 😀' };
    const file = readSafetensors(writeSafetensors(tensors, meta));
    expect(file.metadata).toEqual(meta);
    expect([...file.tensors.keys()]).toEqual(Object.keys(tensors));
    for (const [name, t] of Object.entries(tensors)) {
      const got = file.tensors.get(name)!;
      expect(got.dtype).toBe(t.dtype);
      expect(got.shape).toEqual(t.shape);
      expect(got.data.constructor).toBe(t.data.constructor);
      expect([...got.data]).toEqual([...t.data]);
    }
    expect(readSafetensors(writeSafetensors({})).tensors.size).toBe(0);
  });

  it('reads from an unaligned Uint8Array (e.g. a Node Buffer slice) and misaligned tensors by copying', () => {
    const bytes = writeSafetensors({
      odd: { dtype: 'U8', shape: [3], data: new Uint8Array([1, 2, 3]) },
      w: { dtype: 'F32', shape: [2], data: new Float32Array([0.25, -8]) },
      d: { dtype: 'F64', shape: [1], data: new Float64Array([1 / 3]) },
    });
    const host = new Uint8Array(bytes.length + 5);
    host.set(bytes, 5);
    const file = readSafetensors(host.subarray(5));
    expect([...file.tensors.get('w')!.data]).toEqual([0.25, -8]);
    expect([...file.tensors.get('d')!.data]).toEqual([1 / 3]);
    expect([...file.tensors.get('odd')!.data]).toEqual([1, 2, 3]);
    // Also accepts a bare ArrayBuffer.
    expect([...readSafetensors(bytes.slice().buffer).tensors.get('w')!.data]).toEqual([0.25, -8]);
  });

  it('returns views by default and copies on request', () => {
    const bytes = writeSafetensors({ w: { dtype: 'F32', shape: [1], data: new Float32Array([1]) } });
    const view = readSafetensors(bytes).tensors.get('w')!.data;
    const copy = readSafetensors(bytes, { copy: true }).tensors.get('w')!.data;
    expect(view.buffer).toBe(bytes.buffer);
    expect(copy.buffer).not.toBe(bytes.buffer);
  });

  it('converts F16 and BF16 to Float32Array on request (dtype still says what is stored)', () => {
    const values = new Float32Array([1, -2.5, 0.099975586, 65504, 2 ** -24, -0, Infinity]);
    const bytes = writeSafetensors({
      h: { dtype: 'F16', shape: [values.length], data: values },
      b: { dtype: 'BF16', shape: [2], data: new Float32Array([1, -3.140625]) },
    });
    const f = readSafetensors(bytes, { toFloat32: true });
    const h = f.tensors.get('h')!;
    expect(h.dtype).toBe('F16');
    expect(h.data).toBeInstanceOf(Float32Array);
    expect([...h.data]).toEqual([...values]);
    expect([...f.tensors.get('b')!.data]).toEqual([1, -3.140625]);
    expect(readSafetensors(bytes).tensors.get('h')!.data).toBeInstanceOf(Uint16Array);
  });
});

describe('half-precision conversions', () => {
  it('f16: every finite half survives f16 -> f32 -> f16; NaN stays NaN; ties round to even; overflow is infinity', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const back = f32ToF16Bits(f16BitsToF32(all));
    for (let h = 0; h < 65536; h++) {
      const isNaN16 = (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
      if (isNaN16) expect(Number.isNaN(f16BitsToF32(new Uint16Array([back[h]]))[0])).toBe(true);
      else if (back[h] !== h) expect.fail(`half 0x${h.toString(16)} came back as 0x${back[h].toString(16)}`);
    }
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1). 1 + 3*2^-11 -> 1 + 2^-9.
    expect([...f32ToF16Bits([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520, 1e6, -1e6, 2 ** -25, 2 ** -25 * 1.01])]).toEqual([
      0x3c00, 0x3c02, 0x7c00, 0x7c00, 0xfc00, 0x0000, 0x0001,
    ]);
    expect(f16BitsToF32(new Uint16Array([0x0001, 0x03ff, 0x7c00, 0x8000]))).toEqual(
      new Float32Array([2 ** -24, 1023 * 2 ** -24, Infinity, -0]),
    );
  });

  it('bf16: truncation of the f32 bits with round-to-nearest-even', () => {
    expect([...f32ToBf16Bits([1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -2, Infinity])]).toEqual([
      0x3f80, 0x3f80, 0x3f82, 0xc000, 0x7f80,
    ]);
    expect(Number.isNaN(bf16BitsToF32(f32ToBf16Bits([NaN]))[0])).toBe(true);
    expect([...bf16BitsToF32(new Uint16Array([0x3f80, 0xc040]))]).toEqual([1, -3]);
  });
});

describe('malformed files fail with a specific SafetensorsError', () => {
  const good = { w: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] } };

  it('TRUNCATED: shorter than the 8-byte length prefix', () => {
    expectError(() => readSafetensors(new Uint8Array(5)), 'TRUNCATED', /file is 5 bytes; expected at least 8/);
  });

  it('TRUNCATED: data cut short says how many bytes were expected and found', () => {
    const full = rawFile(good, 16);
    const cut = full.subarray(0, full.length - 6);
    expectError(
      () => readSafetensors(cut),
      'TRUNCATED',
      new RegExp(
        `"w" ends at data byte 16 .* expected a ${full.length}-byte file, found ${cut.length} \\(6 bytes missing\\)`,
      ),
    );
  });

  it('TRUNCATED: data_offsets pointing past the end of the file', () => {
    const header = {
      w: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] },
      far: { dtype: 'U8', shape: [4], data_offsets: [16, 20] },
    };
    expectError(
      () => readSafetensors(rawFile(header, 16)),
      'TRUNCATED',
      /"far" ends at data byte 20 but the data buffer has 16 bytes/,
    );
  });

  it('HEADER_BEYOND_FILE: header length larger than the file', () => {
    const f = rawFile(good, 16);
    new DataView(f.buffer).setBigUint64(0, 5000n, true);
    expectError(
      () => readSafetensors(f),
      'HEADER_BEYOND_FILE',
      new RegExp(`header length 5000 needs 5008 bytes but the file has ${f.length}`),
    );
  });

  it('HEADER_TOO_LARGE: absurd header length (e.g. a file that is not safetensors)', () => {
    const f = new TextEncoder().encode('PK\u0003\u0004 this is a zip file, not safetensors');
    expectError(() => readSafetensors(f), 'HEADER_TOO_LARGE', /exceeds the 100000000-byte limit/);
  });

  it('INVALID_HEADER: not starting with "{", not UTF-8, not an object, entry not an object', () => {
    expectError(() => readSafetensors(rawFile(null, 0, { text: ' {}' })), 'INVALID_HEADER', /must start with "\{"/);
    const bad = rawFile({}, 0, { text: '{"\u00ff"}' });
    bad[10] = 0xff; // lone continuation byte: not UTF-8
    expectError(() => readSafetensors(bad), 'INVALID_HEADER', /not valid UTF-8/);
    expectError(
      () => readSafetensors(rawFile({ w: [1, 2] }, 0)),
      'INVALID_HEADER',
      /"w": header entry is not an object/,
    );
  });

  it('INVALID_JSON', () => {
    expectError(
      () => readSafetensors(rawFile(null, 0, { text: '{"w": {"dtype": "F32",' })),
      'INVALID_JSON',
      /header is not valid JSON/,
    );
  });

  it('INVALID_METADATA: __metadata__ values must be strings', () => {
    expectError(
      () => readSafetensors(rawFile({ __metadata__: { step: 3 } }, 0)),
      'INVALID_METADATA',
      /"step" must be a string, got 3/,
    );
    expectError(() => readSafetensors(rawFile({ __metadata__: ['a'] }, 0)), 'INVALID_METADATA', /object of strings/);
  });

  it('UNKNOWN_DTYPE', () => {
    expectError(
      () => readSafetensors(rawFile({ w: { dtype: 'Q4_K', shape: [2], data_offsets: [0, 2] } }, 2)),
      'UNKNOWN_DTYPE',
      /"w": unknown dtype "Q4_K" \(supported: BOOL, U8/,
    );
  });

  it('INVALID_SHAPE', () => {
    expectError(
      () => readSafetensors(rawFile({ w: { dtype: 'F32', shape: [2, -1], data_offsets: [0, 8] } }, 8)),
      'INVALID_SHAPE',
      /"w": shape \[2,-1\]/,
    );
    expectError(
      () => readSafetensors(rawFile({ w: { dtype: 'F32', shape: '2', data_offsets: [0, 8] } }, 8)),
      'INVALID_SHAPE',
      /"w"/,
    );
  });

  it('INVALID_OFFSETS: not a pair, negative, or end before begin', () => {
    for (const off of [[0], [-4, 4], [8, 0], [0, 1.5], 'x']) {
      expectError(
        () => readSafetensors(rawFile({ w: { dtype: 'U8', shape: [4], data_offsets: off } }, 8)),
        'INVALID_OFFSETS',
        /"w": data_offsets/,
      );
    }
  });

  it('SIZE_MISMATCH: offsets that do not span shape x dtype size', () => {
    expectError(
      () => readSafetensors(rawFile({ w: { dtype: 'F32', shape: [2, 3], data_offsets: [0, 20] } }, 20)),
      'SIZE_MISMATCH',
      /"w": shape \[2, 3\] of F32 needs 24 bytes, data_offsets \[0, 20\] span 20/,
    );
  });

  it('OVERLAP: two tensors sharing bytes', () => {
    const header = {
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
      b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] },
    };
    expectError(
      () => readSafetensors(rawFile(header, 12)),
      'OVERLAP',
      /"b" data \[4, 12\) overlaps tensor "a" which ends at 8/,
    );
  });

  it('HOLE: bytes between tensors (or before the first) that belong to none', () => {
    const header = {
      a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
      b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] },
    };
    expectError(
      () => readSafetensors(rawFile(header, 12)),
      'HOLE',
      /bytes \[4, 8\) of the data buffer belong to no tensor \(gap before "b"\)/,
    );
    expectError(
      () => readSafetensors(rawFile({ a: { dtype: 'U8', shape: [2], data_offsets: [2, 4] } }, 4)),
      'HOLE',
      /bytes \[0, 2\)/,
    );
  });

  it('TRAILING_BYTES: data after the last tensor', () => {
    expectError(() => readSafetensors(rawFile(good, 20)), 'TRAILING_BYTES', /4 bytes after the last tensor/);
  });

  it('accepts zero-size tensors sharing an offset and an unpadded header', () => {
    const header = {
      z1: { dtype: 'F32', shape: [0], data_offsets: [0, 0] },
      z2: { dtype: 'I64', shape: [3, 0], data_offsets: [0, 0] },
      w: { dtype: 'U8', shape: [3], data_offsets: [0, 3] },
    };
    const file = readSafetensors(rawFile(header, 3, { pad: false }));
    expect(file.tensors.get('z2')!.shape).toEqual([3, 0]);
    expect([...file.tensors.get('w')!.data]).toEqual([0, 37, 74]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Hugging Face Llama checkpoint naming (src/io/hf-layout.ts), tested here next to the file format it
// validates: tensor names and shapes, config.json parsing, and one test per kind of problem the validator reports.

describe('checkpoint-format: Llama names, shapes and config.json', () => {
  const cfg = buildLlamaConfigJson({
    vocabSize: 99,
    hidden: 64,
    intermediate: 172,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    headDim: 16,
    maxPositions: 128,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
    tiedEmbeddings: true,
    bosId: 1,
    eosId: 2,
    padId: 0,
  });

  it('lists the tensors in Hugging Face order, lm_head only when untied', () => {
    const tied = llamaTensorNames(2, true).map((t) => t.name);
    expect(tied).toHaveLength(1 + 2 * 9 + 1);
    expect(tied.slice(0, 11)).toEqual([
      'model.embed_tokens.weight',
      'model.layers.0.input_layernorm.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.k_proj.weight',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.0.self_attn.o_proj.weight',
      'model.layers.0.post_attention_layernorm.weight',
      'model.layers.0.mlp.gate_proj.weight',
      'model.layers.0.mlp.up_proj.weight',
      'model.layers.0.mlp.down_proj.weight',
      'model.layers.1.input_layernorm.weight',
    ]);
    expect(tied.at(-1)).toBe('model.norm.weight');
    const untied = llamaTensorNames(1, false);
    expect(untied.at(-1)).toEqual({ name: 'lm_head.weight', kind: 'lm_head', layer: null });
    expect(untied[3]).toEqual({ name: 'model.layers.0.self_attn.k_proj.weight', kind: 'k_proj', layer: 0 });
  });

  it('gives HF shapes: Linear weights (out, in), GQA k/v, explicit head_dim', () => {
    const shapes = Object.fromEntries(
      llamaTensorSpecs(cfg).map((s) => [s.name.replace('model.layers.0.', ''), s.shape]),
    );
    expect(shapes['model.embed_tokens.weight']).toEqual([99, 64]);
    expect(shapes['input_layernorm.weight']).toEqual([64]);
    expect(shapes['self_attn.q_proj.weight']).toEqual([64, 64]);
    expect(shapes['self_attn.k_proj.weight']).toEqual([32, 64]);
    expect(shapes['self_attn.v_proj.weight']).toEqual([32, 64]);
    expect(shapes['self_attn.o_proj.weight']).toEqual([64, 64]);
    expect(shapes['mlp.gate_proj.weight']).toEqual([172, 64]);
    expect(shapes['mlp.up_proj.weight']).toEqual([172, 64]);
    expect(shapes['mlp.down_proj.weight']).toEqual([64, 172]);
    expect(shapes['model.norm.weight']).toEqual([64]);
    const wide = { ...cfg, head_dim: 32 };
    expect(llamaTensorShape('q_proj', wide).shape).toEqual([128, 64]);
    expect(llamaTensorShape('o_proj', wide).shape).toEqual([64, 128]);
    expect(llamaTensorShape('k_proj', wide).shape).toEqual([64, 64]);
  });

  it('builds the config.json we write (float32, silu, no biases, LlamaForCausalLM)', () => {
    expect(cfg).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      torch_dtype: 'float32',
      hidden_act: 'silu',
      attention_bias: false,
      mlp_bias: false,
      head_dim: 16,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      pad_token_id: 0,
    });
    expect(parseLlamaConfigJson(JSON.parse(JSON.stringify(cfg)))).toEqual(cfg);
  });

  it('parses a SmolLM2-135M-style config.json, filling defaults (head_dim, GQA)', () => {
    const smol = {
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: 0.0,
      bos_token_id: 0,
      eos_token_id: 0,
      hidden_act: 'silu',
      hidden_size: 576,
      initializer_range: 0.041666666666666664,
      intermediate_size: 1536,
      max_position_embeddings: 8192,
      mlp_bias: false,
      model_type: 'llama',
      num_attention_heads: 9,
      num_hidden_layers: 30,
      num_key_value_heads: 3,
      pretraining_tp: 1,
      rms_norm_eps: 1e-5,
      rope_scaling: null,
      rope_theta: 100000,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      transformers_version: '4.40.1',
      use_cache: true,
      vocab_size: 49152,
    };
    const c = parseLlamaConfigJson(smol);
    expect(c.head_dim).toBe(64);
    expect(c.pad_token_id).toBeNull();
    expect(llamaTensorShape('k_proj', c).shape).toEqual([192, 576]);
    expect(parseLlamaConfigJson({ ...smol, eos_token_id: [128001, 128009] }).eos_token_id).toEqual([128001, 128009]);
    const minimal = parseLlamaConfigJson({
      model_type: 'llama',
      vocab_size: 10,
      hidden_size: 8,
      intermediate_size: 16,
      num_hidden_layers: 1,
      num_attention_heads: 2,
    });
    expect(minimal).toMatchObject({
      num_key_value_heads: 2,
      head_dim: 4,
      tie_word_embeddings: false,
      rope_theta: 10000,
      rms_norm_eps: 1e-6,
    });
  });

  it('rejects configs that are not Llama or use features the engine lacks, listing every problem', () => {
    expect(() => parseLlamaConfigJson({ model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], n_embd: 768 })).toThrow(
      /model_type is "gpt2" \(GPT2LMHeadModel\), not "llama"[\s\S]*vocab_size must be a positive integer/,
    );
    const base = {
      model_type: 'llama',
      vocab_size: 10,
      hidden_size: 8,
      intermediate_size: 16,
      num_hidden_layers: 1,
      num_attention_heads: 4,
    };
    expect(() => parseLlamaConfigJson({ ...base, num_key_value_heads: 3 })).toThrow(
      /num_attention_heads 4 is not a multiple of num_key_value_heads 3/,
    );
    expect(() => parseLlamaConfigJson({ ...base, hidden_size: 10 })).toThrow(
      /hidden_size 10 is not a multiple of num_attention_heads 4/,
    );
    expect(() => parseLlamaConfigJson({ ...base, hidden_act: 'gelu' })).toThrow(/hidden_act "gelu" is not supported/);
    expect(() => parseLlamaConfigJson({ ...base, attention_bias: true, mlp_bias: true })).toThrow(
      /attention_bias true[\s\S]*mlp_bias true/,
    );
    expect(() => parseLlamaConfigJson({ ...base, rope_scaling: { rope_type: 'llama3', factor: 32 } })).toThrow(
      /rope_scaling .* is not supported/,
    );
    expect(() => parseLlamaConfigJson({ ...base, torch_dtype: 'int8' })).toThrow(/torch_dtype "int8"/);
    expect(() => parseLlamaConfigJson([])).toThrow(CheckpointError);
  });
});

describe('checkpoint-format: validateCheckpointTensors', () => {
  const cfg = buildLlamaConfigJson({
    vocabSize: 20,
    hidden: 8,
    intermediate: 12,
    nLayers: 2,
    nHeads: 2,
    nKvHeads: 1,
    headDim: 4,
    maxPositions: 16,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
    tiedEmbeddings: true,
    bosId: 1,
    eosId: 2,
    padId: 0,
  });
  const good = (): Map<string, TensorInfoLike> =>
    new Map(llamaTensorSpecs(cfg).map((s) => [s.name, { dtype: 'F32', shape: s.shape }]));
  const only = (r: CheckpointReport) => r.problems.map((p) => `${p.severity}:${p.kind}:${p.message}`);

  it('accepts a checkpoint written by writeSafetensors, straight from its header', () => {
    const tensors: Record<string, SafetensorsTensorInput> = {};
    for (const s of llamaTensorSpecs(cfg))
      tensors[s.name] = { dtype: 'F32', shape: s.shape, data: new Float32Array(s.shape.reduce((a, b) => a * b, 1)) };
    const header = readSafetensorsHeader(writeSafetensors(tensors, { format: 'pt' }));
    expect(validateCheckpointTensors(cfg, header.entries)).toEqual({ ok: true, problems: [] });
    const asRecord = Object.fromEntries([...good()].map(([k, v]) => [k, { ...v, dtype: 'BF16' }]));
    expect(validateCheckpointTensors(cfg, asRecord).ok).toBe(true);
  });

  it('missing tensor', () => {
    const t = good();
    t.delete('model.layers.1.mlp.up_proj.weight');
    const r = validateCheckpointTensors(cfg, t);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      {
        kind: 'missing',
        severity: 'error',
        name: 'model.layers.1.mlp.up_proj.weight',
        expected: [12, 8],
        message: 'missing tensor model.layers.1.mlp.up_proj.weight',
      },
    ]);
  });

  it('missing lm_head when the config says the embeddings are untied', () => {
    const r = validateCheckpointTensors({ ...cfg, tie_word_embeddings: false }, good());
    expect(only(r)).toEqual([
      'error:missing:missing tensor lm_head.weight (config.json says tie_word_embeddings is false, so the file must hold lm_head.weight)',
    ]);
  });

  it('unexpected tensor', () => {
    const t = good();
    t.set('model.layers.0.self_attn.q_norm.weight', { dtype: 'F32', shape: [4] });
    const r = validateCheckpointTensors(cfg, t);
    expect(only(r)).toEqual([
      'error:unexpected:unexpected tensor model.layers.0.self_attn.q_norm.weight [4] (not part of a LlamaForCausalLM with this config)',
    ]);
  });

  it('shape mismatch names the tensor, the expected and found shapes and where the expected one comes from', () => {
    const t = good();
    t.set('model.layers.0.self_attn.k_proj.weight', { dtype: 'F32', shape: [8, 8] });
    t.set('model.layers.1.mlp.down_proj.weight', { dtype: 'F32', shape: [12, 8] });
    const r = validateCheckpointTensors(cfg, t);
    expect(r.problems.map((p) => [p.name, p.expected, p.found])).toEqual([
      ['model.layers.0.self_attn.k_proj.weight', [4, 8], [8, 8]],
      ['model.layers.1.mlp.down_proj.weight', [8, 12], [12, 8]],
    ]);
    expect(r.problems[0].message).toBe(
      'model.layers.0.self_attn.k_proj.weight: shape [8, 8], expected [4, 8] (num_key_value_heads 1 x head_dim 4, hidden_size 8)',
    );
    expect(r.problems[1].message).toMatch(
      /down_proj.weight: shape \[12, 8\], expected \[8, 12\] .*it is transposed: Hugging Face Linear weights are \(out_features, in_features\)/,
    );
  });

  it('dtype not supported', () => {
    const t = good();
    t.set('model.norm.weight', { dtype: 'I8', shape: [8] });
    expect(only(validateCheckpointTensors(cfg, t))).toEqual([
      'error:dtype:model.norm.weight: dtype I8 is not supported (F32, F16, BF16; quantized checkpoints cannot be loaded)',
    ]);
  });

  it('a GPT-2 file: "this looks like a GPT-2 checkpoint, not Llama"', () => {
    const gpt2: Record<string, TensorInfoLike> = {
      'wte.weight': { dtype: 'F32', shape: [50257, 768] },
      'wpe.weight': { dtype: 'F32', shape: [1024, 768] },
      'h.0.ln_1.weight': { dtype: 'F32', shape: [768] },
      'h.0.attn.c_attn.weight': { dtype: 'F32', shape: [768, 2304] },
      'ln_f.weight': { dtype: 'F32', shape: [768] },
    };
    const r = validateCheckpointTensors(cfg, gpt2);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toEqual({
      kind: 'foreign',
      severity: 'error',
      message: 'this looks like a GPT-2 checkpoint, not Llama (wte.weight, wpe.weight, h.0.ln_1.weight, ...)',
    });
    expect(r.problems.filter((p) => p.kind === 'missing')).toHaveLength(llamaTensorSpecs(cfg).length);
    expect(r.problems.filter((p) => p.kind === 'unexpected')).toHaveLength(5);
    const msg = formatCheckpointReport(r, 3);
    expect(msg.split('\n')).toHaveLength(4);
    expect(msg).toMatch(/^- this looks like a GPT-2 checkpoint[\s\S]*- \.\.\. and \d+ more$/);
  });

  it("recognizes Meta's original naming and names saved without the model. prefix", () => {
    const meta = validateCheckpointTensors(cfg, {
      'tok_embeddings.weight': { dtype: 'BF16', shape: [20, 8] },
      'layers.0.attention.wq.weight': { dtype: 'BF16', shape: [8, 8] },
    });
    expect(meta.problems[0].message).toMatch(
      /^this looks like Meta's original Llama .* not Hugging Face Llama .*convert_llama_weights_to_hf\.py$/,
    );
    const bare = new Map([...good()].map(([k, v]) => [k.replace(/^model\./, ''), v]));
    const r = validateCheckpointTensors(cfg, bare);
    expect(r.problems.find((p) => p.name === 'model.embed_tokens.weight')!.message).toBe(
      'missing tensor model.embed_tokens.weight (found "embed_tokens.weight" without the "model." prefix: saved from LlamaModel rather than LlamaForCausalLM?)',
    );
  });

  it('warns (but accepts) RoPE inv_freq buffers and an lm_head next to tied embeddings', () => {
    const t = good();
    t.set('model.layers.0.self_attn.rotary_emb.inv_freq', { dtype: 'F32', shape: [2] });
    t.set('lm_head.weight', { dtype: 'F32', shape: [20, 8] });
    const r = validateCheckpointTensors(cfg, t);
    expect(r.ok).toBe(true);
    expect(r.problems.map((p) => [p.severity, p.kind, p.name])).toEqual([
      ['warning', 'ignored', 'model.layers.0.self_attn.rotary_emb.inv_freq'],
      ['warning', 'ignored', 'lm_head.weight'],
    ]);
    expect(assertValidCheckpoint(cfg, t).ok).toBe(true);
  });

  it('assertValidCheckpoint throws a CheckpointError listing the errors', () => {
    const t = good();
    t.delete('model.norm.weight');
    t.set('model.layers.0.input_layernorm.weight', { dtype: 'F32', shape: [9] });
    expect(() => assertValidCheckpoint(cfg, t)).toThrow(CheckpointError);
    expect(() => assertValidCheckpoint(cfg, t)).toThrow(
      /checkpoint does not match config.json:\n- model.layers.0.input_layernorm.weight: shape \[9\], expected \[8\] \(hidden_size 8\)\n- missing tensor model.norm.weight/,
    );
  });
});
