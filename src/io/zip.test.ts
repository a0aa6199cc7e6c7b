// The zip writer and reader: CRC-32 against the standard check value, archives at awkward sizes read back byte for
// byte, the ZIP64 records (forced at small sizes by lowering the classic limit), the names refused, and a CRC or a
// truncation caught by the reader.

import { describe, expect, it } from 'vitest';
import { ZipError, crc32, readZip, zipBytes, zipChunks, zipNameProblem, type ZipEntry } from './zip';

const ascii = (s: string) => new TextEncoder().encode(s);

/** Bytes that are not all one value: a counter through a multiplier, so a shifted copy would not match. */
function bytesOf(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 131 + seed * 17 + (i >> 8)) & 0xff;
  return b;
}

describe('crc32', () => {
  it('gives the check value of "123456789" (0xCBF43926) and continues across chunks', () => {
    expect(crc32(ascii('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    const whole = bytesOf(1000, 3);
    expect(crc32(whole.subarray(400), crc32(whole.subarray(0, 400)))).toBe(crc32(whole));
  });
});

describe('zip writer and reader', () => {
  const date = new Date(2024, 4, 17, 13, 45, 30);
  it.each([0, 1, 3, 255, 256, 65535, 65536, 100_003])('round-trips entries of %i bytes', (n) => {
    const entries: ZipEntry[] = [
      { name: 'run-step2/model.safetensors', data: bytesOf(n, 1) },
      { name: 'run-step2/config.json', data: '{"a": "é ✓"}\n' },
      { name: 'run-step2-adapter/adapter_model.safetensors', data: bytesOf(n % 7, 2) },
    ];
    const zip = zipBytes(entries, { modified: date });
    const back = readZip(zip);
    expect(back.map((e) => e.name)).toEqual(entries.map((e) => e.name));
    expect(Array.from(back[0].data)).toEqual(Array.from(entries[0].data as Uint8Array));
    expect(new TextDecoder().decode(back[1].data)).toBe('{"a": "é ✓"}\n');
    // Stored: the archive is the data plus headers (30 + name per local header, 46 + name per central, 22 at the end).
    const names = entries.reduce((s, e) => s + ascii(e.name).length, 0);
    const data = back.reduce((s, e) => s + e.data.length, 0);
    expect(zip.length).toBe(data + 76 * entries.length + 2 * names + 22);
  });

  it('yields the callers arrays themselves as chunks (no copy of the weights)', () => {
    const weights = bytesOf(4096, 5);
    const chunks = [...zipChunks([{ name: 'a/model.safetensors', data: weights }])];
    expect(chunks).toContain(weights);
  });

  it('writes the ZIP64 records when sizes and offsets pass the classic limit, and reads them back', () => {
    const entries: ZipEntry[] = [
      { name: 'big/one.bin', data: bytesOf(300, 1) },
      { name: 'big/two.bin', data: bytesOf(17, 2) },
      { name: 'big/three.bin', data: bytesOf(301, 3) },
    ];
    const zip = zipBytes(entries, { modified: date, zip64Above: 100 });
    const view = new DataView(zip.buffer);
    // The end record points at the ZIP64 one; the first local header carries the ZIP64 extra (version 45).
    expect(view.getUint32(zip.length - 22, true)).toBe(0x06054b50);
    expect(view.getUint32(zip.length - 22 + 16, true)).toBe(0xffffffff);
    expect(view.getUint32(zip.length - 42, true)).toBe(0x07064b50);
    expect(view.getUint16(4, true)).toBe(45);
    expect(view.getUint32(18, true)).toBe(0xffffffff);
    const back = readZip(zip);
    expect(back.map((e) => [e.name, e.data.length])).toEqual([
      ['big/one.bin', 300],
      ['big/two.bin', 17],
      ['big/three.bin', 301],
    ]);
    expect(Array.from(back[2].data)).toEqual(Array.from(entries[2].data as Uint8Array));
    // Without the lowered limit the same entries need no ZIP64 record.
    const classic = zipBytes(entries, { modified: date });
    expect(new DataView(classic.buffer).getUint32(classic.length - 42, true)).not.toBe(0x07064b50);
    expect(readZip(classic).map((e) => e.name)).toEqual(back.map((e) => e.name));
  });

  it('refuses names that would leave the folder or cannot be written, and duplicates', () => {
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', 'a//b', 'a/./b', 'C:/x', 'a\\b', 'a\nb', 'a\u0000b'])
      expect(zipNameProblem(bad), JSON.stringify(bad)).not.toBeNull();
    expect(zipNameProblem('run-step3/tokenizer_config.json')).toBeNull();
    expect(zipNameProblem('モデル/config.json')).toBeNull();
    expect(() => zipBytes([{ name: '../evil', data: 'x' }])).toThrow(
      /"\.\.\/evil" has an empty, "\." or "\.\." segment/,
    );
    expect(() =>
      zipBytes([
        { name: 'a/b', data: 'x' },
        { name: 'a/b', data: 'y' },
      ]),
    ).toThrow(/"a\/b" appears twice/);
  });

  it('catches a flipped byte (CRC) and a truncated archive', () => {
    const zip = zipBytes([{ name: 'f/x.bin', data: bytesOf(64, 9) }], { modified: date });
    const flipped = zip.slice();
    flipped[30 + 'f/x.bin'.length + 10] ^= 1;
    expect(() => readZip(flipped)).toThrow(ZipError);
    expect(() => readZip(flipped)).toThrow(/CRC-32 mismatch/);
    expect(() => readZip(zip.subarray(0, zip.length - 30))).toThrow(ZipError);
  });
});
