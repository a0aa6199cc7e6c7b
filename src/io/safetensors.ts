// safetensors reader and writer in pure TypeScript over Uint8Array (same code in the browser and in Node).
// Format (https://github.com/huggingface/safetensors): u64 little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__"?: {string: string}}, then the byte buffer.
// This file knows nothing about models; src/io/hf-layout.ts says which names a Llama checkpoint has.
// Assumes a little-endian host (every browser and Node platform in use); it refuses to run otherwise.

import { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits } from '../core/half';

// The half-precision conversions live in src/core/half.ts (the GPU storage and the CPU twins use them too).
export { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits };

/** Every dtype the safetensors spec defines with a whole number of bytes per element. */
export type SafetensorsDtype =
  | 'BOOL'
  | 'U8'
  | 'I8'
  | 'F8_E4M3'
  | 'F8_E5M2'
  | 'I16'
  | 'U16'
  | 'F16'
  | 'BF16'
  | 'I32'
  | 'U32'
  | 'F32'
  | 'F64'
  | 'I64'
  | 'U64';

/** Bytes per element of each dtype. */
export const DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
};

/** Typed array holding a tensor's elements. F16/BF16/F8 are raw bits (Uint16Array/Uint8Array) unless converted. */
export type TensorData =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

/** One tensor: its dtype as stored in the file, its shape (row-major) and its elements. */
export interface SafetensorsTensor {
  dtype: SafetensorsDtype;
  shape: number[];
  data: TensorData;
}

/** What {@link readSafetensors} returns. `tensors` keeps the file's header order. */
export interface SafetensorsFile {
  tensors: Map<string, SafetensorsTensor>;
  metadata: Record<string, string>;
}

/** One header entry, without its data. `dataOffsets` are relative to the start of the byte buffer. */
export interface SafetensorsEntry {
  dtype: SafetensorsDtype;
  shape: number[];
  dataOffsets: [number, number];
}

/** What {@link readSafetensorsHeader} returns: the validated header and where the byte buffer starts. */
export interface SafetensorsHeader {
  entries: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
  /** Byte offset of the data buffer in the file (8 + header length). */
  dataStart: number;
}

/** Machine-readable reason of a {@link SafetensorsError}. */
export type SafetensorsErrorCode =
  | 'TRUNCATED'
  | 'HEADER_BEYOND_FILE'
  | 'HEADER_TOO_LARGE'
  | 'INVALID_HEADER'
  | 'INVALID_JSON'
  | 'INVALID_METADATA'
  | 'UNKNOWN_DTYPE'
  | 'INVALID_SHAPE'
  | 'INVALID_OFFSETS'
  | 'SIZE_MISMATCH'
  | 'OVERLAP'
  | 'HOLE'
  | 'TRAILING_BYTES'
  | 'INVALID_TENSOR';

/** Thrown for malformed files and for tensors that cannot be written; `code` says which rule was broken. */
export class SafetensorsError extends Error {
  override name = 'SafetensorsError';
  constructor(
    readonly code: SafetensorsErrorCode,
    message: string,
  ) {
    super(`safetensors: ${message}`);
  }
}

/** Largest header the reference implementation accepts (100 MB); a bigger length means a corrupt file. */
export const MAX_HEADER_BYTES = 100_000_000;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function assertLittleEndian(): void {
  if (!LITTLE_ENDIAN) throw new Error('safetensors.ts needs a little-endian host');
}

function isDtype(s: unknown): s is SafetensorsDtype {
  return typeof s === 'string' && Object.hasOwn(DTYPE_BYTES, s);
}

function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function fmtShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------------------------
// Writing.

/** A tensor to write. For F16/BF16, `data` may be raw bits (Uint16Array) or Float32Array (rounded to nearest even). */
export interface SafetensorsTensorInput {
  dtype: SafetensorsDtype;
  shape: readonly number[];
  data: TensorData;
}

