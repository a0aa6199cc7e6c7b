// Zip archives with stored (uncompressed) entries: a writer that yields the archive as chunks which reference the
// entries' bytes without copying them (a Blob or a file stream takes the parts, so a model is not held twice), CRC-32,
// UTF-8 names, ZIP64 records when an entry, an offset or the entry count passes the classic limits; and a reader
// (used by the tests and the CLI's checks) that verifies every CRC. Weights do not compress, so nothing is deflated.
// Pure functions of bytes; no file system, no DOM. Layout per PKWARE's APPNOTE (local header, data, central
// directory, [ZIP64 end record + locator], end record).

/** One file of an archive: its path inside the archive ("folder/config.json") and its content. */
export interface ZipEntry {
  name: string;
  data: Uint8Array | string;
}

/** A refusal to write or read an archive, naming the entry or record at fault. */
export class ZipError extends Error {
  override name = 'ZipError';
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as zip and gzip use it) of `bytes`, continuing from `crc` (0 for a fresh one). */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** The classic format's largest 32-bit and 16-bit values; a field at its maximum means "see the ZIP64 record". */
const MAX32 = 0xffffffff;
const MAX16 = 0xffff;

/**
 * Why a path cannot name an entry, or null: empty, absolute, a drive letter, a backslash, a `.` or `..` or empty
 * segment, a control character, or longer than the 65,535 UTF-8 bytes a header holds. (A reader that writes entries
 * out would otherwise be steered outside its folder.)
 */
export function zipNameProblem(name: string): string | null {
  if (name === '') return 'an entry name is empty';
  const quoted = JSON.stringify(name);
  if (name.startsWith('/')) return `entry ${quoted} is an absolute path`;
  if (/^[A-Za-z]:/.test(name)) return `entry ${quoted} starts with a drive letter`;
  if (name.includes('\\')) return `entry ${quoted} holds a backslash`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) return `entry ${quoted} holds a control character`;
  for (const seg of name.split('/'))
    if (seg === '' || seg === '.' || seg === '..') return `entry ${quoted} has an empty, "." or ".." segment`;
  if (new TextEncoder().encode(name).length > MAX16) return `entry ${quoted} is longer than 65,535 bytes`;
  return null;
}

/** DOS date and time fields of a date (local fields; the format has no zone, and 1980 is its first year). */
function dosDateTime(d: Date): { time: number; date: number } {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/** Little-endian writer over a fresh buffer of known size. */
class Fields {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private at = 0;
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }
  u16(v: number): this {
    this.view.setUint16(this.at, v, true);
    this.at += 2;
    return this;
  }
  u32(v: number): this {
    this.view.setUint32(this.at, v >>> 0, true);
    this.at += 4;
    return this;
  }
  u64(v: number): this {
    this.view.setBigUint64(this.at, BigInt(v), true);
    this.at += 8;
    return this;
  }
  raw(b: Uint8Array): this {
    this.bytes.set(b, this.at);
    this.at += b.length;
    return this;
  }
}

export interface ZipOptions {
  /** The entries' modification time (default: now). */
  modified?: Date;
  /**
   * The largest size or offset written in a classic 32-bit field (default 0xFFFFFFFE, the format's own limit);
   * anything past it goes to a ZIP64 field. Tests lower it to exercise the ZIP64 records at small sizes.
   */
  zip64Above?: number;
}

/**
 * The archive of `entries`, as chunks in order: each entry's local header then its bytes (the caller's array, not a
 * copy), then the central directory and the end records. Names are checked (zipNameProblem) and must be unique.
 * Concatenated, the chunks are a valid zip file; a Blob or a file stream can take them one by one.
 */
export function* zipChunks(entries: readonly ZipEntry[], options: ZipOptions = {}): Generator<Uint8Array> {
  const limit = options.zip64Above ?? MAX32 - 1;
  const { time, date } = dosDateTime(options.modified ?? new Date());
  const encoder = new TextEncoder();
  const seen = new Set<string>();
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const problem = zipNameProblem(entry.name);
    if (problem) throw new ZipError(problem);
    if (seen.has(entry.name)) throw new ZipError(`entry ${JSON.stringify(entry.name)} appears twice`);
    seen.add(entry.name);
    const name = encoder.encode(entry.name);
    const data = typeof entry.data === 'string' ? encoder.encode(entry.data) : entry.data;
    const crc = crc32(data);
    const size = data.length;
    const bigSize = size > limit;
    const bigOffset = offset > limit;
    // Local header: with a ZIP64 extra holding both sizes when the entry is large (APPNOTE 4.5.3).
    const localExtra = bigSize ? 4 + 16 : 0;
    const local = new Fields(30 + name.length + localExtra).u32(0x04034b50).u16(bigSize ? 45 : 20);
    // From the flags to the sizes, the local and the central header hold the same fields (APPNOTE 4.3.7, 4.3.12).
    const shared = (f: Fields) =>
      f
        .u16(0x0800) // bit 11: the name is UTF-8
        .u16(0) // stored
        .u16(time)
        .u16(date)
        .u32(crc)
        .u32(bigSize ? MAX32 : size)
        .u32(bigSize ? MAX32 : size);
    shared(local).u16(name.length).u16(localExtra).raw(name);
    if (bigSize) local.u16(0x0001).u16(16).u64(size).u64(size);
    // Central header: the ZIP64 extra holds only the fields whose classic slot says 0xFFFFFFFF, in APPNOTE order.
    const zip64Fields = [...(bigSize ? [size, size] : []), ...(bigOffset ? [offset] : [])];
    const centralExtra = zip64Fields.length ? 4 + 8 * zip64Fields.length : 0;
    const header = new Fields(46 + name.length + centralExtra)
      .u32(0x02014b50)
      .u16((3 << 8) | 45) // made by: Unix, spec 4.5
      .u16(bigSize || bigOffset ? 45 : 20);
    shared(header)
      .u16(name.length)
      .u16(centralExtra)
      .u16(0) // comment length
      .u16(0) // disk
      .u16(0) // internal attributes
      .u32((0o100644 << 16) >>> 0) // external attributes: a regular file, rw-r--r--
      .u32(bigOffset ? MAX32 : offset)
      .raw(name);
    if (zip64Fields.length) {
      header.u16(0x0001).u16(8 * zip64Fields.length);
      for (const v of zip64Fields) header.u64(v);
    }
    central.push(header.bytes);
    yield local.bytes;
    if (size) yield data;
    offset += local.bytes.length + size;
  }
  const cdStart = offset;
  let cdSize = 0;
  for (const c of central) {
    yield c;
    cdSize += c.length;
  }
  const count = central.length;
  const zip64 = count >= MAX16 || cdStart > limit || cdSize > limit;
  if (zip64) {
    const endStart = cdStart + cdSize;
    yield new Fields(56)
      .u32(0x06064b50)
      .u64(44) // size of the rest of this record
      .u16((3 << 8) | 45)
      .u16(45)
      .u32(0)
      .u32(0)
      .u64(count)
      .u64(count)
      .u64(cdSize)
      .u64(cdStart).bytes;
    yield new Fields(20).u32(0x07064b50).u32(0).u64(endStart).u32(1).bytes;
  }
  yield new Fields(22)
    .u32(0x06054b50)
    .u16(0)
    .u16(0)
    .u16(zip64 ? MAX16 : count)
    .u16(zip64 ? MAX16 : count)
    .u32(zip64 ? MAX32 : cdSize)
    .u32(zip64 ? MAX32 : cdStart)
    .u16(0).bytes;
}