const ARRAY_FOR_DTYPE: Readonly<Record<SafetensorsDtype, { name: string; is: (d: unknown) => boolean }>> = (() => {
  const u8 = { name: 'Uint8Array', is: (d: unknown) => d instanceof Uint8Array };
  const u16 = { name: 'Uint16Array', is: (d: unknown) => d instanceof Uint16Array };
  return {
    BOOL: u8,
    U8: u8,
    I8: { name: 'Int8Array', is: (d) => d instanceof Int8Array },
    F8_E4M3: u8,
    F8_E5M2: u8,
    I16: { name: 'Int16Array', is: (d) => d instanceof Int16Array },
    U16: u16,
    F16: u16,
    BF16: u16,
    I32: { name: 'Int32Array', is: (d) => d instanceof Int32Array },
    U32: { name: 'Uint32Array', is: (d) => d instanceof Uint32Array },
    F32: { name: 'Float32Array', is: (d) => d instanceof Float32Array },
    F64: { name: 'Float64Array', is: (d) => d instanceof Float64Array },
    I64: { name: 'BigInt64Array', is: (d) => d instanceof BigInt64Array },
    U64: { name: 'BigUint64Array', is: (d) => d instanceof BigUint64Array },
  };
})();

function tensorBytes(name: string, t: SafetensorsTensorInput): Uint8Array {
  if (!isDtype(t.dtype)) {
    throw new SafetensorsError('UNKNOWN_DTYPE', `tensor "${name}": unknown dtype ${JSON.stringify(t.dtype)}`);
  }
  if (!Array.isArray(t.shape) || !t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new SafetensorsError(
      'INVALID_SHAPE',
      `tensor "${name}": shape ${JSON.stringify(t.shape)} is not a list of non-negative integers`,
    );
  }
  let data: TensorData = t.data;
  const want = ARRAY_FOR_DTYPE[t.dtype];
  if ((t.dtype === 'F16' || t.dtype === 'BF16') && data instanceof Float32Array) {
    data = t.dtype === 'F16' ? f32ToF16Bits(data) : f32ToBf16Bits(data);
  } else if (!want.is(data)) {
    const also = t.dtype === 'F16' || t.dtype === 'BF16' ? ' (or Float32Array, converted)' : '';
    const got = (data as object | null | undefined)?.constructor?.name ?? typeof data;
    throw new SafetensorsError(
      'INVALID_TENSOR',
      `tensor "${name}": dtype ${t.dtype} needs a ${want.name}${also}, got ${got}`,
    );
  }
  const n = numel(t.shape);
  if (data.length !== n) {
    throw new SafetensorsError(
      'INVALID_TENSOR',
      `tensor "${name}": shape ${fmtShape(t.shape)} has ${n} elements but data has ${data.length}`,
    );
  }
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Serializes tensors (in the given order) and optional string metadata into one safetensors file.
 * The header is compact JSON padded with spaces so the byte buffer starts 8-byte aligned; data follows in the same
 * order with no gaps. Throws SafetensorsError on a dtype/array mismatch or a shape that does not match the data.
 */
export function writeSafetensors(
  tensors: Readonly<Record<string, SafetensorsTensorInput>> | ReadonlyMap<string, SafetensorsTensorInput>,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  assertLittleEndian();
  const list = tensors instanceof Map ? [...tensors] : Object.entries(tensors);
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string')
        throw new SafetensorsError('INVALID_METADATA', `metadata "${k}" must be a string, got ${typeof v}`);
    }
    header.__metadata__ = metadata;
  }
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, t] of list) {
    if (name === '__metadata__')
      throw new SafetensorsError('INVALID_TENSOR', 'a tensor may not be named "__metadata__"');
    const bytes = tensorBytes(name, t);
    header[name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLen = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLen + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLen), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLen);
  let p = 8 + headerLen;
  for (const c of chunks) {
    out.set(c, p);
    p += c.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading.

function asBytes(input: ArrayBuffer | ArrayBufferView): Uint8Array {
  if (input instanceof Uint8Array) return input;
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  return new Uint8Array(input);
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/**
 * Parses and validates the header of a safetensors file without touching tensor data: header length within the
 * file, UTF-8 JSON object, `__metadata__` string->string, known dtypes, integer shapes, offsets that match
 * shape x dtype size, and offsets that tile the byte buffer exactly (no overlap, no hole, nothing missing or
 * left over). Throws {@link SafetensorsError} naming the first rule broken.
 */
export function readSafetensorsHeader(input: ArrayBuffer | ArrayBufferView): SafetensorsHeader {
  const bytes = asBytes(input);
  const fileLen = bytes.length;
  if (fileLen < 8) {
    throw new SafetensorsError('TRUNCATED', `file is ${fileLen} bytes; expected at least 8 (the u64 header length)`);
  }
  const n64 = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (n64 > BigInt(MAX_HEADER_BYTES)) {
    const beyond = n64 + 8n > BigInt(fileLen) ? ` and runs beyond the ${fileLen}-byte file` : '';
    throw new SafetensorsError(
      'HEADER_TOO_LARGE',
      `header length ${n64} exceeds the ${MAX_HEADER_BYTES}-byte limit${beyond}: not a safetensors file?`,
    );
  }
  const n = Number(n64);
  if (8 + n > fileLen) {
    throw new SafetensorsError(
      'HEADER_BEYOND_FILE',
      `header length ${n} needs ${8 + n} bytes but the file has ${fileLen} (truncated, or not a safetensors file)`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n));
  } catch {
    throw new SafetensorsError('INVALID_HEADER', 'header is not valid UTF-8');
  }
  if (!text.startsWith('{')) {
    throw new SafetensorsError(
      'INVALID_HEADER',
      `header must start with "{", starts with ${JSON.stringify(text.slice(0, 16))}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new SafetensorsError('INVALID_JSON', `header is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SafetensorsError('INVALID_HEADER', 'header JSON is not an object');
  }

  const metadata: Record<string, string> = {};
  const entries = new Map<string, SafetensorsEntry>();
  for (const [name, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        throw new SafetensorsError('INVALID_METADATA', '__metadata__ must be an object of strings');
      }
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (typeof v !== 'string') {
          throw new SafetensorsError(
            'INVALID_METADATA',
            `__metadata__ "${k}" must be a string, got ${JSON.stringify(v)}`,
          );
        }
        metadata[k] = v;
      }
      continue;
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new SafetensorsError('INVALID_HEADER', `tensor "${name}": header entry is not an object`);
    }
    const e = raw as Record<string, unknown>;
    if (!isDtype(e.dtype)) {
      throw new SafetensorsError(
        'UNKNOWN_DTYPE',
        `tensor "${name}": unknown dtype ${JSON.stringify(e.dtype)} (supported: ${Object.keys(DTYPE_BYTES).join(', ')})`,
      );
    }
    if (!Array.isArray(e.shape) || !e.shape.every(isNonNegInt)) {
      throw new SafetensorsError(
        'INVALID_SHAPE',
        `tensor "${name}": shape ${JSON.stringify(e.shape)} is not a list of non-negative integers`,
      );
    }
    const off = e.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !isNonNegInt(off[0]) || !isNonNegInt(off[1]) || off[1] < off[0]) {
      throw new SafetensorsError(
        'INVALID_OFFSETS',
        `tensor "${name}": data_offsets ${JSON.stringify(off)} is not [begin, end] with 0 <= begin <= end`,
      );
    }
    const shape = e.shape as number[];
    const need = numel(shape) * DTYPE_BYTES[e.dtype];
    if (!Number.isSafeInteger(need) || need !== off[1] - off[0]) {
      throw new SafetensorsError(
        'SIZE_MISMATCH',
        `tensor "${name}": shape ${fmtShape(shape)} of ${e.dtype} needs ${need} bytes, data_offsets [${off[0]}, ${off[1]}] span ${off[1] - off[0]}`,
      );
    }
    entries.set(name, { dtype: e.dtype, shape: [...shape], dataOffsets: [off[0], off[1]] });
  }

  // The tensors must tile the byte buffer [0, dataLen) exactly.
  const dataStart = 8 + n;
  const dataLen = fileLen - dataStart;
  const sorted = [...entries].sort(
    (a, b) => a[1].dataOffsets[0] - b[1].dataOffsets[0] || a[1].dataOffsets[1] - b[1].dataOffsets[1],
  );
  let end = 0;
  let prev = '';
  for (const [
    name,
    {
      dataOffsets: [b, e],
    },
  ] of sorted) {
    if (b < end) {
      throw new SafetensorsError(
        'OVERLAP',
        `tensor "${name}" data [${b}, ${e}) overlaps tensor "${prev}" which ends at ${end}`,
      );
    }
    if (b > end) {
      throw new SafetensorsError(
        'HOLE',
        `bytes [${end}, ${b}) of the data buffer belong to no tensor (gap before "${name}")`,
      );
    }
    end = e;
    prev = name;
  }
  if (end > dataLen) {
    throw new SafetensorsError(
      'TRUNCATED',
      `tensor "${prev}" ends at data byte ${end} but the data buffer has ${dataLen} bytes: ` +
        `expected a ${dataStart + end}-byte file, found ${fileLen} (${dataStart + end - fileLen} bytes missing)`,
    );
  }
  if (end < dataLen) {
    throw new SafetensorsError(
      'TRAILING_BYTES',
      `${dataLen - end} bytes after the last tensor belong to no tensor (expected a ${dataStart + end}-byte file, found ${fileLen})`,
    );
  }
  return { entries, metadata, dataStart };
}