/** The whole archive in one array (small archives and tests; large ones go through zipChunks). */
export function zipBytes(entries: readonly ZipEntry[], options: ZipOptions = {}): Uint8Array {
  const chunks = [...zipChunks(entries, options)];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** One entry read back: its name and bytes (a view into the archive). */
export interface ZipReadEntry {
  name: string;
  data: Uint8Array;
}

/**
 * The stored entries of an archive, in central-directory order, each CRC checked; ZIP64 records are followed. Refuses
 * (ZipError, naming the record or entry) a truncated archive, a compressed entry, a bad name or a CRC mismatch.
 */
export function readZip(bytes: Uint8Array): ZipReadEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (at: number) => view.getUint16(at, true);
  const u32 = (at: number) => view.getUint32(at, true);
  const u64 = (at: number) => {
    const v = view.getBigUint64(at, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError(`a ZIP64 field at byte ${at} is too large`);
    return Number(v);
  };
  let eocd = -1;
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - 22 - MAX16); at--)
    if (u32(at) === 0x06054b50) {
      eocd = at;
      break;
    }
  if (eocd < 0) throw new ZipError('no end of central directory record (not a zip, or truncated)');
  let count = u16(eocd + 10);
  let cdSize = u32(eocd + 12);
  let cdStart = u32(eocd + 16);
  if (count === MAX16 || cdSize === MAX32 || cdStart === MAX32) {
    const locator = eocd - 20;
    if (locator < 0 || u32(locator) !== 0x07064b50) throw new ZipError('the ZIP64 end locator is missing');
    const end = u64(locator + 8);
    if (end + 56 > bytes.length || u32(end) !== 0x06064b50) throw new ZipError('the ZIP64 end record is missing');
    count = u64(end + 32);
    cdSize = u64(end + 40);
    cdStart = u64(end + 48);
  }
  if (cdStart + cdSize > bytes.length) throw new ZipError('the central directory runs past the end (truncated)');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const out: ZipReadEntry[] = [];
  let at = cdStart;
  for (let i = 0; i < count; i++) {
    if (u32(at) !== 0x02014b50) throw new ZipError(`central directory entry ${i} has no signature`);
    const method = u16(at + 10);
    const crc = u32(at + 16);
    let size = u32(at + 24);
    const nameLength = u16(at + 28);
    const extraLength = u16(at + 30);
    const commentLength = u16(at + 32);
    let local = u32(at + 42);
    const name = decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    const problem = zipNameProblem(name);
    if (problem) throw new ZipError(problem);
    // The ZIP64 extra: the 0xFFFFFFFF fields, in order (uncompressed, compressed, local offset).
    let e = at + 46 + nameLength;
    const extraEnd = e + extraLength;
    while (e + 4 <= extraEnd) {
      const id = u16(e);
      const len = u16(e + 2);
      if (id === 0x0001) {
        let f = e + 4;
        if (size === MAX32) {
          size = u64(f);
          f += 16; // the uncompressed and compressed sizes (equal when stored)
        }
        if (local === MAX32) local = u64(f);
      }
      e += 4 + len;
    }
    if (method !== 0) throw new ZipError(`entry ${JSON.stringify(name)} is compressed (method ${method})`);
    if (u32(local) !== 0x04034b50) throw new ZipError(`entry ${JSON.stringify(name)}: no local header`);
    const start = local + 30 + u16(local + 26) + u16(local + 28);
    if (start + size > bytes.length) throw new ZipError(`entry ${JSON.stringify(name)} runs past the end`);
    const data = bytes.subarray(start, start + size);
    if (crc32(data) !== crc) throw new ZipError(`entry ${JSON.stringify(name)}: CRC-32 mismatch`);
    out.push({ name, data });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}