/** Options for {@link readSafetensors}. */
export interface ReadSafetensorsOptions {
  /** Convert F16 and BF16 tensors to Float32Array (dtype still reports the stored dtype). Default false. */
  toFloat32?: boolean;
  /**
   * Always copy tensor data. Default false: aligned tensors are views into `input` (no copy; they keep the whole
   * file alive and see writes to it), misaligned ones are copied.
   */
  copy?: boolean;
}

function makeArray(dtype: SafetensorsDtype, buf: ArrayBufferLike, byteOffset: number, length: number): TensorData {
  switch (dtype) {
    case 'BOOL':
    case 'U8':
    case 'F8_E4M3':
    case 'F8_E5M2':
      return new Uint8Array(buf, byteOffset, length);
    case 'I8':
      return new Int8Array(buf, byteOffset, length);
    case 'I16':
      return new Int16Array(buf, byteOffset, length);
    case 'U16':
    case 'F16':
    case 'BF16':
      return new Uint16Array(buf, byteOffset, length);
    case 'I32':
      return new Int32Array(buf, byteOffset, length);
    case 'U32':
      return new Uint32Array(buf, byteOffset, length);
    case 'F32':
      return new Float32Array(buf, byteOffset, length);
    case 'F64':
      return new Float64Array(buf, byteOffset, length);
    case 'I64':
      return new BigInt64Array(buf, byteOffset, length);
    case 'U64':
      return new BigUint64Array(buf, byteOffset, length);
  }
}

/**
 * Reads a whole safetensors file: validates it ({@link readSafetensorsHeader}) and returns every tensor in header
 * order with its metadata. F16/BF16 data is returned as raw bits (Uint16Array) unless `toFloat32` is set.
 */
export function readSafetensors(
  input: ArrayBuffer | ArrayBufferView,
  options: ReadSafetensorsOptions = {},
): SafetensorsFile {
  assertLittleEndian();
  const bytes = asBytes(input);
  const { entries, metadata, dataStart } = readSafetensorsHeader(bytes);
  const tensors = new Map<string, SafetensorsTensor>();
  for (const [name, { dtype, shape, dataOffsets }] of entries) {
    const size = DTYPE_BYTES[dtype];
    const abs = bytes.byteOffset + dataStart + dataOffsets[0];
    const length = (dataOffsets[1] - dataOffsets[0]) / size;
    let data: TensorData;
    if (!options.copy && abs % size === 0) {
      data = makeArray(dtype, bytes.buffer, abs, length);
    } else {
      const copy = bytes.slice(dataStart + dataOffsets[0], dataStart + dataOffsets[1]);
      data = makeArray(dtype, copy.buffer, 0, length);
    }
    if (options.toFloat32 && dtype === 'F16') data = f16BitsToF32(data as Uint16Array);
    else if (options.toFloat32 && dtype === 'BF16') data = bf16BitsToF32(data as Uint16Array);
    tensors.set(name, { dtype, shape, data });
  }
  return { tensors, metadata };
}
